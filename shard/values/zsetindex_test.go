package values

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestZslIndexChurn adds and removes members of a large skiplist at random,
// far past several doublings of the index, and checks the whole structure
// against a plain map: every deletion shifts entries back, and a lookup must
// find each present member and none of the removed ones.
func TestZslIndexChurn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := NewSkiplist(0)
	present := map[string]bool{}
	for step := range 60000 {
		m := "m:" + strconv.Itoa(r.IntN(5000))
		if present[m] {
			if !s.Remove([]byte(m)) {
				t.Fatalf("step %d: remove %q found nothing", step, m)
			}
			delete(present, m)
		} else {
			s.Add([]byte(m), float64(r.IntN(100)))
			present[m] = true
		}
		if step%5000 == 0 || step > 59900 {
			if err := s.Verify(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for i := range 5000 {
				m := "m:" + strconv.Itoa(i)
				if _, ok := s.Find([]byte(m)); ok != present[m] {
					t.Fatalf("step %d: find(%q) = %v, want %v", step, m, ok, present[m])
				}
			}
		}
	}
}
