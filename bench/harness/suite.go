package harness

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/bench/proc"
)

// SuiteTest is one test of redis-benchmark's default suite: what a plain
// `redis-benchmark` run (no -t) runs.
type SuiteTest struct {
	// Name is the test's name in redis-benchmark's CSV output, exactly
	// ("LRANGE_100 (first 100 elements)").
	Name string `json:"name"`
	// Label is its name in reports ("LRANGE_100").
	Label string `json:"label"`
	// Select is the -t value that selects it; "" for the LPUSH that
	// redis-benchmark runs before any LRANGE test, which comes with them.
	Select string `json:"select"`
	// Command is the command it sends, as INFO commandstats names it.
	Command string `json:"command"`
	// Row, when set, is the test's CSV row in its group's run where that
	// differs from Name: the LPUSH that LRANGE needs is measured on its
	// own by -t lpush, whose row is "LPUSH".
	Row string `json:"row,omitempty"`
	// Prep marks a test that redis-benchmark runs only to prepare the
	// group's other tests (the LPUSH before the LRANGE tests): it runs,
	// and its failure takes the group with it, but it has no case and its
	// rate does not size the group. The case of that name is measured by
	// a run of its own (a group whose test names it in Row).
	Prep bool `json:"prep,omitempty"`
}

// row is t's name in its group's CSV output.
func (t SuiteTest) row() string {
	if t.Row != "" {
		return t.Row
	}
	return t.Name
}

// SuiteGroup is a part of the default suite run by one redis-benchmark
// invocation (-t with its tests' Select values) and sized as one: tests that
// cost about the same per request, so that one -n gives each a run of
// similar length.
type SuiteGroup struct {
	Name  string      `json:"name"`
	Tests []SuiteTest `json:"tests"`
	// Share is -n as a fraction of Bench.RequestsFor(p) when the suite is
	// not sized by time (Config.SuiteTestTime 0).
	Share float64 `json:"share"`
}

// DefaultSuite is redis-benchmark 7.0's default suite, in its order, in
// four groups: the single-key commands; the LPUSH that fills LRANGE's list;
// the LRANGE tests, whose replies of 100 to 600 elements make them 5 to 70
// times slower per request; and MSET, which writes 10 keys per request. One
// -n for the whole suite would give PING a few milliseconds at the -n that
// gives LRANGE_600 a second.
//
// redis-benchmark runs its LPUSH (needed to benchmark LRANGE) before any
// LRANGE test, with their -n: at -P 16 it pushes 20 to 70 times faster
// than LRANGE_600 replies, so an -n that gives LRANGE_600 a few seconds
// gave it 0.1 s, start-up and one spell of the host's. It is therefore
// measured by a run of its own, -t lpush, which sends the same command
// (LPUSH mylist with the same 3-byte value) to the same list, sized to last
// SuiteTestTime like any test; the lrange group still runs it first (Prep)
// and does not record it. Run one after the other, the groups send what
// the plain run sends, in its order, with the LPUSH sent twice.
var DefaultSuite = []SuiteGroup{
	{Name: "main", Share: 1, Tests: []SuiteTest{
		{Name: "PING_INLINE", Label: "PING_INLINE", Select: "ping_inline", Command: "ping"},
		{Name: "PING_MBULK", Label: "PING_MBULK", Select: "ping_mbulk", Command: "ping"},
		{Name: "SET", Label: "SET", Select: "set", Command: "set"},
		{Name: "GET", Label: "GET", Select: "get", Command: "get"},
		{Name: "INCR", Label: "INCR", Select: "incr", Command: "incr"},
		{Name: "LPUSH", Label: "LPUSH", Select: "lpush", Command: "lpush"},
		{Name: "RPUSH", Label: "RPUSH", Select: "rpush", Command: "rpush"},
		{Name: "LPOP", Label: "LPOP", Select: "lpop", Command: "lpop"},
		{Name: "RPOP", Label: "RPOP", Select: "rpop", Command: "rpop"},
		{Name: "SADD", Label: "SADD", Select: "sadd", Command: "sadd"},
		{Name: "HSET", Label: "HSET", Select: "hset", Command: "hset"},
		{Name: "SPOP", Label: "SPOP", Select: "spop", Command: "spop"},
		{Name: "ZADD", Label: "ZADD", Select: "zadd", Command: "zadd"},
		{Name: "ZPOPMIN", Label: "ZPOPMIN", Select: "zpopmin", Command: "zpopmin"},
	}},
	{Name: "lrange-lpush", Share: 1, Tests: []SuiteTest{
		{Name: "LPUSH (needed to benchmark LRANGE)", Label: "LPUSH (for LRANGE)", Select: "lpush", Command: "lpush", Row: "LPUSH"},
	}},
	{Name: "lrange", Share: 0.2, Tests: []SuiteTest{
		{Name: "LPUSH (needed to benchmark LRANGE)", Label: "LPUSH (for LRANGE)", Command: "lpush", Prep: true},
		{Name: "LRANGE_100 (first 100 elements)", Label: "LRANGE_100", Select: "lrange_100", Command: "lrange"},
		{Name: "LRANGE_300 (first 300 elements)", Label: "LRANGE_300", Select: "lrange_300", Command: "lrange"},
		{Name: "LRANGE_500 (first 500 elements)", Label: "LRANGE_500", Select: "lrange_500", Command: "lrange"},
		{Name: "LRANGE_600 (first 600 elements)", Label: "LRANGE_600", Select: "lrange_600", Command: "lrange"},
	}},
	{Name: "mset", Share: 0.2, Tests: []SuiteTest{
		{Name: "MSET (10 keys)", Label: "MSET", Select: "mset", Command: "mset"},
	}},
}

// suiteSelects returns the -t names of groups' tests, in order.
func suiteSelects(groups []SuiteGroup) []string {
	var out []string
	for _, g := range groups {
		for _, t := range g.Tests {
			if t.Select != "" && !slices.Contains(out, t.Select) {
				out = append(out, t.Select)
			}
		}
	}
	return out
}

// CloneSuite returns a deep copy of groups.
func CloneSuite(groups []SuiteGroup) []SuiteGroup {
	out := slices.Clone(groups)
	for i := range out {
		out[i].Tests = slices.Clone(out[i].Tests)
	}
	return out
}

// suiteState is one group at one pipeline depth while it runs: the tests
// still running (a test that fails is dropped, on both servers, and the
// group runs on without it) and their cases.
type suiteState struct {
	group SuiteGroup
	p, n  int
	live  []SuiteTest
	cases map[string]*Case // by SuiteTest.Name
}

// selects returns -t's value for the live tests.
func (st *suiteState) selects() string {
	return strings.Join(suiteSelects([]SuiteGroup{{Tests: st.live}}), ",")
}

// drop marks test failed on side and removes it from the live tests. A
// test without a -t name of its own (the LPUSH before the LRANGE tests)
// takes the whole group with it; one left without a test that brings it
// along is dropped as not measured.
func (st *suiteState) drop(name, side, msg string) []string {
	var dropped []string
	fail := func(t SuiteTest, why string) {
		c := st.cases[t.Name]
		if t.Prep || c == nil { // no case: measured elsewhere
			return
		}
		if c.Failure == "" {
			c.Failure = why
		}
		dropped = append(dropped, c.Name)
	}
	i := slices.IndexFunc(st.live, func(t SuiteTest) bool { return t.Name == name })
	if i < 0 {
		return nil
	}
	t := st.live[i]
	fail(t, side+": "+msg)
	st.live = slices.Delete(st.live, i, i+1)
	if t.Select == "" {
		for _, o := range st.live {
			fail(o, fmt.Sprintf("not run: %s, which redis-benchmark runs first, failed on %s: %s", t.Label, side, msg))
		}
		st.live = nil
	}
	if st.selects() == "" {
		for _, o := range st.live {
			fail(o, "not measured: no test left that redis-benchmark runs it with")
		}
		st.live = nil
	}
	return dropped
}

// suiteFail is a test that failed in a run.
type suiteFail struct{ test, msg string }

// suiteFloor is the least -n of a suite run: ten requests per client, and
// enough LPUSHes for LRANGE_600 to find 600 elements.
func (r *runner) suiteFloor() int { return max(r.cfg.Clients*10, 1000) }

// suiteShortest is how much shorter than SuiteTestTime a group's fastest
// test may run: at most half, so every row is a run of at least half a
// second at the default 1 s.
const suiteShortest = 2

// runSuite runs every group of the default suite at pipeline p: cases in
// the suite's order, then each group's calibration and rounds.
func (r *runner) runSuite(ctx context.Context, rep *Report, p int) error {
	states := make([]*suiteState, 0, len(r.cfg.Suite))
	for _, g := range r.cfg.Suite {
		st := &suiteState{group: g, p: p, live: slices.Clone(g.Tests), cases: map[string]*Case{}}
		for _, t := range g.Tests {
			if t.Prep {
				continue
			}
			c := &Case{Name: fmt.Sprintf("%s -P %d", t.Label, p), Tool: "redis-benchmark", Gated: true, Suite: g.Name}
			rep.Cases = append(rep.Cases, c)
			st.cases[t.Name] = c
		}
		states = append(states, st)
	}
	for _, st := range states {
		if err := r.suiteGroup(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// suiteGroup sizes one group (a calibration run on each server, as for
// single tests) and runs its rounds.
func (r *runner) suiteGroup(ctx context.Context, st *suiteState) error {
	label := fmt.Sprintf("suite %s -P %d", st.group.Name, st.p)
	floor := r.suiteFloor()
	st.n = max(int(float64(r.cfg.RequestsFor(st.p))*st.group.Share), floor)
	if r.cfg.SuiteTestTime > 0 {
		ncal := max(st.n/10, floor)
		var rates []float64
		for _, side := range []string{SideSvcDB, SideRedis} {
			samples, err := r.suiteRun(ctx, st, side, ncal, "calibration")
			if err != nil {
				return err
			}
			if side == SideRedis { // the baseline's rates size the runs
				rates = suiteRates(st.live, samples)
			}
		}
		if len(st.live) > 0 && len(rates) > 0 {
			st.n = suiteRequests(rates, r.cfg.SuiteTestTime, floor)
			fmt.Fprintf(r.progress, "[cal]   %-28s redis %.0f to %.0f ops/s (median %.0f) over %d requests per test: -n %d for about %v per test, %.2f s for the fastest\n",
				label, slices.Min(rates), slices.Max(rates), Median(ratesSamples(rates)).OpsPerSec, ncal, st.n, r.cfg.SuiteTestTime, float64(st.n)/slices.Max(rates))
		}
	}
	for round := 1; round <= r.cfg.Rounds; round++ {
		for _, side := range []string{SideSvcDB, SideRedis} {
			if len(st.live) == 0 {
				r.done++ // a run that will not happen
				continue
			}
			samples, err := r.suiteRun(ctx, st, side, st.n, fmt.Sprintf("round %d/%d", round, r.cfg.Rounds))
			if err != nil {
				return err
			}
			r.done++
			detail := "redis-benchmark " + strings.Join(benchArgs(0, r.cfg.Clients, st.n, r.cfg.KeySpace, st.selects(), st.p)[4:], " ")
			for _, t := range st.live {
				s, ok := samples[t.row()]
				if !ok || t.Prep {
					continue
				}
				c := st.cases[t.Name]
				c.Detail = detail
				if side == SideSvcDB {
					c.SvcDB = append(c.SvcDB, s)
				} else {
					c.Redis = append(c.Redis, s)
				}
				fmt.Fprintf(r.progress, "[%2d/%d] %-28s %-5s round %d/%d: %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  cpu %s us/req  (%.2f s, others %3.0f%%)\n",
					r.done, r.total, c.Name, side, round, r.cfg.Rounds,
					s.OpsPerSec, s.P50Ms, s.P99Ms, cpuCell(s.CPUUsPerReq, 6), s.WallSec, 100*s.OthersShare())
			}
		}
	}
	return nil
}

// suiteRequests returns a suite group's -n from the baseline's rates of its
// recorded tests: enough for a test at the median rate to last d, and for
// the fastest to last d/suiteShortest (LRANGE_100 replies 7 to 10 times
// faster than LRANGE_600: sized by the median alone it lasted 0.2 s at
// -P 16), and at least floor.
func suiteRequests(rates []float64, d time.Duration, floor int) int {
	med := Median(ratesSamples(rates)).OpsPerSec
	return max(twoDigits(med*d.Seconds()), twoDigits(slices.Max(rates)*d.Seconds()/suiteShortest), floor)
}

// suiteRates returns the rates that size a group: those of its live tests
// in samples (by CSV row), its preparation aside.
func suiteRates(live []SuiteTest, samples map[string]Sample) []float64 {
	var rates []float64
	for _, t := range live {
		if s, ok := samples[t.row()]; ok && !t.Prep {
			rates = append(rates, s.OpsPerSec)
		}
	}
	return rates
}

func ratesSamples(rates []float64) []Sample {
	s := make([]Sample, len(rates))
	for i, v := range rates {
		s[i].OpsPerSec = v
	}
	return s
}

// suiteRun runs the live tests of st against side, and again without a
// test each time one fails, until a run succeeds or no test is left. It
// returns the samples of the successful run by test name (nil if none is
// left); an error only when the comparison cannot go on.
func (r *runner) suiteRun(ctx context.Context, st *suiteState, side string, n int, what string) (map[string]Sample, error) {
	for len(st.live) > 0 {
		samples, fails, err := r.suiteAttempt(ctx, st, side, n, what)
		if err != nil {
			return nil, err
		}
		if len(fails) == 0 {
			return samples, nil
		}
		for _, f := range fails {
			dropped := st.drop(f.test, side, f.msg)
			fmt.Fprintf(r.progress, "[fail]  %s on %s (%s): %s\n", strings.Join(dropped, ", "), side, what, f.msg)
		}
	}
	return nil, nil
}

// suiteAttempt is one redis-benchmark run of st's live tests against side.
// A failure redis-benchmark reports (it exits at the first error reply,
// naming it) is the first live test without a CSV row: the one that was
// running. Error replies it did not report but the server counted fail the
// tests whose command the server says they went to.
func (r *runner) suiteAttempt(ctx context.Context, st *suiteState, side string, n int, what string) (map[string]Sample, []suiteFail, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	s := r.servers[side]
	name := fmt.Sprintf("suite %s -P %d", st.group.Name, st.p)
	path, args := r.cfg.RedisBenchmark, benchArgs(s.Port, r.cfg.Clients, n, r.cfg.KeySpace, st.selects(), st.p)
	if r.stdbuf != "" {
		// Line-buffered, each row arrives as its test ends: the server's
		// CPU time read then splits the run's CPU time between the tests.
		args = append([]string{"-oL", path}, args...)
		path = r.stdbuf
	}
	errsBefore := readErrorCounts(ctx, s.Addr)
	if r.maxOthers > 0 && what != "calibration" {
		if err := r.waitQuiet(ctx, r.maxOthers); err != nil {
			return nil, nil, err
		}
	}
	clock, err := newLineClock(s.Pid(), r.benchCPUs)
	if err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithTimeoutCause(ctx, r.cfg.RunTimeout,
		fmt.Errorf("%s against %s: run timeout %v", name, side, r.cfg.RunTimeout))
	res, runErr := proc.Run(rctx, proc.Spec{
		Name: "redis-benchmark", Path: path, Args: args, CPUs: r.clientCPUs,
		Stdout: clock, OnStart: clock.setClient,
	})
	timedOut := rctx.Err() != nil
	cancel()
	if exited, werr := s.Exited(); exited {
		return nil, nil, fmt.Errorf("%s exited during %s (%s): %v; output:\n%s", side, name, what, werr, s.Output())
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	rows, err := parseBenchRows(res.Stdout)
	if err != nil {
		return nil, nil, fmt.Errorf("%s against %s (%s): %w", name, side, what, err)
	}
	got := map[string]namedRow{}
	for _, row := range rows {
		got[row.Name] = row
	}
	missing := func(t SuiteTest) bool { _, ok := got[t.row()]; return !ok }
	if runErr != nil {
		msg := benchFailure(res.Stderr)
		if timedOut {
			msg = fmt.Sprintf("no reply within the run timeout (%v)", r.cfg.RunTimeout)
		} else if msg == "" {
			msg = runErr.Error()
		}
		for _, t := range st.live {
			if missing(t) {
				return nil, []suiteFail{{t.Name, msg}}, nil
			}
		}
		return nil, nil, fmt.Errorf("%s against %s (%s): redis-benchmark failed after its last test: %w", name, side, what, runErr)
	}
	var fails []suiteFail
	for _, t := range st.live {
		if missing(t) {
			fails = append(fails, suiteFail{t.Name, "no row in redis-benchmark's output"})
		}
	}
	fails = append(fails, silentErrors(st.live, readErrorCounts(ctx, s.Addr).since(errsBefore))...)
	if len(fails) == 0 {
		fails = checkLRange(ctx, s.Addr, st.live)
	}
	if len(fails) > 0 {
		return nil, fails, nil
	}
	return clock.samples(rows, n, r.stdbuf != ""), nil, nil
}

// silentErrors turns the error replies a server counted during a run that
// redis-benchmark completed into failures of the tests whose command the
// server says they went to; errors it cannot attribute fail every test.
func silentErrors(live []SuiteTest, d errorCounts) []suiteFail {
	if !d.Known || d.Total <= 0 {
		return nil
	}
	var fails []suiteFail
	for _, t := range live {
		if k := d.ByCommand[t.Command]; k > 0 {
			fails = append(fails, suiteFail{t.Name, fmt.Sprintf(
				"the server counted %d error replies to %s (INFO commandstats) that redis-benchmark did not report",
				k, strings.ToUpper(t.Command))})
		}
	}
	if len(fails) == 0 {
		for _, t := range live {
			fails = append(fails, suiteFail{t.Name, fmt.Sprintf(
				"the server counted %d error replies during the run (INFO stats total_error_replies) that redis-benchmark did not report", d.Total)})
		}
	}
	return fails
}

// checkLRange asks addr, after a run of the LRANGE tests, for what they
// asked: a server that answered LRANGE_600 with fewer elements would look
// fast without errors. redis-benchmark's LPUSH has just added -n elements to
// mylist, at least 1000 (suiteFloor), so each LRANGE_N must return N.
func checkLRange(ctx context.Context, addr string, live []SuiteTest) []suiteFail {
	var fails []suiteFail
	var c *respConn
	for _, t := range live {
		num, ok := strings.CutPrefix(t.Select, "lrange_")
		if !ok || t.Command != "lrange" {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		if c == nil {
			if c, err = dialRESP(ctx, addr); err != nil {
				return []suiteFail{{t.Name, "checking LRANGE's replies: " + err.Error()}}
			}
			defer c.Close()
		}
		rp, err := c.do("LRANGE", "mylist", "0", strconv.Itoa(n-1))
		switch {
		case err != nil:
			fails = append(fails, suiteFail{t.Name, fmt.Sprintf("LRANGE mylist 0 %d after the run: %v", n-1, err)})
		case rp.Type != '*' || len(rp.Elems) != n:
			fails = append(fails, suiteFail{t.Name, fmt.Sprintf("LRANGE mylist 0 %d after the run answered %d elements (reply type %q), want %d", n-1, len(rp.Elems), rp.Type, n)})
		}
	}
	return fails
}

// lineMark is the moment one line of redis-benchmark's output arrived.
type lineMark struct {
	line           string
	at             time.Time
	server, client time.Duration // CPU time used so far
	self           time.Duration // svcbench's own
	sys            proc.CPUTimes // the benchmark's CPUs, from /proc/stat
	sysOK          bool
}

// lineClock receives redis-benchmark's standard output as it is written
// and notes, for every line, the time and the CPU time the server and the
// client had used: with one CSV row per finished test, the differences
// between two rows are the later test's wall time and CPU time.
type lineClock struct {
	serverPid int
	benchCPUs []int // for OthersCPU: nil means every CPU
	clientPid atomic.Int64
	start     lineMark

	mu      sync.Mutex
	partial []byte
	marks   []lineMark
}

func newLineClock(serverPid int, benchCPUs []int) (*lineClock, error) {
	l := &lineClock{serverPid: serverPid, benchCPUs: benchCPUs}
	if _, err := proc.ReadCPU(serverPid); err != nil {
		return nil, err
	}
	l.start = l.read()
	return l, nil
}

func (l *lineClock) setClient(pid int) { l.clientPid.Store(int64(pid)) }

// read takes the readings of a mark, its line aside.
func (l *lineClock) read() lineMark {
	m := lineMark{at: time.Now(), self: selfCPU()}
	sys, err := proc.ReadCPUTimes(l.benchCPUs)
	m.sys, m.sysOK = sys, err == nil
	if cpu, err := proc.ReadCPU(l.serverPid); err == nil {
		m.server = cpu.Total()
	}
	if pid := l.clientPid.Load(); pid > 0 {
		if cpu, err := proc.ReadCPU(int(pid)); err == nil {
			m.client = cpu.Total()
		}
	}
	return m
}

func (l *lineClock) Write(p []byte) (int, error) {
	m := l.read()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		m.line = string(l.partial[:i])
		l.marks = append(l.marks, m)
		l.partial = l.partial[i+1:]
	}
}

// samples turns rows into samples of n requests each. With timed lines
// (lineBuffered, and the rows did arrive over the run rather than at its
// end), each test's wall and CPU times are the differences between its row
// and the line before (the CSV header for the first test); otherwise the
// wall time is n/rps and CPU times are unknown (0).
func (l *lineClock) samples(rows []namedRow, n int, lineBuffered bool) map[string]Sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return splitMarks(l.start, l.marks, rows, n, lineBuffered)
}

func splitMarks(start lineMark, marks []lineMark, rows []namedRow, n int, lineBuffered bool) map[string]Sample {
	out := make(map[string]Sample, len(rows))
	at := make([]lineMark, len(rows))
	timed := lineBuffered && len(rows) > 0
	prev := start
	header := slices.IndexFunc(marks, func(m lineMark) bool { return strings.HasPrefix(m.line, `"test",`) })
	if header >= 0 {
		prev = marks[header]
	}
	for i, row := range rows {
		j := slices.IndexFunc(marks, func(m lineMark) bool { return strings.HasPrefix(m.line, `"`+row.Name+`",`) })
		if j < 0 {
			timed = false
			break
		}
		at[i] = marks[j]
	}
	if timed {
		// Rows that arrived together, at exit, took no time: the output was
		// not line-buffered after all. Measured from the header, or else
		// from the first row, the rows must have taken at least half the
		// time their rates say they did.
		from, first := prev, 0
		if header < 0 {
			from, first = at[0], 1
		}
		var expected float64
		for _, row := range rows[first:] {
			expected += float64(n) / row.OpsPerSec
		}
		measured := at[len(rows)-1].at.Sub(from.at).Seconds()
		timed = expected > 0 && measured >= expected/2
	}
	for i, row := range rows {
		s := Sample{OpsPerSec: row.OpsPerSec, P50Ms: row.P50Ms, P99Ms: row.P99Ms, Requests: uint64(n)}
		if timed {
			s.WallSec = at[i].at.Sub(prev.at).Seconds()
			s.ServerCPU = (at[i].server - prev.server).Seconds()
			if at[i].client > 0 {
				s.ClientCPU = (at[i].client - prev.client).Seconds()
			}
			s.CPUUsPerReq = s.ServerCPU * 1e6 / float64(n)
			if at[i].sysOK && prev.sysOK && at[i].client > 0 {
				d := at[i].sys.Sub(prev.sys)
				s.OthersCPU = max(d.Busy+d.Steal-(at[i].server-prev.server)-(at[i].client-prev.client)-(at[i].self-prev.self), 0).Seconds()
			}
			prev = at[i]
		} else {
			s.WallSec = float64(n) / row.OpsPerSec
		}
		out[row.Name] = s
	}
	return out
}
