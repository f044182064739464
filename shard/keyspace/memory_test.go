package keyspace

import (
	"testing"
	"unsafe"
)

// TestAllocSize: AllocSize rounds as the runtime does. append to a nil
// slice gets exactly the capacity the allocator hands out for the length
// (growslice's roundupsize), so every length from 16 to the largest small
// object is checked against the runtime itself, not a copy of its table.
func TestAllocSize(t *testing.T) {
	for n := 16; n <= maxSmallAlloc; n++ {
		b := append([]byte(nil), make([]byte, n)...)
		if got := AllocSize(n); got != cap(b) {
			t.Fatalf("AllocSize(%d) = %d; the runtime hands out %d", n, got, cap(b))
		}
	}
	for _, n := range []int{0, 1, 15, maxSmallAlloc + 1, 1 << 20} {
		if got := AllocSize(n); got != n {
			t.Errorf("AllocSize(%d) = %d; want %d (tiny and large allocations count their length)", n, got, n)
		}
	}
}

// TestKeyAllocSize: tiny keys share 16-byte blocks by their alignment.
func TestKeyAllocSize(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 8}, {8, 8}, {9, 16}, {11, 16}, {15, 16},
		{16, 16}, {17, 24}, {33, 48},
	} {
		if got := keyAllocSize(c.n); got != c.want {
			t.Errorf("keyAllocSize(%d) = %d; want %d", c.n, got, c.want)
		}
	}
}

// checkAccounting checks memory.go's invariant against d as it is: the
// per-key view key by key, and the structure's correction recomputed from
// scratch. checkDB runs it after every step of the model test.
func checkAccounting(t *testing.T, d *DB) {
	t.Helper()
	var perKey, round int64
	for pos := uint32(0); pos < d.used; pos++ {
		if o := d.Slot(pos); o.Kind != KindNone {
			perKey += int64(len(o.Key())+ObjectOverhead) + o.ValueMemory()
			round += int64(keyCost(len(o.Key())) - len(o.Key()))
		}
	}
	if d.Memory() != perKey {
		t.Fatalf("memory %d; the keys account for %d", d.Memory(), perKey)
	}
	if round != d.keyRound {
		t.Fatalf("key rounding %d; the keys round by %d", d.keyRound, round)
	}
	expChunks := 0
	for _, c := range d.expiry {
		if c != nil {
			expChunks++
		}
	}
	if expChunks != d.expChunks {
		t.Fatalf("expChunks %d; %d chunks of expiry data exist", d.expChunks, expChunks)
	}
	s := d.structureBytes()
	if want := s - int64(d.index.Len()*ObjectOverhead) + round; d.adjust.Load() != want {
		t.Fatalf("adjust %d; structure %d less the keys' ObjectOverhead plus rounding is %d", d.adjust.Load(), s, want)
	}
	if d.StructureBytes() != s || d.IndexBytesPublished() != int64(d.index.Bytes()) {
		t.Fatalf("published structure %d, index %d; they are %d and %d", d.StructureBytes(), d.IndexBytesPublished(), s, d.index.Bytes())
	}
	if d.index.Len() == 0 && d.Used() != 0 {
		t.Fatalf("an empty database uses %d bytes", d.Used())
	}
}

// TestStructureCountsChunksAsAllocated: past the first chunk, slots count
// up to the highest handed out, live or not; the first counts its keys.
func TestStructureCountsChunksAsAllocated(t *testing.T) {
	d := newDB()
	key := func(i int) []byte { return []byte{byte(i), byte(i >> 8), byte(i >> 16)} }
	for i := range chunkSize + 1 {
		d.Insert(key(i), KindString)
	}
	if len(d.chunks) != 2 {
		t.Fatalf("%d chunks", len(d.chunks))
	}
	slots := d.structureBytes() - int64(d.index.Bytes()) - int64(cap(d.chunks)+cap(d.expiry))*8 - int64(cap(d.free)+cap(d.volatile))*4
	if want := int64(unsafe.Sizeof([chunkSize]Object{})) + objectBytes; slots != want {
		t.Fatalf("slots of 1025 keys count %d; want a chunk and a slot, %d", slots, want)
	}
	for i := range chunkSize {
		o, _ := d.Find(key(i))
		d.Remove(o)
	}
	slots = d.structureBytes() - int64(d.index.Bytes()) - int64(cap(d.chunks)+cap(d.expiry))*8 - int64(cap(d.free)+cap(d.volatile))*4
	if want := 2 * objectBytes; slots != want {
		t.Fatalf("slots of 1 key in 2 chunks count %d; want %d (its own and the one past the first chunk)", slots, want)
	}
	checkAccounting(t, d)
}
