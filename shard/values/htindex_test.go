package values

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestHTableIndexChurn drives a set-shaped HTable through adds, finds and
// removals (the last entry moving into each hole), growth and shrinking,
// checking the index's invariants against a Go map as it goes.
func TestHTableIndexChurn(t *testing.T) {
	h := NewHTable(false, 0)
	ref := map[string]bool{}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func() {
		t.Helper()
		if err := h.Verify(); err != nil {
			t.Fatal(err)
		}
		if h.Len() != len(ref) {
			t.Fatalf("%d entries, want %d", h.Len(), len(ref))
		}
	}
	for round := range 4 {
		for range 3000 {
			k := []byte("m:" + strconv.Itoa(rng.IntN(4000)))
			if added := h.Add(k); added == ref[string(k)] {
				t.Fatalf("Add(%s) = %v with the key present: %v", k, added, ref[string(k)])
			}
			ref[string(k)] = true
		}
		check()
		for k := range ref {
			if p, ok := h.Find([]byte(k)); !ok || string(h.Key(p)) != k {
				t.Fatalf("Find(%s) = %d, %v", k, p, ok)
			}
		}
		if _, ok := h.Find([]byte("absent")); ok {
			t.Fatal("found an absent key")
		}
		keep := 1000 >> round // shrink below an eighth of the peak on the way
		for h.Len() > keep {
			p := rng.IntN(h.Len())
			delete(ref, string(h.Key(p)))
			h.RemoveAt(p)
		}
		check()
	}
}

// TestHTablePut drives a hash-shaped HTable through Put (new fields and
// overwrites of every size), Find and removals against a Go map, checking
// the invariants (the memory sum included) as it goes.
func TestHTablePut(t *testing.T) {
	h := NewHTable(true, 0)
	ref := map[string]string{}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 4 {
		for range 3000 {
			k := "f:" + strconv.Itoa(rng.IntN(4000))
			v := make([]byte, rng.IntN(40))
			for i := range v {
				v[i] = byte('a' + rng.IntN(26))
			}
			_, present := ref[k]
			if added := h.Put([]byte(k), v); added == present {
				t.Fatalf("Put(%s) = %v with the field present: %v", k, added, present)
			}
			ref[k] = string(v)
		}
		if err := h.Verify(); err != nil {
			t.Fatal(err)
		}
		if h.Len() != len(ref) {
			t.Fatalf("%d entries, want %d", h.Len(), len(ref))
		}
		for k, v := range ref {
			if p, ok := h.Find([]byte(k)); !ok || string(h.Value(p)) != v {
				t.Fatalf("Find(%s) = %d, %v", k, p, ok)
			}
		}
		keep := 1000 >> round
		for h.Len() > keep {
			p := rng.IntN(h.Len())
			delete(ref, string(h.Key(p)))
			h.RemoveAt(p)
		}
	}
}

// BenchmarkHTableIndex is a set's hash table of redis-benchmark's shape
// (100k members "element:<12 digits>", looked up at random), alone: no
// keyspace, no runtime, so cachegrind counts only the table's work.
func BenchmarkHTableIndex(b *testing.B) {
	const n = 100000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("element:" + strconv.Itoa(1_000_000_000_000 + i)[1:])
	}
	full := func() *HTable {
		h := NewHTable(false, 0)
		for _, k := range keys {
			h.Insert(k, nil)
		}
		return h
	}
	b.Run("Find", func(b *testing.B) {
		h, rng := full(), rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			if _, ok := h.Find(keys[rng.IntN(n)]); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("Add existing", func(b *testing.B) {
		h, rng := full(), rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			setAdd(h, keys[rng.IntN(n)])
		}
	})
	b.Run("RemoveAt random", func(b *testing.B) {
		h, rng := full(), rand.New(rand.NewPCG(1, 2))
		b.ReportAllocs()
		for b.Loop() {
			if h.Len() == 0 {
				b.StopTimer()
				h = full()
				b.StartTimer()
			}
			h.RemoveAt(rng.IntN(h.Len()))
		}
	})
}

// setAdd is SADD's use of the table.
func setAdd(h *HTable, k []byte) bool { return h.Add(k) }
