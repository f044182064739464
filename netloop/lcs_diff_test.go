package netloop_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestLCSDifferential runs LCS with random options on random strings over
// small alphabets (many equal subsequences, so the choice among them is
// tested) against svcdb (4 shards) and a real
// redis-server: replies must be identical.
func TestLCSDifferential(t *testing.T) {
	ts := startServer(t, withShards(4))
	raddr := redistest.Start(t)
	ctx := context.Background()
	ours := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2, PoolSize: 1})
	ref := redis.NewClient(&redis.Options{Addr: raddr, Protocol: 2, PoolSize: 1})
	defer ours.Close()
	defer ref.Close()
	seed := int64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	str := func() string {
		alpha := "abcdefgh"[:1+rng.Intn(8)]
		b := make([]byte, rng.Intn(60))
		for i := range b {
			b[i] = alpha[rng.Intn(len(alpha))]
		}
		return string(b)
	}
	for i := 0; i < 300; i++ {
		args := []any{"mset", "ka", str(), "kb", str()}
		ours.Do(ctx, args...)
		ref.Do(ctx, args...)
		cmd := []any{"lcs", "ka", "kb"}
		switch rng.Intn(4) {
		case 0:
			cmd = append(cmd, "len")
		case 1:
			cmd = append(cmd, "idx")
		case 2:
			cmd = append(cmd, "idx", "withmatchlen", "minmatchlen", rng.Intn(4))
		}
		a, errA := ours.Do(ctx, cmd...).Result()
		b, errB := ref.Do(ctx, cmd...).Result()
		if fmt.Sprint(a, errA) != fmt.Sprint(b, errB) {
			t.Fatalf("%v on %q:\n svcdb        %v %v\n redis-server %v %v", cmd, args, a, errA, b, errB)
		}
	}
}
