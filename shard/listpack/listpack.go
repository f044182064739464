// Package listpack owns the flat encoding svcdb keeps small hashes, lists,
// sets of strings and sorted sets in: Redis' listpack idea, one []byte per value with no pointers
// inside, so a million small values are a million small allocations the
// garbage collector never has to scan, instead of a million maps.
//
// Layout:
//
//	count (4 bytes, little endian) | entry | entry | ...
//	entry = uvarint(len(value)) | value bytes
//
// An entry is addressed by its byte offset; First is the offset of the first
// entry and len(lp) is the offset past the last. Every operation is a linear
// scan: listpacks are meant to stay short (the *-max-listpack-* thresholds),
// where a scan over one cache-friendly buffer beats any pointer structure.
//
// The package never keeps a reference to a caller's slice: functions that
// change a listpack return the (possibly reallocated) new one, like append.
package listpack

import (
	"encoding/binary"
)

// First is the offset of the first entry.
const First = 4

// New returns an empty listpack with room for about size bytes of entries.
func New(size int) []byte {
	return make([]byte, First, First+size)
}

// Len is the number of entries.
func Len(lp []byte) int {
	if len(lp) < First {
		return 0
	}
	return int(binary.LittleEndian.Uint32(lp))
}

func setLen(lp []byte, n int) { binary.LittleEndian.PutUint32(lp, uint32(n)) }

// Next returns the entry at off and the offset of the one after it.
// REQUIRES: First <= off < len(lp), off at an entry boundary.
func Next(lp []byte, off int) (value []byte, next int) {
	if n := int(lp[off]); n < 0x80 {
		// A value shorter than 128 bytes (nearly all of them, under the
		// *-max-listpack-value limits) has a one-byte length: no varint loop.
		end := off + 1 + n
		return lp[off+1 : end : end], end
	}
	n, w := binary.Uvarint(lp[off:])
	start := off + w
	end := start + int(n)
	return lp[start:end:end], end
}

// Skip returns the offset n entries after off (or len(lp) when there are fewer).
func Skip(lp []byte, off, n int) int {
	for ; n > 0 && off < len(lp); n-- {
		_, off = Next(lp, off)
	}
	return off
}

// Offset returns the offset of entry i; negative i counts from the end (-1 is
// the last entry). It returns -1 when i is out of range.
func Offset(lp []byte, i int) int {
	n := Len(lp)
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return -1
	}
	return Skip(lp, First, i)
}

// Find returns the offset of the first entry equal to v among the entries at
// positions 0, step, 2*step, ... (step 2 finds hash fields, never values), or
// -1.
func Find(lp []byte, v []byte, step int) int {
	off := First
	for off < len(lp) {
		e, next := Next(lp, off)
		// Lengths, then the last byte, then the rest: values of one length
		// often share a prefix (user:1001, user:1002) and differ at the end,
		// so most entries are passed over without a call to compare them.
		if len(e) == len(v) && (len(v) == 0 || e[len(v)-1] == v[len(v)-1]) && string(e) == string(v) {
			return off
		}
		off = next
		if step > 1 {
			off = Skip(lp, off, step-1)
		}
	}
	return -1
}

// EntrySize is the bytes v takes as a listpack entry.
func EntrySize(v []byte) int { return UvarintLen(uint64(len(v))) + len(v) }

// UvarintLen is the bytes binary.PutUvarint writes for x.
func UvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Append adds v after the last entry.
func Append(lp []byte, v []byte) []byte {
	if len(lp) < First {
		lp = New(EntrySize(v))
	}
	off := len(lp)
	lp = Grow(lp, EntrySize(v))
	w := binary.PutUvarint(lp[off:], uint64(len(v)))
	copy(lp[off+w:], v)
	setLen(lp, Len(lp)+1)
	return lp
}

// Insert adds v before the entry at off (off == len(lp) appends).
func Insert(lp []byte, off int, v []byte) []byte {
	if off == len(lp) {
		return Append(lp, v)
	}
	size := EntrySize(v)
	lp = Grow(lp, size)
	copy(lp[off+size:], lp[off:len(lp)-size])
	w := binary.PutUvarint(lp[off:], uint64(len(v)))
	copy(lp[off+w:], v)
	setLen(lp, Len(lp)+1)
	return lp
}

// Delete removes count entries starting at off.
func Delete(lp []byte, off, count int) []byte {
	end := off
	removed := 0
	for ; removed < count && end < len(lp); removed++ {
		_, end = Next(lp, end)
	}
	n := copy(lp[off:], lp[end:])
	lp = lp[:off+n]
	setLen(lp, Len(lp)-removed)
	return lp
}

// Replace sets the entry at off to v and returns the listpack and the offset
// of the entry after it.
func Replace(lp []byte, off int, v []byte) ([]byte, int) {
	_, next := Next(lp, off)
	oldSize, size := next-off, EntrySize(v)
	if size == oldSize {
		w := binary.PutUvarint(lp[off:], uint64(len(v)))
		copy(lp[off+w:], v)
		return lp, next
	}
	if size > oldSize {
		lp = Grow(lp, size-oldSize)
		copy(lp[off+size:], lp[next:len(lp)-(size-oldSize)])
	} else {
		n := copy(lp[off+size:], lp[next:])
		lp = lp[:off+size+n]
	}
	w := binary.PutUvarint(lp[off:], uint64(len(v)))
	copy(lp[off+w:], v)
	return lp, off + size
}

// Grow extends lp by n bytes (contents of the new tail unspecified), growing
// the buffer by a quarter at a time: listpacks are many and small, so the
// slack append's doubling would leave matters. Intsets grow the same way.
func Grow(lp []byte, n int) []byte {
	if len(lp)+n <= cap(lp) {
		return lp[:len(lp)+n]
	}
	c := len(lp) + n
	c += c / 4
	nl := make([]byte, len(lp)+n, c)
	copy(nl, lp)
	return nl
}

// Clone returns a copy of lp with no spare capacity.
func Clone(lp []byte) []byte {
	return append(make([]byte, 0, len(lp)), lp...)
}
