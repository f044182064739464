// Package memdecay returns the Go heap's freed memory to the kernel once a
// burst of writes is over, as jemalloc's background thread returns Redis'
// dirty pages (Redis 7.0's jemalloc-bg-thread, on by default; jemalloc's
// dirty_decay_ms). svcdb's analog of that parameter switches it
// (cmd/svcdb; docs/performance.md, "Hashes under 0.8: where the last bytes
// go (issue 20)").
//
// Why it is needed: after a load the Go heap holds the load's garbage (the
// key indexes' old tables, buffers a batch outgrew) until the next
// collection, which a server that stops writing does not start for two
// minutes; and the pages that collection frees stay resident, because the
// runtime's background scavenger keeps up to 1.1 times the heap goal
// (twice the live heap at GOGC 100) mapped. Loaded with 1M small hashes,
// svcdb's RSS read 117 B/key 1 s after the load, 120 after the runtime's
// forced collection, and 113 after debug.FreeOSMemory.
//
// What it does: a goroutine reads the runtime's allocation counter every
// Tick (runtime/metrics: no stop-the-world, no allocation). Once the heap
// has taken at least a burst since the last release (MinBurst bytes and a
// BurstDivisor-th of the heap) and then allocated less than QuietRate for
// QuietFor, and whatever Busy reports (a key index rehashing) has ended,
// it calls debug.FreeOSMemory: a collection, then every free page
// returned. It never runs twice within MinInterval, nor within CostFactor
// times the last release's duration, so it spends at most 1/CostFactor of
// the wall time releasing. A workload that keeps allocating (writes) never
// sees it; one that allocates nothing (the hot path's reads) has nothing
// to release after the first time.
//
// What it must never do: take a shard's token, wait on a loop, or run on
// a path a command waits for. debug.FreeOSMemory blocks only this
// goroutine; the collection it starts runs concurrently with the loops and
// shards as the pacer's collections do (its pauses are the same two short
// stop-the-world phases), and its scavenging takes the page allocator's
// per-chunk locks, not the heap lock. It imports nothing of ours.
package memdecay

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Config tunes the decay; Default fills every field.
type Config struct {
	// Tick is how often the runtime's figures are read.
	Tick time.Duration
	// QuietFor, QuietRate, QuietDivisor and RateWindow: the burst is over
	// once the heap has allocated, for QuietFor, less than QuietRate bytes
	// per second and less than its recent rate (the average over about
	// RateWindow) divided by QuietDivisor. The second test keeps a steady
	// write load under QuietRate from reading as quiet: its rate is its
	// recent rate, so it never falls to a fraction of it (at memtier's 1:10
	// load at pipeline 1, 1 MiB/s, the first test alone forced a
	// collection and a scavenge every MinInterval for the whole load:
	// docs/performance.md, "What puts svcdb's p99.9 above Redis' at
	// pipeline 1").
	QuietFor     time.Duration
	QuietRate    int64
	QuietDivisor int64
	RateWindow   time.Duration
	// MinBurst and BurstDivisor: a release needs at least MinBurst bytes,
	// and at least the heap's objects / BurstDivisor, allocated since the
	// previous one (or since Run started).
	MinBurst     int64
	BurstDivisor int64
	// MinInterval and CostFactor: a release is at least MinInterval, and
	// CostFactor times the previous release's duration, after the
	// previous one.
	MinInterval time.Duration
	CostFactor  int64
	// Busy, if set, reports work in progress that will free memory when
	// it ends (cmd/svcdb: a key index rehashing, whose old table is
	// garbage once drained): a release waits for it, up to MaxWait after
	// the burst went quiet.
	Busy    func() bool
	MaxWait time.Duration
	// Release returns the memory: debug.FreeOSMemory unless a test sets
	// it.
	Release func()
	// OnRelease, if set, is told of each release when it is done.
	OnRelease func(Release)
}

// Default is the configuration cmd/svcdb runs: a tenth of a second between
// readings, 300 ms of under 2 MiB/s and under an eighth of the rate of the
// last 2 s or so to call a burst over, a burst of at
// least 8 MiB and a sixteenth of the heap, at most one release per 10 s
// and at most 5% of the wall time spent releasing, and up to 30 s of
// waiting for Busy.
func Default() Config {
	return Config{
		Tick:         100 * time.Millisecond,
		QuietFor:     300 * time.Millisecond,
		QuietRate:    2 << 20,
		QuietDivisor: 8,
		RateWindow:   2 * time.Second,
		MinBurst:     8 << 20,
		BurstDivisor: 16,
		MinInterval:  10 * time.Second,
		CostFactor:   20,
		MaxWait:      30 * time.Second,
		Release:      debug.FreeOSMemory,
	}
}

// Release is one release, as OnRelease and Stats report it.
type Release struct {
	At       time.Time
	Duration time.Duration
	// Burst is what the heap allocated since the previous release;
	// HeapBefore and HeapAfter its objects (garbage included) before and
	// after; Returned how much more the runtime had returned to the kernel
	// after (heap pages released, net of what it took back meanwhile).
	Burst, HeapBefore, HeapAfter, Returned int64
}

// Stats is what the decay has done since start.
type Stats struct {
	Releases int64
	Returned int64 // bytes, summed over the releases
	Last     Release
}

// Decay is one process' decay. Run it once on its own goroutine; the other
// methods may be called from any goroutine.
type Decay struct {
	cfg      Config
	disabled atomic.Bool
	releases atomic.Int64
	returned atomic.Int64
	last     atomic.Pointer[Release]
}

// New returns an enabled Decay with cfg (see Default).
func New(cfg Config) *Decay {
	if cfg.Release == nil {
		cfg.Release = debug.FreeOSMemory
	}
	return &Decay{cfg: cfg}
}

// SetEnabled switches releasing on or off; off, Run only keeps reading
// the allocation counter.
func (d *Decay) SetEnabled(on bool) { d.disabled.Store(!on) }

// Enabled reports whether releasing is on.
func (d *Decay) Enabled() bool { return !d.disabled.Load() }

// Stats returns what the decay has done.
func (d *Decay) Stats() Stats {
	s := Stats{Releases: d.releases.Load(), Returned: d.returned.Load()}
	if l := d.last.Load(); l != nil {
		s.Last = *l
	}
	return s
}

// The runtime/metrics names read, in sample's order.
var sampleNames = [...]string{
	"/gc/heap/allocs:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/released:bytes",
}

// sample is one reading of the runtime.
type sample struct {
	allocs, objects, released int64
}

type reader struct{ ms []metrics.Sample }

func newReader() *reader {
	r := &reader{ms: make([]metrics.Sample, len(sampleNames))}
	for i, n := range sampleNames {
		r.ms[i].Name = n
	}
	return r
}

func (r *reader) read() sample {
	metrics.Read(r.ms)
	v := func(i int) int64 {
		if r.ms[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(r.ms[i].Value.Uint64())
	}
	return sample{allocs: v(0), objects: v(1), released: v(2)}
}

// Run reads the runtime every Tick and releases when due, until stop is
// closed.
func (d *Decay) Run(stop <-chan struct{}) {
	r := newReader()
	p := newPolicy(d.cfg, r.read(), time.Now())
	t := time.NewTicker(d.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			s := r.read()
			busy := d.cfg.Busy != nil && d.cfg.Busy()
			if !p.due(s, now, busy) || d.disabled.Load() {
				continue
			}
			start := time.Now()
			d.cfg.Release()
			end := time.Now()
			after := r.read()
			rel := Release{At: start, Duration: end.Sub(start), Burst: s.allocs - p.allocsAtRelease,
				HeapBefore: s.objects, HeapAfter: after.objects, Returned: max(after.released-s.released, 0)}
			p.released(after, start, end)
			d.releases.Add(1)
			d.returned.Add(rel.Returned)
			d.last.Store(&rel)
			if d.cfg.OnRelease != nil {
				d.cfg.OnRelease(rel)
			}
		}
	}
}

// policy decides when a release is due, from the readings alone (so tests
// can drive it with made-up ones).
type policy struct {
	cfg             Config
	prev            sample
	prevAt          time.Time
	busyAt          time.Time // the last tick the heap allocated too fast to be quiet
	rate            float64   // bytes/s, averaged over about RateWindow (an exponential moving average)
	allocsAtRelease int64     // the allocation counter after the last release (or at start)
	notBefore       time.Time // no release before this
}

func newPolicy(cfg Config, s sample, now time.Time) *policy {
	return &policy{cfg: cfg, prev: s, prevAt: now, busyAt: now, allocsAtRelease: s.allocs}
}

// due takes a reading and Busy's answer and says whether to release now.
func (p *policy) due(s sample, now time.Time, busy bool) bool {
	dt := now.Sub(p.prevAt)
	if dt <= 0 {
		return false
	}
	rate := float64(s.allocs-p.prev.allocs) / dt.Seconds()
	if p.cfg.RateWindow > 0 {
		p.rate += (rate - p.rate) * min(dt.Seconds()/p.cfg.RateWindow.Seconds(), 1)
	}
	// Not quiet: at QuietRate or more, or allocating at all while not below
	// a QuietDivisor-th of the recent rate (a steady load: rate ≈ p.rate).
	if rate >= float64(p.cfg.QuietRate) || (rate > 0 && rate*float64(max(p.cfg.QuietDivisor, 1)) >= p.rate) {
		p.busyAt = now
	}
	p.prev, p.prevAt = s, now
	burst := s.allocs - p.allocsAtRelease
	quiet := now.Sub(p.busyAt)
	return quiet >= p.cfg.QuietFor && (!busy || quiet >= p.cfg.QuietFor+p.cfg.MaxWait) &&
		!now.Before(p.notBefore) &&
		burst >= p.cfg.MinBurst && burst >= s.objects/max(p.cfg.BurstDivisor, 1)
}

// released records a release that ran from start to end, with after read
// at its end.
func (p *policy) released(after sample, start, end time.Time) {
	p.allocsAtRelease = after.allocs
	p.prev, p.prevAt = after, end
	p.notBefore = start.Add(max(p.cfg.MinInterval, time.Duration(p.cfg.CostFactor)*end.Sub(start)))
}
