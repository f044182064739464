package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/svcdb/svcdb/bench/proc"
)

// Sides of the diagnostics comparison, as reports name them.
const (
	SideDiagOff = "off"
	SideDiagOn  = "on"
)

// Endpoint is a diagnostics URL path the harness scrapes while the
// diagnostics-on server is measured.
type Endpoint struct {
	Path string `json:"path"`
	// Required endpoints must answer 200 when probed; the others are skipped
	// when they answer 404 (not served by this build).
	Required bool `json:"required"`
}

// DefaultEndpoints are what a monitoring set-up polls: Prometheus' /metrics,
// the status document, and the debug UI's metrics API (the last two need the
// bearer token).
var DefaultEndpoints = []Endpoint{
	{Path: "/metrics", Required: true},
	{Path: "/status/json"},
	{Path: "/debug/api/metrics"},
}

// DiagConfig is one diagnostics-on/off comparison: the same svcdb binary
// started twice, once without its HTTP diagnostics server and once with it
// (--http-port 0 --http-token T), both pinned to the server CPU, measured
// with the same redis-benchmark runs, interleaved, while the harness scrapes
// the diagnostics-on server's Endpoints every ScrapeInterval.
// DefaultDiagConfig fills everything except SvcDB.
type DiagConfig struct {
	// SvcDB is the server under test. The harness adds "--port N --bind
	// 127.0.0.1" in front of Args for both servers, and "--http-port 0
	// --http-token T" after them for the diagnostics-on one. It must print
	// "diagnostics on http://ADDR" when its HTTP server is up, as svcdb does.
	SvcDB Server
	// Bench means what it means in Config. The scraper runs in this
	// process, which is pinned to ClientCPUs for the duration, so scraping
	// costs the client's CPU, not the server's.
	Bench

	// Token is the diagnostics server's bearer token, sent with every
	// scrape; "" means a random one per comparison.
	Token string
	// ScrapeInterval is the time between two scrapes of every endpoint,
	// the first one as a run starts. Default 1 s.
	ScrapeInterval time.Duration
	// Endpoints are probed once after the diagnostics-on server starts and
	// scraped, in order, every ScrapeInterval during its runs. A probe that
	// answers 404 skips an endpoint that is not Required; any other answer
	// but 200 is an error.
	Endpoints []Endpoint
	// MaxCostPct is the bar the report checks: the throughput cost of
	// diagnostics, in percent. Default 3.
	MaxCostPct float64

	// MaxOthers is how much of a CPU other processes (and the hypervisor's
	// steal) may take on the benchmark's CPUs during a run before the run
	// is repeated: the machine may be shared, and a 3% effect drowns in a
	// neighbour's compile. Default 0.1; 0 never repeats a run nor waits.
	// Before each run the harness also waits until the CPUs are quiet
	// (see QuietBudget).
	MaxOthers float64
	// QuietBudget bounds the time the whole comparison may wait for quiet
	// CPUs before its runs. Default 45 s.
	QuietBudget time.Duration
	// Retries bounds the repeated runs over the whole comparison (and at
	// most 2 per run), so a busy machine makes the comparison longer by a
	// bounded amount. When they run out, disturbed runs are kept and the
	// report counts them. Default 6.
	Retries int

	// Progress receives one line per run; nil discards them.
	Progress io.Writer
	// WorkDir holds the servers' working directories; "" means a temporary
	// directory removed at the end.
	WorkDir string
}

// DefaultDiagConfig returns the defaults: SET and GET at pipeline 16 and 1,
// with redis-benchmark, pinning, rounds, sizing and key space as in
// DefaultConfig; every DefaultEndpoints scraped each second; a 3% bar.
func DefaultDiagConfig() DiagConfig {
	b := defaultBench()
	b.Tests, b.Pipelines = []string{"set", "get"}, []int{16, 1}
	return DiagConfig{
		Bench:          b,
		ScrapeInterval: time.Second,
		Endpoints:      slices.Clone(DefaultEndpoints),
		MaxCostPct:     3,
		MaxOthers:      0.1,
		Retries:        6,
		QuietBudget:    45 * time.Second,
	}
}

// benchConfig is the part of a Config the shared runner reads.
func (c *DiagConfig) benchConfig() *Config {
	return &Config{SvcDB: c.SvcDB, Bench: c.Bench}
}

// Validate checks c and returns every problem found.
func (c *DiagConfig) Validate() error {
	var errs []error
	if c.SvcDB.Path == "" {
		errs = append(errs, errors.New("no svcdb path"))
	}
	if !c.hasRuns() {
		errs = append(errs, errors.New("nothing to run: want at least one test and one pipeline depth"))
	}
	errs = c.Bench.validate(errs, true)
	if c.ScrapeInterval <= 0 {
		errs = append(errs, fmt.Errorf("scrape interval %v: want > 0", c.ScrapeInterval))
	}
	if len(c.Endpoints) == 0 {
		errs = append(errs, errors.New("no endpoints to scrape"))
	}
	for _, e := range c.Endpoints {
		if !strings.HasPrefix(e.Path, "/") {
			errs = append(errs, fmt.Errorf("endpoint %q: want a path starting with /", e.Path))
		}
	}
	if c.MaxOthers < 0 || c.Retries < 0 || c.QuietBudget < 0 {
		errs = append(errs, fmt.Errorf("max others %v, retries %d, quiet budget %v: want >= 0", c.MaxOthers, c.Retries, c.QuietBudget))
	}
	if strings.ContainsAny(c.Token, " \t\r\n") {
		errs = append(errs, errors.New("token: no white space allowed"))
	}
	return errors.Join(errs...)
}

// RunDiag performs the diagnostics comparison described by cfg. Every
// process it starts is stopped before it returns, on success, error or ctx
// cancellation. On error it returns the partial report with what was
// measured so far.
func RunDiag(ctx context.Context, cfg DiagConfig) (rep *DiagReport, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep = &DiagReport{
		Started: time.Now(), Rounds: cfg.Rounds, MaxCostPct: cfg.MaxCostPct, MaxOthers: cfg.MaxOthers,
		ScrapeIntervalSec: cfg.ScrapeInterval.Seconds(),
	}
	defer func() { rep.Elapsed = time.Since(rep.Started).Seconds() }()

	serverCPUs, clientCPUs, note := pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	rep.Pinned, rep.PinNote = serverCPUs != "", note

	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "svcbench-diag-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(workDir)
	}
	token := cfg.Token
	if token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		token = hex.EncodeToString(b)
	}

	var group proc.Group
	defer func() {
		if serr := group.StopAll(10 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()

	servers := map[string]*proc.Server{}
	for _, side := range []struct {
		name  string
		extra []string
	}{
		{SideDiagOff, nil},
		{SideDiagOn, []string{"--http-port", "0", "--http-token", token}},
	} {
		dir := filepath.Join(workDir, side.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rep, err
		}
		s, err := proc.StartServer(ctx, &group, proc.ServerSpec{
			Name: "svcdb diagnostics " + side.name, Path: cfg.SvcDB.Path,
			Args: append(slices.Clone(cfg.SvcDB.Args), side.extra...),
			CPUs: serverCPUs, Dir: dir,
		}, 30*time.Second)
		if err != nil {
			return rep, err
		}
		servers[side.name] = s
		fmt.Fprintf(progress, "started svcdb, diagnostics %s (pid %d) on %s: %s\n", side.name, s.Pid(), s.Addr, redactToken(s.CommandLine(), token))
	}
	off, on := servers[SideDiagOff], servers[SideDiagOn]
	rep.OffCmd = off.CommandLine()
	rep.OnCmd = redactToken(on.CommandLine(), token)

	// The line comes before the Redis port accepts, but through a pipe:
	// give the copy a moment.
	addr, err := waitDiagAddr(ctx, on.Process, 5*time.Second)
	if err != nil {
		return rep, err
	}
	rep.DiagAddr = addr
	if a, ok := diagAddr(off.Output()); ok {
		return rep, fmt.Errorf("the diagnostics-off server started its HTTP server anyway (on %s): is http-enabled set by a config file or SVC_HTTP_ENABLED?", a)
	}

	bc := cfg.benchConfig()
	rep.Machine = describeMachine(ctx, bc) // before pinning: it counts usable CPUs

	// From here on this process is the client: keep it, and so the
	// scraper's goroutines, off the server CPU.
	restore, err := pinSelf(clientCPUs)
	if err != nil {
		return rep, err
	}
	defer restore()

	sc := newScraper("http://"+addr, token, cfg.ScrapeInterval)
	defer sc.close()
	if rep.Endpoints, err = sc.probe(ctx, cfg.Endpoints); err != nil {
		return rep, err
	}
	for i := range rep.Endpoints {
		e := &rep.Endpoints[i]
		fmt.Fprintf(progress, "endpoint %-20s %s\n", e.Path, e.probeWord())
	}

	r := &runner{cfg: bc, progress: progress, clientCPUs: clientCPUs, servers: servers}
	if r.benchCPUs, err = benchCPUs(serverCPUs, clientCPUs); err != nil {
		return rep, err
	}
	r.maxOthers, r.retriesLeft, r.quietLeft = cfg.MaxOthers, cfg.Retries, cfg.QuietBudget
	r.total = cfg.Rounds * 2 * len(cfg.Tests) * len(cfg.Pipelines)

	for _, test := range cfg.Tests {
		for _, p := range cfg.Pipelines {
			name := fmt.Sprintf("%s -P %d", strings.ToUpper(test), p)
			n := bc.RequestsFor(p)
			if cfg.TargetTime > 0 {
				if n, err = r.calibrate(ctx, name, benchWork{test: test}, p, SideDiagOn, SideDiagOff); err != nil {
					return rep, err
				}
			}
			c := &DiagCase{
				Name:   name,
				Detail: "redis-benchmark " + strings.Join(benchArgs(0, cfg.Clients, n, cfg.KeySpace, test, p)[4:], " "),
			}
			rep.Cases = append(rep.Cases, c)
			if err := r.diagRounds(ctx, c, test, p, n, sc, rep.Endpoints); err != nil {
				return rep, err
			}
		}
	}

	// Last, on a server that has seen every command and holds the key
	// space: what one scrape costs the server, free of the noise of the
	// runs.
	if err := sc.measureCost(ctx, on.Process, rep.Endpoints, idleScrapes); err != nil {
		return rep, err
	}
	for i := range rep.Endpoints {
		if e := &rep.Endpoints[i]; e.Scraped {
			fmt.Fprintf(progress, "[cost] %-20s %.3f ms of server CPU per scrape (idle server, %d scrapes)\n", e.Path, e.IdleCPUMs, idleScrapes)
		}
	}
	// And what diagnostics cost when nobody asks: the rate sampler, the
	// HTTP server's timers. Both servers over the same idle window.
	if rep.IdleOffMsPerSec, rep.IdleOnMsPerSec, err = idleCPU(ctx, off.Process, on.Process, idleWindow); err != nil {
		return rep, err
	}
	fmt.Fprintf(progress, "[cost] idle, not scraped: %.3f ms of CPU per second with diagnostics on, %.3f ms off (over %v)\n",
		rep.IdleOnMsPerSec, rep.IdleOffMsPerSec, idleWindow)
	return rep, nil
}

const (
	// idleScrapes is how many scrapes of each endpoint measure its cost on
	// the idle server.
	idleScrapes = 20
	// idleWindow is how long both idle servers are watched.
	idleWindow = 3 * time.Second
)

// idleCPU returns the CPU time per second, in milliseconds, that the two
// servers use over window while nothing talks to them.
func idleCPU(ctx context.Context, off, on *proc.Process, window time.Duration) (offMs, onMs float64, err error) {
	var before [2]proc.CPUSample
	for i, p := range []*proc.Process{off, on} {
		if before[i], err = proc.ReadCPU(p.Pid()); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return 0, 0, context.Cause(ctx)
	case <-time.After(window):
	}
	secs := time.Since(start).Seconds()
	var ms [2]float64
	for i, p := range []*proc.Process{off, on} {
		after, err := proc.ReadCPU(p.Pid())
		if err != nil {
			return 0, 0, err
		}
		ms[i] = after.Sub(before[i]).Seconds() * 1000 / secs
	}
	return ms[0], ms[1], nil
}

// diagOrder is the order of the two servers in a round: off first in odd
// rounds, on first in even ones (ABBA), so a drift during a case does not
// always favour the same side.
func diagOrder(round int) [2]string {
	if round%2 == 1 {
		return [2]string{SideDiagOff, SideDiagOn}
	}
	return [2]string{SideDiagOn, SideDiagOff}
}

// diagRounds runs one case Rounds times on each server, scraping during the
// diagnostics-on runs. A run during which other processes took more than
// MaxOthers of a CPU is run again, after waiting for the CPUs to calm down,
// while the comparison's retries last; the least disturbed attempt is kept.
func (r *runner) diagRounds(ctx context.Context, c *DiagCase, test string, p, n int, sc *scraper, eps []EndpointReport) error {
	for round := 1; round <= r.cfg.Rounds; round++ {
		for _, side := range diagOrder(round) {
			var (
				best                    Sample
				bestScrapes, bestFailed int
			)
			for attempt := 1; ; attempt++ {
				if r.maxOthers > 0 {
					if err := r.waitQuiet(ctx, r.maxOthers); err != nil {
						return err
					}
				}
				sample, scrapes, failed, err := r.diagRun(ctx, c.Name, side, round, test, p, n, sc, eps)
				if err != nil {
					return err
				}
				if attempt == 1 || sample.OthersShare() < best.OthersShare() {
					best, bestScrapes, bestFailed = sample, scrapes, failed
				}
				if r.maxOthers <= 0 || sample.OthersShare() <= r.maxOthers || r.retriesLeft <= 0 || attempt > retriesPerRun {
					break
				}
				r.retriesLeft--
				c.Retried++
				fmt.Fprintf(r.progress, "[busy]  %-10s diagnostics %-3s round %d/%d: other processes took %.0f%% of a CPU (limit %.0f%%); again (%d retries left)\n",
					c.Name, side, round, r.cfg.Rounds, 100*sample.OthersShare(), 100*r.maxOthers, r.retriesLeft)
			}
			extra := ""
			if side == SideDiagOff {
				c.Off = append(c.Off, best)
			} else {
				c.On = append(c.On, best)
				c.Scrapes = append(c.Scrapes, bestScrapes)
				extra = fmt.Sprintf("  %d scrapes", bestScrapes)
				if bestFailed > 0 {
					extra += fmt.Sprintf(" (%d failed)", bestFailed)
				}
			}
			r.done++
			fmt.Fprintf(r.progress, "[%2d/%d] %-10s diagnostics %-3s round %d/%d: %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  cpu %6.2f us/req  (%.2f s, others %3.0f%%)%s\n",
				r.done, r.total, c.Name, side, round, r.cfg.Rounds,
				best.OpsPerSec, best.P50Ms, best.P99Ms, best.CPUUsPerReq, best.WallSec, 100*best.OthersShare(), extra)
		}
	}
	return nil
}

const (
	// retriesPerRun bounds the repeats of one run, so that one long burst
	// of a neighbour does not use up the comparison's retries.
	retriesPerRun = 2
	// quietWindow is how long the CPUs are watched before a run.
	quietWindow = 250 * time.Millisecond
)

// diagRun is one redis-benchmark run against one side, with the scraper
// running alongside on the diagnostics-on side.
func (r *runner) diagRun(ctx context.Context, name, side string, round int, test string, p, n int, sc *scraper, eps []EndpointReport) (sample Sample, scrapes, failed int, err error) {
	if err := ctx.Err(); err != nil {
		return Sample{}, 0, 0, context.Cause(ctx)
	}
	s := r.servers[side]
	rctx, cancel := context.WithTimeoutCause(ctx, r.cfg.RunTimeout,
		fmt.Errorf("%s against diagnostics %s: run timeout %v", name, side, r.cfg.RunTimeout))
	defer cancel()
	var during func() func()
	if side == SideDiagOn {
		during = func() func() {
			stop := sc.start(rctx, eps)
			return func() { scrapes, failed = stop() }
		}
	}
	sample, err = r.redisBenchmarkWith(rctx, s, benchWork{test: test}, p, n, during)
	if exited, werr := s.Exited(); exited {
		return Sample{}, 0, 0, fmt.Errorf("svcdb (diagnostics %s) exited during %s (round %d): %v; output:\n%s", side, name, round, werr, s.Output())
	}
	if err != nil {
		return Sample{}, 0, 0, fmt.Errorf("%s against diagnostics %s, round %d: %w", name, side, round, err)
	}
	return sample, scrapes, failed, nil
}

// waitQuiet waits until the benchmark's CPUs, with the servers idle, were
// busy less than limit (a fraction of one CPU) over quietWindow, for as long
// as the comparison's QuietBudget lasts. Only cancellation is an error: a
// run that starts on busy CPUs is caught by its own OthersCPU.
func (r *runner) waitQuiet(ctx context.Context, limit float64) error {
	var waited time.Duration
	defer func() {
		if waited > 0 {
			fmt.Fprintf(r.progress, "[busy]  waited %v for quiet CPUs (%v of the waiting budget left)\n", waited, r.quietLeft)
		}
	}()
	for r.quietLeft > 0 {
		before, err := proc.ReadCPUTimes(r.benchCPUs)
		if err != nil {
			return nil // cannot tell: do not wait
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(quietWindow):
		}
		r.quietLeft -= quietWindow
		after, err := proc.ReadCPUTimes(r.benchCPUs)
		if err != nil {
			return nil
		}
		d := after.Sub(before)
		if (d.Busy+d.Steal).Seconds()/quietWindow.Seconds() <= limit {
			return nil
		}
		waited += quietWindow
	}
	return nil
}

var diagLineRE = regexp.MustCompile(`diagnostics on http://(\S+)`)

// diagAddr finds the address in svcdb's start-up line
// "svcdb diagnostics on http://ADDR".
func diagAddr(output string) (string, bool) {
	m := diagLineRE.FindStringSubmatch(output)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// waitDiagAddr waits until p has printed its diagnostics address.
func waitDiagAddr(ctx context.Context, p *proc.Process, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if a, ok := diagAddr(p.Output()); ok {
			return a, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s printed no \"diagnostics on http://ADDR\" line within %v of answering PING (does it take --http-port?); output:\n%s", p.Name, timeout, p.Output())
		}
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// redactToken hides the bearer token in a command line meant for reports.
func redactToken(cmdline, token string) string {
	return strings.Replace(cmdline, "--http-token "+proc.QuoteArgs([]string{token}), "--http-token REDACTED", 1)
}
