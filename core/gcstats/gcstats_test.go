package gcstats

import (
	"math"
	"runtime"
	"strings"
	"testing"
)

// TestReadCountsForcedCycles: two runtime.GC calls show as two more cycles,
// two more forced ones and at least four more pauses (each cycle stops the
// world twice), and the heap figures are non-zero.
func TestReadCountsForcedCycles(t *testing.T) {
	before := Read()
	runtime.GC()
	runtime.GC()
	after := Read()
	if got := after.Cycles - before.Cycles; got < 2 {
		t.Errorf("cycles grew by %d, want >= 2", got)
	}
	if got := after.Forced - before.Forced; got != 2 {
		t.Errorf("forced cycles grew by %d, want 2", got)
	}
	if got := after.Pauses.Count() - before.Pauses.Count(); got < 4 {
		t.Errorf("pauses grew by %d, want >= 4", got)
	}
	if after.HeapGoal == 0 || after.HeapLive == 0 || after.TotalCPUSeconds <= 0 {
		t.Errorf("heap goal %d, live %d, total CPU %v: want > 0", after.HeapGoal, after.HeapLive, after.TotalCPUSeconds)
	}
	if after.CPUSeconds < before.CPUSeconds || after.CPUFraction() < 0 || after.CPUFraction() > 1 {
		t.Errorf("GC CPU %v -> %v, fraction %v", before.CPUSeconds, after.CPUSeconds, after.CPUFraction())
	}
	if after.GOGC != 100 {
		t.Errorf("GOGC %d, want the default 100 in a test binary", after.GOGC)
	}
}

// TestPauseBoundsAreRuntimeBounds: every le bound of svc_gc_pause_seconds
// is a bound of the runtime's pause histogram, so cumulative counts are
// exact, and its buckets from the first bound up are at most a quarter of
// a power of two wide, as Sum's error bound assumes (below 1 µs they are
// 64 ns wide: small in absolute terms).
func TestPauseBoundsAreRuntimeBounds(t *testing.T) {
	h := Read().Pauses
	if len(h.Buckets) < 2 {
		t.Fatalf("pause histogram has %d bounds", len(h.Buckets))
	}
	have := map[float64]bool{}
	for _, b := range h.Buckets {
		have[b] = true
	}
	for _, le := range PauseBounds {
		if !have[le] {
			t.Errorf("le %g is not a bound of the runtime's histogram", le)
		}
	}
	for i := 1; i+1 < len(h.Buckets)-1; i++ {
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		if lo >= PauseBounds[0] && (hi-lo)/lo > 0.5+1e-9 {
			t.Errorf("bucket [%g, %g) is wider than half its lower bound", lo, hi)
		}
	}
}

func TestHistogramQuantileSumCumulative(t *testing.T) {
	h := Histogram{
		Buckets: []float64{math.Inf(-1), 0, 1e-6, 2e-6, 4e-6, math.Inf(1)},
		Counts:  []uint64{0, 0, 98, 1, 1},
	}
	for _, c := range []struct {
		q, want float64
	}{{0.5, 2e-6}, {0.98, 2e-6}, {0.99, 4e-6}, {1, 4e-6}} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %g, want %g", c.q, got, c.want)
		}
	}
	if got, want := h.Sum(), 98*1.5e-6+3e-6+4e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("Sum = %g, want %g", got, want)
	}
	if got := h.CumulativeAt(2e-6); got != 98 {
		t.Errorf("CumulativeAt(2e-6) = %d, want 98", got)
	}
	if got := h.CumulativeAt(3e-6); got != 98 {
		t.Errorf("CumulativeAt(3e-6) = %d, want 98 (the straddling bucket left out)", got)
	}
	if got := (&Histogram{}).Quantile(0.99); got != 0 {
		t.Errorf("empty Quantile = %g, want 0", got)
	}
}

func TestWriteInfoAndHistogram(t *testing.T) {
	runtime.GC()
	s := Read()
	var b strings.Builder
	s.WriteInfo(&b)
	for _, f := range []string{"gc_cycles:", "gc_forced_cycles:", "gc_pauses:", "gc_pause_total_seconds:", "gc_pause_p99_usec:",
		"gc_pause_max_usec:", "gc_cpu_seconds:", "gc_assist_cpu_seconds:", "gc_cpu_percent:", "gc_heap_live:", "gc_heap_goal:",
		"gc_scan_heap:", "gc_heap_objects:", "gc_gogc:100\r\n", "gc_memory_limit:"} {
		if !strings.Contains(b.String(), f) {
			t.Errorf("INFO gc has no %q:\n%s", f, b.String())
		}
	}
	b.Reset()
	WritePauseHistogram(&b, "x", &s.Pauses)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if want := len(PauseBounds) + 3; len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, b.String())
	}
	if !strings.HasPrefix(lines[0], `x_bucket{le="1.024e-06"} `) || !strings.HasPrefix(lines[len(lines)-1], "x_count ") {
		t.Errorf("unexpected histogram:\n%s", b.String())
	}
}
