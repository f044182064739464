package values

import (
	"encoding/binary"
	"sync"

	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/lzf"
)

// ---- the node limit ----------------------------------------------------------

// sizeSafetyLimit is Redis' SIZE_SAFETY_LIMIT: a node limited by entry count
// still never grows past 8 KiB.
const sizeSafetyLimit = 8192

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
	return n <= sizeSafetyLimit && int64(count) < fill
}

// nodeBytesHint is the buffer a new node starts with: room for a good part of
// what the fill lets it hold, so a node filled by pushes reallocates a few
// times rather than once per push.
func nodeBytesHint(esize int, fill int64) int {
	limit := sizeSafetyLimit
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
const qnodeOverhead = 64

// quicklistOverhead approximates the quicklist struct itself.
const quicklistOverhead = 64

// qnode is one quicklist node: a run of elements in one flat buffer, the
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
// A node may be compressed (list-compress-depth): z then holds the LZF
// stream of what buf[head:tail] held, buf is nil, head is 0 and tail the
// uncompressed size, so size checks (NodeFits) need not decompress it.
//
// Invariants: count is the number of entries in buf[head:tail] (or in z
// decompressed); a node in a quicklist is never empty.
type qnode struct {
	buf        []byte
	head, tail int
	count      int
	z          []byte // the node's entries LZF-compressed, or nil
}

// NodeEntrySize is the bytes a node entry holding a value of n bytes takes.
func NodeEntrySize(n int) int { return 2*listpack.UvarintLen(uint64(n)) + n }

// putEntry writes v as an entry at b[off:] and returns the offset after it.
func putEntry(b []byte, off int, v []byte) int {
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

// entryAt returns the entry starting at off and the offset after it.
func (n *qnode) entryAt(off int) ([]byte, int) {
	b := n.buf
	if l := int(b[off]); l < 0x80 {
		s, e := off+1, off+1+l
		return b[s:e:e], e + 1
	}
	l, w := binary.Uvarint(b[off:])
	s := off + w
	e := s + int(l)
	return b[s:e:e], e + w
}

// entryBefore returns the entry ending at end and the offset where it starts.
func (n *qnode) entryBefore(end int) ([]byte, int) {
	b := n.buf
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
func (n *qnode) skipFwd(off, k int) int {
	for ; k > 0; k-- {
		_, off = n.entryAt(off)
	}
	return off
}

// skipBack returns the offset k entries before off.
func (n *qnode) skipBack(off, k int) int {
	for ; k > 0; k-- {
		_, off = n.entryBefore(off)
	}
	return off
}

// offsetOf returns the offset of entry i (0 <= i < count), walking from the
// nearer end.
func (n *qnode) offsetOf(i int) int {
	if i <= n.count/2 {
		return n.skipFwd(n.head, i)
	}
	return n.skipBack(n.tail, n.count-i)
}

// openGap makes s free bytes at off (an entry boundary in [head, tail]) and
// returns where the gap starts, which moves if the entries did.
func (n *qnode) openGap(off, s int) int {
	front, back := n.head, len(n.buf)-n.tail
	switch {
	case off == n.tail && back >= s:
		n.tail += s
		return off
	case off == n.head && front >= s:
		n.head -= s
		return off - s
	case off != n.head && off != n.tail && back >= s && (n.tail-off <= off-n.head || front < s):
		copy(n.buf[off+s:], n.buf[off:n.tail])
		n.tail += s
		return off
	case off != n.head && off != n.tail && front >= s:
		copy(n.buf[n.head-s:], n.buf[n.head:off])
		n.head -= s
		return off - s
	}
	used := n.tail - n.head
	buf := n.buf
	var lead int // slack left before the entries
	if free := len(buf) - used; free >= s+used/4+16 {
		// Enough slack in place: split what is left of it between the ends.
		lead = (free - s) / 2
	} else {
		// Grow; a push at one end gets all the slack at that end.
		extra := (used+s)/2 + 16
		buf = make([]byte, used+s+extra)
		switch off {
		case n.head:
			lead = extra
		case n.tail:
			lead = 0
		default:
			lead = extra / 2
		}
	}
	before := off - n.head
	d1 := lead - n.head // how far the part before off moves
	gap := lead + before
	if d1 >= 0 { // both parts move right (or stay): the back part first
		copy(buf[gap+s:], n.buf[off:n.tail])
		copy(buf[lead:], n.buf[n.head:off])
	} else {
		copy(buf[lead:], n.buf[n.head:off])
		copy(buf[gap+s:], n.buf[off:n.tail])
	}
	n.buf, n.head, n.tail = buf, lead, lead+used+s
	return gap
}

// insert adds v as a new entry at off.
func (n *qnode) insert(off int, v []byte) {
	g := n.openGap(off, NodeEntrySize(len(v)))
	putEntry(n.buf, g, v)
	n.count++
}

// closeGap removes the s bytes at off, moving the shorter side, and returns
// how far the bytes before off moved (0 or s).
func (n *qnode) closeGap(off, s int) int {
	if off-n.head <= n.tail-off-s {
		copy(n.buf[n.head+s:], n.buf[n.head:off])
		n.head += s
		return s
	}
	copy(n.buf[off:], n.buf[off+s:n.tail])
	n.tail -= s
	return 0
}

// remove deletes the entry at off and returns where the entry after it now
// starts.
func (n *qnode) remove(off int) int {
	_, next := n.entryAt(off)
	off += n.closeGap(off, next-off)
	n.count--
	return off
}

// replace sets the entry at off to v.
func (n *qnode) replace(off int, v []byte) {
	_, next := n.entryAt(off)
	old, size := next-off, NodeEntrySize(len(v))
	switch {
	case size > old:
		off = n.openGap(next, size-old) - old
	case size < old:
		off += n.closeGap(off+size, old-size)
	}
	putEntry(n.buf, off, v)
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
//
// Compression (list-compress-depth, as Redis' quicklist compress): with
// depth > 0, the depth nodes at each end are always plain and every node
// between them is LZF-compressed once the operation that touched it is
// over, unless compressing it would not save minCompressImprove bytes (or
// it is under minCompressBytes). A method that changes an interior node
// opens it (decompresses it into a fresh buffer) and lists it in opened;
// settle, before that method returns, compresses the opened nodes that are
// interior again. Reads (Index, iterators) never open a node: they
// decompress a transient copy (view), so a read never changes the list or
// its Memory. Compressing drops the node's buffer and never reuses it, so
// element bytes handed out earlier stay valid. depth is fixed when the quicklist is made, as in Redis, where
// CONFIG SET list-compress-depth applies to lists created afterwards.
type Quicklist struct {
	nodes  []*qnode
	lo, hi int
	count  int
	mem    int64
	spare  *qnode // an emptied node kept for reuse, or nil
	depth  int    // list-compress-depth: plain nodes kept at each end; 0 = no compression
	opened []*qnode
}

// NewQuicklist returns an empty quicklist compressing the nodes more than
// depth nodes from either end (0: none).
func NewQuicklist(depth int) *Quicklist {
	return &Quicklist{mem: quicklistOverhead, depth: max(depth, 0)}
}

// Redis' quicklist compression thresholds: nodes under MIN_COMPRESS_BYTES
// are left plain, and so are nodes LZF does not shrink by
// MIN_COMPRESS_IMPROVE bytes.
const (
	minCompressBytes   = 48
	minCompressImprove = 8
)

// compressors lends LZF compressors (each holds a 64 KiB hash table) to
// whichever shard compresses a node.
var compressors = sync.Pool{New: func() any { return new(lzf.Compressor) }}

// compressNode compresses n when that saves enough (see Quicklist).
// REQUIRES: n is plain and in q.
func (q *Quicklist) compressNode(n *qnode) {
	raw := n.tail - n.head
	if raw < minCompressBytes {
		return
	}
	c := compressors.Get().(*lzf.Compressor)
	z := c.Compress(n.buf[n.head:n.tail], raw-minCompressImprove-1)
	if z != nil {
		n.z = append(make([]byte, 0, len(z)), z...)
	}
	compressors.Put(c)
	if z == nil {
		return
	}
	q.mem += int64(cap(n.z) - cap(n.buf))
	n.buf, n.head, n.tail = nil, 0, raw // the old buffer is dropped, never reused
}

// open decompresses n into a fresh buffer with slack at both ends and lists
// it in opened. REQUIRES: n is compressed and in q.
func (q *Quicklist) open(n *qnode) {
	raw := n.tail
	slack := raw/8 + 16
	buf := make([]byte, raw+slack)
	if err := lzf.Decompress(n.z, buf[slack/2:slack/2+raw]); err != nil {
		panic("values: BUG: a compressed quicklist node does not decompress: " + err.Error())
	}
	q.mem += int64(cap(buf) - cap(n.z))
	n.buf, n.head, n.tail, n.z = buf, slack/2, slack/2+raw, nil
	q.opened = append(q.opened, n)
}

// settle compresses the opened nodes that are interior, as Redis'
// quicklistRecompressOnly after a use.
func (q *Quicklist) settle() {
	if len(q.opened) == 0 {
		return
	}
	for _, n := range q.opened {
		if n.z == nil && n.count > 0 && !q.isEnd(n) {
			q.compressNode(n)
		}
	}
	clear(q.opened)
	q.opened = q.opened[:0]
}

// isEnd reports whether n is one of the depth nodes at either end, which
// stay plain.
func (q *Quicklist) isEnd(n *qnode) bool {
	for k := 0; k < q.depth && k < q.hi-q.lo; k++ {
		if q.nodes[q.lo+k] == n || q.nodes[q.hi-1-k] == n {
			return true
		}
	}
	return false
}

// fixEnds restores the compression layout after a node came or went at
// index i: the depth nodes at each end are opened (at most one per end is
// compressed after one change), and the node just inside them, and the new
// node, are listed in opened for settle to compress.
func (q *Quicklist) fixEnds(added *qnode) {
	if q.depth == 0 {
		return
	}
	live := q.hi - q.lo
	for k := 0; k < q.depth && k < live; k++ {
		for _, n := range [2]*qnode{q.nodes[q.lo+k], q.nodes[q.hi-1-k]} {
			if n.z != nil {
				q.open(n)
			}
		}
	}
	if live > 2*q.depth {
		q.opened = append(q.opened, q.nodes[q.lo+q.depth], q.nodes[q.hi-1-q.depth])
	}
	if added != nil {
		q.opened = append(q.opened, added)
	}
}

// forget drops n from opened (it left the quicklist).
func (q *Quicklist) forget(n *qnode) {
	for i, o := range q.opened {
		if o == n {
			q.opened[i] = q.opened[len(q.opened)-1]
			q.opened[len(q.opened)-1] = nil
			q.opened = q.opened[:len(q.opened)-1]
			return
		}
	}
}

// Memory is the bytes the quicklist holds (see Collection).
func (q *Quicklist) Memory() int64 { return q.mem }

// Clone returns a deep copy with its nodes packed (COPY), compressed as
// q's are.
func (q *Quicklist) Clone() Collection {
	q.settle()
	c := &Quicklist{count: q.count, mem: quicklistOverhead, depth: q.depth}
	c.nodes = make([]*qnode, q.hi-q.lo)
	c.hi = len(c.nodes)
	c.mem += 8 * int64(cap(c.nodes))
	for i, n := range q.nodes[q.lo:q.hi] {
		if n.z != nil {
			nn := &qnode{z: append([]byte(nil), n.z...), tail: n.tail, count: n.count}
			c.nodes[i] = nn
			c.mem += qnodeOverhead + int64(cap(nn.z))
			continue
		}
		used := n.tail - n.head
		nn := &qnode{buf: make([]byte, used), tail: used, count: n.count}
		copy(nn.buf, n.buf[n.head:n.tail])
		c.nodes[i] = nn
		c.mem += qnodeOverhead + int64(cap(nn.buf))
	}
	return c
}

// numNodes is the number of nodes; node(i) is node i (0-based).
func (q *Quicklist) numNodes() int { return q.hi - q.lo }

// node returns node i, opened (decompressed) when it was compressed: for
// methods that change it, which settle before they return.
func (q *Quicklist) node(i int) *qnode {
	n := q.nodes[q.lo+i]
	if n.z != nil {
		q.open(n)
	}
	return n
}

// view returns node i for reading: the node itself, or a decompressed copy
// of a compressed one, which leaves the node as it is.
func (q *Quicklist) view(i int) qnode {
	n := q.nodes[q.lo+i]
	if n.z == nil {
		return *n
	}
	buf := make([]byte, n.tail)
	if err := lzf.Decompress(n.z, buf); err != nil {
		panic("values: BUG: a compressed quicklist node does not decompress: " + err.Error())
	}
	return qnode{buf: buf, tail: len(buf), count: n.count}
}

// relayout centres the live nodes in the node slice, growing it when less
// than half of it would be slack, so both ends have room for a new node.
func (q *Quicklist) relayout() {
	live := q.hi - q.lo
	if live*2+2 > len(q.nodes) {
		nodes := make([]*qnode, live*2+4)
		q.mem += 8 * int64(cap(nodes)-cap(q.nodes))
		lo := (len(nodes) - live) / 2
		copy(nodes[lo:], q.nodes[q.lo:q.hi])
		q.nodes, q.lo, q.hi = nodes, lo, lo+live
		return
	}
	lo := (len(q.nodes) - live) / 2
	copy(q.nodes[lo:], q.nodes[q.lo:q.hi])
	clear(q.nodes[:lo])
	clear(q.nodes[lo+live:])
	q.lo, q.hi = lo, lo+live
}

// insertNode puts n before node i (i == numNodes appends) and restores the
// compression layout.
func (q *Quicklist) insertNode(i int, n *qnode) {
	q.placeNode(i, n)
	q.fixEnds(n)
}

func (q *Quicklist) placeNode(i int, n *qnode) {
	q.mem += qnodeOverhead + int64(cap(n.buf))
	q.count += n.count
	live := q.hi - q.lo
	switch i {
	case 0:
		if q.lo == 0 {
			q.relayout()
		}
		q.lo--
		q.nodes[q.lo] = n
		return
	case live:
		if q.hi == len(q.nodes) {
			q.relayout()
		}
		q.nodes[q.hi] = n
		q.hi++
		return
	}
	if q.hi == len(q.nodes) && q.lo == 0 {
		q.relayout()
	}
	p := q.lo + i
	if q.hi < len(q.nodes) && (live-i <= i || q.lo == 0) {
		copy(q.nodes[p+1:], q.nodes[p:q.hi])
		q.hi++
	} else {
		copy(q.nodes[q.lo-1:], q.nodes[q.lo:p])
		q.lo--
		p--
	}
	q.nodes[p] = n
}

// spareMax bounds the buffer a spare node may keep.
const spareMax = 64 << 10

// removeNode drops node i, which must already hold no entries counted in
// q.count (its entries were removed through the node and counted out).
// Bytes returned by pop stay valid: a node kept as spare is only reused by a
// later push.
func (q *Quicklist) removeNode(i int) {
	n := q.nodes[q.lo+i]
	q.forget(n)
	if q.spare == nil && n.z == nil && cap(n.buf) <= spareMax {
		q.spare = n
	} else {
		q.mem -= qnodeOverhead + int64(cap(n.buf)+cap(n.z))
	}
	defer q.fixEnds(nil)
	live := q.hi - q.lo
	p := q.lo + i
	if i < live-1-i {
		copy(q.nodes[q.lo+1:], q.nodes[q.lo:p])
		q.nodes[q.lo] = nil
		q.lo++
	} else {
		copy(q.nodes[p:], q.nodes[p+1:q.hi])
		q.hi--
		q.nodes[q.hi] = nil
	}
}

// shrink moves n's entries to a smaller buffer when it uses under a quarter
// of the one it has (after LREM took most of its entries), so a list thinned
// out by removals gives the memory back.
func (q *Quicklist) shrink(n *qnode) {
	used := n.tail - n.head
	if len(n.buf) <= 4*used+256 {
		return
	}
	slack := used/4 + 16
	buf := make([]byte, used+slack)
	copy(buf[slack/2:], n.buf[n.head:n.tail])
	q.mem += int64(cap(buf) - cap(n.buf))
	n.buf, n.head, n.tail = buf, slack/2, slack/2+used
}

// dropIfEmpty removes node i when it holds nothing.
func (q *Quicklist) dropIfEmpty(i int) bool {
	if q.node(i).count == 0 {
		q.removeNode(i)
		return true
	}
	return false
}

// newNode makes a node holding v, placed at its buffer's back (atBack: for
// front pushes, which fill the node towards its front) or front. It reuses
// the spare node when it has room. The caller inserts it with insertNode.
func (q *Quicklist) newNode(v []byte, fill int64, atBack bool) *qnode {
	es := NodeEntrySize(len(v))
	var n *qnode
	if sp := q.spare; sp != nil && len(sp.buf) >= es {
		q.spare = nil
		q.mem -= qnodeOverhead + int64(cap(sp.buf)) // insertNode counts it again
		n = sp
		*n = qnode{buf: n.buf}
	} else {
		n = &qnode{buf: make([]byte, nodeBytesHint(es, fill))}
	}
	n.count = 1
	if atBack {
		n.head = len(n.buf) - es
	}
	n.tail = putEntry(n.buf, n.head, v)
	return n
}

// Push adds v at the front or back.
func (q *Quicklist) Push(v []byte, front bool, fill int64) {
	es := NodeEntrySize(len(v))
	if front {
		if q.hi > q.lo {
			n := q.nodes[q.lo]
			if NodeFits(n.tail-n.head, n.count, es, fill) {
				c := cap(n.buf)
				n.insert(n.head, v)
				q.mem += int64(cap(n.buf) - c)
				q.count++
				return
			}
		}
		q.insertNode(0, q.newNode(v, fill, true))
		q.settle()
		return
	}
	if q.hi > q.lo {
		n := q.nodes[q.hi-1]
		if NodeFits(n.tail-n.head, n.count, es, fill) {
			c := cap(n.buf)
			n.insert(n.tail, v)
			q.mem += int64(cap(n.buf) - c)
			q.count++
			return
		}
	}
	q.insertNode(q.numNodes(), q.newNode(v, fill, false))
	q.settle()
}

// PushMany pushes vs one after the other at the front or back, as that
// many Push calls would (LPUSH k a b c leaves c first), into the same
// nodes, but writes every entry once: the end node takes what fits in it
// after one growth, and each new node is made at the size of what it will
// hold (the last one with at least the room Push gives a new node). Push
// by push, a node reallocates as it fills (1 KiB, then by half again up
// to the fill limit) and copies its entries each time, which was a fifth
// of the server's CPU in a 2M-element RPUSH (docs/performance.md,
// "Finishing part 7").
func (q *Quicklist) PushMany(vs [][]byte, front bool, fill int64) {
	for len(vs) > 0 {
		if q.hi > q.lo {
			var n *qnode
			if front {
				n = q.nodes[q.lo]
			} else {
				n = q.nodes[q.hi-1]
			}
			k, size := nodeTake(vs, n.tail-n.head, n.count, fill)
			if k > 0 {
				c := cap(n.buf)
				if front {
					// The first of vs ends up next to the old head.
					off := n.openGap(n.head, size) + size
					for _, v := range vs[:k] {
						off -= NodeEntrySize(len(v))
						putEntry(n.buf, off, v)
					}
				} else {
					off := n.openGap(n.tail, size)
					for _, v := range vs[:k] {
						off = putEntry(n.buf, off, v)
					}
				}
				n.count += k
				q.mem += int64(cap(n.buf) - c)
				q.count += k
				vs = vs[k:]
				continue
			}
		}
		k, size := nodeTake(vs, 0, 0, fill)
		k = max(k, 1) // a value larger than the limit gets a node of its own
		if k == 1 {
			size = NodeEntrySize(len(vs[0]))
		}
		if k == len(vs) {
			// The last node of the run, which later pushes may fill
			// further: the room Push gives a new node, at least.
			size = max(size, nodeBytesHint(NodeEntrySize(len(vs[0])), fill))
		}
		n := q.takeSpare(size)
		if n == nil {
			n = &qnode{buf: make([]byte, size)}
		}
		n.count = k
		if front { // filled towards its front, as Push's atBack
			n.head = len(n.buf)
			for _, v := range vs[:k] {
				n.head -= NodeEntrySize(len(v))
				putEntry(n.buf, n.head, v)
			}
			n.tail = len(n.buf)
			q.insertNode(0, n)
		} else {
			off := 0
			for _, v := range vs[:k] {
				off = putEntry(n.buf, off, v)
			}
			n.tail = off
			q.insertNode(q.numNodes(), n)
		}
		q.settle()
		vs = vs[k:]
	}
}

// nodeTake is how many of vs, from the first, a node holding count entries
// in size bytes takes under fill (NodeFits, one at a time), and the bytes
// their entries need.
func nodeTake(vs [][]byte, size, count int, fill int64) (k, add int) {
	for _, v := range vs {
		es := NodeEntrySize(len(v))
		if !NodeFits(size+add, count+k, es, fill) {
			break
		}
		add += es
		k++
	}
	return k, add
}

// takeSpare returns the spare node, emptied, when its buffer holds size
// bytes, or nil. The caller inserts it with insertNode.
func (q *Quicklist) takeSpare(size int) *qnode {
	sp := q.spare
	if sp == nil || len(sp.buf) < size {
		return nil
	}
	q.spare = nil
	q.mem -= qnodeOverhead + int64(cap(sp.buf)) // insertNode counts it again
	*sp = qnode{buf: sp.buf}
	return sp
}

// End returns the first (front) or last element. REQUIRES: count > 0.
func (q *Quicklist) End(front bool) []byte {
	if front {
		n := q.nodes[q.lo]
		v, _ := n.entryAt(n.head)
		return v
	}
	n := q.nodes[q.hi-1]
	v, _ := n.entryBefore(n.tail)
	return v
}

// Pop removes the first (front) or last element and returns it. The bytes
// stay valid until the list is next changed.
func (q *Quicklist) Pop(front bool) []byte {
	var v []byte
	q.count--
	if front {
		n := q.nodes[q.lo]
		v, n.head = n.entryAt(n.head)
		if n.count--; n.count == 0 {
			q.removeNode(0)
			q.settle()
		}
		return v
	}
	n := q.nodes[q.hi-1]
	v, n.tail = n.entryBefore(n.tail)
	if n.count--; n.count == 0 {
		q.removeNode(q.numNodes() - 1)
		q.settle()
	}
	return v
}

// locate returns the node of element i (0 <= i < count) and its index in
// that node, walking the node counts from the nearer end (no node is
// opened).
func (q *Quicklist) locate(i int) (ni, k int) {
	if i < q.count/2 {
		for ni = 0; ; ni++ {
			if c := q.nodes[q.lo+ni].count; i >= c {
				i -= c
				continue
			}
			return ni, i
		}
	}
	j := q.count - 1 - i // position from the back
	for ni = q.numNodes() - 1; ; ni-- {
		c := q.nodes[q.lo+ni].count
		if j >= c {
			j -= c
			continue
		}
		return ni, c - 1 - j
	}
}

// DelFront removes the first k elements (k <= count).
func (q *Quicklist) DelFront(k int) {
	defer q.settle()
	q.count -= k
	for k > 0 {
		n := q.nodes[q.lo]
		if n.count <= k {
			k -= n.count
			n.count = 0
			q.removeNode(0)
			continue
		}
		n.head = n.skipFwd(n.head, k)
		n.count -= k
		return
	}
}

// DelBack removes the last k elements (k <= count).
func (q *Quicklist) DelBack(k int) {
	defer q.settle()
	q.count -= k
	for k > 0 {
		n := q.nodes[q.hi-1]
		if n.count <= k {
			k -= n.count
			n.count = 0
			q.removeNode(q.numNodes() - 1)
			continue
		}
		n.tail = n.skipBack(n.tail, k)
		n.count -= k
		return
	}
}

// insertAt adds v at offset off of node ni (off may be the node's tail),
// splitting the node when it is full, as Redis' _quicklistInsert.
func (q *Quicklist) insertAt(ni, off int, v []byte, fill int64) {
	n := q.node(ni)
	es := NodeEntrySize(len(v))
	q.count++
	if NodeFits(n.tail-n.head, n.count, es, fill) {
		c := cap(n.buf)
		n.insert(off, v)
		q.mem += int64(cap(n.buf) - c)
		return
	}
	switch {
	case off == n.head && ni > 0 && NodeFits(q.node(ni-1).tail-q.node(ni-1).head, q.node(ni-1).count, es, fill):
		p := q.node(ni - 1)
		c := cap(p.buf)
		p.insert(p.tail, v)
		q.mem += int64(cap(p.buf) - c)
	case off == n.tail && ni < q.numNodes()-1 && NodeFits(q.node(ni+1).tail-q.node(ni+1).head, q.node(ni+1).count, es, fill):
		x := q.node(ni + 1)
		c := cap(x.buf)
		x.insert(x.head, v)
		q.mem += int64(cap(x.buf) - c)
	case off == n.head:
		q.count--
		q.insertNode(ni, q.newNode(v, fill, true))
	case off == n.tail:
		q.count--
		q.insertNode(ni+1, q.newNode(v, fill, false))
	default:
		// Split: the entries from off on move to a new node after n, and v
		// goes at the end of n (or of a node of its own when n is still full).
		right := &qnode{buf: make([]byte, n.tail-off+es+16)}
		right.tail = copy(right.buf, n.buf[off:n.tail])
		for p := 0; p < right.tail; right.count++ {
			_, p = right.entryAt(p)
		}
		n.tail = off
		n.count -= right.count
		q.count -= right.count + 1
		q.insertNode(ni+1, right)
		q.insertAt(ni, n.tail, v, fill)
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
	lp   []byte  // EncListpack
	offs []int32 // EncListpack walked backwards: entry offsets, used from the end
	q    *Quicklist
	// node is a copy of the current node's fields: the iterator reads the
	// buffer it found, which stays valid even if the node is compressed
	// meanwhile (settle drops buffers, never reuses them).
	node qnode
	ni   int // quicklist: node index
	off  int // forward: the next entry's offset; backward (quicklist): the end of the next entry
	back bool
}

// Next returns the next element. REQUIRES: one remains.
func (it *ListIter) Next() []byte {
	var v []byte
	if it.q != nil {
		n := &it.node
		if !it.back {
			if it.off == n.tail {
				it.ni++
				it.node = it.q.view(it.ni)
				it.off = n.head
			}
			v, it.off = n.entryAt(it.off)
			return v
		}
		if it.off == n.head {
			it.ni--
			it.node = it.q.view(it.ni)
			it.off = n.tail
		}
		v, it.off = n.entryBefore(it.off)
		return v
	}
	if !it.back {
		v, it.off = listpack.Next(it.lp, it.off)
		return v
	}
	k := len(it.offs) - 1
	v, _ = listpack.Next(it.lp, int(it.offs[k]))
	it.offs = it.offs[:k]
	return v
}

// ---- what the keyspace asks of a list -------------------------------------------

// Len is the number of elements.
func (q *Quicklist) Len() int { return q.count }

// QuicklistFromListpack builds a quicklist holding lp's elements in order,
// filling nodes up to the node limit, each sized to what it holds plus some
// slack at both ends.
func QuicklistFromListpack(lp []byte, fill int64, depth int) *Quicklist {
	q := NewQuicklist(depth)
	rest := 0 // node-format bytes of the entries not yet placed
	for off := listpack.First; off < len(lp); {
		var v []byte
		v, off = listpack.Next(lp, off)
		rest += NodeEntrySize(len(v))
	}
	limit := sizeSafetyLimit
	if fill < 0 && fill >= -5 {
		limit = 4096 << (-fill - 1)
	}
	var n *qnode
	for off := listpack.First; off < len(lp); {
		var v []byte
		v, off = listpack.Next(lp, off)
		es := NodeEntrySize(len(v))
		if n != nil && !NodeFits(n.tail-n.head, n.count, es, fill) {
			q.insertNode(q.numNodes(), n)
			n = nil
		}
		if n == nil {
			size := min(rest, limit)
			slack := size/4 + 16
			n = &qnode{buf: make([]byte, size+slack), head: slack / 2}
			n.tail = n.head
		}
		if n.tail+es > len(n.buf) {
			n.openGap(n.tail, es)
			n.tail -= es
		}
		n.tail = putEntry(n.buf, n.tail, v)
		n.count++
		rest -= es
	}
	if n != nil {
		q.insertNode(q.numNodes(), n)
	}
	q.settle()
	return q
}

// IterAt returns an iterator whose first element is element start
// (0 <= start < Len).
func (q *Quicklist) IterAt(start int, back bool) ListIter {
	it := ListIter{back: back, q: q}
	var k int
	it.ni, k = q.locate(start)
	it.node = q.view(it.ni)
	it.off = it.node.offsetOf(k)
	if back {
		_, it.off = it.node.entryAt(it.off)
	}
	return it
}

// ListpackIterAt returns an iterator over list listpack lp whose first
// element is element start (0 <= start < listpack.Len(lp)).
func ListpackIterAt(lp []byte, start int, back bool) ListIter {
	it := ListIter{back: back, lp: lp}
	if !back {
		it.off = listpack.Skip(lp, listpack.First, start)
		return it
	}
	it.offs = make([]int32, 0, start+1)
	for off, i := listpack.First, 0; i <= start; i++ {
		it.offs = append(it.offs, int32(off))
		_, off = listpack.Next(lp, off)
	}
	return it
}

// Index returns element i (0 <= i < Len).
func (q *Quicklist) Index(i int) []byte {
	ni, k := q.locate(i)
	n := q.view(ni)
	v, _ := n.entryAt(n.offsetOf(k))
	return v
}

// Set replaces element i (0 <= i < Len) with v.
func (q *Quicklist) Set(i int, v []byte, fill int64) {
	defer q.settle()
	ni, k := q.locate(i)
	n := q.node(ni)
	off := n.offsetOf(k)
	if _, next := n.entryAt(off); n.count == 1 || NodeFits(n.tail-n.head-(next-off), n.count-1, NodeEntrySize(len(v)), fill) {
		c := cap(n.buf)
		n.replace(off, v)
		q.mem += int64(cap(n.buf) - c)
		return
	}
	// Too big for its node: remove it and insert v in its place, which
	// splits the node.
	off = n.remove(off)
	q.count--
	q.insertAt(ni, off, v, fill)
}

// Insert adds v so that it becomes element i (0 <= i <= Len).
func (q *Quicklist) Insert(i int, v []byte, fill int64) {
	if i == q.count {
		q.Push(v, false, fill)
		return
	}
	defer q.settle()
	ni, k := q.locate(i)
	q.insertAt(ni, q.node(ni).offsetOf(k), v, fill)
}

// InsertPivot adds v before (after false) or after the first element equal
// to pivot, and reports whether pivot was found.
func (q *Quicklist) InsertPivot(pivot, v []byte, after bool, fill int64) bool {
	for ni := 0; ni < q.numNodes(); ni++ {
		n := q.view(ni) // searched without opening it
		k := 0
		for off := n.head; off < n.tail; k++ {
			e, next := n.entryAt(off)
			if string(e) != string(pivot) {
				off = next
				continue
			}
			if after {
				k++
			}
			q.insertAt(ni, q.node(ni).offsetOf(k), v, fill)
			q.settle()
			return true
		}
	}
	return false
}

// EqualRemover picks the elements LREM removes, walking a list from the
// front: those equal to v, past the first skip of them, up to limit (0: no
// limit).
type EqualRemover struct {
	v       []byte
	limit   int
	skip    int
	removed int
}

// NewEqualRemover returns a remover of elements equal to v.
func NewEqualRemover(v []byte, limit, skip int) EqualRemover {
	return EqualRemover{v: v, limit: limit, skip: skip}
}

// Take reports whether element e, the next in order, is to be removed, and
// counts it.
func (r *EqualRemover) Take(e []byte) bool {
	if string(e) != string(r.v) || r.limit > 0 && r.removed == r.limit {
		return false
	}
	if r.skip > 0 {
		r.skip--
		return false
	}
	r.removed++
	return true
}

// Removed is how many elements Take picked.
func (r *EqualRemover) Removed() int { return r.removed }

// done reports whether the limit is reached.
func (r *EqualRemover) done() bool { return r.limit > 0 && r.removed == r.limit }

// RemoveWhere removes the elements r picks, in order from the front.
func (q *Quicklist) RemoveWhere(r *EqualRemover) {
	start := r.removed
	defer q.settle()
	for ni := 0; ni < q.numNodes(); ni++ {
		q.settle() // one node open at a time
		n := q.node(ni)
		w, before := n.head, r.removed
		for rd := n.head; rd < n.tail; {
			e, next := n.entryAt(rd)
			if !r.Take(e) {
				if w != rd {
					copy(n.buf[w:], n.buf[rd:next])
				}
				w += next - rd
			}
			rd = next
		}
		n.tail = w
		n.count -= r.removed - before
		if q.dropIfEmpty(ni) {
			ni--
		} else if r.removed != before {
			q.shrink(n)
		}
		if r.done() {
			break
		}
	}
	q.count -= r.removed - start
}
