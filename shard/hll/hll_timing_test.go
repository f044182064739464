package hll

import (
	"strconv"
	"testing"
)

func BenchmarkAddDense(b *testing.B) {
	s, _ := ToDense(NewSparse(nil))
	ele := []byte("element:0000000000")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		strconv.AppendInt(ele[:8], int64(i), 10)
		s, _, _ = Add(s, ele, DefaultSparseMax)
	}
}

func BenchmarkAddSparse(b *testing.B) {
	ele := []byte("element:0000000000")
	b.ReportAllocs()
	var s []byte
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			s = NewSparse(s[:0])
		}
		strconv.AppendInt(ele[:8], int64(i), 10)
		s, _, _ = Add(s, ele, DefaultSparseMax)
	}
}

func BenchmarkCountDense(b *testing.B) {
	s, _ := ToDense(NewSparse(nil))
	for i := 0; i < 100000; i++ {
		s, _, _ = Add(s, []byte(strconv.Itoa(i)), DefaultSparseMax)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Count(s); err != nil {
			b.Fatal(err)
		}
	}
}
