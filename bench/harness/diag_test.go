package harness

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDiagAddr(t *testing.T) {
	f := func(out, want string) {
		t.Helper()
		got, ok := diagAddr(out)
		if ok != (want != "") || got != want {
			t.Errorf("diagAddr(%q) = %q, %v; want %q", out, got, ok, want)
		}
	}
	f("svcdb diagnostics on http://127.0.0.1:43211\nsvcdb listening on 127.0.0.1:6379\n", "127.0.0.1:43211")
	f("time=... level=INFO msg=\"diagnostics HTTP server listening\" addr=[::1]:9090\nsvcdb diagnostics on http://[::1]:9090\n", "[::1]:9090")
	f("svcdb listening on 127.0.0.1:6379\n", "")
	f("", "")
}

func TestRedactToken(t *testing.T) {
	got := redactToken("/usr/bin/taskset -c 0 bin/svcdb --port 1 --bind 127.0.0.1 --http-port 0 --http-token s3cr3t", "s3cr3t")
	if strings.Contains(got, "s3cr3t") || !strings.HasSuffix(got, "--http-token REDACTED") {
		t.Errorf("redactToken: %q", got)
	}
	// A token a shell would split is quoted on the command line.
	if got := redactToken("svcdb --http-token 'a b'", "a b"); got != "svcdb --http-token REDACTED" {
		t.Errorf("quoted token: %q", got)
	}
}

func TestDiagOrder(t *testing.T) {
	for round, want := range map[int][2]string{1: {"off", "on"}, 2: {"on", "off"}, 3: {"off", "on"}} {
		if got := diagOrder(round); got != want {
			t.Errorf("diagOrder(%d) = %v; want %v", round, got, want)
		}
	}
}

func TestDiagValidate(t *testing.T) {
	c := DefaultDiagConfig()
	c.SvcDB.Path = "bin/svcdb"
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	if c.ScrapeInterval != time.Second || c.MaxCostPct != 3 || c.MaxOthers != 0.1 || c.Retries != 6 || len(c.Endpoints) != 3 || !c.Endpoints[0].Required || c.Endpoints[1].Required {
		t.Errorf("defaults: %+v", c)
	}
	c.Tests = []string{"lpushx"}
	c.Pipelines = []int{0}
	c.ScrapeInterval = 0
	c.Endpoints = []Endpoint{{Path: "metrics"}}
	c.Token = "a b"
	c.Retries = -1
	err := c.Validate()
	for _, want := range []string{`test "lpushx"`, "pipeline 0", "scrape interval 0s", `endpoint "metrics"`, "white space", "retries -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

// diagTestReport has two cases: SET, where diagnostics cost 2% of ops/s
// and 5% of CPU per request, and GET, where they cost 3.6% and 1%.
func diagTestReport() *DiagReport {
	s := func(ops, cpu float64) Sample {
		return Sample{OpsPerSec: ops, CPUUsPerReq: cpu, P50Ms: 0.3, P99Ms: 1, Requests: 1000, WallSec: 1}
	}
	return &DiagReport{
		Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Command: "svcbench diag --svcdb bin/svcdb",
		Rounds:  3, MaxCostPct: 3, MaxOthers: 0.1, ScrapeIntervalSec: 1,
		Machine: Machine{CPUModel: "Test CPU", OnlineCPUs: 2, UsableCPUs: 2, Kernel: "linux 6.1", GoVersion: "go1.26", RedisBenchmarkVersion: "redis-benchmark 7.0.15"},
		PinNote: "servers pinned to CPU 0, clients to CPU 1 (taskset)",
		OffCmd:  "bin/svcdb --port 1", OnCmd: "bin/svcdb --port 2 --http-port 0 --http-token REDACTED",
		DiagAddr:        "127.0.0.1:3",
		IdleOffMsPerSec: 0.1, IdleOnMsPerSec: 0.35,
		Endpoints: []EndpointReport{
			{Path: "/metrics", Status: 200, Scraped: true, Scrapes: 10, Bytes: 10 * 2048, Seconds: 0.01, IdleCPUMs: 1.5},
			{Path: "/status/json", Status: 200, Scraped: true, Scrapes: 10, Errors: 1, FirstError: "HTTP 503", Bytes: 9 * 512, Seconds: 0.02, IdleCPUMs: 0.5},
			{Path: "/debug/api/metrics", Status: 404},
		},
		Cases: []*DiagCase{
			{
				Name: "SET -P 16", Detail: "redis-benchmark -t set -P 16",
				Off:     []Sample{s(1000, 1.00), s(900, 1.10), s(1100, 0.90)},
				Retried: 2,
				// The fourth run was disturbed: left out of the medians.
				On:      []Sample{s(980, 1.05), s(990, 1.00), s(970, 1.10), {OpsPerSec: 500, CPUUsPerReq: 3, WallSec: 1, OthersCPU: 0.5}},
				Scrapes: []int{3, 2, 3, 9},
			},
			{
				Name: "GET -P 1", Detail: "redis-benchmark -t get -P 1",
				// Kept although others took 0.25 of a CPU: the retries ran out.
				Off:     []Sample{{OpsPerSec: 500, CPUUsPerReq: 10, P50Ms: 0.3, P99Ms: 1, Requests: 1000, WallSec: 2, OthersCPU: 0.5}},
				On:      []Sample{{OpsPerSec: 482, CPUUsPerReq: 10.1, WallSec: 1, ClientCPU: 0.95}},
				Scrapes: []int{4},
			},
		},
	}
}

func TestDiagRowsAndSummary(t *testing.T) {
	rep := diagTestReport()
	rows := rep.Rows()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	set, get := rows[0], rows[1]
	if !near(set.OpsRatio, 0.98) || !near(set.OpsCostPct, 2) || !near(set.CPURatio, 1.05) || !near(set.CPUCostPct, 5) ||
		!near(set.Spread, 0.2) || set.Scrapes != 3 || set.ClientBound || set.Runs != [2]int{3, 3} || set.LeftOut != 1 {
		t.Errorf("SET row %+v", set)
	}
	if !near(get.OpsRatio, 0.964) || !near(get.OpsCostPct, 3.6) || !near(get.CPUCostPct, 1) || get.Spread != 0 || get.Scrapes != 4 || !get.ClientBound ||
		!near(get.Others, 0.25) || get.Disturbed != 1 || get.LeftOut != 0 || get.Runs != [2]int{1, 1} || set.Others != 0 || set.Disturbed != 0 {
		t.Errorf("GET row %+v", get)
	}

	sum := rep.Summary()
	wantRatio := math.Sqrt(0.98 * 0.964)
	if !near(sum.OpsRatio, wantRatio) || !near(sum.OpsCostPct, (1-wantRatio)*100) ||
		!near(sum.CPURatio, math.Sqrt(1.05*1.01)) || sum.Worst != "GET -P 1" || !near(sum.WorstCostPct, 3.6) ||
		!sum.WithinBar || !sum.Noisy || !near(sum.ScrapeCPUMs, 2) || !near(sum.ScrapeCPUPct, 0.2) || sum.Retried != 2 || sum.LeftOut != 1 || sum.Disturbed != 1 {
		t.Errorf("summary %+v", sum)
	}
	rep.MaxCostPct = 2.5
	if s := rep.Summary(); s.WithinBar {
		t.Errorf("cost %.2f%% within a 2.5%% bar", s.OpsCostPct)
	}
	rep.MaxCostPct = 25
	if s := rep.Summary(); !s.WithinBar || s.Noisy {
		t.Errorf("25%% bar: %+v", s)
	}
	rep.ScrapeIntervalSec = 10
	if s := rep.Summary(); !near(s.ScrapeCPUPct, 0.02) {
		t.Errorf("scrape CPU at one round per 10 s: %v%%; want 0.02%%", s.ScrapeCPUPct)
	}
	if s := (&DiagReport{MaxCostPct: 3}).Summary(); s.WithinBar || s.OpsRatio != 0 || s.WorstCostPct != 0 {
		t.Errorf("empty report: %+v", s)
	}
}

// TestDiagRowsDisturbedSide: when one side has only disturbed runs, both
// sides use every run, or quiet runs would be compared with disturbed ones.
func TestDiagRowsDisturbedSide(t *testing.T) {
	quiet := Sample{OpsPerSec: 100, CPUUsPerReq: 1, WallSec: 1}
	busy := Sample{OpsPerSec: 50, CPUUsPerReq: 2, WallSec: 1, OthersCPU: 0.5}
	rep := &DiagReport{MaxOthers: 0.1, MaxCostPct: 3, Cases: []*DiagCase{
		{Name: "one side disturbed", Off: []Sample{quiet, quiet, busy}, On: []Sample{busy, busy, busy}, Scrapes: []int{1, 2, 3}},
		{Name: "both sides quiet once", Off: []Sample{busy, quiet, busy}, On: []Sample{busy, busy, quiet}, Scrapes: []int{1, 2, 3}},
	}}
	rows := rep.Rows()
	if r := rows[0]; r.Runs != [2]int{3, 3} || r.LeftOut != 0 || r.Disturbed != 4 || r.Off.OpsPerSec != 100 || r.On.OpsPerSec != 50 || r.Scrapes != 2 {
		t.Errorf("one side disturbed: %+v", r)
	}
	if r := rows[1]; r.Runs != [2]int{1, 1} || r.LeftOut != 4 || r.Disturbed != 0 || r.OpsRatio != 1 || r.Scrapes != 3 || r.Others != 0 {
		t.Errorf("both sides quiet once: %+v", r)
	}
	if s := rep.Summary(); s.Disturbed != 4 || s.LeftOut != 4 || !strings.Contains(rep.Sentence(), "4 disturbed run(s) are in the medians") {
		t.Errorf("summary %+v: %s", s, rep.Sentence())
	}
	rep.MaxOthers = 0 // no limit: every run counts, none is disturbed
	if r := rep.Rows()[1]; r.Runs != [2]int{3, 3} || r.LeftOut != 0 || r.Disturbed != 0 {
		t.Errorf("no limit: %+v", r)
	}
}

func TestOthersShare(t *testing.T) {
	for _, c := range []struct {
		s    Sample
		want float64
	}{
		{Sample{WallSec: 2, OthersCPU: 0.5}, 0.25},
		{Sample{WallSec: 0, OthersCPU: 0.5}, 0},
		{Sample{WallSec: 2}, 0},
	} {
		if got := c.s.OthersShare(); got != c.want {
			t.Errorf("%+v.OthersShare() = %v; want %v", c.s, got, c.want)
		}
	}
}

func TestBenchCPUs(t *testing.T) {
	for _, c := range []struct {
		server, client string
		want           []int
	}{{"", "", nil}, {"0", "1", []int{0, 1}}, {"0-1", "1-2", []int{0, 1, 2}}} {
		got, err := benchCPUs(c.server, c.client)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("benchCPUs(%q, %q) = %v, %v; want %v", c.server, c.client, got, err, c.want)
		}
	}
	if _, err := benchCPUs("0", "x"); err == nil {
		t.Error("bad CPU list: want an error")
	}
}

func TestSignedPct(t *testing.T) {
	for v, want := range map[float64]string{2: "+2.0%", -0.44: "-0.4%", 0.01: "0.0%", -0.04: "0.0%", 127.2: "+127.2%"} {
		if got := signedPct(v); got != want {
			t.Errorf("signedPct(%v) = %q; want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{3: "3%", 2.5: "2.5%", 10: "10%"} {
		if got := pct(v); got != want {
			t.Errorf("pct(%v) = %q; want %q", v, got, want)
		}
	}
}

func TestDiagTableAndMarkdown(t *testing.T) {
	rep := diagTestReport()
	var tb, md, js bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"diagnostics on vs off: medians of 3", "Test CPU", "redis-benchmark 7.0.15", "--http-token REDACTED",
		"/metrics: 10 scrapes, 2.0 KB and 1.00 ms each; 1.50 ms of server CPU per scrape when idle",
		"/status/json: 10 scrapes, 512 B and 2.00 ms each; 0.50 ms of server CPU per scrape when idle; 1 failed (first: HTTP 503)",
		"/debug/api/metrics: skipped, answered 404",
		"off ops/s", "ops cost", "GET -P 1 *", "0.980", "+2.0%", "+5.0%", "20%",
		"Throughput cost of diagnostics: +2.8%", "worst case GET -P 1, +3.6%", "2.00 ms of server CPU per round", "0.20% of one CPU at one round per 1s", "idle and not scraped, the server used 0.35 ms of CPU per second with diagnostics on and 0.10 ms off",
		"That is within the 3% bar, but 1 disturbed run(s) are in the medians: do not trust it", "Other processes took over 10% of a CPU during some runs: 2 were repeated, 1 more kept in the report but left out of the medians, and 1 used in them because a side of their case had no undisturbed run",
		"Caution: ops/s moved by up to 20%", "others", "25%",
	} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	if strings.Contains(tb.String(), "redis-server") {
		t.Errorf("table names a redis-server the comparison did not run:\n%s", tb.String())
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Diagnostics on vs off", "Measured 2026-11-23 10:00 UTC with `svcbench diag --svcdb bin/svcdb`",
		"| case | off ops/s | on ops/s | on/off | ops cost |", "|---|--:|",
		"| SET -P 16 | 1000 | 980 | 0.980 | +2.0% | 20% | 1.00 | 1.05 | 1.050 | +5.0% | 3+3 | 3 | 0% |",
		"| GET -P 1 * | 500 | 482 | 0.964 | +3.6% | - | 10.00 | 10.10 | 1.010 | +1.0% | 1+1 | 4 | 25% |",
		"| SET -P 16 | on | 4 | 500 |",
		"<details>", "| SET -P 16 | on | 2 | 990 |", "| GET -P 1 | off | 1 | 500 | 0.300 | 1.000 | 10.00 | 1000 | 2.00 | 0.000 | 0.000 | 25% | - |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"idle_server_cpu_ms_per_scrape": 1.5`) || !strings.Contains(js.String(), `"scrapes": [`) {
		t.Errorf("json: %v\n%s", err, js.String())
	}
}

// diagHTTP is a stand-in diagnostics server: /metrics open, /status/json
// behind the token, /boom failing, everything else 404. It counts requests.
func diagHTTP(t *testing.T, token string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		switch r.URL.Path {
		case "/metrics":
			fmt.Fprint(w, "svc_up 1\n")
		case "/status/json":
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `{"ok":true}`)
		case "/boom":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestProbe(t *testing.T) {
	srv, _ := diagHTTP(t, "tok")
	ctx := context.Background()
	f := func(token string, eps []Endpoint, want []EndpointReport, wantErr string) {
		t.Helper()
		sc := newScraper(srv.URL, token, time.Second)
		defer sc.close()
		got, err := sc.probe(ctx, eps)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("probe(%v): err %v; want one containing %q", eps, err, wantErr)
			}
			return
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("probe(%v) = %+v, %v; want %+v", eps, got, err, want)
		}
	}
	f("tok", DefaultEndpoints, []EndpointReport{
		{Path: "/metrics", Status: 200, Scraped: true},
		{Path: "/status/json", Status: 200, Scraped: true},
		{Path: "/debug/api/metrics", Status: 404},
	}, "")
	f("wrong", DefaultEndpoints, nil, "/status/json: HTTP 401; want 200, or 404")
	f("tok", []Endpoint{{Path: "/missing", Required: true}}, nil, "/missing: HTTP 404; want 200")
	f("tok", []Endpoint{{Path: "/metrics"}, {Path: "/boom"}}, nil, "/boom: HTTP 500")
	f("tok", []Endpoint{{Path: "/a"}, {Path: "/b"}}, nil, "none of the endpoints /a, /b answered 200")

	down := newScraper("http://127.0.0.1:1", "tok", time.Second)
	if _, err := down.probe(ctx, DefaultEndpoints); err == nil || !strings.Contains(err.Error(), "probing http://127.0.0.1:1/metrics") {
		t.Errorf("probe of a closed port: %v", err)
	}
}

func TestScraper(t *testing.T) {
	srv, hits := diagHTTP(t, "tok")
	sc := newScraper(srv.URL, "tok", 10*time.Millisecond)
	defer sc.close()
	eps := []EndpointReport{
		{Path: "/metrics", Scraped: true},
		{Path: "/debug/api/metrics", Status: 404}, // skipped: never requested
		{Path: "/status/json", Scraped: true},
	}
	stop := sc.start(context.Background(), eps)
	for deadline := time.Now().Add(10 * time.Second); hits.Load() < 6 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	scrapes, failed := stop()
	if scrapes < 6 || failed != 0 || int64(scrapes) != hits.Load() {
		t.Fatalf("scrapes %d, failed %d, server saw %d", scrapes, failed, hits.Load())
	}
	m, st := eps[0], eps[2]
	// Rounds are whole: every scraped endpoint once per tick, in order.
	if m.Scrapes+st.Scrapes != scrapes || m.Scrapes != st.Scrapes || eps[1].Scrapes != 0 ||
		m.Bytes != int64(m.Scrapes*len("svc_up 1\n")) || st.Bytes != int64(st.Scrapes*len(`{"ok":true}`)) || m.Seconds <= 0 {
		t.Errorf("endpoint totals %+v", eps)
	}

	// A second run adds to the totals; failures are counted, not fatal.
	eps[2].Path = "/boom"
	before := m.Scrapes
	stop = sc.start(context.Background(), eps)
	time.Sleep(15 * time.Millisecond)
	scrapes, failed = stop()
	if scrapes < 2 || failed != scrapes/2 || eps[0].Scrapes-before != scrapes/2 || eps[2].Errors != failed || eps[2].FirstError != "HTTP 500" {
		t.Errorf("second run: scrapes %d, failed %d, endpoints %+v", scrapes, failed, eps)
	}

	// Cancelling the run ends the scraper; the cut-off scrape is not counted.
	ctx, cancel := context.WithCancel(context.Background())
	stop = sc.start(ctx, eps[:1])
	cancel()
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return after the context was cancelled")
	}
	if eps[0].Errors != 0 {
		t.Errorf("cancellation counted as a failed scrape: %+v", eps[0])
	}
}
