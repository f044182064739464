package shard

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// BenchmarkSlotCommands runs GET, SET (overwriting a value of the same
// size), INCR and HSET (a field of a small hash) on random keys of 100,000
// per shape over 4 shards, through RouteFor and TryExec as netloop runs
// them: the commands that read and write an Object's value words, for
// comparing the slot's layout with an older tree (issue 20, part 1). The
// keys are spread wider than the caches so that a larger slot shows.
// cpu-ns/op is the process' CPU time per command, which a loaded machine's
// neighbours disturb less than the wall time.
func BenchmarkSlotCommands(b *testing.B) {
	const keys = 100_000
	rt, table := newTestRuntime(b, 4, RunToCompletion)
	var c keyspace.Ctx
	c.Bind(rt.env)
	run := func(args [][]byte) {
		c.Now = time.Now().UnixMilli()
		c.Cmd, c.Args, c.Out = table.Lookup(args[0]), args, c.Out[:0]
		idx, _ := rt.RouteFor(&c, c.Cmd, args)
		for !rt.TryExec(idx, &c) {
		}
	}
	name := func(prefix string, i int) []byte { return strconv.AppendInt([]byte(prefix), int64(i), 10) }
	value := []byte("0123456789abcdef0123456789abcdef")
	for i := range keys {
		run([][]byte{[]byte("set"), name("s:", i), value})
		run([][]byte{[]byte("set"), name("n:", i), []byte("12345")})
		run([][]byte{[]byte("hset"), name("h:", i), []byte("f1"), []byte("v1"), []byte("f2"), []byte("v2")})
	}
	// Each case cycles through a fixed random-looking order of its keys,
	// built before the timer (argument slices included).
	cases := []struct {
		name string
		args func(i int) [][]byte
	}{
		{"GET", func(i int) [][]byte { return [][]byte{[]byte("get"), name("s:", i)} }},
		{"SET", func(i int) [][]byte { return [][]byte{[]byte("set"), name("s:", i), value} }},
		{"INCR", func(i int) [][]byte { return [][]byte{[]byte("incr"), name("n:", i)} }},
		{"HSET", func(i int) [][]byte { return [][]byte{[]byte("hset"), name("h:", i), []byte("f2"), []byte("v3")} }},
	}
	for _, tc := range cases {
		order := make([][][]byte, 1<<14)
		for j := range order {
			order[j] = tc.args(int(uint32(j) * 2654435761 % keys))
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for i := range b.N {
				run(order[i&(len(order)-1)])
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
