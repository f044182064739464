package rdb

import (
	"bytes"
	"strconv"
	"sync"
	"testing"
)

// BenchmarkAppendHashEntry: a hash of 4 fields appended into a reused
// buffer, as a shard's snapshot does; must not allocate.
func BenchmarkAppendHashEntry(b *testing.B) {
	buf := make([]byte, 0, 4096)
	key, f, v := []byte("user:1000"), []byte("name"), []byte("12345")
	b.ReportAllocs()
	for b.Loop() {
		buf = appendHashEntry(buf[:0], key, f, v)
	}
	b.SetBytes(int64(len(buf)))
}

var (
	millionOnce sync.Once
	millionFile []byte
)

// millionKeys is an RDB file of 1M small string keys ("key:N" -> "value:N").
func millionKeys() []byte {
	millionOnce.Do(func() {
		var out bytes.Buffer
		w := NewWriter(&out)
		// Writes to a bytes.Buffer: the writer's errors cannot happen.
		must := func(err error) {
			if err != nil {
				panic(err)
			}
		}
		must(w.Header([2]string{"redis-ver", "7.0.15"}))
		must(w.SelectDB(0, 1_000_000, 0))
		var buf, k, v []byte
		for i := range 1_000_000 {
			k = strconv.AppendInt(append(k[:0], "key:"...), int64(i), 10)
			v = strconv.AppendInt(append(v[:0], "value:"...), int64(i), 10)
			buf = AppendString(AppendKey(buf[:0], TypeString, k, 0), v)
			_, err := w.Write(buf)
			must(err)
		}
		must(w.End())
		millionFile = out.Bytes()
	})
	return millionFile
}

// BenchmarkLoad loads 1M small string keys and reports keys/s.
func BenchmarkLoad(b *testing.B) {
	data := millionKeys()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	keys := 0
	for b.Loop() {
		n := 0
		if _, err := Load(bytes.NewReader(data), func(*Entry) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 1_000_000 {
			b.Fatalf("loaded %d keys", n)
		}
		keys += n
	}
	b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
}
