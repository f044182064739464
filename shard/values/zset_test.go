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

// TestZSkiplistSetScore drives SetScore on a list tall enough for several
// levels (3,000 members) with both kinds of change it distinguishes: small
// ones that keep a node between its neighbours (updated in place, with no
// search for a one-level node) and moves (the old search stopped at level
// 1, the level-0 rank correction made by comparing keys), ties on the
// score included. Every member's rank is checked against a model.
func TestZSkiplistSetScore(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := NewSkiplist(0)
	model := map[string]float64{}
	const n = 3000
	for i := range n {
		m := "m" + strconv.Itoa(i)
		s.Add([]byte(m), float64(i*8))
		model[m] = float64(i * 8)
	}
	for step := range 20000 {
		m := "m" + strconv.Itoa(r.IntN(n))
		x, ok := s.Find([]byte(m))
		if !ok {
			t.Fatalf("step %d: %s not found", step, m)
		}
		var sc float64
		switch r.IntN(4) {
		case 0: // a nudge, mostly in place
			sc = model[m] + float64(r.IntN(7)-3)
		case 1: // onto another member's score: a tie
			sc = model["m"+strconv.Itoa(r.IntN(n))]
		default:
			sc = float64(r.IntN(n * 8))
		}
		s.SetScore(x, sc)
		model[m] = sc
		if step%500 != 0 {
			continue
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for i, p := range sortedPairs(model) {
			x, _ := s.Find([]byte(p.m))
			if s.Rank(x) != i+1 || s.Score(x) != p.s {
				t.Fatalf("step %d: %s rank %d score %v, want %d %v", step, p.m, s.Rank(x), s.Score(x), i+1, p.s)
			}
		}
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

func hasKey(m map[string]float64, k string) bool { _, ok := m[k]; return ok }

// ---- doubles ---------------------------------------------------------------------

// TestZParseShortInteger checks ParseScore's integer path against strtod's
// reading of the same text: the same value, sign of zero included.
func TestZParseShortInteger(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		n := 1 + i%15
		b := make([]byte, 0, n+1)
		switch rng.IntN(3) {
		case 1:
			b = append(b, '-')
		case 2:
			b = append(b, '+')
		}
		for range n {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		fast, ok := parseShortInteger(b)
		slow, sok, _, _ := cStrtod(b)
		if !ok || !sok || fast != slow || math.Signbit(fast) != math.Signbit(slow) {
			t.Fatalf("%q: integer path %v (%v), strtod %v (%v)", b, fast, ok, slow, sok)
		}
	}
}

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
		{"000000012345", 12345, true}, {"-000", math.Copysign(0, -1), true}, {"+0", 0, true},
		{"999999999999999", 999999999999999, true}, {"9007199254740993", 9007199254740992, true},
		{"-", 0, false}, {"+", 0, false}, {"12a", 0, false}, {"-+1", 0, false},
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

// TestZlScoreEntries: every score comes back from its listpack entry
// exactly (bit for bit, but -0 as 0), integral scores below 2^55 take at
// most 7 bytes and the fewest that hold them, and other scores take 8.
func TestZlScoreEntries(t *testing.T) {
	scores := []float64{0, math.Copysign(0, -1), 1, -1, 127, 128, -128, -129, 32767, 32768,
		1 << 54, -(1 << 54), 1<<55 - 1, -(1<<55 - 1), 1 << 55, -(1 << 55), 1 << 60, 1.5, -0.25,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), 1e300, 3.14159}
	r := rand.New(rand.NewPCG(9, 9))
	for range 20000 {
		switch r.IntN(3) {
		case 0:
			scores = append(scores, float64(r.Int64N(1<<56)-1<<55))
		case 1:
			scores = append(scores, float64(int64(r.Uint64())>>uint(r.IntN(64))))
		default:
			scores = append(scores, math.Float64frombits(r.Uint64()))
		}
	}
	var buf [ZlScoreLen]byte
	for _, f := range scores {
		if math.IsNaN(f) {
			continue // never stored: ZADD refuses NaN
		}
		b := ZlScoreBytes(&buf, f)
		want := f
		if f == 0 {
			want = 0
		}
		got := zlScoreOf(b)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("score %v (%#x): entry %x reads back %v", f, math.Float64bits(f), b, got)
		}
		integral := f == math.Trunc(f) && math.Abs(f) < 1<<55
		switch {
		case integral && len(b) >= ZlScoreLen:
			t.Fatalf("integral score %v takes %d bytes", f, len(b))
		case integral && len(b) > 0 && len(b) < 8:
			if v := int64(f); len(b) > 1 && v >= -(1<<(8*(len(b)-1)-1)) && v < 1<<(8*(len(b)-1)-1) {
				t.Fatalf("score %v takes %d bytes; %d hold it", f, len(b), len(b)-1)
			}
		case !integral && len(b) != ZlScoreLen:
			t.Fatalf("score %v takes %d bytes, want %d", f, len(b), ZlScoreLen)
		}
		if ZlScoreEntrySize(f) != 1+len(b) {
			t.Fatalf("ZlScoreEntrySize(%v) = %d, entry %d", f, ZlScoreEntrySize(f), 1+len(b))
		}
	}
}

// TestZlModel: random inserts, score updates and deletes on a listpack
// sorted set with integer, fractional and infinite scores agree with a
// model after every step: the pairs in (score, member) order, ZlFind of
// each member, and the listpack's framing.
func TestZlModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	lp := make([]byte, 4)
	model := map[string]float64{}
	score := func() float64 {
		switch r.IntN(5) {
		case 0:
			return float64(r.IntN(600) - 300)
		case 1:
			return float64(r.Int64N(1<<56) - 1<<55)
		case 2:
			return math.Inf(1 - 2*r.IntN(2))
		case 3:
			return 0
		}
		return r.NormFloat64() * 1e6
	}
	for step := range 5000 {
		m := "m" + strconv.Itoa(r.IntN(40))
		off, _ := ZlFind(lp, []byte(m))
		if r.IntN(3) == 0 {
			if off >= 0 {
				lp = ZlDelete(lp, off)
				delete(model, m)
			}
		} else {
			if off >= 0 {
				lp = ZlDelete(lp, off)
			}
			s := score()
			lp = ZlInsert(lp, []byte(m), s)
			model[m] = s
		}
		if err := VerifyListpack(lp, false); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		type pair struct {
			m string
			s float64
		}
		var want []pair
		for k, v := range model {
			want = append(want, pair{k, v})
		}
		slices.SortFunc(want, func(a, b pair) int {
			if c := cmp.Compare(a.s, b.s); c != 0 {
				return c
			}
			return strings.Compare(a.m, b.m)
		})
		i := 0
		for off := 4; off < len(lp); i++ {
			gm, gs, next := ZlAt(lp, off)
			if i >= len(want) || string(gm) != want[i].m || gs != want[i].s {
				t.Fatalf("step %d: pair %d is %s %v, want %v", step, i, gm, gs, want)
			}
			if _, fs := ZlFind(lp, gm); fs != gs {
				t.Fatalf("step %d: ZlFind(%s) = %v, ZlAt %v", step, gm, fs, gs)
			}
			off = next
		}
		if i != len(want) || ZlLen(lp) != len(want) {
			t.Fatalf("step %d: %d pairs (ZlLen %d), want %d", step, i, ZlLen(lp), len(want))
		}
	}
}
