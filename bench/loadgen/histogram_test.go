package loadgen

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	if got := histIndex(histMaxValue); got != histBuckets-1 {
		t.Fatalf("histIndex(max) = %d; want %d", got, histBuckets-1)
	}
	// Every value lands in a bucket whose upper bound covers it and whose
	// predecessor's does not, and buckets are at most 1/64 of their value wide.
	check := func(v uint64) {
		i := histIndex(v)
		if up := histUpper(i); up < v {
			t.Fatalf("v=%d: bucket %d upper %d < v", v, i, up)
		}
		if i > 0 && histUpper(i-1) >= v {
			t.Fatalf("v=%d: bucket %d-1 upper %d >= v", v, i, histUpper(i-1))
		}
		if w := histUpper(i) - v; v >= histSub && w*histHalf > v {
			t.Fatalf("v=%d: bucket %d too wide (%d)", v, i, w)
		}
	}
	for v := uint64(0); v < 100000; v++ {
		check(v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		check(r.Uint64N(histMaxValue + 1))
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram: want zero quantile and mean")
	}
	r := rand.New(rand.NewPCG(3, 4))
	vals := make([]time.Duration, 100000)
	for i := range vals {
		vals[i] = time.Duration(r.ExpFloat64() * float64(200*time.Microsecond))
		h.Record(vals[i])
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		idx := int(q*float64(len(vals))+0.999999) - 1
		exact := vals[idx]
		got := h.Quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/histHalf+1 {
			t.Errorf("q=%v: got %v; exact %v (want within +1/64)", q, got, exact)
		}
	}
	if h.Count() != uint64(len(vals)) {
		t.Errorf("count %d; want %d", h.Count(), len(vals))
	}
	if h.Max() != vals[len(vals)-1] {
		t.Errorf("max %v; want %v", h.Max(), vals[len(vals)-1])
	}
}

func TestHistogramMerge(t *testing.T) {
	var a, b, all Histogram
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	if a != all {
		t.Fatalf("merged histogram differs from one recorded directly: p50 %v vs %v", a.Quantile(.5), all.Quantile(.5))
	}
	var empty Histogram
	a.Merge(&empty)
	if a != all {
		t.Fatal("merging an empty histogram changed it")
	}
	empty.Merge(&all)
	if empty != all {
		t.Fatal("merging into an empty histogram did not copy it")
	}
}

func TestHistogramClamps(t *testing.T) {
	var h Histogram
	h.Record(-time.Second)
	h.Record(time.Hour)
	if h.Quantile(0) != 0 {
		t.Errorf("negative duration: quantile(0) = %v; want 0", h.Quantile(0))
	}
	if h.Max() != histMaxValue {
		t.Errorf("hour: max = %v; want clamp at %v", h.Max(), time.Duration(histMaxValue))
	}
}
