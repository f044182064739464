package shard

import "runtime/metrics"

// The Go heap's fragmentation, counted in used_memory (issue 20, part 3).
//
// The keyspace's own figures (shard/keyspace/memory.go) are the bytes its
// keys, values, slots and indexes hold. The heap that holds them costs
// more: free slots in the spans objects are allocated from (a value freed
// by eviction leaves its slot empty until a value of its size class takes
// it) and the runtime's metadata, which grows with the heap. Filling 128 MB
// of maxmemory three times over with 2,000-byte values left 7-9 MiB of the
// first and 5-6 MiB more of the second (TestRSSFollowsMaxMemory): with
// neither counted, the process held 16-18% more than maxmemory. So the
// expiry loop reads both 10 times a second, and used_memory adds the free
// span slots and the metadata's growth since start, shared over the shards
// (keyspace.Env.SetHeapWaste), as Redis' used_memory counts what its
// allocator rounds.
//
// Only a process that is the server counts it (Config.CountHeapWaste,
// cmd/svcdb): a runtime inside a test binary would count the tests' heap.

var heapWasteMetrics = [...]string{
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
}

type heapWaste struct {
	samples   []metrics.Sample // nil: not counted
	metaBase  int64            // the metadata at start: the process' fixed part
	published int64            // what used_memory counts now
}

func newHeapWaste(on bool) heapWaste {
	if !on {
		return heapWaste{}
	}
	w := heapWaste{samples: make([]metrics.Sample, len(heapWasteMetrics))}
	for i, name := range heapWasteMetrics {
		w.samples[i].Name = name
	}
	_, w.metaBase = w.read()
	return w
}

// read returns the heap's free span slots and the runtime's metadata.
func (w *heapWaste) read() (unused, meta int64) {
	metrics.Read(w.samples)
	v := func(i int) int64 {
		if w.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(w.samples[i].Value.Uint64())
	}
	return v(0), v(1) + v(2)
}

// sampleHeapWaste publishes the heap's fragmentation for used_memory. Only
// the expiry loop calls it.
//
// It rises by at most 1/256 of maxmemory (256 KiB without one) a tick:
// admission evicts an excess from the shard whose write found it, so a
// jump of 8 MiB at once would empty that shard alone (a shard of 128 MB
// over 16 holds 8); in steps, every shard's writes pay a little. It falls
// at once.
func (rt *Runtime) sampleHeapWaste() {
	w := &rt.waste
	if w.samples == nil {
		return
	}
	unused, meta := w.read()
	now := unused + max(meta-w.metaBase, 0)
	step := max(rt.env.MemoryLimit()/256, 256<<10)
	w.published = min(now, w.published+step)
	rt.env.SetHeapWaste(w.published)
}
