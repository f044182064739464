package values

import (
	"hash/maphash"
	"unsafe"
)

// htIndex is an HTable's key → position map: an open-addressing table with
// linear probing whose slots hold the key's string header next to its hash
// and position, so a lookup that finds its key reads one slot and then the
// key's bytes: two dependent cache misses on a table too large for the
// cache. The Go map[string]int32 it replaces read the group's control word,
// then the slot, then the key (SADD of redis-benchmark's 100k-member set:
// map lookups were 31% of svcdb's CPU against 26% for Redis' dict, see
// docs/performance.md, "Command CPU: ZPOPMIN, SADD, LPUSH").
//
// Invariants:
//   - a slot is empty (meta 0, key "") or holds a key of the table with
//     meta = hash<<32 | position+1, hash being htHash of the key;
//   - an entry sits at or after (cyclically) its home slot hash&mask, with
//     no empty slot between (removal shifts later entries back instead of
//     leaving tombstones);
//   - used <= len(slots)*3/4, and len(slots) is 0 or a power of two.
type htIndex struct {
	slots []htSlot
	used  int
}

type htSlot struct {
	key  string
	meta uint64
}

// htSlotSize is the bytes of one slot.
const htSlotSize = int64(unsafe.Sizeof(htSlot{}))

// htSeed is the process' seed for key hashes: random, so clients cannot
// choose keys that collide.
var htSeed = maphash.MakeSeed()

func htHash(k string) uint32 {
	h := maphash.String(htSeed, k)
	return uint32(h ^ h>>32)
}

// htSlotsFor is the table size that holds n entries within the load limit.
func htSlotsFor(n int) int {
	size := 8
	for size*3/4 < n {
		size *= 2
	}
	return size
}

func newHTIndex(hint int) htIndex {
	return htIndex{slots: make([]htSlot, htSlotsFor(hint))}
}

// lookup returns the slot holding k, or the empty slot where k would go
// and false.
func (ix *htIndex) lookup(k string, h uint32) (int, bool) {
	mask := uint32(len(ix.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &ix.slots[i]
		if s.meta == 0 {
			return int(i), false
		}
		if uint32(s.meta>>32) == h && s.key == k {
			return int(i), true
		}
	}
}

// find returns k's position.
func (ix *htIndex) find(k string) (int, bool) {
	if ix.used == 0 {
		return 0, false
	}
	i, ok := ix.lookup(k, htHash(k))
	if !ok {
		return 0, false
	}
	return int(uint32(ix.slots[i].meta)) - 1, true
}

// fits reports whether one more entry stays within the load limit.
func (ix *htIndex) fits() bool { return (ix.used+1)*4 <= len(ix.slots)*3 }

// fill puts k (hash h, at position pos) in slot i, which lookup returned
// empty for k. REQUIRES: fits().
func (ix *htIndex) fill(i int, k string, h uint32, pos int) {
	ix.slots[i] = htSlot{key: k, meta: uint64(h)<<32 | uint64(pos+1)}
	ix.used++
}

// insert adds k, which must be absent, at position pos.
func (ix *htIndex) insert(k string, pos int) {
	if !ix.fits() {
		ix.resize(htSlotsFor(ix.used + 1))
	}
	h := htHash(k)
	i, _ := ix.lookup(k, h)
	ix.fill(i, k, h, pos)
}

// slotOf returns the slot of the entry at position pos, whose key is k.
func (ix *htIndex) slotOf(k string, pos int) int {
	mask := uint32(len(ix.slots) - 1)
	want := uint32(pos + 1)
	i := htHash(k) & mask
	for uint32(ix.slots[i].meta) != want {
		i = (i + 1) & mask
	}
	return int(i)
}

// move records that the entry at position from, whose key is k, is now at
// position to.
func (ix *htIndex) move(k string, from, to int) {
	s := &ix.slots[ix.slotOf(k, from)]
	s.meta = s.meta&^(1<<32-1) | uint64(to+1)
}

// remove deletes the entry at position pos, whose key is k.
func (ix *htIndex) remove(k string, pos int) {
	mask := uint32(len(ix.slots) - 1)
	i := uint32(ix.slotOf(k, pos))
	// Shift back every later entry of the run that may sit at i: one whose
	// home is not in (i, j].
	for j := (i + 1) & mask; ix.slots[j].meta != 0; j = (j + 1) & mask {
		home := uint32(ix.slots[j].meta>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = htSlot{}
	ix.used--
}

// resize rebuilds the table with size slots (a power of two holding used);
// the hashes kept in the entries place them again without hashing a key.
func (ix *htIndex) resize(size int) {
	old := ix.slots
	ix.slots = make([]htSlot, size)
	mask := uint32(size - 1)
	for _, s := range old {
		if s.meta == 0 {
			continue
		}
		i := uint32(s.meta>>32) & mask
		for ix.slots[i].meta != 0 {
			i = (i + 1) & mask
		}
		ix.slots[i] = s
	}
}

// bytes is the table's memory.
func (ix *htIndex) bytes() int64 { return int64(cap(ix.slots)) * htSlotSize }
