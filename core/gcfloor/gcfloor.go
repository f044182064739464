// Package gcfloor puts a floor under the Go collector's heap goal: while
// the live heap is small, the next collection starts only once the heap
// reaches the floor, and above it the runtime's own pacing (GOGC's
// percent) is unchanged. The goal is
//
//	max(live + (live + stacks + globals) * GOGC/100, floor)
//
// where the runtime alone would use the first term (and its own 4 MiB
// minimum). Why (docs/performance.md, "A floor under the collector's heap
// goal"): at pipeline 1 a server with a few MB live runs a cycle every
// second or two, and each cycle's mark work shares the event loop's CPU
// for milliseconds; with no cycle (GOGC=off) memtier's p99.9 once read
// Redis'. Measured since, a 64 MiB floor removed every cycle from those
// 10 s loads (4 to 0) and did not lower p99 or p99.9 beyond the runs'
// spread, so cmd/svcdb leaves it off by default (svc-gc-heap-floor 0)
// and it stays a setting to try where a heap's cycles are shown to set a
// tail. A larger GOGC would not be the same thing: it
// multiplies the goal at every size, so at scale it multiplies the
// garbage kept (bytes per key) too, while a floor costs at most the floor
// in garbage and nothing once the live heap is over half of it.
//
// How: the runtime has no floor setting, so after every completed cycle
// (a cleanup on a sentinel object, re-armed each time, wakes this
// package's goroutine; a 1 s tick is the fallback) the Tuner reads the
// cycle's live heap and scanned stacks and globals (runtime/metrics) and
// sets the GOGC percent (debug.SetGCPercent: the heap lock, no stop of
// the world) that puts the goal at the floor, or the base percent when
// that already reaches it. The percent also scales the runtime's minimum
// heap (4 MiB * GOGC/100), so the percent is capped where that minimum is
// the floor. The base percent is the one in effect at New: GOGC's from
// the environment, or 100; GOGC=off stays off. A soft memory limit
// (GOMEMLIMIT, or maxmemory's: netloop.GoMemoryLimit) still caps the goal:
// the runtime takes the lower of the two.
//
// What it must never do: run on a path a command waits for. It only sets
// a number the runtime reads when it paces the next cycle.
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// runtimeMinimum is the Go runtime's minimum heap goal at GOGC 100
// (defaultHeapMinimum); it scales with the percent.
const runtimeMinimum = 4 << 20

// maxPercent bounds the percent set (the runtime takes an int32).
const maxPercent = math.MaxInt32 / 2

// Percent returns the GOGC percent whose heap goal is max(base's goal,
// floor) for a heap whose last cycle left live bytes marked and scanned
// scan bytes of stacks and globals: base itself when base is negative
// (the collector is off), the floor is not positive, or base's goal
// already reaches the floor.
func Percent(base int, floor, live, scan int64) int {
	if base < 0 || floor <= 0 {
		return base
	}
	live, scan = max(live, 0), max(scan, 0)
	goal := func(p int64) int64 { return max(live+(live+scan)*p/100, runtimeMinimum*p/100) }
	if goal(int64(base)) >= floor {
		return base
	}
	// Both terms grow with the percent: the smaller of the percents at
	// which each reaches the floor is the one where their max does.
	p := floor * 100 / runtimeMinimum
	if live+scan > 0 {
		p = min(p, (floor-live)*100/(live+scan))
	}
	return int(min(max(p, int64(base)), maxPercent))
}

// The runtime/metrics names read, in read's order.
var sampleNames = [...]string{
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
	"/gc/gogc:percent",
}

// Tuner keeps the collector's goal at or above a floor. Its methods may
// be called from any goroutine.
type Tuner struct {
	base    int
	floor   atomic.Int64
	percent atomic.Int64 // the percent last set (base until then)
	cycles  atomic.Int64 // wake-ups by a completed cycle
	wake    chan struct{}
	mu      sync.Mutex // one apply at a time
	ms      []metrics.Sample
	stop    chan struct{}
	done    chan struct{}
	stopped atomic.Bool
	once    sync.Once
}

// New returns a Tuner whose base percent is the one in effect now (GOGC
// from the environment, or 100, or -1 for off). Call it before anything
// else sets the percent.
func New() *Tuner {
	t := &Tuner{wake: make(chan struct{}, 1), ms: make([]metrics.Sample, len(sampleNames))}
	for i, n := range sampleNames {
		t.ms[i].Name = n
	}
	metrics.Read(t.ms)
	t.base = int(int64(t.ms[3].Value.Uint64()))
	t.percent.Store(int64(t.base))
	return t
}

// Base returns the percent the floor applies over.
func (t *Tuner) Base() int { return t.base }

// Percent returns the GOGC percent the tuner set last.
func (t *Tuner) Percent() int { return int(t.percent.Load()) }

// Floor returns the floor in bytes (0: none).
func (t *Tuner) Floor() int64 { return t.floor.Load() }

// SetFloor sets the floor (bytes; 0 or less: none, the base percent
// alone) and applies it at once.
func (t *Tuner) SetFloor(bytes int64) {
	t.floor.Store(max(bytes, 0))
	t.apply()
}

// apply sets the percent for the last cycle's figures and the floor.
func (t *Tuner) apply() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.ms)
	u := func(i int) int64 { return int64(t.ms[i].Value.Uint64()) }
	p := Percent(t.base, t.floor.Load(), u(0), u(1)+u(2))
	if int64(p) != t.percent.Load() || u(3) != int64(p) {
		debug.SetGCPercent(p)
		t.percent.Store(int64(p))
	}
}

// sentinel is the object whose cleanup tells the tuner a cycle ended: big
// enough (and holding a pointer) not to share a tiny-allocator block, so
// it is freed by the first cycle after it is dropped.
type sentinel struct {
	_ *Tuner
	_ [24]byte
}

// arm drops a new sentinel whose cleanup wakes Run and arms the next.
func (t *Tuner) arm() {
	s := new(sentinel)
	runtime.AddCleanup(s, func(t *Tuner) {
		if t.stopped.Load() {
			return
		}
		t.cycles.Add(1)
		select {
		case t.wake <- struct{}{}:
		default:
		}
		t.arm()
	}, t)
}

// Start applies the floor after every completed cycle, on its own
// goroutine, until Stop.
func (t *Tuner) Start() {
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	t.arm()
	go func() {
		defer close(t.done)
		tick := time.NewTicker(time.Second) // in case a cleanup is late
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-t.wake:
			case <-tick.C:
			}
			t.apply()
		}
	}()
}

// Stop ends the tuning and restores the base percent; later calls do
// nothing.
func (t *Tuner) Stop() {
	t.once.Do(func() {
		if t.stop != nil {
			close(t.stop)
			<-t.done
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped.Store(true)
		debug.SetGCPercent(t.base)
		t.percent.Store(int64(t.base))
	})
}

// Cycles returns how many completed cycles have woken the tuner.
func (t *Tuner) Cycles() int64 { return t.cycles.Load() }
