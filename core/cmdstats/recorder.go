package cmdstats

import "sync/atomic"

// Recorder holds one writer's statistics. INVARIANT: only its owner (one
// event loop) calls the recording methods, so each counter is updated with a
// plain load and store (no read-modify-write instruction); other goroutines
// only load.
type Recorder struct {
	cmds   []atomic.Pointer[commandStats] // by command ID, allocated on first use
	errors [numErrorCodes]atomic.Int64
	// execAdjust makes the sum of the commands' latency histograms the
	// execution-only histogram of every command together: a call that
	// waited for its shard moves one count from its latency's bucket to
	// its execution's (CallAfterWait). A call that waited for nothing, the
	// common case, touches it not at all.
	execAdjust [NumBuckets]atomic.Int64
}

// commandStats are one command's counters. What can be derived is not
// stored: each store is an XCHG on amd64 (a locked instruction, about 5 ns,
// and a barrier), and CallAfterWait made five of them for every command,
// a few percent of a GET's CPU (docs/performance.md, "GET's last
// percent"). Calls are the sum of the buckets, execution time is totalNs
// less waitNs, and the execution histogram is the buckets' with the
// recorder's execAdjust.
type commandStats struct {
	rejected atomic.Int64
	failed   atomic.Int64
	totalNs  atomic.Int64
	waitNs   atomic.Int64 // the part of totalNs spent waiting for a shard (CallAfterWait)
	maxNs    atomic.Int64
	buckets  [NumBuckets]atomic.Int64 // one count per executed call
}

// calls is the number of executed calls: the sum of the buckets.
func (cs *commandStats) calls() int64 {
	var n int64
	for i := range cs.buckets {
		n += cs.buckets[i].Load()
	}
	return n
}

func bump(a *atomic.Int64, n int64) { a.Store(a.Load() + n) }

func (r *Recorder) stats(id int) *commandStats {
	if cs := r.cmds[id].Load(); cs != nil {
		return cs
	}
	return r.newStats(id)
}

// newStats allocates command id's counters, once per command per recorder.
func (r *Recorder) newStats(id int) *commandStats {
	cs := new(commandStats)
	r.cmds[id].Store(cs)
	return cs
}

// Call records one executed call of command id that took ns nanoseconds
// from its parse to its reply being ready, none of it spent waiting for a
// shard (inline and connection commands).
func (r *Recorder) Call(id int, ns int64) { r.CallAfterWait(id, ns, ns) }

// CallAfterWait records one executed call of command id that took ns
// nanoseconds from its parse to its reply being ready, of which exec were
// spent executing it; the rest waited for its shard (a queued batch). ns is
// what the latency figures report (INFO latencystats, LATENCY,
// svc_commands_duration_seconds); exec goes to the execution-only figures.
//
// Two stores for a call that waited for nothing (its bucket and totalNs).
// The bucket is stored before execAdjust, which readers load first (raw),
// so a reader never sees a bucket's count taken away before it was added.
//
// It loads the counters itself rather than through stats (which does not
// inline): one function less on every command's path.
func (r *Recorder) CallAfterWait(id int, ns, exec int64) {
	cs := r.cmds[id].Load()
	if cs == nil {
		cs = r.newStats(id)
	}
	b := bucketOf(ns)
	bump(&cs.buckets[b], 1)
	bump(&cs.totalNs, ns)
	if ns > cs.maxNs.Load() {
		cs.maxNs.Store(ns)
	}
	if exec != ns {
		bump(&cs.waitNs, ns-exec)
		if e := bucketOf(exec); e != b {
			bump(&r.execAdjust[e], 1)
			bump(&r.execAdjust[b], -1)
		}
	}
}

// Failed records that a call of id (already counted by Call) replied with an
// error while executing: Redis' failed_calls.
func (r *Recorder) Failed(id int) { bump(&r.stats(id).failed, 1) }

// Rejected records a call of id refused before it ran (wrong arity, not
// authenticated): Redis' rejected_calls. It is not counted by Call.
func (r *Recorder) Rejected(id int) { bump(&r.stats(id).rejected, 1) }

// ErrorReply counts an error reply by its code (the first word of the
// message, as INFO errorstats reports it). reply is the encoded reply,
// starting with '-'.
func (r *Recorder) ErrorReply(reply []byte) { bump(&r.errors[errorCode(reply)], 1) }
