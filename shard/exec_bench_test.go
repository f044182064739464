package shard

import (
	"strconv"
	"testing"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// BenchmarkExecPath runs SET and a 10-key MSET across 4 shards the way
// netloop does (RouteFor, then TryExec or ExecMulti), for comparing the
// execution entry point's cost with an older tree.
func BenchmarkExecPath(b *testing.B) {
	rt, table := newTestRuntime(b, 4, RunToCompletion)
	var c keyspace.Ctx
	c.Bind(rt.env)
	set, mset := table.Lookup([]byte("set")), table.Lookup([]byte("mset"))
	msetArgs := [][]byte{[]byte("mset")}
	for i := range 10 {
		msetArgs = append(msetArgs, []byte("key:"+strconv.Itoa(i)), []byte("value"))
	}
	setArgs := [][]byte{[]byte("set"), []byte("key:1"), []byte("value")}
	b.Run("SET", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			c.Now = time.Now().UnixMilli()
			c.Cmd, c.Args, c.Out = set, setArgs, c.Out[:0]
			idx, _ := rt.RouteFor(&c, set, setArgs)
			for !rt.TryExec(idx, &c) {
			}
		}
	})
	b.Run("MSET-10-keys-4-shards", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			c.Now = time.Now().UnixMilli()
			c.Cmd, c.Args, c.Out = mset, msetArgs, c.Out[:0]
			if _, where := rt.RouteFor(&c, mset, msetArgs); where != keyspace.Coordinated {
				b.Fatal("MSET not coordinated")
			}
			rt.ExecMulti(&c)
		}
	})
}
