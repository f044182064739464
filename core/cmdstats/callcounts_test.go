package cmdstats

import (
	"slices"
	"testing"
)

// TestCallCounts: the per-command call counts sum every recorder, agree with
// Snapshot, reuse dst, and ignore Reset (they never go back).
func TestCallCounts(t *testing.T) {
	s := NewSet(4)
	a, b := s.NewRecorder(), s.NewRecorder()
	for range 3 {
		a.Call(1, 1000)
	}
	b.Call(1, 2000)
	b.Call(3, 500)
	b.Rejected(2) // rejected calls are not executed calls
	got := s.CallCounts(nil)
	want := []int64{0, 4, 0, 1}
	if len(got) != len(want) {
		t.Fatalf("CallCounts = %v, want %v", got, want)
	}
	snap := s.Snapshot()
	for id := range want {
		if got[id] != want[id] {
			t.Fatalf("CallCounts = %v, want %v", got, want)
		}
		if c := snap.Commands[id]; c != nil && c.Calls != got[id] {
			t.Fatalf("command %d: CallCounts %d, Snapshot %d", id, got[id], c.Calls)
		}
	}

	s.Reset()
	a.Call(3, 10)
	dst := make([]int64, 2, 8)
	dst[0] = 99 // stale content is cleared
	got = s.CallCounts(dst)
	if &got[0] != &dst[0] {
		t.Fatal("CallCounts did not reuse a large enough dst")
	}
	if want := []int64{0, 4, 0, 2}; !slices.Equal(got, want) {
		t.Fatalf("after Reset: CallCounts = %v, want %v (since start)", got, want)
	}
	if allocs := testing.AllocsPerRun(100, func() { got = s.CallCounts(got) }); allocs != 0 {
		t.Fatalf("CallCounts allocates %v times with a large enough dst", allocs)
	}
}

// TestCallAfterWaitDerived: the figures CallAfterWait no longer stores
// (calls, execution time, the execution histogram) come out of a Snapshot
// as if they were counted, across recorders, with waits and without, and
// after Reset.
func TestCallAfterWaitDerived(t *testing.T) {
	s := NewSet(3)
	a, b := s.NewRecorder(), s.NewRecorder()
	a.Call(1, 1500)                  // 1.5 us, no wait
	a.CallAfterWait(1, 9000, 2000)   // waited 7 us: latency bucket of 9 us, exec of 2 us
	b.CallAfterWait(1, 3500, 3200)   // waited, but both in the 3 us bucket
	b.CallAfterWait(2, 40000, 40000) // no wait
	snap := s.Snapshot()
	c1, c2 := snap.Commands[1], snap.Commands[2]
	if c1.Calls != 3 || c2.Calls != 1 {
		t.Fatalf("calls %d and %d; want 3 and 1", c1.Calls, c2.Calls)
	}
	if c1.Total != 14000 || c1.Exec != 6700 || c2.Exec != 40000 {
		t.Errorf("command 1 total %v exec %v, command 2 exec %v; want 14us, 6.7us, 40us", c1.Total, c1.Exec, c2.Exec)
	}
	var want Histogram
	for _, ns := range []int64{1500, 2000, 3200, 40000} {
		want.Buckets[bucketOf(ns)]++
		want.Count++
	}
	if snap.Exec != want {
		t.Errorf("execution histogram %v; want %v", snap.Exec.Buckets, want.Buckets)
	}
	s.Reset()
	a.CallAfterWait(2, 9000, 2000)
	snap = s.Snapshot()
	var after Histogram
	after.Buckets[bucketOf(2000)]++
	after.Count++
	if snap.Exec != after || snap.Commands[2].Calls != 1 || snap.Commands[2].Exec != 2000 {
		t.Errorf("after Reset: execution histogram %v, calls %d, exec %v; want one call of 2us", snap.Exec.Buckets, snap.Commands[2].Calls, snap.Commands[2].Exec)
	}
}
