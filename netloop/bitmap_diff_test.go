package netloop_test

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestBitmapDifferential runs the same random SETBIT, BITCOUNT, BITPOS,
// BITOP and BITFIELD commands on random strings against svcdb (4 shards, so
// BITOP's keys are spread over shards) and a real redis-server, and requires
// the same reply, error text included, and the same resulting strings.
func TestBitmapDifferential(t *testing.T) {
	ts := startServer(t)
	raddr := redistest.Start(t)
	ctx := context.Background()
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer ref.Close()

	seed := int64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	keys := []string{"ka", "kb", "kc", "kd", "missing"}
	// Strings made of runs, so that searches cross whole 0x00 and 0xff words.
	randString := func() string {
		n := rng.Intn(80)
		b := make([]byte, 0, n)
		for len(b) < n {
			run, v := 1+rng.Intn(20), byte(rng.Intn(256))
			switch rng.Intn(3) {
			case 0:
				v = 0
			case 1:
				v = 0xff
			}
			for i := 0; i < run && len(b) < n; i++ {
				b = append(b, v)
			}
		}
		return string(b)
	}
	idx := func(n int) string {
		// Indexes around the string's length in bytes and bits, either sign.
		lim := []int{n + 2, 8*n + 10}[rng.Intn(2)]
		return strconv.Itoa(rng.Intn(2*lim+1) - lim)
	}
	unit := func() []any {
		switch rng.Intn(3) {
		case 0:
			return []any{"BIT"}
		case 1:
			return []any{"BYTE"}
		}
		return nil
	}
	ftype := func() string {
		if rng.Intn(2) == 0 {
			return "i" + strconv.Itoa(1+rng.Intn(64))
		}
		return "u" + strconv.Itoa(1+rng.Intn(63))
	}
	fval := func() string {
		switch rng.Intn(4) {
		case 0:
			return strconv.FormatInt(rng.Int63(), 10)
		case 1:
			return strconv.FormatInt(-rng.Int63(), 10)
		}
		return strconv.Itoa(rng.Intn(600) - 300)
	}
	do := func(args ...any) {
		t.Helper()
		a, aerr := ours.Do(ctx, args...).Result()
		b, berr := ref.Do(ctx, args...).Result()
		if fmt.Sprint(aerr) != fmt.Sprint(berr) || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q:\nsvcdb %#v %v\nredis %#v %v (seed %d)", args, a, aerr, b, berr, seed)
		}
	}
	for round := 0; round < 40; round++ {
		for _, k := range keys[:4] {
			do("SET", k, randString())
		}
		for i := 0; i < 60; i++ {
			k := keys[rng.Intn(len(keys))]
			n := 80
			switch rng.Intn(7) {
			case 0:
				do(append([]any{"BITCOUNT", k, idx(n), idx(n)}, unit()...)...)
			case 1:
				do("BITPOS", k, rng.Intn(2))
			case 2:
				do(append([]any{"BITPOS", k, rng.Intn(2), idx(n), idx(n)}, unit()...)...)
			case 3:
				do("BITPOS", k, rng.Intn(2), idx(n))
			case 4:
				op := []string{"AND", "OR", "XOR", "NOT"}[rng.Intn(4)]
				args := []any{"BITOP", op, keys[rng.Intn(4)]}
				srcs := 1
				if op != "NOT" {
					srcs += rng.Intn(4)
				}
				for j := 0; j < srcs; j++ {
					args = append(args, keys[rng.Intn(len(keys))])
				}
				do(args...)
			case 5:
				do("SETBIT", keys[rng.Intn(4)], rng.Intn(8*n+16), rng.Intn(2))
			case 6:
				args := []any{"BITFIELD", keys[rng.Intn(4)]}
				for j := rng.Intn(5); j >= 0; j-- {
					switch rng.Intn(4) {
					case 0:
						args = append(args, "GET", ftype(), rng.Intn(8*n))
					case 1:
						args = append(args, "SET", ftype(), rng.Intn(8*n), fval())
					case 2:
						args = append(args, "INCRBY", ftype(), rng.Intn(8*n), fval())
					case 3:
						args = append(args, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[rng.Intn(3)])
					}
				}
				do(args...)
			}
		}
		for _, k := range keys {
			do("GET", k)
		}
	}
}
