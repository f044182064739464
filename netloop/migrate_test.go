package netloop_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// hostPort splits addr for MIGRATE's host and port arguments.
func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// TestMigrateCrossServer moves a key of every type and encoding from svcdb
// to a real redis-server, from redis-server to svcdb and from svcdb to
// another svcdb with MIGRATE ... KEYS: each arrives with its value and
// TTL, and leaves its source (or stays, with COPY).
func TestMigrateCrossServer(t *testing.T) {
	ctx := context.Background()
	ts, ts2 := startServer(t, withShards(4)), startServer(t, withShards(2))
	raddr := redistest.Start(t)
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	ours2 := redis.NewClient(&redis.Options{Addr: ts2.Addr, Protocol: 2, PoolSize: 1})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer ours2.Close()
	defer ref.Close()

	migrate := func(src *redis.Client, dst string, db int, opts ...any) {
		t.Helper()
		h, p := hostPort(t, dst)
		args := append([]any{"migrate", h, p, "", db, 5000}, opts...)
		if v, err := src.Do(ctx, args...).Result(); err != nil || v != "OK" {
			t.Fatalf("%v: %v %v", args, v, err)
		}
	}
	keysArgs := func(keys []string) []any {
		out := []any{"keys"}
		for _, k := range keys {
			out = append(out, k)
		}
		return out
	}
	rest := func(c *redis.Client, k string) string {
		_, r := splitEncoding(describeKey(t, ctx, c, k))
		return r
	}

	// svcdb -> redis-server, database 0 -> 0.
	keys := dumpFixture(t, ctx, ours)
	want := map[string]string{}
	for _, k := range keys {
		want[k] = rest(ours, k)
	}
	migrate(ours, raddr, 0, keysArgs(keys)...)
	for _, k := range keys {
		if got := rest(ref, k); got != want[k] {
			t.Errorf("%s migrated from svcdb to redis-server:\n got  %.600s\n want %.600s", k, got, want[k])
		}
		if n := ours.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s still on svcdb after MIGRATE", k)
		}
	}
	// redis-server -> svcdb, into database 3.
	migrate(ref, ts.Addr, 3, keysArgs(keys)...)
	ours.Do(ctx, "select", 3)
	for _, k := range keys {
		if got := rest(ours, k); got != want[k] {
			t.Errorf("%s migrated from redis-server to svcdb:\n got  %.600s\n want %.600s", k, got, want[k])
		}
	}
	// svcdb -> svcdb with COPY: the keys stay.
	migrate(ours, ts2.Addr, 0, append([]any{"copy"}, keysArgs(keys)...)...)
	for _, k := range keys {
		if got := rest(ours2, k); got != want[k] {
			t.Errorf("%s copied from svcdb to svcdb:\n got  %.600s\n want %.600s", k, got, want[k])
		}
		if got := rest(ours, k); got != want[k] {
			t.Errorf("%s changed on its source by MIGRATE COPY:\n got  %.600s\n want %.600s", k, got, want[k])
		}
	}
}

// TestMigrateReplies runs the same MIGRATE commands on svcdb and on a real
// redis-server, both migrating to a third server (a redis-server with a
// busy key), and wants the same replies and the same effects on the source
// key: NOKEY, BUSYKEY from the target, REPLACE, COPY, KEYS, syntax and
// argument errors, a closed port, AUTH and AUTH2 (right and wrong).
func TestMigrateReplies(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, withShards(4))
	raddr, taddr := redistest.Start(t), redistest.Start(t)
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1})
	target := redis.NewClient(&redis.Options{Addr: taddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer ref.Close()
	defer target.Close()
	target5 := redis.NewClient(&redis.Options{Addr: taddr, Protocol: 2, PoolSize: 1, DB: 5})
	defer target5.Close()
	h, p := hostPort(t, taddr)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort := hostPort(t, closed.Addr().String())
	closed.Close()

	cases := []struct {
		args  []any
		setup func() // on the target, before each server's run
	}{
		{args: []any{"k", 0, 1000}},
		{args: []any{"nosuch", 0, 1000}},
		{args: []any{"", 0, 1000, "keys", "nosuch1", "nosuch2"}},
		{args: []any{"", 0, 1000, "keys", "k", "nosuch", "k2"}},
		{args: []any{"busy", 0, 1000}},
		{args: []any{"busy", 0, 1000, "replace"}},
		{args: []any{"", 0, 1000, "keys", "k", "busy", "k2"}},
		{args: []any{"k", 0, 1000, "copy"}},
		{args: []any{"k", 0, 1000, "copy", "replace"}},
		{args: []any{"k", 5, 1000, "copy"}},
		{args: []any{"k", 0, 0}},
		{args: []any{"k", 0, -5}},
		{args: []any{"k", "x", 1000}},
		{args: []any{"k", 0, "x"}},
		{args: []any{"k", 0, 1000, "bogus"}},
		{args: []any{"k", 0, 1000, "keys", "k2"}},
		{args: []any{"k", 0, 1000, "auth"}},
		{args: []any{"k", 0, 1000, "auth2", "u"}},
		{args: []any{"k", 0, 1000, "auth", "pw"}},
		{args: []any{"k", 0, 1000, "auth2", "default", "pw"}},
	}
	run := func(c *redis.Client, args []any, host, port string) string {
		for _, k := range []string{"k", "k2", "busy"} {
			c.Set(ctx, k, "v-"+k, 0)
		}
		target.FlushAll(ctx)
		target.Set(ctx, "busy", "there", 0)
		v, err := c.Do(ctx, append([]any{"migrate", host, port}, args...)...).Result()
		var after []string
		for _, k := range []string{"k", "k2", "busy"} {
			after = append(after, fmt.Sprintf("%s=%d/%s", k, c.Exists(ctx, k).Val(), target.Get(ctx, k).Val()))
		}
		after = append(after, "db5:"+target5.Get(ctx, "k").Val())
		return fmt.Sprintf("%v %v %s", v, err, strings.Join(after, " "))
	}
	for _, tc := range cases {
		got, want := run(ours, tc.args, h, p), run(ref, tc.args, h, p)
		if got != want {
			t.Errorf("MIGRATE %v:\n svcdb        %s\n redis-server %s", tc.args, got, want)
		}
	}
	// A port nobody listens on.
	got, want := run(ours, []any{"k", 0, 500}, "127.0.0.1", closedPort), run(ref, []any{"k", 0, 500}, "127.0.0.1", closedPort)
	if got != want {
		t.Errorf("MIGRATE to a closed port:\n svcdb        %s\n redis-server %s", got, want)
	}
	// A target with a password and a user: AUTH and AUTH2, right and wrong.
	target.Do(ctx, "acl", "setuser", "mig", "on", ">secret2", "~*", "+@all")
	target.ConfigSet(ctx, "requirepass", "secret")
	target = redis.NewClient(&redis.Options{Addr: taddr, Protocol: 2, PoolSize: 1, Password: "secret"})
	defer target.Close()
	target5 = redis.NewClient(&redis.Options{Addr: taddr, Protocol: 2, PoolSize: 1, Password: "secret", DB: 5})
	defer target5.Close()
	for _, args := range [][]any{
		{"k", 0, 1000},
		{"k", 0, 1000, "auth", "secret"},
		{"k", 0, 1000, "auth", "wrong"},
		{"k", 0, 1000, "auth2", "mig", "secret2"},
		{"k", 0, 1000, "auth2", "mig", "wrong"},
	} {
		got, want := run(ours, args, h, p), run(ref, args, h, p)
		if got != want {
			t.Errorf("MIGRATE %v:\n svcdb        %s\n redis-server %s", args, got, want)
		}
	}
}

// TestMigrateConnectionCache checks the connection cache: consecutive
// MIGRATEs to one target reuse one connection (CLIENT LIST on the target
// shows the same client), and the connection is closed after 10 s unused,
// as Redis' migrate_cached_sockets.
func TestMigrateConnectionCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ts := startServer(t, withShards(4))
	taddr := redistest.Start(t)
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	target := redis.NewClient(&redis.Options{Addr: taddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer target.Close()
	h, p := hostPort(t, taddr)
	migrationClients := func() []string {
		var ids []string
		for _, line := range strings.Split(target.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, "cmd=restore") {
				id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
				ids = append(ids, id)
			}
		}
		return ids
	}
	for i := range 5 {
		k := "key" + strconv.Itoa(i) // on various shards
		ours.Set(ctx, k, "v", 0)
		if v, err := ours.Do(ctx, "migrate", h, p, k, i%2, 1000).Result(); err != nil || v != "OK" {
			t.Fatalf("MIGRATE %s: %v %v", k, v, err)
		}
	}
	ids := migrationClients()
	if len(ids) != 1 {
		t.Fatalf("after 5 MIGRATEs the target has %d migration connections %v, want 1 (cached)", len(ids), ids)
	}
	start := time.Now()
	eventually(t, 20*time.Second, func() bool { return len(migrationClients()) == 0 },
		"the cached MIGRATE connection is still open after 20 s")
	if idle := time.Since(start); idle < 8*time.Second {
		t.Errorf("the cached MIGRATE connection closed after %v idle, want about 10 s", idle)
	}
}
