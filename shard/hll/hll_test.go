package hll

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// TestMurmur64A pins MurmurHash64A with Redis' seed for every tail length:
// PFADD "a" on redis-server 7.0 sets register 12711 to 2 (PFDEBUG DECODE
// gives "Z:12711 v:2,1 Z:3672"), which only the exact hash gives.
func TestMurmur64A(t *testing.T) {
	idx, count := PatLen([]byte("a"))
	if idx != 12711 || count != 2 {
		t.Fatalf("PatLen(a) = %d, %d; want 12711, 2", idx, count)
	}
	s, _, _ := Add(NewSparse(nil), []byte("a"), DefaultSparseMax)
	if got := string(Decode(nil, s)); got != "Z:12711 v:2,1 Z:3672" {
		t.Fatalf("DECODE = %q", got)
	}
}

func TestDenseRegisters(t *testing.T) {
	regs := make([]byte, DenseSize-HeaderSize)
	for i := 0; i < Registers; i++ {
		denseSet(regs, i, uint8(i*7%64))
	}
	for i := 0; i < Registers; i++ {
		if v := denseGet(regs, i); v != uint8(i*7%64) {
			t.Fatalf("register %d = %d, want %d", i, v, i*7%64)
		}
	}
}

// TestSparseDenseAgree adds the same elements to a sparse and a dense HLL:
// they count the same, and the sparse one converted equals the dense one's
// registers, at every step up to and past the promotion.
func TestSparseDenseAgree(t *testing.T) {
	sparse := NewSparse(nil)
	dense, err := ToDense(NewSparse(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4000; i++ {
		ele := []byte(strconv.Itoa(i))
		sparse, _, err = Add(sparse, ele, DefaultSparseMax)
		if err != nil {
			t.Fatal(err)
		}
		dense, _, _ = Add(dense, ele, DefaultSparseMax)
		if sparse[4] == Sparse && len(sparse) > DefaultSparseMax {
			t.Fatalf("sparse HLL of %d bytes, over the limit", len(sparse))
		}
		if i%100 == 0 || sparse[4] == Dense && i < 3000 {
			a, err1 := Count(sparse)
			b, err2 := Count(dense)
			if err1 != nil || err2 != nil || a != b {
				t.Fatalf("after %d: sparse %d (%v), dense %d (%v)", i+1, a, err1, b, err2)
			}
			conv, err := ToDense(sparse)
			if err != nil || !bytes.Equal(conv[HeaderSize:], dense[HeaderSize:]) {
				t.Fatalf("after %d: sparse converted differs from dense (%v)", i+1, err)
			}
		}
	}
	if sparse[4] != Dense {
		t.Fatal("4000 elements: still sparse")
	}
}

func TestUnionCountsLikeMergedHLL(t *testing.T) {
	a, b := NewSparse(nil), NewSparse(nil)
	var err error
	for i := 0; i < 2000; i++ {
		a, _, _ = Add(a, []byte(fmt.Sprint("a", i)), DefaultSparseMax)
		b, _, _ = Add(b, []byte(fmt.Sprint("b", i)), 100) // promoted early
	}
	var u Union
	if err = u.Merge(a); err == nil {
		err = u.Merge(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := NewSparse(nil)
	for i, v := range u {
		if v != 0 {
			m, _, _ = Set(m, i, v, DefaultSparseMax)
		}
	}
	c1, _ := Count(m)
	if c2 := u.Count(); c1 != c2 || c1 < 3800 || c1 > 4200 {
		t.Fatalf("union count %d, merged HLL %d; want equal and near 4000", c2, c1)
	}
}

func TestCachedCardinality(t *testing.T) {
	s := NewSparse(nil)
	if c, ok := Cached(s); !ok || c != 0 {
		t.Fatalf("new HLL: cached %d %v", c, ok)
	}
	Invalidate(s)
	if _, ok := Cached(s); ok {
		t.Fatal("invalidated cache reads valid")
	}
	SetCached(s, 1234567)
	if c, ok := Cached(s); !ok || c != 1234567 {
		t.Fatalf("cached %d %v", c, ok)
	}
}

func TestCheck(t *testing.T) {
	dense, _ := ToDense(NewSparse(nil))
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{string(NewSparse(nil)), true},
		{string(dense), true},
		{string(dense[:DenseSize-1]), false},
		{"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", false},
		{"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", true}, // no opcodes: corrupt, found on read
		{"HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", false},
		{"HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", false},
	} {
		if _, err := Check([]byte(c.s)); (err == nil) != c.ok {
			t.Errorf("Check(%q) = %v, want ok=%v", c.s, err, c.ok)
		}
	}
}

func TestSelfTest(t *testing.T) {
	if testing.Short() {
		t.Skip("ten million elements")
	}
	if err := SelfTest(DefaultSparseMax); err != nil {
		t.Fatal(err)
	}
}

// TestDenseAddAllocs: PFADD's steady state (a dense HLL) allocates nothing.
func TestDenseAddAllocs(t *testing.T) {
	s, _ := ToDense(NewSparse(nil))
	ele := []byte("element:000000")
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		ele[len(ele)-1] = byte('0' + i%10)
		ele[len(ele)-2] = byte('0' + i/10%10)
		i++
		s, _, _ = Add(s, ele, DefaultSparseMax)
		Invalidate(s)
	}); n != 0 {
		t.Fatalf("dense Add: %.1f allocations, want 0", n)
	}
}

// FuzzHLL feeds arbitrary strings to everything that reads an HLL: no
// input may panic, a value that counts also converts and merges to the
// same count, and adding to it keeps it a valid HLL.
func FuzzHLL(f *testing.F) {
	s := NewSparse(nil)
	f.Add(append([]byte(nil), s...), []byte("a"))
	for i := 0; i < 300; i++ {
		s, _, _ = Add(s, []byte(strconv.Itoa(i)), DefaultSparseMax)
	}
	f.Add(append([]byte(nil), s...), []byte("x"))
	d, _ := ToDense(s)
	f.Add(d, []byte(""))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x00"), []byte("b"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"), []byte("b"))
	f.Fuzz(func(t *testing.T, s, ele []byte) {
		if _, err := Check(s); err != nil {
			return
		}
		_ = Decode(nil, s)
		var u Union
		mergeErr := u.Merge(s)
		c, err := Count(s)
		conv, convErr := ToDense(append([]byte(nil), s...))
		if (err == nil) != (convErr == nil) || (err == nil) != (mergeErr == nil) {
			t.Fatalf("Count %v, ToDense %v, Merge %v disagree", err, convErr, mergeErr)
		}
		if err != nil {
			return
		}
		if c2, _ := Count(conv); c2 != c || u.Count() != c {
			t.Fatalf("count %d, dense %d, union %d", c, c2, u.Count())
		}
		out, _, err := Add(append([]byte(nil), s...), ele, DefaultSparseMax)
		if err != nil {
			return // a cut-off opcode (see sparseSet)
		}
		if _, err := Check(out); err != nil {
			t.Fatalf("Add made an invalid HLL: %v", err)
		}
		if _, err := Count(out); err != nil {
			t.Fatalf("Add made a corrupt HLL: %v", err)
		}
	})
}
