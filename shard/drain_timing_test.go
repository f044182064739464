package shard

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// BenchmarkDrain compares the drain strategies with several producers (one
// per GOMAXPROCS, as event loops) running single-key SETs and GETs over the
// shards, through exactly the path netloop uses: TryExec inline when allowed,
// else a Batch through the queue, waiting for completion.
func BenchmarkDrain(b *testing.B) {
	for _, st := range []Strategy{RunToCompletion, Dedicated} {
		for _, shards := range []int{1, 4, 16} {
			for _, batch := range []int{1, 16} {
				b.Run(fmt.Sprintf("%s/shards=%d/batch=%d", st, shards, batch), func(b *testing.B) {
					benchDrain(b, st, shards, batch)
				})
			}
		}
	}
}

// spinWaiter is a Completer the producer polls (yielding), standing in for an
// event loop that goes back to epoll until its wake-up arrives.
type spinWaiter struct{ done atomic.Bool }

func (w *spinWaiter) BatchDone() { w.done.Store(true) }

func benchDrain(b *testing.B, st Strategy, shards, batch int) {
	table := command.New()
	rt, err := New(Config{Shards: shards, Strategy: st}, table)
	if err != nil {
		b.Fatal(err)
	}
	rt.Start()
	defer rt.Close()
	set, get := table.Lookup([]byte("set")), table.Lookup([]byte("get"))
	const nkeys = 1024
	keys := make([][]byte, nkeys)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	val := []byte("value-value-value-value-value-32")
	getName, setName := []byte("get"), []byte("set")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var ctx keyspace.Ctx
		ctx.Bind(rt.env)
		w := &spinWaiter{}
		var bt Batch
		bt.Owner = w
		bt.Ctx.Bind(rt.env)
		args := make([][]byte, 3)
		i := 0
		for pb.Next() {
			ctx.Now = time.Now().UnixMilli()
			// A burst of `batch` commands for one shard, as one read of a pipeline.
			k := keys[i%nkeys]
			i++
			cmd := get
			args = append(args[:0], getName, k)
			if i%4 == 0 {
				cmd = set
				args = append(args[:0], setName, k, val)
			}
			idx, _ := rt.Route(cmd, args)
			if batch == 1 {
				ctx.Cmd, ctx.Args, ctx.Out = cmd, args, ctx.Out[:0]
				if rt.TryExec(idx, &ctx) {
					continue
				}
			}
			bt.Reset()
			bt.Target(idx)
			for range batch {
				bt.Add(cmd, args)
			}
			w.done.Store(false)
			rt.Submit(&bt)
			for !w.done.Load() {
				runtime.Gosched() // an event loop would go back to epoll here
			}
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/cmd")
}
