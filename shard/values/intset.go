package values

import (
	"encoding/binary"
	"math"

	"github.com/svcdb/svcdb/shard/listpack"
)

// An intset is one []byte: a width byte (2, 4 or 8: the bytes each member
// takes, the smallest that holds every member, as Redis' INTSET_ENC_INT16/32/64)
// followed by the members, little endian, in ascending order. A member that
// needs a wider encoding rewrites the whole intset at the new width (Redis'
// intsetUpgradeAndAdd); removals never narrow it, as in Redis.
//
// Invariants: len(is) == 1 + width*n; members strictly ascending.
const IntsetHeader = 1

// IntsetWidthFor is the bytes v needs.
func IntsetWidthFor(v int64) int {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

func intsetWidth(is []byte) int { return int(is[0]) }

// IntsetLen is the number of members.
func IntsetLen(is []byte) int {
	if len(is) < IntsetHeader {
		return 0
	}
	return (len(is) - IntsetHeader) / intsetWidth(is)
}

// IntsetGet returns the member at position i.
func IntsetGet(is []byte, i int) int64 {
	w := intsetWidth(is)
	return intsetRead(is[IntsetHeader+i*w:], w)
}

func intsetRead(b []byte, w int) int64 {
	switch w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// IntsetWrite stores v in the first w bytes of b, little endian.
func IntsetWrite(b []byte, w int, v int64) {
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

// IntsetSearch returns v's position, or where it would be inserted.
func IntsetSearch(is []byte, v int64) (int, bool) {
	lo, hi := 0, IntsetLen(is)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		x := IntsetGet(is, m)
		if x == v {
			return m, true
		}
		if x < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}

// NewIntset returns an empty intset with room for n members of width w.
func NewIntset(w, n int) []byte {
	is := make([]byte, IntsetHeader, IntsetHeader+w*n)
	is[0] = byte(w)
	return is
}

// IntsetAdd adds v and reports whether it was new. It returns the (possibly
// reallocated) intset.
func IntsetAdd(is []byte, v int64) ([]byte, bool) {
	w := intsetWidth(is)
	if nw := IntsetWidthFor(v); nw > w {
		// Wider than every member: v is below or above all of them.
		n := IntsetLen(is)
		up := NewIntset(nw, n+1)[:IntsetHeader+nw*(n+1)]
		at := 0
		if v < 0 {
			IntsetWrite(up[IntsetHeader:], nw, v)
			at = 1
		} else {
			IntsetWrite(up[IntsetHeader+n*nw:], nw, v)
		}
		for i := range n {
			IntsetWrite(up[IntsetHeader+(i+at)*nw:], nw, IntsetGet(is, i))
		}
		return up, true
	}
	i, found := IntsetSearch(is, v)
	if found {
		return is, false
	}
	off := IntsetHeader + i*w
	is = listpack.Grow(is, w)
	copy(is[off+w:], is[off:len(is)-w])
	IntsetWrite(is[off:], w, v)
	return is, true
}

// IntsetRemove removes v and reports whether it was there.
func IntsetRemove(is []byte, v int64) ([]byte, bool) {
	if IntsetWidthFor(v) > intsetWidth(is) {
		return is, false
	}
	i, found := IntsetSearch(is, v)
	if !found {
		return is, false
	}
	w := intsetWidth(is)
	off := IntsetHeader + i*w
	copy(is[off:], is[off+w:])
	is = is[:len(is)-w]
	if cap(is) > 2*len(is)+64 {
		is = append(make([]byte, 0, len(is)), is...) // give back what many removals freed
	}
	return is, true
}
