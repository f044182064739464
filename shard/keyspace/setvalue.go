package keyspace

import (
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
)

// A set value is held one of two ways, as in Redis 7.0 (listpack sets came
// with 7.2):
//
//   - EncIntset: o.Str is an intset, the set's members as sorted integers
//     (see below), when every member is an integer as Redis' string2ll reads
//     them ("12", "-3"; not "012", "+3" or "1.0") and there are at most
//     set-max-intset-entries of them.
//   - EncHashtable: o.Coll is an *htable of members (no values).
//
// A set converts when a non-integer member is added or the intset grows past
// the limit, and never converts back; but SPOP with a count that leaves few
// members rebuilds the set from them, as Redis does, so it may become an
// intset again.

// ---- set values ----------------------------------------------------------------

// NewSetValue gives o (a fresh KindSet object) an empty value that can hold
// first (Redis' setTypeCreate): an intset when first is an integer, else a
// hash table.
func NewSetValue(o *Object, first []byte, hint int) {
	if v, ok := resp.ParseInt(first); ok {
		o.Enc = EncIntset
		o.Str = values.NewIntset(values.IntsetWidthFor(v), hint)
		return
	}
	o.Enc = EncHashtable
	o.Coll = values.NewHTable(false, hint)
}

// setConvert turns an intset into a hash table.
func setConvert(o *Object) {
	is := o.Str
	n := values.IntsetLen(is)
	t := values.NewHTable(false, n)
	var buf [20]byte
	for i := range n {
		t.Insert(strconv.AppendInt(buf[:0], values.IntsetGet(is, i), 10), nil)
	}
	o.Str, o.Coll, o.Enc = nil, t, EncHashtable
}

// SetShrinkToIntset turns a hash-table set back into an intset when every
// member is an integer and there are at most set-max-intset-entries of them.
func SetShrinkToIntset(o *Object, lim *EncodingLimits) {
	t := o.Coll.(*values.HTable)
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
	o.Str, o.Coll, o.Enc = is, nil, EncIntset
}

func SetLen(o *Object) int {
	if o.Enc == EncIntset {
		return values.IntsetLen(o.Str)
	}
	return o.Coll.(*values.HTable).Len()
}

// SetAdd adds m and reports whether it was new (Redis' setTypeAdd).
func SetAdd(o *Object, m []byte, lim *EncodingLimits) bool {
	if o.Enc == EncIntset {
		v, ok := resp.ParseInt(m)
		if ok {
			var added bool
			o.Str, added = values.IntsetAdd(o.Str, v)
			if added && int64(values.IntsetLen(o.Str)) > lim.SetMaxIntsetEntries {
				setConvert(o)
			}
			return added
		}
		setConvert(o)
	}
	t := o.Coll.(*values.HTable)
	if _, found := t.Find(m); found {
		return false
	}
	t.Insert(m, nil)
	return true
}

// SetAddInt adds v (an integer member) without formatting it when the set is
// an intset.
func SetAddInt(o *Object, v int64, lim *EncodingLimits) bool {
	if o.Enc == EncIntset {
		var added bool
		o.Str, added = values.IntsetAdd(o.Str, v)
		if added && int64(values.IntsetLen(o.Str)) > lim.SetMaxIntsetEntries {
			setConvert(o)
		}
		return added
	}
	var buf [20]byte
	return SetAdd(o, strconv.AppendInt(buf[:0], v, 10), lim)
}

// SetRemove removes m and reports whether it was there.
func SetRemove(o *Object, m []byte) bool {
	if o.Enc == EncIntset {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		var removed bool
		o.Str, removed = values.IntsetRemove(o.Str, v)
		return removed
	}
	t := o.Coll.(*values.HTable)
	i, found := t.Find(m)
	if found {
		t.RemoveAt(i)
	}
	return found
}

func SetHas(o *Object, m []byte) bool {
	if o.Enc == EncIntset {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := values.IntsetSearch(o.Str, v)
		return found
	}
	_, found := o.Coll.(*values.HTable).Find(m)
	return found
}

// SetHasInt reports whether the integer member v is in o.
func SetHasInt(o *Object, v int64, buf *[20]byte) bool {
	if o.Enc == EncIntset {
		_, found := values.IntsetSearch(o.Str, v)
		return found
	}
	_, found := o.Coll.(*values.HTable).Find(strconv.AppendInt(buf[:0], v, 10))
	return found
}

// SetMember is one member read from a set: an integer (IsInt, from an
// intset) or bytes.
type SetMember struct {
	Str   []byte
	Int   int64
	IsInt bool
}

// SetAt returns the member at position i (intset order is ascending, a hash
// table's is its dense storage order).
func SetAt(o *Object, i int) SetMember {
	if o.Enc == EncIntset {
		return SetMember{Int: values.IntsetGet(o.Str, i), IsInt: true}
	}
	return SetMember{Str: o.Coll.(*values.HTable).Key(i)}
}

// Bytes returns the member's bytes, formatting an integer into buf.
func (m SetMember) Bytes(buf *[20]byte) []byte {
	if m.IsInt {
		return strconv.AppendInt(buf[:0], m.Int, 10)
	}
	return m.Str
}

// SetMemberReply appends m as a bulk string.
func (c *Ctx) SetMemberReply(m SetMember) {
	if m.IsInt {
		c.Out = resp.AppendBulkInt(c.Out, m.Int)
	} else {
		c.Bulk(m.Str)
	}
}

// SetRemoveAt removes the member at position i.
func SetRemoveAt(o *Object, i int) {
	if o.Enc == EncIntset {
		o.Str, _ = values.IntsetRemove(o.Str, values.IntsetGet(o.Str, i))
		return
	}
	o.Coll.(*values.HTable).RemoveAt(i)
}
