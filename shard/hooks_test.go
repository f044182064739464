package shard

import (
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// The Changed hook is told, through the one entry point, of every command
// that changed the dataset however it ran (one shard, several, inside EXEC,
// a served blocked client, AOF replay), and of none that changed nothing.
func TestHooksChangedEveryPath(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	var got []string
	rt.SetHooks(&Hooks{Changed: func(c *keyspace.Ctx) {
		var keys []string
		for _, k := range c.CommandKeys(nil) {
			keys = append(keys, string(k))
		}
		got = append(got, c.Cmd.Name+" "+strings.Join(keys, ","))
	}})
	var c keyspace.Ctx
	c.Bind(rt.env)
	run := func(args ...string) string {
		t.Helper()
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		cmd := table.Lookup(argv[0])
		c.Now = time.Now().UnixMilli()
		c.Cmd, c.Args, c.Out = cmd, argv, c.Out[:0]
		switch idx, where := rt.RouteFor(&c, cmd, argv); where {
		case keyspace.OneShard:
			for !rt.TryExec(idx, &c) {
			}
		case keyspace.Coordinated:
			rt.ExecMulti(&c)
		default:
			t.Fatalf("%v: not a shard command", args)
		}
		return string(c.Out)
	}
	// Keys on two different shards.
	a, b := "a", "b"
	for i := 0; rt.ShardOf([]byte(b)) == rt.ShardOf([]byte(a)); i++ {
		b = "b" + string(rune('0'+i))
	}
	run("set", a, "1")
	run("get", a) // changes nothing
	run("mset", a, "2", b, "3")
	run("del", "missing") // changes nothing

	rt.HoldAll()
	c.Cmd, c.Args, c.Out = table.Lookup([]byte("incr")), [][]byte{[]byte("incr"), []byte(a)}, c.Out[:0]
	rt.ExecHeld(&c)
	rt.ReleaseAll()

	// A blocked BLPOP served by an RPUSH: the push and the served pop.
	blocker := &testUnblocker{ch: make(chan []byte, 1)}
	c.Blocker = blocker
	run("blpop", "list", "0")
	if c.Blocked == nil {
		t.Fatal("BLPOP did not park")
	}
	c.Blocked, c.Blocker = nil, nil
	run("rpush", "list", "x")
	if reply := <-blocker.ch; !strings.Contains(string(reply), "x") {
		t.Fatalf("served BLPOP replied %q", reply)
	}

	r := rt.NewReplayer()
	if err := r.Apply([][]byte{[]byte("SET"), []byte("replayed"), []byte("v")}); err != nil {
		t.Fatal(err)
	}
	r.Finish()

	want := []string{"set a", "mset " + a + "," + b, "incr a", "rpush list", "blpop list", "set replayed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Changed calls:\n got %q\nwant %q", got, want)
	}
}

type testUnblocker struct{ ch chan []byte }

func (u *testUnblocker) Unblocked(reply []byte, retry bool) {
	u.ch <- append([]byte(nil), reply...)
}
