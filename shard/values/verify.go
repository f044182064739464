package values

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/lzf"
)

// Verify checks the skiplist's invariants (see the type) from scratch.
func (s *Skiplist) Verify() error {
	if s.dict.used != s.length {
		return fmt.Errorf("dict has %d members, length %d", s.dict.used, s.length)
	}
	if err := s.dict.Verify(s.nodes); err != nil {
		return err
	}
	if s.length == 0 {
		return fmt.Errorf("empty skiplist kept")
	}
	// Level 0 in order, backward links, ranks by span at every level.
	rankOf := map[uint32]uint32{0: 0}
	prev := uint32(0)
	n := 0
	for x := s.First(); x != 0; x = s.nodes[x].l0.forward {
		n++
		nd := &s.nodes[x]
		if !nd.isLive() {
			return fmt.Errorf("node %d linked but free", x)
		}
		if got := s.dict.Find(s.nodes, MemberBytes(nd.member)); got != x {
			return fmt.Errorf("dict[%q] = %d, node %d", nd.member, got, x)
		}
		if nd.backward != prev {
			return fmt.Errorf("node %d backward %d, want %d", x, nd.backward, prev)
		}
		if pn := &s.nodes[prev]; prev != 0 && !(pn.score < nd.score || pn.score == nd.score && pn.member < nd.member) {
			return fmt.Errorf("node %d out of order", x)
		}
		if nd.levels() > s.level {
			return fmt.Errorf("node %d has %d levels, list %d", x, nd.levels(), s.level)
		}
		rankOf[x] = uint32(n)
		prev = x
	}
	if n != s.length || s.tail != prev {
		return fmt.Errorf("walked %d nodes (tail %d), length %d (tail %d)", n, prev, s.length, s.tail)
	}
	for lv := 0; lv < s.level; lv++ {
		for x := uint32(0); ; {
			l := s.lnk(x, lv)
			if l.forward == 0 {
				break
			}
			if l.fscore != s.nodes[l.forward].score {
				return fmt.Errorf("level %d: link from %d carries score %v, node %d has %v", lv, x, l.fscore, l.forward, s.nodes[l.forward].score)
			}
			if lv >= 2 && s.upLnk(x, lv).fup != uint32(s.nodes[l.forward].upOff()) {
				return fmt.Errorf("level %d: link from %d carries up offset %d, node %d has %d", lv, x, s.upLnk(x, lv).fup, l.forward, s.nodes[l.forward].upOff())
			}
			if rankOf[l.forward]-rankOf[x] != l.span {
				return fmt.Errorf("level %d: span %d from %d to %d, ranks %d..%d", lv, l.span, x, l.forward, rankOf[x], rankOf[l.forward])
			}
			x = l.forward
		}
	}
	if s.level > 1 && s.lnk(0, s.level-1).forward == 0 {
		return fmt.Errorf("level %d is empty", s.level)
	}
	for x := range s.nodes[1:] {
		if !s.nodes[x+1].isLive() && slices.Index(s.free, uint32(x+1)) < 0 {
			return fmt.Errorf("free slot %d not on the free list", x+1)
		}
	}
	if got := s.recount(); got != s.Memory() {
		return fmt.Errorf("memory %d, recount %d", s.Memory(), got)
	}
	return nil
}

// ---- the skiplist alone ------------------------------------------------------------

// TestZSkiplistRanks drives a skiplist directly and checks rank, byRank,
// the range searches and the invariants against a sorted slice.
// Verify checks the index's invariants (see the type) from scratch.
func (ix *skiplistIndex) Verify(nodes []skiplistNode) error {
	n := len(ix.slots)
	if n == 0 || n&(n-1) != 0 || ix.used*4 > n*3 {
		return fmt.Errorf("index of %d slots holds %d", n, ix.used)
	}
	used := 0
	for i, e := range ix.slots {
		if e == 0 {
			continue
		}
		used++
		x := uint32(e)
		if x == 0 || int(x) >= len(nodes) || !nodes[x].isLive() {
			return fmt.Errorf("index slot %d holds node %d, not a live node", i, x)
		}
		if h := skiplistHash(nodes[x].member); uint32(e>>32) != h {
			return fmt.Errorf("index slot %d: hash %x, member %q hashes to %x", i, e>>32, nodes[x].member, h)
		}
		// No empty slot between the entry's home and the entry.
		for j := int(uint32(e>>32)) & (n - 1); j != i; j = (j + 1) & (n - 1) {
			if ix.slots[j] == 0 {
				return fmt.Errorf("index slot %d: empty slot %d between it and its home", i, j)
			}
		}
	}
	if used != ix.used {
		return fmt.Errorf("index has %d entries, counts %d", used, ix.used)
	}
	return nil
}

// Verify checks an htable's invariants (see the type) from scratch.
func (t *HTable) Verify() error {
	if err := t.index.verify(t.keys); err != nil {
		return err
	}
	if t.hash != (t.vals != nil) || t.hash && len(t.vals) != len(t.keys) {
		return fmt.Errorf("hash %v with %d values for %d keys", t.hash, len(t.vals), len(t.keys))
	}
	var mem int64
	for i, k := range t.keys {
		if j, ok := t.index.find(k); !ok || j != i {
			return fmt.Errorf("key %q at %d, index says %d (%v)", k, i, j, ok)
		}
		mem += int64(len(k))
		if t.hash {
			mem += int64(cap(t.vals[i]))
		}
	}
	if mem != t.mem {
		return fmt.Errorf("mem %d, recount %d", t.mem, mem)
	}
	if t.peak < len(t.keys) {
		return fmt.Errorf("peak %d below %d entries", t.peak, len(t.keys))
	}
	return nil
}

// verify checks the index's invariants (see the type) from scratch against
// the table's keys.
func (ix *htIndex) verify(keys []string) error {
	n := len(ix.slots)
	if n == 0 || n&(n-1) != 0 || ix.used*4 > n*3 {
		return fmt.Errorf("index of %d slots holds %d", n, ix.used)
	}
	if ix.used != len(keys) {
		return fmt.Errorf("index has %d entries, keys %d", ix.used, len(keys))
	}
	used := 0
	for i, s := range ix.slots {
		if s.meta == 0 {
			if s.key != "" {
				return fmt.Errorf("index slot %d is empty but holds %q", i, s.key)
			}
			continue
		}
		used++
		pos := int(uint32(s.meta)) - 1
		if pos < 0 || pos >= len(keys) || keys[pos] != s.key {
			return fmt.Errorf("index slot %d: %q at position %d, not the table's key there", i, s.key, pos)
		}
		if h := htHash(s.key); uint32(s.meta>>32) != h {
			return fmt.Errorf("index slot %d: hash %x, key %q hashes to %x", i, s.meta>>32, s.key, h)
		}
		// No empty slot between the entry's home and the entry.
		for j := int(uint32(s.meta>>32)) & (n - 1); j != i; j = (j + 1) & (n - 1) {
			if ix.slots[j].meta == 0 {
				return fmt.Errorf("index slot %d: empty slot %d between it and its home", i, j)
			}
		}
	}
	if used != ix.used {
		return fmt.Errorf("index has %d entries, counts %d", used, ix.used)
	}
	return nil
}

// VerifyIntset checks an intset's invariants: a valid width, whole members,
// strictly ascending.
func VerifyIntset(is []byte) error {
	if len(is) < IntsetHeader {
		return fmt.Errorf("intset of %d bytes", len(is))
	}
	w := intsetWidth(is)
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

// VerifyListpack checks a listpack's framing: every entry's length inside
// the buffer, the last ending exactly at its end, and the count in the
// header equal to the entries found. With distinct it also checks that no
// entry repeats (a set's members).
func VerifyListpack(lp []byte, distinct bool) error {
	if len(lp) < listpack.First {
		return fmt.Errorf("listpack of %d bytes", len(lp))
	}
	seen := map[string]bool{}
	n := 0
	for off := listpack.First; off < len(lp); n++ {
		size, w := binary.Uvarint(lp[off:])
		if w <= 0 || uint64(len(lp)-off-w) < size {
			return fmt.Errorf("listpack entry %d at %d: length %d overruns %d bytes", n, off, size, len(lp))
		}
		e := string(lp[off+w : off+w+int(size)])
		if distinct && seen[e] {
			return fmt.Errorf("listpack entry %d (%q) repeats", n, e)
		}
		seen[e] = true
		off += w + int(size)
	}
	if got := listpack.Len(lp); got != n {
		return fmt.Errorf("listpack header counts %d entries, found %d", got, n)
	}
	return nil
}

// Recount returns the index's bytes and entries counted from scratch, to
// check mem against; it panics on an empty leaf, which the index never keeps.
func (p *PELIndex) Recount() (mem int64, n int) {
	mem = int64(cap(p.leaves)) * 8
	for _, lf := range p.leaves {
		if len(lf.items) == 0 {
			panic("empty PEL leaf")
		}
		mem += pelLeafOverhead + int64(cap(lf.items))*pelItemSize
		n += len(lf.items)
	}
	return mem, n
}

// Verify checks the quicklist's invariants (see the type) and that its
// memory equals a recount from scratch, and returns its elements read
// forwards (which it checked against a backward read).
func (q *Quicklist) Verify() ([]string, error) {
	mem := int64(quicklistOverhead + 8*cap(q.nodes))
	count := 0
	var fwd, back []string
	for i, n := range q.nodes {
		if i < q.lo || i >= q.hi {
			if n != nil {
				return nil, fmt.Errorf("node slot %d outside [%d,%d) is set", i, q.lo, q.hi)
			}
			continue
		}
		if n.count == 0 {
			return nil, fmt.Errorf("empty node %d", i)
		}
		mem += qnodeOverhead + int64(cap(n.buf)+cap(n.z))
		if n.z != nil {
			if k := i - q.lo; k < q.depth || q.hi-1-i < q.depth {
				return nil, fmt.Errorf("node %d is compressed within %d nodes of an end", k, q.depth)
			}
			// Read a decompressed copy; the node stays as it is.
			raw := make([]byte, n.tail)
			if err := lzf.Decompress(n.z, raw); err != nil {
				return nil, fmt.Errorf("node %d does not decompress: %v", i-q.lo, err)
			}
			n = &qnode{buf: raw, tail: len(raw), count: n.count}
		}
		c := 0
		for off := n.head; off < n.tail; c++ {
			var v []byte
			v, off = n.entryAt(off)
			if off > n.tail {
				return nil, fmt.Errorf("node %d: entry runs past the tail", i)
			}
			fwd = append(fwd, string(v))
		}
		if c != n.count {
			return nil, fmt.Errorf("node %d holds %d entries; count says %d", i, c, n.count)
		}
		var nb []string
		for off := n.tail; off > n.head; {
			var v []byte
			v, off = n.entryBefore(off)
			nb = append(nb, string(v))
		}
		slices.Reverse(nb)
		back = append(back, nb...)
		count += c
	}
	if q.spare != nil {
		mem += qnodeOverhead + int64(cap(q.spare.buf))
	}
	if count != q.count {
		return nil, fmt.Errorf("nodes hold %d entries; count says %d", count, q.count)
	}
	if mem != q.mem {
		return nil, fmt.Errorf("memory %d; a recount gives %d", q.mem, mem)
	}
	if !slices.Equal(fwd, back) {
		return nil, fmt.Errorf("forward read %q differs from backward read %q", fwd, back)
	}
	return fwd, nil
}
