package shard

import (
	"unsafe"

	"github.com/svcdb/svcdb/shard/listpack"
)

// A hash value is held one of two ways, as in Redis 7.0:
//
//   - encListpack: o.str is a listpack of field, value, field, value ...
//     in insertion order (a new field is appended, HDEL closes the gap). It
//     is the whole value: one allocation per small hash, no pointers for the
//     garbage collector to follow. Overwriting a value in place reuses the
//     buffer, so HSET on an existing field of a small hash allocates nothing
//     when the new value fits.
//   - encHashtable: o.coll is an *htable. A hash converts once it has more
//     than hash-max-listpack-entries fields, or when a field or value longer
//     than hash-max-listpack-value is written (HSET checks every argument
//     first, as Redis' hashTypeTryConversion), and never converts back.

// htable is the full encoding of hashes (field → value) and sets (members
// only): Redis' OBJ_ENCODING_HT. It owns its keys (hash fields or set
// members) and, for a hash, their values; a Go map finds an entry's position
// in the dense keys/vals arrays.
//
// Invariants (kept by insert, setValue and removeAt):
//   - len(index) == len(keys) and index[keys[i]] == i for every i
//   - vals == nil for a set; len(vals) == len(keys) for a hash
//   - mem == Σ len(keys[i]) + cap(vals[i]), so memory() never walks entries
//   - peak >= len(keys): the most entries the map has held since it was built
//
// Removal moves the last entry into the hole, so the arrays stay dense: a
// uniformly random entry (HRANDFIELD, SPOP, SRANDMEMBER) is one rand call,
// and there is nothing to compact. Entries only ever move to lower
// positions, which is what makes HSCAN/SSCAN cursors safe: the scan walks
// positions from the top down (see scanPositions), so an entry present for
// the whole scan either stays at or moves below the cursor and is returned.
type htable struct {
	index map[string]int32
	keys  []string
	vals  [][]byte
	mem   int64
	peak  int
	hash  bool
}

// Memory estimates for an htable beyond its key and value bytes.
const (
	htableOverhead = 160 // the struct, the map header, the interface and slice headers
	htMapEntry     = 40  // one map slot: string header, position, control byte, load-factor slack
	htKeyHeader    = 16  // a keys element (string header)
	htValHeader    = 24  // a vals element (slice header)
)

func newHTable(hash bool, hint int) *htable {
	t := &htable{index: make(map[string]int32, hint), hash: hash}
	t.keys = make([]string, 0, hint)
	if hash {
		t.vals = make([][]byte, 0, hint)
	}
	t.peak = hint
	return t
}

func (t *htable) len() int { return len(t.keys) }

// memory implements collection.
func (t *htable) memory() int64 {
	m := htableOverhead + t.mem + int64(t.peak)*htMapEntry + int64(cap(t.keys))*htKeyHeader
	if t.hash {
		m += int64(cap(t.vals)) * htValHeader
	}
	return m
}

// clone implements collection.
func (t *htable) clone() collection {
	n := newHTable(t.hash, len(t.keys))
	for i, k := range t.keys {
		var v []byte
		if t.hash {
			v = t.vals[i]
		}
		n.insert(htKeyBytes(k), v)
	}
	return n
}

// find returns k's position.
func (t *htable) find(k []byte) (int, bool) {
	i, ok := t.index[string(k)]
	return int(i), ok
}

// insert adds k (with value v for a hash), copying both, and returns its
// position. REQUIRES: k is not present.
func (t *htable) insert(k, v []byte) int {
	s := string(k)
	i := len(t.keys)
	t.index[s] = int32(i)
	t.keys = append(t.keys, s)
	t.mem += int64(len(s))
	if t.hash {
		nv := make([]byte, len(v))
		copy(nv, v)
		t.vals = append(t.vals, nv)
		t.mem += int64(cap(nv))
	}
	t.peak = max(t.peak, len(t.keys))
	return i
}

// setValue overwrites the value at position i, reusing its buffer when the
// new value fits without wasting much of it.
func (t *htable) setValue(i int, v []byte) {
	old := t.vals[i]
	if cap(old) >= len(v) && cap(old) <= 2*len(v)+16 {
		t.vals[i] = append(old[:0], v...)
		return
	}
	nv := make([]byte, len(v))
	copy(nv, v)
	t.vals[i] = nv
	t.mem += int64(cap(nv) - cap(old))
}

// removeAt deletes the entry at position i, moving the last entry into its
// place (a move to a lower position: see the type's comment).
func (t *htable) removeAt(i int) {
	k := t.keys[i]
	delete(t.index, k)
	t.mem -= int64(len(k))
	last := len(t.keys) - 1
	if t.hash {
		t.mem -= int64(cap(t.vals[i]))
		t.vals[i] = t.vals[last]
		t.vals[last] = nil
		t.vals = t.vals[:last]
	}
	if i != last {
		moved := t.keys[last]
		t.keys[i] = moved
		t.index[moved] = int32(i)
	}
	t.keys[last] = ""
	t.keys = t.keys[:last]
	t.shrink()
}

// shrink gives memory back after many removals: Go maps and slices never
// shrink by themselves. Rebuilding keeps every position, so cursors and the
// dense layout are unaffected; the cost is amortized over the removals that
// made it necessary.
func (t *htable) shrink() {
	n := len(t.keys)
	if t.peak > 64 && n < t.peak/8 {
		m := make(map[string]int32, n)
		for i, k := range t.keys {
			m[k] = int32(i)
		}
		t.index = m
		t.peak = n
	}
	if cap(t.keys) > 64 && n < cap(t.keys)/4 {
		t.keys = append(make([]string, 0, 2*n), t.keys...)
		if t.hash {
			t.vals = append(make([][]byte, 0, 2*n), t.vals...)
		}
	}
}

// htKeyBytes views a key string as bytes without copying. The result must
// never be written to.
func htKeyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ---- hash values -------------------------------------------------------------

// newHashValue gives o (a fresh KindHash object) an empty value sized for the
// field/value pairs about to be written: a listpack with room for all of
// them, or a hash table when one of them is too long for a listpack.
func newHashValue(o *object, pairs [][]byte, lim *EncodingLimits) {
	size := 0
	for _, a := range pairs {
		if int64(len(a)) > lim.HashMaxListpackValue {
			o.enc = encHashtable
			o.coll = newHTable(true, len(pairs)/2)
			return
		}
		size += listpack.EntrySize(a)
	}
	o.enc = encListpack
	o.str = listpack.New(size)
}

// hashTryConversion converts a listpack hash when any of args is longer than
// hash-max-listpack-value (Redis' hashTypeTryConversion).
func hashTryConversion(o *object, args [][]byte, lim *EncodingLimits) {
	if o.enc != encListpack {
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
func hashConvert(o *object) {
	lp := o.str
	t := newHTable(true, listpack.Len(lp)/2)
	for off := listpack.First; off < len(lp); {
		f, next := listpack.Next(lp, off)
		v, next2 := listpack.Next(lp, next)
		t.insert(f, v)
		off = next2
	}
	o.str, o.coll, o.enc = nil, t, encHashtable
}

func hashLen(o *object) int {
	if o.enc == encListpack {
		return listpack.Len(o.str) / 2
	}
	return o.coll.(*htable).len()
}

// hashGet returns field's value. The result is valid until o changes.
func hashGet(o *object, field []byte) ([]byte, bool) {
	if o.enc == encListpack {
		off := listpack.Find(o.str, field, 2)
		if off < 0 {
			return nil, false
		}
		_, next := listpack.Next(o.str, off)
		v, _ := listpack.Next(o.str, next)
		return v, true
	}
	t := o.coll.(*htable)
	if i, ok := t.find(field); ok {
		return t.vals[i], true
	}
	return nil, false
}

// hashSet sets field to val and reports whether field is new. Like Redis'
// hashTypeSet it converts a listpack first when field or val is too long for
// one, and after adding when the hash has too many fields.
func hashSet(o *object, field, val []byte, lim *EncodingLimits) bool {
	if o.enc == encListpack {
		if int64(len(field)) > lim.HashMaxListpackValue || int64(len(val)) > lim.HashMaxListpackValue {
			hashConvert(o)
		} else {
			lp := o.str
			if off := listpack.Find(lp, field, 2); off >= 0 {
				_, next := listpack.Next(lp, off)
				o.str, _ = listpack.Replace(lp, next, val)
				return false
			}
			lp = listpack.Append(lp, field)
			o.str = listpack.Append(lp, val)
			if int64(listpack.Len(o.str)/2) > lim.HashMaxListpackEntries {
				hashConvert(o)
			}
			return true
		}
	}
	t := o.coll.(*htable)
	if i, ok := t.find(field); ok {
		t.setValue(i, val)
		return false
	}
	t.insert(field, val)
	return true
}

// hashDelete removes field and reports whether it was there.
func hashDelete(o *object, field []byte) bool {
	if o.enc == encListpack {
		off := listpack.Find(o.str, field, 2)
		if off < 0 {
			return false
		}
		o.str = listpack.Delete(o.str, off, 2)
		if cap(o.str) > 2*len(o.str)+64 {
			o.str = listpack.Clone(o.str) // give back what many deletions freed
		}
		return true
	}
	t := o.coll.(*htable)
	i, ok := t.find(field)
	if ok {
		t.removeAt(i)
	}
	return ok
}

// hashIter walks a hash's fields and values in storage order. The slices it
// returns are valid until the hash changes and must not be written to.
type hashIter struct {
	o   *object
	pos int // listpack: byte offset; hash table: position
}

func newHashIter(o *object) hashIter {
	if o.enc == encListpack {
		return hashIter{o: o, pos: listpack.First}
	}
	return hashIter{o: o}
}

func (it *hashIter) next() (field, val []byte, ok bool) {
	if it.o.enc == encListpack {
		lp := it.o.str
		if it.pos >= len(lp) {
			return nil, nil, false
		}
		field, next := listpack.Next(lp, it.pos)
		val, it.pos = listpack.Next(lp, next)
		return field, val, true
	}
	t := it.o.coll.(*htable)
	if it.pos >= len(t.keys) {
		return nil, nil, false
	}
	i := it.pos
	it.pos++
	return htKeyBytes(t.keys[i]), t.vals[i], true
}

// hashPairOffsets returns the byte offsets of a listpack hash's fields, so
// that random pairs can be picked in O(1) each.
func hashPairOffsets(lp []byte) []int {
	offs := make([]int, 0, listpack.Len(lp)/2)
	for off := listpack.First; off < len(lp); {
		offs = append(offs, off)
		off = listpack.Skip(lp, off, 2)
	}
	return offs
}

// hashPair returns the pair at position i (a field offset for a listpack, as
// hashPairOffsets gives; a position for a hash table).
func hashPair(o *object, offs []int, i int) (field, val []byte) {
	if o.enc == encListpack {
		f, next := listpack.Next(o.str, offs[i])
		v, _ := listpack.Next(o.str, next)
		return f, v
	}
	t := o.coll.(*htable)
	return htKeyBytes(t.keys[i]), t.vals[i]
}
