package harness_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/internal/benchtest"
	"github.com/svcdb/svcdb/bench/loadgen"
)

// tinyConfig compares redis-server with itself: the harness must not care
// which binary plays svcdb.
func tinyConfig(t *testing.T) (harness.Config, *bytes.Buffer) {
	t.Helper()
	redis := benchtest.NeedTool(t, "redis-server")
	bench := benchtest.NeedTool(t, "redis-benchmark")
	c := harness.DefaultConfig()
	c.SvcDB = harness.Server{Path: redis, Args: harness.RedisBaselineArgs}
	c.Redis.Path = redis
	c.RedisBenchmark = bench
	c.Rounds = 1
	c.Tests = []string{"set", "mset"}
	c.Pipelines = []int{1, 16}
	c.Requests = 2000
	c.TargetTime = 200 * time.Millisecond
	c.Clients = 10
	lc := loadgen.DefaultConfig()
	lc.KeyMin, lc.KeyMax = 0, 999
	lc.Clients, lc.Threads = 4, 2
	lc.TestTime = 300 * time.Millisecond
	c.Loads = []loadgen.Config{lc}
	c.WorkDir = t.TempDir()
	var progress bytes.Buffer
	c.Progress = &progress
	return c, &progress
}

var pidRE = regexp.MustCompile(`\(pid (\d+)\)`)

// checkGone fails if a server the harness reported starting still exists.
func checkGone(t *testing.T, progress string) {
	t.Helper()
	m := pidRE.FindAllStringSubmatch(progress, -1)
	if len(m) == 0 {
		t.Fatalf("no server pids in progress output:\n%s", progress)
	}
	for _, sm := range m {
		pid, _ := strconv.Atoi(sm[1])
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("server pid %d still exists after Run (kill 0: %v)", pid, err)
		}
	}
}

func TestCompareRedisWithItself(t *testing.T) {
	cfg, progress := tinyConfig(t)
	start := time.Now()
	rep, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	t.Logf("Run took %v", time.Since(start))
	checkGone(t, progress.String())

	rows := rep.Rows()
	if len(rows) != 5 { // 2 tests × 2 pipelines + 1 workload
		t.Fatalf("%d rows; want 5", len(rows))
	}
	for _, r := range rows {
		for _, s := range []harness.Sample{r.SvcDB, r.Redis} {
			if s.OpsPerSec <= 0 || s.P50Ms <= 0 || s.P99Ms < s.P50Ms || s.CPUUsPerReq <= 0 || s.Requests == 0 {
				t.Errorf("%s: implausible sample %+v", r.Case.Name, s)
			}
		}
		if r.OpsRatio <= 0 || r.CPURatio <= 0 {
			t.Errorf("%s: ratios %v, %v", r.Case.Name, r.OpsRatio, r.CPURatio)
		}
	}
	if rep.Machine.RedisVersion == "" || strings.HasPrefix(rep.Machine.RedisVersion, "unknown") || rep.Machine.CPUModel == "" {
		t.Errorf("machine description incomplete: %+v", rep.Machine)
	}
	var table, md bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SET -P 1", "MSET -P 16", "loadgen 1:10 R:R -P 1", "svcdb cpu us/req", "redis-server " + rep.Machine.RedisVersion} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if !strings.Contains(md.String(), "| MSET -P 16 |") {
		t.Errorf("markdown lacks the MSET -P 16 row:\n%s", md.String())
	}
	t.Logf("\n%s", table.String())
}

// cancelOnWrite cancels when the progress output contains trigger: the
// run is then certainly under way, whatever the machine's load.
type cancelOnWrite struct {
	buf     *bytes.Buffer
	trigger string
	cancel  context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	n, err := c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.trigger) {
		c.cancel()
	}
	return n, err
}

func TestCancelStopsServers(t *testing.T) {
	cfg, progress := tinyConfig(t)
	cfg.Requests = 2000
	cfg.TargetTime = time.Hour // calibrated runs far longer than the test waits
	cfg.Loads = nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the long runs begin (after calibration), then a little later.
	cfg.Progress = &cancelOnWrite{buf: progress, trigger: "[cal]", cancel: func() {
		time.AfterFunc(300*time.Millisecond, cancel)
	}}
	start := time.Now()
	_, err := harness.Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled\nprogress:\n%s", err, progress)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancelled Run took %v", d)
	}
	checkGone(t, progress.String())
}

func TestServerThatWillNotStart(t *testing.T) {
	cfg, progress := tinyConfig(t)
	script := filepath.Join(t.TempDir(), "fake-svcdb")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho svcdb refuses to start: \"$@\" >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.SvcDB = harness.Server{Path: script, Args: []string{"--shards", "2"}}
	_, err := harness.Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "svcdb refuses to start: --port") || !strings.Contains(err.Error(), "--bind 127.0.0.1 --shards 2") {
		t.Fatalf("err = %v; want the server's own output in the error", err)
	}
	if strings.Contains(progress.String(), "started redis") {
		t.Errorf("redis was started although svcdb failed:\n%s", progress)
	}
}
