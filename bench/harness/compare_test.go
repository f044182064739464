package harness_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	c.Suite = nil   // TestSuiteFailingCommands runs it
	c.MaxOthers = 0 // no waiting for quiet CPUs in tests
	c.Tests = []string{"set", "mset"}
	c.Pipelines = []int{1, 16}
	c.Requests = 2000
	c.TargetTime = 200 * time.Millisecond
	c.Clients = 10
	lc := loadgen.DefaultConfig() // keys: the key space's (LoadKeyRange)
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
		// Only the load generator knows p99.9 (redis-benchmark's CSV stops at p99).
		if loadgen := r.Case.Tool == "loadgen"; loadgen != (r.SvcDB.P999Ms >= r.SvcDB.P99Ms && r.Redis.P999Ms >= r.Redis.P99Ms && r.P999Ratio > 0) {
			t.Errorf("%s (%s): p99.9 %v / %v, ratio %v", r.Case.Name, r.Case.Tool, r.SvcDB.P999Ms, r.Redis.P999Ms, r.P999Ratio)
		}
	}
	// The workload's keys follow the key space (-r 100000: keys 1..100000),
	// and the servers saw more than one key.
	if c := rows[4].Case; !strings.Contains(c.Detail, "R:R 1..100000,") || c.SvcDBKeys < 2 || c.SvcDBKeys > 100000 || c.RedisKeys < 2 || c.RedisKeys > 100000 {
		t.Errorf("%s: detail %q, keys added %d / %d; want keys 1..100000, more than one", c.Name, c.Detail, c.SvcDBKeys, c.RedisKeys)
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
	for _, want := range []string{"SET -P 1", "MSET -P 16", "loadgen 1:10 R:R -P 1", "svcdb cpu us/req", "redis-server " + rep.Machine.RedisVersion, "svcdb p99.9 ms"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if !strings.Contains(md.String(), "| MSET -P 16 |") {
		t.Errorf("markdown lacks the MSET -P 16 row:\n%s", md.String())
	}
	t.Logf("\n%s", table.String())
}

// TestLoadKeysFollowKeySpace: with no -r (one key per test) a workload
// that names no key range writes one key on each server, and one that names
// its range keeps it: the load generator's rows measure the key space their
// mode says.
func TestLoadKeysFollowKeySpace(t *testing.T) {
	cfg, progress := tinyConfig(t)
	cfg.Tests = nil
	cfg.KeySpace = 0
	cfg.LoadRounds = 1
	given := cfg.Loads[0]
	given.KeyMin, given.KeyMax = 1000, 1049
	cfg.Loads = append(cfg.Loads, given)
	cfg.LoadKeysGiven = []bool{false, true}
	rep, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())
	if len(rep.Cases) != 2 {
		t.Fatalf("%d cases; want 2", len(rep.Cases))
	}
	one, fixed := rep.Cases[0], rep.Cases[1]
	if one.SvcDBKeys != 1 || one.RedisKeys != 1 || !strings.Contains(one.Detail, "R:R 1..1,") {
		t.Errorf("one key: DBSIZE grew by %d / %d, detail %q; want 1 key (1..1)", one.SvcDBKeys, one.RedisKeys, one.Detail)
	}
	if fixed.SvcDBKeys < 2 || fixed.SvcDBKeys > 50 || fixed.RedisKeys < 2 || fixed.RedisKeys > 50 || !strings.Contains(fixed.Detail, "R:R 1000..1049,") {
		t.Errorf("given range: DBSIZE grew by %d / %d, detail %q; want 2..50 keys of 1000..1049", fixed.SvcDBKeys, fixed.RedisKeys, fixed.Detail)
	}
	// A workload naming its range has its own row; one on the key space's
	// keys shares its row across modes.
	if strings.Contains(one.Name, "key") || !strings.HasSuffix(fixed.Name, ", keys 1000..1049") {
		t.Errorf("row names %q and %q; want the key range in the second only", one.Name, fixed.Name)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "key 1 alone (as redis-benchmark's no -r)") }) {
		t.Errorf("notes %q lack the load generator's keys", rep.Notes)
	}
	var sbs bytes.Buffer
	if err := harness.WriteSideBySide(&sbs, []harness.Variant{{Mode: harness.Mode{KeySpace: 0}, Report: rep}}); err != nil {
		t.Fatal(err)
	}
	if want := "defaults, one key: R:R 1..1 and R:R 1000..1049"; !strings.Contains(sbs.String(), want) {
		t.Errorf("side by side lacks %q:\n%s", want, sbs.String())
	}
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

// TestSuiteFailingCommands runs the default suite against a redis-server
// with LPOP and LRANGE renamed away as "svcdb": their tests fail with the
// server's words; every other test, the LPUSH that LRANGE needs too (a run
// of its own), is measured on both sides, and the report fails the bar.
func TestSuiteFailingCommands(t *testing.T) {
	cfg, progress := tinyConfig(t)
	cfg.SvcDB.Args = append(slices.Clone(harness.RedisBaselineArgs),
		"--rename-command", "LPOP", "", "--rename-command", "LRANGE", "")
	cfg.Suite = harness.CloneSuite(harness.DefaultSuite)
	cfg.Tests = []string{"lpop", "set"} // one at a time, after the suite
	cfg.Loads = nil
	cfg.Pipelines = []int{1}
	cfg.SuiteTestTime = 0 // fixed sizes: main and lrange-lpush 2000 requests, lrange and mset the floor of 1000
	rep, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())
	rows := rep.Rows()
	if len(rows) != 22 {
		t.Fatalf("%d rows; want the 20 tests of the default suite and 2 single tests", len(rows))
	}
	// The single tests: LPOP fails the same way, SET is measured.
	single := rows[20:]
	rows = rows[:20]
	if c := single[0].Case; c.Suite != "" || c.Name != "LPOP -P 1" || !strings.HasPrefix(c.Failure, "svcdb: Error from server: ERR unknown command 'LPOP'") || single[0].Verdict != harness.VerdictFailed {
		t.Errorf("single LPOP: %+v, %s", c, single[0].Verdict)
	}
	if c := single[1].Case; c.Failure != "" || len(c.SvcDB) != 1 || len(c.Redis) != 1 {
		t.Errorf("single SET: %+v", c)
	}
	failed := map[string]string{}
	for _, r := range rows {
		if !r.Case.Gated || r.Case.Tool != "redis-benchmark" || r.Case.Suite == "" {
			t.Errorf("%s: case %+v; want a gated suite case", r.Case.Name, r.Case)
		}
		if r.Verdict == harness.VerdictFailed {
			failed[r.Case.Name] = r.Case.Failure
			continue
		}
		if len(r.Case.SvcDB) != 1 || len(r.Case.Redis) != 1 || r.OpsRatio <= 0 {
			t.Errorf("%s: %d/%d samples, ratio %v", r.Case.Name, len(r.Case.SvcDB), len(r.Case.Redis), r.OpsRatio)
		}
		for _, s := range []harness.Sample{r.SvcDB, r.Redis} {
			if s.WallSec <= 0 || s.Requests == 0 || s.P99Ms < s.P50Ms {
				t.Errorf("%s: implausible sample %+v", r.Case.Name, s)
			}
			if s.CPUUsPerReq <= 0 {
				t.Logf("%s: no CPU per request (stdbuf missing?): %+v", r.Case.Name, s)
			}
		}
	}
	want := map[string]string{
		"LPOP -P 1":       "svcdb: Error from server: ERR unknown command 'LPOP'",
		"LRANGE_100 -P 1": "svcdb: Error from server: ERR unknown command 'LRANGE'",
		"LRANGE_300 -P 1": "svcdb: Error from server: ERR unknown command 'LRANGE'",
		"LRANGE_500 -P 1": "svcdb: Error from server: ERR unknown command 'LRANGE'",
		"LRANGE_600 -P 1": "svcdb: Error from server: ERR unknown command 'LRANGE'",
	}
	if len(failed) != len(want) {
		t.Errorf("failed cases %q; want %d", failed, len(want))
	}
	for name, prefix := range want {
		if !strings.HasPrefix(failed[name], prefix) {
			t.Errorf("%s failure %q; want it to start with %q", name, failed[name], prefix)
		}
	}
	if p := rep.Problems(); len(p) < len(want) {
		t.Errorf("problems %q; want at least the %d failures", p, len(want))
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PING_INLINE -P 1", "MSET -P 1", "FAILED", "LPOP -P 1: FAILED: svcdb: Error from server: ERR unknown command 'LPOP'"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	t.Logf("\n%s", table.String())
}

// TestMemoryRedisWithItself loads two shapes into two redis-servers, the
// "svcdb" one refusing HSET.
func TestMemoryRedisWithItself(t *testing.T) {
	redis := benchtest.NeedTool(t, "redis-server")
	cfg := harness.DefaultMemoryConfig()
	cfg.SvcDB = harness.Server{Path: redis, Args: append(slices.Clone(harness.RedisBaselineArgs), "--rename-command", "HSET", "")}
	cfg.Redis.Path = redis
	cfg.Shapes = []string{"string", "hash"}
	cfg.Keys = 20_000
	cfg.Settle = 0
	cfg.WorkDir = t.TempDir()
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep, err := harness.RunMemory(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	str, hash := rep.Results[0], rep.Results[1]
	for _, side := range []harness.MemorySide{str.SvcDB, str.Redis, hash.Redis} {
		used := side.UsedPerKey(cfg.Keys)
		// A small string key costs Redis 7 about 80-100 bytes, a 3-field
		// listpack hash about 100-150.
		if side.Failure != "" || side.Keys != int64(cfg.Keys) || !side.HasUsed || used < 40 || used > 400 || side.RSSAfter <= side.RSSBefore {
			t.Errorf("implausible side %+v (used %.1f B/key)", side, used)
		}
	}
	if str.RSSRatio() <= 0 {
		t.Errorf("string RSS ratio %v", str.RSSRatio())
	}
	if !strings.Contains(hash.SvcDB.Failure, "unknown command 'HSET'") {
		t.Errorf("hash on the HSET-less server: failure %q", hash.SvcDB.Failure)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
}
