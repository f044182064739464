package shard

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/rdb"
)

// ---- IDs ---------------------------------------------------------------------

// streamID is a stream entry ID, <ms>-<seq>, ordered by ms then seq.
type streamID struct{ ms, seq uint64 }

var maxStreamID = streamID{math.MaxUint64, math.MaxUint64}

func (a streamID) cmp(b streamID) int {
	switch {
	case a.ms < b.ms:
		return -1
	case a.ms > b.ms:
		return 1
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || a.ms == b.ms && a.seq < b.seq }
func (a streamID) isZero() bool         { return a.ms == 0 && a.seq == 0 }

// incr sets id to its successor (Redis' streamIncrID); at the largest ID it
// wraps to 0-0 and reports false.
func (a *streamID) incr() bool {
	switch {
	case a.seq < math.MaxUint64:
		a.seq++
	case a.ms < math.MaxUint64:
		a.ms++
		a.seq = 0
	default:
		*a = streamID{}
		return false
	}
	return true
}

// decr sets id to its predecessor (streamDecrID); at 0-0 it wraps to the
// largest ID and reports false.
func (a *streamID) decr() bool {
	switch {
	case a.seq > 0:
		a.seq--
	case a.ms > 0:
		a.ms--
		a.seq = math.MaxUint64
	default:
		*a = maxStreamID
		return false
	}
	return true
}

func appendStreamID(dst []byte, id streamID) []byte {
	dst = strconv.AppendUint(dst, id.ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, id.seq, 10)
}

func uintLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// bulkID replies id as a bulk string without a scratch buffer.
func (c *Ctx) bulkID(id streamID) {
	c.Out = append(c.Out, '$')
	c.Out = strconv.AppendInt(c.Out, int64(uintLen(id.ms)+1+uintLen(id.seq)), 10)
	c.Out = append(c.Out, '\r', '\n')
	c.Out = appendStreamID(c.Out, id)
	c.Out = append(c.Out, '\r', '\n')
}

// parseULL is Redis' string2ull: string2ll, and failing that strtoull (which
// takes leading spaces, a sign and leading zeros, and negates a '-' value).
func parseULL(s []byte) (uint64, bool) {
	if v, ok := resp.ParseInt(s); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return 0, false
	}
	return parseCursor(s[i:]) // the sign and digits, read as strtoul does
}

// parseStreamID is Redis' streamGenericParseIDOrReply without the reply:
// "-" and "+" (unless strict), <ms>-<seq>, or <ms> alone (seq = missingSeq).
// With seqGiven non-nil (XADD) "<ms>-*" is accepted too and *seqGiven tells
// whether the sequence was given.
func parseStreamID(b []byte, missingSeq uint64, strict bool, seqGiven *bool) (streamID, bool) {
	if len(b) > 127 {
		return streamID{}, false
	}
	if i := slices.Index(b, 0); i >= 0 { // Redis parses a C string copy
		b = b[:i]
	}
	if strict && len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		return streamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(b) == 1 && b[0] == '-' {
		return streamID{}, true
	}
	if len(b) == 1 && b[0] == '+' {
		return maxStreamID, true
	}
	var id streamID
	var ok bool
	dash := slices.Index(b, '-')
	if dash < 0 {
		if id.ms, ok = parseULL(b); !ok {
			return streamID{}, false
		}
		id.seq = missingSeq
		return id, true
	}
	if id.ms, ok = parseULL(b[:dash]); !ok {
		return streamID{}, false
	}
	rest := b[dash+1:]
	if seqGiven != nil && len(rest) == 1 && rest[0] == '*' {
		*seqGiven = false
		return id, true
	}
	if id.seq, ok = parseULL(rest); !ok {
		return streamID{}, false
	}
	return id, true
}

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// parseID parses an ID argument, replying Redis' error when it is invalid.
func (c *Ctx) parseID(b []byte, missingSeq uint64, strict bool) (streamID, bool) {
	id, ok := parseStreamID(b, missingSeq, strict, nil)
	if !ok {
		c.err(errInvalidStreamID)
	}
	return id, ok
}

// parseIntervalID is streamParseIntervalIDOrReply: a "(" prefix makes the
// bound exclusive (and the ID strict).
func (c *Ctx) parseIntervalID(b []byte, missingSeq uint64) (id streamID, exclusive, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, ok = c.parseID(b[1:], missingSeq, true)
		return id, true, ok
	}
	id, ok = c.parseID(b, missingSeq, false)
	return id, false, ok
}

// ---- Redis listpack sizes ----------------------------------------------------
//
// A stream node splits when its Redis listpack would pass
// stream-node-max-bytes, and XTRIM ~ removes whole nodes: to put node
// boundaries where Redis puts them, each block computes the size its Redis
// listpack would have (lpBytes), though it stores its entries its own way.

// streamNodeMaxBytes is Redis' stream-node-max-bytes default.
const streamNodeMaxBytes = 4096

// streamListpackMaxSize is STREAM_LISTPACK_MAX_SIZE: no entry may hold more.
const streamListpackMaxSize = 1 << 30

func lpIntEncSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -32768 && v <= 32767:
		return 3
	case v >= -8388608 && v <= 8388607:
		return 4
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 5
	}
	return 9
}

func lpIntSize(v int64) int {
	n := lpIntEncSize(v)
	return n + rdb.ListpackBacklenSize(n)
}

func lpStrSize(b []byte) int {
	if v, ok := resp.ParseInt(b); ok {
		return lpIntSize(v)
	}
	n := len(b)
	switch {
	case n < 64:
		n++
	case n < 4096:
		n += 2
	default:
		n += 5
	}
	return n + rdb.ListpackBacklenSize(n)
}

// ---- entries and blocks ------------------------------------------------------

const (
	entDeleted    = 1 << 0 // a tombstone (Redis' STREAM_ITEM_FLAG_DELETED)
	entSameFields = 1 << 1 // fields are the block's master fields; only values stored
)

// streamEnt is one entry of a block. Its fields and values live in the
// block's data from off on.
type streamEnt struct {
	id    streamID
	off   uint32
	nf    uint32 // field-value pairs
	flags uint8
}

const streamEntSize = 32 // unsafe.Sizeof(streamEnt{})

// streamBlock is one node of a stream, the counterpart of one listpack in
// Redis' radix tree: the entries added to it in ID order, deleted ones kept
// as tombstones until the whole block goes, as Redis does.
//
// data holds the master fields (the fields of the first entry added) and then
// each entry's record: its values alone when it has the master fields
// (entSameFields), else field, value, field, value...; each string is a
// uvarint length and the bytes.
//
// Invariants: ents is non-empty and sorted by id; ents[0].id == master (the
// block's key); live + dead == len(ents); dead counts entDeleted entries;
// lpBase + lpIntSize(live) + lpIntSize(dead) is the Redis listpack's size.
type streamBlock struct {
	master  streamID
	ents    []streamEnt
	data    []byte
	nMaster uint32
	live    int64
	dead    int64
	lpBase  int64
}

const streamBlockOverhead = 96

func (b *streamBlock) lpBytes() int64 {
	return b.lpBase + int64(lpIntSize(b.live)+lpIntSize(b.dead))
}

func (b *streamBlock) memory() int64 {
	return streamBlockOverhead + int64(cap(b.ents))*streamEntSize + int64(cap(b.data))
}

func appendStr(dst, s []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func nextStr(b []byte) (s, rest []byte) {
	n, w := binary.Uvarint(b)
	end := w + int(n)
	return b[w:end:end], b[end:]
}

// entryFields walks an entry's field, value pairs: the fields from the
// block's master record when the entry has the same fields, else from its
// own record. The slices point into the block.
type entryFields struct {
	master, rec []byte
	same        bool
	left        uint32
}

func (b *streamBlock) fields(e *streamEnt) entryFields {
	return entryFields{master: b.data, rec: b.data[e.off:], same: e.flags&entSameFields != 0, left: e.nf}
}

// next returns the next pair; ok is false after the last.
func (it *entryFields) next() (f, v []byte, ok bool) {
	if it.left == 0 {
		return nil, nil, false
	}
	it.left--
	if it.same {
		f, it.master = nextStr(it.master)
	} else {
		f, it.rec = nextStr(it.rec)
	}
	v, it.rec = nextStr(it.rec)
	return f, v, true
}

// sameFields reports whether fv's fields are the block's master fields.
func (b *streamBlock) sameFields(fv [][]byte) bool {
	if uint32(len(fv)/2) != b.nMaster {
		return false
	}
	m := b.data
	for i := 0; i < len(fv); i += 2 {
		var f []byte
		f, m = nextStr(m)
		if string(f) != string(fv[i]) {
			return false
		}
	}
	return true
}

// ---- the stream ------------------------------------------------------------

// stream is a stream value (o.coll with encStream): its entries in blocks
// ordered by ID, and its consumer groups.
//
// Invariants: blocks are sorted by master ID and every entry of blocks[i] is
// below blocks[i+1].master; length is the number of live entries; lastID is
// at least every ID ever added; firstID is the first live entry's ID (0-0
// when empty); maxDeleted is the largest ID XDEL removed; groups are sorted
// by name; mem is memory() and every mutator keeps it current.
type stream struct {
	blocks       []*streamBlock
	length       int64
	lastID       streamID
	firstID      streamID
	maxDeleted   streamID
	entriesAdded int64
	groups       []*streamGroup
	mem          int64
}

const streamOverhead = 128

func newStream() *stream { return &stream{mem: streamOverhead} }

func (s *stream) memory() int64 { return s.mem }

// streamPos addresses an entry: block b, entry e. b < 0 or b >= len(blocks)
// is "none".
type streamPos struct{ b, e int }

func (s *stream) valid(p streamPos) bool { return p.b >= 0 && p.b < len(s.blocks) }

func (s *stream) ent(p streamPos) *streamEnt { return &s.blocks[p.b].ents[p.e] }

func (s *stream) next(p streamPos) streamPos {
	p.e++
	if p.e == len(s.blocks[p.b].ents) {
		p.b++
		p.e = 0
	}
	return p
}

func (s *stream) prev(p streamPos) streamPos {
	p.e--
	if p.e < 0 {
		p.b--
		if p.b >= 0 {
			p.e = len(s.blocks[p.b].ents) - 1
		}
	}
	return p
}

// blockFor returns the index of the last block whose master ID is <= id, or
// -1 (Redis' raxSeek "<=").
func (s *stream) blockFor(id streamID) int {
	lo, hi := 0, len(s.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if id.less(s.blocks[m].master) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// seekGE returns the position of the first entry (tombstones included) with
// an ID >= id.
func (s *stream) seekGE(id streamID) streamPos {
	k := s.blockFor(id)
	if k < 0 {
		return streamPos{0, 0}
	}
	ents := s.blocks[k].ents
	e, _ := slices.BinarySearchFunc(ents, id, func(x streamEnt, t streamID) int { return x.id.cmp(t) })
	if e == len(ents) {
		return streamPos{k + 1, 0}
	}
	return streamPos{k, e}
}

// seekLE returns the position of the last entry with an ID <= id.
func (s *stream) seekLE(id streamID) streamPos {
	k := s.blockFor(id)
	if k < 0 {
		return streamPos{-1, 0}
	}
	ents := s.blocks[k].ents
	e, found := slices.BinarySearchFunc(ents, id, func(x streamEnt, t streamID) int { return x.id.cmp(t) })
	if !found {
		e--
	}
	return streamPos{k, e}
}

// find returns the position of the live entry id.
func (s *stream) find(id streamID) (streamPos, bool) {
	p := s.seekGE(id)
	if !s.valid(p) {
		return p, false
	}
	e := s.ent(p)
	return p, e.id == id && e.flags&entDeleted == 0
}

// firstLive returns the first live entry at or after p.
func (s *stream) firstLive(p streamPos) streamPos {
	for s.valid(p) && s.ent(p).flags&entDeleted != 0 {
		p = s.next(p)
	}
	return p
}

// lastValidID is streamLastValidID: the last live entry's ID (0-0 if none).
func (s *stream) lastValidID() streamID {
	p := streamPos{len(s.blocks) - 1, 0}
	if p.b >= 0 {
		p.e = len(s.blocks[p.b].ents) - 1
	}
	for ; s.valid(p); p = s.prev(p) {
		if e := s.ent(p); e.flags&entDeleted == 0 {
			return e.id
		}
	}
	return streamID{}
}

// fieldsLen is the total length of fv's strings (Redis' totelelen).
func fieldsLen(fv [][]byte) int {
	n := 0
	for _, b := range fv {
		n += len(b)
	}
	return n
}

// append adds an entry with ID id (already checked to be > lastID) and the
// field-value pairs fv, opening a block where Redis opens a listpack.
func (s *stream) append(id streamID, fv [][]byte, nodeMaxEntries int64) {
	var b *streamBlock
	if n := len(s.blocks); n > 0 {
		b = s.blocks[n-1]
		if b.lpBytes()+int64(fieldsLen(fv)) >= streamNodeMaxBytes ||
			nodeMaxEntries > 0 && b.live+b.dead >= nodeMaxEntries {
			b = nil
		}
	}
	flags := uint8(0)
	if b == nil {
		b = &streamBlock{master: id, nMaster: uint32(len(fv) / 2)}
		size := 0
		for i := 0; i < len(fv); i += 2 {
			size += binary.MaxVarintLen32 + len(fv[i])
		}
		for i := 1; i < len(fv); i += 2 {
			size += binary.MaxVarintLen32 + len(fv[i])
		}
		b.data = make([]byte, 0, max(size, 64))
		b.ents = make([]streamEnt, 0, 4)
		b.lpBase = 7 + int64(lpIntSize(int64(len(fv)/2))+lpIntSize(0))
		for i := 0; i < len(fv); i += 2 {
			b.data = appendStr(b.data, fv[i])
			b.lpBase += int64(lpStrSize(fv[i]))
		}
		oldCap := cap(s.blocks)
		s.blocks = append(s.blocks, b)
		s.mem += int64(cap(s.blocks)-oldCap)*8 + b.memory()
		flags = entSameFields
	} else if b.sameFields(fv) {
		flags = entSameFields
	}
	before := b.memory()
	e := streamEnt{id: id, off: uint32(len(b.data)), nf: uint32(len(fv) / 2), flags: flags}
	lp := lpIntSize(int64(flags)) + lpIntSize(int64(id.ms-b.master.ms)) + lpIntSize(int64(id.seq-b.master.seq))
	lpCount := int64(len(fv)/2) + 3
	if flags&entSameFields != 0 {
		for i := 1; i < len(fv); i += 2 {
			b.data = appendStr(b.data, fv[i])
			lp += lpStrSize(fv[i])
		}
	} else {
		lp += lpIntSize(int64(len(fv) / 2))
		for _, x := range fv {
			b.data = appendStr(b.data, x)
			lp += lpStrSize(x)
		}
		lpCount += int64(len(fv)/2) + 1
	}
	lp += lpIntSize(lpCount)
	b.lpBase += int64(lp)
	b.ents = append(b.ents, e)
	b.live++
	s.mem += b.memory() - before
	s.length++
	s.entriesAdded++
	s.lastID = id
	if s.length == 1 {
		s.firstID = id
	}
}

// removeBlock drops block k with all its entries.
func (s *stream) removeBlock(k int) {
	b := s.blocks[k]
	s.mem -= b.memory()
	s.length -= b.live
	if k == 0 {
		// Trimming takes blocks from the front: reslice, the next append
		// that reallocates drops the old prefix.
		s.blocks[0] = nil
		s.blocks = s.blocks[1:]
		s.mem -= 8 // the slot stops counting towards cap(s.blocks)
		return
	}
	s.blocks = slices.Delete(s.blocks, k, k+1)
}

// delete marks the live entry at p deleted (Redis' streamIteratorRemoveEntry):
// the block goes when it was its last live entry.
func (s *stream) delete(p streamPos) {
	b := s.blocks[p.b]
	if b.live == 1 {
		s.removeBlock(p.b)
		return
	}
	b.ents[p.e].flags |= entDeleted
	b.live--
	b.dead++
	s.length--
}

// deleteID is XDEL of one ID, with Redis' bookkeeping of the first and the
// largest deleted ID left to the caller.
func (s *stream) deleteID(id streamID) bool {
	p, ok := s.find(id)
	if !ok {
		return false
	}
	s.delete(p)
	return true
}

// refreshFirstID recomputes firstID (streamGetEdgeID skipping tombstones).
func (s *stream) refreshFirstID() {
	if s.length == 0 {
		s.firstID = streamID{}
		return
	}
	if p := s.firstLive(streamPos{0, 0}); s.valid(p) {
		s.firstID = s.ent(p).id
	}
}

const (
	trimNone = iota
	trimMaxLen
	trimMinID
)

// trimArgs are the trimming options of XADD and XTRIM.
type trimArgs struct {
	strategy int
	approx   bool
	limit    int64
	maxLen   int64
	minID    streamID
	argIdx   int // index of the threshold argument
}

// trim is Redis' streamTrim: whole blocks go from the head while they can;
// with approx it stops at the first block it cannot drop whole, else it
// marks entries of that block deleted. It returns how many entries went.
func (s *stream) trim(a *trimArgs) int64 {
	if a.strategy == trimNone {
		return 0
	}
	var deleted int64
	for len(s.blocks) > 0 {
		if a.strategy == trimMaxLen && s.length <= a.maxLen {
			break
		}
		b := s.blocks[0]
		entries := b.live
		if a.limit != 0 && deleted+entries > a.limit {
			break
		}
		var remove bool
		if a.strategy == trimMaxLen {
			remove = s.length-entries >= a.maxLen
		} else {
			remove = b.ents[len(b.ents)-1].id.less(a.minID)
		}
		if remove {
			s.removeBlock(0)
			deleted += entries
			continue
		}
		if a.approx {
			break
		}
		for i := range b.ents {
			e := &b.ents[i]
			if a.strategy == trimMaxLen && s.length <= a.maxLen ||
				a.strategy == trimMinID && !e.id.less(a.minID) {
				break
			}
			if e.flags&entDeleted == 0 {
				e.flags |= entDeleted
				b.live--
				b.dead++
				s.length--
				deleted++
			}
		}
		break
	}
	if s.length == 0 {
		s.firstID = streamID{}
	} else if deleted > 0 {
		s.refreshFirstID()
	}
	return deleted
}

// ---- consumer groups -------------------------------------------------------

// streamNACK is a pending entry: delivered to consumer, not yet acknowledged.
type streamNACK struct {
	deliveryTime  int64
	deliveryCount int64
	consumer      *streamConsumer
}

const streamNACKSize = 32

// streamConsumer is one consumer of a group. Its pel holds the group's NACKs
// whose consumer it is (the same pointers), by ID.
type streamConsumer struct {
	name     string
	seenTime int64
	pel      pelIndex
}

const streamConsumerOverhead = 96

// streamGroup is a consumer group. Invariants: pel holds every NACK of the
// group and each is in exactly its consumer's pel too; consumers are sorted
// by name; entriesRead is -1 when unknown.
type streamGroup struct {
	name        string
	lastID      streamID
	entriesRead int64
	pel         pelIndex
	consumers   []*streamConsumer
}

const streamGroupOverhead = 128

func (s *stream) group(name []byte) *streamGroup {
	i, ok := slices.BinarySearchFunc(s.groups, name, func(g *streamGroup, n []byte) int { return strings.Compare(g.name, string(n)) })
	if !ok {
		return nil
	}
	return s.groups[i]
}

// createGroup adds a group, or returns nil when the name is taken.
func (s *stream) createGroup(name []byte, last streamID, entriesRead int64) *streamGroup {
	i, ok := slices.BinarySearchFunc(s.groups, name, func(g *streamGroup, n []byte) int { return strings.Compare(g.name, string(n)) })
	if ok {
		return nil
	}
	g := &streamGroup{name: string(name), lastID: last, entriesRead: entriesRead}
	oldCap := cap(s.groups)
	s.groups = slices.Insert(s.groups, i, g)
	s.mem += int64(cap(s.groups)-oldCap)*8 + streamGroupOverhead + int64(len(g.name))
	return g
}

func (s *stream) destroyGroup(g *streamGroup) {
	i, _ := slices.BinarySearchFunc(s.groups, g.name, func(x *streamGroup, n string) int { return strings.Compare(x.name, n) })
	s.groups = slices.Delete(s.groups, i, i+1)
	s.mem -= g.memory()
}

// memory is what destroying g gives back.
func (g *streamGroup) memory() int64 {
	n := streamGroupOverhead + int64(len(g.name)) + int64(cap(g.consumers))*8 + g.pel.mem + int64(g.pel.n)*streamNACKSize
	for _, c := range g.consumers {
		n += streamConsumerOverhead + int64(len(c.name)) + c.pel.mem
	}
	return n
}

func (g *streamGroup) consumer(name []byte) *streamConsumer {
	i, ok := slices.BinarySearchFunc(g.consumers, name, func(c *streamConsumer, n []byte) int { return strings.Compare(c.name, string(n)) })
	if !ok {
		return nil
	}
	return g.consumers[i]
}

// createConsumer adds a consumer, or returns nil when the name is taken.
func (s *stream) createConsumer(g *streamGroup, name []byte, now int64) *streamConsumer {
	i, ok := slices.BinarySearchFunc(g.consumers, name, func(c *streamConsumer, n []byte) int { return strings.Compare(c.name, string(n)) })
	if ok {
		return nil
	}
	c := &streamConsumer{name: string(name), seenTime: now}
	oldCap := cap(g.consumers)
	g.consumers = slices.Insert(g.consumers, i, c)
	s.mem += int64(cap(g.consumers)-oldCap)*8 + streamConsumerOverhead + int64(len(c.name))
	return c
}

// deleteConsumer removes c and its pending entries from g.
func (s *stream) deleteConsumer(g *streamGroup, c *streamConsumer) {
	for cur := c.pel.first(); cur.valid(&c.pel); cur = c.pel.next(cur) {
		g.pel.delete(c.pel.at(cur).id, &s.mem)
		s.mem -= streamNACKSize
	}
	i, _ := slices.BinarySearchFunc(g.consumers, c.name, func(x *streamConsumer, n string) int { return strings.Compare(x.name, n) })
	g.consumers = slices.Delete(g.consumers, i, i+1)
	s.mem -= streamConsumerOverhead + int64(len(c.name)) + c.pel.mem
}

// ack removes id from g's PEL and its consumer's.
func (s *stream) ack(g *streamGroup, id streamID) bool {
	n := g.pel.get(id)
	if n == nil {
		return false
	}
	g.pel.delete(id, &s.mem)
	n.consumer.pel.delete(id, &s.mem)
	s.mem -= streamNACKSize
	return true
}

// addNACK creates a pending entry for id owned by c, delivered at now, or
// (when id is already pending) hands it to c with a count of 1.
func (s *stream) addNACK(g *streamGroup, c *streamConsumer, id streamID, now int64) {
	if n := g.pel.get(id); n != nil {
		n.consumer.pel.delete(id, &s.mem)
		n.consumer = c
		n.deliveryTime = now
		n.deliveryCount = 1
		c.pel.insert(id, n, &s.mem)
		return
	}
	n := &streamNACK{deliveryTime: now, deliveryCount: 1, consumer: c}
	g.pel.insert(id, n, &s.mem)
	c.pel.insert(id, n, &s.mem)
	s.mem += streamNACKSize
}

// ---- lag and the entries-read counter (Redis 7.0) ----------------------------

// rangeHasTombstones is streamRangeHasTombstones with end = +inf.
func (s *stream) rangeHasTombstones(start streamID) bool {
	if s.length == 0 || s.maxDeleted.isZero() {
		return false
	}
	if s.firstID.cmp(s.maxDeleted) > 0 {
		return false
	}
	return start.cmp(s.maxDeleted) <= 0
}

// estimateDistance is streamEstimateDistanceFromFirstEverEntry: id's logical
// read counter, or -1 when it cannot be known.
func (s *stream) estimateDistance(id streamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.cmp(s.lastID) < 1 {
		return s.entriesAdded
	}
	cmpLast := id.cmp(s.lastID)
	if cmpLast == 0 {
		return s.entriesAdded
	} else if cmpLast > 0 {
		return -1
	}
	cmpFirst := id.cmp(s.firstID)
	if s.maxDeleted.isZero() || s.maxDeleted.less(s.firstID) {
		if cmpFirst < 0 {
			return s.entriesAdded - s.length
		} else if cmpFirst == 0 {
			return s.entriesAdded - s.length + 1
		}
	}
	return -1
}

// lag is streamReplyWithCGLag's value; ok false means null.
func (s *stream) lag(g *streamGroup) (int64, bool) {
	if s.entriesAdded == 0 {
		return 0, true
	}
	if g.entriesRead != -1 && !s.rangeHasTombstones(g.lastID) {
		return s.entriesAdded - g.entriesRead, true
	}
	if r := s.estimateDistance(g.lastID); r != -1 {
		return s.entriesAdded - r, true
	}
	return 0, false
}

// delivered updates g's last ID and read counter for an entry it is served
// (the group part of streamReplyWithRange).
func (s *stream) delivered(g *streamGroup, id streamID) {
	if id.cmp(g.lastID) <= 0 {
		return
	}
	if g.entriesRead != -1 && !s.rangeHasTombstones(id) {
		g.entriesRead++
	} else if s.entriesAdded != 0 {
		g.entriesRead = s.estimateDistance(id)
	}
	g.lastID = id
}

// ---- the radix tree's shape ------------------------------------------------

// raxNodes is the node count of the radix tree Redis would hold for these
// block keys (XINFO STREAM radix-tree-nodes): a compressed trie of the
// 16-byte big-endian IDs.
func (s *stream) raxNodes() int64 {
	if len(s.blocks) == 0 {
		return 1
	}
	keys := make([][16]byte, len(s.blocks))
	for i, b := range s.blocks {
		binary.BigEndian.PutUint64(keys[i][:8], b.master.ms)
		binary.BigEndian.PutUint64(keys[i][8:], b.master.seq)
	}
	return raxCount(keys, 0)
}

func raxCount(keys [][16]byte, depth int) int64 {
	if depth == 16 {
		return 1
	}
	// Common prefix of the sorted keys beyond depth: compare the first and last.
	first, last := keys[0], keys[len(keys)-1]
	l := depth
	for l < 16 && first[l] == last[l] {
		l++
	}
	if l > depth {
		return 1 + raxCount(keys, l)
	}
	n := int64(1)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][depth] == keys[i][depth] {
			j++
		}
		n += raxCount(keys[i:j], depth+1)
		i = j
	}
	return n
}

// ---- copy ------------------------------------------------------------------

func (s *stream) clone() collection {
	n := &stream{
		length: s.length, lastID: s.lastID, firstID: s.firstID, maxDeleted: s.maxDeleted,
		entriesAdded: s.entriesAdded, mem: streamOverhead,
	}
	n.blocks = make([]*streamBlock, len(s.blocks))
	n.mem += int64(cap(n.blocks)) * 8
	for i, b := range s.blocks {
		nb := *b
		nb.ents = slices.Clone(b.ents)
		nb.data = slices.Clone(b.data)
		n.blocks[i] = &nb
		n.mem += nb.memory()
	}
	for _, g := range s.groups {
		ng := n.createGroup([]byte(g.name), g.lastID, g.entriesRead)
		for _, c := range g.consumers {
			nc := n.createConsumer(ng, []byte(c.name), c.seenTime)
			for cur := c.pel.first(); cur.valid(&c.pel); cur = c.pel.next(cur) {
				it := c.pel.at(cur)
				nn := &streamNACK{deliveryTime: it.n.deliveryTime, deliveryCount: it.n.deliveryCount, consumer: nc}
				ng.pel.insert(it.id, nn, &n.mem)
				nc.pel.insert(it.id, nn, &n.mem)
				n.mem += streamNACKSize
			}
		}
	}
	return n
}

// ---- PEL index --------------------------------------------------------------

// pelIndex is an ordered map from entry ID to NACK: a sorted slice of small
// sorted leaves, found by binary search over the leaves' last IDs, so that
// insertions and deletions anywhere move at most one leaf's items and (on a
// split or an emptied leaf) the leaf pointers. mem is the bytes it holds
// beyond the NACKs themselves; every mutator adds its change to *acct too.
type pelIndex struct {
	leaves []*pelLeaf
	n      int
	mem    int64
}

// pelItem is one pending entry of an index: its ID and its NACK (shared by
// the group's index and its consumer's).
type pelItem struct {
	id streamID
	n  *streamNACK
}

// pelLeaf holds 1..pelLeafMax items sorted by ID, all above the previous
// leaf's and below the next one's.
type pelLeaf struct{ items []pelItem }

const (
	pelLeafMax      = 64
	pelItemSize     = 24
	pelLeafOverhead = 48
)

// pelCursor addresses item i of leaf l.
type pelCursor struct{ l, i int }

func (c pelCursor) valid(p *pelIndex) bool { return c.l < len(p.leaves) }

func (p *pelIndex) at(c pelCursor) *pelItem { return &p.leaves[c.l].items[c.i] }

func (p *pelIndex) next(c pelCursor) pelCursor {
	c.i++
	if c.i == len(p.leaves[c.l].items) {
		c.l++
		c.i = 0
	}
	return c
}

func (p *pelIndex) first() pelCursor { return pelCursor{} }

func (p *pelIndex) last() pelCursor {
	l := len(p.leaves) - 1
	return pelCursor{l, len(p.leaves[l].items) - 1}
}

// seek returns the first item with an ID >= id, and whether it is id.
func (p *pelIndex) seek(id streamID) (pelCursor, bool) {
	l, _ := slices.BinarySearchFunc(p.leaves, id, func(lf *pelLeaf, t streamID) int {
		return lf.items[len(lf.items)-1].id.cmp(t)
	})
	if l == len(p.leaves) {
		return pelCursor{l, 0}, false
	}
	i, found := slices.BinarySearchFunc(p.leaves[l].items, id, func(it pelItem, t streamID) int { return it.id.cmp(t) })
	return pelCursor{l, i}, found
}

func (p *pelIndex) get(id streamID) *streamNACK {
	c, found := p.seek(id)
	if !found {
		return nil
	}
	return p.at(c).n
}

func (p *pelIndex) account(delta int64, acct *int64) {
	p.mem += delta
	*acct += delta
}

// insert adds id → n. REQUIRES: id is not present.
func (p *pelIndex) insert(id streamID, n *streamNACK, acct *int64) {
	c, _ := p.seek(id)
	p.n++
	if len(p.leaves) == 0 {
		oldCap := cap(p.leaves)
		p.leaves = append(p.leaves, &pelLeaf{items: make([]pelItem, 0, 2)})
		p.account(int64(cap(p.leaves)-oldCap)*8+pelLeafOverhead+2*pelItemSize, acct)
		c = pelCursor{}
	}
	if c.l == len(p.leaves) { // after the last item: append to the last leaf
		c.l--
		c.i = len(p.leaves[c.l].items)
	}
	lf := p.leaves[c.l]
	if len(lf.items) == pelLeafMax {
		if c.l == len(p.leaves)-1 && c.i == pelLeafMax {
			// Appending in ID order: start a new leaf, leaving this one full.
			nl := &pelLeaf{items: make([]pelItem, 0, 8)}
			nl.items = append(nl.items, pelItem{id, n})
			oldCap := cap(p.leaves)
			p.leaves = append(p.leaves, nl)
			p.account(int64(cap(p.leaves)-oldCap)*8+pelLeafOverhead+8*pelItemSize, acct)
			return
		}
		// Split in halves.
		half := pelLeafMax / 2
		nl := &pelLeaf{items: make([]pelItem, pelLeafMax-half, pelLeafMax)}
		copy(nl.items, lf.items[half:])
		clear(lf.items[half:])
		lf.items = lf.items[:half]
		oldCap := cap(p.leaves)
		p.leaves = slices.Insert(p.leaves, c.l+1, nl)
		p.account(int64(cap(p.leaves)-oldCap)*8+pelLeafOverhead+pelLeafMax*pelItemSize, acct)
		if c.i > half {
			c.l++
			c.i -= half
			lf = nl
		}
	}
	oldCap := cap(lf.items)
	lf.items = slices.Insert(lf.items, c.i, pelItem{id, n})
	if d := cap(lf.items) - oldCap; d != 0 {
		p.account(int64(d)*pelItemSize, acct)
	}
}

// delete removes id, reporting whether it was there.
func (p *pelIndex) delete(id streamID, acct *int64) bool {
	c, found := p.seek(id)
	if !found {
		return false
	}
	p.n--
	lf := p.leaves[c.l]
	lf.items = slices.Delete(lf.items, c.i, c.i+1)
	if len(lf.items) == 0 {
		p.leaves = slices.Delete(p.leaves, c.l, c.l+1)
		p.account(-(pelLeafOverhead + int64(cap(lf.items))*pelItemSize), acct)
		if len(p.leaves) == 0 {
			p.account(-int64(cap(p.leaves))*8, acct)
			p.leaves = nil
		}
		return true
	}
	// Merge with the next leaf when both are small, so that deleting most
	// items leaves few sparse leaves behind.
	if c.l+1 < len(p.leaves) {
		nx := p.leaves[c.l+1]
		if len(lf.items)+len(nx.items) <= pelLeafMax/2 {
			oldCap := cap(lf.items)
			lf.items = append(lf.items, nx.items...)
			p.leaves = slices.Delete(p.leaves, c.l+1, c.l+2)
			p.account(int64(cap(lf.items)-oldCap)*pelItemSize-(pelLeafOverhead+int64(cap(nx.items))*pelItemSize), acct)
		}
	}
	return true
}
