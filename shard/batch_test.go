package shard

import (
	"bytes"
	"testing"

	"github.com/svcdb/svcdb/core/command"
)

// TestBatchResetDropsLargeBuffers: a batch that carried a large command
// does not keep its copy for the connection's life, and an ordinary batch
// keeps its buffers (the steady state allocates nothing).
func TestBatchResetDropsLargeBuffers(t *testing.T) {
	set := command.New().Lookup([]byte("set"))
	var b Batch
	b.Add(set, [][]byte{[]byte("set"), []byte("k"), bytes.Repeat([]byte("v"), 100)})
	b.Out = append(b.Out, "+OK\r\n"...)
	small := cap(b.slab)
	b.Reset()
	if cap(b.slab) != small || b.Out == nil {
		t.Fatalf("an ordinary batch lost its buffers: slab cap %d (was %d), Out %v", cap(b.slab), small, b.Out)
	}
	b.Add(set, [][]byte{[]byte("set"), []byte("k"), bytes.Repeat([]byte("v"), 4<<20)})
	b.Out = append(b.Out, bytes.Repeat([]byte("x"), 2<<20)...)
	b.Reset()
	if cap(b.slab) > maxRetainedSlab || cap(b.Out) > maxRetainedOut {
		t.Fatalf("a large batch's buffers were kept: slab cap %d, Out cap %d", cap(b.slab), cap(b.Out))
	}
	many := make([][]byte, 1<<15)
	for i := range many {
		many[i] = []byte("a")
	}
	b.Add(set, many)
	b.Reset()
	if cap(b.argv) > maxRetainedArgv {
		t.Fatalf("a batch of %d arguments kept argv cap %d", len(many), cap(b.argv))
	}
}
