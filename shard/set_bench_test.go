package shard

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// BenchmarkSmallSet compares the two encodings of a small set of strings:
// the listpack (Redis 7.2's, the default) and the hash table (what
// set-max-listpack-entries 0 gives, Redis 7.0's), on 1,000 keys of 3 or 128
// 10-byte members: SISMEMBER of the last member (a listpack's longest scan),
// SADD of an existing member, and SMEMBERS.
func BenchmarkSmallSet(b *testing.B) {
	for _, enc := range []string{"listpack", "hashtable"} {
		for _, size := range []int{3, 128} {
			lim := keyspace.DefaultEncodingLimits
			if enc == "hashtable" {
				lim.SetMaxListpackEntries = 0
			}
			setup := func(b *testing.B) (*execer, [][]byte, [][]byte) {
				e := newExecer(b)
				e.rt.SetEncodingLimits(lim)
				sadd := e.cmd("sadd")
				keys := make([][]byte, 1000)
				members := make([][]byte, size)
				for j := range members {
					members[j] = []byte("m" + strconv.Itoa(100_000_000+j))
				}
				for i := range keys {
					keys[i] = []byte("set:" + strconv.Itoa(i))
					e.run(sadd, append([][]byte{[]byte("sadd"), keys[i]}, members...)...)
				}
				return e, keys, members
			}
			name := enc + "/" + strconv.Itoa(size)
			b.Run("SISMEMBER/"+name, func(b *testing.B) {
				e, keys, members := setup(b)
				cmd, verb, last := e.cmd("sismember"), []byte("sismember"), members[len(members)-1]
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					e.run(cmd, verb, keys[i%len(keys)], last)
					i++
				}
			})
			b.Run("SADD existing/"+name, func(b *testing.B) {
				e, keys, members := setup(b)
				cmd, verb, last := e.cmd("sadd"), []byte("sadd"), members[len(members)-1]
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					e.run(cmd, verb, keys[i%len(keys)], last)
					i++
				}
			})
			b.Run("SMEMBERS/"+name, func(b *testing.B) {
				e, keys, _ := setup(b)
				cmd, verb := e.cmd("smembers"), []byte("smembers")
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					e.run(cmd, verb, keys[i%len(keys)])
					i++
				}
			})
		}
	}
}

// TestSmallValueCreateAllocs checks that a command creating a small hash,
// set or sorted set allocates its value once, at its final size, and
// nothing per member: the key's string and the value, plus the index's
// and the slot array's amortized growth.
func TestSmallValueCreateAllocs(t *testing.T) {
	e := newExecer(t)
	const runs = 2000
	for _, c := range []struct {
		name string
		args func(key []byte) [][]byte
	}{
		{"hset", func(k []byte) [][]byte {
			return [][]byte{[]byte("hset"), k, []byte("f1"), []byte("a000000001"), []byte("f2"), []byte("b000000001"), []byte("f3"), []byte("c000000001")}
		}},
		{"sadd", func(k []byte) [][]byte {
			return [][]byte{[]byte("sadd"), k, []byte("a000000001"), []byte("b000000001"), []byte("c000000001")}
		}},
		{"zadd", func(k []byte) [][]byte {
			return [][]byte{[]byte("zadd"), k, []byte("1"), []byte("a000000001"), []byte("2"), []byte("b000000001"), []byte("3.5"), []byte("c000000001")}
		}},
	} {
		cmd := e.cmd(c.name)
		argsets := make([][][]byte, runs+1)
		for i := range argsets {
			argsets[i] = c.args([]byte(c.name + ":" + strconv.Itoa(i)))
		}
		i := 0
		n := testing.AllocsPerRun(runs, func() {
			e.run(cmd, argsets[i]...)
			i++
		})
		if n > 2.1 {
			t.Errorf("%s of a new key with 3 members: %.2f allocations per call, want 2 (key and value) plus amortized growth", c.name, n)
		}
		t.Logf("%s: %.2f allocations per new key", c.name, n)
	}
}

// BenchmarkBigSet mirrors redis-benchmark's set tests with -r 100000: SADD
// of "element:<random>" into one set of up to 100k members (a hash table;
// after the first 100k requests nearly every member is already there),
// SISMEMBER of such a member, and SPOP from the full set (refilled, off the
// clock, when it runs empty).
func BenchmarkBigSet(b *testing.B) {
	const nmembers = 100000
	members := make([][]byte, nmembers)
	for i := range members {
		members[i] = []byte("element:" + strconv.Itoa(1_000_000_000_000 + i)[1:])
	}
	fill := func(e *execer, key []byte) {
		args := [][]byte{[]byte("sadd"), key}
		e.run(e.cmd("sadd"), append(args, members...)...)
	}
	for _, c := range []struct{ name, cmd string }{{"SADD existing", "sadd"}, {"SISMEMBER", "sismember"}} {
		b.Run(c.name, func(b *testing.B) {
			e := newExecer(b)
			key := []byte("myset")
			fill(e, key)
			cmd, verb := e.cmd(c.cmd), []byte(c.cmd)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			cpu := benchProcessCPU()
			for b.Loop() {
				e.run(cmd, verb, key, members[rng.IntN(nmembers)])
			}
			b.ReportMetric(float64(benchProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("SADD new", func(b *testing.B) {
		e := newExecer(b)
		cmd, verb := e.cmd("sadd"), []byte("sadd")
		key := []byte("myset")
		rng := rand.New(rand.NewPCG(1, 2))
		perm := rng.Perm(nmembers)
		b.ReportAllocs()
		i := 0
		cpu := benchProcessCPU()
		for b.Loop() {
			if i == nmembers {
				b.StopTimer()
				off := benchProcessCPU()
				e.run(e.cmd("del"), []byte("del"), key)
				cpu += benchProcessCPU() - off
				i = 0
				b.StartTimer()
			}
			e.run(cmd, verb, key, members[perm[i]])
			i++
		}
		b.ReportMetric(float64(benchProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("SPOP", func(b *testing.B) {
		e := newExecer(b)
		cmd, verb := e.cmd("spop"), []byte("spop")
		key := []byte("myset")
		fill(e, key)
		b.ReportAllocs()
		i := 0
		cpu := benchProcessCPU()
		for b.Loop() {
			if i == nmembers {
				b.StopTimer()
				off := benchProcessCPU()
				fill(e, key)
				cpu += benchProcessCPU() - off
				i = 0
				b.StartTimer()
			}
			e.run(cmd, verb, key)
			i++
		}
		b.ReportMetric(float64(benchProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
}
