package keyspace

import (
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// A set value is held one of three ways: Redis 7.0's two, and the listpack
// Redis 7.2 added for small sets of strings.
//
//   - EncIntset: o.Bytes() is an intset, the set's members as sorted integers
//     (see below), when every member is an integer as Redis' string2ll reads
//     them ("12", "-3"; not "012", "+3" or "1.0") and there are at most
//     set-max-intset-entries of them.
//   - EncListpack: o.Bytes() is a listpack of the members, one entry each, in
//     insertion order, while there are at most set-max-listpack-entries of
//     them and none is longer than set-max-listpack-value (Redis 7.2's
//     rules). Three 10-byte members take 37 bytes here against about 480 in
//     a hash table (map, key strings and their headers).
//   - EncHashtable: o.Coll() is an *htable of members (no values).
//
// An intset converts when a non-integer member is added (to a listpack when
// the result fits one, as Redis 7.2) or when it grows past
// set-max-intset-entries (to a hash table); a listpack converts to a hash
// table when a member would break its limits. None converts back, but SPOP
// with a count that leaves few members rebuilds the set from them, as Redis
// does, so it may become an intset again.
//
// OBJECT ENCODING reports a listpack set as "hashtable", what Redis 7.0
// answers for the same commands (docs/compatibility.md): the encoding is a
// memory layout, and clients, tests and tools written against 7.0 see the
// answers they expect. RDB files and DUMP payloads write every set as a
// plain RDB_TYPE_SET (snapshot.go), which Redis 7.0 loads.

// ---- set values ----------------------------------------------------------------

// NewSetValue gives o (a fresh KindSet object) an empty value that can hold
// members, the members about to be added (Redis 7.2's setTypeCreate with its
// size hint): an intset when the first is an integer, else a listpack sized
// for them all when they fit one, else a hash table.
// REQUIRES: members is not empty.
func NewSetValue(o *Object, members [][]byte, lim *EncodingLimits) {
	first := members[0]
	if v, ok := resp.ParseInt(first); ok {
		o.Enc = EncIntset
		o.SetBytes(values.NewIntset(values.IntsetWidthFor(v), int(min(int64(len(members)), lim.SetMaxIntsetEntries))))
		return
	}
	if int64(len(members)) <= lim.SetMaxListpackEntries && int64(len(first)) <= lim.SetMaxListpackValue {
		size := 0
		for _, m := range members {
			size += listpack.EntrySize(m)
		}
		o.Enc = EncListpack
		o.SetBytes(listpack.New(size))
		return
	}
	o.Enc = EncHashtable
	o.SetColl(values.NewHTable(false, len(members)))
}

// setIntsetToListpack turns an intset into a listpack with room for one
// more member of extra bytes (Redis 7.2's setTypeConvertAndExpand).
func setIntsetToListpack(o *Object, extra int) {
	is := o.Bytes()
	n := values.IntsetLen(is)
	var buf [20]byte
	size := listpack.UvarintLen(uint64(extra)) + extra
	for i := range n {
		size += listpack.EntrySize(strconv.AppendInt(buf[:0], values.IntsetGet(is, i), 10))
	}
	lp := listpack.New(size)
	for i := range n {
		lp = listpack.Append(lp, strconv.AppendInt(buf[:0], values.IntsetGet(is, i), 10))
	}
	o.SetBytes(lp)
	o.Enc = EncListpack
}

// setConvert turns an intset or a listpack into a hash table.
func setConvert(o *Object) {
	n := SetLen(o)
	t := values.NewHTable(false, n)
	var buf [20]byte
	for it := NewSetIter(o); ; {
		m, ok := it.Next()
		if !ok {
			break
		}
		t.Insert(m.Bytes(&buf), nil)
	}
	o.SetBytes(nil)
	o.SetColl(t)
	o.Enc = EncHashtable
}

// intsetMaxLen is the longest an intset's member is in decimal (for
// set-max-listpack-value when an intset turns into a listpack).
func intsetMaxLen(is []byte) int {
	n := values.IntsetLen(is)
	if n == 0 {
		return 0
	}
	var buf [20]byte
	lo := len(strconv.AppendInt(buf[:0], values.IntsetGet(is, 0), 10))
	hi := len(strconv.AppendInt(buf[:0], values.IntsetGet(is, n-1), 10))
	return max(lo, hi)
}

// SetShrinkToIntset turns a hash-table or listpack set back into an intset
// when every member is an integer and there are at most
// set-max-intset-entries of them.
func SetShrinkToIntset(o *Object, lim *EncodingLimits) {
	if o.Enc == EncIntset || int64(SetLen(o)) > lim.SetMaxIntsetEntries {
		return
	}
	vals := make([]int64, 0, SetLen(o))
	w := 2
	for it := NewSetIter(o); ; {
		m, ok := it.Next()
		if !ok {
			break
		}
		v, isInt := resp.ParseInt(m.Str)
		if !isInt {
			return
		}
		vals, w = append(vals, v), max(w, values.IntsetWidthFor(v))
	}
	slices.Sort(vals)
	is := values.NewIntset(w, len(vals))[:values.IntsetHeader+w*len(vals)]
	for i, v := range vals {
		values.IntsetWrite(is[values.IntsetHeader+i*w:], w, v)
	}
	o.SetBytes(is)
	o.SetColl(nil)
	o.Enc = EncIntset
}

func SetLen(o *Object) int {
	switch o.Enc {
	case EncIntset:
		return values.IntsetLen(o.Bytes())
	case EncListpack:
		return listpack.Len(o.Bytes())
	}
	return o.Coll().(*values.HTable).Len()
}

// SetAdd adds m and reports whether it was new (Redis 7.2's setTypeAdd).
func SetAdd(o *Object, m []byte, lim *EncodingLimits) bool {
	switch o.Enc {
	case EncIntset:
		v, ok := resp.ParseInt(m)
		if ok {
			return setIntsetAdd(o, v, lim)
		}
		is := o.Bytes()
		if int64(values.IntsetLen(is)) < lim.SetMaxListpackEntries &&
			int64(len(m)) <= lim.SetMaxListpackValue && int64(intsetMaxLen(is)) <= lim.SetMaxListpackValue {
			setIntsetToListpack(o, len(m))
			o.SetBytes(listpack.Append(o.Bytes(), m))
			return true
		}
		setConvert(o)
	case EncListpack:
		if listpack.Find(o.Bytes(), m, 1) >= 0 {
			return false
		}
		if int64(listpack.Len(o.Bytes())) < lim.SetMaxListpackEntries && int64(len(m)) <= lim.SetMaxListpackValue {
			o.SetBytes(listpack.Append(o.Bytes(), m))
			return true
		}
		setConvert(o)
	}
	return o.Coll().(*values.HTable).Add(m)
}

// setIntsetAdd adds v to an intset, converting it to a hash table when it
// grows past set-max-intset-entries (Redis' maybeConvertIntset).
func setIntsetAdd(o *Object, v int64, lim *EncodingLimits) bool {
	is, added := values.IntsetAdd(o.Bytes(), v)
	o.SetBytes(is)
	if added && int64(values.IntsetLen(o.Bytes())) > lim.SetMaxIntsetEntries {
		setConvert(o)
	}
	return added
}

// SetAddInt adds v (an integer member) without formatting it when the set is
// an intset.
func SetAddInt(o *Object, v int64, lim *EncodingLimits) bool {
	if o.Enc == EncIntset {
		return setIntsetAdd(o, v, lim)
	}
	var buf [20]byte
	return SetAdd(o, strconv.AppendInt(buf[:0], v, 10), lim)
}

// SetRemove removes m and reports whether it was there.
func SetRemove(o *Object, m []byte) bool {
	switch o.Enc {
	case EncIntset:
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		is, removed := values.IntsetRemove(o.Bytes(), v)
		o.SetBytes(is)
		return removed
	case EncListpack:
		off := listpack.Find(o.Bytes(), m, 1)
		if off < 0 {
			return false
		}
		o.SetBytes(setListpackDelete(o.Bytes(), off))
		return true
	}
	t := o.Coll().(*values.HTable)
	i, found := t.Find(m)
	if found {
		t.RemoveAt(i)
	}
	return found
}

// setListpackDelete removes the entry at off, giving memory back once many
// removals have left the buffer mostly empty (as IntsetRemove).
func setListpackDelete(lp []byte, off int) []byte {
	lp = listpack.Delete(lp, off, 1)
	if cap(lp) > 2*len(lp)+64 {
		lp = listpack.Clone(lp)
	}
	return lp
}

func SetHas(o *Object, m []byte) bool {
	switch o.Enc {
	case EncIntset:
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := values.IntsetSearch(o.Bytes(), v)
		return found
	case EncListpack:
		return listpack.Find(o.Bytes(), m, 1) >= 0
	}
	_, found := o.Coll().(*values.HTable).Find(m)
	return found
}

// SetHasInt reports whether the integer member v is in o.
func SetHasInt(o *Object, v int64, buf *[20]byte) bool {
	if o.Enc == EncIntset {
		_, found := values.IntsetSearch(o.Bytes(), v)
		return found
	}
	return SetHas(o, strconv.AppendInt(buf[:0], v, 10))
}

// SetMember is one member read from a set: an integer (IsInt, from an
// intset) or bytes.
type SetMember struct {
	Str   []byte
	Int   int64
	IsInt bool
}

// SetAt returns the member at position i (intset order is ascending, a
// listpack's and a hash table's is their storage order). On a listpack it
// walks from the start: NewSetIter reads every member in one pass.
func SetAt(o *Object, i int) SetMember {
	switch o.Enc {
	case EncIntset:
		return SetMember{Int: values.IntsetGet(o.Bytes(), i), IsInt: true}
	case EncListpack:
		m, _ := listpack.Next(o.Bytes(), listpack.Offset(o.Bytes(), i))
		return SetMember{Str: m}
	}
	return SetMember{Str: o.Coll().(*values.HTable).Key(i)}
}

// SetIter reads a set's members in position order (SetAt's), each once.
// The set must not change while it is used.
type SetIter struct {
	o      *Object
	i, off int
}

// NewSetIter returns an iterator at o's first member.
func NewSetIter(o *Object) SetIter { return SetIter{o: o, off: listpack.First} }

// Next returns the next member, or false after the last.
func (it *SetIter) Next() (SetMember, bool) {
	o := it.o
	if o.Enc == EncListpack {
		if it.off >= len(o.Bytes()) {
			return SetMember{}, false
		}
		var m []byte
		m, it.off = listpack.Next(o.Bytes(), it.off)
		return SetMember{Str: m}, true
	}
	if it.i >= SetLen(o) {
		return SetMember{}, false
	}
	it.i++
	return SetAt(o, it.i-1), true
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
	switch o.Enc {
	case EncIntset:
		is, _ := values.IntsetRemove(o.Bytes(), values.IntsetGet(o.Bytes(), i))
		o.SetBytes(is)
		return
	case EncListpack:
		o.SetBytes(setListpackDelete(o.Bytes(), listpack.Offset(o.Bytes(), i)))
		return
	}
	o.Coll().(*values.HTable).RemoveAt(i)
}

// SetRandomAccess returns a reader of the member at any position of o (as
// SetAt). On a listpack it finds every entry's offset once, so reading
// count random members costs O(n + count) rather than SetAt's O(n) each
// (SRANDMEMBER with a count). The set must not change while it is used.
func SetRandomAccess(o *Object) func(i int) SetMember {
	if o.Enc != EncListpack {
		return func(i int) SetMember { return SetAt(o, i) }
	}
	lp := o.Bytes()
	offs := make([]int32, 0, listpack.Len(lp))
	for off := listpack.First; off < len(lp); _, off = listpack.Next(lp, off) {
		offs = append(offs, int32(off))
	}
	return func(i int) SetMember {
		m, _ := listpack.Next(lp, int(offs[i]))
		return SetMember{Str: m}
	}
}
