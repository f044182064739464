package shard

import (
	"sync"
	"sync/atomic"
)

// queue is a bounded lock-free multi-producer single-consumer FIFO of batches
// (Vyukov's bounded ring with per-cell sequence numbers). Producers are event
// loops; the consumer is whoever holds the shard's drain token, so pop is only
// ever called by one goroutine at a time.
type queue struct {
	_     [64]byte
	tail  atomic.Uint64 // next slot producers claim
	_     [56]byte
	head  atomic.Uint64 // next slot the consumer reads; written only by the token holder
	_     [56]byte
	mask  uint64
	cells []cell

	// Producers refused by a full queue (Runtime.TrySubmit) wait here for
	// room; roomWanted is set while any does, so the consumer's check after
	// a batch is one atomic load.
	roomMu     sync.Mutex
	roomWait   []*Batch
	roomWanted atomic.Bool
}

type cell struct {
	seq   atomic.Uint64
	batch atomic.Pointer[Batch]
}

func newQueue(capacity int) *queue {
	// At least 2 cells: with one, a published cell's sequence (pos+1) equals
	// the next position's expected free sequence, so a second push would
	// overwrite a batch nobody has popped yet.
	n := 2
	for n < capacity {
		n <<= 1
	}
	q := &queue{mask: uint64(n - 1), cells: make([]cell, n)}
	for i := range q.cells {
		q.cells[i].seq.Store(uint64(i))
	}
	return q
}

// push appends b; it reports false when the queue is full (the producer then
// keeps the batch, waits for room with waitRoom, and retries).
func (q *queue) push(b *Batch) bool {
	for {
		pos := q.tail.Load()
		c := &q.cells[pos&q.mask]
		seq := c.seq.Load()
		switch {
		case seq == pos:
			if q.tail.CompareAndSwap(pos, pos+1) {
				c.batch.Store(b)
				c.seq.Store(pos + 1)
				return true
			}
		case seq < pos:
			return false // full
		}
	}
}

// pop removes the oldest batch, or returns nil when empty (or when a producer
// has claimed the next cell but not yet published it; the producer's own
// token attempt after publishing makes sure the batch is drained).
// REQUIRES: the caller holds the shard's drain token.
func (q *queue) pop() *Batch {
	pos := q.head.Load()
	c := &q.cells[pos&q.mask]
	if c.seq.Load() != pos+1 {
		return nil
	}
	b := c.batch.Load()
	c.batch.Store(nil)
	c.seq.Store(pos + q.mask + 1)
	q.head.Store(pos + 1)
	if q.roomWanted.Load() { // a producer waits for room (Runtime.TrySubmit)
		q.wakeRoom()
	}
	return b
}

// ready reports whether pop would return a batch now. A releasing token holder
// re-checks it after letting go: a producer that published while the token was
// held and failed to take it relies on that re-check (and a producer that has
// claimed a cell but not yet published tries the token itself afterwards).
func (q *queue) ready() bool {
	pos := q.head.Load()
	return q.cells[pos&q.mask].seq.Load() == pos+1
}

// depth is the number of batches waiting (for diagnostics; racy by nature).
func (q *queue) depth() int { return int(q.tail.Load() - q.head.Load()) }

// waitRoom records that b's owner wants to be told (Completer.BatchDone)
// once the consumer has taken a batch out of the queue (pop). The producer calls it
// before its last push attempt, so a consumer that pops after that attempt
// failed finds roomWanted set: no wake-up is lost.
func (q *queue) waitRoom(b *Batch) {
	q.roomMu.Lock()
	q.roomWait = append(q.roomWait, b)
	q.roomWanted.Store(true)
	q.roomMu.Unlock()
}

// wakeRoom tells every producer waiting for room that there may be some. A
// woken producer may find the queue full again (another took the room) and
// waits anew; one woken after its retry succeeded ignores the call.
func (q *queue) wakeRoom() {
	q.roomMu.Lock()
	waiting := q.roomWait
	q.roomWait = nil // a full queue is rare: a fresh slice, no reuse to reason about
	q.roomWanted.Store(false)
	q.roomMu.Unlock()
	for _, b := range waiting {
		b.Owner.BatchDone()
	}
}
