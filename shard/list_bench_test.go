package shard

import (
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// benchCtx runs one command repeatedly the way a producer does, reusing its
// arguments and reply buffer, so the benchmark measures the handler alone.
type benchCtx struct {
	rt  *Runtime
	c   keyspace.Ctx
	idx int
}

func newBenchCtx(b *testing.B, rt *Runtime, args ...string) *benchCtx {
	bc := &benchCtx{rt: rt}
	bc.c.Bind(rt.env)
	for _, a := range args {
		bc.c.Args = append(bc.c.Args, []byte(a))
	}
	bc.c.Cmd = rt.table.Lookup(bc.c.Args[0])
	idx, where := rt.Route(bc.c.Cmd, bc.c.Args)
	if where != keyspace.OneShard {
		b.Fatalf("%s: not a one-shard command", args[0])
	}
	bc.idx = idx
	bc.c.Out = make([]byte, 0, 64<<10)
	return bc
}

func (bc *benchCtx) run(b *testing.B) {
	bc.c.Out = bc.c.Out[:0]
	for !bc.rt.TryExec(bc.idx, &bc.c) {
		// the expiry cycle holds the shard for a moment
	}
}

// BenchmarkLRange600 is redis-benchmark's LRANGE_600: the first 600
// elements of a list built by LPUSH (a quicklist of many nodes).
func BenchmarkLRange600(b *testing.B) {
	rt, table := newTestRuntime(b, 1, RunToCompletion)
	p := newProducer(rt, table)
	for i := range 10000 {
		p.do("LPUSH", "mylist", "xxx"+strconv.Itoa(i%10))
	}
	bc := newBenchCtx(b, rt, "LRANGE", "mylist", "0", "599")
	bc.run(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		bc.run(b)
	}
}

// BenchmarkLPushPop is redis-benchmark's LPUSH, RPUSH, LPOP and RPOP on a
// list that stays large (a quicklist): pushes and pops at both ends.
func BenchmarkLPushPop(b *testing.B) {
	for _, size := range []int{100, 100000} {
		b.Run("len="+strconv.Itoa(size), func(b *testing.B) {
			rt, table := newTestRuntime(b, 1, RunToCompletion)
			p := newProducer(rt, table)
			for i := range size {
				p.do("RPUSH", "mylist", "xxx"+strconv.Itoa(i%10))
			}
			cmds := []*benchCtx{
				newBenchCtx(b, rt, "LPUSH", "mylist", "xxx"),
				newBenchCtx(b, rt, "RPUSH", "mylist", "xxx"),
				newBenchCtx(b, rt, "LPOP", "mylist"),
				newBenchCtx(b, rt, "RPOP", "mylist"),
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				// push, push, pop, pop: the list keeps its length
				cmds[i%4].run(b)
			}
		})
	}
}
