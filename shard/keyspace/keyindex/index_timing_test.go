package keyindex

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRehashAll measures what one resize of a full index would cost
// if it were done at once: 10M values (slot positions in random order, as a
// table's buckets hold them) moved into a new table, each value's hash read
// from a 10M-entry array at that position (a random memory read, as
// keyspace's hashAt reads the slot's key). It reports the process CPU time
// beside the wall time, since on a shared machine the wall time measures
// the neighbours: the CPU time per entry, times stepEntries, is what
// incremental rehashing adds to one Insert. docs/architecture.md
// ("Keyspace") has the numbers.
func BenchmarkRehashAll(b *testing.B) {
	const n = 10_000_000
	hashes := make([]uint64, n)
	for i := range hashes {
		hashes[i] = mix(uint64(i))
	}
	hashOf := func(v uint32) uint64 { return hashes[v] }
	order := rand.Perm(n)
	for range b.N {
		b.StopTimer()
		var x Index
		for _, v := range order {
			x.Insert(hashes[v], uint32(v), hashOf)
		}
		x.Step(-1, hashOf) // finish any rehash in progress
		b.ReportMetric(float64(x.Bytes())/n, "index-B/key")
		cur, _ := x.Buckets()
		x.resize(cur/2, hashOf) // the same size again: a rebuild that moves all n
		b.StartTimer()
		cpu0, wall0 := cpuTime(), time.Now()
		x.Step(-1, hashOf)
		cpu, wall := cpuTime()-cpu0, time.Since(wall0)
		b.ReportMetric(float64(wall.Milliseconds()), "one-shot-wall-ms")
		b.ReportMetric(float64(cpu.Milliseconds()), "one-shot-cpu-ms")
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/entry")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
