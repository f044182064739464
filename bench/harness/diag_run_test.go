package harness_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/internal/benchtest"
	"github.com/svcdb/svcdb/bench/proc"
)

// fakeEnv, when set in the environment, makes this test binary play svcdb;
// its value is the redis-server that serves the Redis protocol.
const fakeEnv = "SVCBENCH_FAKE_SVCDB"

func TestMain(m *testing.M) {
	if redis := os.Getenv(fakeEnv); redis != "" {
		os.Exit(fakeSvcDB(redis, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeSvcDB stands in for svcdb in the diagnostics comparison: a
// redis-server child (same process group, so the harness's group kill
// reaches it) serves --port, and with --http-port this process serves the
// diagnostics endpoints the way svcdb does today: /metrics open,
// /status/json behind the bearer token, everything else 404. It prints
// svcdb's start-up lines.
func fakeSvcDB(redis string, args []string) int {
	fs := flag.NewFlagSet("fake-svcdb", flag.ContinueOnError)
	port := fs.String("port", "6379", "")
	bind := fs.String("bind", "127.0.0.1", "")
	httpPort := fs.Int("http-port", -1, "")
	token := fs.String("http-token", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *httpPort >= 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(*httpPort)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "# TYPE svc_up gauge\nsvc_up 1\n")
		})
		mux.HandleFunc("/status/json", func(w http.ResponseWriter, r *http.Request) {
			if *token == "" || r.Header.Get("Authorization") != "Bearer "+*token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `{"state":"ready"}`)
		})
		go func() { _ = http.Serve(ln, mux) }() // until the process exits
		fmt.Printf("svcdb diagnostics on http://%s\n", ln.Addr())
	}
	cmd := exec.Command(redis, "--port", *port, "--bind", *bind, "--save", "", "--appendonly", "no")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	fmt.Printf("svcdb listening on %s\n", net.JoinHostPort(*bind, *port))
	select {
	case <-sigs:
		_ = cmd.Process.Kill()
		<-exited
		return 0
	case <-exited:
		return 1
	}
}

// fakeSvcDBScript writes an executable that runs this test binary as
// fakeSvcDB.
func fakeSvcDBScript(t *testing.T, redis string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "fake-svcdb")
	body := fmt.Sprintf("#!/bin/sh\n%s=%q exec %q \"$@\"\n", fakeEnv, redis, self)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

func tinyDiagConfig(t *testing.T) (harness.DiagConfig, *bytes.Buffer) {
	t.Helper()
	redis := benchtest.NeedTool(t, "redis-server")
	c := harness.DefaultDiagConfig()
	c.SvcDB.Path = fakeSvcDBScript(t, redis)
	c.RedisBenchmark = benchtest.NeedTool(t, "redis-benchmark")
	c.Rounds = 2
	c.Pipelines = []int{16, 1}
	c.Tests = []string{"set"}
	c.Requests = 2000
	c.TargetTime = 300 * time.Millisecond
	c.Clients = 10
	c.ScrapeInterval = 50 * time.Millisecond
	c.MaxOthers = 0 // the machine may be busy: no waiting, no repeats
	c.WorkDir = t.TempDir()
	var progress bytes.Buffer
	c.Progress = &progress
	return c, &progress
}

func TestRunDiag(t *testing.T) {
	cfg, progress := tinyDiagConfig(t)
	cfg.Token = "fixed-token"
	rep, err := harness.RunDiag(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())

	if len(rep.Cases) != 2 {
		t.Fatalf("%d cases; want 2", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		if len(c.Off) != 2 || len(c.On) != 2 || len(c.Scrapes) != 2 {
			t.Errorf("%s: %d off, %d on samples, %d scrape counts; want 2 each", c.Name, len(c.Off), len(c.On), len(c.Scrapes))
		}
		for _, n := range c.Scrapes {
			if n < 2 { // the first round at once, both endpoints
				t.Errorf("%s: %d scrapes in a run", c.Name, n)
			}
		}
	}
	for _, r := range rep.Rows() {
		if r.Off.OpsPerSec <= 0 || r.On.OpsPerSec <= 0 || r.OpsRatio <= 0 {
			t.Errorf("%s: implausible row %+v", r.Case.Name, r)
		}
	}
	want := []struct {
		path    string
		status  int
		scraped bool
	}{{"/metrics", 200, true}, {"/status/json", 200, true}, {"/debug/api/metrics", 404, false}}
	if len(rep.Endpoints) != len(want) {
		t.Fatalf("endpoints %+v", rep.Endpoints)
	}
	for i, w := range want {
		e := rep.Endpoints[i]
		if e.Path != w.path || e.Status != w.status || e.Scraped != w.scraped || e.Errors != 0 || (e.Scrapes > 0) != w.scraped || e.IdleCPUMs < 0 {
			t.Errorf("endpoint %d: %+v; want %+v", i, e, w)
		}
	}
	if strings.Contains(rep.OffCmd, "--http-port") || !strings.HasSuffix(rep.OnCmd, "--http-port 0 --http-token REDACTED") ||
		strings.Contains(rep.OnCmd+progress.String(), "fixed-token") || rep.DiagAddr == "" {
		t.Errorf("commands: off %q, on %q, diagnostics on %q", rep.OffCmd, rep.OnCmd, rep.DiagAddr)
	}
	if rep.IdleOnMsPerSec < 0 || rep.IdleOffMsPerSec < 0 || !strings.Contains(progress.String(), "[cost] idle, not scraped") {
		t.Errorf("idle CPU: on %v, off %v ms/s", rep.IdleOnMsPerSec, rep.IdleOffMsPerSec)
	}
	if rep.Machine.UsableCPUs < 1 || rep.Machine.RedisVersion != "" {
		t.Errorf("machine %+v", rep.Machine)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"SET -P 16", "SET -P 1", "/status/json: ", "/debug/api/metrics: skipped, answered 404", "Throughput cost of diagnostics"} {
		if !strings.Contains(table.String(), w) {
			t.Errorf("table lacks %q", w)
		}
	}
	t.Logf("\n%s", table.String())
}

func TestRunDiagOffServerWithHTTP(t *testing.T) {
	cfg, progress := tinyDiagConfig(t)
	cfg.SvcDB.Args = []string{"--http-port", "0"} // both servers then serve HTTP
	_, err := harness.RunDiag(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "diagnostics-off server started its HTTP server anyway") {
		t.Fatalf("err = %v; want the off server's HTTP server reported", err)
	}
	checkGone(t, progress.String())
}

func TestRunDiagCancelStopsServers(t *testing.T) {
	cfg, progress := tinyDiagConfig(t)
	cfg.TargetTime = time.Hour // calibrated runs far longer than the test waits
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Progress = &cancelOnWrite{buf: progress, trigger: "[cal]", cancel: func() {
		time.AfterFunc(300*time.Millisecond, cancel)
	}}
	start := time.Now()
	_, err := harness.RunDiag(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled\nprogress:\n%s", err, progress)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancelled RunDiag took %v", d)
	}
	checkGone(t, progress.String())
}

// TestRunDiagRepeatsDisturbedRuns keeps a CPU of the benchmark busy with a
// spinning shell: every run is disturbed, so the harness repeats runs until
// its retries run out, then keeps the disturbed ones and says so.
func TestRunDiagRepeatsDisturbedRuns(t *testing.T) {
	cfg, progress := tinyDiagConfig(t)
	cfg.Rounds = 1
	cfg.Pipelines = []int{16}
	cfg.MaxOthers = 0.1
	cfg.Retries = 3
	cfg.QuietBudget = 300 * time.Millisecond
	var g proc.Group
	t.Cleanup(func() { _ = g.StopAll(5 * time.Second) })
	spec := proc.Spec{Name: "spinner", Path: "/bin/sh", Args: []string{"-c", "while :; do :; done"}}
	if ok, _ := proc.CanPin(); ok {
		spec.CPUs = cfg.ServerCPUs
	}
	if _, err := g.Start(spec); err != nil {
		t.Fatal(err)
	}
	rep, err := harness.RunDiag(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())
	s := rep.Summary()
	// Two repeats for the first run (the most per run), the last one for
	// the second; both are kept disturbed.
	if s.Retried != 3 || s.Disturbed != 2 || rep.Cases[0].Retried != 3 {
		t.Errorf("retried %d, disturbed %d; want 3 and 2\nprogress:\n%s", s.Retried, s.Disturbed, progress)
	}
	for _, w := range []string{"[busy]  SET -P 16", "retries left", "waited"} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress)
		}
	}
	if !strings.Contains(rep.Sentence(), "3 were repeated, 0 more kept in the report but left out of the medians, and 2 used in them") {
		t.Errorf("sentence: %s", rep.Sentence())
	}
}
