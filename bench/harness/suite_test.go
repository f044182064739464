package harness

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/internal/benchtest"
	"github.com/svcdb/svcdb/bench/proc"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The output of a plain `redis-benchmark -p PORT -n 2000 --csv` against
// redis-server 7.0.15 has one row per test of DefaultSuite, named as
// DefaultSuite names them, in its order.
func TestParseDefaultSuiteCSV(t *testing.T) {
	rows, err := parseBenchRows(readTestdata(t, "redis-7.0.15-default-suite.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, g := range DefaultSuite {
		for _, st := range g.Tests {
			want = append(want, st.Name)
		}
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Name)
		if r.OpsPerSec <= 0 || r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
			t.Errorf("%s: implausible row %+v", r.Name, r.benchRow)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows\n%q\nwant DefaultSuite's\n%q", got, want)
	}
	if len(rows) != 20 {
		t.Errorf("%d rows; the default suite has 20 tests", len(rows))
	}
	// Spot checks against the file.
	if r := rows[15]; r.Name != "LRANGE_100 (first 100 elements)" || r.OpsPerSec != 71428.57 || r.P50Ms != 0.359 || r.P99Ms != 0.535 {
		t.Errorf("LRANGE_100 row %+v", r)
	}
	// One -t test out of the full output, as single-test runs read it.
	if r, err := parseBenchCSV(readTestdata(t, "redis-7.0.15-default-suite.csv"), "lrange_600"); err != nil || r.OpsPerSec != 25316.46 {
		t.Errorf("lrange_600: %+v, %v", r, err)
	}
	// The -t names cover every test but the LPUSH that LRANGE brings along.
	if len(Tests) != 19 || Tests[0] != "ping_inline" || Tests[18] != "mset" {
		t.Errorf("Tests = %q", Tests)
	}
}

func TestParseBenchRowsEdges(t *testing.T) {
	for _, out := range []string{"", `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"` + "\n"} {
		if rows, err := parseBenchRows([]byte(out)); err != nil || len(rows) != 0 {
			t.Errorf("parseBenchRows(%q) = %v, %v; want no rows, no error", out, rows, err)
		}
	}
	if _, err := parseBenchRows([]byte("\"test\",\"rps\"\n\"SET\",\"1\"\n")); err == nil || !strings.Contains(err.Error(), "p50_latency_ms") {
		t.Errorf("missing column: %v", err)
	}
}

// redis-benchmark 7 exits at the first error reply: what it printed says
// which test failed (the first without a row) and why.
func TestBenchFailureOutputs(t *testing.T) {
	for _, c := range []struct {
		stdout, stderr string
		rows           []string
		msg            string
	}{
		{"svcdb-lpush-unimplemented.stdout", "svcdb-lpush-unimplemented.stderr",
			[]string{"PING_INLINE", "PING_MBULK", "SET", "GET", "INCR"},
			"Error from server: ERR command 'lpush' is known but not implemented by svcdb yet"},
		{"redis-wrongtype.stdout", "redis-wrongtype.stderr",
			[]string{"SET"},
			"Error from server: WRONGTYPE Operation against a key holding the wrong kind of value"},
	} {
		rows, err := parseBenchRows(readTestdata(t, c.stdout))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, c.rows) {
			t.Errorf("%s: rows %q; want %q", c.stdout, names, c.rows)
		}
		if got := benchFailure(string(readTestdata(t, c.stderr))); got != c.msg {
			t.Errorf("%s: benchFailure = %q; want %q", c.stderr, got, c.msg)
		}
	}
	for in, want := range map[string]string{
		"WARNING: -e option has no effect. We now immediately exit on error to avoid false results.\nError from server: ERR unknown command 'LPOP'\n": "Error from server: ERR unknown command 'LPOP'",
		"Error: Connection reset by peer\n": "Error: Connection reset by peer",
		"a\nb\nc\nd\n":                      "b / c / d",
		"":                                  "",
	} {
		if got := benchFailure(in); got != want {
			t.Errorf("benchFailure(%q) = %q; want %q", in, got, want)
		}
	}
}

func suiteStateFor(groups []SuiteGroup, gi int) *suiteState {
	g := groups[gi]
	st := &suiteState{group: g, p: 1, live: slices.Clone(g.Tests), cases: map[string]*Case{}}
	for _, t := range g.Tests {
		st.cases[t.Name] = &Case{Name: t.Label + " -P 1", Gated: true}
	}
	return st
}

func TestSuiteDrop(t *testing.T) {
	// A failed test leaves the group; the others run on.
	st := suiteStateFor(DefaultSuite, 0)
	if d := st.drop("LPOP", SideSvcDB, "Error from server: ERR unknown command 'LPOP'"); !slices.Equal(d, []string{"LPOP -P 1"}) {
		t.Errorf("dropped %q", d)
	}
	if len(st.live) != 13 || strings.Contains(st.selects(), "lpop") || !strings.Contains(st.selects(), "rpop") {
		t.Errorf("after dropping LPOP: %d live, -t %s", len(st.live), st.selects())
	}
	if f := st.cases["LPOP"].Failure; f != "svcdb: Error from server: ERR unknown command 'LPOP'" {
		t.Errorf("failure %q", f)
	}

	// The LPUSH that LRANGE needs takes the whole group with it.
	st = suiteStateFor(DefaultSuite, 1)
	if st.selects() != "lrange_100,lrange_300,lrange_500,lrange_600" {
		t.Errorf("-t %s", st.selects())
	}
	d := st.drop("LPUSH (needed to benchmark LRANGE)", SideSvcDB, "Error from server: WRONGTYPE x")
	if len(d) != 5 || len(st.live) != 0 {
		t.Errorf("dropped %q, %d live; want all 5, none", d, len(st.live))
	}
	if f := st.cases["LRANGE_600 (first 600 elements)"].Failure; !strings.Contains(f, "not run: LPUSH (for LRANGE)") || !strings.Contains(f, "svcdb") {
		t.Errorf("LRANGE_600 failure %q", f)
	}

	// Once every LRANGE test has failed, the LPUSH has nothing to run with.
	st = suiteStateFor(DefaultSuite, 1)
	for _, n := range []string{"LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)", "LRANGE_500 (first 500 elements)"} {
		st.drop(n, SideRedis, "boom")
	}
	if len(st.live) != 2 {
		t.Fatalf("%d live; want LPUSH and LRANGE_600", len(st.live))
	}
	st.drop("LRANGE_600 (first 600 elements)", SideRedis, "boom")
	if len(st.live) != 0 || !strings.HasPrefix(st.cases["LPUSH (needed to benchmark LRANGE)"].Failure, "not measured") {
		t.Errorf("%d live, LPUSH failure %q", len(st.live), st.cases["LPUSH (needed to benchmark LRANGE)"].Failure)
	}
	// Dropping an unknown or already dropped test is a no-op.
	if d := st.drop("LRANGE_600 (first 600 elements)", SideRedis, "again"); d != nil {
		t.Errorf("second drop: %q", d)
	}
}

func TestSilentErrors(t *testing.T) {
	fields := parseInfo("# Commandstats\r\n" +
		"cmdstat_lpush:calls=4050,usec=1355,usec_per_call=0.33,rejected_calls=0,failed_calls=50\r\n" +
		"cmdstat_config|get:calls=4,usec=32,usec_per_call=8.00,rejected_calls=1,failed_calls=0\r\n" +
		"cmdstat_set:calls=22001,usec=5307,usec_per_call=0.24,rejected_calls=0,failed_calls=0\r\n")
	by := parseCommandErrors(fields)
	if by["lpush"] != 50 || by["config|get"] != 1 || by["set"] != 0 {
		t.Errorf("parseCommandErrors = %v", by)
	}
	before := errorCounts{Known: true, Total: 10, ByCommand: map[string]int64{"lpush": 10}}
	after := errorCounts{Known: true, Total: 60, ByCommand: by}
	d := after.since(before)
	if !d.Known || d.Total != 50 || d.ByCommand["lpush"] != 40 || d.ByCommand["config|get"] != 1 {
		t.Errorf("since = %+v", d)
	}
	if (errorCounts{}).since(before).Known {
		t.Error("a server without counts must give unknown deltas")
	}

	lr := DefaultSuite[1].Tests
	fails := silentErrors(lr, d)
	// Only the test that sends LPUSH fails: the LRANGE tests send LRANGE.
	if len(fails) != 1 || fails[0].test != "LPUSH (needed to benchmark LRANGE)" || !strings.Contains(fails[0].msg, "40 error replies to LPUSH") {
		t.Errorf("fails = %+v", fails)
	}
	// Errors no command of the run explains fail every test of the run.
	fails = silentErrors(DefaultSuite[2].Tests, errorCounts{Known: true, Total: 3})
	if len(fails) != 1 || !strings.Contains(fails[0].msg, "3 error replies during the run") {
		t.Errorf("unattributed: %+v", fails)
	}
	if fails := silentErrors(lr, errorCounts{Known: true}); fails != nil {
		t.Errorf("no errors: %+v", fails)
	}
	if fails := silentErrors(lr, errorCounts{Total: 5}); fails != nil {
		t.Errorf("unknown counts: %+v", fails)
	}
}

func TestSplitMarks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mark := func(line string, sec, serverMs, clientMs float64) lineMark {
		return lineMark{line: line, at: t0.Add(time.Duration(sec * float64(time.Second))),
			server: time.Duration(serverMs * float64(time.Millisecond)), client: time.Duration(clientMs * float64(time.Millisecond))}
	}
	start := mark("", 0, 100, 0)
	marks := []lineMark{
		mark(`"test","rps","avg_latency_ms"`, 0.01, 101, 2),
		mark(`"SET","10000.00","0.1"`, 1.01, 601, 902),
		mark(`"GET","20000.00","0.1"`, 1.51, 801, 1352),
	}
	rows := []namedRow{{"SET", benchRow{10000, 0.3, 0.9}}, {"GET", benchRow{20000, 0.2, 0.5}}}
	got := splitMarks(start, marks, rows, 10000, true)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	set, get := got["SET"], got["GET"]
	if !near(set.WallSec, 1) || !near(set.ServerCPU, 0.5) || !near(set.CPUUsPerReq, 50) || !near(set.ClientCPU, 0.9) || set.Requests != 10000 {
		t.Errorf("SET = %+v", set)
	}
	if !near(get.WallSec, 0.5) || !near(get.ServerCPU, 0.2) || !near(get.CPUUsPerReq, 20) || !near(get.ClientCPU, 0.45) || get.OpsPerSec != 20000 || get.P99Ms != 0.5 {
		t.Errorf("GET = %+v", get)
	}

	// Other processes' CPU time: busy time on the benchmark's CPUs less the
	// server's, the client's and svcbench's own.
	withSys := slices.Clone(marks)
	for i, busyMs := range []float64{1000, 1000 + 500 + 900 + 300, 1000 + 1700 + 200 + 450 + 50} {
		withSys[i].sys = proc.CPUTimes{Busy: time.Duration(busyMs * float64(time.Millisecond))}
		withSys[i].sysOK = true
	}
	withSys[2].self = 50 * time.Millisecond
	got = splitMarks(start, withSys, rows, 10000, true)
	if o := got["SET"].OthersCPU; !near(o, 0.3) {
		t.Errorf("SET others %v; want 0.3", o)
	}
	if o := got["GET"].OthersCPU; math.Abs(o-0) > 1e-9 {
		t.Errorf("GET others %v; want 0", o)
	}

	// Without the header line, the first test starts at the clock's start.
	got = splitMarks(start, marks[1:], rows, 10000, true)
	if s := got["SET"]; !near(s.WallSec, 1.01) || !near(s.ServerCPU, 0.501) {
		t.Errorf("SET without header = %+v", s)
	}

	// Rows that all arrived at exit (not line-buffered after all): wall
	// time from the rates, CPU unknown.
	late := []lineMark{mark(`"test","rps"`, 1.5, 801, 0), mark(`"SET","10000.00"`, 1.5, 801, 0), mark(`"GET","20000.00"`, 1.5, 801, 0)}
	for _, c := range []struct {
		marks    []lineMark
		buffered bool
	}{
		{late, true},      // all at exit
		{late[1:], true},  // all at exit, no header
		{marks, false},    // stdbuf missing
		{marks[:2], true}, // a row without its line
	} {
		got := splitMarks(start, c.marks, rows, 10000, c.buffered)
		if s := got["SET"]; !near(s.WallSec, 1) || s.ServerCPU != 0 || s.CPUUsPerReq != 0 || s.ClientCPU != 0 {
			t.Errorf("untimed SET = %+v", s)
		}
		if s := got["GET"]; !near(s.WallSec, 0.5) || s.CPUUsPerReq != 0 {
			t.Errorf("untimed GET = %+v", s)
		}
	}
}

// lineClock cuts what it is written into lines, however the writes split
// them.
func TestLineClockWrite(t *testing.T) {
	l := &lineClock{serverPid: os.Getpid()}
	l.setClient(os.Getpid())
	for _, w := range []string{`"test","rps"`, "\n\"SET\",", "\"1\"\n\"GET\",\"2\"\n", "partial"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	var lines []string
	for _, m := range l.marks {
		lines = append(lines, m.line)
		if m.server <= 0 || m.client <= 0 || m.at.IsZero() {
			t.Errorf("mark %+v lacks a reading", m)
		}
	}
	if !slices.Equal(lines, []string{`"test","rps"`, `"SET","1"`, `"GET","2"`}) {
		t.Errorf("lines %q", lines)
	}
}

func TestBarVerdicts(t *testing.T) {
	s := func(ops float64) []Sample {
		return []Sample{{OpsPerSec: ops, P50Ms: 0.3, P99Ms: 1, CPUUsPerReq: 2, WallSec: 1}}
	}
	rep := &Report{
		Rounds: 1, MinRatio: 0.9,
		Cases: []*Case{
			{Name: "SET -P 1", Tool: "redis-benchmark", Suite: "main", Gated: true, SvcDB: s(95), Redis: s(100)},
			{Name: "ZADD -P 1", Tool: "redis-benchmark", Suite: "main", Gated: true, SvcDB: s(89), Redis: s(100)},
			{Name: "LPUSH -P 1", Tool: "redis-benchmark", Suite: "main", Gated: true, Redis: s(100),
				Failure: "svcdb: Error from server: ERR unknown command 'LPUSH'"},
			{Name: "MSET -P 1", Tool: "redis-benchmark", Suite: "mset", Gated: true, SvcDB: s(100)}, // no redis sample
			{Name: "loadgen 1:10 R:R -P 1", Tool: "loadgen", SvcDB: s(50), Redis: s(100)},           // not gated
			{Name: "loadgen 1:10 R:R -P 16", Tool: "loadgen", Failure: "svcdb: 3 error replies, first: ERR x"},
		},
	}
	rows := rep.Rows()
	var verdicts []string
	for _, r := range rows {
		verdicts = append(verdicts, r.Verdict)
	}
	if want := []string{VerdictOK, VerdictLow, VerdictFailed, VerdictFailed, "", VerdictFailed}; !slices.Equal(verdicts, want) {
		t.Errorf("verdicts %q; want %q", verdicts, want)
	}
	probs := rep.Problems()
	if len(probs) != 4 {
		t.Fatalf("problems %q; want 4", probs)
	}
	for i, want := range []string{
		"ZADD -P 1: ops/s ratio 0.89 < 0.90 (svcdb 89, redis 100 ops/s",
		"LPUSH -P 1: FAILED: svcdb: Error from server: ERR unknown command 'LPUSH'",
		"MSET -P 1: FAILED: no samples",
		"loadgen 1:10 R:R -P 16: FAILED: svcdb: 3 error replies",
	} {
		if !strings.HasPrefix(probs[i], want) {
			t.Errorf("problem %d = %q; want it to start with %q", i, probs[i], want)
		}
	}
	// A bar of 0 checks failures only.
	rep.MinRatio = 0
	if p := rep.Problems(); len(p) != 3 {
		t.Errorf("MinRatio 0: problems %q; want the 3 failures", p)
	}
	rep.MinRatio = 0.9

	var tb, md bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	table := tb.String()
	for _, want := range []string{" bar ", " LOW ", " FAILED ", "1 of 4 pass", "LPUSH -P 1: FAILED: svcdb: Error from server"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// A failed side shows no numbers, not zeros.
	for _, line := range strings.Split(table, "\n") {
		if strings.Contains(line, "LPUSH -P 1") && strings.Contains(line, "FAILED") && !strings.Contains(line, "ERR") {
			if f := strings.Fields(line); f[3] != "-" || f[4] != "100" || f[5] != "-" {
				t.Errorf("LPUSH row %q: want svcdb -, redis 100, ratio -", line)
			}
		}
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| ZADD -P 1 | 89 | 100 | 0.89 | - | 0% | LOW |", "| loadgen 1:10 R:R -P 1 | 50 | 100 | 0.50 | - | 0% | - |", "Bar: svcdb ops/s >= 0.90", "- LPUSH -P 1: FAILED"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestSuiteRequests(t *testing.T) {
	// The single-key group at -P 16: the median rate decides.
	if n := suiteRequests([]float64{1.3e6, 1.5e6, 0.95e6, 1.0e6, 0.47e6}, time.Second, 1000); n != 1_000_000 {
		t.Errorf("main: -n %d; want 1000000", n)
	}
	// LRANGE at -P 16: LPUSH at 1.3M/s must last 0.2 s.
	if n := suiteRequests([]float64{1.3e6, 229e3, 67e3, 39e3, 28e3}, time.Second, 1000); n != 260_000 {
		t.Errorf("lrange -P 16: -n %d; want 260000", n)
	}
	// LRANGE at -P 1: the median (LRANGE_300) decides.
	if n := suiteRequests([]float64{95e3, 72e3, 42e3, 28e3, 24e3}, time.Second, 1000); n != 42_000 {
		t.Errorf("lrange -P 1: -n %d; want 42000", n)
	}
	if n := suiteRequests([]float64{100}, time.Second, 1000); n != 1000 {
		t.Errorf("slow: -n %d; want the floor", n)
	}
}

// After the LRANGE tests, each LRANGE_N must return N elements: a server
// that answered with fewer would look fast without an error.
func TestCheckLRange(t *testing.T) {
	s := benchtest.StartRedis(t)
	ctx := context.Background()
	lr := DefaultSuite[1].Tests
	fails := checkLRange(ctx, s.Addr, lr)
	if len(fails) != 4 || !strings.Contains(fails[0].msg, "LRANGE mylist 0 99 after the run answered 0 elements") {
		t.Fatalf("empty list: %+v; want the 4 LRANGE tests to fail", fails)
	}
	args := []string{"RPUSH", "mylist"}
	for range 550 {
		args = append(args, "xxx")
	}
	benchtest.Command(t, s.Addr, args...)
	fails = checkLRange(ctx, s.Addr, lr)
	if len(fails) != 1 || fails[0].test != "LRANGE_600 (first 600 elements)" || !strings.Contains(fails[0].msg, "answered 550 elements") {
		t.Errorf("550 elements: %+v; want LRANGE_600 alone to fail", fails)
	}
	benchtest.Command(t, s.Addr, "RPUSH", "mylist", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
		"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
		"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	if fails := checkLRange(ctx, s.Addr, lr); fails != nil {
		t.Errorf("600 elements: %+v", fails)
	}
	benchtest.Command(t, s.Addr, "SET", "mylist", "x")
	if fails := checkLRange(ctx, s.Addr, lr[:2]); len(fails) != 1 || !strings.Contains(fails[0].msg, "WRONGTYPE") {
		t.Errorf("a string: %+v", fails)
	}
	if fails := checkLRange(ctx, s.Addr, DefaultSuite[0].Tests); fails != nil {
		t.Errorf("no LRANGE test: %+v", fails)
	}
}

// Runs during which other processes took more than MaxOthers of a CPU are
// left out of the medians when both servers have undisturbed ones.
func TestDisturbedRuns(t *testing.T) {
	run := func(ops, others float64) Sample {
		return Sample{OpsPerSec: ops, P50Ms: 0.3, P99Ms: 1, CPUUsPerReq: 2, WallSec: 1, OthersCPU: others}
	}
	rep := &Report{Rounds: 3, MinRatio: 0.9, MaxOthers: 0.1, Cases: []*Case{
		{Name: "GET -P 16", Gated: true,
			SvcDB: []Sample{run(100, 0.5), run(98, 0.02), run(60, 0.4)},
			Redis: []Sample{run(100, 0), run(102, 0.05), run(99, 0.3)}},
		{Name: "SET -P 16", Gated: true, // redis never quiet: every run counts
			SvcDB: []Sample{run(80, 0), run(82, 0), run(81, 0)},
			Redis: []Sample{run(100, 0.3), run(100, 0.2), run(100, 0.25)}},
	}}
	rows := rep.Rows()
	get, set := rows[0], rows[1]
	if get.SvcDB.OpsPerSec != 98 || get.Redis.OpsPerSec != 101 || get.LeftOut != 3 || get.Disturbed != 0 || get.Verdict != VerdictOK {
		t.Errorf("GET: svcdb %v, redis %v, left out %d, disturbed %d, %s; want 98, 101, 3, 0, ok",
			get.SvcDB.OpsPerSec, get.Redis.OpsPerSec, get.LeftOut, get.Disturbed, get.Verdict)
	}
	if set.LeftOut != 0 || set.Disturbed != 3 || set.Verdict != VerdictLow || math.Abs(set.Others-0.25) > 1e-9 {
		t.Errorf("SET: left out %d, disturbed %d, others %v, %s", set.LeftOut, set.Disturbed, set.Others, set.Verdict)
	}
	if p := rep.Problems(); len(p) != 1 || !strings.Contains(p[0], "disturbed: other processes took 25% of a CPU") {
		t.Errorf("problems %q", p)
	}
	var tb bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "25%!") {
		t.Errorf("table does not mark the disturbed row:\n%s", tb.String())
	}
	// MaxOthers 0: everything counts.
	rep.MaxOthers = 0
	if g := rep.Rows()[0]; g.LeftOut != 0 || g.SvcDB.OpsPerSec != 98 || g.Redis.OpsPerSec != 100 {
		t.Errorf("MaxOthers 0: %+v", g)
	}
}
