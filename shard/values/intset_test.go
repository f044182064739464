package values

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIntsetModel checks the intset encoding against a sorted slice across
// width upgrades.
func TestIntsetModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for round := range 300 {
		is := NewIntset(2, 0)
		var model []int64
		for step := range 200 {
			var v int64
			switch r.IntN(4) {
			case 0:
				v = int64(r.IntN(200) - 100)
			case 1:
				v = int64(r.IntN(200)-100) * 1000
			case 2:
				v = int64(r.IntN(200)-100) * 100_000_000
			default:
				v = int64(r.Uint64())
			}
			i, found := slices.BinarySearch(model, v)
			if r.IntN(3) == 0 {
				var removed bool
				is, removed = IntsetRemove(is, v)
				if removed != found {
					t.Fatalf("round %d step %d: remove %d = %v, model %v", round, step, v, removed, found)
				}
				if found {
					model = slices.Delete(model, i, i+1)
				}
			} else {
				var added bool
				is, added = IntsetAdd(is, v)
				if added == found {
					t.Fatalf("round %d step %d: add %d = %v, model found %v", round, step, v, added, found)
				}
				if !found {
					model = slices.Insert(model, i, v)
				}
			}
			if err := VerifyIntset(is); err != nil {
				t.Fatalf("round %d step %d: %v", round, step, err)
			}
			if IntsetLen(is) != len(model) {
				t.Fatalf("round %d step %d: %d members, model %d", round, step, IntsetLen(is), len(model))
			}
			for j, want := range model {
				if got := IntsetGet(is, j); got != want {
					t.Fatalf("round %d step %d: member %d = %d, want %d", round, step, j, got, want)
				}
			}
		}
	}
}
