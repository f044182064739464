package geohash

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// Values from redis-server 7.0.15 (GEOADD Sicily 13.361389 38.115556
// Palermo, then ZSCORE, GEOPOS, GEOHASH, GEODIST).
func TestPalermoCatania(t *testing.T) {
	p, ok := Score(13.361389, 38.115556)
	if !ok || p != 3479099956230698 {
		t.Fatalf("Score(Palermo) = %d %v, want 3479099956230698", p, ok)
	}
	c, _ := Score(15.087269, 37.502669)
	if c != 3479447370796909 {
		t.Fatalf("Score(Catania) = %d, want 3479447370796909", c)
	}
	lon, lat := DecodeScore(float64(p))
	if got := string(AppendCoord(nil, lon)) + "," + string(AppendCoord(nil, lat)); got != "13.36138933897018433,38.11555639549629859" {
		t.Fatalf("GEOPOS Palermo = %s", got)
	}
	if got := string(AppendString(nil, float64(p))); got != "sqc8b49rny0" {
		t.Fatalf("GEOHASH Palermo = %s", got)
	}
	lon2, lat2 := DecodeScore(float64(c))
	if got := string(AppendDistance(nil, Distance(lon, lat, lon2, lat2))); got != "166274.1516" {
		t.Fatalf("GEODIST = %s", got)
	}
}

func TestLimits(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		ok       bool
	}{
		{180, 85.05112878, true}, {-180, -85.05112878, true}, {0, 0, true},
		{180.0000001, 0, false}, {0, 85.06, false}, {0, -85.06, false},
	} {
		if _, ok := Score(c.lon, c.lat); ok != c.ok {
			t.Errorf("Score(%v, %v) ok = %v", c.lon, c.lat, ok)
		}
	}
}

func TestInterleaveRoundTrip(t *testing.T) {
	for _, v := range []struct{ x, y uint32 }{{0, 0}, {1, 0}, {0, 1}, {0xffffffff, 0x12345678}, {0x03ffffff, 0x02aaaaaa}} {
		sep := deinterleave64(interleave64(v.x, v.y))
		if uint32(sep) != v.x || uint32(sep>>32) != v.y {
			t.Errorf("deinterleave(interleave(%x, %x)) = %x", v.x, v.y, sep)
		}
	}
}

func TestAppendCoord(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{180, "180"}, {0.5, "0.5"}, {math.Copysign(0, -1), "0"}, {-1e-20, "0"}, {85.05112878, "85.0511287799999991"},
	} {
		if got := string(AppendCoord(nil, c.f)); got != c.want {
			t.Errorf("AppendCoord(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

// TestLeaf: package geohash imports no package of ours (see doc.go).
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/svcdb/svcdb/") && dep != "github.com/svcdb/svcdb/shard/geohash" {
			t.Errorf("shard/geohash depends on %s", dep)
		}
	}
}

// TestPrefilterKeepsRedisVerdict: the bounds Within checks first never
// reject a member Redis' computation accepts, for random circles and boxes
// of every size, at every latitude, across the date line, and for members
// placed right at the edge.
func TestPrefilterKeepsRedisVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	rejected := 0
	for i := 0; i < 20000; i++ {
		s := Shape{Long: r.Float64()*360 - 180, Lat: r.Float64()*170 - 85, Conversion: 1}
		size := math.Pow(10, r.Float64()*7.5)
		if r.IntN(2) == 0 {
			s.Box, s.Width, s.Height = true, size*(0.1+r.Float64()*3), size*(0.1+r.Float64()*3)
		} else {
			s.Radius = size
		}
		s.prepare()
		for j := 0; j < 50; j++ {
			// Around the centre, scaled to the shape, sometimes far.
			spread := size / EarthRadius * 180 / math.Pi * (0.5 + r.Float64()*2)
			lon := s.Long + (r.Float64()*2-1)*spread*3
			lat := s.Lat + (r.Float64()*2-1)*spread
			lon = math.Mod(lon+540, 360) - 180
			lat = min(max(lat, LatMin), LatMax)
			_, want := s.exact(lon, lat)
			_, got := s.Within(lon, lat)
			if got != want {
				t.Fatalf("shape %+v, member %v,%v: Within %v, Redis' test %v", s, lon, lat, got, want)
			}
			if !want {
				rejected++
			}
		}
	}
	if rejected < 100000 {
		t.Fatalf("only %d of 1000000 members were outside: the test does not reach the edges", rejected)
	}
}

// deinterleaveLoop is Redis' deinterleave64 as written there (a loop over
// the masks), the reference for the unrolled one.
func deinterleaveLoop(v uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x, y := v, v>>1
	for i := 0; i < 6; i++ {
		x = (x | x>>s[i]) & b[i]
		y = (y | y>>s[i]) & b[i]
	}
	return x | y<<32
}

func TestDeinterleaveUnrolled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		v := r.Uint64()
		if i < 64 {
			v = 1 << i
		}
		if got, want := deinterleave64(v), deinterleaveLoop(v); got != want {
			t.Fatalf("deinterleave64(%#x) = %#x, want %#x", v, got, want)
		}
	}
}

// BenchmarkDecodeScore decodes the scores of places spread over Sicily.
func BenchmarkDecodeScore(b *testing.B) {
	scores := make([]float64, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range scores {
		s, _ := Score(8+11*r.Float64(), 34+8*r.Float64())
		scores[i] = float64(s)
	}
	var sink float64
	for i := 0; b.Loop(); i++ {
		lon, lat := DecodeScore(scores[i&1023])
		sink += lon + lat
	}
	_ = sink
}

// TestSpansKeepRedisVerdict: a member of a search cell whose score lies in
// none of the cell's spans is one Redis' test rejects, for random circles
// and boxes of every size, at every latitude and across the date line, and
// for members at the spans' edges; and the spans are ordered, disjoint and
// inside the cell.
func TestSpansKeepRedisVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	skipped := 0
	for i := 0; i < 3000; i++ {
		s := Shape{Long: r.Float64()*360 - 180, Lat: r.Float64()*170 - 85, Conversion: 1}
		if i%10 == 0 {
			s.Long = 180 - r.Float64()*0.01 // the date line
		}
		size := math.Pow(10, r.Float64()*7.5)
		if r.IntN(2) == 0 {
			s.Box, s.Width, s.Height = true, size*(0.1+r.Float64()*3), size*(0.1+r.Float64()*3)
		} else {
			s.Radius = size
		}
		cells := CellsFor(&s)
		for _, cell := range cells {
			if cell.IsZero() {
				continue
			}
			lo, hi := ScoreRange(cell)
			spans := s.AppendSpans(nil, cell)
			for k, sp := range spans {
				if sp.Min >= sp.Max || sp.Min < lo || sp.Max > hi || k > 0 && spans[k-1].Max >= sp.Min {
					t.Fatalf("shape %+v cell %+v: spans %v", s, cell, spans)
				}
			}
			inSpans := func(score uint64) bool {
				for _, sp := range spans {
					if sp.Min <= score && score < sp.Max {
						return true
					}
				}
				return false
			}
			check := func(score uint64) {
				if score < lo || score >= hi || inSpans(score) {
					return
				}
				skipped++
				lon, lat := DecodeScore(float64(score))
				if _, in := s.exact(lon, lat); in {
					t.Fatalf("shape %+v cell %+v: member %v,%v (score %d) is inside but in no span %v", s, cell, lon, lat, score, spans)
				}
			}
			for j := 0; j < 40; j++ {
				check(lo + r.Uint64N(hi-lo))
			}
			for _, sp := range spans {
				check(sp.Min - 1)
				check(sp.Max)
			}
		}
	}
	if skipped < 10000 {
		t.Fatalf("only %d members outside the spans were tried", skipped)
	}
}
