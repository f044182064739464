package keyspace

import (
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/core/command"
)

// TestKeyHintExactBytesOnly: a store's key hint is used for the very bytes
// it was taken over (same pointer, same length) and for nothing else. The
// hint here is deliberately wrong, so a lookup that used it misses.
func TestKeyHintExactBytesOnly(t *testing.T) {
	_, stores, err := NewEnv(1, command.New(), Handlers{})
	if err != nil {
		t.Fatal(err)
	}
	st := stores[0]
	d := st.dbs[0]
	d.Insert([]byte("user:1"), KindString)

	buf := []byte("user:1 and more")
	key := buf[:6]
	st.hint = keyHint{p: &key[0], n: len(key), h: xxhash.Sum64String("another key")}
	if o, _ := d.Find(key); o != nil {
		t.Fatal("Find did not use the hint for the bytes it was taken over (the test's premise)")
	}
	for name, other := range map[string][]byte{
		"same bytes elsewhere":  []byte("user:1"),
		"a prefix of the bytes": buf[:5],
		"a longer slice":        buf[:7],
	} {
		want := string(other) == "user:1"
		if o, _ := d.Find(other); (o != nil) != want {
			t.Errorf("%s (%q): found %v; want %v: the hint was used for other bytes", name, other, o != nil, want)
		}
	}
	st.hint = keyHint{}
	if o, _ := d.Find(key); o == nil {
		t.Fatal("Find without a hint missed the key")
	}
}

// TestKeyHintLifetime: Route records the first key's whole hash, the store
// takes it only when the command runs on that store alone and the route is
// for the command in the Ctx, and no hint survives the command.
func TestKeyHintLifetime(t *testing.T) {
	table := command.New()
	var seen keyHint // the store's hint while the handler runs
	var st []*Store
	get := func(c *Ctx) {
		seen = c.single.hint
		o, _ := c.DBFor(c.Args[1]).Find(c.Args[1])
		if o == nil {
			c.Null()
			return
		}
		c.Bulk(o.Bytes())
	}
	env, stores, err := NewEnv(4, table, Handlers{"get": {get, RouteKeys}, "set": {func(c *Ctx) {
		seen = c.single.hint
		d := c.DBFor(c.Args[1])
		d.InsertString(c.Args[1], c.Args[2])
		c.OK()
	}, RouteKeys}})
	if err != nil {
		t.Fatal(err)
	}
	st = stores
	var c Ctx
	c.Bind(env)
	run := func(args ...string) (hint keyHint, reply string) {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		cmd := table.Lookup(argv[0])
		shard, where := env.RouteFor(&c, cmd, argv)
		if where != OneShard {
			t.Fatalf("%v routed %v", args, where)
		}
		c.Cmd, c.Args, c.Out = cmd, argv, c.Out[:0]
		seen = keyHint{}
		c.Enter(st[shard])
		env.Handle(&c)
		c.Finished()
		for i, s := range st {
			if s.hint != (keyHint{}) {
				t.Errorf("%v: store %d keeps a hint after the command", args, i)
			}
		}
		return seen, string(c.Out)
	}

	h, reply := run("set", "plain", "v")
	if reply != "+OK\r\n" || h.n != len("plain") || h.h != xxhash.Sum64String("plain") {
		t.Errorf("SET plain: reply %q, hint %+v; want the whole key's xxhash", reply, h)
	}
	if h, reply = run("get", "plain"); reply != "$1\r\nv\r\n" || h.h != xxhash.Sum64String("plain") {
		t.Errorf("GET plain: reply %q, hint %+v", reply, h)
	}
	// A hash tag routes by the tag's hash, which is not the key's: no hint.
	if h, reply = run("set", "{tag}:k", "w"); reply != "+OK\r\n" || h != (keyHint{}) {
		t.Errorf("SET {tag}:k: reply %q, hint %+v; want none", reply, h)
	}
	if h, reply = run("get", "{tag}:k"); reply != "$1\r\nw\r\n" || h != (keyHint{}) {
		t.Errorf("GET {tag}:k: reply %q, hint %+v; want none", reply, h)
	}

	// A route for one argument list does not serve another: the producer
	// routed GET a, then runs GET b with the same Ctx.
	a, b := [][]byte{[]byte("get"), []byte("plain")}, [][]byte{[]byte("get"), []byte("other")}
	cmd := table.Lookup(a[0])
	shard, _ := env.RouteFor(&c, cmd, a)
	c.Cmd, c.Args, c.Out = cmd, b, c.Out[:0]
	c.Enter(st[shard])
	if c.single.hint.matches(b[1]) {
		t.Error("the hint for GET plain matches GET other's key")
	}
	env.Handle(&c)
	c.Finished()
	if string(c.Out) != "$-1\r\n" {
		t.Errorf("GET other after routing GET plain: %q; want a null", c.Out)
	}
	// Entering another store than the routed one takes no hint.
	shard, _ = env.RouteFor(&c, cmd, a)
	c.Cmd, c.Args = cmd, a
	c.Enter(st[(shard+1)%len(st)])
	if c.single.hint != (keyHint{}) {
		t.Error("a store the command was not routed to took its hint")
	}
	c.Finished()
}

// TestHashTagEveryShortKey compares HashTag with the rule written as a
// byte loop, over every key of up to 7 bytes of '{', '}' and 'a'.
func TestHashTagEveryShortKey(t *testing.T) {
	ref := func(key []byte) []byte {
		for i, c := range key {
			if c == '{' {
				for j := i + 1; j < len(key); j++ {
					if key[j] == '}' {
						if j > i+1 {
							return key[i+1 : j]
						}
						return key
					}
				}
				return key
			}
		}
		return key
	}
	var key []byte
	var walk func(n int)
	walk = func(n int) {
		if got, want := HashTag(key), ref(key); string(got) != string(want) {
			t.Fatalf("HashTag(%q) = %q; want %q", key, got, want)
		}
		if n == 0 {
			return
		}
		for _, c := range []byte("{}a") {
			key = append(key, c)
			walk(n - 1)
			key = key[:len(key)-1]
		}
	}
	walk(7)
}
