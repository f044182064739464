package bigbuf

import (
	"bytes"
	"testing"
)

// TestAllocGrowZeroFree follows one buffer through its life: zeroed at
// birth, contents kept across growth (in place or moved), new room zero,
// Zero clearing a range that spans whole pages, and the mapped count back
// to where it started after Free.
func TestAllocGrowZeroFree(t *testing.T) {
	base := Mapped()
	b, err := Alloc(10, Threshold+1, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 10 || cap(b) != Threshold+1 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	if got := Mapped() - base; got != int64(pages(Threshold+1)) {
		t.Fatalf("mapped %d; want %d", got, pages(Threshold+1))
	}
	b = b[:cap(b)]
	if !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatal("a new buffer is not zero")
	}
	for i := range b {
		b[i] = byte(i)
	}
	want := bytes.Clone(b)
	for _, c := range []int{Threshold + 2, 3 * Threshold, 64 * Threshold} {
		old := cap(b)
		if b, err = Grow(b, old, c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b[:len(want)], want) {
			t.Fatalf("grow to %d lost the contents", c)
		}
		if tail := b[old:c]; !bytes.Equal(tail, make([]byte, len(tail))) {
			t.Fatalf("grow to %d: new room not zero", c)
		}
		b = b[:c]
	}
	Zero(b[100 : 40*pageSize+7])
	if z := b[100 : 40*pageSize+7]; !bytes.Equal(z, make([]byte, len(z))) {
		t.Fatal("Zero left bytes")
	}
	if !bytes.Equal(b[:100], want[:100]) || !bytes.Equal(b[40*pageSize+7:len(want)], want[40*pageSize+7:]) {
		t.Fatal("Zero touched bytes outside its range")
	}
	Free(b[:5])
	if got := Mapped(); got != base {
		t.Fatalf("mapped after Free %d; want %d", got, base)
	}
}
