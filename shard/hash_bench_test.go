package shard

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// execer runs one command at a time on a one-shard runtime through TryExec,
// the path netloop takes, reusing its argument and reply buffers.
type execer struct {
	rt    *Runtime
	table *command.Table
	ctx   keyspace.Ctx
	args  [][]byte
}

func newExecer(tb testing.TB) *execer {
	rt, table := newTestRuntime(tb, 1, RunToCompletion)
	e := &execer{rt: rt, table: table}
	e.ctx.Bind(rt.env)
	return e
}

func (e *execer) cmd(name string) *command.Command { return e.table.Lookup([]byte(name)) }

// run executes args (args[0] is the command name, already lower case).
func (e *execer) run(cmd *command.Command, args ...[]byte) []byte {
	e.args = append(e.args[:0], args...)
	e.ctx.Now = time.Now().UnixMilli()
	e.ctx.Cmd, e.ctx.Args, e.ctx.Out = cmd, e.args, e.ctx.Out[:0]
	idx, _ := e.rt.Route(cmd, e.args)
	for !e.rt.TryExec(idx, &e.ctx) {
		runtime.Gosched() // the expiry cycle holds the shard for a moment
	}
	return e.ctx.Out
}

// TestSmallHashNoAllocs checks the promise of the listpack encoding: HSET of
// an existing field (a value that fits) and HGET allocate nothing, and so do
// SISMEMBER and SADD of an existing member.
func TestSmallHashNoAllocs(t *testing.T) {
	e := newExecer(t)
	hset, hget := e.table.Lookup([]byte("hset")), e.table.Lookup([]byte("hget"))
	sadd, sismember := e.table.Lookup([]byte("sadd")), e.table.Lookup([]byte("sismember"))
	key, field := []byte("user:1000"), []byte("name")
	e.run(hset, []byte("hset"), key, field, []byte("alice"), []byte("age"), []byte("33"))
	e.run(sadd, []byte("sadd"), []byte("ints"), []byte("1"), []byte("2"))
	e.run(sadd, []byte("sadd"), []byte("strs"), []byte("a"), []byte("b"))
	for _, c := range []struct {
		name string
		cmd  *command.Command
		args [][]byte
	}{
		{"HSET existing", hset, [][]byte{[]byte("hset"), key, field, []byte("bob")}},
		{"HGET", hget, [][]byte{[]byte("hget"), key, field}},
		{"SADD existing int", sadd, [][]byte{[]byte("sadd"), []byte("ints"), []byte("2")}},
		{"SADD existing string", sadd, [][]byte{[]byte("sadd"), []byte("strs"), []byte("b")}},
		{"SISMEMBER", sismember, [][]byte{[]byte("sismember"), []byte("strs"), []byte("a")}},
	} {
		if n := testing.AllocsPerRun(200, func() { e.run(c.cmd, c.args...) }); n != 0 {
			t.Errorf("%s: %.1f allocations per call, want 0", c.name, n)
		}
	}
}

// TestRandomReplyTooLarge checks the bound on negative-count replies.
func TestRandomReplyTooLarge(t *testing.T) {
	defer func(old int) { keyspace.MaxRandomReply = old }(keyspace.MaxRandomReply)
	keyspace.MaxRandomReply = 1000
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	p := newProducer(rt, table)
	p.do("SADD", "s", "member")
	p.do("HSET", "h", "field", "value")
	for _, args := range [][]string{
		{"SRANDMEMBER", "s", "-1000"},
		{"HRANDFIELD", "h", "-1000"},
		{"HRANDFIELD", "h", "-1000", "WITHVALUES"},
	} {
		if got := p.do(args...); got.Type != '-' || string(got.Str) != keyspace.ErrRandomReplyTooLarge {
			t.Errorf("%v = %v, want the too-large error", args, got)
		}
	}
	if got := p.do("SRANDMEMBER", "s", "-10"); len(got.Elems) != 10 {
		t.Errorf("a small reply: %v", got)
	}
}

// BenchmarkHashSet mirrors redis-benchmark's hash and set tests: HSET and
// SADD of random fields into one large key (a hash table), SPOP from it, and
// HSET/HGET on small listpack hashes.
func BenchmarkHashSet(b *testing.B) {
	const nfields = 100000
	fields := make([][]byte, nfields)
	for i := range fields {
		fields[i] = []byte("element:" + strconv.Itoa(i))
	}
	val := []byte("xxx")
	b.Run("HSET big", func(b *testing.B) {
		e := newExecer(b)
		hset := e.table.Lookup([]byte("hset"))
		name, key := []byte("hset"), []byte("myhash")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(hset, name, key, fields[i%nfields], val)
			i++
		}
	})
	b.Run("HSET small", func(b *testing.B) {
		e := newExecer(b)
		hset := e.table.Lookup([]byte("hset"))
		name := []byte("hset")
		keys := make([][]byte, 1000)
		for i := range keys {
			keys[i] = []byte("user:" + strconv.Itoa(i))
			e.run(hset, name, keys[i], []byte("name"), []byte("alice"), []byte("age"), []byte("33"))
		}
		field, val := []byte("age"), []byte("34")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(hset, name, keys[i%len(keys)], field, val)
			i++
		}
	})
	b.Run("HGET small", func(b *testing.B) {
		e := newExecer(b)
		hset, hget := e.table.Lookup([]byte("hset")), e.table.Lookup([]byte("hget"))
		keys := make([][]byte, 1000)
		for i := range keys {
			keys[i] = []byte("user:" + strconv.Itoa(i))
			e.run(hset, []byte("hset"), keys[i], []byte("name"), []byte("alice"), []byte("age"), []byte("33"))
		}
		name, field := []byte("hget"), []byte("age")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(hget, name, keys[i%len(keys)], field)
			i++
		}
	})
	b.Run("SADD big", func(b *testing.B) {
		e := newExecer(b)
		sadd := e.table.Lookup([]byte("sadd"))
		name, key := []byte("sadd"), []byte("myset")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(sadd, name, key, fields[i%nfields])
			i++
		}
	})
	b.Run("SPOP big", func(b *testing.B) {
		e := newExecer(b)
		sadd, spop := e.table.Lookup([]byte("sadd")), e.table.Lookup([]byte("spop"))
		name, key := []byte("spop"), []byte("myset")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%nfields == 0 {
				b.StopTimer()
				for _, f := range fields {
					e.run(sadd, []byte("sadd"), key, f)
				}
				b.StartTimer()
			}
			e.run(spop, name, key)
			i++
		}
	})
}
