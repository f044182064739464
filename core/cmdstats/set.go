package cmdstats

import (
	"sync"
	"sync/atomic"
	"time"
)

// Set is the statistics of a whole server: one Recorder per writer, summed
// when read.
type Set struct {
	numCommands int
	mu          sync.Mutex // serializes NewRecorder and Reset, never held by a writer
	recorders   atomic.Pointer[[]*Recorder]
	base        atomic.Pointer[Snapshot] // subtracted by Snapshot: CONFIG RESETSTAT
}

// NewSet makes a set for command IDs in [0, numCommands).
func NewSet(numCommands int) *Set {
	s := &Set{numCommands: numCommands}
	s.recorders.Store(&[]*Recorder{})
	return s
}

// NewRecorder adds a recorder for one writer.
func (s *Set) NewRecorder() *Recorder {
	r := &Recorder{cmds: make([]atomic.Pointer[commandStats], s.numCommands)}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.recorders.Load()
	next := append(old[:len(old):len(old)], r)
	s.recorders.Store(&next)
	return r
}

// Command is one command's statistics since start or the last Reset.
type Command struct {
	Calls, Rejected, Failed int64
	// Total is the time from parse to reply, waits for the shard included;
	// Exec the part of it spent executing (Recorder.CallAfterWait).
	Total, Exec time.Duration
	// Max is the longest call since start (a maximum cannot be reset
	// without the writers; it is not part of Redis' INFO fields).
	Max     time.Duration
	Latency Histogram
}

// Snapshot is the Set's statistics at one moment.
type Snapshot struct {
	// Commands is indexed by command ID; nil for commands never called.
	Commands []*Command
	// Errors counts error replies by code, in the order of ErrorCodes.
	Errors [numErrorCodes]int64
	// Exec is the execution-only histogram of every command together:
	// Latency without the time spent waiting for a shard.
	Exec Histogram
}

// Snapshot sums every recorder, minus the baseline of the last Reset.
func (s *Set) Snapshot() *Snapshot {
	snap := s.raw()
	if base := s.base.Load(); base != nil {
		snap.subtract(base)
	}
	return snap
}

func (s *Set) raw() *Snapshot {
	snap := &Snapshot{Commands: make([]*Command, s.numCommands)}
	for _, r := range *s.recorders.Load() {
		// execAdjust first: see CallAfterWait.
		for i := range r.execAdjust {
			n := r.execAdjust[i].Load()
			snap.Exec.Buckets[i] += n
			snap.Exec.Count += n
		}
		for id := range r.cmds {
			cs := r.cmds[id].Load()
			if cs == nil {
				continue
			}
			c := snap.Commands[id]
			if c == nil {
				c = new(Command)
				snap.Commands[id] = c
			}
			c.Rejected += cs.rejected.Load()
			c.Failed += cs.failed.Load()
			wait := cs.waitNs.Load() // before totalNs, which CallAfterWait stores first: exec >= 0
			total := cs.totalNs.Load()
			c.Total += time.Duration(total)
			c.Exec += time.Duration(total - wait)
			c.Max = max(c.Max, time.Duration(cs.maxNs.Load()))
			for i := range cs.buckets {
				n := cs.buckets[i].Load()
				c.Calls += n
				c.Latency.Buckets[i] += n
				c.Latency.Count += n
				snap.Exec.Buckets[i] += n
				snap.Exec.Count += n
			}
		}
		for i := range r.errors {
			snap.Errors[i] += r.errors[i].Load()
		}
	}
	return snap
}

func (snap *Snapshot) subtract(base *Snapshot) {
	for id, b := range base.Commands {
		c := snap.Commands[id]
		if b == nil || c == nil {
			continue
		}
		c.Calls -= b.Calls
		c.Rejected -= b.Rejected
		c.Failed -= b.Failed
		c.Total -= b.Total
		c.Exec -= b.Exec
		for i := range c.Latency.Buckets {
			c.Latency.Buckets[i] -= b.Latency.Buckets[i]
		}
		c.Latency.Count -= b.Latency.Count
		if c.Calls == 0 && c.Rejected == 0 && c.Failed == 0 {
			snap.Commands[id] = nil // as Redis after RESETSTAT: not listed until called again
		}
	}
	for i := range snap.Errors {
		snap.Errors[i] -= base.Errors[i]
	}
	for i := range snap.Exec.Buckets {
		snap.Exec.Buckets[i] -= base.Exec.Buckets[i]
	}
	snap.Exec.Count -= base.Exec.Count
}

// Reset makes later snapshots count from now (CONFIG RESETSTAT). The
// counters themselves belong to their writers and are never written here.
func (s *Set) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base.Store(s.raw())
}

// CallCounts stores in dst[id] the executed calls of every command ID since
// start, growing dst to the number of command IDs, and returns it. It reads
// one histogram per command and recorder (its calls) and allocates nothing
// once dst is large enough: cheap enough for a once-per-second rate sampler.
// Unlike Snapshot it ignores Reset (CONFIG RESETSTAT), so the counts never go
// back and differences between two calls are always rates.
func (s *Set) CallCounts(dst []int64) []int64 {
	if cap(dst) < s.numCommands {
		dst = make([]int64, s.numCommands)
	}
	dst = dst[:s.numCommands]
	clear(dst)
	for _, r := range *s.recorders.Load() {
		for id := range r.cmds {
			if cs := r.cmds[id].Load(); cs != nil {
				dst[id] += cs.calls()
			}
		}
	}
	return dst
}

// Total sums every command's latency histogram and counters.
func (snap *Snapshot) Total() Command {
	var t Command
	for _, c := range snap.Commands {
		if c == nil {
			continue
		}
		t.Calls += c.Calls
		t.Rejected += c.Rejected
		t.Failed += c.Failed
		t.Total += c.Total
		t.Exec += c.Exec
		t.Max = max(t.Max, c.Max)
		t.Latency.add(&c.Latency)
	}
	return t
}

// ErrorTotal is the number of error replies of every code.
func (snap *Snapshot) ErrorTotal() int64 {
	var n int64
	for _, e := range snap.Errors {
		n += e
	}
	return n
}
