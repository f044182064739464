package clientmem

import (
	"slices"
	"sync"
	"testing"
)

func TestLimit(t *testing.T) {
	for _, tc := range []struct{ bytes, percent, maxmemory, want int64 }{
		{0, 0, 0, 0},
		{0, 0, 1 << 30, 0},
		{1 << 20, 0, 0, 1 << 20},
		{1000, 0, 0, MinLimit}, // Redis' floor
		{0, 10, 0, 0},          // a percentage of no maxmemory: off
		{0, 10, 100 << 20, 10 << 20},
		{0, 100, 1 << 30, 1 << 30},
		{0, 1, 1 << 20, MinLimit},
	} {
		if got := Limit(tc.bytes, tc.percent, tc.maxmemory); got != tc.want {
			t.Errorf("Limit(%d, %d%%, %d) = %d, want %d", tc.bytes, tc.percent, tc.maxmemory, got, tc.want)
		}
	}
}

func TestBucketOf(t *testing.T) {
	for _, tc := range []struct {
		used int64
		want int8
	}{{0, 0}, {1, 0}, {32<<10 - 1, 0}, {32 << 10, 0}, {64<<10 - 1, 0}, {64 << 10, 1}, {1 << 20, 5}, {8 << 30, numBuckets - 1}, {1 << 40, numBuckets - 1}} {
		if got := bucketOf(tc.used); got != tc.want {
			t.Errorf("bucketOf(%d) = %d, want %d", tc.used, got, tc.want)
		}
	}
}

// recorder is a Tracker whose evict function records owners in order.
func recorder() (*Tracker, *[]string) {
	var mu sync.Mutex
	var got []string
	t := New(func(owner any, _ int64) {
		mu.Lock()
		got = append(got, owner.(string))
		mu.Unlock()
	})
	return t, &got
}

// Largest first, only until the total is under the limit; NO-EVICT
// clients count but are never chosen; what is leaving stays counted as
// pending until Forget.
func TestEvictLargestFirstUntilUnder(t *testing.T) {
	tr, got := recorder()
	tr.SetLimit(1 << 20)
	es := map[string]*Entry{}
	add := func(name string, used int64, evictable bool) {
		e := &Entry{}
		tr.Track(e, name)
		tr.Update(e, used, evictable)
		es[name] = e
	}
	add("small", 10<<10, true)
	add("mid", 200<<10, true)
	add("large", 700<<10, true)
	add("pinned", 800<<10, false) // NO-EVICT, the largest
	if n := tr.evictOver(); n != 1 || !slices.Equal(*got, []string{"large"}) {
		t.Fatalf("evicted %d: %v, want [large]", n, *got)
	}
	if tr.Total() != (10+200+700+800)<<10 || tr.pending.Load() != 700<<10 {
		t.Fatalf("total %d pending %d", tr.Total(), tr.pending.Load())
	}
	tr.Update(es["large"], 5<<20, true) // a leaving client is no longer updated
	if tr.Total() != (10+200+700+800)<<10 {
		t.Fatalf("total moved for a leaving client: %d", tr.Total())
	}
	tr.Forget(es["large"])
	if tr.Total() != (10+200+800)<<10 || tr.pending.Load() != 0 {
		t.Fatalf("after Forget: total %d pending %d", tr.Total(), tr.pending.Load())
	}
	// The NO-EVICT client alone is near the limit: a lower limit takes
	// the others, largest first, and never it.
	tr.SetLimit(MinLimit)
	tr.evictOver()
	if !slices.Equal(*got, []string{"large", "mid", "small"}) || tr.Evicted() != 3 {
		t.Fatalf("evicted %v (%d), want [large mid small]", *got, tr.Evicted())
	}
	// Eviction off: clients leave the buckets at their next Update.
	tr.SetLimit(0)
	tr.Update(es["pinned"], 1, true)
	if es["pinned"].bucket != -1 {
		t.Fatalf("bucket %d with eviction off", es["pinned"].bucket)
	}
}

// Update and Forget run on many loops while the evictor runs; under -race
// the total and pending come back to zero.
func TestTrackerConcurrent(t *testing.T) {
	tr, _ := recorder()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { tr.Run(stop); close(done) }()
	tr.SetLimit(MinLimit)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				e := &Entry{}
				tr.Track(e, "c")
				for j := range 20 {
					tr.Update(e, int64((g*7+i*13+j*31)%40)<<10, j%3 != 0)
				}
				tr.Forget(e)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done
	if tr.Total() != 0 || tr.pending.Load() != 0 {
		t.Fatalf("total %d pending %d after every client left", tr.Total(), tr.pending.Load())
	}
	for b, m := range tr.buckets {
		if len(m) != 0 {
			t.Fatalf("bucket %d holds %d entries after every client left", b, len(m))
		}
	}
}

// TestUpdateAllocs: what every client's loop calls per turn and per flush
// allocates nothing, eviction off or on, within a bucket or across one.
func TestUpdateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tr := New(func(any, int64) {})
	e := &Entry{}
	tr.Track(e, nil)
	for _, limit := range []int64{0, 1 << 30} {
		tr.SetLimit(limit)
		i := int64(0)
		if n := testing.AllocsPerRun(1000, func() {
			i++
			tr.Update(e, 40<<10+(i&1)*64<<10, true) // crosses 64 KiB every other call
		}); n != 0 {
			t.Errorf("limit %d: %v allocs per Update", limit, n)
		}
	}
}
