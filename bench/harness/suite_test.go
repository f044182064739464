package harness

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
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
			if !st.Prep { // its row is read from a run of its own
				want = append(want, st.Name)
			}
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

// The LPUSH that LRANGE needs is a case of its own group, read from the
// row of -t lpush; the lrange group runs it first without recording it.
func TestSuiteLPushForLRange(t *testing.T) {
	own, lr := suiteGroupNamed(t, "lrange-lpush"), suiteGroupNamed(t, "lrange")
	if len(own.Tests) != 1 || suiteSelects([]SuiteGroup{own}) == nil || own.Tests[0].row() != "LPUSH" {
		t.Fatalf("lrange-lpush group %+v; want -t lpush alone, read from its LPUSH row", own)
	}
	prep := lr.Tests[0]
	if !prep.Prep || prep.Select != "" || prep.Name != own.Tests[0].Name || prep.Label != own.Tests[0].Label || prep.row() != prep.Name {
		t.Errorf("lrange's first test %+v; want the unrecorded prep of the case %q", prep, own.Tests[0].Name)
	}
	// The prep's rate does not size the group; a test's rate is read from
	// its row.
	samples := map[string]Sample{
		"LPUSH (needed to benchmark LRANGE)": {OpsPerSec: 1.6e6},
		"LRANGE_100 (first 100 elements)":    {OpsPerSec: 230e3},
		"LRANGE_600 (first 600 elements)":    {OpsPerSec: 24e3},
		"LPUSH":                              {OpsPerSec: 1.5e6},
	}
	if got := suiteRates(lr.Tests, samples); !slices.Equal(got, []float64{230e3, 24e3}) {
		t.Errorf("lrange rates %v; want LRANGE_100's and LRANGE_600's", got)
	}
	if got := suiteRates(own.Tests, samples); !slices.Equal(got, []float64{1.5e6}) {
		t.Errorf("lrange-lpush rates %v; want the LPUSH row's", got)
	}
}

// TestLPushForLRangeOnTheWire runs the lrange-lpush group's -t and the
// lrange group's against a redis-server: both push the same value onto
// the same list.
func TestLPushForLRangeOnTheWire(t *testing.T) {
	rb := benchtest.NeedTool(t, "redis-benchmark")
	s := benchtest.StartRedis(t)
	run := func(g SuiteGroup) string {
		out, err := exec.Command(rb, benchArgs(s.Port, 5, 1000, 100000, strings.Join(suiteSelects([]SuiteGroup{g}), ","), 1)...).Output()
		if err != nil {
			t.Fatalf("redis-benchmark -t %s: %v\n%s", suiteSelects([]SuiteGroup{g}), err, out)
		}
		rows, err := parseBenchRows(out)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		var want []string
		for _, st := range g.Tests {
			want = append(want, st.row())
		}
		if !slices.Equal(names, want) {
			t.Errorf("rows %q; want %q", names, want)
		}
		return benchtest.Command(t, s.Addr, "LINDEX", "mylist", "0")
	}
	own := run(suiteGroupNamed(t, "lrange-lpush"))
	if n := benchtest.Command(t, s.Addr, "LLEN", "mylist"); n != "1000" {
		t.Errorf("after -t lpush -n 1000: LLEN mylist %s", n)
	}
	prep := run(suiteGroupNamed(t, "lrange"))
	if n := benchtest.Command(t, s.Addr, "LLEN", "mylist"); n != "2000" || own != prep || len(own) != 3 {
		t.Errorf("after both: LLEN mylist %s, values %q and %q; want 2000, one 3-byte value", n, own, prep)
	}
	info := benchtest.Command(t, s.Addr, "INFO", "commandstats")
	if !strings.Contains(info, "cmdstat_lpush:calls=2000,") {
		t.Errorf("commandstats:\n%s\nwant 2000 LPUSH calls", info)
	}
}

func suiteGroupNamed(t *testing.T, name string) SuiteGroup {
	t.Helper()
	i := slices.IndexFunc(DefaultSuite, func(g SuiteGroup) bool { return g.Name == name })
	if i < 0 {
		t.Fatalf("no suite group %q", name)
	}
	return DefaultSuite[i]
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
		if !t.Prep {
			st.cases[t.Name] = &Case{Name: t.Label + " -P 1", Gated: true}
		}
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

	// The LPUSH that LRANGE needs takes the whole group with it; it has
	// no case of its own there (its own group measures it).
	lr := slices.IndexFunc(DefaultSuite, func(g SuiteGroup) bool { return g.Name == "lrange" })
	st = suiteStateFor(DefaultSuite, lr)
	if st.selects() != "lrange_100,lrange_300,lrange_500,lrange_600" {
		t.Errorf("-t %s", st.selects())
	}
	d := st.drop("LPUSH (needed to benchmark LRANGE)", SideSvcDB, "Error from server: WRONGTYPE x")
	if len(d) != 4 || len(st.live) != 0 || len(st.cases) != 4 {
		t.Errorf("dropped %q, %d live, %d cases; want the 4 LRANGE tests, none, 4", d, len(st.live), len(st.cases))
	}
	if f := st.cases["LRANGE_600 (first 600 elements)"].Failure; f != "not run: LPUSH (for LRANGE), which redis-benchmark runs first, failed on svcdb: Error from server: WRONGTYPE x" {
		t.Errorf("LRANGE_600 failure %q", f)
	}

	// Once every LRANGE test has failed, the LPUSH has nothing to run with.
	st = suiteStateFor(DefaultSuite, lr)
	for _, n := range []string{"LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)", "LRANGE_500 (first 500 elements)"} {
		st.drop(n, SideRedis, "boom")
	}
	if len(st.live) != 2 {
		t.Fatalf("%d live; want LPUSH and LRANGE_600", len(st.live))
	}
	if d := st.drop("LRANGE_600 (first 600 elements)", SideRedis, "boom"); len(st.live) != 0 || !slices.Equal(d, []string{"LRANGE_600 -P 1"}) {
		t.Errorf("%d live, dropped %q", len(st.live), d)
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

	lr := suiteGroupNamed(t, "lrange").Tests
	fails := silentErrors(lr, d)
	// Only the test that sends LPUSH fails: the LRANGE tests send LRANGE.
	if len(fails) != 1 || fails[0].test != "LPUSH (needed to benchmark LRANGE)" || !strings.Contains(fails[0].msg, "40 error replies to LPUSH") {
		t.Errorf("fails = %+v", fails)
	}
	// Errors no command of the run explains fail every test of the run.
	fails = silentErrors(suiteGroupNamed(t, "mset").Tests, errorCounts{Known: true, Total: 3})
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
	for _, c := range []struct {
		name  string
		rates []float64
		d     time.Duration
		want  int
	}{
		// The single-key group at -P 16: the median rate decides.
		{"main -P 16", []float64{1.3e6, 1.5e6, 0.95e6, 1.0e6, 0.47e6}, time.Second, 1_000_000},
		// The LRANGE tests at -P 16 (Redis, defaults mode): LRANGE_100 at
		// 229k/s must last half of d; by the median (53k) it would last
		// 0.23 s.
		{"lrange -P 16", []float64{229e3, 67e3, 39e3, 28e3}, time.Second, 110_000},
		{"lrange -P 16, 2.5 s", []float64{229e3, 67e3, 39e3, 28e3}, 2500 * time.Millisecond, 290_000},
		// At -P 1 the median (LRANGE_300 and _500) decides.
		{"lrange -P 1", []float64{72e3, 42e3, 28e3, 24e3}, time.Second, 36_000},
		// The LPUSH for LRANGE alone, and MSET alone: their rate.
		{"lrange-lpush -P 16", []float64{1.6e6}, time.Second, 1_600_000},
		{"mset -P 16", []float64{231e3}, time.Second, 230_000},
		{"slow", []float64{100}, time.Second, 1000},
	} {
		n := suiteRequests(c.rates, c.d, 1000)
		if n != c.want {
			t.Errorf("%s: -n %d; want %d", c.name, n, c.want)
		}
		// Every test lasts at least about d/suiteShortest (twoDigits
		// rounds by up to 5%), unless the floor makes it longer.
		for _, r := range c.rates {
			if got := float64(n) / r; got < 0.95*c.d.Seconds()/suiteShortest {
				t.Errorf("%s: a test at %.0f/s lasts %.2f s at -n %d", c.name, r, got, n)
			}
		}
	}
}

// After the LRANGE tests, each LRANGE_N must return N elements: a server
// that answered with fewer would look fast without an error.
func TestCheckLRange(t *testing.T) {
	s := benchtest.StartRedis(t)
	ctx := context.Background()
	lr := suiteGroupNamed(t, "lrange").Tests
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
