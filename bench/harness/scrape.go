package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/svcdb/svcdb/bench/proc"
)

// scrapeTimeout bounds one scrape. A diagnostics server slower than this
// under load is worth a failed scrape in the report.
const scrapeTimeout = 10 * time.Second

// EndpointReport is what happened to one endpoint: its probe's answer and,
// if it was scraped, the totals over every diagnostics-on run.
type EndpointReport struct {
	Path string `json:"path"`
	// Status is the probe's HTTP status.
	Status int `json:"status"`
	// Scraped is true when the probe answered 200; a 404 from an endpoint
	// that is not required leaves it false (not served by this build).
	Scraped bool `json:"scraped"`

	Scrapes    int     `json:"scrapes"`
	Errors     int     `json:"errors"`
	Bytes      int64   `json:"bytes"`   // bodies read, all scrapes
	Seconds    float64 `json:"seconds"` // time spent in scrapes, all of them
	FirstError string  `json:"first_error,omitempty"`

	// IdleCPUMs is the server's CPU time per scrape, in milliseconds,
	// measured after the runs with the server otherwise idle.
	IdleCPUMs float64 `json:"idle_server_cpu_ms_per_scrape"`
}

func (e *EndpointReport) probeWord() string {
	if e.Scraped {
		return fmt.Sprintf("%d: scraped", e.Status)
	}
	return fmt.Sprintf("%d: skipped (not served by this build)", e.Status)
}

// summary is one endpoint's line in a report: what was scraped, how often,
// how big and how slow.
func (e *EndpointReport) summary() string {
	if !e.Scraped {
		return fmt.Sprintf("%s: skipped, answered %d", e.Path, e.Status)
	}
	s := fmt.Sprintf("%s: %d scrapes", e.Path, e.Scrapes)
	if ok := e.Scrapes - e.Errors; ok > 0 {
		s += fmt.Sprintf(", %s and %.2f ms each", size(float64(e.Bytes)/float64(ok)), 1000*e.Seconds/float64(e.Scrapes))
	}
	if e.IdleCPUMs > 0 {
		s += fmt.Sprintf("; %.2f ms of server CPU per scrape when idle", e.IdleCPUMs)
	}
	if e.Errors > 0 {
		s += fmt.Sprintf("; %d failed (first: %s)", e.Errors, e.FirstError)
	}
	return s
}

// size formats a byte count: "512 B", "21.9 KB".
func size(b float64) string {
	if b < 1024 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f KB", b/1024)
}

// scraper polls the diagnostics server the way a monitoring system does:
// a plain net/http client in this process, keep-alive connections, every
// endpoint in turn once per interval, with the bearer token.
type scraper struct {
	client   *http.Client
	base     string
	token    string
	interval time.Duration
}

func newScraper(base, token string, interval time.Duration) *scraper {
	return &scraper{
		// Its own transport: no proxy from the environment, and idle
		// connections closed at the end.
		client:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}},
		base:     base,
		token:    token,
		interval: interval,
	}
}

func (s *scraper) close() { s.client.CloseIdleConnections() }

// get fetches one path, reads the whole body (so the server does all its
// work) and returns the status and the body's length.
func (s *scraper) get(ctx context.Context, path string) (status int, n int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	// Sent to every endpoint, /metrics included: harmless where it is not
	// needed, and a scrape set-up sends it to all targets alike.
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// probe asks each endpoint once and decides what to scrape: 200 scrapes,
// 404 skips one that is not required, anything else is an error (a wrong
// token, a server error, a required endpoint missing).
func (s *scraper) probe(ctx context.Context, eps []Endpoint) ([]EndpointReport, error) {
	out := make([]EndpointReport, 0, len(eps))
	scraped := 0
	for _, e := range eps {
		status, _, err := s.get(ctx, e.Path)
		if err != nil {
			return out, fmt.Errorf("probing %s%s: %w", s.base, e.Path, err)
		}
		r := EndpointReport{Path: e.Path, Status: status}
		switch {
		case status == http.StatusOK:
			r.Scraped = true
			scraped++
		case status == http.StatusNotFound && !e.Required:
		case e.Required:
			return out, fmt.Errorf("probing %s%s: HTTP %d; want 200", s.base, e.Path, status)
		default:
			return out, fmt.Errorf("probing %s%s: HTTP %d; want 200, or 404 if it is not served", s.base, e.Path, status)
		}
		out = append(out, r)
	}
	if scraped == 0 {
		return out, fmt.Errorf("none of the endpoints %s answered 200 on %s", endpointPaths(eps), s.base)
	}
	return out, nil
}

func endpointPaths(eps []Endpoint) string {
	p := make([]string, len(eps))
	for i, e := range eps {
		p[i] = e.Path
	}
	return strings.Join(p, ", ")
}

// start scrapes every Scraped endpoint of eps now and then every interval,
// in a goroutine, until the returned stop is called or ctx ends. stop waits
// for a scrape under way, adds the counts to eps and returns the scrapes
// made and how many failed. eps must not be touched between start and stop.
func (s *scraper) start(ctx context.Context, eps []EndpointReport) (stop func() (scrapes, failed int)) {
	quit := make(chan struct{})
	done := make(chan struct{})
	var scrapes, failed int
	go func() {
		defer close(done)
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			for i := range eps {
				e := &eps[i]
				if !e.Scraped {
					continue
				}
				start := time.Now()
				status, n, err := s.get(ctx, e.Path)
				if ctx.Err() != nil {
					return // cancelled with the run: not a scrape, nor the server's failure
				}
				e.Seconds += time.Since(start).Seconds()
				e.Scrapes++
				scrapes++
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("HTTP %d", status)
				}
				if err != nil {
					e.Errors++
					failed++
					if e.FirstError == "" {
						e.FirstError = err.Error()
					}
					continue
				}
				e.Bytes += n
			}
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() (int, int) {
		close(quit)
		<-done
		return scrapes, failed
	}
}

// measureCost scrapes each Scraped endpoint n times back to back and sets
// its IdleCPUMs from the server's CPU time over them (server is p). Call it
// while nothing else loads the server.
func (s *scraper) measureCost(ctx context.Context, p *proc.Process, eps []EndpointReport, n int) error {
	for i := range eps {
		e := &eps[i]
		if !e.Scraped {
			continue
		}
		before, err := proc.ReadCPU(p.Pid())
		if err != nil {
			return err
		}
		for range n {
			status, _, err := s.get(ctx, e.Path)
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("HTTP %d", status)
			}
			if err != nil {
				return fmt.Errorf("measuring the cost of %s: %w", e.Path, err)
			}
		}
		after, err := proc.ReadCPU(p.Pid())
		if err != nil {
			return err
		}
		e.IdleCPUMs = after.Sub(before).Seconds() * 1000 / float64(n)
	}
	return nil
}
