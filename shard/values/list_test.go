package values

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQnodeEntries checks the node format on value lengths around the
// varint boundaries, walked both ways.
func TestQnodeEntries(t *testing.T) {
	var vals [][]byte
	for _, n := range []int{0, 1, 126, 127, 128, 129, 16383, 16384, 16385, 300000} {
		vals = append(vals, bytes.Repeat([]byte{byte('a' + n%26)}, n))
	}
	n := &qnode{buf: make([]byte, 16)}
	for i, v := range vals {
		if i%2 == 0 {
			n.insert(n.head, v)
		} else {
			n.insert(n.tail, v)
		}
	}
	var fwd, back [][]byte
	for off := n.head; off < n.tail; {
		var v []byte
		v, off = n.entryAt(off)
		fwd = append(fwd, v)
	}
	for off := n.tail; off > n.head; {
		var v []byte
		v, off = n.entryBefore(off)
		back = append(back, v)
	}
	slices.Reverse(back)
	if len(fwd) != len(vals) || !slices.EqualFunc(fwd, back, bytes.Equal) {
		t.Fatalf("forward and backward walks differ: %d vs %d entries", len(fwd), len(back))
	}
	// replace each with a value of another size class and read it back
	for i := range vals {
		off := n.offsetOf(i)
		nv := vals[(i+3)%len(vals)]
		n.replace(off, nv)
		if got, _ := n.entryAt(n.offsetOf(i)); !bytes.Equal(got, nv) {
			t.Fatalf("replace %d: got %d bytes; want %d", i, len(got), len(nv))
		}
	}
	if n.count != len(vals) {
		t.Fatalf("count %d", n.count)
	}
}

// TestQuicklistCompression checks list-compress-depth: with depth d the d
// nodes at each end stay plain and the nodes between are compressed
// (Verify), reads leave the list and its Memory as they are, elements read
// back the same through Index, iterators both ways, Set, Insert, pops and
// Clone, and a long list of repetitive elements takes far less memory.
func TestQuicklistCompression(t *testing.T) {
	const n = 20000
	elem := func(i int) []byte { return fmt.Appendf(nil, "user:%08d:session:active", i) }
	build := func(depth int) (*Quicklist, []string) {
		q := NewQuicklist(depth)
		var want []string
		for i := range n {
			q.Push(elem(i), false, -2)
			want = append(want, string(elem(i)))
		}
		return q, want
	}
	plain, _ := build(0)
	for _, depth := range []int{1, 3} {
		q, want := build(depth)
		check := func(what string) {
			t.Helper()
			got, err := q.Verify()
			if err != nil {
				t.Fatalf("depth %d, %s: %v", depth, what, err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("depth %d, %s: elements differ", depth, what)
			}
		}
		check("after RPUSH")
		compressed := 0
		for _, nd := range q.nodes[q.lo:q.hi] {
			if nd.z != nil {
				compressed++
			}
		}
		if want := q.numNodes() - 2*depth; compressed != want {
			t.Errorf("depth %d: %d of %d nodes compressed, want %d", depth, compressed, q.numNodes(), want)
		}
		if q.Memory()*3 > plain.Memory() {
			t.Errorf("depth %d: %d bytes compressed, %d plain: want at least 3x smaller", depth, q.Memory(), plain.Memory())
		}
		mem := q.Memory()
		for _, i := range []int{0, 1, n / 2, n - 2, n - 1, 777} {
			if got := q.Index(i); string(got) != want[i] {
				t.Fatalf("depth %d: Index(%d) = %q, want %q", depth, i, got, want[i])
			}
			it := q.IterAt(i, true)
			for j := i; j >= max(0, i-500); j-- {
				if got := it.Next(); string(got) != want[j] {
					t.Fatalf("depth %d: backward from %d: element %d = %q, want %q", depth, i, j, got, want[j])
				}
			}
		}
		it := q.IterAt(0, false)
		for j := range n {
			if got := it.Next(); string(got) != want[j] {
				t.Fatalf("depth %d: forward: element %d = %q, want %q", depth, j, got, want[j])
			}
		}
		if q.Memory() != mem {
			t.Fatalf("depth %d: reads changed Memory from %d to %d", depth, mem, q.Memory())
		}
		check("after reads")
		q.Set(n/2, []byte("changed"), -2)
		want[n/2] = "changed"
		q.Insert(n/3, []byte("inserted"), -2)
		want = slices.Insert(want, n/3, "inserted")
		check("after Set and Insert")
		c := q.Clone().(*Quicklist)
		if c.Memory() > q.Memory()*11/10 {
			t.Errorf("depth %d: Clone takes %d bytes, the original %d: it is not compressed as well", depth, c.Memory(), q.Memory())
		}
		for range n / 2 {
			q.Pop(true)
		}
		want = want[n/2:]
		check("after LPOPs")
		q.DelBack(n / 4)
		want = want[:len(want)-n/4]
		check("after DelBack")
		q = c
		want = nil
		for i := range n {
			want = append(want, string(elem(i)))
		}
		want[n/2] = "changed"
		want = slices.Insert(want, n/3, "inserted")
		check("the clone")
	}
}

// TestQuicklistPushMany checks that PushMany leaves a quicklist exactly as
// the same Push calls one by one would: the same elements in the same
// order (Verify walks them both ways and checks Memory), and the same
// entries in every node, for both ends, fills by size and by count,
// compression, values larger than a node, runs that start on an existing
// list and reuse of the spare node.
func TestQuicklistPushMany(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, fill := range []int64{-2, -1, -5, 1, 5, 128} {
		for _, depth := range []int{0, 1, 2} {
			for _, front := range []bool{false, true} {
				one, many := NewQuicklist(depth), NewQuicklist(depth)
				for round := range 8 {
					vs := make([][]byte, rng.IntN(3000))
					for i := range vs {
						n := rng.IntN(40)
						switch rng.IntN(200) {
						case 0:
							n = 9000 + rng.IntN(70000) // more than one node holds
						case 1:
							n = 0
						}
						vs[i] = bytes.Repeat([]byte{byte('a' + i%26)}, n)
						vs[i] = fmt.Appendf(vs[i][:0], "%d:%d:%s", round, i, vs[i])
					}
					for _, v := range vs {
						one.Push(v, front, fill)
					}
					many.PushMany(vs, front, fill)
					what := fmt.Sprintf("fill %d depth %d front %v round %d (%d values)", fill, depth, front, round, len(vs))
					want, err := one.Verify()
					if err != nil {
						t.Fatalf("%s: Push: %v", what, err)
					}
					got, err := many.Verify()
					if err != nil {
						t.Fatalf("%s: PushMany: %v", what, err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s: elements differ", what)
					}
					if one.numNodes() != many.numNodes() {
						t.Fatalf("%s: %d nodes, Push made %d", what, many.numNodes(), one.numNodes())
					}
					for i := range one.numNodes() {
						if a, b := one.nodes[one.lo+i], many.nodes[many.lo+i]; a.count != b.count || (a.z == nil) != (b.z == nil) {
							t.Fatalf("%s: node %d holds %d entries (compressed %v), Push's %d (%v)", what, i, b.count, b.z != nil, a.count, a.z != nil)
						}
					}
					// Empty some nodes now and then, so the spare node is
					// used by the next run.
					if k := rng.IntN(2000); round%3 == 1 && k < one.Len() {
						one.DelFront(k)
						many.DelFront(k)
					}
				}
			}
		}
	}
}

// BenchmarkQuicklistPushMany pushes 2M 10-byte values onto an empty
// quicklist one by one (Push) and in one PushMany, as a 2M-argument RPUSH.
func BenchmarkQuicklistPushMany(b *testing.B) {
	vs := make([][]byte, 2_000_000)
	for i := range vs {
		vs[i] = fmt.Appendf(nil, "%010d", i)
	}
	b.Run("Push", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q := NewQuicklist(0)
			for _, v := range vs {
				q.Push(v, false, -2)
			}
		}
	})
	b.Run("PushMany", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NewQuicklist(0).PushMany(vs, false, -2)
		}
	})
}
