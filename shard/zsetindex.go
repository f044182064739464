package shard

import "hash/maphash"

// zslIndex is a large sorted set's member → node map (the dict of Redis'
// zset): an open-addressing table with linear probing whose keys are the
// members already held in the nodes, so an entry is 8 bytes and a lookup
// that finds its member reads the table once and then the node, which the
// caller reads next anyway. A Go map[string]uint32 of 100k members cost
// five dependent cache misses a lookup (directory, table, control word,
// slot, key) and 40 bytes an entry.
//
// Invariants:
//   - a slot is 0 (empty) or hash<<32 | x for a live node x (never 0, the
//     header), hash being zslHash of nodes[x].member;
//   - an entry sits at or after (cyclically) its home slot hash&mask, with
//     no empty slot between (deletion shifts entries back instead of leaving
//     tombstones);
//   - used <= len(slots)*3/4, and len(slots) is 0 or a power of two.
type zslIndex struct {
	slots []uint64
	used  int
}

// zslSeed is the process' seed for member hashes: random, so clients cannot
// choose members that collide.
var zslSeed = maphash.MakeSeed()

func zslHash(member string) uint32 {
	h := maphash.String(zslSeed, member)
	return uint32(h ^ h>>32)
}

func newZslIndex(hint int) zslIndex {
	n := 8
	for n*3/4 < hint {
		n *= 2
	}
	return zslIndex{slots: make([]uint64, n)}
}

// find returns member's node, or 0.
func (ix *zslIndex) find(nodes []zslNode, member []byte) uint32 {
	h := zslHash(zsStr(member))
	mask := uint32(len(ix.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := ix.slots[i]
		if e == 0 {
			return 0
		}
		if uint32(e>>32) == h {
			if x := uint32(e); nodes[x].member == zsStr(member) {
				return x
			}
		}
	}
}

// insert adds node x, whose member must be absent.
func (ix *zslIndex) insert(x uint32, member string) {
	if (ix.used+1)*4 > len(ix.slots)*3 {
		ix.grow()
	}
	ix.place(uint64(zslHash(member))<<32 | uint64(x))
	ix.used++
}

func (ix *zslIndex) place(e uint64) {
	mask := uint32(len(ix.slots) - 1)
	i := uint32(e>>32) & mask
	for ix.slots[i] != 0 {
		i = (i + 1) & mask
	}
	ix.slots[i] = e
}

// grow doubles the table; the hashes kept in the entries place them again
// without reading a member.
func (ix *zslIndex) grow() {
	old := ix.slots
	ix.slots = make([]uint64, max(2*len(old), 8))
	for _, e := range old {
		if e != 0 {
			ix.place(e)
		}
	}
}

// remove deletes node x, whose member is member.
func (ix *zslIndex) remove(x uint32, member string) {
	mask := uint32(len(ix.slots) - 1)
	i := zslHash(member) & mask
	for uint32(ix.slots[i]) != x {
		i = (i + 1) & mask
	}
	// Shift back every later entry of the run that may sit at i: one whose
	// home is not in (i, j].
	for j := (i + 1) & mask; ix.slots[j] != 0; j = (j + 1) & mask {
		home := uint32(ix.slots[j]>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = 0
	ix.used--
}

// bytes is the table's memory.
func (ix *zslIndex) bytes() int64 { return int64(cap(ix.slots)) * 8 }

func (ix *zslIndex) clone() zslIndex {
	return zslIndex{slots: append([]uint64(nil), ix.slots...), used: ix.used}
}
