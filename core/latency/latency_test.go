package latency

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source for the monitor.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *clock) advance(d time.Duration) { c.set(c.now().Add(d)) }

var base = time.Unix(1700000000, 0)

func newTestMonitor(threshold time.Duration) (*Monitor, *clock) {
	m := New(threshold)
	c := &clock{t: base}
	m.now = c.now
	m.anonHugePages = func() int64 { return 0 }
	return m, c
}

func TestThreshold(t *testing.T) {
	m, _ := newTestMonitor(0)
	if m.Enabled() {
		t.Error("threshold 0 is enabled")
	}
	m.AddIfNeeded("command", time.Hour)
	if m.Len() != 0 {
		t.Fatal("recorded while off")
	}
	m.SetThreshold(10 * time.Millisecond)
	if !m.Enabled() || m.Threshold() != 10*time.Millisecond {
		t.Fatalf("SetThreshold: enabled %v, %v", m.Enabled(), m.Threshold())
	}
	m.AddIfNeeded("command", 10*time.Millisecond-time.Nanosecond) // 9 ms once truncated
	if m.Len() != 0 {
		t.Fatal("recorded below the threshold")
	}
	m.AddIfNeeded("command", 10*time.Millisecond+999*time.Microsecond)
	if h := m.History("command"); len(h) != 1 || h[0].Millis != 10 || !h[0].Time.Equal(base) {
		t.Fatalf("History = %+v, want one 10 ms sample (whole ms, truncated)", h)
	}
	m.SetThreshold(500 * time.Microsecond) // under 1 ms: off, as latency-monitor-threshold 0
	if m.Enabled() {
		t.Error("sub-millisecond threshold is enabled")
	}
}

func TestAddIfNeededAllocs(t *testing.T) {
	m, _ := newTestMonitor(100 * time.Millisecond)
	if n := testing.AllocsPerRun(100, func() { m.AddIfNeeded("command", time.Millisecond) }); n != 0 {
		t.Errorf("below threshold: %v allocs", n)
	}
	m.SetThreshold(0)
	if n := testing.AllocsPerRun(100, func() { m.AddIfNeeded("command", time.Hour) }); n != 0 {
		t.Errorf("off: %v allocs", n)
	}
}

func TestSamplesPerSecond(t *testing.T) {
	m, c := newTestMonitor(time.Millisecond)
	m.AddIfNeeded("command", 5*time.Millisecond)
	m.AddIfNeeded("command", 3*time.Millisecond) // same second, smaller: ignored
	m.AddIfNeeded("command", 8*time.Millisecond) // same second, larger: replaces
	c.advance(time.Second)
	m.AddIfNeeded("command", 2*time.Millisecond)
	h := m.History("command")
	if len(h) != 2 || h[0].Millis != 8 || h[1].Millis != 2 || h[1].Time.Unix() != base.Unix()+1 {
		t.Fatalf("History = %+v", h)
	}
	l := m.Latest()
	if len(l) != 1 || l[0].Event != "command" || l[0].LatestMillis != 2 || l[0].MaxMillis != 8 || l[0].Time.Unix() != base.Unix()+1 {
		t.Fatalf("Latest = %+v", l)
	}
}

func TestHistoryWraps(t *testing.T) {
	m, c := newTestMonitor(time.Millisecond)
	for i := range HistoryLen + 40 {
		m.AddIfNeeded("expire-cycle", time.Duration(i+1)*time.Millisecond)
		c.advance(time.Second)
	}
	h := m.History("expire-cycle")
	if len(h) != HistoryLen {
		t.Fatalf("%d samples, want %d", len(h), HistoryLen)
	}
	if h[0].Millis != 41 || h[HistoryLen-1].Millis != HistoryLen+40 {
		t.Errorf("oldest %d, newest %d; want 41 and %d", h[0].Millis, h[HistoryLen-1].Millis, HistoryLen+40)
	}
	for i := 1; i < len(h); i++ {
		if !h[i].Time.After(h[i-1].Time) {
			t.Fatalf("not oldest first at %d", i)
		}
	}
	if l := m.Latest(); l[0].MaxMillis != HistoryLen+40 || l[0].LatestMillis != HistoryLen+40 {
		t.Errorf("Latest = %+v", l)
	}
}

func TestLatestSortedAndReset(t *testing.T) {
	m, _ := newTestMonitor(time.Millisecond)
	for _, e := range []string{"fast-command", "command", "expire-cycle", "Command"} {
		m.AddIfNeeded(e, 2*time.Millisecond)
	}
	var names []string
	for _, l := range m.Latest() {
		names = append(names, l.Event)
	}
	if got := strings.Join(names, " "); got != "Command command expire-cycle fast-command" {
		t.Errorf("Latest order: %s", got)
	}
	if m.History("COMMAND") != nil {
		t.Error("History matches names case-insensitively; Redis' dict lookup is exact")
	}
	// RESET matches case-insensitively (strcasecmp): "command" removes both.
	if n := m.Reset("command", "command", "nope"); n != 2 {
		t.Errorf("Reset(command command nope) = %d, want 2", n)
	}
	if n := m.Reset(); n != 2 {
		t.Errorf("Reset() = %d, want 2", n)
	}
	if m.Len() != 0 || len(m.Latest()) != 0 {
		t.Error("not empty after Reset()")
	}
	if n := m.Reset(); n != 0 {
		t.Errorf("Reset() on empty = %d", n)
	}
}

func TestDoctorTexts(t *testing.T) {
	m, c := newTestMonitor(0)
	env := Env{SlowlogSlowerThan: 10 * time.Millisecond, Hz: 10}
	m.SetEnv(func() Env { return env })
	if got := m.Doctor(); !strings.HasPrefix(got, "I'm sorry, Dave, I can't do that.") {
		t.Errorf("off and empty: %q", got)
	}
	m.SetThreshold(time.Millisecond)
	want := "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
	if got := m.Doctor(); got != want {
		t.Errorf("on, no events: %q", got)
	}
	m.anonHugePages = func() int64 { return 2 << 20 }
	if got := m.Doctor(); !strings.HasPrefix(got, "\nI have a few advices for you:\n\n- I detected a non zero amount of anonymous huge pages") {
		t.Errorf("THP without events: %q", got)
	}
	m.anonHugePages = func() int64 { return 0 }

	// Two command samples, 40 and 20 ms, 4 s apart; reported 6 s after the
	// first: average 30, mean deviation 10, period 6/2 = 3.00 s.
	m.AddIfNeeded("command", 40*time.Millisecond)
	c.advance(4 * time.Second)
	m.AddIfNeeded("command", 20*time.Millisecond)
	c.advance(2 * time.Second)
	got := m.Doctor()
	wantCmd := "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n" +
		"1. command: 2 latency spikes (average 30ms, mean deviation 10ms, period 3.00 sec). Worst all time event 40ms.\n" +
		"\nI have a few advices for you:\n\n" +
		"- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 1000'.\n" +
		"- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n" +
		"- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
	if got != wantCmd {
		t.Errorf("command report:\n got %q\nwant %q", got, wantCmd)
	}
	env.SlowlogSlowerThan = -1
	if got := m.Doctor(); !strings.Contains(got, "Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than 1000'.") {
		t.Errorf("slowlog disabled: %q", got)
	}
	env.SlowlogSlowerThan = 0
	if got := m.Doctor(); strings.Contains(got, "CONFIG SET slowlog-log-slower-than") {
		t.Errorf("slowlog logs everything, no slowlog advice expected: %q", got)
	}

	// Events without advice of their own.
	m.Reset()
	m.AddIfNeeded("snapshot", 5*time.Millisecond)
	if got := m.Doctor(); !strings.HasSuffix(got, "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n") {
		t.Errorf("no advice: %q", got)
	}

	// Numbering follows name order; hz advice only under 100; fsync advice
	// only with appendfsync always.
	m.Reset()
	for _, e := range []string{"expire-cycle", "aof-fsync-always", "fast-command", "eviction-cycle"} {
		m.AddIfNeeded(e, 5*time.Millisecond)
	}
	got = m.Doctor()
	for _, s := range []string{
		"1. aof-fsync-always: 1 latency spikes (average 5ms, mean deviation 0ms, period 1.00 sec). Worst all time event 5ms.\n2. eviction-cycle:",
		"4. fast-command:",
		"- The system is slow to execute Redis code paths",
		"'CONFIG SET hz 100'",
		"- Sudden changes to the 'maxmemory' setting",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("report lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "fsync policy is set to 'always'") {
		t.Error("fsync advice without appendfsync always")
	}
	env.Hz, env.AppendFsyncAlways = 100, true
	got = m.Doctor()
	if strings.Contains(got, "CONFIG SET hz 100") || !strings.Contains(got, "fsync policy is set to 'always'") {
		t.Errorf("hz 100 / appendfsync always:\n%s", got)
	}
}

func TestGraph(t *testing.T) {
	m, c := newTestMonitor(time.Millisecond)
	if _, ok := m.Graph("command"); ok {
		t.Fatal("graph of an unknown event")
	}
	m.AddIfNeeded("command", 34*time.Millisecond)
	g, ok := m.Graph("command")
	// Redis 7.0.15's reply for a single 34 ms sample taken this second.
	want := "command - high 34 ms, low 34 ms (all time high 34 ms)\n" + strings.Repeat("-", 80) + "\n \n \n \n_\n \n0\ns\n"
	if !ok || g != want {
		t.Errorf("one sample:\n got %q\nwant %q", g, want)
	}
	// Rising samples fill up; labels are vertical; more than 80 samples make
	// two blocks.
	m.Reset()
	for i := range 100 {
		m.AddIfNeeded("command", time.Duration(1+i%12)*time.Millisecond)
		c.advance(time.Second)
	}
	g, _ = m.Graph("command")
	lines := strings.Split(g, "\n")
	if lines[0] != "command - high 12 ms, low 1 ms (all time high 12 ms)" {
		t.Errorf("header %q", lines[0])
	}
	// Block 1: 4 graph rows, a blank row, 3 label rows: the oldest sample
	// is 100 s old ("1m"), the 80th 21 s ("21s").
	if len(lines[2]) != 80 || lines[2][11] != '#' || lines[5][0] != '_' {
		t.Errorf("graph rows:\n%s", strings.Join(lines[2:6], "\n"))
	}
	if strings.TrimSpace(lines[6]) != "" || lines[7][0] != '1' || lines[8][0] != 'm' || lines[9][0] != ' ' ||
		lines[7][79] != '2' || lines[8][79] != '1' || lines[9][79] != 's' || lines[10] != "" {
		t.Errorf("labels:\n%s", strings.Join(lines[6:11], "\n"))
	}
	if !strings.Contains(g, "\n\n") {
		t.Error("no second block")
	}
}

// Recording from many goroutines while others read: run with -race.
func TestConcurrent(t *testing.T) {
	m := New(time.Millisecond)
	m.anonHugePages = func() int64 { return 0 }
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				m.AddIfNeeded(fmt.Sprint("event-", w%3), time.Duration(i%20)*time.Millisecond)
			}
		}()
	}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				m.Latest()
				m.History("event-1")
				m.Doctor()
				m.Graph("event-2")
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 100 {
			m.Reset("event-0")
			m.SetThreshold(time.Duration(1+i%3) * time.Millisecond)
		}
	}()
	wg.Wait()
	for _, l := range m.Latest() {
		if l.MaxMillis > 19 || l.LatestMillis > l.MaxMillis {
			t.Errorf("%+v", l)
		}
	}
}
