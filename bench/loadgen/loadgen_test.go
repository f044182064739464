package loadgen_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/internal/benchtest"
	"github.com/svcdb/svcdb/bench/loadgen"
)

func smallConfig(addr string) loadgen.Config {
	c := loadgen.DefaultConfig()
	c.Addr = addr
	c.KeyMin, c.KeyMax = 0, 999
	c.Clients, c.Threads = 4, 2
	c.TestTime = time.Second
	return c
}

func TestMixedLoadAgainstRedis(t *testing.T) {
	srv := benchtest.StartRedis(t)
	cfg := smallConfig(srv.Addr)
	cfg.Pipeline = 4
	res, err := loadgen.RunOnce(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary()
	if s.Totals.Ops == 0 || s.Sets.Ops == 0 || s.Gets.Ops == 0 {
		t.Fatalf("no operations: %+v", s)
	}
	if s.Totals.Errors != 0 {
		t.Fatalf("%d errors: %v", s.Totals.Errors, s.ErrorSamples)
	}
	// 1 SET per 10 GETs per connection, so the mix is close to 1:10.
	if r := float64(res.Gets.Ops) / float64(res.Sets.Ops); r < 9 || r > 11 {
		t.Errorf("GET/SET ratio %.2f; want about 10", r)
	}
	// Over a 1000-key range the SETs land early, so most GETs hit.
	if res.Gets.Hits == 0 || res.Gets.Hits+res.Gets.Misses != res.Gets.Ops {
		t.Errorf("hits %d + misses %d != gets %d (or no hits)", res.Gets.Hits, res.Gets.Misses, res.Gets.Ops)
	}
	if res.Duration < time.Second || res.Duration > 5*time.Second {
		t.Errorf("duration %v; want a little over the 1s test time", res.Duration)
	}
	if s.Totals.P50Ms <= 0 || s.Totals.P99Ms < s.Totals.P50Ms || s.Totals.P999Ms < s.Totals.P99Ms || s.Totals.KBPerSec <= 0 {
		t.Errorf("implausible latencies or throughput: %+v", s.Totals)
	}
	var out bytes.Buffer
	if err := res.WriteReport(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ALL STATS", "Sets", "Gets", "Totals", "p99.9 Latency"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())
}

func TestSetOnlyFillsKeyRange(t *testing.T) {
	srv := benchtest.StartRedis(t)
	cfg := smallConfig(srv.Addr)
	cfg.Ratio = loadgen.Ratio{Set: 1, Get: 0}
	cfg.SetPattern, cfg.GetPattern = loadgen.Sequential, loadgen.Sequential
	cfg.KeyMin, cfg.KeyMax = 1000, 5999
	cfg.Pipeline = 16
	res, err := loadgen.RunOnce(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sets.Ops < 5000 || res.Gets.Ops != 0 || res.Sets.Errors != 0 {
		t.Fatalf("sets %d (want >= 5000), gets %d, errors %d", res.Sets.Ops, res.Gets.Ops, res.Sets.Errors)
	}
	if got := benchtest.Command(t, srv.Addr, "DBSIZE"); got != "5000" {
		t.Fatalf("DBSIZE = %s; want 5000 (the key range)", got)
	}
	for k, want := range map[string]string{
		"memtier-1000": strings.Repeat("x", 32),
		"memtier-5999": strings.Repeat("x", 32),
		"memtier-999":  "(nil)",
		"memtier-6000": "(nil)",
	} {
		if got := benchtest.Command(t, srv.Addr, "GET", k); got != want {
			t.Errorf("GET %s = %q; want %q", k, got, want)
		}
	}
}

func TestRequestBoundRun(t *testing.T) {
	srv := benchtest.StartRedis(t)
	cfg := smallConfig(srv.Addr)
	cfg.TestTime = 0
	cfg.Requests = 1000
	cfg.Clients, cfg.Threads = 3, 1
	cfg.Pipeline = 7 // does not divide 1000: the last window is partial
	res, err := loadgen.RunOnce(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Total().Ops; got != 3000 {
		t.Fatalf("ops = %d; want exactly 3 × 1000", got)
	}
	total := res.Total()
	if got := total.Latency.Count(); got != 3000 {
		t.Fatalf("latency samples = %d; want 3000", got)
	}
}

// TestRateLimitCapsRequests: with RateLimit a connection sends no more
// than its schedule allows (rate × run time, plus the one due at the
// start), whatever the server's speed, and the run still ends with every
// reply accounted. Unlimited, the same Redis answers far more than the cap
// in the same time on any machine this runs on.
func TestRateLimitCapsRequests(t *testing.T) {
	srv := benchtest.StartRedis(t)
	cfg := smallConfig(srv.Addr)
	cfg.Clients, cfg.Threads = 4, 1
	cfg.Pipeline = 16
	cfg.RateLimit = 200
	cfg.TestTime = 500 * time.Millisecond
	res, err := loadgen.RunOnce(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	total := res.Total()
	// Each connection: at most 200 × (0.5 s + the moment the last check ran
	// past it) + 1; allow 10% for the check after the test time.
	if limit := uint64(4 * (200*0.5*1.1 + 1)); total.Ops == 0 || total.Ops > limit {
		t.Fatalf("ops = %d; want 1..%d under the rate limit", total.Ops, limit)
	}
	if total.Errors != 0 || total.Latency.Count() != total.Ops {
		t.Fatalf("errors %d, latency samples %d of %d ops", total.Errors, total.Latency.Count(), total.Ops)
	}
	if !strings.Contains(cfg.String(), "200 req/s/conn") {
		t.Errorf("String() = %q lacks the rate", cfg.String())
	}
}

func TestErrorRepliesAreCounted(t *testing.T) {
	srv := benchtest.StartRedis(t)
	for i := 0; i < 10; i++ {
		benchtest.Command(t, srv.Addr, "RPUSH", "memtier-"+strconv.Itoa(i), "a")
	}
	cfg := smallConfig(srv.Addr)
	cfg.KeyMin, cfg.KeyMax = 0, 9
	cfg.Ratio = loadgen.Ratio{Set: 0, Get: 1}
	cfg.TestTime, cfg.Requests = 0, 50
	res, err := loadgen.RunOnce(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Gets.Errors != res.Gets.Ops || res.Gets.Ops != 400 {
		t.Fatalf("errors %d of %d GETs; want all 400 to fail with WRONGTYPE", res.Gets.Errors, res.Gets.Ops)
	}
	if len(res.ErrorSamples) == 0 || len(res.ErrorSamples) > 5 || !strings.Contains(res.ErrorSamples[0], "WRONGTYPE") {
		t.Fatalf("error samples %q; want 1..5 WRONGTYPE replies", res.ErrorSamples)
	}
	var out bytes.Buffer
	_ = res.WriteReport(&out)
	if !strings.Contains(out.String(), "400 error replies") {
		t.Errorf("report does not show the errors:\n%s", out.String())
	}
}

func TestCancelStopsRun(t *testing.T) {
	srv := benchtest.StartRedis(t)
	cfg := smallConfig(srv.Addr)
	cfg.TestTime = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := loadgen.RunOnce(ctx, cfg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancelled run took %v", d)
	}
	if res == nil || res.Total().Ops == 0 {
		t.Fatalf("want the partial result of a cancelled run, got %v", res)
	}
}

func TestServerGoneIsAnError(t *testing.T) {
	srv := benchtest.StartRedis(t)
	cfg := smallConfig(srv.Addr)
	cfg.TestTime = time.Minute
	l, err := loadgen.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	time.AfterFunc(200*time.Millisecond, func() { _ = srv.Stop(5 * time.Second) })
	if _, err := l.Run(context.Background()); err == nil {
		t.Fatal("run against a server that went away returned no error")
	}
}

func TestDialRefused(t *testing.T) {
	cfg := loadgen.DefaultConfig()
	cfg.Addr = "127.0.0.1:1"
	if _, err := loadgen.Dial(context.Background(), cfg); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}
