package netloop_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every way a command runs goes through the runtime's one entry point, so
// the hot-shard counters see them all: an MSET across shards counts once on
// each shard of its keys, an EXEC body's commands on the shards of their
// keys, and a served BLPOP once, on the shard that served it (not when it
// parked). Before the entry point only single-shard commands were counted.
func TestHotShardsCountEveryExecutionPath(t *testing.T) {
	const shards = 4
	ts := startServer(t, withShards(shards))
	// Keys on shards 0, 1 and 2 only: shard 3 must stay at zero.
	byShard := map[int][]string{}
	for i := 0; len(byShard[0]) < 4 || len(byShard[1]) < 4 || len(byShard[2]) < 4; i++ {
		k := "k:" + strconv.Itoa(i)
		if sh := ts.RT.ShardOf([]byte(k)); sh < 3 && len(byShard[sh]) < 4 {
			byShard[sh] = append(byShard[sh], k)
		}
	}
	type counts struct{ reads, writes int64 }
	want := make([]counts, shards)

	c := dialRaw(t, ts.Addr)
	// 1. MSET of 12 keys over three shards: one write on each of them.
	msetArgs := []string{"MSET"}
	for sh := range 3 {
		for _, k := range byShard[sh] {
			msetArgs = append(msetArgs, k, "v")
		}
	}
	const msets = 300
	c.write(strings.Repeat(multibulk(msetArgs...), msets))
	for range msets {
		if v := c.read(); v.Type != '+' {
			t.Fatalf("MSET: %c %q", v.Type, v.Str)
		}
	}
	for sh := range 3 {
		want[sh].writes += msets
	}

	// 2. MULTI/EXEC: SET (shard 0), GET (shard 1), MSET over shards 1 and 2.
	const execs = 100
	for range execs {
		for _, args := range [][]string{{"MULTI"}, {"SET", byShard[0][0], "x"}, {"GET", byShard[1][0]},
			{"MSET", byShard[1][1], "y", byShard[2][1], "z"}} {
			if v := c.do(args...); v.Type == '-' {
				t.Fatalf("%v: %q", args, v.Str)
			}
		}
		if v := c.do("EXEC"); v.Type != '*' || len(v.Elems) != 3 {
			t.Fatalf("EXEC: %c %q %v", v.Type, v.Str, v.Elems)
		}
	}
	want[0].writes += execs
	want[1].reads += execs
	want[1].writes += execs
	want[2].writes += execs

	// 3. A BLPOP that parks, then is served by an RPUSH on its key's shard:
	// the RPUSH and the served BLPOP are one write each there.
	list := "list"
	for i := 0; ts.RT.ShardOf([]byte(list)) != 2; i++ {
		list = "list:" + strconv.Itoa(i)
	}
	const blpops = 5
	blocker := dialRaw(t, ts.Addr)
	admin := dialRaw(t, ts.Addr)
	for i := range blpops {
		blocker.write(multibulk("BLPOP", list, "0"))
		eventually(t, 5*time.Second, func() bool { return infoInt(t, admin.info("clients"), "blocked_clients") == 1 },
			"BLPOP %d never blocked", i)
		if v := c.do("RPUSH", list, "e"); v.Type != ':' {
			t.Fatalf("RPUSH: %c %q", v.Type, v.Str)
		}
		if v := blocker.read(); v.Type != '*' || len(v.Elems) != 2 || string(v.Elems[1].Str) != "e" {
			t.Fatalf("BLPOP: %c %q %v", v.Type, v.Str, v.Elems)
		}
	}
	want[2].writes += 2 * blpops

	// The cumulative counters DEBUG HOTSHARDS and INFO hotshards derive their
	// rates from match the commands sent, shard by shard.
	var wantTotal int64
	for i, sn := range ts.RT.Snapshots() {
		w := want[i]
		wantTotal += w.reads + w.writes
		if sn.Reads != w.reads || sn.Writes != w.writes || sn.Commands != w.reads+w.writes {
			t.Errorf("shard %d counters: commands=%d reads=%d writes=%d, want reads=%d writes=%d",
				i, sn.Commands, sn.Reads, sn.Writes, w.reads, w.writes)
		}
	}

	// Wait for two samples after the traffic, so the ring holds all of it.
	m := fields(t, c.do("DEBUG", "HOTSHARDS", "PERIOD", "60"), false)
	p0 := m["period_secs"].Int
	eventually(t, 10*time.Second, func() bool {
		m = fields(t, c.do("DEBUG", "HOTSHARDS", "PERIOD", "60"), false)
		return m["period_secs"].Int >= p0+2
	}, "the hot-shard sampler recorded nothing for 10s")
	total := num(t, m["total_ops_per_sec"], false)
	if total <= 0 {
		t.Fatalf("DEBUG HOTSHARDS: total_ops_per_sec = %v", total)
	}
	shardsV := m["shards"]
	if len(shardsV.Elems) != shards {
		t.Fatalf("DEBUG HOTSHARDS: %d shards", len(shardsV.Elems))
	}
	var sum float64
	for i, sv := range shardsV.Elems {
		h := fields(t, sv, false)
		ops, reads, writes := num(t, h["ops_per_sec"], false), num(t, h["reads_per_sec"], false), num(t, h["writes_per_sec"], false)
		sum += ops
		w := want[i]
		n := w.reads + w.writes
		if (n == 0) != (ops == 0) || (w.reads == 0) != (reads == 0) || (w.writes == 0) != (writes == 0) {
			t.Errorf("DEBUG HOTSHARDS shard %d: ops=%v reads=%v writes=%v, want counts reads=%d writes=%d", i, ops, reads, writes, w.reads, w.writes)
		}
		// Every rate is a count over the same window: the shares are exact
		// up to the reply's two decimals.
		if pct, wantPct := num(t, h["percentage"], false), 100*float64(n)/float64(wantTotal); math.Abs(pct-wantPct) > 0.5 {
			t.Errorf("DEBUG HOTSHARDS shard %d: percentage %.2f, want %.2f", i, pct, wantPct)
		}
	}
	if math.Abs(sum-total) > 0.05*float64(shards) {
		t.Errorf("DEBUG HOTSHARDS: shards sum to %v ops/s, total_ops_per_sec %v", sum, total)
	}

	info := string(c.do("INFO", "hotshards").Str)
	for i, w := range want {
		line := fmt.Sprintf("shard%d:ops_per_sec=", i)
		at := strings.Index(info, line)
		if at < 0 {
			t.Fatalf("INFO hotshards: no %q in\n%s", line, info)
		}
		v, _, _ := strings.Cut(info[at+len(line):], ",")
		ops, err := strconv.ParseFloat(v, 64)
		if err != nil || (w.reads+w.writes == 0) != (ops == 0) {
			t.Errorf("INFO hotshards shard %d: ops_per_sec=%q, want counts reads=%d writes=%d", i, v, w.reads, w.writes)
		}
	}
}
