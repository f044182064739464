package netloop_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestHLLDifferential feeds svcdb (4 shards) and a real redis-server the
// same PFADD sequences and requires byte-for-byte identical HLL strings
// (sparse, around the promotion point, dense) and the same PFCOUNT at every
// step from 1 to 200000 elements; then the union forms (PFCOUNT of several
// keys, PFMERGE), an HLL written by redis-server and loaded here with SET,
// a lowered hll-sparse-max-bytes, and corrupt values.
func TestHLLDifferential(t *testing.T) {
	ts := startServer(t)
	raddr := redistest.Start(t)
	ctx := context.Background()
	// PFSELFTEST takes a second or two on either server.
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1, ReadTimeout: time.Minute})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1, ReadTimeout: time.Minute})
	defer ours.Close()
	defer ref.Close()

	seed := int64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))

	both := func(args ...any) (any, any) {
		t.Helper()
		a, errA := ours.Do(ctx, args...).Result()
		b, errB := ref.Do(ctx, args...).Result()
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%v: error %v, redis-server %v", args, errA, errB)
		}
		return a, b
	}
	same := func(args ...any) any {
		t.Helper()
		a, b := both(args...)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%v: %q, redis-server %q", args, fmt.Sprint(a), fmt.Sprint(b))
		}
		return a
	}
	sameValue := func(key string) {
		t.Helper()
		a, _ := ours.Get(ctx, key).Result()
		b, _ := ref.Get(ctx, key).Result()
		if a != b {
			t.Fatalf("%s: %d bytes differ from redis-server's %d (encoding %v / %v)", key, len(a), len(b),
				ours.Do(ctx, "PFDEBUG", "ENCODING", key).Val(), ref.Do(ctx, "PFDEBUG", "ENCODING", key).Val())
		}
	}

	// Growing one HLL 1..200000, in batches that get larger with the
	// count; bytes compared while sparse and around the promotion, counts
	// throughout.
	n, batch := 0, 1
	for n < 200000 {
		args := []any{"PFADD", "h"}
		for i := 0; i < batch; i++ {
			args = append(args, fmt.Sprintf("el:%d", n))
			n++
		}
		same(args...)
		same("PFCOUNT", "h")
		if n < 5000 || n%20000 == 0 {
			sameValue("h")
		}
		switch {
		case n < 3000:
			batch = 1 + rng.Intn(7)
		case n < 20000:
			batch = 50 + rng.Intn(100)
		default:
			batch = 500 + rng.Intn(2000)
		}
	}
	sameValue("h")
	if enc := same("PFDEBUG", "ENCODING", "h"); enc != "dense" {
		t.Fatalf("200000 elements: encoding %v", enc)
	}

	// Random binary elements of every length (MurmurHash64A's tails), one
	// at a time so that each reply is compared.
	for i := 0; i < 3000; i++ {
		b := make([]byte, rng.Intn(24))
		rng.Read(b)
		same("PFADD", "r", string(b))
		if i%97 == 0 {
			same("PFCOUNT", "r")
			sameValue("r")
		}
	}
	same("PFCOUNT", "r")
	sameValue("r")
	same("PFDEBUG", "GETREG", "r")
	sameValue("r")

	// Unions: keys on several shards, sparse and dense mixed, a missing one.
	for _, k := range []string{"u1", "u2", "u3"} {
		args := []any{"PFADD", k}
		for i := rng.Intn(3000); i > 0; i-- {
			args = append(args, rng.Intn(6000))
		}
		same(args...)
	}
	same("PFCOUNT", "u1", "u2", "u3", "missing", "h")
	same("PFCOUNT", "u1", "u2")
	same("PFMERGE", "m", "u1", "u2")
	sameValue("m")
	same("PFMERGE", "u3", "u1", "r")
	sameValue("u3")
	same("PFMERGE", "m2", "h", "u1")
	sameValue("m2")
	same("PFCOUNT", "m", "m2", "u3")

	// An HLL written by redis-server counts the same here, and grows the same.
	for _, k := range []string{"h", "r", "m"} {
		v := ref.Get(ctx, k).Val()
		if err := ours.Set(ctx, "copy:"+k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := ref.Set(ctx, "copy:"+k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		same("PFCOUNT", "copy:"+k)
		same("PFADD", "copy:"+k, "one", "more", "element")
		same("PFCOUNT", "copy:"+k)
		sameValue("copy:" + k)
	}

	// A lower hll-sparse-max-bytes promotes earlier, identically.
	same("CONFIG", "SET", "hll-sparse-max-bytes", "200")
	for i := 0; i < 200; i++ {
		same("PFADD", "low", fmt.Sprint("x", i))
		sameValue("low")
	}
	same("PFDEBUG", "ENCODING", "low")
	same("CONFIG", "SET", "hll-sparse-max-bytes", "3000")

	// Errors: another type, a string that is no HLL, corrupt sparse opcodes.
	same("SET", "str", "hello")
	same("LPUSH", "list", "a")
	same("SET", "int", "12345")
	corrupt := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff\x7f\xff"
	same("SET", "bad", corrupt)
	same("SET", "bad2", corrupt)
	same("SET", "short", "HYLL\x00\x00\x00")
	same("SET", "dense-short", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	for _, k := range []string{"str", "list", "int", "bad", "short", "dense-short"} {
		same("PFADD", k, "a")
		same("PFCOUNT", k)
		same("PFCOUNT", k, "h")
		same("PFMERGE", "dst", k)
		same("PFDEBUG", "ENCODING", k)
	}
	same("PFSELFTEST", "extra")
	if !raceOn { // ten million elements: too slow under the race detector
		same("PFSELFTEST")
	}
	same("PFCOUNT", "bad2")
	same("PFDEBUG", "DECODE", "bad2")
	same("PFDEBUG", "TODENSE", "bad2")
}
