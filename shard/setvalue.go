package shard

import (
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
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

// ---- set values ----------------------------------------------------------------

// newSetValue gives o (a fresh KindSet object) an empty value that can hold
// first (Redis' setTypeCreate): an intset when first is an integer, else a
// hash table.
func newSetValue(o *object, first []byte, hint int) {
	if v, ok := resp.ParseInt(first); ok {
		o.enc = encIntset
		o.str = values.NewIntset(values.IntsetWidthFor(v), hint)
		return
	}
	o.enc = encHashtable
	o.coll = values.NewHTable(false, hint)
}

// setConvert turns an intset into a hash table.
func setConvert(o *object) {
	is := o.str
	n := values.IntsetLen(is)
	t := values.NewHTable(false, n)
	var buf [20]byte
	for i := range n {
		t.Insert(strconv.AppendInt(buf[:0], values.IntsetGet(is, i), 10), nil)
	}
	o.str, o.coll, o.enc = nil, t, encHashtable
}

// setShrinkToIntset turns a hash-table set back into an intset when every
// member is an integer and there are at most set-max-intset-entries of them.
func setShrinkToIntset(o *object, lim *EncodingLimits) {
	t := o.coll.(*values.HTable)
	if int64(t.Len()) > lim.SetMaxIntsetEntries {
		return
	}
	vals := make([]int64, t.Len())
	w := 2
	for i := range vals {
		v, ok := resp.ParseInt(t.Key(i))
		if !ok {
			return
		}
		vals[i], w = v, max(w, values.IntsetWidthFor(v))
	}
	slices.Sort(vals)
	is := values.NewIntset(w, len(vals))[:values.IntsetHeader+w*len(vals)]
	for i, v := range vals {
		values.IntsetWrite(is[values.IntsetHeader+i*w:], w, v)
	}
	o.str, o.coll, o.enc = is, nil, encIntset
}

func setLen(o *object) int {
	if o.enc == encIntset {
		return values.IntsetLen(o.str)
	}
	return o.coll.(*values.HTable).Len()
}

// setAdd adds m and reports whether it was new (Redis' setTypeAdd).
func setAdd(o *object, m []byte, lim *EncodingLimits) bool {
	if o.enc == encIntset {
		v, ok := resp.ParseInt(m)
		if ok {
			var added bool
			o.str, added = values.IntsetAdd(o.str, v)
			if added && int64(values.IntsetLen(o.str)) > lim.SetMaxIntsetEntries {
				setConvert(o)
			}
			return added
		}
		setConvert(o)
	}
	t := o.coll.(*values.HTable)
	if _, found := t.Find(m); found {
		return false
	}
	t.Insert(m, nil)
	return true
}

// setAddInt adds v (an integer member) without formatting it when the set is
// an intset.
func setAddInt(o *object, v int64, lim *EncodingLimits) bool {
	if o.enc == encIntset {
		var added bool
		o.str, added = values.IntsetAdd(o.str, v)
		if added && int64(values.IntsetLen(o.str)) > lim.SetMaxIntsetEntries {
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
		o.str, removed = values.IntsetRemove(o.str, v)
		return removed
	}
	t := o.coll.(*values.HTable)
	i, found := t.Find(m)
	if found {
		t.RemoveAt(i)
	}
	return found
}

func setHas(o *object, m []byte) bool {
	if o.enc == encIntset {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := values.IntsetSearch(o.str, v)
		return found
	}
	_, found := o.coll.(*values.HTable).Find(m)
	return found
}

// setHasInt reports whether the integer member v is in o.
func setHasInt(o *object, v int64, buf *[20]byte) bool {
	if o.enc == encIntset {
		_, found := values.IntsetSearch(o.str, v)
		return found
	}
	_, found := o.coll.(*values.HTable).Find(strconv.AppendInt(buf[:0], v, 10))
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
		return setMember{v: values.IntsetGet(o.str, i), isInt: true}
	}
	return setMember{b: o.coll.(*values.HTable).Key(i)}
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
		o.str, _ = values.IntsetRemove(o.str, values.IntsetGet(o.str, i))
		return
	}
	o.coll.(*values.HTable).RemoveAt(i)
}
