package keyspace

import (
	"fmt"
	"testing"
	"time"
)

// TestRehashStepBudget: the expiry cycle's rehash step stops at the time it
// is given (after one step of 256 entries), so a cycle can share one
// millisecond among its shards (Runtime.expireLoop), and a later step with
// time to spare finishes the rehash with every key still found.
func TestRehashStepBudget(t *testing.T) {
	d := newDB()
	n := 0
	insert := func() {
		d.Insert(fmt.Appendf(nil, "k%d", n), KindString)
		n++
	}
	// Grow until a resize starts with far more than one step's entries to
	// move: inserts move 2 entries each, so the rehash is fresh.
	for n < 4096 || !d.index.Rehashing() {
		insert()
		if n > 1<<20 {
			t.Fatal("no rehash started")
		}
	}
	d.rehashStep(time.Now().UnixNano()) // already past: one step only
	if !d.index.Rehashing() {
		t.Fatalf("a step past its time finished the rehash of %d keys", n)
	}
	d.rehashStep(time.Now().Add(time.Minute).UnixNano())
	if d.index.Rehashing() {
		t.Fatalf("a step with a minute to spare left the rehash of %d keys unfinished", n)
	}
	if err := d.index.Verify(d.hashAt); err != nil {
		t.Fatalf("key index: %v", err)
	}
	for i := range n {
		if d.Lookup(fmt.Appendf(nil, "k%d", i), 0) == nil {
			t.Fatalf("k%d lost by the rehash", i)
		}
	}
}
