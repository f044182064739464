// Package keyindex is a shard database's key index: an open-addressing hash
// table from a key's 64-bit hash to a uint32 value (the key's slot position in
// package keyspace), with no Go map and no pointer per entry.
//
// It stores no keys. A lookup hands each candidate value whose 7-bit tag
// matches the hash to the caller's match function, which compares the key it
// holds at that value (keyspace compares the slot's Key); a rehash asks the
// caller's hashOf for a stored value's hash. So an entry costs 4 bytes per
// bucket (a tag byte and the value's 3 low bytes; 5 once a value above
// 1<<24-1 was inserted: see bucket widths below), and the collector sees at
// most two pointer-free arrays (the current table and the one being drained)
// whatever the number of keys.
//
// # Layout
//
// A table is a power-of-two array of buckets. A hash's home bucket is its top
// bits (h >> shift); its tag is 0x80 | its low 7 bits, so the two never share
// bits. Collisions probe linearly (i+1, wrapping). A bucket's tag byte is
// tagEmpty, tagDeleted (a tombstone) or an occupied tag.
//
// # Growth without a pause
//
// A table grows (or shrinks, or is rebuilt to drop tombstones) as Redis' dict
// rehashes: incrementally. A new table becomes cur, the previous one old, and
// every Insert and Remove then moves 2 of old's entries into cur in bucket
// order (Step does more, from the shard's cron), so no single command pays for
// the whole table: moving 10M entries at once reads 10M random slots for
// their keys' hashes, 2.5 s of CPU (BenchmarkRehashAll), where an Insert
// during a rehash pays for 2 of them.
//
// Invariants (Verify checks them):
//   - every value is in exactly one of cur and old, at most once;
//   - in each table, an occupied bucket is reachable from its hash's home
//     bucket without crossing an empty one (tombstones are crossed);
//   - used counts cur's occupied and deleted buckets, and stays <= 7/8 of
//     cur's size; old is only ever drained, never inserted into;
//   - old's buckets below moved hold no live entry.
//
// What it must never do: allocate per lookup, hold a key, or call hashOf
// outside a rehash.
package keyindex

import (
	"encoding/binary"
	"math/bits"
)

const (
	tagEmpty   = 0
	tagDeleted = 1
	tagLive    = 0x80

	minSize = 16
	// stepEntries and stepScan bound the rehash work one Insert or Remove
	// does: at most stepEntries entries moved (one hashOf each, about
	// 250 ns of CPU at 10M keys: a random memory read) and stepScan
	// buckets looked at. Moving 2 entries per insert empties old before
	// cur, at most half full when it was made, can fill (it has room for
	// 3/4 of old's live entries more, which takes 1/2 of them in inserts);
	// when it does not (a table mostly of empty buckets), the rest is
	// moved at once, cheap because few entries are left.
	stepEntries = 2
	stepScan    = 256
)

// A bucket is its tag, then its value (little-endian). Tag and value side
// by side make a lookup's first memory miss bring both; as two arrays they
// cost a miss each (BenchmarkFind, shard/keyspace).
//
// Buckets come in two widths. A narrow table's hold the value's low 3 bytes
// (4 bytes a bucket), a wide table's all 4 (5 bytes a bucket). A table is
// made narrow when every value it may hold is at most narrowMax (Index.top,
// the largest value ever inserted), and an Insert of a larger value into a
// narrow table rebuilds it wide first; top never falls, so an index stays
// wide once it was (until the database empties and starts afresh). The keyspace's values are slot
// positions: a database of one shard reaches 1<<24 of them only with 16M
// slots (512 MiB of them), so its index is narrow, a fifth smaller (at 1M
// keys over 16 shards, 8.4 bytes a key instead of 10.5). val reads 4 bytes
// and masks them, so a narrow table carries one byte of padding after its
// last bucket.
const (
	narrowBucket = 4
	wideBucket   = 5
	narrowMax    = 1<<24 - 1
)

type table struct {
	b     []byte // w bytes a bucket (and a narrow table's padding byte)
	shift uint8  // 64 - log2(size())
	w     uint8  // narrowBucket or wideBucket
	vmask uint32 // the values a bucket holds: narrowMax or all
}

func newTable(size int, wide bool) table {
	t := table{shift: uint8(64 - bits.TrailingZeros(uint(size))), w: narrowBucket, vmask: narrowMax}
	if wide {
		t.w, t.vmask = wideBucket, 1<<32-1
		t.b = make([]byte, size*wideBucket)
	} else {
		t.b = make([]byte, size*narrowBucket+1)
	}
	return t
}

func (t *table) size() int {
	if len(t.b) == 0 {
		return 0
	}
	return 1 << (64 - t.shift)
}
func (t *table) mask() uint64               { return uint64(t.size() - 1) }
func (t *table) tag(i uint64) uint8         { return t.b[i*uint64(t.w)] }
func (t *table) setTag(i uint64, tag uint8) { t.b[i*uint64(t.w)] = tag }
func (t *table) val(i uint64) uint32 {
	return binary.LittleEndian.Uint32(t.b[i*uint64(t.w)+1:]) & t.vmask
}
func (t *table) set(i uint64, tag uint8, v uint32) {
	j := i * uint64(t.w)
	t.b[j] = tag
	if t.w == wideBucket {
		binary.LittleEndian.PutUint32(t.b[j+1:], v)
		return
	}
	t.b[j+1], t.b[j+2], t.b[j+3] = byte(v), byte(v>>8), byte(v>>16)
}

func tagOf(h uint64) uint8 { return tagLive | uint8(h&0x7f) }

// find returns the bucket holding a value for which match is true, or -1.
func (t *table) find(h uint64, match func(v uint32) bool) int {
	if t.size() == 0 {
		return -1
	}
	// The table's fields in locals: match is a call, after which they
	// would be loaded again.
	tag, m, b, w, vm := tagOf(h), t.mask(), t.b, uint64(t.w), t.vmask
	for i := h >> t.shift; ; i = (i + 1) & m {
		switch b[i*w] {
		case tagEmpty:
			return -1
		case tag:
			if match(binary.LittleEndian.Uint32(b[i*w+1:]) & vm) {
				return int(i)
			}
		}
	}
}

// findVal returns the bucket holding exactly v, or -1.
func (t *table) findVal(h uint64, v uint32) int {
	if t.size() == 0 {
		return -1
	}
	tag, m := tagOf(h), t.mask()
	for i := h >> t.shift; ; i = (i + 1) & m {
		switch t.tag(i) {
		case tagEmpty:
			return -1
		case tag:
			if t.val(i) == v {
				return int(i)
			}
		}
	}
}

// put stores v in the first empty or deleted bucket of h's probe sequence and
// reports whether that bucket was empty (so used grows).
// REQUIRES: the table has an empty bucket.
func (t *table) put(h uint64, v uint32) (wasEmpty bool) {
	m := t.mask()
	i := h >> t.shift
	for t.tag(i) > tagDeleted {
		i = (i + 1) & m
	}
	wasEmpty = t.tag(i) == tagEmpty
	t.set(i, tagOf(h), v)
	return wasEmpty
}

// clear empties bucket i and returns how many buckets became empty: a
// tombstone is needed only if a probe may pass through i, that is, if the
// next bucket is not empty; otherwise i and the tombstones just before it
// become empty again.
func (t *table) clear(i int) (emptied int) {
	m := int(t.mask())
	if t.tag(uint64((i+1)&m)) != tagEmpty {
		t.setTag(uint64(i), tagDeleted)
		return 0
	}
	t.setTag(uint64(i), tagEmpty)
	emptied = 1
	for j := (i - 1) & m; t.tag(uint64(j)) == tagDeleted && j != i; j = (j - 1) & m {
		t.setTag(uint64(j), tagEmpty)
		emptied++
	}
	return emptied
}

// Index maps 64-bit hashes to uint32 values. The zero Index is empty and
// ready; it holds no pointer but its tables', so an Index value may be copied
// only as a move (SWAPDB swaps two).
type Index struct {
	cur   table
	old   table  // being drained into cur; no buckets when not rehashing
	moved int    // old's buckets [0, moved) are drained
	used  int    // cur's buckets not empty (live or deleted)
	live  int    // values in cur and old
	top   uint32 // the largest value ever inserted: a new table is narrow while it is <= narrowMax
}

// Len is the number of values held.
func (x *Index) Len() int { return x.live }

// Rehashing reports whether an old table is still being drained.
func (x *Index) Rehashing() bool { return x.old.size() != 0 }

// Bytes is the memory the index's tables hold.
func (x *Index) Bytes() int { return len(x.cur.b) + len(x.old.b) }

// Buckets is the number of buckets of the current table and of the table
// being drained (0 when none).
func (x *Index) Buckets() (cur, old int) { return x.cur.size(), x.old.size() }

// Find returns the value stored under h for which match reports true.
// match is called only with values whose tag matches h, most often once.
func (x *Index) Find(h uint64, match func(v uint32) bool) (uint32, bool) {
	if i := x.cur.find(h, match); i >= 0 {
		return x.cur.val(uint64(i)), true
	}
	if x.Rehashing() {
		if i := x.old.find(h, match); i >= 0 {
			return x.old.val(uint64(i)), true
		}
	}
	return 0, false
}

// Insert adds v under h. hashOf returns the hash a stored value was inserted
// with; it is called only to move entries during a rehash.
// REQUIRES: no value for the same key is present (the caller looked first).
func (x *Index) Insert(h uint64, v uint32, hashOf func(v uint32) uint64) {
	x.top = max(x.top, v)
	if x.Rehashing() {
		x.step(stepEntries, stepScan, hashOf)
	}
	if (x.used+1)*8 > x.cur.size()*7 || v > x.cur.vmask { // full, or narrow for v: a new table, wide if v needs it
		if x.Rehashing() {
			x.step(-1, -1, hashOf) // cur filled first: finish, cheaply (see stepEntries)
		}
		x.resize(x.live+1, hashOf)
	}
	if x.cur.put(h, v) {
		x.used++
	}
	x.live++
}

// Remove deletes the value v stored under h and reports whether it was
// there.
func (x *Index) Remove(h uint64, v uint32, hashOf func(v uint32) uint64) bool {
	if i := x.cur.findVal(h, v); i >= 0 {
		x.used -= x.cur.clear(i)
	} else if i := x.old.findVal(h, v); i >= 0 {
		x.old.clear(i)
	} else {
		return false
	}
	x.live--
	if x.Rehashing() {
		x.step(stepEntries, stepScan, hashOf)
	} else if n := x.cur.size(); n > minSize && x.live*16 < n {
		x.resize(x.live, hashOf) // shrink, as Redis' dict at 1/10 full
	}
	return true
}

// resize makes a new cur table sized for need values (at most half full)
// and starts draining the current one into it. An empty current table is
// simply dropped.
func (x *Index) resize(need int, hashOf func(v uint32) uint64) {
	size := minSize
	for size < 2*need {
		size <<= 1
	}
	prev := x.cur
	x.cur, x.used = newTable(size, x.top > narrowMax), 0
	if x.live == 0 {
		return
	}
	x.old, x.moved = prev, 0
	x.step(stepEntries, stepScan, hashOf)
}

// Step moves up to entries of the old table's entries into the current one
// (all of them when entries < 0) and reports whether a rehash is still in
// progress: Redis' incrementallyRehash, for the shard's cron.
func (x *Index) Step(entries int, hashOf func(v uint32) uint64) bool {
	if x.Rehashing() {
		x.step(entries, 64*entries, hashOf)
	}
	return x.Rehashing()
}

// step drains old buckets in order until it moved entries values or looked
// at scan buckets (no limit when negative), and drops old once drained.
func (x *Index) step(entries, scan int, hashOf func(v uint32) uint64) {
	o := &x.old
	for x.moved < o.size() && entries != 0 && scan != 0 {
		i := x.moved
		x.moved++
		scan--
		if o.tag(uint64(i)) < tagLive {
			continue
		}
		v := o.val(uint64(i))
		o.setTag(uint64(i), tagDeleted) // probes of old may still pass through i
		if x.cur.put(hashOf(v), v) {
			x.used++
		}
		entries--
	}
	if x.moved == o.size() {
		x.old, x.moved = table{}, 0
	}
}

// Each calls fn with every value, starting at a bucket chosen by start (any
// number: a random one gives a random starting point), until fn returns
// false. fn must not insert or remove.
func (x *Index) Each(start uint64, fn func(v uint32) bool) {
	for _, t := range [2]*table{&x.cur, &x.old} {
		n := t.size()
		if n == 0 {
			continue
		}
		first := int(start & t.mask())
		for k := range n {
			i := (first + k) & (n - 1)
			if t.tag(uint64(i)) >= tagLive && !fn(t.val(uint64(i))) {
				return
			}
		}
	}
}
