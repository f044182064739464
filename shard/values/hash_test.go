package values

import (
	"bytes"
	"fmt"
	"testing"
)

// checkHTable verifies HTable's invariants (see the type's comment).
func checkHTable(t *testing.T, h *HTable) {
	t.Helper()
	if h.index.used != len(h.keys) {
		t.Fatalf("len(index) %d != len(keys) %d", h.index.used, len(h.keys))
	}
	if err := h.index.verify(h.keys); err != nil {
		t.Fatal(err)
	}
	var mem int64
	for i, k := range h.keys {
		if j, _ := h.index.find(k); j != i {
			t.Fatalf("index[%q] = %d, want %d", k, j, i)
		}
		mem += int64(len(k))
		if h.hash {
			mem += int64(cap(h.vals[i]))
		}
	}
	if h.hash && len(h.vals) != len(h.keys) {
		t.Fatalf("len(vals) %d != len(keys) %d", len(h.vals), len(h.keys))
	}
	if mem != h.mem {
		t.Fatalf("mem %d, want %d", h.mem, mem)
	}
	if h.peak < len(h.keys) {
		t.Fatalf("peak %d < len %d", h.peak, len(h.keys))
	}
}

// TestHTableReserve: Reserve keeps every position and value, grows the
// arrays once for what is announced, and does nothing for small or
// relatively small additions (an HSET of one field on a big hash must not
// rebuild its map).
func TestHTableReserve(t *testing.T) {
	h := NewHTable(true, 64)
	for i := range 200 {
		h.Insert(fmt.Appendf(nil, "f%d", i), fmt.Appendf(nil, "v%d", i))
	}
	checkHTable(t, h)

	h.Reserve(100) // below reserveMin: nothing
	if h.peak != 200 {
		t.Fatalf("Reserve(100) changed peak to %d", h.peak)
	}
	h.Reserve(5000)
	if h.peak != 5200 || cap(h.keys) < 5200 || cap(h.vals) < 5200 {
		t.Fatalf("after Reserve(5000): peak %d, cap(keys) %d, cap(vals) %d", h.peak, cap(h.keys), cap(h.vals))
	}
	checkHTable(t, h)
	for i := range 200 {
		p, ok := h.Find(fmt.Appendf(nil, "f%d", i))
		if !ok || p != i || !bytes.Equal(h.Value(p), fmt.Appendf(nil, "v%d", i)) {
			t.Fatalf("f%d: position %d (%v), value %q after Reserve", i, p, ok, h.Value(p))
		}
	}
	keys := cap(h.keys)
	for i := 200; i < 5200; i++ {
		h.Insert(fmt.Appendf(nil, "f%d", i), nil)
	}
	if cap(h.keys) != keys {
		t.Fatalf("the reserved inserts grew keys again: cap %d -> %d", keys, cap(h.keys))
	}
	checkHTable(t, h)

	h.Reserve(2000) // no more than the table holds: would cost a rebuild per call
	if h.peak != 5200 {
		t.Fatalf("Reserve(2000) on 5200 entries changed peak to %d", h.peak)
	}
}
