package cmdstats

import (
	"math/bits"
	"time"
)

// The latency histogram is log-linear over microseconds: values 0..3 µs have
// a bucket each, and every power-of-two range [2^e, 2^(e+1)) µs above that is
// split into four equal sub-buckets (at most 25% wide, so a percentile read
// from it is within about 12% after interpolation). Powers of two of a
// microsecond are bucket bounds, so Redis' LATENCY HISTOGRAM (cumulative
// counts at 1, 2, 4, 8 ... µs) and the `le` buckets of /metrics are exact
// sums of whole buckets. Durations past the last bucket land in it.
const (
	subBits     = 2
	subBuckets  = 1 << subBits
	maxExponent = 33 // 2^34 µs is about 4.8 hours
	// NumBuckets is the number of histogram buckets.
	NumBuckets = subBuckets + (maxExponent-subBits+1)*subBuckets
)

// bucketOf returns the bucket index of a duration in nanoseconds.
func bucketOf(ns int64) int {
	if ns < 0 {
		ns = 0
	}
	us := uint64(ns) / 1000
	if us < subBuckets {
		return int(us)
	}
	e := bits.Len64(us) - 1 // >= subBits
	if e > maxExponent {
		return NumBuckets - 1
	}
	sub := int(us>>(e-subBits)) & (subBuckets - 1)
	return subBuckets + (e-subBits)*subBuckets + sub
}

// bucketBounds returns bucket i's range [lo, hi) in microseconds.
func bucketBounds(i int) (lo, hi uint64) {
	if i < subBuckets {
		return uint64(i), uint64(i) + 1
	}
	e := (i-subBuckets)/subBuckets + subBits
	sub := uint64((i - subBuckets) % subBuckets)
	step := uint64(1) << (e - subBits)
	lo = (subBuckets + sub) * step
	return lo, lo + step
}

// bucketsBelowPow2 is the number of buckets whose upper bound is at most
// 2^k µs, so cumulative(2^k µs) is the sum of buckets [0, bucketsBelowPow2(k)).
func bucketsBelowPow2(k int) int {
	if k <= subBits {
		return 1 << k
	}
	return subBuckets + (k-subBits)*subBuckets
}

// Pow2Bounds is how many power-of-two bounds (1, 2, 4 ... µs) Cumulative
// reports: the last is 2^(Pow2Bounds-1) µs, past which only +Inf remains.
const Pow2Bounds = 25 // up to 2^24 µs, about 16.8 s

// Histogram is a read-side copy of a latency histogram.
type Histogram struct {
	Buckets [NumBuckets]int64
	Count   int64
}

// add folds o into h.
func (h *Histogram) add(o *Histogram) {
	for i := range h.Buckets {
		h.Buckets[i] += o.Buckets[i]
	}
	h.Count += o.Count
}

// Cumulative returns how many samples were below 2^k µs, for k in
// [0, Pow2Bounds): the `le` buckets of /metrics and LATENCY HISTOGRAM.
func (h *Histogram) Cumulative(k int) int64 {
	var n int64
	for i := range bucketsBelowPow2(k) {
		n += h.Buckets[i]
	}
	return n
}

// Percentile returns the q-th quantile (0 < q <= 1), interpolated linearly
// inside its bucket; 0 without samples.
func (h *Histogram) Percentile(q float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	rank := q * float64(h.Count)
	var seen float64
	for i, n := range h.Buckets {
		if n == 0 {
			continue
		}
		if seen+float64(n) >= rank {
			lo, hi := bucketBounds(i)
			frac := (rank - seen) / float64(n)
			us := float64(lo) + frac*float64(hi-lo)
			return time.Duration(us * float64(time.Microsecond))
		}
		seen += float64(n)
	}
	_, hi := bucketBounds(NumBuckets - 1)
	return time.Duration(hi) * time.Microsecond
}
