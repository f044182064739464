package shard

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func zb(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// TestSmallZSetNoAllocs checks the listpack's promise: ZADD of an existing
// member, ZSCORE, ZRANK, ZRANGE and ZINCRBY of a small sorted set allocate
// nothing; nor does ZADD of an existing member of a skiplist.
func TestSmallZSetNoAllocs(t *testing.T) {
	e := newExecer(t)
	zadd := e.cmd("zadd")
	e.run(zadd, zb("zadd", "small", "1", "a", "2", "b", "3", "c", "4.5", "d")...)
	big := zb("zadd", "big")
	for i := range 300 {
		big = append(big, []byte(strconv.Itoa(i)), []byte("member:"+strconv.Itoa(i)))
	}
	e.run(zadd, big...)
	for _, c := range []struct {
		name string
		args [][]byte
	}{
		{"ZADD existing, same score", zb("zadd", "small", "2", "b")},
		{"ZADD existing, new score", zb("zadd", "small", "2.5", "b")},
		{"ZINCRBY existing", zb("zincrby", "small", "0", "c")},
		{"ZSCORE", zb("zscore", "small", "c")},
		{"ZRANK", zb("zrank", "small", "d")},
		{"ZRANGE", zb("zrange", "small", "0", "-1", "WITHSCORES")},
		{"ZRANGE REV", zb("zrange", "small", "0", "-1", "REV")},
		{"ZRANGEBYSCORE", zb("zrangebyscore", "small", "(1", "+inf", "WITHSCORES", "LIMIT", "0", "2")},
		{"ZCARD", zb("zcard", "small")},
		{"ZADD skiplist existing", zb("zadd", "big", "7", "member:7")},
		{"ZADD skiplist move", zb("zadd", "big", "1000", "member:8")},
		{"ZSCORE skiplist", zb("zscore", "big", "member:9")},
		{"ZRANGE skiplist", zb("zrange", "big", "100", "110", "WITHSCORES")},
	} {
		cmd := e.cmd(string(c.args[0]))
		if n := testing.AllocsPerRun(200, func() { e.run(cmd, c.args...) }); n != 0 {
			t.Errorf("%s: %.1f allocations per call, want 0", c.name, n)
		}
	}
}

// BenchmarkZAdd mirrors redis-benchmark's sorted set tests: ZADD of random
// members into one large key (a skiplist) and ZPOPMIN from it, plus ZADD
// and ZSCORE on small listpack sets.
func BenchmarkZAdd(b *testing.B) {
	const nmembers = 100000
	members := make([][]byte, nmembers)
	for i := range members {
		members[i] = []byte("element:" + strconv.Itoa(i))
	}
	score := []byte("0")
	b.Run("ZADD big", func(b *testing.B) {
		e := newExecer(b)
		zadd := e.cmd("zadd")
		key := []byte("myzset")
		name := []byte("zadd")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(zadd, name, key, score, members[i%nmembers])
			i++
		}
	})
	// redis-benchmark's ZADD with -r: a random score for a random member of
	// a full set, so nearly every call moves a node (unlink and relink).
	b.Run("ZADD big random", func(b *testing.B) {
		e := newExecer(b)
		zadd := e.cmd("zadd")
		key := []byte("myzset")
		name := []byte("zadd")
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range nmembers {
			e.run(zadd, name, key, []byte(strconv.Itoa(rng.IntN(nmembers))), members[i])
		}
		// The arguments are built in place, as they sit in a connection's
		// read buffer: only the set's own memory is cold.
		member, score := []byte("element:"), []byte(nil)
		b.ReportAllocs()
		for b.Loop() {
			member = strconv.AppendInt(member[:len("element:")], int64(rng.IntN(nmembers)), 10)
			score = strconv.AppendInt(score[:0], int64(rng.IntN(nmembers)), 10)
			e.run(zadd, name, key, score, member)
		}
	})
	b.Run("ZPOPMIN big", func(b *testing.B) {
		e := newExecer(b)
		zadd, zpopmin := e.cmd("zadd"), e.cmd("zpopmin")
		key := []byte("myzset")
		args := [][]byte{[]byte("zadd"), key}
		for i := range nmembers {
			args = append(args, []byte(strconv.Itoa(i)), members[i])
		}
		e.run(zadd, args...)
		name := []byte("zpopmin")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%nmembers == nmembers-1 {
				b.StopTimer()
				e.run(zadd, args...)
				b.StartTimer()
			}
			e.run(zpopmin, name, key)
			i++
		}
	})
	b.Run("ZADD small", func(b *testing.B) {
		e := newExecer(b)
		zadd := e.cmd("zadd")
		keys := make([][]byte, 1000)
		for i := range keys {
			keys[i] = []byte("small:" + strconv.Itoa(i))
			e.run(zadd, []byte("zadd"), keys[i], score, members[0])
		}
		name := []byte("zadd")
		scores := zb("0", "1", "2", "3", "4", "5", "6")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(zadd, name, keys[i%len(keys)], scores[i%7], members[i%64])
			i++
		}
	})
	b.Run("ZSCORE small", func(b *testing.B) {
		e := newExecer(b)
		zadd, zscore := e.cmd("zadd"), e.cmd("zscore")
		key := []byte("small")
		for i := range 64 {
			e.run(zadd, []byte("zadd"), key, []byte(strconv.Itoa(i)), members[i])
		}
		name := []byte("zscore")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e.run(zscore, name, key, members[i%64])
			i++
		}
	})
}
