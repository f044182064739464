package values

import (
	"encoding/binary"

	"github.com/svcdb/svcdb/shard/listpack"
)

// ---- the node limit ----------------------------------------------------------

// sizeSafetyLimit is Redis' SIZE_SAFETY_LIMIT: a node limited by entry count
// still never grows past 8 KiB.
const SizeSafetyLimit = 8192

// NodeFits reports whether a node (or the listpack of a small list) holding
// count entries in size bytes may take one more entry of esize bytes under
// list-max-listpack-size fill, as Redis' _quicklistNodeAllowInsert: a
// negative fill -1..-5 limits the node to 4, 8, 16, 32 or 64 KiB; otherwise
// the node takes at most fill entries and at most 8 KiB.
func NodeFits(size, count, esize int, fill int64) bool {
	n := size + esize
	if fill < 0 && fill >= -5 {
		return n <= 4096<<(-fill-1)
	}
	return n <= SizeSafetyLimit && int64(count) < fill
}

// nodeBytesHint is the buffer a new node starts with: room for a good part of
// what the fill lets it hold, so a node filled by pushes reallocates a few
// times rather than once per push.
func nodeBytesHint(esize int, fill int64) int {
	limit := SizeSafetyLimit
	if fill < 0 && fill >= -5 {
		limit = 4096 << (-fill - 1)
	} else if fill > 0 && int64(esize)*fill < int64(limit) {
		limit = esize * int(fill)
	}
	return max(esize+16, min(limit, 1024))
}

// ---- qnode: a listpack walked in both directions ------------------------------

// qnodeOverhead approximates what a node costs beyond its buffer's bytes: the
// struct, the buffer's allocation header and its pointer in the node slice.
const NodeOverhead = 64

// quicklistOverhead approximates the quicklist struct itself.
const QuicklistOverhead = 64

// QuicklistNode is one quicklist node: a run of elements in one flat buffer, the
// listpack idea with Redis' back-length, so the node is walked in both
// directions and both ends push and pop without moving the other entries.
//
// Entries live in buf[head:tail], each as
//
//	uvarint(len(value)) | value | rvarint(len(value))
//
// where rvarint is the same number written to be read from its last byte
// backwards (low 7 bits last; a set high bit means more bytes to the left).
// Free space may sit at both ends of buf; a push that finds no room at its
// end re-centres the entries in place when the buffer has enough slack, or
// moves them to a larger buffer.
//
// Invariants: count is the number of entries in buf[head:tail]; a node in a
// quicklist is never empty.
type QuicklistNode struct {
	Buf        []byte
	Head, Tail int
	Count      int
}

// NodeEntrySize is the bytes a node entry holding a value of n bytes takes.
func NodeEntrySize(n int) int { return 2*listpack.UvarintLen(uint64(n)) + n }

// PutNodeEntry writes v as an entry at b[off:] and returns the offset after it.
func PutNodeEntry(b []byte, off int, v []byte) int {
	n := len(v)
	if n < 0x80 {
		b[off] = byte(n)
		copy(b[off+1:], v)
		b[off+1+n] = byte(n)
		return off + n + 2
	}
	w := binary.PutUvarint(b[off:], uint64(n))
	copy(b[off+w:], v)
	end := off + w + n
	x := uint64(n)
	for j := range w {
		c := byte(x & 0x7f)
		x >>= 7
		if j < w-1 {
			c |= 0x80
		}
		b[end+w-1-j] = c
	}
	return end + w
}

// EntryAt returns the entry starting at off and the offset after it.
func (n *QuicklistNode) EntryAt(off int) ([]byte, int) {
	b := n.Buf
	if l := int(b[off]); l < 0x80 {
		s, e := off+1, off+1+l
		return b[s:e:e], e + 1
	}
	l, w := binary.Uvarint(b[off:])
	s := off + w
	e := s + int(l)
	return b[s:e:e], e + w
}

// EntryBefore returns the entry ending at end and the offset where it starts.
func (n *QuicklistNode) EntryBefore(end int) ([]byte, int) {
	b := n.Buf
	if l := int(b[end-1]); l < 0x80 {
		e := end - 1
		s := e - l
		return b[s:e:e], s - 1
	}
	var x, shift uint
	w := 0
	for p := end - 1; ; p-- {
		c := b[p]
		x |= uint(c&0x7f) << shift
		shift += 7
		w++
		if c&0x80 == 0 {
			break
		}
	}
	e := end - w
	s := e - int(x)
	return b[s:e:e], s - w
}

// skipFwd returns the offset k entries after off.
func (n *QuicklistNode) skipFwd(off, k int) int {
	for ; k > 0; k-- {
		_, off = n.EntryAt(off)
	}
	return off
}

// skipBack returns the offset k entries before off.
func (n *QuicklistNode) skipBack(off, k int) int {
	for ; k > 0; k-- {
		_, off = n.EntryBefore(off)
	}
	return off
}

// OffsetOf returns the offset of entry i (0 <= i < count), walking from the
// nearer end.
func (n *QuicklistNode) OffsetOf(i int) int {
	if i <= n.Count/2 {
		return n.skipFwd(n.Head, i)
	}
	return n.skipBack(n.Tail, n.Count-i)
}

// OpenGap makes s free bytes at off (an entry boundary in [head, tail]) and
// returns where the gap starts, which moves if the entries did.
func (n *QuicklistNode) OpenGap(off, s int) int {
	front, back := n.Head, len(n.Buf)-n.Tail
	switch {
	case off == n.Tail && back >= s:
		n.Tail += s
		return off
	case off == n.Head && front >= s:
		n.Head -= s
		return off - s
	case off != n.Head && off != n.Tail && back >= s && (n.Tail-off <= off-n.Head || front < s):
		copy(n.Buf[off+s:], n.Buf[off:n.Tail])
		n.Tail += s
		return off
	case off != n.Head && off != n.Tail && front >= s:
		copy(n.Buf[n.Head-s:], n.Buf[n.Head:off])
		n.Head -= s
		return off - s
	}
	used := n.Tail - n.Head
	buf := n.Buf
	var lead int // slack left before the entries
	if free := len(buf) - used; free >= s+used/4+16 {
		// Enough slack in place: split what is left of it between the ends.
		lead = (free - s) / 2
	} else {
		// Grow; a push at one end gets all the slack at that end.
		extra := (used+s)/2 + 16
		buf = make([]byte, used+s+extra)
		switch off {
		case n.Head:
			lead = extra
		case n.Tail:
			lead = 0
		default:
			lead = extra / 2
		}
	}
	before := off - n.Head
	d1 := lead - n.Head // how far the part before off moves
	gap := lead + before
	if d1 >= 0 { // both parts move right (or stay): the back part first
		copy(buf[gap+s:], n.Buf[off:n.Tail])
		copy(buf[lead:], n.Buf[n.Head:off])
	} else {
		copy(buf[lead:], n.Buf[n.Head:off])
		copy(buf[gap+s:], n.Buf[off:n.Tail])
	}
	n.Buf, n.Head, n.Tail = buf, lead, lead+used+s
	return gap
}

// Insert adds v as a new entry at off.
func (n *QuicklistNode) Insert(off int, v []byte) {
	g := n.OpenGap(off, NodeEntrySize(len(v)))
	PutNodeEntry(n.Buf, g, v)
	n.Count++
}

// closeGap removes the s bytes at off, moving the shorter side, and returns
// how far the bytes before off moved (0 or s).
func (n *QuicklistNode) closeGap(off, s int) int {
	if off-n.Head <= n.Tail-off-s {
		copy(n.Buf[n.Head+s:], n.Buf[n.Head:off])
		n.Head += s
		return s
	}
	copy(n.Buf[off:], n.Buf[off+s:n.Tail])
	n.Tail -= s
	return 0
}

// Remove deletes the entry at off and returns where the entry after it now
// starts.
func (n *QuicklistNode) Remove(off int) int {
	_, next := n.EntryAt(off)
	off += n.closeGap(off, next-off)
	n.Count--
	return off
}

// Replace sets the entry at off to v.
func (n *QuicklistNode) Replace(off int, v []byte) {
	_, next := n.EntryAt(off)
	old, size := next-off, NodeEntrySize(len(v))
	switch {
	case size > old:
		off = n.OpenGap(next, size-old) - old
	case size < old:
		off += n.closeGap(off+size, old-size)
	}
	PutNodeEntry(n.Buf, off, v)
}

// ---- quicklist ----------------------------------------------------------------

// Quicklist is a list too long for one listpack: a deque of qnodes, each
// filled up to list-max-listpack-size, so both ends push and pop in O(1) and
// an index costs a walk over the node counts plus one node.
//
// The last node to empty is kept as spare and reused by the next new node,
// so a list whose length hovers at a node boundary (LPUSH, LPOP, LPUSH ...)
// does not allocate a node per push.
//
// Invariants: nodes[lo:hi] are the nodes in order, none empty, and nothing
// else in nodes is set; count is the sum of their counts; mem is
// quicklistOverhead + 8*cap(nodes) + Σ(qnodeOverhead + cap(node.buf)) over
// the nodes and the spare, kept current by every method that changes a
// node's buffer or the node set.
type Quicklist struct {
	Nodes  []*QuicklistNode
	Lo, Hi int
	Count  int
	Mem    int64
	Spare  *QuicklistNode // an emptied node kept for reuse, or nil
}

func NewQuicklist() *Quicklist {
	return &Quicklist{Mem: QuicklistOverhead}
}

func (q *Quicklist) Memory() int64 { return q.Mem }

func (q *Quicklist) Clone() Collection {
	c := &Quicklist{Count: q.Count, Mem: QuicklistOverhead}
	c.Nodes = make([]*QuicklistNode, q.Hi-q.Lo)
	c.Hi = len(c.Nodes)
	c.Mem += 8 * int64(cap(c.Nodes))
	for i, n := range q.Nodes[q.Lo:q.Hi] {
		used := n.Tail - n.Head
		nn := &QuicklistNode{Buf: make([]byte, used), Tail: used, Count: n.Count}
		copy(nn.Buf, n.Buf[n.Head:n.Tail])
		c.Nodes[i] = nn
		c.Mem += NodeOverhead + int64(cap(nn.Buf))
	}
	return c
}

// NumNodes is the number of nodes; node(i) is node i (0-based).
func (q *Quicklist) NumNodes() int             { return q.Hi - q.Lo }
func (q *Quicklist) Node(i int) *QuicklistNode { return q.Nodes[q.Lo+i] }

// relayout centres the live nodes in the node slice, growing it when less
// than half of it would be slack, so both ends have room for a new node.
func (q *Quicklist) relayout() {
	live := q.Hi - q.Lo
	if live*2+2 > len(q.Nodes) {
		nodes := make([]*QuicklistNode, live*2+4)
		q.Mem += 8 * int64(cap(nodes)-cap(q.Nodes))
		lo := (len(nodes) - live) / 2
		copy(nodes[lo:], q.Nodes[q.Lo:q.Hi])
		q.Nodes, q.Lo, q.Hi = nodes, lo, lo+live
		return
	}
	lo := (len(q.Nodes) - live) / 2
	copy(q.Nodes[lo:], q.Nodes[q.Lo:q.Hi])
	clear(q.Nodes[:lo])
	clear(q.Nodes[lo+live:])
	q.Lo, q.Hi = lo, lo+live
}

// InsertNode puts n before node i (i == numNodes appends).
func (q *Quicklist) InsertNode(i int, n *QuicklistNode) {
	q.Mem += NodeOverhead + int64(cap(n.Buf))
	q.Count += n.Count
	live := q.Hi - q.Lo
	switch {
	case i == 0:
		if q.Lo == 0 {
			q.relayout()
		}
		q.Lo--
		q.Nodes[q.Lo] = n
		return
	case i == live:
		if q.Hi == len(q.Nodes) {
			q.relayout()
		}
		q.Nodes[q.Hi] = n
		q.Hi++
		return
	}
	if q.Hi == len(q.Nodes) && q.Lo == 0 {
		q.relayout()
	}
	p := q.Lo + i
	if q.Hi < len(q.Nodes) && (live-i <= i || q.Lo == 0) {
		copy(q.Nodes[p+1:], q.Nodes[p:q.Hi])
		q.Hi++
	} else {
		copy(q.Nodes[q.Lo-1:], q.Nodes[q.Lo:p])
		q.Lo--
		p--
	}
	q.Nodes[p] = n
}

// spareMax bounds the buffer a spare node may keep.
const spareMax = 64 << 10

// removeNode drops node i, which must already hold no entries counted in
// q.count (its entries were removed through the node and counted out).
// Bytes returned by pop stay valid: a node kept as spare is only reused by a
// later push.
func (q *Quicklist) removeNode(i int) {
	n := q.Nodes[q.Lo+i]
	if q.Spare == nil && cap(n.Buf) <= spareMax {
		q.Spare = n
	} else {
		q.Mem -= NodeOverhead + int64(cap(n.Buf))
	}
	live := q.Hi - q.Lo
	p := q.Lo + i
	if i < live-1-i {
		copy(q.Nodes[q.Lo+1:], q.Nodes[q.Lo:p])
		q.Nodes[q.Lo] = nil
		q.Lo++
	} else {
		copy(q.Nodes[p:], q.Nodes[p+1:q.Hi])
		q.Hi--
		q.Nodes[q.Hi] = nil
	}
}

// Shrink moves n's entries to a smaller buffer when it uses under a quarter
// of the one it has (after LREM took most of its entries), so a list thinned
// out by removals gives the memory back.
func (q *Quicklist) Shrink(n *QuicklistNode) {
	used := n.Tail - n.Head
	if len(n.Buf) <= 4*used+256 {
		return
	}
	slack := used/4 + 16
	buf := make([]byte, used+slack)
	copy(buf[slack/2:], n.Buf[n.Head:n.Tail])
	q.Mem += int64(cap(buf) - cap(n.Buf))
	n.Buf, n.Head, n.Tail = buf, slack/2, slack/2+used
}

// DropIfEmpty removes node i when it holds nothing.
func (q *Quicklist) DropIfEmpty(i int) bool {
	if q.Node(i).Count == 0 {
		q.removeNode(i)
		return true
	}
	return false
}

// newNode makes a node holding v, placed at its buffer's back (atBack: for
// front pushes, which fill the node towards its front) or front. It reuses
// the spare node when it has room. The caller inserts it with insertNode.
func (q *Quicklist) newNode(v []byte, fill int64, atBack bool) *QuicklistNode {
	es := NodeEntrySize(len(v))
	var n *QuicklistNode
	if sp := q.Spare; sp != nil && len(sp.Buf) >= es {
		q.Spare = nil
		q.Mem -= NodeOverhead + int64(cap(sp.Buf)) // insertNode counts it again
		n = sp
		*n = QuicklistNode{Buf: n.Buf}
	} else {
		n = &QuicklistNode{Buf: make([]byte, nodeBytesHint(es, fill))}
	}
	n.Count = 1
	if atBack {
		n.Head = len(n.Buf) - es
	}
	n.Tail = PutNodeEntry(n.Buf, n.Head, v)
	return n
}

// Push adds v at the front or back.
func (q *Quicklist) Push(v []byte, front bool, fill int64) {
	es := NodeEntrySize(len(v))
	if front {
		if q.Hi > q.Lo {
			n := q.Nodes[q.Lo]
			if NodeFits(n.Tail-n.Head, n.Count, es, fill) {
				c := cap(n.Buf)
				n.Insert(n.Head, v)
				q.Mem += int64(cap(n.Buf) - c)
				q.Count++
				return
			}
		}
		q.InsertNode(0, q.newNode(v, fill, true))
		return
	}
	if q.Hi > q.Lo {
		n := q.Nodes[q.Hi-1]
		if NodeFits(n.Tail-n.Head, n.Count, es, fill) {
			c := cap(n.Buf)
			n.Insert(n.Tail, v)
			q.Mem += int64(cap(n.Buf) - c)
			q.Count++
			return
		}
	}
	q.InsertNode(q.NumNodes(), q.newNode(v, fill, false))
}

// End returns the first (front) or last element. REQUIRES: count > 0.
func (q *Quicklist) End(front bool) []byte {
	if front {
		n := q.Nodes[q.Lo]
		v, _ := n.EntryAt(n.Head)
		return v
	}
	n := q.Nodes[q.Hi-1]
	v, _ := n.EntryBefore(n.Tail)
	return v
}

// Pop removes the first (front) or last element and returns it. The bytes
// stay valid until the list is next changed.
func (q *Quicklist) Pop(front bool) []byte {
	var v []byte
	q.Count--
	if front {
		n := q.Nodes[q.Lo]
		v, n.Head = n.EntryAt(n.Head)
		if n.Count--; n.Count == 0 {
			q.removeNode(0)
		}
		return v
	}
	n := q.Nodes[q.Hi-1]
	v, n.Tail = n.EntryBefore(n.Tail)
	if n.Count--; n.Count == 0 {
		q.removeNode(q.NumNodes() - 1)
	}
	return v
}

// Locate returns the node and offset of element i (0 <= i < count), walking
// the node counts from the nearer end.
func (q *Quicklist) Locate(i int) (ni, off int) {
	if i < q.Count/2 {
		for ni = 0; ; ni++ {
			n := q.Node(ni)
			if i < n.Count {
				return ni, n.OffsetOf(i)
			}
			i -= n.Count
		}
	}
	j := q.Count - 1 - i // position from the back
	for ni = q.NumNodes() - 1; ; ni-- {
		n := q.Node(ni)
		if j < n.Count {
			return ni, n.OffsetOf(n.Count - 1 - j)
		}
		j -= n.Count
	}
}

// DelFront removes the first k elements (k <= count).
func (q *Quicklist) DelFront(k int) {
	q.Count -= k
	for k > 0 {
		n := q.Nodes[q.Lo]
		if n.Count <= k {
			k -= n.Count
			n.Count = 0
			q.removeNode(0)
			continue
		}
		n.Head = n.skipFwd(n.Head, k)
		n.Count -= k
		return
	}
}

// DelBack removes the last k elements (k <= count).
func (q *Quicklist) DelBack(k int) {
	q.Count -= k
	for k > 0 {
		n := q.Nodes[q.Hi-1]
		if n.Count <= k {
			k -= n.Count
			n.Count = 0
			q.removeNode(q.NumNodes() - 1)
			continue
		}
		n.Tail = n.skipBack(n.Tail, k)
		n.Count -= k
		return
	}
}

// InsertAt adds v at offset off of node ni (off may be the node's tail),
// splitting the node when it is full, as Redis' _quicklistInsert.
func (q *Quicklist) InsertAt(ni, off int, v []byte, fill int64) {
	n := q.Node(ni)
	es := NodeEntrySize(len(v))
	q.Count++
	if NodeFits(n.Tail-n.Head, n.Count, es, fill) {
		c := cap(n.Buf)
		n.Insert(off, v)
		q.Mem += int64(cap(n.Buf) - c)
		return
	}
	switch {
	case off == n.Head && ni > 0 && NodeFits(q.Node(ni-1).Tail-q.Node(ni-1).Head, q.Node(ni-1).Count, es, fill):
		p := q.Node(ni - 1)
		c := cap(p.Buf)
		p.Insert(p.Tail, v)
		q.Mem += int64(cap(p.Buf) - c)
	case off == n.Tail && ni < q.NumNodes()-1 && NodeFits(q.Node(ni+1).Tail-q.Node(ni+1).Head, q.Node(ni+1).Count, es, fill):
		x := q.Node(ni + 1)
		c := cap(x.Buf)
		x.Insert(x.Head, v)
		q.Mem += int64(cap(x.Buf) - c)
	case off == n.Head:
		q.Count--
		q.InsertNode(ni, q.newNode(v, fill, true))
	case off == n.Tail:
		q.Count--
		q.InsertNode(ni+1, q.newNode(v, fill, false))
	default:
		// Split: the entries from off on move to a new node after n, and v
		// goes at the end of n (or of a node of its own when n is still full).
		right := &QuicklistNode{Buf: make([]byte, n.Tail-off+es+16)}
		right.Tail = copy(right.Buf, n.Buf[off:n.Tail])
		for p := 0; p < right.Tail; right.Count++ {
			_, p = right.EntryAt(p)
		}
		n.Tail = off
		n.Count -= right.Count
		q.Count -= right.Count + 1
		q.InsertNode(ni+1, right)
		q.InsertAt(ni, n.Tail, v, fill)
	}
}

// listpackMaxEntries caps the entries a list keeps in its single listpack,
// below the node limit: package listpack is walked only forwards, so RPOP
// and LINDEX -1 scan it, and past this many entries the quicklist's O(1)
// ends win. The switch is not observable (Redis 7.0 reports every list as a
// quicklist).
const ListpackMaxEntries = 32

// ListpackFits reports whether list listpack lp may take one more entry of esize
// bytes.
func ListpackFits(lp []byte, esize int, fill int64) bool {
	n := listpack.Len(lp)
	return n == 0 || n < ListpackMaxEntries && NodeFits(len(lp)-listpack.First, n, esize, fill)
}

// listPush adds v at the front or back of o, converting o to a quicklist
// lpLastOffset returns the offset of the last entry of a non-empty listpack,
// stepping over one-byte lengths (values under 128 bytes) inline.
func ListpackLastOffset(lp []byte) int {
	off, last := listpack.First, listpack.First
	for off < len(lp) {
		last = off
		if l := lp[off]; l < 0x80 {
			off += 1 + int(l)
			continue
		}
		_, off = listpack.Next(lp, off)
	}
	return last
}

// ListpackSkip returns the offset k entries after off, stepping over one-byte
// lengths inline.
func ListpackSkip(lp []byte, off, k int) int {
	for ; k > 0; k-- {
		if l := lp[off]; l < 0x80 {
			off += 1 + int(l)
			continue
		}
		_, off = listpack.Next(lp, off)
	}
	return off
}

// ListpackSetLen writes a listpack's entry count (its first 4 bytes, little endian,
// as package listpack documents its layout), after an in-place compaction.
func ListpackSetLen(lp []byte, n int) { binary.LittleEndian.PutUint32(lp, uint32(n)) }

// ListIter walks a list's elements from a start index towards the back
// (forward) or the front. The caller bounds the walk by the list's length.
type ListIter struct {
	Lp   []byte  // encListpack
	Offs []int32 // encListpack walked backwards: entry offsets, used from the end
	Q    *Quicklist
	Node *QuicklistNode
	Ni   int // quicklist: node index
	Off  int // forward: the next entry's offset; backward (quicklist): the end of the next entry
	Back bool
}

// Next returns the next element. REQUIRES: one remains.
func (it *ListIter) Next() []byte {
	var v []byte
	if it.Q != nil {
		n := it.Node
		if !it.Back {
			if it.Off == n.Tail {
				it.Ni++
				n = it.Q.Node(it.Ni)
				it.Node, it.Off = n, n.Head
			}
			v, it.Off = n.EntryAt(it.Off)
			return v
		}
		if it.Off == n.Head {
			it.Ni--
			n = it.Q.Node(it.Ni)
			it.Node, it.Off = n, n.Tail
		}
		v, it.Off = n.EntryBefore(it.Off)
		return v
	}
	if !it.Back {
		v, it.Off = listpack.Next(it.Lp, it.Off)
		return v
	}
	k := len(it.Offs) - 1
	v, _ = listpack.Next(it.Lp, int(it.Offs[k]))
	it.Offs = it.Offs[:k]
	return v
}
