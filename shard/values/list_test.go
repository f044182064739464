package values

import (
	"bytes"
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
	n := &QuicklistNode{Buf: make([]byte, 16)}
	for i, v := range vals {
		if i%2 == 0 {
			n.Insert(n.Head, v)
		} else {
			n.Insert(n.Tail, v)
		}
	}
	var fwd, back [][]byte
	for off := n.Head; off < n.Tail; {
		var v []byte
		v, off = n.EntryAt(off)
		fwd = append(fwd, v)
	}
	for off := n.Tail; off > n.Head; {
		var v []byte
		v, off = n.EntryBefore(off)
		back = append(back, v)
	}
	slices.Reverse(back)
	if len(fwd) != len(vals) || !slices.EqualFunc(fwd, back, bytes.Equal) {
		t.Fatalf("forward and backward walks differ: %d vs %d entries", len(fwd), len(back))
	}
	// replace each with a value of another size class and read it back
	for i := range vals {
		off := n.OffsetOf(i)
		nv := vals[(i+3)%len(vals)]
		n.Replace(off, nv)
		if got, _ := n.EntryAt(n.OffsetOf(i)); !bytes.Equal(got, nv) {
			t.Fatalf("replace %d: got %d bytes; want %d", i, len(got), len(nv))
		}
	}
	if n.Count != len(vals) {
		t.Fatalf("count %d", n.Count)
	}
}
