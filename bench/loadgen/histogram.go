package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in a log-linear layout like HdrHistogram with
// two significant digits: values below 128 ns have a bucket each, and every
// power of two above is split into 64 equal buckets, so a bucket is never
// wider than 1/64 (1.6%) of its value. Values above 2^40 ns (about 18
// minutes) are clamped. The counts live in a fixed array so Record is a few
// instructions with no allocation, and Merge is a loop.
//
// We do not use github.com/HdrHistogram/hdrhistogram-go: its Record is as
// cheap, but this is 100 lines, needs no new module in the shared go.mod,
// and merging one histogram per connection (so the hot path shares no
// memory between goroutines) is trivial here.
//
// A Histogram is not safe for concurrent use; the zero value is empty and
// ready. It is 18 KiB: pass pointers.
type Histogram struct {
	counts   [histBuckets]uint64
	total    uint64
	sum      uint64 // ns, exact, for the mean
	min, max uint64
}

const (
	histSubBits  = 7
	histSub      = 1 << histSubBits // 128 linear buckets at the bottom
	histHalf     = histSub / 2      // 64 buckets per power of two above
	histMaxBits  = 40
	histMaxValue = 1<<histMaxBits - 1
	histBuckets  = histSub + (histMaxBits-histSubBits)*histHalf
)

func histIndex(v uint64) int {
	if v < histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits // >= 1
	return histSub + (shift-1)*histHalf + int(v>>uint(shift)) - histHalf
}

// histUpper returns the largest value that maps to bucket i.
func histUpper(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	shift := uint((i-histSub)/histHalf + 1)
	top := uint64((i-histSub)%histHalf + histHalf)
	return (top+1)<<shift - 1
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	if v > histMaxValue {
		v = histMaxValue
	}
	h.counts[histIndex(v)]++
	if h.total == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.total++
	h.sum += v
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.total += o.total
	h.sum += o.sum
}

// Count returns the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total }

// Mean returns the exact mean of the recorded values.
func (h *Histogram) Mean() time.Duration {
	if h.total == 0 {
		return 0
	}
	return time.Duration(h.sum / h.total)
}

// Max returns the largest recorded value.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Quantile returns the value at quantile q (0..1), as HdrHistogram does: the
// highest value equivalent to the bucket holding the ceil(q·count)-th value,
// capped at the maximum recorded. It returns 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	rank = min(rank, h.total)
	var seen uint64
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			return time.Duration(min(histUpper(i), h.max))
		}
	}
	return time.Duration(h.max)
}
