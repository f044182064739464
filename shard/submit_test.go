package shard

import "runtime"

// Submit queues b, retrying while its shard's queue is full: a test
// producer's TrySubmit. Tests produce from plain goroutines, where yielding
// costs nothing; an event loop parks its connection instead (netloop).
func (rt *Runtime) Submit(b *Batch) {
	for !rt.TrySubmit(b) {
		runtime.Gosched()
	}
}
