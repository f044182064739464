package keyspace

import "github.com/svcdb/svcdb/shard/bigbuf"

// Large strings off the Go heap.
//
// A string value whose buffer reaches bigbuf.Threshold (1 MiB) when it is
// set, loaded, created by SETRANGE or grown by APPEND/SETRANGE lives in a
// bigbuf mapping instead of a Go slice: growth is an mremap (no copy, no
// garbage) and dropping it is an munmap (the memory is back at once, not
// after the next GC). Everything else about the value is unchanged: o.Bytes()
// is the bytes, cap(o.Bytes()) is what used_memory counts.
//
// Invariants (kept by the functions in this file, the only ones that
// allocate or free a mapping):
//   - o.OffHeap() ⇔ o.Bytes() is a live bigbuf buffer ⇔ o ∈ d.big; only a
//     KindString with EncRaw or EncRawEdited is ever off-heap.
//   - exactly one object owns a buffer: COPY gets a buffer of its own
//     (SetString), RENAME moves it (DisownOffHeap, AdoptOffHeap), and every path that drops
//     or replaces a value goes through FreeStr first (detach, DropValue,
//     SetInt, SetString, flush, freeAllOffHeap).
//   - d.offHeap is the sum of cap(o.Bytes()) over d.big; those bytes are part
//     of d.memory too.
//   - the bytes never leave the command that reads them: replies, log
//     records and snapshot entries copy them (c.Bulk, LogAs, AppendEntry).

// bigCapFor is the capacity an off-heap string growing to need bytes gets:
// Redis' sdsMakeRoomFor above SDS_MAX_PREALLOC, need plus 1 MiB, never past
// MaxStringLen unless need is. The Go heap needs need/2 (StringCapFor) to
// keep copying linear; an mremap copies nothing, so Redis' step is enough
// and used_memory does not count a third of the string as spare room. Up to
// 2 MiB both agree.
func bigCapFor(need int) int {
	c := need + stringMaxPrealloc
	if c > MaxStringLen {
		c = max(need, MaxStringLen)
	}
	return c
}

// NewStringBuf gives o (which holds no buffer) a zeroed string of n bytes
// with capacity c: off-heap from bigbuf.Threshold on, populated at once when
// the caller is about to write all of it. It does no used_memory
// accounting; the caller does (AccountResize).
func (d *DB) NewStringBuf(o *Object, n, c int, populate bool) {
	checkValueLen(c)
	if c >= bigbuf.Threshold {
		if b, err := bigbuf.Alloc(n, c, populate); err == nil {
			d.AdoptOffHeap(o, b)
			return
		}
		// No mapping to be had (ENOMEM, vm.max_map_count): the Go heap
		// will do; the string is only slower to grow and to give back.
	}
	o.SetBytes(make([]byte, n, c)) // zeroed preemptibly; see growString
}

// AdoptOffHeap makes b, a new bigbuf buffer, o's string.
func (d *DB) AdoptOffHeap(o *Object, b []byte) {
	o.SetBytes(b)
	o.setOffHeap(true)
	if d.big == nil {
		d.big = make(map[*Object]struct{})
	}
	d.big[o] = struct{}{}
	d.offHeap.Add(int64(cap(b)))
}

// growOffHeap makes o.Bytes() need bytes long in a mapping of bigCapFor(need),
// moving a Go heap string there or growing a mapping in place. It reports
// false, changing nothing, when no mapping could be had.
// REQUIRES: need > cap(o.Bytes()), need >= bigbuf.Threshold.
func (d *DB) growOffHeap(o *Object, need int) bool {
	c := bigCapFor(need)
	if !o.OffHeap() {
		b, err := bigbuf.Alloc(need, c, false)
		if err != nil {
			return false
		}
		copyPreemptible(b, o.Bytes())
		d.AdoptOffHeap(o, b) // the heap buffer is garbage now, for the last time
		return true
	}
	n, old := len(o.Bytes()), cap(o.Bytes())
	bigbuf.Zero(o.Bytes()[n:old]) // spare room a longer value left: kept by mremap
	b, err := bigbuf.Grow(o.Bytes(), need, c)
	if err != nil {
		return false
	}
	o.SetBytes(b)
	d.offHeap.Add(int64(cap(b) - old))
	return true
}

// WillWrite tells that o.Bytes()[from:to] is about to be written in full (an
// APPEND's tail, a SETRANGE's range): an off-heap string's pages there are
// faulted in at once (bigbuf.Prefault). Never the zero gap SETRANGE leaves,
// whose untouched pages cost nothing.
func (d *DB) WillWrite(o *Object, from, to int) {
	if o.OffHeap() {
		bigbuf.Prefault(o.Bytes()[from:to])
	}
}

// CopyLarge is copy(dst, src) for a command writing an argument into a
// string (APPEND, SETRANGE): in preemptible 256 KiB steps
// (copyPreemptible), so that a 512 MiB argument does not hold a GC's
// stop-the-world, and with it every other goroutine, for the whole copy.
func CopyLarge(dst, src []byte) {
	copyPreemptible(dst, src)
}

// FreeStr drops o's byte buffer, unmapping it when it is off-heap, and
// takes it out of used_memory. Every path that drops or replaces a string
// value calls it (directly or through detach, DropValue, SetInt).
func (d *DB) FreeStr(o *Object) {
	if o.Bytes() == nil {
		return
	}
	d.memory.Add(-o.ValueMemory()) // AllocSize of a heap buffer, as SetString added it
	d.unmapStr(o)
	o.SetBytes(nil)
}

// unmapStr unmaps o's off-heap buffer, if it has one, and forgets it; o.Bytes()
// must be replaced or cleared by the caller right after. No used_memory
// accounting.
func (d *DB) unmapStr(o *Object) {
	if !o.OffHeap() {
		return
	}
	b := o.Bytes()
	o.SetBytes(nil)
	o.setOffHeap(false)
	delete(d.big, o)
	d.offHeap.Add(-int64(cap(b)))
	bigbuf.Free(b)
}

// DisownOffHeap takes o's off-heap buffer, if it has one, out of d's
// care without unmapping it, and reports whether it did: RENAME moves the
// value, and the new key adopts the buffer (AdoptOffHeap) before the
// command ends.
func (d *DB) DisownOffHeap(o *Object) bool {
	if !o.OffHeap() {
		return false
	}
	o.setOffHeap(false)
	delete(d.big, o)
	d.offHeap.Add(-int64(cap(o.Bytes())))
	return true
}

// freeAllOffHeap unmaps every off-heap string of d, leaving those keys with
// no bytes: for flush (the keys go next) and for Runtime.Close. It costs
// one step per off-heap string, never a walk of the keyspace.
func (d *DB) freeAllOffHeap() {
	for o := range d.big {
		d.FreeStr(o)
	}
	d.big = nil
}

// FreeOffHeap unmaps the off-heap strings of every database of s, when the
// runtime shuts down: the keys stay, empty, so that nothing left can read
// a freed buffer.
func (st *Store) FreeOffHeap() {
	for _, d := range st.dbs {
		d.freeAllOffHeap()
	}
}
