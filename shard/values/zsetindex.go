package values

import "hash/maphash"

// skiplistIndex is a large sorted set's member → node map (the dict of Redis'
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
type skiplistIndex struct {
	slots []uint64
	used  int
}

// zslSeed is the process' seed for member hashes: random, so clients cannot
// choose members that collide.
var zslSeed = maphash.MakeSeed()

func skiplistHash(member string) uint32 {
	h := maphash.String(zslSeed, member)
	return uint32(h ^ h>>32)
}

func newZslIndex(hint int) skiplistIndex {
	n := 8
	for n*3/4 < hint {
		n *= 2
	}
	return skiplistIndex{slots: make([]uint64, n)}
}

// Find returns member's node, or 0.
func (ix *skiplistIndex) Find(nodes []skiplistNode, member []byte) uint32 {
	h := skiplistHash(MemberString(member))
	mask := uint32(len(ix.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := ix.slots[i]
		if e == 0 {
			return 0
		}
		if uint32(e>>32) == h {
			if x := uint32(e); nodes[x].member == MemberString(member) {
				return x
			}
		}
	}
}

// insert adds node x, whose member must be absent.
func (ix *skiplistIndex) insert(x uint32, member string) {
	if (ix.used+1)*4 > len(ix.slots)*3 {
		ix.grow()
	}
	ix.place(uint64(skiplistHash(member))<<32 | uint64(x))
	ix.used++
}

func (ix *skiplistIndex) place(e uint64) {
	mask := uint32(len(ix.slots) - 1)
	i := uint32(e>>32) & mask
	for ix.slots[i] != 0 {
		i = (i + 1) & mask
	}
	ix.slots[i] = e
}

// grow doubles the table; the hashes kept in the entries place them again
// without reading a member.
func (ix *skiplistIndex) grow() {
	old := ix.slots
	ix.slots = make([]uint64, max(2*len(old), 8))
	for _, e := range old {
		if e != 0 {
			ix.place(e)
		}
	}
}

// remove deletes node x, whose member is member.
func (ix *skiplistIndex) remove(x uint32, member string) {
	mask := uint32(len(ix.slots) - 1)
	i := skiplistHash(member) & mask
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
func (ix *skiplistIndex) bytes() int64 { return int64(cap(ix.slots)) * 8 }

func (ix *skiplistIndex) clone() skiplistIndex {
	return skiplistIndex{slots: append([]uint64(nil), ix.slots...), used: ix.used}
}
