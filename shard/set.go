package shard

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/listpack"
)

// A set value is held one of two ways, as in Redis 7.0 (listpack sets came
// with 7.2):
//
//   - encIntset: o.str is an intset, the set's members as sorted integers
//     (see below), when every member is an integer as Redis' string2ll reads
//     them ("12", "-3"; not "012", "+3" or "1.0") and there are at most
//     set-max-intset-entries of them.
//   - encHashtable: o.coll is an *htable of members (no values).
//
// A set converts when a non-integer member is added or the intset grows past
// the limit, and never converts back; but SPOP with a count that leaves few
// members rebuilds the set from them, as Redis does, so it may become an
// intset again.

// An intset is one []byte: a width byte (2, 4 or 8: the bytes each member
// takes, the smallest that holds every member, as Redis' INTSET_ENC_INT16/32/64)
// followed by the members, little endian, in ascending order. A member that
// needs a wider encoding rewrites the whole intset at the new width (Redis'
// intsetUpgradeAndAdd); removals never narrow it, as in Redis.
//
// Invariants: len(is) == 1 + width*n; members strictly ascending.
const intsetHeader = 1

// intsetWidthFor is the bytes v needs.
func intsetWidthFor(v int64) int {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

func intsetWidth(is []byte) int { return int(is[0]) }

func intsetLen(is []byte) int {
	if len(is) < intsetHeader {
		return 0
	}
	return (len(is) - intsetHeader) / intsetWidth(is)
}

// intsetGet returns the member at position i.
func intsetGet(is []byte, i int) int64 {
	w := intsetWidth(is)
	return intsetRead(is[intsetHeader+i*w:], w)
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

func intsetWrite(b []byte, w int, v int64) {
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

// intsetSearch returns v's position, or where it would be inserted.
func intsetSearch(is []byte, v int64) (int, bool) {
	lo, hi := 0, intsetLen(is)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		x := intsetGet(is, m)
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

// newIntset returns an empty intset with room for n members of width w.
func newIntset(w, n int) []byte {
	is := make([]byte, intsetHeader, intsetHeader+w*n)
	is[0] = byte(w)
	return is
}

// intsetAdd adds v and reports whether it was new. It returns the (possibly
// reallocated) intset.
func intsetAdd(is []byte, v int64) ([]byte, bool) {
	w := intsetWidth(is)
	if nw := intsetWidthFor(v); nw > w {
		// Wider than every member: v is below or above all of them.
		n := intsetLen(is)
		up := newIntset(nw, n+1)[:intsetHeader+nw*(n+1)]
		at := 0
		if v < 0 {
			intsetWrite(up[intsetHeader:], nw, v)
			at = 1
		} else {
			intsetWrite(up[intsetHeader+n*nw:], nw, v)
		}
		for i := range n {
			intsetWrite(up[intsetHeader+(i+at)*nw:], nw, intsetGet(is, i))
		}
		return up, true
	}
	i, found := intsetSearch(is, v)
	if found {
		return is, false
	}
	off := intsetHeader + i*w
	is = listpack.Grow(is, w)
	copy(is[off+w:], is[off:len(is)-w])
	intsetWrite(is[off:], w, v)
	return is, true
}

// intsetRemove removes v and reports whether it was there.
func intsetRemove(is []byte, v int64) ([]byte, bool) {
	if intsetWidthFor(v) > intsetWidth(is) {
		return is, false
	}
	i, found := intsetSearch(is, v)
	if !found {
		return is, false
	}
	w := intsetWidth(is)
	off := intsetHeader + i*w
	copy(is[off:], is[off+w:])
	is = is[:len(is)-w]
	if cap(is) > 2*len(is)+64 {
		is = append(make([]byte, 0, len(is)), is...) // give back what many removals freed
	}
	return is, true
}

// ---- set values ----------------------------------------------------------------

// newSetValue gives o (a fresh KindSet object) an empty value that can hold
// first (Redis' setTypeCreate): an intset when first is an integer, else a
// hash table.
func newSetValue(o *object, first []byte, hint int) {
	if v, ok := resp.ParseInt(first); ok {
		o.enc = encIntset
		o.str = newIntset(intsetWidthFor(v), hint)
		return
	}
	o.enc = encHashtable
	o.coll = newHTable(false, hint)
}

// setConvert turns an intset into a hash table.
func setConvert(o *object) {
	is := o.str
	n := intsetLen(is)
	t := newHTable(false, n)
	var buf [20]byte
	for i := range n {
		t.insert(strconv.AppendInt(buf[:0], intsetGet(is, i), 10), nil)
	}
	o.str, o.coll, o.enc = nil, t, encHashtable
}

// setShrinkToIntset turns a hash-table set back into an intset when every
// member is an integer and there are at most set-max-intset-entries of them.
func setShrinkToIntset(o *object, lim *EncodingLimits) {
	t := o.coll.(*htable)
	if int64(t.len()) > lim.SetMaxIntsetEntries {
		return
	}
	vals := make([]int64, t.len())
	w := 2
	for i, k := range t.keys {
		v, ok := resp.ParseInt(htKeyBytes(k))
		if !ok {
			return
		}
		vals[i], w = v, max(w, intsetWidthFor(v))
	}
	slices.Sort(vals)
	is := newIntset(w, len(vals))[:intsetHeader+w*len(vals)]
	for i, v := range vals {
		intsetWrite(is[intsetHeader+i*w:], w, v)
	}
	o.str, o.coll, o.enc = is, nil, encIntset
}

func setLen(o *object) int {
	if o.enc == encIntset {
		return intsetLen(o.str)
	}
	return o.coll.(*htable).len()
}

// setAdd adds m and reports whether it was new (Redis' setTypeAdd).
func setAdd(o *object, m []byte, lim *EncodingLimits) bool {
	if o.enc == encIntset {
		v, ok := resp.ParseInt(m)
		if ok {
			var added bool
			o.str, added = intsetAdd(o.str, v)
			if added && int64(intsetLen(o.str)) > lim.SetMaxIntsetEntries {
				setConvert(o)
			}
			return added
		}
		setConvert(o)
	}
	t := o.coll.(*htable)
	if _, found := t.find(m); found {
		return false
	}
	t.insert(m, nil)
	return true
}

// setAddInt adds v (an integer member) without formatting it when the set is
// an intset.
func setAddInt(o *object, v int64, lim *EncodingLimits) bool {
	if o.enc == encIntset {
		var added bool
		o.str, added = intsetAdd(o.str, v)
		if added && int64(intsetLen(o.str)) > lim.SetMaxIntsetEntries {
			setConvert(o)
		}
		return added
	}
	var buf [20]byte
	return setAdd(o, strconv.AppendInt(buf[:0], v, 10), lim)
}

// setRemove removes m and reports whether it was there.
func setRemove(o *object, m []byte) bool {
	if o.enc == encIntset {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		var removed bool
		o.str, removed = intsetRemove(o.str, v)
		return removed
	}
	t := o.coll.(*htable)
	i, found := t.find(m)
	if found {
		t.removeAt(i)
	}
	return found
}

func setHas(o *object, m []byte) bool {
	if o.enc == encIntset {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := intsetSearch(o.str, v)
		return found
	}
	_, found := o.coll.(*htable).find(m)
	return found
}

// setHasInt reports whether the integer member v is in o.
func setHasInt(o *object, v int64, buf *[20]byte) bool {
	if o.enc == encIntset {
		_, found := intsetSearch(o.str, v)
		return found
	}
	_, found := o.coll.(*htable).find(strconv.AppendInt(buf[:0], v, 10))
	return found
}

// setMember is one member read from a set: an integer (isInt, from an
// intset) or bytes.
type setMember struct {
	b     []byte
	v     int64
	isInt bool
}

// setAt returns the member at position i (intset order is ascending, a hash
// table's is its dense storage order).
func setAt(o *object, i int) setMember {
	if o.enc == encIntset {
		return setMember{v: intsetGet(o.str, i), isInt: true}
	}
	return setMember{b: htKeyBytes(o.coll.(*htable).keys[i])}
}

// bytes returns the member's bytes, formatting an integer into buf.
func (m setMember) bytes(buf *[20]byte) []byte {
	if m.isInt {
		return strconv.AppendInt(buf[:0], m.v, 10)
	}
	return m.b
}

// setMemberReply appends m as a bulk string.
func (c *Ctx) setMemberReply(m setMember) {
	if m.isInt {
		c.Out = resp.AppendBulkInt(c.Out, m.v)
	} else {
		c.bulk(m.b)
	}
}

// setRemoveAt removes the member at position i.
func setRemoveAt(o *object, i int) {
	if o.enc == encIntset {
		o.str, _ = intsetRemove(o.str, intsetGet(o.str, i))
		return
	}
	o.coll.(*htable).removeAt(i)
}
