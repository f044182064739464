package keyspace

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/core/hugeheap"
)

// BenchmarkSlotValues is the keyspace's side of GET, SET, INCR and HSET on
// 100,000 keys a shape, looked up in a fixed scattered order: DB.Lookup,
// then what the handler does with the value words (Value; SetString of the
// same size; SetInt of the value read plus one; HashSet of an existing
// field); GET_TTL is GET of strings that have an expiry (the time is read
// beside the slot: expiry.go). Without the runtime's queues and goroutines it is less disturbed
// by a loaded machine than BenchmarkSlotCommands (shard), and it uses only
// API that the 80-byte slot had too, so that both layouts can be timed.
func BenchmarkSlotValues(b *testing.B) {
	const keys = 100_000
	d := newDB()
	lim := DefaultEncodingLimits
	value := []byte("0123456789abcdef0123456789abcdef")
	name := func(prefix string, i int) []byte { return strconv.AppendInt([]byte(prefix), int64(i), 10) }
	pairs := [][]byte{[]byte("f1"), []byte("v1"), []byte("f2"), []byte("v2")}
	for i := range keys {
		d.SetString(d.Insert(name("s:", i), KindString), value)
		d.SetInt(d.Insert(name("n:", i), KindString), int64(i))
		h := d.Insert(name("h:", i), KindHash)
		NewHashValue(h, pairs, &lim)
		HashSet(h, pairs[0], pairs[1], &lim)
		HashSet(h, pairs[2], pairs[3], &lim)
		t := d.Insert(name("t:", i), KindString)
		d.SetString(t, value)
		d.SetExpire(t, 1<<62)
	}
	d.index.Step(-1, d.hashAt)
	order := func(prefix string) [][]byte {
		out := make([][]byte, 1<<14)
		for j := range out {
			out[j] = name(prefix, int(uint32(j)*2654435761%keys))
		}
		return out
	}
	str, num, hash, ttl := order("s:"), order("n:"), order("h:"), order("t:")
	var buf [20]byte
	var sink int
	cases := []struct {
		name string
		op   func(i int)
	}{
		{"GET", func(i int) { sink += len(d.Lookup(str[i], 1).Value(&buf)) }},
		{"SET", func(i int) { d.SetString(d.Lookup(str[i], 1), value) }},
		{"INCR", func(i int) {
			o := d.Lookup(num[i], 1)
			n, _ := strconv.ParseInt(string(o.Value(&buf)), 10, 64)
			d.SetInt(o, n+1)
		}},
		{"HSET", func(i int) { HashSet(d.Lookup(hash[i], 1), pairs[2], pairs[3], &lim) }},
		{"GET_TTL", func(i int) { sink += len(d.Lookup(ttl[i], 1).Value(&buf)) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for i := range b.N {
				tc.op(i & (1<<14 - 1))
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	_ = sink
}

// BenchmarkStringsLarge is GET and SET of memtier's keys ("memtier-N", 32-byte
// values) at 2,000,000 keys, far beyond the cache, in random order: the
// lookup, then the value's bytes copied out as a reply would (GET) or
// overwritten in place (SET). It is what a key and its value in one
// allocation saves (a cache miss on the value's own array) and what the
// collector marks (objects/key, from the heap's object count before and
// after the load). hugeMiB is the process' memory on transparent huge pages.
func BenchmarkStringsLarge(b *testing.B) {
	const keys = 2_000_000
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	// SVCDB_BENCH_HUGEPAGES=1 collapses the heap into huge pages as the
	// server's svc-huge-pages does (core/hugeheap), during and after the
	// load: the same benchmark on huge pages, A/B against 4 KiB pages in
	// separate processes (huge pages are process-wide, never undone).
	var adv hugeheap.Collapser
	defer adv.Close()
	thp := os.Getenv("SVCDB_BENCH_HUGEPAGES") == "1"
	if thp {
		_, _ = adv.Pass()
	}
	d := newDB()
	value := []byte("0123456789abcdef0123456789abcdef")
	name := func(i int) []byte { return strconv.AppendInt([]byte("memtier-"), int64(i), 10) }
	for i := range keys {
		d.SetString(d.Insert(name(i), KindString), value)
		if thp && i%20000 == 0 {
			_, _ = adv.Pass()
		}
	}
	d.index.Step(-1, d.hashAt)
	runtime.GC()
	if thp {
		_, _ = adv.Pass()
	}
	huge, _ := hugeheap.AnonHugeBytes()
	runtime.ReadMemStats(&ms1)
	objects := float64(ms1.HeapObjects-ms0.HeapObjects) / keys
	order := make([][]byte, 1<<16)
	for j := range order {
		order[j] = name(rand.IntN(keys))
	}
	reply := make([]byte, 0, 64)
	var buf [20]byte
	cases := []struct {
		name string
		op   func(key []byte)
	}{
		{"GET", func(key []byte) { reply = append(reply[:0], d.Lookup(key, 1).Value(&buf)...) }},
		{"SET", func(key []byte) { d.SetString(d.Lookup(key, 1), value) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for i := range b.N {
				tc.op(order[i&(len(order)-1)])
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(objects, "heapobj/key")
			b.ReportMetric(float64(huge)/(1<<20), "hugeMiB")
		})
	}
}

// BenchmarkInsertStrings is SET of new keys as a load does it: a lookup
// that misses, then InsertString, into a database that grows from empty
// to 1,000,000 keys and starts again (the time to make a fresh one not
// counted). It covers the key index's misses at its load factor and its
// incremental growth: the cost per key of loading a keyspace.
func BenchmarkInsertStrings(b *testing.B) {
	const keys = 1_000_000
	value := []byte("0123456789abcdef0123456789abcdef")
	names := make([][]byte, keys)
	for i := range names {
		names[i] = strconv.AppendInt([]byte("key:"), int64(i), 10)
	}
	b.ReportAllocs()
	d := newDB()
	cpu0 := cpuTime()
	for i := range b.N {
		k := names[i%keys]
		if i%keys == 0 && i > 0 {
			b.StopTimer()
			d = newDB()
			b.StartTimer()
		}
		if d.Lookup(k, 1) == nil {
			d.InsertString(k, value)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
