package values

import (
	"unsafe"
)

// HTable is the full encoding of hashes (field → value) and sets (members
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
type HTable struct {
	Index map[string]int32
	Keys  []string
	Vals  [][]byte
	Mem   int64
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

func NewHTable(hash bool, hint int) *HTable {
	t := &HTable{Index: make(map[string]int32, hint), hash: hash}
	t.Keys = make([]string, 0, hint)
	if hash {
		t.Vals = make([][]byte, 0, hint)
	}
	t.peak = hint
	return t
}

func (t *HTable) Len() int { return len(t.Keys) }

// Memory implements collection.
func (t *HTable) Memory() int64 {
	m := htableOverhead + t.Mem + int64(t.peak)*htMapEntry + int64(cap(t.Keys))*htKeyHeader
	if t.hash {
		m += int64(cap(t.Vals)) * htValHeader
	}
	return m
}

// Clone implements collection.
func (t *HTable) Clone() Collection {
	n := NewHTable(t.hash, len(t.Keys))
	for i, k := range t.Keys {
		var v []byte
		if t.hash {
			v = t.Vals[i]
		}
		n.Insert(KeyBytes(k), v)
	}
	return n
}

// Find returns k's position.
func (t *HTable) Find(k []byte) (int, bool) {
	i, ok := t.Index[string(k)]
	return int(i), ok
}

// Insert adds k (with value v for a hash), copying both, and returns its
// position. REQUIRES: k is not present.
func (t *HTable) Insert(k, v []byte) int {
	s := string(k)
	i := len(t.Keys)
	t.Index[s] = int32(i)
	t.Keys = append(t.Keys, s)
	t.Mem += int64(len(s))
	if t.hash {
		nv := make([]byte, len(v))
		copy(nv, v)
		t.Vals = append(t.Vals, nv)
		t.Mem += int64(cap(nv))
	}
	t.peak = max(t.peak, len(t.Keys))
	return i
}

// SetValue overwrites the value at position i, reusing its buffer when the
// new value fits without wasting much of it.
func (t *HTable) SetValue(i int, v []byte) {
	old := t.Vals[i]
	if cap(old) >= len(v) && cap(old) <= 2*len(v)+16 {
		t.Vals[i] = append(old[:0], v...)
		return
	}
	nv := make([]byte, len(v))
	copy(nv, v)
	t.Vals[i] = nv
	t.Mem += int64(cap(nv) - cap(old))
}

// RemoveAt deletes the entry at position i, moving the last entry into its
// place (a move to a lower position: see the type's comment).
func (t *HTable) RemoveAt(i int) {
	k := t.Keys[i]
	delete(t.Index, k)
	t.Mem -= int64(len(k))
	last := len(t.Keys) - 1
	if t.hash {
		t.Mem -= int64(cap(t.Vals[i]))
		t.Vals[i] = t.Vals[last]
		t.Vals[last] = nil
		t.Vals = t.Vals[:last]
	}
	if i != last {
		moved := t.Keys[last]
		t.Keys[i] = moved
		t.Index[moved] = int32(i)
	}
	t.Keys[last] = ""
	t.Keys = t.Keys[:last]
	t.shrink()
}

// shrink gives memory back after many removals: Go maps and slices never
// shrink by themselves. Rebuilding keeps every position, so cursors and the
// dense layout are unaffected; the cost is amortized over the removals that
// made it necessary.
func (t *HTable) shrink() {
	n := len(t.Keys)
	if t.peak > 64 && n < t.peak/8 {
		m := make(map[string]int32, n)
		for i, k := range t.Keys {
			m[k] = int32(i)
		}
		t.Index = m
		t.peak = n
	}
	if cap(t.Keys) > 64 && n < cap(t.Keys)/4 {
		t.Keys = append(make([]string, 0, 2*n), t.Keys...)
		if t.hash {
			t.Vals = append(make([][]byte, 0, 2*n), t.Vals...)
		}
	}
}

// KeyBytes views a key string as bytes without copying. The result must
// never be written to.
func KeyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
