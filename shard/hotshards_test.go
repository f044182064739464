package shard

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*max(1, math.Abs(b)) }

// TestHotRingArithmetic feeds totals straight into the ring with a made-up
// clock: deltas per slot, sums over the newest slots, clamping to what was
// recorded, and wrap-around after HotWindow seconds.
func TestHotRingArithmetic(t *testing.T) {
	r := newHotRing(2)
	t0 := time.Unix(1000, 0)
	if used, dur, sums := r.window(10); used != 0 || dur != 0 || sums[0] != (hotCounts{}) {
		t.Fatalf("empty ring: used=%d dur=%v sums=%v", used, dur, sums)
	}
	r.record(t0, []hotCounts{{100, 60, 40}, {7, 7, 0}}) // baseline only
	if used, _, _ := r.window(10); used != 0 {
		t.Fatalf("baseline filled a slot: used=%d", used)
	}
	// Second k (1..3): shard 0 does 10*k commands, shard 1 one per second.
	tot := []hotCounts{{100, 60, 40}, {7, 7, 0}}
	for k := int64(1); k <= 3; k++ {
		tot[0] = hotCounts{tot[0].cmds + 10*k, tot[0].reads + 5*k, tot[0].writes + 5*k}
		tot[1] = hotCounts{tot[1].cmds + 1, tot[1].reads + 1, tot[1].writes}
		r.record(t0.Add(time.Duration(k)*time.Second), tot)
	}
	used, dur, sums := r.window(2)
	if used != 2 || dur != 2*time.Second {
		t.Fatalf("window(2): used=%d dur=%v", used, dur)
	}
	if want := (hotCounts{50, 25, 25}); sums[0] != want { // seconds 2 and 3
		t.Errorf("window(2) shard 0 = %v, want %v", sums[0], want)
	}
	if want := (hotCounts{2, 2, 0}); sums[1] != want {
		t.Errorf("window(2) shard 1 = %v, want %v", sums[1], want)
	}
	used, dur, sums = r.window(60) // clamped to the 3 recorded seconds
	if used != 3 || dur != 3*time.Second || sums[0].cmds != 60 {
		t.Errorf("window(60): used=%d dur=%v sums=%v", used, dur, sums)
	}
	// A counter that went backwards (it never should) gives 0, not a negative rate.
	r.record(t0.Add(4*time.Second), []hotCounts{{0, 0, 0}, tot[1]})
	if _, _, sums = r.window(1); sums[0] != (hotCounts{}) {
		t.Errorf("backwards counter: %v", sums[0])
	}
	// Wrap around: 70 more seconds of exactly 3 commands per second on shard 1.
	for k := 5; k < 75; k++ {
		tot[1].cmds += 3
		r.record(t0.Add(time.Duration(k)*time.Second), []hotCounts{{}, tot[1]})
	}
	used, dur, sums = r.window(100)
	if used != HotWindow || dur != HotWindow*time.Second || sums[1].cmds != 3*HotWindow {
		t.Errorf("after wrap: used=%d dur=%v sums=%v", used, dur, sums)
	}
}

func TestBuildHotReport(t *testing.T) {
	snaps := make([]Snapshot, 4)
	snaps[0].Keys[0], snaps[0].Keys[3], snaps[2].QueueDepth = 5, 2, 9
	// Over 2 s: shard 0 900 ops (800 reads, 100 writes), the others 40/30/30.
	sums := []hotCounts{{900, 800, 100}, {40, 20, 20}, {30, 30, 0}, {30, 0, 30}}
	rep := buildHotReport(2, 2*time.Second, sums, snaps, 100, 50)
	if rep.PeriodSecs != 2 || rep.NumShards != 4 || !near(rep.TotalOpsPerSec, 500) {
		t.Fatalf("header: %+v", rep)
	}
	if !near(rep.ImbalanceRatio, 450/125.0) || rep.HotCount != 1 || rep.WarmCount != 0 {
		t.Errorf("ratio=%v hot=%d warm=%d", rep.ImbalanceRatio, rep.HotCount, rep.WarmCount)
	}
	h := rep.Shards[0]
	if h.Status != StatusHot || !near(h.OpsPerSec, 450) || !near(h.ReadsPerSec, 400) || !near(h.WritesPerSec, 50) ||
		!near(h.Percentage, 90) || h.Keys != 7 {
		t.Errorf("shard 0: %+v", h)
	}
	if rep.Shards[2].QueueDepth != 9 {
		t.Errorf("shard 2 queue depth: %+v", rep.Shards[2])
	}
	for _, h := range rep.Shards[1:] {
		if h.Status != StatusOK {
			t.Errorf("shard %d: %s, want OK", h.ID, h.Status)
		}
	}
	if len(rep.Recommendations) == 0 {
		t.Error("a HOT shard and no recommendation")
	}

	// Fair share 100: 160 is WARM (> 150) but not HOT (> 200).
	rep = buildHotReport(1, time.Second, []hotCounts{{160, 0, 0}, {80, 0, 0}, {80, 0, 0}, {80, 0, 0}}, nil, 100, 50)
	if rep.Shards[0].Status != StatusWarm || rep.WarmCount != 1 || rep.HotCount != 0 {
		t.Errorf("warm case: %+v", rep)
	}

	// Balanced and idle: no HOT, no WARM, no advice, ratio 0 when idle.
	rep = buildHotReport(2, 2*time.Second, []hotCounts{{10, 0, 0}, {10, 0, 0}}, nil, 100, 50)
	if rep.HotCount+rep.WarmCount != 0 || len(rep.Recommendations) != 0 || !near(rep.ImbalanceRatio, 1) {
		t.Errorf("balanced: %+v", rep)
	}
	rep = buildHotReport(0, 0, []hotCounts{{}, {}}, nil, 100, 50)
	if rep.ImbalanceRatio != 0 || rep.TotalOpsPerSec != 0 || rep.Shards[0].Status != StatusOK || rep.Recommendations == nil {
		t.Errorf("idle: %+v", rep)
	}
}

// TestHotShardsCountsReadsAndWrites runs real commands and samples by hand
// (the runtime is not started, so no sampler competes).
func TestHotShardsCountsReadsAndWrites(t *testing.T) {
	table := command.New()
	rt, err := New(Config{Shards: 4}, table)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	p := newProducer(rt, table)
	t0 := time.Now()
	rt.sampleHot(t0)
	for i := range 30 {
		p.do("SET", "{hot}:"+strconv.Itoa(i), "v")
		p.do("GET", "{hot}:"+strconv.Itoa(i))
		p.do("GET", "{hot}:"+strconv.Itoa(i))
	}
	rt.sampleHot(t0.Add(2 * time.Second))
	hot := rt.ShardOf([]byte("{hot}"))
	rep := rt.HotShards(10, 100, 50)
	if rep.PeriodSecs != 1 {
		t.Errorf("period used = %d, want 1 (one recorded slot)", rep.PeriodSecs)
	}
	h := rep.Shards[hot]
	if !near(h.OpsPerSec, 45) || !near(h.ReadsPerSec, 30) || !near(h.WritesPerSec, 15) || h.Keys != 30 ||
		h.Status != StatusHot || !near(h.Percentage, 100) || !near(rep.ImbalanceRatio, 4) {
		t.Errorf("hot shard %d: %+v (report %+v)", hot, h, rep)
	}
	sn := rt.shards[hot].Snapshot()
	if sn.Reads != 60 || sn.Writes != 30 || sn.Commands != 90 {
		t.Errorf("snapshot counters: %+v", sn)
	}
}
