package netloop_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/shard/keyspace"
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
		{"GETSET", func(int) { must(c.Do(ctx, "GETSET", "k", "small").Err()) }},
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
			ts.RT.SetMaxMemory(64<<10, keyspace.AllKeysLRU)
			must(c.Set(ctx, "{k}trigger", "v", 0).Err()) // eviction frees on the shard written to
			ts.RT.SetMaxMemory(0, keyspace.NoEviction)
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

// TestBigStringRandomOps mixes APPEND, SETRANGE, GETRANGE, GET, DEL,
// EXPIRE, COPY, RENAME, FLUSHALL, BGSAVE and BGREWRITEAOF on strings around
// and above 1 MiB (so they move between the Go heap and mappings, grow by
// mremap, are copied, moved and dropped), compares every reply with a Go
// model, then restarts on the same data directory (the load path) and
// compares the whole keyspace again. Run under -race with the rest.
func TestBigStringRandomOps(t *testing.T) {
	dir := t.TempDir()
	params := map[string]string{"data-dir": dir, "save": "", "appendonly": "yes", "appendfsync": "always"} // the reload must see every reply's write
	ps := startPersistServer(t, params)
	if err := ps.pm.Load(); err != nil {
		t.Fatal(err)
	}
	ps.pm.Start()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ps.addr, ReadTimeout: 30 * time.Second})
	defer c.Close()

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	keys := []string{"a", "b", "c", "{a}d"}
	model := map[string][]byte{}
	fill := func(n int) []byte {
		b := make([]byte, n)
		x := byte(rng.IntN(250))
		for i := range b {
			b[i] = 'a' + (x+byte(i))%26
		}
		return b
	}
	size := func() int { // mostly around the 1 MiB threshold
		switch rng.IntN(4) {
		case 0:
			return 1 + rng.IntN(64<<10)
		case 1:
			return bigMiB - 4096 + rng.IntN(8192)
		default:
			return 1 + rng.IntN(768<<10)
		}
	}
	// idle waits until no snapshot or rewrite runs (one at a time).
	idle := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			info, err := c.Info(ctx, "persistence").Result()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(info, "rdb_bgsave_in_progress:0") && strings.Contains(info, "aof_rewrite_in_progress:0") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("a snapshot or rewrite still runs after 30 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	check := func(step int, what, key string) {
		t.Helper()
		got, err := c.Get(ctx, key).Bytes()
		want, ok := model[key]
		if !ok {
			if err != redis.Nil {
				t.Fatalf("step %d (%s): GET %s: %d bytes, %v; want missing", step, what, key, len(got), err)
			}
			return
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("step %d (%s): GET %s: %d bytes (%v); want %d bytes", step, what, key, len(got), err, len(want))
		}
	}
	for step := range 150 { // about 30 s under -race
		k := keys[rng.IntN(len(keys))]
		k2 := keys[rng.IntN(len(keys))]
		var what string
		switch op := rng.IntN(13); op {
		case 0, 1, 2:
			what = "APPEND"
			v := fill(size())
			n, err := c.Append(ctx, k, string(v)).Result()
			model[k] = append(model[k], v...)
			if err != nil || n != int64(len(model[k])) {
				t.Fatalf("step %d: APPEND: %d %v; want %d", step, n, err, len(model[k]))
			}
		case 3, 4:
			what = "SETRANGE"
			v := fill(1 + rng.IntN(4096))
			off := rng.IntN(len(model[k]) + 2*bigMiB)
			n, err := c.SetRange(ctx, k, int64(off), string(v)).Result()
			m := model[k]
			if off+len(v) > len(m) {
				m = append(m, make([]byte, off+len(v)-len(m))...)
			}
			copy(m[off:], v)
			model[k] = m
			if err != nil || n != int64(len(m)) {
				t.Fatalf("step %d: SETRANGE: %d %v; want %d", step, n, err, len(m))
			}
		case 5:
			what = "GETRANGE"
			m := model[k]
			s, e := rng.IntN(len(m)+10), rng.IntN(len(m)+10)
			got, err := c.GetRange(ctx, k, int64(s), int64(e)).Bytes()
			var want []byte
			if e >= len(m) {
				e = len(m) - 1
			}
			if s <= e && len(m) > 0 {
				want = m[s : e+1]
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("step %d: GETRANGE %d %d: %d bytes %v; want %d", step, s, e, len(got), err, len(want))
			}
		case 6:
			what = "SET"
			v := fill(size() + rng.IntN(2)*bigMiB)
			if err := c.Set(ctx, k, v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		case 7:
			what = "DEL"
			if err := c.Del(ctx, k).Err(); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		case 8:
			what = "EXPIRE"
			if _, ok := model[k]; ok {
				if err := c.PExpire(ctx, k, time.Millisecond).Err(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
				delete(model, k)
			}
		case 9:
			what = "COPY"
			if k == k2 {
				break
			}
			n, err := c.Copy(ctx, k, k2, 0, true).Result()
			v, ok := model[k]
			if ok {
				model[k2] = bytes.Clone(v)
			}
			if err != nil || (n == 1) != ok {
				t.Fatalf("step %d: COPY: %d %v", step, n, err)
			}
			// Edit the source: the copy must not see it (own buffer).
			if ok {
				if err := c.Append(ctx, k, "!").Err(); err != nil {
					t.Fatal(err)
				}
				model[k] = append(model[k], '!')
				check(step, "COPY source", k2)
			}
		case 10:
			what = "RENAME"
			v, ok := model[k]
			err := c.Rename(ctx, k, k2).Err()
			if !ok {
				if err == nil {
					t.Fatalf("step %d: RENAME of a missing key succeeded", step)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			delete(model, k)
			model[k2] = v
		case 11:
			what = "FLUSHALL"
			if rng.IntN(3) != 0 {
				break // rarer than the rest
			}
			if err := c.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			clear(model)
			if o := offHeap(t, ctx, c); o != 0 {
				t.Fatalf("step %d: used_memory_offheap %d after FLUSHALL", step, o)
			}
		case 12:
			if rng.IntN(2) == 0 {
				what = "BGSAVE"
				idle()
				if err := c.BgSave(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				// Keep writing while it runs: the snapshot copies what it
				// writes, and deletions save the key first.
				if err := c.Del(ctx, k).Err(); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
				idle()
			} else {
				what = "BGREWRITEAOF"
				idle()
				if err := c.BgRewriteAOF(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				idle()
			}
		}
		check(step, what, k)
		check(step, what, k2)
	}
	idle()
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// The load path: a second server on the same directory (the AOF and
	// its base) must hold exactly the model.
	ps2 := startPersistServer(t, params)
	if err := ps2.pm.Load(); err != nil {
		t.Fatal(err)
	}
	c2 := redis.NewClient(&redis.Options{Addr: ps2.addr, ReadTimeout: 30 * time.Second})
	defer c2.Close()
	for _, k := range keys {
		got, err := c2.Get(ctx, k).Bytes()
		want, ok := model[k]
		if ok != (err == nil) || !bytes.Equal(got, want) {
			t.Fatalf("after reload: %s: %d bytes (%v); want %d (present %v)", k, len(got), err, len(want), ok)
		}
	}
	for _, cl := range []*redis.Client{c, c2} {
		if err := cl.Del(ctx, keys...).Err(); err != nil {
			t.Fatal(err)
		}
		if o := offHeap(t, ctx, cl); o != 0 {
			t.Fatalf("used_memory_offheap %d after every key went", o)
		}
	}
}
