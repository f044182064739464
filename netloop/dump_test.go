package netloop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// dumpFixture builds, with the same commands on any server, a key of every
// type in every encoding Redis 7.0 gives it: strings (int, short, long and
// compressible, a HyperLogLog sparse and dense), lists (listpack, quicklist
// of several nodes, a plain node), sets (intset, hashtable), hashes and
// sorted sets (listpack, hashtable/skiplist), streams (with deleted
// entries, consumer groups, consumers and pending entries), and a key with
// a TTL. It returns the keys.
func dumpFixture(t *testing.T, ctx context.Context, c *redis.Client) []string {
	t.Helper()
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	do("set", "str:int", "12345")
	do("set", "str:neg", "-9223372036854775808")
	do("set", "str:short", "hello")
	do("set", "str:bin", "\x00\xff\r\n")
	do("set", "str:long", strings.Repeat("abcdefgh", 300))
	do("set", "str:ttl", "v", "px", 3_600_000)
	do("pfadd", "hll:sparse", "a", "b", "c")
	hll := []any{"pfadd", "hll:dense"}
	for i := range 5000 {
		hll = append(hll, "e"+strconv.Itoa(i))
	}
	do(hll...)
	do("rpush", "list:lp", "a", "b", "1", "-2", "300000")
	big := []any{"rpush", "list:ql"}
	for i := range 2000 {
		big = append(big, fmt.Sprintf("element-%d", i), i)
	}
	do(big...)
	do("rpush", "list:plain", strings.Repeat("x", 9000), "small")
	do("sadd", "set:int", 1, 2, 3, -4, 5000000000)
	do("sadd", "set:ht", "a", "b", "c", 1)
	bigSet := []any{"sadd", "set:bigint"}
	for i := range 600 {
		bigSet = append(bigSet, i)
	}
	do(bigSet...)
	do("hset", "hash:lp", "f1", "v1", "f2", 2)
	do("hset", "hash:ht", "f", strings.Repeat("v", 100), "g", "1")
	do("zadd", "zset:lp", 1, "a", 2.5, "b", "-inf", "c", "inf", "d")
	do("zadd", "zset:sl", 1, strings.Repeat("m", 100), 2, "n")
	for i := range 150 {
		do("xadd", "stream", fmt.Sprintf("%d-1", i+1), "f", i, "g", "x")
	}
	do("xdel", "stream", "3-1", "100-1")
	do("xgroup", "create", "stream", "g1", "0")
	do("xgroup", "create", "stream", "g2", "$")
	do("xreadgroup", "group", "g1", "alice", "count", "3", "streams", "stream", ">")
	do("xreadgroup", "group", "g1", "bob", "count", "2", "streams", "stream", ">")
	do("xack", "stream", "g1", "1-1")
	do("xadd", "stream:empty", "5-5", "f", "v")
	do("xdel", "stream:empty", "5-5")
	return []string{"str:int", "str:neg", "str:short", "str:bin", "str:long", "str:ttl",
		"hll:sparse", "hll:dense", "list:lp", "list:ql", "list:plain", "set:int", "set:ht",
		"set:bigint", "hash:lp", "hash:ht", "zset:lp", "zset:sl", "stream", "stream:empty"}
}

// describeKey reads key's whole value, type and encoding on one server in a
// form that does not depend on the server's iteration order.
func describeKey(t *testing.T, ctx context.Context, c *redis.Client, key string) string {
	t.Helper()
	get := func(args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		if err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	sorted := func(v any) string {
		var s []string
		for _, x := range v.([]any) {
			s = append(s, fmt.Sprint(x))
		}
		slices.Sort(s)
		return fmt.Sprint(s)
	}
	typ := get("type", key)
	enc := get("object", "encoding", key)
	ttl := get("ttl", key).(int64) > 0
	var val any
	switch typ {
	case "string":
		val = get("get", key)
		if strings.Contains(key, "hll:") {
			val = get("pfcount", key)
		}
	case "list":
		val = get("lrange", key, 0, -1)
	case "set":
		val = sorted(get("smembers", key))
	case "hash":
		val = sorted(get("hgetall", key))
	case "zset":
		val = get("zrange", key, 0, -1, "withscores")
	case "stream":
		val = fmt.Sprint(get("xrange", key, "-", "+"), get("xinfo", "stream", key, "full"))
	}
	return fmt.Sprintf("%v %v ttl=%v %v", typ, enc, ttl, val)
}

// splitEncoding splits describeKey's result into the encoding and the rest.
func splitEncoding(desc string) (enc, rest string) {
	typ, after, _ := strings.Cut(desc, " ")
	enc, rest, _ = strings.Cut(after, " ")
	return enc, typ + " " + rest
}

// dumpOf returns key's DUMP payload on c.
func dumpOf(t *testing.T, ctx context.Context, c *redis.Client, key string) string {
	t.Helper()
	p, err := c.Dump(ctx, key).Result()
	if err != nil {
		t.Fatalf("DUMP %s: %v", key, err)
	}
	return p
}

// TestDumpRestoreCrossServer dumps every type and encoding from a real
// redis-server and restores it into svcdb, and the other way round: the
// restored value (type, encoding, elements, stream groups and PELs, TTL)
// reads the same as the original. Restoring a payload into the server that
// made it must work too.
func TestDumpRestoreCrossServer(t *testing.T) {
	ts := startServer(t, withShards(4))
	raddr := redistest.Start(t)
	ctx := context.Background()
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer ref.Close()
	keys := dumpFixture(t, ctx, ours)
	dumpFixture(t, ctx, ref)
	restore := func(c *redis.Client, key, payload string, ttl bool) {
		t.Helper()
		args := []any{"restore", key, 0, payload}
		if ttl {
			args[2] = 3_600_000
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", key, err)
		}
	}
	for _, k := range keys {
		ttl := k == "str:ttl"
		fromRedis, fromOurs := dumpOf(t, ctx, ref, k), dumpOf(t, ctx, ours, k)
		restore(ours, "from-redis:"+k, fromRedis, ttl)
		restore(ref, "from-svcdb:"+k, fromOurs, ttl)
		restore(ours, "from-svcdb:"+k, fromOurs, ttl)
		restore(ref, "from-redis:"+k, fromRedis, ttl)
		// The same payload restores to the same value and encoding on both
		// servers, and to the value it was dumped from (a restored string
		// may take another encoding than its original: Redis restores a
		// short HyperLogLog as embstr).
		for _, from := range []string{"from-redis:", "from-svcdb:"} {
			want := describeKey(t, ctx, ref, from+k)
			if got := describeKey(t, ctx, ours, from+k); got != want {
				t.Errorf("%s%s restored in svcdb and in redis-server:\n svcdb        %.600s\n redis-server %.600s", from, k, got, want)
			}
		}
		for _, c := range []struct {
			name string
			cl   *redis.Client
		}{{"redis-server", ref}, {"svcdb", ours}} {
			_, want := splitEncoding(describeKey(t, ctx, c.cl, k))
			if c.name == "svcdb" {
				k2 := "from-svcdb:" + k
				if _, got := splitEncoding(describeKey(t, ctx, ours, k2)); got != want {
					t.Errorf("%s: svcdb's DUMP restored in svcdb:\n got  %.600s\n want %.600s", k, got, want)
				}
				if _, got := splitEncoding(describeKey(t, ctx, ref, k2)); got != want {
					t.Errorf("%s: svcdb's DUMP restored in redis-server:\n got  %.600s\n want %.600s", k, got, want)
				}
			} else if _, got := splitEncoding(describeKey(t, ctx, ours, "from-redis:"+k)); got != want {
				t.Errorf("%s: redis-server's DUMP restored in svcdb:\n got  %.600s\n want %.600s", k, got, want)
			}
		}
	}
	if os.Getenv("SVCDB_WRITE_DUMP_SEEDS") != "" {
		writeDumpSeeds(t, ctx, ref, keys)
	}
}

// writeDumpSeeds writes redis-server's payloads as the seed corpus of
// shard/rdb's FuzzRestore (testdata/dump/<key>.bin); run with
// SVCDB_WRITE_DUMP_SEEDS=1 to refresh them.
func writeDumpSeeds(t *testing.T, ctx context.Context, ref *redis.Client, keys []string) {
	dir := filepath.Join("..", "shard", "rdb", "testdata", "dump")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		name := strings.ReplaceAll(k, ":", "-") + ".bin"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(dumpOf(t, ctx, ref, k)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
