package shard

import (
	"slices"
	"sync"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// Control messages. Some of a shard's state may only be read by its owner
// (the index maps, the expiry index; later the slowlog ring and key counts by
// type). A reader outside the shard asks for it with a control message: a
// Batch whose control function the owner runs at its next turn, in queue
// order, through the same bounded queue as commands. The reader waits with a
// deadline; a shard that misses it is reported as late, never as zeros.
//
// A late answer still runs, later, when the owner gets to it. It writes only
// into a channel allocated for that one call (Inspect is not a hot path), so
// it can never touch memory a caller has moved on to reuse.

// ShardReport is what a shard's owner says about it in answer to Inspect.
// When Late is true the owner did not answer in time: ID and QueueDepth are
// real (read from outside), every other field is zero and means "unknown",
// so it must be shown as such (null), never as a count.
type ShardReport struct {
	ID   int
	Late bool // no answer within the deadline

	// Read by the owner.
	Keys       [keyspace.NumDatabases]int64 // entries in each database's index (keys not yet lazily expired included, as DBSIZE)
	Expires    [keyspace.NumDatabases]int64 // keys with a time to live, per database
	MemoryUsed int64                        // approximate bytes held by keys and values

	// QueueDepth is the number of batches waiting: seen by the owner behind
	// the control message when it answered, read from outside when Late.
	QueueDepth int
	// Answer is how long the shard took to answer (push to reply); the
	// deadline when Late.
	Answer time.Duration
}

// TotalKeys is the shard's key count across all databases.
func (r *ShardReport) TotalKeys() int64 { return sumDBs(&r.Keys) }

// TotalExpires is the shard's count of keys with a time to live, across all
// databases.
func (r *ShardReport) TotalExpires() int64 { return sumDBs(&r.Expires) }

// inspect reads what only the owner may read.
// REQUIRES: the caller holds s's token.
func (s *Shard) inspect() ShardReport {
	r := ShardReport{ID: s.id, QueueDepth: s.queue.depth()}
	r.Keys, r.Expires, r.MemoryUsed = s.store.Sizes()
	return r
}

// Inspect asks every shard's owner for a ShardReport with one control
// message each and waits at most deadline for the answers; shards that do not
// answer in time come back with Late set. The result is indexed by shard.
//
// Under RunToCompletion the caller, after queueing a shard's message, tries
// to take its token and drain the queue itself (as Submit does), so an idle
// shard answers at once and a busy one answers when its holder lets go;
// under Dedicated the shard's goroutine answers.
//
// A shard whose queue is full is offered its message again every
// millisecond until the deadline. Inspect returns after about deadline at
// most, plus, under RunToCompletion, the time to execute what was queued
// ahead of a message when it drains a shard itself. REQUIRES: the caller
// holds no shard token (a shard it holds could never answer).
func (rt *Runtime) Inspect(deadline time.Duration) []ShardReport {
	start := time.Now()
	until := start.Add(deadline)
	n := len(rt.shards)
	// Buffered for every shard: an answer never blocks its shard, and one
	// that comes after the deadline lands here, where nobody looks any more.
	replies := make(chan ShardReport, n)
	answer := func(s *Shard) {
		r := s.inspect()
		r.Answer = time.Since(start)
		replies <- r
	}
	out := make([]ShardReport, n)
	msgs := make([]*Batch, n)
	var full []int // shards whose queue had no room yet
	asked := 0
	for i, s := range rt.shards {
		out[i] = ShardReport{ID: i, Late: true}
		msgs[i] = &Batch{shard: i, control: answer}
		if rt.offer(s, msgs[i]) {
			asked++
		} else {
			full = append(full, i)
		}
	}
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	// A full queue is retried every millisecond while waiting, so one
	// congested shard cannot use up the others' time.
	var retry <-chan time.Time
	if len(full) > 0 {
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		retry = tk.C
	}
wait:
	for got := 0; got < asked || len(full) > 0; {
		select {
		case r := <-replies:
			out[r.ID] = r
			got++
		case <-retry:
			full = slices.DeleteFunc(full, func(i int) bool {
				if rt.offer(rt.shards[i], msgs[i]) {
					asked++
					return true
				}
				return false
			})
		case <-timer.C:
			break wait
		}
	}
	for i := range out {
		if out[i].Late {
			out[i].QueueDepth = rt.shards[i].queue.depth()
			out[i].Answer = deadline
		}
	}
	return out
}

// offer queues the control message b for s and gets it executed: it drains
// s itself when it can take the token (run-to-completion, as Submit), else
// leaves it to the holder or wakes the shard's goroutine. It reports false,
// without waiting, when the queue has no room.
func (rt *Runtime) offer(s *Shard, b *Batch) bool {
	if !s.queue.push(b) {
		// Full: help drain if we can, then try once more.
		if rt.strategy == Dedicated {
			s.signal()
			return false
		}
		if !s.tryAcquire() {
			return false
		}
		rt.release(s)
		if !s.queue.push(b) {
			return false
		}
	}
	if rt.strategy == Dedicated {
		s.signal()
	} else if s.tryAcquire() {
		rt.release(s)
	}
	return true
}

// HoldShard takes shard idx's token and keeps it until release is called:
// nothing executes on that shard meanwhile, commands and control messages for
// it wait in its queue, and release drains them. It exists for tests and
// fault drills, to make a shard that misses Inspect's deadline on purpose.
// Never call it from an event loop; release may be called more than once.
func (rt *Runtime) HoldShard(idx int) (release func()) {
	s := rt.shards[idx]
	rt.acquire(s)
	var once sync.Once
	return func() { once.Do(func() { rt.release(s) }) }
}
