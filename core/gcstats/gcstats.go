// Package gcstats reads the Go garbage collector's figures from
// runtime/metrics and renders them as the gc_* fields of INFO's "# Svc"
// section and the svc_gc_* Prometheus series: cycles, stop-the-world pauses, the CPU the
// collector took (mark assist, which runs on whatever goroutine allocates,
// event loops and shards included, separately), the heap goal and the live
// heap.
//
// It reads runtime/metrics, never runtime.ReadMemStats (which stops the
// world), and only when asked: by an INFO or a scrape, never on the
// per-command path. A Read costs a few microseconds and allocates the
// pause histogram's copy. It imports nothing of ours.
package gcstats

import (
	"fmt"
	"io"
	"math"
	"runtime/metrics"
	"strconv"
	"strings"
)

// The runtime/metrics names read, in Read's order.
const (
	mCycles       = "/gc/cycles/total:gc-cycles"
	mForced       = "/gc/cycles/forced:gc-cycles"
	mPauses       = "/sched/pauses/total/gc:seconds"
	mGCCPU        = "/cpu/classes/gc/total:cpu-seconds"
	mAssistCPU    = "/cpu/classes/gc/mark/assist:cpu-seconds"
	mTotalCPU     = "/cpu/classes/total:cpu-seconds"
	mHeapGoal     = "/gc/heap/goal:bytes"
	mHeapLive     = "/gc/heap/live:bytes"
	mGOGC         = "/gc/gogc:percent"
	mMemoryLimit  = "/gc/gomemlimit:bytes"
	mScannableObj = "/gc/scan/heap:bytes"
	mHeapObjects  = "/gc/heap/objects:objects"
)

var names = []string{mCycles, mForced, mPauses, mGCCPU, mAssistCPU, mTotalCPU, mHeapGoal, mHeapLive, mGOGC, mMemoryLimit, mScannableObj, mHeapObjects}

// Stats is one reading of the collector's figures. Totals count from the
// process' start.
type Stats struct {
	// Cycles counts completed GC cycles; Forced those forced by
	// runtime.GC or debug.FreeOSMemory (the application), not by the pacer.
	Cycles, Forced uint64
	// Pauses is the distribution of stop-the-world pause times of the
	// collector (both of a cycle's pauses, each counted), in seconds.
	Pauses Histogram
	// CPUSeconds is the CPU time the runtime estimates the collector took
	// (background marking, mark assist, pauses, idle marking), and
	// AssistCPUSeconds its mark-assist part: time goroutines that
	// allocated during a cycle spent marking instead of running their own
	// code, the part a request waiting on an event loop or a shard feels.
	// TotalCPUSeconds is the runtime's estimate of all CPU time the
	// process had (user code included), the denominator of CPUFraction.
	// The runtime's estimates, not the kernel's: comparable with each
	// other only.
	CPUSeconds, AssistCPUSeconds, TotalCPUSeconds float64
	// HeapGoal is the heap size the next cycle aims to finish under;
	// HeapLive the heap the last cycle marked live; ScanHeap the part of
	// the heap that holds pointers and must be scanned (what a cycle's
	// mark work grows with).
	HeapGoal, HeapLive, ScanHeap uint64
	// HeapObjects counts the heap's objects, live and not yet swept: what
	// a cycle marks one by one (a key's string and its value are two).
	HeapObjects uint64
	// GOGC is the GC percent (-1: off); MemoryLimit the soft memory limit
	// (math.MaxInt64: none).
	GOGC, MemoryLimit int64
}

// Histogram is a runtime/metrics time histogram: Counts[i] values fell in
// [Buckets[i], Buckets[i+1]). The first bound may be -Inf and the last
// +Inf.
type Histogram struct {
	Counts  []uint64
	Buckets []float64
}

// Read takes a reading.
func Read() Stats {
	ms := make([]metrics.Sample, len(names))
	for i, n := range names {
		ms[i].Name = n
	}
	metrics.Read(ms)
	u := func(i int) uint64 {
		if ms[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return ms[i].Value.Uint64()
	}
	f := func(i int) float64 {
		if ms[i].Value.Kind() != metrics.KindFloat64 {
			return 0
		}
		return ms[i].Value.Float64()
	}
	s := Stats{
		Cycles: u(0), Forced: u(1),
		CPUSeconds: f(3), AssistCPUSeconds: f(4), TotalCPUSeconds: f(5),
		HeapGoal: u(6), HeapLive: u(7), GOGC: int64(u(8)), MemoryLimit: int64(u(9)), ScanHeap: u(10), HeapObjects: u(11),
	}
	if ms[2].Value.Kind() == metrics.KindFloat64Histogram {
		h := ms[2].Value.Float64Histogram()
		// The runtime may reuse the slices on the next Read: copy them.
		s.Pauses = Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: append([]float64(nil), h.Buckets...)}
	}
	return s
}

// CPUFraction is the collector's share of the process' CPU since start
// (0 to 1), as the runtime estimates both.
func (s *Stats) CPUFraction() float64 {
	if s.TotalCPUSeconds <= 0 {
		return 0
	}
	return s.CPUSeconds / s.TotalCPUSeconds
}

// Count is the number of values in h.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Sum estimates the sum of h's values: each bucket's count times its
// midpoint (its finite bound for an open bucket). runtime/metrics keeps no
// sum; the time histogram's buckets are a quarter of a power of two wide
// (checked by this package's tests), so the estimate is within about 12%
// of the truth.
func (h *Histogram) Sum() float64 {
	var sum float64
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		sum += float64(c) * h.mid(i)
	}
	return sum
}

func (h *Histogram) mid(i int) float64 {
	lo, hi := h.Buckets[i], h.Buckets[i+1]
	switch {
	case math.IsInf(lo, -1):
		return max(hi, 0)
	case math.IsInf(hi, 1):
		return lo
	}
	return (lo + hi) / 2
}

// Quantile returns the upper bound of the bucket holding the q-quantile
// (0 < q <= 1) of h, the lower bound for the open last bucket, 0 when h is
// empty: a value at least as large as the true quantile, within the
// bucket's width. Quantile(1) is the largest pause's bucket bound.
func (h *Histogram) Quantile(q float64) float64 {
	n := h.Count()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			hi := h.Buckets[i+1]
			if math.IsInf(hi, 1) {
				return h.Buckets[i]
			}
			return max(hi, 0)
		}
	}
	return 0
}

// CumulativeAt returns how many values of h are at most le: the counts of
// every bucket whose upper bound is <= le (a bucket straddling le is left
// out, so the count is exact when le is one of h's bounds).
func (h *Histogram) CumulativeAt(le float64) uint64 {
	var n uint64
	for i, c := range h.Counts {
		if h.Buckets[i+1] > le {
			break
		}
		n += c
	}
	return n
}

// PauseBounds are the `le` bounds of svc_gc_pause_seconds: powers of two of
// a nanosecond from 2^10 (1.024 µs) to 2^34 (17.2 s). The runtime's time
// histogram splits every power of two of a nanosecond into sub-buckets, so
// each of these is one of its bounds and every cumulative count is exact.
var PauseBounds = func() []float64 {
	var b []float64
	for k := 10; k <= 34; k++ {
		b = append(b, float64(int64(1)<<k)/1e9)
	}
	return b
}()

// WritePauseHistogram writes h as the samples of a Prometheus histogram
// called name (PauseBounds, +Inf, _sum estimated as Sum says, _count).
func WritePauseHistogram(w io.Writer, name string, h *Histogram) {
	for _, le := range PauseBounds {
		fmt.Fprintf(w, "%s_bucket{le=%q} %d\n", name, strconv.FormatFloat(le, 'g', -1, 64), h.CumulativeAt(le))
	}
	n := h.Count()
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n", name, n)
	fmt.Fprintf(w, "%s_sum %s\n", name, strconv.FormatFloat(h.Sum(), 'g', -1, 64))
	fmt.Fprintf(w, "%s_count %d\n", name, n)
}

// WriteInfo appends the gc_* fields INFO's "# Svc" section ends with, "name:value\r\n"
// each: counts, seconds with microsecond precision, pause quantiles in
// microseconds (bucket upper bounds, see Quantile), bytes.
func (s *Stats) WriteInfo(b *strings.Builder) {
	field := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	sec := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	usec := func(v float64) int64 { return int64(math.Round(v * 1e6)) }
	field("gc_cycles", s.Cycles)
	field("gc_forced_cycles", s.Forced)
	field("gc_pauses", s.Pauses.Count())
	field("gc_pause_total_seconds", sec(s.Pauses.Sum()))
	field("gc_pause_p50_usec", usec(s.Pauses.Quantile(0.5)))
	field("gc_pause_p99_usec", usec(s.Pauses.Quantile(0.99)))
	field("gc_pause_max_usec", usec(s.Pauses.Quantile(1)))
	field("gc_cpu_seconds", sec(s.CPUSeconds))
	field("gc_assist_cpu_seconds", sec(s.AssistCPUSeconds))
	field("gc_cpu_percent", strconv.FormatFloat(100*s.CPUFraction(), 'f', 2, 64))
	field("gc_heap_live", s.HeapLive)
	field("gc_heap_goal", s.HeapGoal)
	field("gc_scan_heap", s.ScanHeap)
	field("gc_heap_objects", s.HeapObjects)
	field("gc_gogc", s.GOGC)
	field("gc_memory_limit", s.MemoryLimit)
}
