package cmdstats

import "sync/atomic"

// Recorder holds one writer's statistics. INVARIANT: only its owner (one
// event loop) calls the recording methods, so each counter is updated with a
// plain load and store (no read-modify-write instruction); other goroutines
// only load.
type Recorder struct {
	cmds   []atomic.Pointer[commandStats] // by command ID, allocated on first use
	errors [numErrorCodes]atomic.Int64
	// exec is the execution-only histogram of every command together
	// (CallAfterWait): one per recorder, not per command, so recording it
	// touches one more counter per call.
	exec [NumBuckets]atomic.Int64
}

type commandStats struct {
	calls    atomic.Int64
	rejected atomic.Int64
	failed   atomic.Int64
	totalNs  atomic.Int64
	execNs   atomic.Int64 // the part of totalNs spent executing (CallAfterWait)
	maxNs    atomic.Int64
	buckets  [NumBuckets]atomic.Int64
}

func bump(a *atomic.Int64, n int64) { a.Store(a.Load() + n) }

func (r *Recorder) stats(id int) *commandStats {
	cs := r.cmds[id].Load()
	if cs == nil {
		cs = new(commandStats) // once per command per recorder
		r.cmds[id].Store(cs)
	}
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
func (r *Recorder) CallAfterWait(id int, ns, exec int64) {
	cs := r.stats(id)
	bump(&cs.calls, 1)
	bump(&cs.totalNs, ns)
	bump(&cs.execNs, exec)
	if ns > cs.maxNs.Load() {
		cs.maxNs.Store(ns)
	}
	b := bucketOf(ns)
	bump(&cs.buckets[b], 1)
	if exec != ns {
		b = bucketOf(exec)
	}
	bump(&r.exec[b], 1)
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
