package values

import (
	"slices"
	"unsafe"
)

// HTable is the full encoding of hashes (field → value) and sets (members
// only): Redis' OBJ_ENCODING_HT. It owns its keys (hash fields or set
// members) and, for a hash, their values; an open-addressing index
// (htindex.go) finds an entry's position in the dense keys/vals arrays.
//
// Invariants (kept by insert, setValue and removeAt):
//   - index.used == len(keys) and index.find(keys[i]) == i for every i
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
type HTable struct {
	index htIndex
	keys  []string
	vals  [][]byte
	mem   int64
	peak  int
	hash  bool
}

// Memory estimates for an htable beyond its key and value bytes.
const (
	htableOverhead = 160 // the struct, the index header, the interface and slice headers
	htKeyHeader    = 16  // a keys element (string header)
	htValHeader    = 24  // a vals element (slice header)
)

// NewHTable returns an empty table for about hint entries: a hash (keys with
// values) when hash, else a set.
func NewHTable(hash bool, hint int) *HTable {
	t := &HTable{index: newHTIndex(hint), hash: hash}
	t.keys = make([]string, 0, hint)
	if hash {
		t.vals = make([][]byte, 0, hint)
	}
	t.peak = hint
	return t
}

// Len is the number of entries.
func (t *HTable) Len() int { return len(t.keys) }

// Memory implements collection.
func (t *HTable) Memory() int64 {
	m := htableOverhead + t.mem + t.index.bytes() + int64(cap(t.keys))*htKeyHeader
	if t.hash {
		m += int64(cap(t.vals)) * htValHeader
	}
	return m
}

// Clone implements collection.
func (t *HTable) Clone() Collection {
	n := NewHTable(t.hash, len(t.keys))
	for i, k := range t.keys {
		var v []byte
		if t.hash {
			v = t.vals[i]
		}
		n.Insert(KeyBytes(k), v)
	}
	return n
}

// Find returns k's position.
func (t *HTable) Find(k []byte) (int, bool) {
	return t.index.find(MemberString(k))
}

// Add inserts k, with no value (a set's member), unless it is present, and
// reports whether it was added: one probe of the index for both answers.
func (t *HTable) Add(k []byte) bool {
	_, added := t.claim(k)
	return added
}

// Put sets k's value to v in a hash, adding k unless it is present, and
// reports whether k was added: one probe of the index for both answers
// (HSET's Find-then-Insert took two for every new field).
func (t *HTable) Put(k, v []byte) bool {
	pos, added := t.claim(k)
	if !added {
		t.SetValue(pos, v)
		return false
	}
	nv := make([]byte, len(v))
	copy(nv, v)
	t.vals = append(t.vals, nv)
	t.mem += int64(cap(nv))
	return true
}

// claim returns k's position and whether it was added there: present, its
// position; absent, k appended to keys in the slot the same probe found
// (Put then appends its value, keeping len(vals) == len(keys)).
func (t *HTable) claim(k []byte) (pos int, added bool) {
	ks := MemberString(k)
	h := htHash(ks)
	i, found := t.index.lookup(ks, h)
	if found {
		return int(uint32(t.index.slots[i].meta)) - 1, false
	}
	if !t.index.fits() {
		t.index.resize(htSlotsFor(t.index.used + 1))
		i, _ = t.index.lookup(ks, h)
	}
	s := string(k)
	pos = len(t.keys)
	t.index.fill(i, s, h, pos)
	t.keys = append(t.keys, s)
	t.mem += int64(len(s))
	t.peak = max(t.peak, len(t.keys))
	return pos, true
}

// Insert adds k (with value v for a hash), copying both, and returns its
// position. REQUIRES: k is not present.
func (t *HTable) Insert(k, v []byte) int {
	s := string(k)
	i := len(t.keys)
	t.index.insert(s, i)
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

// Reserve makes room for n more entries at once, so a command adding
// many (an HSET with a million fields) builds the map and the arrays once
// instead of doubling through every size on the way: in a 2M-argument HSET
// the index's growth (a Go map's then) was a quarter of the server's CPU. It does nothing
// unless n is more than the table holds now, so the rebuild (O(len)) is
// paid for by the n inserts that follow; positions do not change.
func (t *HTable) Reserve(n int) {
	want := len(t.keys) + n
	if n < reserveMin || n <= len(t.keys) || want <= t.peak {
		return
	}
	if size := htSlotsFor(want); size > len(t.index.slots) {
		t.index.resize(size)
	}
	t.keys = slices.Grow(t.keys, n)
	if t.hash {
		t.vals = slices.Grow(t.vals, n)
	}
	t.peak = want
}

// reserveMin is the fewest entries Reserve makes room for: below it the
// map's own growth costs too little to matter.
const reserveMin = 1024

// SetValue overwrites the value at position i, reusing its buffer when the
// new value fits without wasting much of it.
func (t *HTable) SetValue(i int, v []byte) {
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

// RemoveAt deletes the entry at position i, moving the last entry into its
// place (a move to a lower position: see the type's comment).
func (t *HTable) RemoveAt(i int) {
	k := t.keys[i]
	t.index.remove(k, i)
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
		t.index.move(moved, last, i)
	}
	t.keys[last] = ""
	t.keys = t.keys[:last]
	t.shrink()
}

// shrink gives memory back after many removals: neither the index nor
// the slices shrink by themselves. Rebuilding keeps every position, so
// cursors and the dense layout are unaffected; the cost is amortized over
// the removals that made it necessary.
func (t *HTable) shrink() {
	n := len(t.keys)
	if t.peak > 64 && n < t.peak/8 {
		t.index.resize(htSlotsFor(n))
		t.peak = n
	}
	if cap(t.keys) > 64 && n < cap(t.keys)/4 {
		t.keys = append(make([]string, 0, 2*n), t.keys...)
		if t.hash {
			t.vals = append(make([][]byte, 0, 2*n), t.vals...)
		}
	}
}

// KeyBytes views a key string as bytes without copying. The result must
// never be written to.
func KeyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Key returns the key at position i (0 <= i < Len) as bytes, which must
// never be written and are valid until the table changes.
func (t *HTable) Key(i int) []byte { return KeyBytes(t.keys[i]) }

// Value returns the value at position i (0 <= i < Len) of a hash table,
// valid until the table changes.
func (t *HTable) Value(i int) []byte { return t.vals[i] }
