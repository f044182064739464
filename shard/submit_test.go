package shard

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
)

// Submit queues b, retrying while its shard's queue is full: a test
// producer's TrySubmit. Tests produce from plain goroutines, where yielding
// costs nothing; an event loop parks its connection instead (netloop).
func (rt *Runtime) Submit(b *Batch) {
	for !rt.TrySubmit(b) {
		runtime.Gosched()
	}
}

// TestTrySubmitFullQueue: a full queue refuses a batch without waiting, and
// the owner of the refused batch is woken once the shard has taken a batch
// out, after which its retry is accepted and completes.
func TestTrySubmitFullQueue(t *testing.T) {
	for _, st := range []Strategy{RunToCompletion, Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			table := command.New()
			rt, err := New(Config{Shards: 1, QueueCap: 2, Strategy: st}, table)
			if err != nil {
				t.Fatal(err)
			}
			rt.Start()
			defer rt.Close()
			incr := table.Lookup([]byte("incr"))
			release := rt.HoldShard(0)
			defer release()
			batches := make([]*Batch, 3)
			wakes := make([]chan struct{}, 3)
			for i := range batches {
				wakes[i] = make(chan struct{}, 8)
				b := &Batch{Owner: waiter(wakes[i])}
				b.Reset()
				b.Target(0)
				b.Add(incr, [][]byte{[]byte("incr"), []byte("n")})
				batches[i] = b
			}
			for i := range 2 {
				if !rt.TrySubmit(batches[i]) {
					t.Fatalf("batch %d refused by a queue with room", i)
				}
			}
			if rt.TrySubmit(batches[2]) {
				t.Fatal("a full queue accepted a third batch")
			}
			release()
			select {
			case <-wakes[2]:
			case <-time.After(10 * time.Second):
				t.Fatal("the refused batch's owner was never told of room")
			}
			if !rt.TrySubmit(batches[2]) {
				t.Fatal("retry refused after the shard made room")
			}
			for i, b := range batches {
				deadline := time.Now().Add(10 * time.Second)
				for !b.Done() {
					if time.Now().After(deadline) {
						t.Fatalf("batch %d never completed", i)
					}
					<-wakes[i]
				}
				if want := fmt.Sprintf(":%d\r\n", i+1); string(b.Out) != want {
					t.Fatalf("batch %d replied %q, want %q", i, b.Out, want)
				}
			}
		})
	}
}
