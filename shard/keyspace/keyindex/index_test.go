package keyindex

import (
	"math/rand/v2"
	"testing"
)

// hashers give each test value its hash: a well mixed one, and ones that
// make long collision chains (few homes, few tags) to exercise probing,
// tombstones and wrap-around.
var hashers = map[string]func(v uint32) uint64{
	"mixed": func(v uint32) uint64 { return mix(uint64(v)) },
	"fewHomes": func(v uint32) uint64 {
		return mix(uint64(v))&0x00ff_ffff_ffff_ffff | uint64(v%3)<<62 // top bits: 3 homes
	},
	"sameTag": func(v uint32) uint64 { return mix(uint64(v)) &^ 0x7f }, // every tag equal
	"lastHome": func(v uint32) uint64 { // everything homes at the last bucket: chains wrap
		return ^uint64(0)&^0x7f | uint64(v)&0x7f
	},
}

func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// model runs ops against an Index and a map, checking lookups against the
// map after each op and the invariants (Verify) every check ops.
type model struct {
	t      *testing.T
	x      Index
	m      map[uint32]bool
	hashOf func(v uint32) uint64
}

func newModel(t *testing.T, hashOf func(v uint32) uint64) *model {
	return &model{t: t, m: map[uint32]bool{}, hashOf: hashOf}
}

func (md *model) find(v uint32) bool {
	calls := 0
	got, ok := md.x.Find(md.hashOf(v), func(c uint32) bool { calls++; return c == v })
	if ok && got != v {
		md.t.Fatalf("Find(%d) = %d", v, got)
	}
	return ok
}

// op applies one operation: insert (if absent) or remove, or a lookup,
// chosen by kind, on value v.
func (md *model) op(kind uint8, v uint32) {
	t := md.t
	switch kind % 4 {
	case 0, 1: // insert if absent
		if md.m[v] {
			if !md.find(v) {
				t.Fatalf("value %d in model, not found", v)
			}
			return
		}
		md.x.Insert(md.hashOf(v), v, md.hashOf)
		md.m[v] = true
	case 2: // remove
		removed := md.x.Remove(md.hashOf(v), v, md.hashOf)
		if removed != md.m[v] {
			t.Fatalf("Remove(%d) = %v; model has it: %v", v, removed, md.m[v])
		}
		delete(md.m, v)
	case 3: // a rehash step, as the cron does
		md.x.Step(int(v%8), md.hashOf)
	}
	if got := md.find(v); got != md.m[v] {
		t.Fatalf("after op %d: Find(%d) = %v; model %v", kind%4, v, got, md.m[v])
	}
	if md.x.Len() != len(md.m) {
		t.Fatalf("Len %d; model %d", md.x.Len(), len(md.m))
	}
}

func (md *model) check() {
	md.t.Helper()
	if err := md.x.Verify(md.hashOf); err != nil {
		md.t.Fatal(err)
	}
	for v := range md.m {
		if !md.find(v) {
			md.t.Fatalf("value %d lost", v)
		}
	}
	n := 0
	md.x.Each(rand.Uint64(), func(v uint32) bool {
		if !md.m[v] {
			md.t.Fatalf("Each gave %d, not in the model", v)
		}
		n++
		return true
	})
	if n != len(md.m) {
		md.t.Fatalf("Each gave %d values; model has %d", n, len(md.m))
	}
}

// TestIndexMatchesModel is the property test: random inserts, removes,
// lookups and cron steps, in phases that grow the index, hold it steady and
// empty it (so it grows, is rebuilt for tombstones and shrinks, often in the
// middle of a rehash), against a map, under each hasher. Seeded: a failure
// prints its seed.
func TestIndexMatchesModel(t *testing.T) {
	for name, hashOf := range hashers {
		for seed := uint64(1); seed <= 6; seed++ {
			r := rand.New(rand.NewPCG(seed, 0x1d))
			md := newModel(t, hashOf)
			universe := uint32(50 + r.IntN(3000))
			if name == "lastHome" || name == "sameTag" {
				universe = min(universe, 600) // quadratic by design
			}
			for phase, bias := range []int{80, 50, 20, 60, 5} { // % of ops that insert
				for i := range 4000 {
					kind := uint8(2)
					if p := r.IntN(100); p < bias {
						kind = 0
					} else if p > 95 {
						kind = 3
					}
					md.op(kind, r.Uint32N(universe))
					if i%500 == 0 {
						md.check()
					}
				}
				md.check()
				_ = phase
			}
			if t.Failed() {
				t.Fatalf("hasher %s seed %d", name, seed)
			}
		}
	}
}

// TestIndexWidensForLargeValues is the property test over values on both
// sides of narrowMax: small ones first, so the index starts narrow (4-byte
// buckets), then a mix with values up to the largest uint32, so an insert
// widens it, often in the middle of a rehash; every value must stay found
// and the widths right (Verify).
func TestIndexWidensForLargeValues(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x2e))
		md := newModel(t, hashers["mixed"])
		small := func() uint32 { return r.Uint32N(3000) }
		large := func() uint32 {
			switch r.IntN(3) {
			case 0:
				return narrowMax - 5 + r.Uint32N(10) // both sides of the boundary
			case 1:
				return 1<<32 - 1 - r.Uint32N(100)
			}
			return r.Uint32()
		}
		for i := range 2000 + r.IntN(3000) {
			md.op(uint8(r.IntN(4))&1, small()) // inserts (of a present value: a lookup)
			if i%500 == 0 {
				md.check()
			}
		}
		if md.x.cur.w != narrowBucket || md.x.Bytes() != md.x.cur.size()*narrowBucket+1+len(md.x.old.b) {
			t.Fatalf("seed %d: %d small values: cur width %d, %d bytes", seed, len(md.m), md.x.cur.w, md.x.Bytes())
		}
		for i := range 6000 {
			kind := uint8(r.IntN(4))
			v := small()
			if r.IntN(10) == 0 {
				v = large()
			}
			md.op(kind, v)
			if i%500 == 0 {
				md.check()
			}
		}
		md.check()
		if md.x.top <= narrowMax || md.x.cur.w != wideBucket {
			t.Fatalf("seed %d: top %d, cur width %d: want a wide table after large values", seed, md.x.top, md.x.cur.w)
		}
	}
}

// TestIndexGrowsIncrementally checks that growth spreads its work: while
// 1<<16 values go in one by one, no Insert moves more than stepEntries old
// entries (hashOf calls), and the old table is drained before the next
// growth.
func TestIndexGrowsIncrementally(t *testing.T) {
	var x Index
	calls := 0
	hashOf := func(v uint32) uint64 { calls++; return mix(uint64(v)) }
	grows := 0
	for v := range uint32(1 << 16) {
		calls = 0
		wasRehashing := x.Rehashing()
		before, _ := x.Buckets()
		x.Insert(mix(uint64(v)), v, hashOf)
		if calls > stepEntries {
			t.Fatalf("insert %d called hashOf %d times", v, calls)
		}
		if after, _ := x.Buckets(); after != before {
			grows++
			if wasRehashing {
				t.Fatalf("insert %d grew the table before the previous rehash finished", v)
			}
		}
	}
	if err := x.Verify(func(v uint32) uint64 { return mix(uint64(v)) }); err != nil {
		t.Fatal(err)
	}
	if grows < 10 {
		t.Fatalf("only %d growths", grows)
	}
}

// TestIndexShrinksToEmpty checks that removing every value gives the
// memory back: the tables shrink to the minimum.
func TestIndexShrinksToEmpty(t *testing.T) {
	var x Index
	h := func(v uint32) uint64 { return mix(uint64(v)) }
	for v := range uint32(100000) {
		x.Insert(h(v), v, h)
	}
	for v := range uint32(100000) {
		if !x.Remove(h(v), v, h) {
			t.Fatalf("Remove(%d) false", v)
		}
	}
	if cur, old := x.Buckets(); x.Len() != 0 || cur > 64 || old != 0 {
		t.Fatalf("empty index: len %d, %d buckets, old %d", x.Len(), cur, old)
	}
	if err := x.Verify(h); err != nil {
		t.Fatal(err)
	}
}

// FuzzIndex runs the byte string as operations (a kind byte, a value byte)
// against the map model, with a collision-prone hasher picked by the first
// byte.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 0, 1, 2, 0})
	f.Add([]byte{1, 0, 5, 0, 6, 2, 5, 0, 7, 3, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		names := []string{"mixed", "fewHomes", "sameTag", "lastHome"}
		md := newModel(t, hashers[names[int(ops[0])%len(names)]])
		ops = ops[1:]
		for i := 0; i+1 < len(ops); i += 2 {
			md.op(ops[i], uint32(ops[i+1])|uint32(ops[i]>>2)<<8)
		}
		md.check()
	})
}
