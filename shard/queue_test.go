package shard

import (
	"sync"
	"testing"
)

func TestQueueFIFOAndBound(t *testing.T) {
	q := newQueue(4)
	bs := make([]*Batch, 5)
	for i := range bs {
		bs[i] = &Batch{}
	}
	for i := 0; i < 4; i++ {
		if !q.push(bs[i]) {
			t.Fatalf("push %d refused on a queue of 4", i)
		}
	}
	if q.push(bs[4]) {
		t.Fatal("push accepted past capacity")
	}
	if d := q.depth(); d != 4 {
		t.Fatalf("depth %d; want 4", d)
	}
	for i := 0; i < 4; i++ {
		if !q.ready() {
			t.Fatalf("not ready with %d queued", 4-i)
		}
		if got := q.pop(); got != bs[i] {
			t.Fatalf("pop %d returned the wrong batch", i)
		}
	}
	if q.pop() != nil || q.ready() {
		t.Fatal("empty queue returned a batch")
	}
	if !q.push(bs[4]) || q.pop() != bs[4] {
		t.Fatal("queue did not wrap around")
	}
}

// TestQueueManyProducers pushes from several goroutines while one consumer
// pops: every batch arrives exactly once, and each producer's batches arrive
// in the order it pushed them.
func TestQueueManyProducers(t *testing.T) {
	const producers, per = 4, 20000
	q := newQueue(64)
	type tag struct{ p, i int }
	tags := map[*Batch]tag{}
	batches := make([][]*Batch, producers)
	for p := range batches {
		for i := 0; i < per; i++ {
			b := &Batch{}
			batches[p] = append(batches[p], b)
			tags[b] = tag{p, i}
		}
	}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, b := range batches[p] {
				for !q.push(b) {
				}
			}
		}()
	}
	next := make([]int, producers)
	for got := 0; got < producers*per; {
		b := q.pop()
		if b == nil {
			continue
		}
		tg := tags[b]
		if tg.i != next[tg.p] {
			t.Fatalf("producer %d: got batch %d; want %d", tg.p, tg.i, next[tg.p])
		}
		next[tg.p]++
		got++
	}
	wg.Wait()
	if q.pop() != nil {
		t.Fatal("extra batch")
	}
}

// TestQueueCapacityOne: a capacity of 1 still refuses a second push before a
// pop (the ring has at least two cells and never overwrites a waiting batch).
func TestQueueCapacityOne(t *testing.T) {
	q := newQueue(1)
	a, b := new(Batch), new(Batch)
	if !q.push(a) || !q.push(b) {
		t.Fatal("a ring of two cells refused a second batch")
	}
	if q.push(new(Batch)) {
		t.Fatal("push into a full queue succeeded")
	}
	if q.pop() != a || q.pop() != b || q.pop() != nil {
		t.Fatal("batches lost or reordered")
	}
}
