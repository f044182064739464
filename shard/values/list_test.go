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
