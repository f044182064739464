package values

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestZSkiplistRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := NewSkiplist(0)
	model := map[string]float64{}
	for step := range 5000 {
		m := "m" + strconv.Itoa(r.IntN(300))
		switch r.IntN(4) {
		case 0, 1:
			sc := float64(r.IntN(50))
			if x, ok := s.Find([]byte(m)); ok {
				s.SetScore(x, sc)
			} else {
				s.Add([]byte(m), sc)
			}
			model[m] = sc
		case 2:
			if s.Remove([]byte(m)) != hasKey(model, m) {
				t.Fatalf("step %d: remove %s disagrees", step, m)
			}
			delete(model, m)
		case 3:
			if s.length > 0 {
				x := s.First()
				delete(model, s.nodes[x].member)
				s.RemoveNode(x)
			}
		}
		if s.length == 0 {
			continue
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if step%50 != 0 {
			continue
		}
		ps := sortedPairs(model)
		for i, p := range ps {
			x := s.ByRank(i + 1)
			if x == 0 || s.nodes[x].member != p.m {
				t.Fatalf("step %d: byRank(%d) wrong", step, i+1)
			}
			if s.Rank(x) != i+1 {
				t.Fatalf("step %d: rank of %s = %d, want %d", step, p.m, s.Rank(x), i+1)
			}
		}
		lo, hi := float64(r.IntN(50)), float64(r.IntN(50))
		rs := ScoreRange{Min: lo, Max: hi, Minex: r.IntN(2) == 0}
		var first, last uint32
		for i, p := range ps {
			if rs.GteMin(p.s) && rs.LteMax(p.s) {
				if first == 0 {
					first = s.ByRank(i + 1)
				}
				last = s.ByRank(i + 1)
			}
		}
		if s.FirstInRange(&rs) != first || s.LastInRange(&rs) != last {
			t.Fatalf("step %d: range %+v: first %d last %d, want %d %d", step, rs, s.FirstInRange(&rs), s.LastInRange(&rs), first, last)
		}
	}
}

func hasKey(m map[string]float64, k string) bool { _, ok := m[k]; return ok }

// ---- doubles ---------------------------------------------------------------------

func TestZParseScore(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true}, {"-1.5", -1.5, true}, {"+2", 2, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"1e3", 1000, true}, {"1E-2", 0.01, true}, {"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true},
		{"0x10", 16, true}, {"0x1p-2", 0.25, true}, {"0x.8", 0.5, true}, {"4e-320", 4e-320, true},
		{"-0", math.Copysign(0, -1), true}, {"0e0", 0, true},
		{"", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"nan", 0, false}, {"NaN(123)", 0, false},
		{"1e400", 0, false}, {"1e-400", 0, false}, {"1_0", 0, false}, {"0x", 0, false}, {"1e", 0, false},
		{"0x1p", 0, false}, {".", 0, false}, {"e5", 0, false}, {"1\x00", 0, false}, {"infin", 0, false},
		{"--1", 0, false}, {"0x_1p0", 0, false},
	} {
		got, ok := ParseScore([]byte(c.in))
		if ok != c.ok || ok && (got != c.want || math.Signbit(got) != math.Signbit(c.want)) {
			t.Errorf("parseScore(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		in     string
		want   float64
		ex, ok bool
	}{
		{"", 0, false, true}, {"(", 0, true, true}, {" 2", 2, false, true}, {"(\t3", 3, true, true},
		{"1e400", math.Inf(1), false, true}, {"(-1e400", math.Inf(-1), true, true}, {"1e-400", 0, false, true},
		{"1\x00junk", 1, false, true}, {"2 ", 0, false, false}, {"  ", 0, false, false}, {"nan", 0, false, false},
		{"((1", 0, false, false}, {"[1", 0, false, false},
	} {
		got, ex, ok := parseScoreBound([]byte(c.in))
		if ok != c.ok || ok && (got != c.want || ex != c.ex) {
			t.Errorf("parseScoreBound(%q) = %v, %v, %v; want %v, %v, %v", c.in, got, ex, ok, c.want, c.ex, c.ok)
		}
	}
}

type zmPair struct {
	m string
	s float64
}

// sortedPairs is model's members in skiplist order: by score, then member.
func sortedPairs(model map[string]float64) []zmPair {
	out := make([]zmPair, 0, len(model))
	for m, s := range model {
		out = append(out, zmPair{m, s})
	}
	slices.SortFunc(out, func(a, b zmPair) int {
		if a.s != b.s {
			return cmp.Compare(a.s, b.s)
		}
		return strings.Compare(a.m, b.m)
	})
	return out
}
