package shard

import (
	"fmt"
	"sync"
	"time"
)

// Hot-shard analysis. Every shard counts the commands it executes, and how
// many of them read (FlagReadonly) or write (FlagWrite), in its own atomic
// counters (shardStats, written only by the token holder). One sampler
// goroutine per Runtime reads those totals once per second and records each
// shard's per-second deltas in a 60-slot ring; HotShards reads the ring. The
// ring's mutex is taken only by the sampler and by readers, never by the data
// path.

// HotWindow is how many seconds of per-shard rates the ring keeps.
const HotWindow = 60

// Status values of a shard in a HotShardReport.
const (
	StatusHot  = "HOT"
	StatusWarm = "WARM"
	StatusOK   = "OK"
)

// ShardHeat is one shard's traffic over a HotShardReport's period.
type ShardHeat struct {
	ID           int
	OpsPerSec    float64
	ReadsPerSec  float64
	WritesPerSec float64
	Percentage   float64 // share of all shards' ops, 0..100
	Keys         int64   // keys in all databases, now
	QueueDepth   int     // batches queued, now
	Status       string  // StatusHot, StatusWarm or StatusOK
}

// HotShardReport is DEBUG HOTSHARDS' and INFO hotshards' analysis.
type HotShardReport struct {
	PeriodSecs      int // seconds really analysed: min(asked, recorded)
	NumShards       int
	TotalOpsPerSec  float64
	ImbalanceRatio  float64 // busiest shard's ops/sec over the mean; 0 when idle
	HotCount        int
	WarmCount       int
	Shards          []ShardHeat
	Recommendations []string
}

// hotCounts are one shard's command counts: cumulative totals, or the deltas
// of one ring slot.
type hotCounts struct {
	cmds, reads, writes int64
}

func (a hotCounts) minus(b hotCounts) hotCounts {
	return hotCounts{max(a.cmds-b.cmds, 0), max(a.reads-b.reads, 0), max(a.writes-b.writes, 0)}
}

type hotSlot struct {
	dur time.Duration // time the slot covers (about a second)
	per []hotCounts   // by shard
}

// hotRing holds the last HotWindow per-second deltas of every shard.
type hotRing struct {
	mu     sync.Mutex
	last   []hotCounts // totals at lastAt
	lastAt time.Time   // zero until the first record
	slots  [HotWindow]hotSlot
	head   int // next slot written
	filled int // slots holding data, 0..HotWindow
}

func newHotRing(shards int) *hotRing {
	r := &hotRing{last: make([]hotCounts, shards)}
	for i := range r.slots {
		r.slots[i].per = make([]hotCounts, shards)
	}
	return r
}

// record takes every shard's totals at now. The first call only sets the
// baseline; each later one fills a slot with the deltas since the previous.
func (r *hotRing) record(now time.Time, totals []hotCounts) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.lastAt.IsZero() {
		sl := &r.slots[r.head]
		sl.dur = max(now.Sub(r.lastAt), 0)
		for i, t := range totals {
			sl.per[i] = t.minus(r.last[i])
		}
		r.head = (r.head + 1) % HotWindow
		r.filled = min(r.filled+1, HotWindow)
	}
	copy(r.last, totals)
	r.lastAt = now
}

// window sums the newest min(period, filled) slots: the number of slots used,
// the time they cover and each shard's counts over it.
func (r *hotRing) window(period int) (used int, dur time.Duration, sums []hotCounts) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sums = make([]hotCounts, len(r.last))
	used = min(max(period, 0), r.filled)
	for k := 1; k <= used; k++ {
		sl := &r.slots[(r.head-k+HotWindow)%HotWindow]
		dur += sl.dur
		for i, c := range sl.per {
			sums[i].cmds += c.cmds
			sums[i].reads += c.reads
			sums[i].writes += c.writes
		}
	}
	return used, dur, sums
}

// hotTotals reads every shard's cumulative counters.
func (rt *Runtime) hotTotals() []hotCounts {
	out := make([]hotCounts, len(rt.shards))
	for i, s := range rt.shards {
		reads, writes := s.stats.reads.Load(), s.stats.writes.Load()
		out[i] = hotCounts{reads + writes + s.stats.other.Load(), reads, writes}
	}
	return out
}

// sampleHot records the shards' totals in the ring; the sampler calls it once
// per second, tests whenever they like.
func (rt *Runtime) sampleHot(now time.Time) { rt.hot.record(now, rt.hotTotals()) }

// hotSampler is the one goroutine that fills the ring.
func (rt *Runtime) hotSampler() {
	defer rt.wg.Done()
	rt.sampleHot(time.Now())
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-rt.stop:
			return
		case now := <-t.C:
			rt.sampleHot(now)
		}
	}
}

// HotShards analyses the last periodSecs seconds (at most the HotWindow the
// ring keeps, at most what has been recorded) of per-shard traffic. A shard is
// HOT when its ops/sec exceed the fair share (total / shards) by more than
// hotPct percent, WARM when by more than warmPct percent.
func (rt *Runtime) HotShards(periodSecs, hotPct, warmPct int) HotShardReport {
	used, dur, sums := rt.hot.window(min(periodSecs, HotWindow))
	return buildHotReport(used, dur, sums, rt.Snapshots(), hotPct, warmPct)
}

func buildHotReport(used int, dur time.Duration, sums []hotCounts, snaps []Snapshot, hotPct, warmPct int) HotShardReport {
	n := len(sums)
	rep := HotShardReport{PeriodSecs: used, NumShards: n, Shards: make([]ShardHeat, n), Recommendations: []string{}}
	secs := dur.Seconds()
	rate := func(v int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(v) / secs
	}
	var maxOps float64
	for i, c := range sums {
		h := &rep.Shards[i]
		h.ID = i
		h.OpsPerSec, h.ReadsPerSec, h.WritesPerSec = rate(c.cmds), rate(c.reads), rate(c.writes)
		if i < len(snaps) {
			h.Keys = snaps[i].TotalKeys()
			h.QueueDepth = snaps[i].QueueDepth
		}
		rep.TotalOpsPerSec += h.OpsPerSec
		maxOps = max(maxOps, h.OpsPerSec)
	}
	fair := 0.0
	if n > 0 {
		fair = rep.TotalOpsPerSec / float64(n)
	}
	if fair > 0 {
		rep.ImbalanceRatio = maxOps / fair
	}
	for i := range rep.Shards {
		h := &rep.Shards[i]
		h.Status = StatusOK
		if rep.TotalOpsPerSec > 0 {
			h.Percentage = 100 * h.OpsPerSec / rep.TotalOpsPerSec
		}
		switch {
		case fair > 0 && h.OpsPerSec > fair*(1+float64(hotPct)/100):
			h.Status = StatusHot
			rep.HotCount++
		case fair > 0 && h.OpsPerSec > fair*(1+float64(warmPct)/100):
			h.Status = StatusWarm
			rep.WarmCount++
		}
	}
	fairPct := 0.0
	if n > 0 {
		fairPct = 100 / float64(n)
	}
	for _, h := range rep.Shards {
		switch h.Status {
		case StatusHot:
			rep.Recommendations = append(rep.Recommendations, fmt.Sprintf(
				"shard %d is HOT: %.1f%% of ops (fair share %.1f%%); if its busy keys share a {hash tag}, spread them over several tags, or split hot keys",
				h.ID, h.Percentage, fairPct))
			if h.WritesPerSec > h.ReadsPerSec {
				rep.Recommendations = append(rep.Recommendations, fmt.Sprintf(
					"shard %d's load is mostly writes: batching them (MSET, pipelining) lowers its per-command cost", h.ID))
			}
		case StatusWarm:
			rep.Recommendations = append(rep.Recommendations, fmt.Sprintf(
				"shard %d is WARM: %.1f%% of ops (fair share %.1f%%); watch its key distribution", h.ID, h.Percentage, fairPct))
		}
	}
	if rep.HotCount > 0 {
		rep.Recommendations = append(rep.Recommendations,
			"if the hot shards' traffic comes from many keys, more shards ([server] shards) spread it thinner; a single hot key must be split (or cached by clients) instead")
	}
	return rep
}
