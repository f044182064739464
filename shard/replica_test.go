package shard

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// TestReplicaWriteFence: a client's write that was let through while the
// server was a master and runs after ReplicaTarget.Begin's point (queued on
// its shard while Begin held every shard) gets -READONLY and changes
// nothing; the master's stream writes; replica-read-only no lets clients
// write; End takes the fence down.
func TestReplicaWriteFence(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	p := newProducer(rt, table)
	if v := p.do("SET", "k", "v"); string(v.Str) != "OK" {
		t.Fatalf("SET: %q", v.Str)
	}
	idx, where := rt.Route(table.Lookup([]byte("SET")), [][]byte{[]byte("SET"), []byte("k"), []byte("late")})
	if where != keyspace.OneShard {
		t.Fatal("SET k is not on one shard")
	}
	target := rt.NewReplicaTarget()
	var readOnly atomic.Bool
	readOnly.Store(true)
	late := make(chan string, 1)
	target.Begin(readOnly.Load, func() {
		// A client's write that passed the role check, now waiting for its
		// shard, which Begin holds.
		lp := newProducer(rt, table)
		go func() {
			v := lp.do("SET", "k", "late")
			late <- string(v.Type) + string(v.Str)
		}()
		for rt.shards[idx].queue.depth() == 0 {
			runtime.Gosched()
		}
	})
	if got, want := <-late, "-READONLY You can't write against a read only replica."; got != want {
		t.Errorf("the late write got %q, want %q", got, want)
	}
	if v := p.do("GET", "k"); string(v.Str) != "v" {
		t.Errorf("GET k after the refused write: %q", v.Str)
	}
	if v := p.do("SET", "k2", "x"); v.Type != '-' {
		t.Errorf("a client's SET on a read-only replica: %q", v.Str)
	}
	if err := target.Apply([][]byte{[]byte("SET"), []byte("k"), []byte("from-master")}); err != nil {
		t.Fatalf("the master's SET: %v", err)
	}
	if v := p.do("GET", "k"); string(v.Str) != "from-master" {
		t.Errorf("GET k after the master's SET: %q", v.Str)
	}
	readOnly.Store(false) // replica-read-only no
	if v := p.do("SET", "k2", "local"); string(v.Str) != "OK" {
		t.Errorf("a client's SET on a writable replica: %q", v.Str)
	}
	readOnly.Store(true)
	target.End()
	if v := p.do("SET", "k3", "x"); string(v.Str) != "OK" {
		t.Errorf("a client's SET after End: %q", v.Str)
	}
}
