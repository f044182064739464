package bigbuf

import (
	"bytes"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
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

// TestPrefault: Prefault of a range that starts and ends inside pages
// makes exactly the pages under it resident (mincore), leaves the pages
// around it untouched, and changes no byte.
func TestPrefault(t *testing.T) {
	b, err := Alloc(4*Threshold, 4*Threshold, false)
	if err != nil {
		t.Fatal(err)
	}
	defer Free(b)
	b[pageSize+7] = 'x' // the first page of the range holds a byte already
	from, to := pageSize+5, 3*Threshold+17
	Prefault(b[from:to])
	if b[pageSize+7] != 'x' || !bytes.Equal(b[from:pageSize+7], make([]byte, 2)) {
		t.Fatal("Prefault changed bytes")
	}
	if noPopulate.Load() {
		t.Skip("kernel without MADV_POPULATE_WRITE: Prefault does nothing")
	}
	vec := make([]byte, len(b)/pageSize)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		t.Fatal(errno)
	}
	for i, v := range vec {
		want := i >= from/pageSize && i <= (to-1)/pageSize
		if (v&1 == 1) != want {
			t.Fatalf("page %d resident %v, want %v", i, v&1 == 1, want)
		}
	}
}
