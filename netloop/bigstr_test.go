package netloop_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/shard"
)

const bigMiB = 1 << 20

// offHeap reads INFO memory's used_memory_offheap: the bytes of strings
// held outside the Go heap (shard/bigbuf).
func offHeap(t testing.TB, ctx context.Context, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory_offheap:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO memory has no used_memory_offheap")
	return 0
}

// TestBigStringDropPaths puts strings of 1 MiB and more off the Go heap by
// every way one is made (SET, APPEND growth, SETRANGE on a new key, COPY)
// and drops them by every path that drops or replaces a value, over TCP:
// after each, used_memory_offheap is exactly 0 again (every mapping was
// unmapped, none twice: a double munmap panics the server).
func TestBigStringDropPaths(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c.Close()
	big := strings.Repeat("b", 2*bigMiB)
	chunk := strings.Repeat("a", 512<<10)
	must := func(err error) {
		t.Helper()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	// mk makes key a big string one of three ways.
	mk := func(key string, how int) {
		t.Helper()
		switch how % 3 {
		case 0:
			must(c.Set(ctx, key, big, 0).Err())
		case 1:
			for range 4 {
				must(c.Append(ctx, key, chunk).Err())
			}
		case 2:
			must(c.SetRange(ctx, key, 3*bigMiB, "x").Err())
		}
		if o := offHeap(t, ctx, c); o < bigMiB {
			t.Fatalf("made %s (way %d): used_memory_offheap %d; want >= 1 MiB", key, how%3, o)
		}
	}
	zero := func(path string) {
		t.Helper()
		if o := offHeap(t, ctx, c); o != 0 {
			t.Fatalf("after %s: used_memory_offheap %d; want 0", path, o)
		}
	}
	paths := []struct {
		name string
		drop func(how int)
	}{
		{"DEL", func(int) { must(c.Del(ctx, "k").Err()) }},
		{"UNLINK", func(int) { must(c.Unlink(ctx, "k").Err()) }},
		{"SET overwrite", func(int) { must(c.Set(ctx, "k", "small", 0).Err()) }},
		{"GETSET", func(int) { must(c.GetSet(ctx, "k", "small").Err()) }},
		{"SET GET", func(int) { must(c.SetArgs(ctx, "k", "small", redis.SetArgs{Get: true}).Err()) }},
		{"MSET", func(int) { must(c.MSet(ctx, "k", "small", "other", "x").Err()) }},
		{"GETDEL", func(int) { must(c.GetDel(ctx, "k").Err()) }},
		{"INCRBYFLOAT after SET of a number", func(int) {
			// A big buffer reused for a long number, then re-encoded.
			must(c.Set(ctx, "k", "1"+strings.Repeat("0", 300)+".5", 0).Err())
			must(c.IncrByFloat(ctx, "k", 1).Err())
		}},
		{"PEXPIRE (active expiry)", func(int) {
			must(c.PExpire(ctx, "k", time.Millisecond).Err())
			deadline := time.Now().Add(5 * time.Second)
			for offHeap(t, ctx, c) != 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
		}},
		{"PEXPIRE (lazy expiry on GET)", func(int) {
			must(c.PExpire(ctx, "k", time.Millisecond).Err())
			time.Sleep(3 * time.Millisecond)
			if err := c.Get(ctx, "k").Err(); err != redis.Nil {
				t.Fatalf("GET after expiry: %v", err)
			}
		}},
		{"SET EX in the past (PXAT)", func(int) {
			must(c.Do(ctx, "SET", "k", "v", "PXAT", "1").Err())
		}},
		{"eviction", func(int) {
			ts.RT.SetMaxMemory(64<<10, shard.AllKeysLRU)
			must(c.Set(ctx, "{k}trigger", "v", 0).Err()) // eviction frees on the shard written to
			ts.RT.SetMaxMemory(0, shard.NoEviction)
		}},
		{"FLUSHDB", func(int) { must(c.FlushDB(ctx).Err()) }},
		{"FLUSHALL", func(int) { must(c.FlushAll(ctx).Err()) }},
		{"FLUSHALL ASYNC", func(int) { must(c.FlushAllAsync(ctx).Err()) }},
		{"RENAME over it", func(int) {
			must(c.Set(ctx, "src", "small", 0).Err())
			must(c.Rename(ctx, "src", "k").Err())
		}},
		{"RENAME it, then DEL", func(int) {
			must(c.Rename(ctx, "k", "moved").Err())
			if n, _ := c.StrLen(ctx, "moved").Result(); n < bigMiB {
				t.Fatalf("renamed string has %d bytes", n)
			}
			must(c.Del(ctx, "moved").Err())
		}},
		{"RENAMENX it, then DEL", func(int) {
			must(c.RenameNX(ctx, "k", "moved").Err())
			must(c.Del(ctx, "moved").Err())
		}},
		{"COPY REPLACE over it", func(int) {
			must(c.Set(ctx, "src", "small", 0).Err())
			must(c.Copy(ctx, "src", "k", 0, true).Err())
		}},
		{"COPY it (own buffer), DEL both", func(how int) {
			must(c.Copy(ctx, "k", "copy", 0, false).Err())
			must(c.Copy(ctx, "k", "copy1", 1, false).Err())
			must(c.Del(ctx, "k").Err()) // the copies must still read right
			want := map[int]int64{0: 2 * bigMiB, 1: 2 * bigMiB, 2: 3*bigMiB + 1}[how%3]
			if n, err := c.StrLen(ctx, "copy").Result(); err != nil || n != want {
				t.Fatalf("copy after the source went: %d %v; want %d", n, err, want)
			}
			must(c.Del(ctx, "copy").Err())
			must(c.Do(ctx, "SELECT", "0").Err())
			c1 := redis.NewClient(&redis.Options{Addr: ts.Addr, DB: 1})
			defer c1.Close()
			must(c1.Del(ctx, "copy1").Err())
		}},
		{"type change (RENAME a list over it)", func(int) {
			must(c.RPush(ctx, "list", "a").Err())
			must(c.Rename(ctx, "list", "k").Err())
		}},
	}
	for _, p := range paths {
		for how := range 3 {
			mk("k", how)
			p.drop(how)
			zero(p.name)
			must(c.FlushAll(ctx).Err())
		}
	}
	if ts.panics.Load() != 0 {
		t.Fatal("handler panics")
	}
}
