package values

import (
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSkiplist is redis-benchmark's sorted set of `ZADD myzset
// <rand> element:<rand>` with -r 100000 (members and scores 12-digit
// zero-padded numbers below 100,000), on the skiplist alone: no keyspace,
// no runtime, so the profile and cachegrind see only this package's work.
// cpu-ns/op is the process' CPU per operation (getrusage, the garbage
// collector's work included), steadier than ns/op on a shared machine.
func BenchmarkSkiplist(b *testing.B) {
	const n = 100000
	members := make([][]byte, n)
	for i := range members {
		members[i] = []byte("element:" + strconv.Itoa(1_000_000_000_000 + i)[1:])
	}
	full := func(rng *rand.Rand) *Skiplist {
		s := NewSkiplist(0)
		for _, m := range members {
			s.Add(m, float64(rng.IntN(n)))
		}
		return s
	}
	cpuPerOp := func(b *testing.B, cpu0 time.Duration) {
		b.ReportMetric(float64(zslProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	// ZADD of an existing member with a new random score: Find, then
	// SetScore (keyspace.ZSetAdd's path), nearly always a move.
	b.Run("rescore random", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		s := full(rng)
		b.ReportAllocs()
		cpu0 := zslProcessCPU()
		for b.Loop() {
			x, ok := s.Find(members[rng.IntN(n)])
			if !ok {
				b.Fatal("not found")
			}
			s.SetScore(x, float64(rng.IntN(n)))
		}
		cpuPerOp(b, cpu0)
	})
	// ZADD of a new member: the set grows to n members, then starts again.
	b.Run("add new", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		s := NewSkiplist(0)
		b.ReportAllocs()
		cpu0 := zslProcessCPU()
		i := 0
		for b.Loop() {
			if i == n {
				s, i = NewSkiplist(0), 0
			}
			s.Add(members[i], float64(rng.IntN(n)))
			i++
		}
		cpuPerOp(b, cpu0)
	})
	// ZPOPMIN: the lowest member removed, the set refilled when empty.
	b.Run("pop first", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		s := full(rng)
		b.ReportAllocs()
		cpu0 := zslProcessCPU()
		for b.Loop() {
			if s.Len() == 0 {
				b.StopTimer()
				s = full(rng)
				b.StartTimer()
			}
			s.RemoveNode(s.First())
		}
		cpuPerOp(b, cpu0)
	})
}

func zslProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
