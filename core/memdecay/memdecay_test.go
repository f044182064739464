package memdecay

import (
	"runtime"
	"testing"
	"time"
)

const mib = 1 << 20

// drive feeds p one reading per tick and returns the ticks (1-based) at
// which it said a release was due, recording each release as instant.
func drive(p *policy, start time.Time, tick time.Duration, readings []sample) []int {
	return driveBusy(p, start, tick, readings, 0)
}

// driveBusy is drive with Busy reporting true up to tick busyUntil.
func driveBusy(p *policy, start time.Time, tick time.Duration, readings []sample, busyUntil int) []int {
	var due []int
	for i, s := range readings {
		now := start.Add(time.Duration(i+1) * tick)
		if p.due(s, now, busyUntil > 0 && i+1 <= busyUntil) {
			due = append(due, i+1)
			p.released(s, now, now)
		}
	}
	return due
}

// heap is a made-up heap: allocs grows by what each tick allocates.
func heap(objects int64, perTick ...int64) []sample {
	out := make([]sample, len(perTick))
	var allocs int64
	for i, a := range perTick {
		allocs += a
		out[i] = sample{allocs: allocs, objects: objects}
	}
	return out
}

func repeat(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestPolicyReleasesOnceAfterABurst(t *testing.T) {
	cfg := Default()
	start := time.Unix(1000, 0)
	// 2 s of loading at 100 MiB a tick, then quiet (nothing allocated)
	// for 30 s.
	ticks := append(repeat(20, 100*mib), repeat(300, 0)...)
	got := drive(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(1000*mib, ticks...))
	// Quiet from tick 21 on; 300 ms of it is tick 23.
	if len(got) != 1 || got[0] != 23 {
		t.Fatalf("releases at ticks %v, want [23]: one, 300 ms after the burst", got)
	}
}

func TestPolicyWaitsWhileBusy(t *testing.T) {
	cfg := Default()
	start := time.Unix(1000, 0)
	ticks := append(repeat(20, 100*mib), repeat(600, 0)...)
	// Busy (an index rehashing) until tick 60: the release waits for it.
	got := driveBusy(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(1000*mib, ticks...), 60)
	if len(got) != 1 || got[0] != 61 {
		t.Fatalf("releases at ticks %v, want [61]: once Busy ended", got)
	}
	// Busy for ever: it waits MaxWait (30 s) past the 300 ms of quiet.
	got = driveBusy(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(1000*mib, ticks...), 1<<30)
	if len(got) != 1 || got[0] != 20+3+300 {
		t.Fatalf("releases at ticks %v, want [323]: MaxWait after the quiet began", got)
	}
}

func TestPolicyWaitsWhileTheHeapAllocates(t *testing.T) {
	cfg := Default()
	start := time.Unix(1000, 0)
	// A steady write load: 1 MiB a tick (10 MiB/s, over QuietRate) for
	// 60 s never goes quiet, however much it allocates.
	got := drive(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(100*mib, repeat(600, mib)...))
	if len(got) != 0 {
		t.Fatalf("released at ticks %v during a steady load", got)
	}
}

// TestPolicyWaitsWhileASlowLoadAllocates: a steady write load under
// QuietRate (memtier's 1:10 at pipeline 1 allocates about 1 MiB/s) is not a
// burst that ended: no release however long it runs. A burst followed by
// such a trickle still gets its release once the burst is over.
func TestPolicyWaitsWhileASlowLoadAllocates(t *testing.T) {
	cfg := Default()
	start := time.Unix(1000, 0)
	got := drive(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(8*mib, repeat(600, mib/10)...))
	if len(got) != 0 {
		t.Fatalf("released at ticks %v during a steady 1 MiB/s load", got)
	}
	// 2 s at 100 MiB a tick, then the trickle: released once the burst
	// is over, and not again within the 10 s after it.
	ticks := append(repeat(20, 100*mib), repeat(100, mib/10)...)
	got = drive(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(1000*mib, ticks...))
	if len(got) != 1 || got[0] != 23 {
		t.Fatalf("releases at ticks %v, want [23]: 300 ms after the burst", got)
	}
}

func TestPolicyNeedsABurstOfTheHeapsSize(t *testing.T) {
	cfg := Default()
	start := time.Unix(1000, 0)
	// A heap of 1 GiB: 60 MiB is under a sixteenth of it, so no release;
	// 70 MiB more (130 in all) is over.
	small := append([]int64{60 * mib}, repeat(50, 0)...)
	p := newPolicy(cfg, sample{}, start)
	if got := drive(p, start, cfg.Tick, heap(1024*mib, small...)); len(got) != 0 {
		t.Fatalf("released at %v after 60 MiB of a 1 GiB heap", got)
	}
	more := heap(1024*mib, append([]int64{130 * mib}, repeat(50, 0)...)...)
	if got := drive(p, start.Add(51*cfg.Tick), cfg.Tick, more); len(got) != 1 {
		t.Fatalf("releases %v after 130 MiB of a 1 GiB heap, want one", got)
	}
	// And a small heap needs MinBurst: 4 MiB of a 16 MiB heap is a
	// quarter, but under 8 MiB.
	p = newPolicy(cfg, sample{}, start)
	if got := drive(p, start, cfg.Tick, heap(16*mib, append([]int64{4 * mib}, repeat(50, 0)...)...)); len(got) != 0 {
		t.Fatalf("released at %v after 4 MiB", got)
	}
}

func TestPolicySpacesReleases(t *testing.T) {
	cfg := Default()
	start := time.Unix(1000, 0)
	// A burst every second (100 MiB in a tick, then quiet): released
	// at most once per MinInterval.
	var ticks []int64
	for range 40 {
		ticks = append(ticks, 100*mib)
		ticks = append(ticks, repeat(9, 0)...)
	}
	got := drive(newPolicy(cfg, sample{}, start), start, cfg.Tick, heap(500*mib, ticks...))
	if len(got) < 2 {
		t.Fatalf("releases at %v: want several over 40 s of bursts", got)
	}
	for i := 1; i < len(got); i++ {
		if gap := time.Duration(got[i]-got[i-1]) * cfg.Tick; gap < cfg.MinInterval {
			t.Fatalf("releases at ticks %v: %v apart, want >= %v", got, gap, cfg.MinInterval)
		}
	}

	// A release that took 2 s holds the next one off for 40 s
	// (CostFactor 20), not MinInterval's 10.
	p := newPolicy(cfg, sample{}, start)
	p.released(sample{}, start, start.Add(2*time.Second))
	at := start.Add(2 * time.Second)
	readings := heap(500*mib, ticks...)
	got = drive(p, at, cfg.Tick, readings)
	if len(got) == 0 || time.Duration(got[0])*cfg.Tick+2*time.Second < 40*time.Second {
		t.Fatalf("first release at tick %v after a 2 s release: want 40 s after its start", got)
	}
}

// TestDecayReturnsAFreedHeap runs the real thing: 256 MiB allocated and
// dropped, then the process quiet; the decay must collect and return it.
func TestDecayReturnsAFreedHeap(t *testing.T) {
	cfg := Default()
	cfg.Tick = 20 * time.Millisecond
	cfg.QuietFor = 100 * time.Millisecond
	cfg.QuietRate = 64 << 20 // the test binary's own goroutines allocate
	cfg.MinInterval = time.Hour
	done := make(chan Release, 1)
	cfg.OnRelease = func(r Release) { done <- r }
	d := New(cfg)
	stop := make(chan struct{})
	defer close(stop)
	r := newReader()
	before := r.read()
	go d.Run(stop)
	time.Sleep(50 * time.Millisecond) // Run's baseline is its start

	keep := make([][]byte, 0, 256)
	for range 256 {
		b := make([]byte, mib)
		b[0] = 1
		keep = append(keep, b)
	}
	runtime.KeepAlive(keep) // live until here, garbage after

	var rel Release
	select {
	case rel = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no release 30 s after 256 MiB was dropped; stats %+v", d.Stats())
	}
	if rel.Burst < 256*mib {
		t.Errorf("burst %d MiB, want >= 256", rel.Burst/mib)
	}
	if after := r.read(); after.released-before.released < 200*mib {
		t.Errorf("heap released grew by %d MiB, want most of the 256 dropped", (after.released-before.released)/mib)
	}
	if s := d.Stats(); s.Releases != 1 || s.Returned < 200*mib {
		t.Errorf("stats %+v: want 1 release returning most of 256 MiB", s)
	}
	// Nothing allocated since: no second release (MinInterval aside, no
	// burst).
	d.SetEnabled(false)
	if d.Enabled() {
		t.Fatal("Enabled after SetEnabled(false)")
	}
}

func TestDecayDisabledReleasesNothing(t *testing.T) {
	cfg := Default()
	cfg.Tick = 10 * time.Millisecond
	cfg.QuietFor = 30 * time.Millisecond
	cfg.QuietRate = 64 << 20
	cfg.MinBurst = 1
	cfg.Release = func() {}
	d := New(cfg)
	d.SetEnabled(false)
	stop := make(chan struct{})
	go d.Run(stop)
	sink := make([]byte, 32*mib)
	sink[0] = 1
	runtime.KeepAlive(sink)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	if s := d.Stats(); s.Releases != 0 {
		t.Fatalf("disabled decay released: %+v", s)
	}
}
