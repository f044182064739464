package netloop_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMemoryAccountingAddsUp: after random writes to every type (growing,
// shrinking, converting encodings, deleting), INFO used_memory, which the
// shards keep incrementally, equals the sum of MEMORY USAGE over every key,
// which each value reports from its own structure. A type that forgets to
// account a change makes them differ.
func TestMemoryAccountingAddsUp(t *testing.T) {
	ts := startServer(t, withShards(4))
	r := dialRaw(t, ts.Addr)
	r.do("CONFIG", "SET", "hash-max-listpack-entries", "16")
	r.do("CONFIG", "SET", "zset-max-listpack-entries", "16")
	r.do("CONFIG", "SET", "set-max-intset-entries", "16")
	rng := rand.New(rand.NewPCG(7, 9))
	val := func() string { return strings.Repeat("v", 1+rng.IntN(80)) }
	for i := range 4000 {
		k := fmt.Sprint("k", rng.IntN(40))
		member := fmt.Sprint(rng.IntN(60))
		var cmd []string
		switch i % 14 {
		case 0:
			cmd = []string{"SET", "s" + k, val()}
		case 1:
			cmd = []string{"APPEND", "s" + k, val()}
		case 2:
			cmd = []string{"HSET", "h" + k, member, val()}
		case 3:
			cmd = []string{"HDEL", "h" + k, member}
		case 4:
			cmd = []string{"RPUSH", "l" + k, val(), val()}
		case 5:
			cmd = []string{"LPOP", "l" + k}
		case 6:
			cmd = []string{"SADD", "t" + k, member, "m" + member}
		case 7:
			cmd = []string{"SREM", "t" + k, member}
		case 8:
			cmd = []string{"ZADD", "z" + k, fmt.Sprint(rng.IntN(100)), member}
		case 9:
			cmd = []string{"ZREM", "z" + k, member}
		case 10:
			cmd = []string{"XADD", "x" + k, "MAXLEN", "~", "50", "*", "f", val()}
		case 11:
			cmd = []string{"DEL", "h" + k, "z" + k}
		case 12:
			cmd = []string{"RENAME", "l" + k, "l" + fmt.Sprint(rng.IntN(40))}
		case 13:
			cmd = []string{"COPY", "t" + k, "t" + fmt.Sprint(rng.IntN(40)), "REPLACE"}
		}
		if v := r.do(cmd...); v.Type == '-' && !strings.HasPrefix(string(v.Str), "ERR no such key") {
			t.Fatalf("%v: %s", cmd, v.Str)
		}
	}
	keys := r.do("KEYS", "*")
	var sum int64
	for _, k := range keys.Elems {
		v := r.do("MEMORY", "USAGE", string(k.Str))
		if v.Type != ':' || v.Int <= int64(len(k.Str)) {
			t.Fatalf("MEMORY USAGE %s = %v", k.Str, v)
		}
		sum += v.Int
	}
	if used := infoInt(t, r.info("memory"), "used_memory"); used != sum {
		t.Fatalf("INFO used_memory = %d, sum of MEMORY USAGE over %d keys = %d", used, len(keys.Elems), sum)
	}
	r.do("FLUSHALL")
	if used := infoInt(t, r.info("memory"), "used_memory"); used != 0 {
		t.Fatalf("used_memory after FLUSHALL = %d, want 0", used)
	}
	if v := r.do("MEMORY", "PURGE"); string(v.Str) != "OK" {
		t.Fatalf("MEMORY PURGE = %v", v)
	}
	if v := r.do("MEMORY", "STATS"); len(v.Elems) == 0 {
		t.Fatalf("MEMORY STATS = %v", v)
	}
}
