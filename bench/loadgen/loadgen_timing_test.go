package loadgen

import (
	"strconv"
	"testing"
	"time"
)

// Sink keeps results alive so the compiler cannot drop the work.
var Sink int

func BenchmarkRequestBuild(b *testing.B) {
	for _, size := range []int{32, 1024} {
		rb := newRequestBuilder("memtier-", size)
		buf := make([]byte, 0, rb.maxRequestSize()*2)
		b.Run("SET/"+strconv.Itoa(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(rb.appendSet(nil, 1234567))))
			for i := 0; b.Loop(); i++ {
				buf = rb.appendSet(buf[:0], uint64(i))
			}
			Sink += len(buf)
		})
		b.Run("GET/"+strconv.Itoa(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(rb.appendGet(nil, 1234567))))
			for i := 0; b.Loop(); i++ {
				buf = rb.appendGet(buf[:0], uint64(i))
			}
			Sink += len(buf)
		})
	}
}

func BenchmarkScanReply(b *testing.B) {
	for _, c := range []struct{ name, reply string }{
		{"status", "+OK\r\n"},
		{"bulk32", "$32\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n"},
		{"null", "$-1\r\n"},
		{"array", "*3\r\n$3\r\nfoo\r\n:42\r\n$-1\r\n"},
	} {
		buf := []byte(c.reply)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				n, _, _ := scanReply(buf)
				Sink += n
			}
		})
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(time.Duration(i&0xfffff) * time.Nanosecond)
	}
	Sink += int(h.Count())
}
