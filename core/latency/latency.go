package latency

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HistoryLen is the number of samples kept per event (LATENCY_TS_LEN).
const HistoryLen = 160

// Sample is one second's worst latency of an event.
type Sample struct {
	Time   time.Time // the second it was recorded (whole seconds)
	Millis int64     // latency in milliseconds
}

// EventLatest is one line of LATENCY LATEST.
type EventLatest struct {
	Event        string
	Time         time.Time // of the latest sample
	LatestMillis int64     // latency of the latest sample
	MaxMillis    int64     // all-time maximum since the event was created or reset
}

// series is Redis' latencyTimeSeries.
type series struct {
	idx     int // next sample to write
	max     int64
	samples [HistoryLen]struct {
		time    int64 // unix seconds; 0: empty
		latency int64 // ms
	}
}

// Env is what DOCTOR needs to know about the rest of the server.
type Env struct {
	// SlowlogSlowerThan is slowlog-log-slower-than; negative: disabled.
	SlowlogSlowerThan time.Duration
	Hz                int  // the hz parameter
	AppendFsyncAlways bool // appendfsync is "always"
	// ForkRateGBps is Redis' stat_fork_rate, shown with a "fork" event.
	ForkRateGBps float64
}

// Monitor is the set of latency time series. All methods are safe for
// concurrent use.
type Monitor struct {
	threshold atomic.Int64 // ms; 0: off
	env       atomic.Pointer[func() Env]

	mu     sync.Mutex
	events map[string]*series

	now func() time.Time // time.Now; tests replace it
	// anonHugePages reports the process's AnonHugePages in bytes (DOCTOR's
	// THP advice); tests replace it.
	anonHugePages func() int64
}

// New returns a monitor recording events at least threshold long
// (latency-monitor-threshold, whole milliseconds; 0 = off).
func New(threshold time.Duration) *Monitor {
	m := &Monitor{events: map[string]*series{}, now: time.Now, anonHugePages: anonHugePagesBytes}
	m.SetThreshold(threshold)
	return m
}

// SetThreshold changes the threshold; 0 (or anything under a millisecond)
// turns recording off.
func (m *Monitor) SetThreshold(d time.Duration) {
	m.threshold.Store(max(d.Milliseconds(), 0))
}

// Threshold returns the threshold (0: off).
func (m *Monitor) Threshold() time.Duration {
	return time.Duration(m.threshold.Load()) * time.Millisecond
}

// Enabled reports whether the monitor records anything: one atomic load.
// Callers use it to skip measuring a duration at all, as Redis'
// latencyStartMonitor does.
func (m *Monitor) Enabled() bool { return m.threshold.Load() != 0 }

// SetEnv gives DOCTOR access to the server's settings; f is called on every
// Doctor and must be safe to call from any goroutine.
func (m *Monitor) SetEnv(f func() Env) { m.env.Store(&f) }

// AddIfNeeded records d for event when the monitor is on and d (in whole
// milliseconds, truncated as Redis' mstime difference) reaches the
// threshold, as Redis' latencyAddSampleIfNeeded. Below the threshold it is
// one atomic load and a compare, without allocating.
func (m *Monitor) AddIfNeeded(event string, d time.Duration) {
	t := m.threshold.Load()
	if t == 0 {
		return
	}
	ms := d.Milliseconds()
	if ms < t {
		return
	}
	m.add(event, ms)
}

// add is Redis' latencyAddSample.
func (m *Monitor) add(event string, ms int64) {
	now := m.now().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		ts = &series{}
		m.events[strings.Clone(event)] = ts
	}
	ts.max = max(ts.max, ms)
	// A sample already taken this second keeps the larger latency.
	prev := &ts.samples[(ts.idx+HistoryLen-1)%HistoryLen]
	if prev.time == now {
		prev.latency = max(prev.latency, ms)
		return
	}
	s := &ts.samples[ts.idx]
	s.time, s.latency = now, ms
	ts.idx = (ts.idx + 1) % HistoryLen
}

// names returns the event names, sorted. Caller holds mu.
func (m *Monitor) names() []string {
	out := make([]string, 0, len(m.events))
	for name := range m.events {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Latest returns, per event sorted by name, the latest sample and the
// all-time maximum (LATENCY LATEST).
func (m *Monitor) Latest() []EventLatest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]EventLatest, 0, len(m.events))
	for _, name := range m.names() {
		ts := m.events[name]
		last := ts.samples[(ts.idx+HistoryLen-1)%HistoryLen]
		out = append(out, EventLatest{
			Event:        name,
			Time:         time.Unix(last.time, 0),
			LatestMillis: last.latency,
			MaxMillis:    ts.max,
		})
	}
	return out
}

// History returns the samples of event, oldest first (LATENCY HISTORY);
// nil when the event has none. The name is matched exactly, as Redis' dict
// lookup.
func (m *Monitor) History(event string) []Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		return nil
	}
	return ts.history()
}

// history lists the samples oldest first. Caller holds the monitor's mu.
func (ts *series) history() []Sample {
	var out []Sample
	for j := range HistoryLen {
		s := ts.samples[(ts.idx+j)%HistoryLen]
		if s.time == 0 {
			continue
		}
		out = append(out, Sample{Time: time.Unix(s.time, 0), Millis: s.latency})
	}
	return out
}

// Reset deletes the data of the named events, or of every event when none
// is named, and returns how many were deleted (LATENCY RESET). Names are
// matched ASCII case-insensitively, as Redis' latencyResetEvent does.
func (m *Monitor) Reset(events ...string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(events) == 0 {
		n := len(m.events)
		clear(m.events)
		return n
	}
	resets := 0
	for _, want := range events {
		for name := range m.events {
			if equalFold(name, want) {
				delete(m.events, name)
				resets++
			}
		}
	}
	return resets
}

// Len returns the number of events with data.
func (m *Monitor) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events)
}
