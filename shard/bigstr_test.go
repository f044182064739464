package shard

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/shard/bigbuf"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// checkOffHeap walks every database of rt (tokens idle: the producer's
// commands have completed) and checks bigstr.go's invariants: o.OffHeap ⇔
// o ∈ d.OffHeapStrings(), only strings are off-heap, d.offHeap is the sum of their
// capacities, and an off-heap buffer is never shared by two objects.
// The pages they map add up to what bigbuf has mapped since base (no
// buffer mapped and not owned, none owned by an object that does not know
// it). It returns how many off-heap strings there are.
func checkOffHeap(t *testing.T, rt *Runtime, base int64, step int, what string) int {
	t.Helper()
	seen := map[*byte]string{}
	page := os.Getpagesize()
	var mapped int64
	for _, s := range rt.shards {
		for n, d := range s.store.DBs() {
			var sum int64
			count := 0
			for _, pos := range d.Index() {
				o := d.Slot(pos)
				if !o.OffHeap() {
					if _, in := d.OffHeapStrings()[o]; in {
						t.Fatalf("step %d (%s): %s in db %d's big set but not off-heap", step, what, o.Key(), n)
					}
					continue
				}
				count++
				if _, in := d.OffHeapStrings()[o]; !in {
					t.Fatalf("step %d (%s): off-heap %s missing from db %d's big set", step, what, o.Key(), n)
				}
				if o.Kind != keyspace.KindString || (o.Enc != keyspace.EncRaw && o.Enc != keyspace.EncRawEdited) || cap(o.Bytes()) < bigbuf.Threshold {
					t.Fatalf("step %d (%s): off-heap %s: kind %v enc %d cap %d", step, what, o.Key(), o.Kind, o.Enc, cap(o.Bytes()))
				}
				p := &o.Bytes()[:1][0]
				if other, dup := seen[p]; dup {
					t.Fatalf("step %d (%s): %s and %s share one buffer", step, what, o.Key(), other)
				}
				seen[p] = o.Key()
				sum += int64(cap(o.Bytes()))
				mapped += int64((cap(o.Bytes()) + page - 1) &^ (page - 1))
			}
			if count != len(d.OffHeapStrings()) || sum != d.OffHeapBytes() {
				t.Fatalf("step %d (%s): db %d: %d off-heap objects, big set %d; capacities %d, counter %d",
					step, what, n, count, len(d.OffHeapStrings()), sum, d.OffHeapBytes())
			}
		}
	}
	if got := bigbuf.Mapped() - base; got != mapped {
		t.Fatalf("step %d (%s): bigbuf has %d bytes mapped; the objects own %d", step, what, got, mapped)
	}
	return len(seen)
}

// TestOffHeapInvariants runs random string commands on keys around 1 MiB
// across shards and two databases and checks the ownership invariants after
// every one; at the end every key goes and the counters are exactly 0.
func TestOffHeapInvariants(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	p := newProducer(rt, table)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", "{a}x"}
	val := func() string {
		n := []int{10, 600 << 10, bigbuf.Threshold - 1, bigbuf.Threshold, 2*bigbuf.Threshold + 5}[rng.IntN(5)]
		return strings.Repeat("v", n)
	}
	most, base := 0, bigbuf.Mapped()
	for step := range 300 {
		k, k2 := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
		var args []string
		switch rng.IntN(12) {
		case 0:
			args = []string{"SET", k, val()}
		case 1, 2:
			args = []string{"APPEND", k, val()}
		case 3:
			args = []string{"SETRANGE", k, strconv.Itoa(rng.IntN(3 << 20)), "x"}
		case 4:
			args = []string{"DEL", k}
		case 5:
			args = []string{"COPY", k, k2, "DB", strconv.Itoa(rng.IntN(2)), "REPLACE"}
		case 6:
			args = []string{"RENAME", k, k2}
		case 7:
			args = []string{"SET", k, "12"}
		case 8:
			args = []string{"INCR", k}
		case 9:
			args = []string{"GETDEL", k}
		case 10:
			args = []string{"MSET", k, val(), k2, val()}
		case 11:
			if rng.IntN(4) == 0 {
				args = []string{"FLUSHALL"}
			} else {
				args = []string{"GETSET", k, val()}
			}
		}
		p.do(args...)
		most = max(most, checkOffHeap(t, rt, base, step, args[0]))
	}
	if most < 3 {
		t.Fatalf("at most %d off-heap strings at once: the mix does not test much", most)
	}
	p.do("FLUSHALL")
	checkOffHeap(t, rt, base, -1, "FLUSHALL")
	for _, s := range rt.shards {
		for _, d := range s.store.DBs() {
			if d.OffHeapBytes() != 0 || d.OffHeapStrings() != nil {
				t.Fatalf("after FLUSHALL: counter %d, big set %v", d.OffHeapBytes(), d.OffHeapStrings())
			}
		}
	}
}
