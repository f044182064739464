package shard

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/shard/bigbuf"
)

// TestOffHeapBitmaps drives SETBIT, BITFIELD and BITOP over the off-heap
// threshold and checks bigstr.go's invariants after every step (the bitmap
// commands grow strings through GrowString, as SETRANGE does), that the
// bits counted are the bits set, and that FLUSHALL gives every mapping
// back and leaves used_memory at zero.
func TestOffHeapBitmaps(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	p := newProducer(rt, table)
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "b", "c", "{a}x"}
	set := map[string]map[int]bool{} // the bits set, per key
	offset := func() int {
		return []int{0, 7, 8*bigbuf.Threshold - 1, 8 * bigbuf.Threshold, 8*3*bigbuf.Threshold + 5}[rng.IntN(5)] + rng.IntN(64)
	}
	most, base := 0, bigbuf.Mapped()
	for step := range 200 {
		k := keys[rng.IntN(len(keys))]
		if set[k] == nil {
			set[k] = map[int]bool{}
		}
		var args []string
		switch rng.IntN(6) {
		case 0, 1:
			off, v := offset(), rng.IntN(2)
			args = []string{"SETBIT", k, strconv.Itoa(off), strconv.Itoa(v)}
			set[k][off] = v == 1
		case 2:
			off := offset()
			args = []string{"BITFIELD", k, "SET", "u8", strconv.Itoa(off), "255"}
			for i := range 8 {
				set[k][off+i] = true
			}
		case 3:
			src := keys[rng.IntN(len(keys))]
			args = []string{"BITOP", "OR", k, src, src}
			bits := map[int]bool{}
			for b, on := range set[src] {
				bits[b] = on
			}
			set[k] = bits
		case 4:
			args = []string{"DEL", k}
			delete(set, k)
		case 5:
			args = []string{"SET", k, "12"}
			set[k] = map[int]bool{2: true, 3: true, 7: true, 10: true, 11: true, 14: true} // "1" "2": 0x31 0x32
		}
		if r := p.do(args...); r.Type == '-' {
			t.Fatalf("step %d: %q: %s", step, args, r.Str)
		}
		most = max(most, checkOffHeap(t, rt, base, step, args[0]))
		for _, k := range keys {
			want := 0
			for _, on := range set[k] {
				if on {
					want++
				}
			}
			if r := p.do("BITCOUNT", k); r.Int != int64(want) {
				t.Fatalf("step %d (%q): BITCOUNT %s = %d, want %d", step, args, k, r.Int, want)
			}
		}
	}
	if most < 2 {
		t.Fatalf("at most %d off-heap strings at once: the mix does not test much", most)
	}
	p.do("FLUSHALL")
	checkOffHeap(t, rt, base, -1, "FLUSHALL")
	for _, s := range rt.shards {
		for _, d := range s.store.DBs() {
			if d.OffHeapBytes() != 0 || d.OffHeapStrings() != nil || d.Memory() != 0 {
				t.Fatalf("after FLUSHALL: off-heap %d, big set %v, used_memory %d", d.OffHeapBytes(), d.OffHeapStrings(), d.Memory())
			}
		}
	}
}
