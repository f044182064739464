package values

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPELIndexAgainstMap drives a PEL index through leaf splits, appends in
// ID order and merges, checking order, lookups, seeks and memory.
func TestPELIndexAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var p PELIndex
	var acct int64
	model := map[StreamID]*StreamNACK{}
	next := uint64(0)
	for step := range 60000 {
		var id StreamID
		switch op := r.IntN(10); {
		case op < 3: // append in ID order, as XREADGROUP does
			next++
			id = StreamID{Ms: next, Seq: 0}
		case op < 5:
			id = StreamID{Ms: uint64(r.IntN(int(next) + 1)), Seq: uint64(r.IntN(2))}
		default:
			id = StreamID{Ms: uint64(r.IntN(int(next) + 1)), Seq: 0}
			if _, ok := model[id]; ok {
				if !p.Delete(id, &acct) {
					t.Fatalf("step %d: delete %v found nothing", step, id)
				}
				delete(model, id)
			} else if p.Delete(id, &acct) {
				t.Fatalf("step %d: deleted missing %v", step, id)
			}
			continue
		}
		if _, ok := model[id]; ok {
			continue
		}
		n := &StreamNACK{DeliveryCount: int64(step)}
		p.Insert(id, n, &acct)
		model[id] = n
		if step%1000 == 0 || step > 59000 {
			ids := slices.SortedFunc(func(yield func(StreamID) bool) {
				for id := range model {
					if !yield(id) {
						return
					}
				}
			}, StreamID.Cmp)
			i := 0
			for cur := p.First(); cur.Valid(&p); cur = p.Next(cur) {
				it := p.At(cur)
				if i >= len(ids) || it.Id != ids[i] || it.N != model[it.Id] {
					t.Fatalf("step %d: item %d is %v", step, i, it.Id)
				}
				i++
			}
			if i != len(ids) || p.N != len(ids) {
				t.Fatalf("step %d: %d items iterated, n %d, model %d", step, i, p.N, len(ids))
			}
			mem, cnt := p.Recount()
			if mem != p.Mem || mem != acct || cnt != p.N {
				t.Fatalf("step %d: mem %d acct %d recount %d", step, p.Mem, acct, mem)
			}
			probe := StreamID{Ms: uint64(r.IntN(int(next) + 2)), Seq: 0}
			cur, found := p.Seek(probe)
			j, want := slices.BinarySearchFunc(ids, probe, StreamID.Cmp)
			if found != want || cur.Valid(&p) != (j < len(ids)) || j < len(ids) && p.At(cur).Id != ids[j] {
				t.Fatalf("step %d: seek %v", step, probe)
			}
			if len(p.leaves) > 4*len(ids)/pelLeafMax+4 {
				t.Fatalf("step %d: %d leaves for %d items", step, len(p.leaves), len(ids))
			}
		}
	}
	for id := range model {
		p.Delete(id, &acct)
	}
	if p.N != 0 || p.Mem != 0 || acct != 0 || p.leaves != nil {
		t.Fatalf("emptied index keeps n %d mem %d acct %d", p.N, p.Mem, acct)
	}
}
