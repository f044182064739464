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
