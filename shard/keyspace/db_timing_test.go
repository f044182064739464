package keyspace

import (
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFind looks up random existing keys of a database of 1M keys
// through DB.Find (xxhash, the key index, the slot and its key) beside the
// same lookups in a Go map[string]uint32 followed by the slot's read (the
// index DB had before package keyindex; every command reads the slot it
// finds): both in one run, since the shared machine's load moves every
// absolute figure. cpu-ns/op is the process' CPU time per lookup, which the
// neighbours disturb less than the wall time.
func BenchmarkFind(b *testing.B) {
	const n = 1_000_000
	d := newDB()
	m := make(map[string]uint32)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
		o := d.Insert(keys[i], KindString)
		m[o.Key()] = d.posOf(o)
	}
	d.index.Step(-1, d.hashAt) // as the cron would have by now
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = rand.IntN(n)
	}
	run := func(b *testing.B, find func(key []byte) bool) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		for i := range b.N {
			if !find(keys[order[i&(len(order)-1)]]) {
				b.Fatal("key not found")
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	b.Run("keyindex", func(b *testing.B) {
		run(b, func(key []byte) bool { o, _ := d.Find(key); return o != nil })
	})
	b.Run("gomap", func(b *testing.B) {
		run(b, func(key []byte) bool {
			pos, ok := m[string(key)]
			return ok && d.Slot(pos).Kind != KindNone
		})
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
