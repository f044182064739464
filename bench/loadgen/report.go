package loadgen

import (
	"fmt"
	"io"
	"time"
)

// LineSummary is one line of the report (Sets, Gets or Totals) in the units
// memtier prints: rates per second, latencies in milliseconds, KB = 1024
// bytes of requests plus replies.
type LineSummary struct {
	Ops          uint64  `json:"ops"`
	Errors       uint64  `json:"errors"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	HitsPerSec   float64 `json:"hits_per_sec"`
	MissesPerSec float64 `json:"misses_per_sec"`
	AvgMs        float64 `json:"avg_latency_ms"`
	P50Ms        float64 `json:"p50_latency_ms"`
	P99Ms        float64 `json:"p99_latency_ms"`
	P999Ms       float64 `json:"p99_9_latency_ms"`
	MaxMs        float64 `json:"max_latency_ms"`
	KBPerSec     float64 `json:"kb_per_sec"`
}

// Summary is a Result reduced to numbers, for JSON output and the harness.
type Summary struct {
	Workload     string      `json:"workload"`
	Addr         string      `json:"addr"`
	Connections  int         `json:"connections"`
	DurationSec  float64     `json:"duration_sec"`
	Sets         LineSummary `json:"sets"`
	Gets         LineSummary `json:"gets"`
	Totals       LineSummary `json:"totals"`
	ErrorSamples []string    `json:"error_samples,omitempty"`
}

// Summary computes the report's numbers.
func (r *Result) Summary() Summary {
	total := r.Total()
	return Summary{
		Workload:     r.Config.String(),
		Addr:         r.Config.Addr,
		Connections:  r.Config.Connections(),
		DurationSec:  r.Duration.Seconds(),
		Sets:         line(&r.Sets, r.Duration),
		Gets:         line(&r.Gets, r.Duration),
		Totals:       line(&total, r.Duration),
		ErrorSamples: r.ErrorSamples,
	}
}

func line(s *OpStats, d time.Duration) LineSummary {
	sec := d.Seconds()
	if sec <= 0 {
		sec = 1e-9
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return LineSummary{
		Ops:          s.Ops,
		Errors:       s.Errors,
		OpsPerSec:    float64(s.Ops) / sec,
		HitsPerSec:   float64(s.Hits) / sec,
		MissesPerSec: float64(s.Misses) / sec,
		AvgMs:        ms(s.Latency.Mean()),
		P50Ms:        ms(s.Latency.Quantile(0.50)),
		P99Ms:        ms(s.Latency.Quantile(0.99)),
		P999Ms:       ms(s.Latency.Quantile(0.999)),
		MaxMs:        ms(s.Latency.Max()),
		KBPerSec:     float64(s.BytesSent+s.BytesReceived) / 1024 / sec,
	}
}

// WriteReport prints the result in memtier_benchmark's "ALL STATS" layout,
// followed by error counts and samples if there were errors.
func (r *Result) WriteReport(w io.Writer) error {
	s := r.Summary()
	rule := "============================================================================================================================"
	dash := "----------------------------------------------------------------------------------------------------------------------------"
	p := &errWriter{w: w}
	p.printf("%s, %.2f s\n\nALL STATS\n%s\n", s.Workload, s.DurationSec, rule)
	p.printf("%-6s %12s %12s %12s %14s %14s %14s %14s %12s %8s\n",
		"Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency", "p50 Latency", "p99 Latency", "p99.9 Latency", "KB/sec", "Errors")
	p.printf("%s\n", dash)
	row := func(name string, l LineSummary, hits bool) {
		h, m := "---", "---"
		if hits {
			h, m = fmt.Sprintf("%.2f", l.HitsPerSec), fmt.Sprintf("%.2f", l.MissesPerSec)
		}
		p.printf("%-6s %12.2f %12s %12s %14.5f %14.5f %14.5f %14.5f %12.2f %8d\n",
			name, l.OpsPerSec, h, m, l.AvgMs, l.P50Ms, l.P99Ms, l.P999Ms, l.KBPerSec, l.Errors)
	}
	row("Sets", s.Sets, false)
	row("Gets", s.Gets, true)
	row("Totals", s.Totals, true)
	p.printf("(latencies in ms)\n")
	if s.Totals.Errors > 0 {
		p.printf("\n%d error replies (SET %d, GET %d); first %d:\n", s.Totals.Errors, s.Sets.Errors, s.Gets.Errors, len(s.ErrorSamples))
		for _, e := range s.ErrorSamples {
			p.printf("  %s\n", e)
		}
	}
	return p.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// WritePercentiles prints one line of latency percentiles (0..100) of all
// requests, SETs and GETs together, in milliseconds, as memtier's
// --print-percentiles does: for comparing the shapes of two servers'
// distributions, not only their p99s.
func (r *Result) WritePercentiles(w io.Writer, percentiles []float64) error {
	total := r.Total()
	p := &errWriter{w: w}
	p.printf("percentiles (ms):")
	for _, q := range percentiles {
		p.printf(" p%g=%.3f", q, float64(total.Latency.Quantile(q/100))/1e6)
	}
	p.printf("\n")
	return p.err
}
