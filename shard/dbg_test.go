package shard

import (
	"testing"

	"github.com/svcdb/svcdb/shard/keyspace"
)

func TestDbgOOM(t *testing.T) {
	rt, table := newBareRuntime(t, 2)
	p := newProducer(rt, table)
	keys := fill(p, "k:", 500, 100, false)
	u0 := rt.MemoryUsed()
	rt.SetMaxMemory(u0-1000, keyspace.NoEviction)
	p.do("DEL", keys[0], keys[1], keys[2], keys[3], keys[4], keys[5])
	t.Logf("used %d -> %d (freed %d), overhead %d", u0, rt.MemoryUsed(), u0-rt.MemoryUsed(), keyspace.ObjectOverhead)
}
