package zsets

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGeoNearestIsStableSort checks the selection of the COUNT nearest (or
// farthest) against what Redis does, a stable sort of every point by
// distance cut to COUNT, on distances with many ties, for every COUNT.
func TestGeoNearestIsStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 300 {
		n := 1 + r.IntN(200)
		sc := new(geoScratch)
		for range n {
			d := float64(r.IntN(1 + n/4)) // ties on purpose
			if round%3 == 0 {
				d = r.Float64() * 1000
			}
			sc.points = append(sc.points, geoPoint{dist: d})
		}
		for _, desc := range []bool{false, true} {
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(a, b int) int {
				da, db := sc.points[a].dist, sc.points[b].dist
				r := 0
				switch {
				case da > db:
					r = 1
				case da < db:
					r = -1
				}
				if desc {
					r = -r
				}
				return r
			})
			for k := 1; k <= n+1; k++ {
				got := sc.nearest(min(k, n), desc)
				if len(got) != min(k, n) {
					t.Fatalf("n %d k %d desc %v: %d ranks", n, k, desc, len(got))
				}
				for i, g := range got {
					if g.i != want[i] {
						t.Fatalf("n %d k %d desc %v: place %d is point %d, want %d", n, k, desc, i, g.i, want[i])
					}
				}
			}
		}
	}
}
