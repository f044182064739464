package values

import (
	"fmt"
	"slices"
)

// Verify checks the skiplist's invariants (see the type) from scratch.
func (s *Skiplist) Verify() error {
	if s.Dict.Used != s.Length {
		return fmt.Errorf("dict has %d members, length %d", s.Dict.Used, s.Length)
	}
	if err := s.Dict.Verify(s.Nodes); err != nil {
		return err
	}
	if s.Length == 0 {
		return fmt.Errorf("empty skiplist kept")
	}
	// Level 0 in order, backward links, ranks by span at every level.
	rankOf := map[uint32]uint32{0: 0}
	prev := uint32(0)
	n := 0
	for x := s.First(); x != 0; x = s.Nodes[x].L0.Forward {
		n++
		nd := &s.Nodes[x]
		if !nd.IsLive() {
			return fmt.Errorf("node %d linked but free", x)
		}
		if got := s.Dict.Find(s.Nodes, MemberBytes(nd.Member)); got != x {
			return fmt.Errorf("dict[%q] = %d, node %d", nd.Member, got, x)
		}
		if nd.Backward != prev {
			return fmt.Errorf("node %d backward %d, want %d", x, nd.Backward, prev)
		}
		if pn := &s.Nodes[prev]; prev != 0 && !(pn.Score < nd.Score || pn.Score == nd.Score && pn.Member < nd.Member) {
			return fmt.Errorf("node %d out of order", x)
		}
		if nd.Levels() > s.Level {
			return fmt.Errorf("node %d has %d levels, list %d", x, nd.Levels(), s.Level)
		}
		rankOf[x] = uint32(n)
		prev = x
	}
	if n != s.Length || s.Tail != prev {
		return fmt.Errorf("walked %d nodes (tail %d), length %d (tail %d)", n, prev, s.Length, s.Tail)
	}
	for lv := 0; lv < s.Level; lv++ {
		for x := uint32(0); ; {
			l := s.Lnk(x, lv)
			if l.Forward == 0 {
				break
			}
			if l.Fscore != s.Nodes[l.Forward].Score {
				return fmt.Errorf("level %d: link from %d carries score %v, node %d has %v", lv, x, l.Fscore, l.Forward, s.Nodes[l.Forward].Score)
			}
			if lv >= 2 && s.UpLnk(x, lv).Fup != uint32(s.Nodes[l.Forward].UpOff()) {
				return fmt.Errorf("level %d: link from %d carries up offset %d, node %d has %d", lv, x, s.UpLnk(x, lv).Fup, l.Forward, s.Nodes[l.Forward].UpOff())
			}
			if rankOf[l.Forward]-rankOf[x] != l.Span {
				return fmt.Errorf("level %d: span %d from %d to %d, ranks %d..%d", lv, l.Span, x, l.Forward, rankOf[x], rankOf[l.Forward])
			}
			x = l.Forward
		}
	}
	if s.Level > 1 && s.Lnk(0, s.Level-1).Forward == 0 {
		return fmt.Errorf("level %d is empty", s.Level)
	}
	for x := range s.Nodes[1:] {
		if !s.Nodes[x+1].IsLive() && slices.Index(s.Free, uint32(x+1)) < 0 {
			return fmt.Errorf("free slot %d not on the free list", x+1)
		}
	}
	if got := s.Recount(); got != s.Memory() {
		return fmt.Errorf("memory %d, recount %d", s.Memory(), got)
	}
	return nil
}

// ---- the skiplist alone ------------------------------------------------------------

// TestZSkiplistRanks drives a skiplist directly and checks rank, byRank,
// the range searches and the invariants against a sorted slice.
// Verify checks the index's invariants (see the type) from scratch.
func (ix *SkiplistIndex) Verify(nodes []SkiplistNode) error {
	n := len(ix.Slots)
	if n == 0 || n&(n-1) != 0 || ix.Used*4 > n*3 {
		return fmt.Errorf("index of %d slots holds %d", n, ix.Used)
	}
	used := 0
	for i, e := range ix.Slots {
		if e == 0 {
			continue
		}
		used++
		x := uint32(e)
		if x == 0 || int(x) >= len(nodes) || !nodes[x].IsLive() {
			return fmt.Errorf("index slot %d holds node %d, not a live node", i, x)
		}
		if h := SkiplistHash(nodes[x].Member); uint32(e>>32) != h {
			return fmt.Errorf("index slot %d: hash %x, member %q hashes to %x", i, e>>32, nodes[x].Member, h)
		}
		// No empty slot between the entry's home and the entry.
		for j := int(uint32(e>>32)) & (n - 1); j != i; j = (j + 1) & (n - 1) {
			if ix.Slots[j] == 0 {
				return fmt.Errorf("index slot %d: empty slot %d between it and its home", i, j)
			}
		}
	}
	if used != ix.Used {
		return fmt.Errorf("index has %d entries, counts %d", used, ix.Used)
	}
	return nil
}

// Verify checks an htable's invariants (see the type) from scratch.
func (t *HTable) Verify() error {
	if len(t.Index) != len(t.Keys) {
		return fmt.Errorf("index has %d entries, keys %d", len(t.Index), len(t.Keys))
	}
	if t.Hash != (t.Vals != nil) || t.Hash && len(t.Vals) != len(t.Keys) {
		return fmt.Errorf("hash %v with %d values for %d keys", t.Hash, len(t.Vals), len(t.Keys))
	}
	var mem int64
	for i, k := range t.Keys {
		if j, ok := t.Index[k]; !ok || int(j) != i {
			return fmt.Errorf("key %q at %d, index says %d (%v)", k, i, j, ok)
		}
		mem += int64(len(k))
		if t.Hash {
			mem += int64(cap(t.Vals[i]))
		}
	}
	if mem != t.Mem {
		return fmt.Errorf("mem %d, recount %d", t.Mem, mem)
	}
	if t.Peak < len(t.Keys) {
		return fmt.Errorf("peak %d below %d entries", t.Peak, len(t.Keys))
	}
	return nil
}

// VerifyIntset checks an intset's invariants: a valid width, whole members,
// strictly ascending.
func VerifyIntset(is []byte) error {
	if len(is) < IntsetHeader {
		return fmt.Errorf("intset of %d bytes", len(is))
	}
	w := IntsetWidth(is)
	if w != 2 && w != 4 && w != 8 || (len(is)-IntsetHeader)%w != 0 {
		return fmt.Errorf("intset width %d, %d bytes", w, len(is))
	}
	for i := 1; i < IntsetLen(is); i++ {
		if IntsetGet(is, i-1) >= IntsetGet(is, i) {
			return fmt.Errorf("intset not ascending at %d", i)
		}
	}
	return nil
}

// Recount returns the index's bytes and entries counted from scratch, to
// check mem against; it panics on an empty leaf, which the index never keeps.
func (p *PELIndex) Recount() (mem int64, n int) {
	mem = int64(cap(p.Leaves)) * 8
	for _, lf := range p.Leaves {
		if len(lf.Items) == 0 {
			panic("empty PEL leaf")
		}
		mem += PELLeafOverhead + int64(cap(lf.Items))*PELItemSize
		n += len(lf.Items)
	}
	return mem, n
}
