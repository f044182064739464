package keyspace

import (
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// A hash value is held one of two ways, as in Redis 7.0:
//
//   - EncListpack: o.Bytes() is a listpack of field, value, field, value ...
//     in insertion order (a new field is appended, HDEL closes the gap). It
//     is the whole value: one allocation per small hash, no pointers for the
//     garbage collector to follow. Overwriting a value in place reuses the
//     buffer, so HSET on an existing field of a small hash allocates nothing
//     when the new value fits.
//   - EncHashtable: o.Coll() is an *htable. A hash converts once it has more
//     than hash-max-listpack-entries fields, or when a field or value longer
//     than hash-max-listpack-value is written (HSET checks every argument
//     first, as Redis' hashTypeTryConversion), and never converts back.

// ---- hash values -------------------------------------------------------------

// NewHashValue gives o (a fresh KindHash object) an empty value sized for the
// field/value pairs about to be written: a listpack with room for all of
// them, or a hash table when one of them is too long for a listpack.
func NewHashValue(o *Object, pairs [][]byte, lim *EncodingLimits) {
	size := 0
	for _, a := range pairs {
		if int64(len(a)) > lim.HashMaxListpackValue {
			o.Enc = EncHashtable
			o.SetColl(values.NewHTable(true, len(pairs)/2))
			return
		}
		size += listpack.EntrySize(a)
	}
	o.Enc = EncListpack
	o.SetBytes(listpack.New(size))
}

// HashTryConversion converts a listpack hash when any of args is longer than
// hash-max-listpack-value (Redis' hashTypeTryConversion).
func HashTryConversion(o *Object, args [][]byte, lim *EncodingLimits) {
	if o.Enc != EncListpack {
		return
	}
	for _, a := range args {
		if int64(len(a)) > lim.HashMaxListpackValue {
			hashConvert(o)
			return
		}
	}
}

// hashConvert turns a listpack hash into a hash table, keeping field order.
func hashConvert(o *Object) {
	lp := o.Bytes()
	t := values.NewHTable(true, listpack.Len(lp)/2)
	for off := listpack.First; off < len(lp); {
		f, next := listpack.Next(lp, off)
		v, next2 := listpack.Next(lp, next)
		t.Insert(f, v)
		off = next2
	}
	o.SetBytes(nil)
	o.SetColl(t)
	o.Enc = EncHashtable
}

// HashReserve makes room in a hash table for n more fields (values.HTable's
// Reserve); a listpack hash is left alone.
func HashReserve(o *Object, n int) {
	if o.Enc == EncHashtable {
		o.Coll().(*values.HTable).Reserve(n)
	}
}

func HashLen(o *Object) int {
	if o.Enc == EncListpack {
		return listpack.Len(o.Bytes()) / 2
	}
	return o.Coll().(*values.HTable).Len()
}

// HashGet returns field's value. The result is valid until o changes.
func HashGet(o *Object, field []byte) ([]byte, bool) {
	if o.Enc == EncListpack {
		off := listpack.Find(o.Bytes(), field, 2)
		if off < 0 {
			return nil, false
		}
		_, next := listpack.Next(o.Bytes(), off)
		v, _ := listpack.Next(o.Bytes(), next)
		return v, true
	}
	t := o.Coll().(*values.HTable)
	if i, ok := t.Find(field); ok {
		return t.Value(i), true
	}
	return nil, false
}

// HashSet sets field to val and reports whether field is new. Like Redis'
// hashTypeSet it converts a listpack first when field or val is too long for
// one, and after adding when the hash has too many fields.
func HashSet(o *Object, field, val []byte, lim *EncodingLimits) bool {
	if o.Enc == EncListpack {
		if int64(len(field)) > lim.HashMaxListpackValue || int64(len(val)) > lim.HashMaxListpackValue {
			hashConvert(o)
		} else {
			lp := o.Bytes()
			if off := listpack.Find(lp, field, 2); off >= 0 {
				_, next := listpack.Next(lp, off)
				lp, _ = listpack.Replace(lp, next, val)
				o.SetBytes(lp)
				return false
			}
			lp = listpack.Append(lp, field)
			o.SetBytes(listpack.Append(lp, val))
			if int64(listpack.Len(o.Bytes())/2) > lim.HashMaxListpackEntries {
				hashConvert(o)
			}
			return true
		}
	}
	return o.Coll().(*values.HTable).Put(field, val)
}

// HashDelete removes field and reports whether it was there.
func HashDelete(o *Object, field []byte) bool {
	if o.Enc == EncListpack {
		off := listpack.Find(o.Bytes(), field, 2)
		if off < 0 {
			return false
		}
		o.SetBytes(listpack.Delete(o.Bytes(), off, 2))
		if cap(o.Bytes()) > 2*len(o.Bytes())+64 {
			o.SetBytes(listpack.Clone(o.Bytes())) // give back what many deletions freed
		}
		return true
	}
	t := o.Coll().(*values.HTable)
	i, ok := t.Find(field)
	if ok {
		t.RemoveAt(i)
	}
	return ok
}

// hashIter walks a hash's fields and values in storage order. The slices it
// returns are valid until the hash changes and must not be written to.
type hashIter struct {
	o   *Object
	pos int // listpack: byte offset; hash table: position
}

func NewHashIter(o *Object) hashIter {
	if o.Enc == EncListpack {
		return hashIter{o: o, pos: listpack.First}
	}
	return hashIter{o: o}
}

func (it *hashIter) Next() (field, val []byte, ok bool) {
	if it.o.Enc == EncListpack {
		lp := it.o.Bytes()
		if it.pos >= len(lp) {
			return nil, nil, false
		}
		field, next := listpack.Next(lp, it.pos)
		val, it.pos = listpack.Next(lp, next)
		return field, val, true
	}
	t := it.o.Coll().(*values.HTable)
	if it.pos >= t.Len() {
		return nil, nil, false
	}
	i := it.pos
	it.pos++
	return t.Key(i), t.Value(i), true
}

// HashPairOffsets returns the byte offsets of a listpack hash's fields, so
// that random pairs can be picked in O(1) each.
func HashPairOffsets(lp []byte) []int {
	offs := make([]int, 0, listpack.Len(lp)/2)
	for off := listpack.First; off < len(lp); {
		offs = append(offs, off)
		off = listpack.Skip(lp, off, 2)
	}
	return offs
}

// HashPair returns the pair at position i (a field offset for a listpack, as
// HashPairOffsets gives; a position for a hash table).
func HashPair(o *Object, offs []int, i int) (field, val []byte) {
	if o.Enc == EncListpack {
		f, next := listpack.Next(o.Bytes(), offs[i])
		v, _ := listpack.Next(o.Bytes(), next)
		return f, v
	}
	t := o.Coll().(*values.HTable)
	return t.Key(i), t.Value(i)
}
