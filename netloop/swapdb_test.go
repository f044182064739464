package netloop_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestSwapDBClients runs SWAPDB's effects on other clients against svcdb
// (4 shards) and a real redis-server: a client blocked on a list in
// database 1 is served when SWAPDB brings a list of that name there; one
// blocked on a key that arrives with another type stays blocked; a WATCH
// fails when the watched key exists in either database before the swap
// and holds when it exists in neither. Both servers must give the same
// outcomes, and they are the ones written here.
func TestSwapDBClients(t *testing.T) {
	ts := startServer(t, withShards(4))
	raddr := redistest.Start(t)
	want := []string{
		"served: [q x] <nil>",
		"wrong type: [] redis: nil",
		"watch existing: [] redis: transaction failed",
		"watch absent: [OK] <nil>",
		"after: 0 s",
	}
	for _, srv := range []struct{ name, addr string }{{"svcdb", ts.Addr}, {"redis-server", raddr}} {
		got := swapDBScenario(t, srv.addr)
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Fatalf("%s:\n got %q\nwant %q", srv.name, got, want)
			}
		}
	}
}

func swapDBScenario(t *testing.T, addr string) []string {
	t.Helper()
	ctx := context.Background()
	client := func(db int) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1, DB: db})
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := client(0), client(1)
	if err := a.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var out []string

	// A client blocked on q in database 1; q is pushed in database 0 and
	// the databases swap.
	done := make(chan string, 1)
	go func() {
		r, err := b.BLPop(ctx, 5*time.Second, "q").Result()
		done <- fmt.Sprintf("served: %v %v", r, err)
	}()
	awaitBlocked(t, a, 1)
	a.RPush(ctx, "q", "x")
	if err := a.Do(ctx, "swapdb", 0, 1).Err(); err != nil {
		t.Fatal(err)
	}
	out = append(out, <-done)

	// Blocked on k in database 1; k arrives as a string: no wake-up.
	go func() {
		r, err := b.BLPop(ctx, time.Second, "k").Result()
		done <- fmt.Sprintf("wrong type: %v %v", r, err)
	}()
	awaitBlocked(t, a, 1)
	a.Set(ctx, "k", "s", 0) // database 0, which was database 1's (empty now)
	a.Do(ctx, "swapdb", 0, 1)
	out = append(out, <-done)

	// WATCH w in database 0 while w exists only in database 1.
	c := client(0)
	b.Set(ctx, "w", "v", 0)
	watch := func(label string) {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			a.Do(ctx, "swapdb", 0, 1)
			a.Do(ctx, "swapdb", 0, 1) // twice: the data is back where it was
			r, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "z", "1", 0)
				return nil
			})
			var vals []any
			for _, cmd := range r {
				vals = append(vals, cmd.(*redis.StatusCmd).Val())
			}
			if vals == nil {
				vals = []any{}
			}
			out = append(out, fmt.Sprintf("%s: %v %v", label, vals, err))
			return nil
		}, "w")
		if err != nil {
			t.Fatal(err)
		}
	}
	watch("watch existing")
	b.Del(ctx, "w")
	c.Del(ctx, "w")
	watch("watch absent")
	out = append(out, fmt.Sprintf("after: %d %s", a.Exists(ctx, "w").Val(), b.LIndex(ctx, "k", 0).Val()+b.Get(ctx, "k").Val()))
	return out
}

// awaitBlocked waits until n clients are blocked (INFO clients).
func awaitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	eventually(t, 3*time.Second, func() bool {
		info := c.Info(context.Background(), "clients").Val()
		return strings.Contains(info, fmt.Sprintf("blocked_clients:%d\r", n))
	}, "%d blocked clients", n)
}

// TestSwapDBUnblocksXReadGroup: an XREADGROUP blocked on a stream that
// SWAPDB takes away is answered at once with Redis' UNBLOCKED error
// (scanDatabaseForDeletedStreams), on svcdb (4 shards) as on redis-server;
// one whose stream is swapped for another stream with the same group and
// new entries is served from it.
func TestSwapDBUnblocksXReadGroup(t *testing.T) {
	ts := startServer(t, withShards(4))
	raddr := redistest.Start(t)
	want := []string{
		"stream gone: UNBLOCKED the stream key no longer exists",
		"stream replaced: [{s [{1-1 map[f:v] 0 0}]}] <nil>",
	}
	for _, srv := range []struct{ name, addr string }{{"svcdb", ts.Addr}, {"redis-server", raddr}} {
		ctx := context.Background()
		c := redis.NewClient(&redis.Options{Addr: srv.addr, Protocol: 2, PoolSize: 2})
		defer c.Close()
		var got []string
		for _, tc := range []struct {
			name  string
			setup [][]any
		}{
			{"stream gone", [][]any{{"xadd", "s", "1-1", "f", "v"}, {"xgroup", "create", "s", "g", "$"}}},
			{"stream replaced", [][]any{{"select", 1}, {"xadd", "s", "1-1", "f", "v"}, {"xgroup", "create", "s", "g", "0"},
				{"select", 0}, {"xadd", "s", "1-1", "f", "v"}, {"xgroup", "create", "s", "g", "$"}}},
		} {
			c.FlushAll(ctx)
			conn := c.Conn()
			for _, args := range tc.setup {
				if err := conn.Do(ctx, args...).Err(); err != nil {
					t.Fatalf("%s: %v: %v", srv.name, args, err)
				}
			}
			conn.Close()
			done := make(chan string, 1)
			go func() {
				r, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Block: 5 * time.Second}).Result()
				if err != nil && strings.HasPrefix(err.Error(), "UNBLOCKED") {
					done <- err.Error()
					return
				}
				done <- fmt.Sprint(r, " ", err)
			}()
			eventually(t, 3*time.Second, func() bool {
				return strings.Contains(c.Info(ctx, "clients").Val(), "blocked_clients:1")
			}, "%s: the XREADGROUP does not block", srv.name)
			start := time.Now()
			if err := c.Do(ctx, "swapdb", 0, 1).Err(); err != nil {
				t.Fatal(err)
			}
			got = append(got, tc.name+": "+<-done)
			if waited := time.Since(start); waited > 3*time.Second {
				t.Errorf("%s, %s: the XREADGROUP was answered after %v, not at the swap", srv.name, tc.name, waited)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", srv.name, got, want)
		}
	}
}
