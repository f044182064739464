package clientmem

import "testing"

// BenchmarkUpdate is what a client's loop pays per turn and per flush:
// unchanged usage (the common case: loads and a swap), usage that changes
// within its bucket (one atomic add more), eviction off and on.
func BenchmarkUpdate(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int64
		delta int64
	}{{"off/same", 0, 0}, {"off/changing", 0, 64}, {"on/same", 1 << 30, 0}, {"on/changing", 1 << 30, 64}} {
		b.Run(bc.name, func(b *testing.B) {
			tr := New(func(any, int64) {})
			tr.SetLimit(bc.limit)
			e := &Entry{}
			tr.Track(e, nil)
			tr.Update(e, 40<<10, true)
			b.ReportAllocs()
			for i := range b.N {
				tr.Update(e, 40<<10+int64(i&1)*bc.delta, true)
			}
		})
	}
}
