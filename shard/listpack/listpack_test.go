package listpack

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAgainstModel applies random operations to a listpack and to a [][]byte
// and compares them after each one.
func TestAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		lp := New(0)
		var model [][]byte
		for step := range 200 {
			v := bytes.Repeat([]byte{byte('a' + r.IntN(26))}, r.IntN(300))
			switch op := r.IntN(5); {
			case op == 0 || len(model) == 0:
				lp = Append(lp, v)
				model = append(model, v)
			case op == 1:
				i := r.IntN(len(model) + 1)
				off := len(lp)
				if i < len(model) {
					off = Offset(lp, i)
				}
				lp = Insert(lp, off, v)
				model = slices.Insert(model, i, v)
			case op == 2:
				i := r.IntN(len(model))
				n := 1 + r.IntN(3)
				lp = Delete(lp, Offset(lp, i), n)
				model = slices.Delete(model, i, min(i+n, len(model)))
			case op == 3:
				i := r.IntN(len(model))
				var next int
				lp, next = Replace(lp, Offset(lp, i), v)
				model[i] = v
				if want := Offset(lp, i+1); i+1 < len(model) && next != want {
					t.Fatalf("round %d step %d: Replace returned next %d, want %d", round, step, next, want)
				}
			case op == 4:
				i := r.IntN(len(model))
				if got := Find(lp, model[i], 1); got < 0 || !bytes.Equal(mustEntry(lp, got), model[i]) {
					t.Fatalf("Find of an existing value returned %d", got)
				}
			}
			if err := check(lp, model); err != nil {
				t.Fatalf("round %d step %d: %v", round, step, err)
			}
		}
	}
}

func mustEntry(lp []byte, off int) []byte { v, _ := Next(lp, off); return v }

func check(lp []byte, model [][]byte) error {
	if Len(lp) != len(model) {
		return fmt.Errorf("Len = %d, want %d", Len(lp), len(model))
	}
	off := First
	for i, want := range model {
		var got []byte
		got, off = Next(lp, off)
		if !bytes.Equal(got, want) {
			return fmt.Errorf("entry %d = %q, want %q", i, got, want)
		}
		if neg := Offset(lp, i-len(model)); neg < 0 || !bytes.Equal(mustEntry(lp, neg), want) {
			return fmt.Errorf("negative offset of entry %d wrong", i)
		}
	}
	if off != len(lp) {
		return fmt.Errorf("entries end at %d, listpack is %d bytes", off, len(lp))
	}
	return nil
}

func TestFindStep(t *testing.T) {
	lp := New(0)
	for _, s := range []string{"f1", "v1", "v1", "f1", "f2", "x"} {
		lp = Append(lp, []byte(s))
	}
	// As a hash: fields are f1, v1, f2 — "v1" is found as the second field.
	if off := Find(lp, []byte("v1"), 2); off != Offset(lp, 2) {
		t.Fatalf("Find(v1, step 2) = %d, want entry 2 at %d", off, Offset(lp, 2))
	}
	if off := Find(lp, []byte("x"), 2); off != -1 {
		t.Fatalf("Find(x, step 2) found a value as a field at %d", off)
	}
	if Offset(lp, 6) != -1 || Offset(lp, -7) != -1 {
		t.Fatal("Offset out of range must be -1")
	}
}

func BenchmarkFindHashField(b *testing.B) {
	lp := New(0)
	for i := range 64 {
		lp = Append(lp, fmt.Appendf(nil, "field:%d", i))
		lp = Append(lp, fmt.Appendf(nil, "value:%d", i))
	}
	key := []byte("field:63")
	b.ReportAllocs()
	for b.Loop() {
		if Find(lp, key, 2) < 0 {
			b.Fatal("not found")
		}
	}
}

// BenchmarkFind: the scan SISMEMBER and HGET do on a listpack, for the last
// of 3 and of 128 10-byte values (step 1, a set) and the last of 64 fields
// (step 2, a hash).
func BenchmarkFind(b *testing.B) {
	for _, c := range []struct{ n, step int }{{3, 1}, {128, 1}, {128, 2}} {
		lp := New(0)
		var last []byte
		for i := range c.n {
			last = []byte(fmt.Sprintf("m%09d", i))
			lp = Append(lp, last)
		}
		if c.step == 2 {
			last = []byte(fmt.Sprintf("m%09d", c.n-2))
		}
		b.Run(fmt.Sprintf("%d/step%d", c.n, c.step), func(b *testing.B) {
			for b.Loop() {
				if Find(lp, last, c.step) < 0 {
					b.Fatal("not found")
				}
			}
		})
	}
}
