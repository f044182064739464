package values

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svcdb/svcdb/core/resp"
)

// ---- IDs ---------------------------------------------------------------------

// StreamID is a stream entry ID, <ms>-<seq>, ordered by ms then seq.
type StreamID struct{ Ms, Seq uint64 }

var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Cmp compares a and b: -1, 0 or +1.
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports whether a sorts before b.
func (a StreamID) Less(b StreamID) bool { return a.Ms < b.Ms || a.Ms == b.Ms && a.Seq < b.Seq }

// IsZero reports whether a is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr sets id to its successor (Redis' streamIncrID); at the largest ID it
// wraps to 0-0 and reports false.
func (a *StreamID) Incr() bool {
	switch {
	case a.Seq < math.MaxUint64:
		a.Seq++
	case a.Ms < math.MaxUint64:
		a.Ms++
		a.Seq = 0
	default:
		*a = StreamID{}
		return false
	}
	return true
}

// Decr sets id to its predecessor (streamDecrID); at 0-0 it wraps to the
// largest ID and reports false.
func (a *StreamID) Decr() bool {
	switch {
	case a.Seq > 0:
		a.Seq--
	case a.Ms > 0:
		a.Ms--
		a.Seq = math.MaxUint64
	default:
		*a = MaxStreamID
		return false
	}
	return true
}

// AppendStreamID appends id as <ms>-<seq>.
func AppendStreamID(dst []byte, id StreamID) []byte {
	dst = strconv.AppendUint(dst, id.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, id.Seq, 10)
}

// UintLen is the number of decimal digits of v.
func UintLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
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
	for i < len(s) && IsCSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return 0, false
	}
	return ParseStrtoul(s[i:]) // the sign and digits, read as strtoul does
}

// ParseStreamID is Redis' streamGenericParseIDOrReply without the reply:
// "-" and "+" (unless strict), <ms>-<seq>, or <ms> alone (seq = missingSeq).
// With seqGiven non-nil (XADD) "<ms>-*" is accepted too and *seqGiven tells
// whether the sequence was given.
func ParseStreamID(b []byte, missingSeq uint64, strict bool, seqGiven *bool) (StreamID, bool) {
	if len(b) > 127 {
		return StreamID{}, false
	}
	if i := slices.Index(b, 0); i >= 0 { // Redis parses a C string copy
		b = b[:i]
	}
	if strict && len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		return StreamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(b) == 1 && b[0] == '-' {
		return StreamID{}, true
	}
	if len(b) == 1 && b[0] == '+' {
		return MaxStreamID, true
	}
	var id StreamID
	var ok bool
	dash := slices.Index(b, '-')
	if dash < 0 {
		if id.Ms, ok = parseULL(b); !ok {
			return StreamID{}, false
		}
		id.Seq = missingSeq
		return id, true
	}
	if id.Ms, ok = parseULL(b[:dash]); !ok {
		return StreamID{}, false
	}
	rest := b[dash+1:]
	if seqGiven != nil && len(rest) == 1 && rest[0] == '*' {
		*seqGiven = false
		return id, true
	}
	if id.Seq, ok = parseULL(rest); !ok {
		return StreamID{}, false
	}
	return id, true
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
const StreamListpackMaxSize = 1 << 30

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

// ListpackIntSize is the bytes Redis' listpack takes for integer v, backlen
// included.
func ListpackIntSize(v int64) int {
	n := lpIntEncSize(v)
	return n + ListpackBacklenSize(n)
}

// ListpackStrSize is the bytes Redis' listpack takes for element b (as an
// integer when it reads as one), backlen included.
func ListpackStrSize(b []byte) int {
	if v, ok := resp.ParseInt(b); ok {
		return ListpackIntSize(v)
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
	return n + ListpackBacklenSize(n)
}

// ---- entries and blocks ------------------------------------------------------

const (
	EntryDeleted    = 1 << 0 // a tombstone (Redis' STREAM_ITEM_FLAG_DELETED)
	EntrySameFields = 1 << 1 // fields are the block's master fields; only values stored
)

// StreamEntry is one entry of a block. Its fields and values live in the
// block's data from off on.
type StreamEntry struct {
	Id    StreamID
	Off   uint32
	Nf    uint32 // field-value pairs
	Flags uint8
}

const StreamEntrySize = 32 // unsafe.Sizeof(streamEnt{})

// StreamBlock is one node of a stream, the counterpart of one listpack in
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
type StreamBlock struct {
	Master  StreamID
	Ents    []StreamEntry
	Data    []byte
	NMaster uint32
	Live    int64
	Dead    int64
	lpBase  int64
}

const StreamBlockOverhead = 96

// LpBytes is the size the block would have as a Redis stream listpack.
func (b *StreamBlock) LpBytes() int64 {
	return b.lpBase + int64(ListpackIntSize(b.Live)+ListpackIntSize(b.Dead))
}

func (b *StreamBlock) memory() int64 {
	return StreamBlockOverhead + int64(cap(b.Ents))*StreamEntrySize + int64(cap(b.Data))
}

func appendStr(dst, s []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// NextStr splits the length-prefixed string at the start of b from the rest.
func NextStr(b []byte) (s, rest []byte) {
	n, w := binary.Uvarint(b)
	end := w + int(n)
	return b[w:end:end], b[end:]
}

// EntryFields walks an entry's field, value pairs: the fields from the
// block's master record when the entry has the same fields, else from its
// own record. The slices point into the block.
type EntryFields struct {
	master, rec []byte
	same        bool
	left        uint32
}

// Fields returns an iterator over e's field/value pairs.
func (b *StreamBlock) Fields(e *StreamEntry) EntryFields {
	return EntryFields{master: b.Data, rec: b.Data[e.Off:], same: e.Flags&EntrySameFields != 0, left: e.Nf}
}

// Next returns the next pair; ok is false after the last.
func (it *EntryFields) Next() (f, v []byte, ok bool) {
	if it.left == 0 {
		return nil, nil, false
	}
	it.left--
	if it.same {
		f, it.master = NextStr(it.master)
	} else {
		f, it.rec = NextStr(it.rec)
	}
	v, it.rec = NextStr(it.rec)
	return f, v, true
}

// sameFields reports whether fv's fields are the block's master fields.
func (b *StreamBlock) sameFields(fv [][]byte) bool {
	if uint32(len(fv)/2) != b.NMaster {
		return false
	}
	m := b.Data
	for i := 0; i < len(fv); i += 2 {
		var f []byte
		f, m = NextStr(m)
		if string(f) != string(fv[i]) {
			return false
		}
	}
	return true
}

// ---- the stream ------------------------------------------------------------

// Stream is a stream value (o.Coll() with EncStream): its entries in blocks
// ordered by ID, and its consumer groups.
//
// Invariants: blocks are sorted by master ID and every entry of blocks[i] is
// below blocks[i+1].master; length is the number of live entries; lastID is
// at least every ID ever added; firstID is the first live entry's ID (0-0
// when empty); maxDeleted is the largest ID XDEL removed; groups are sorted
// by name; mem is memory() and every mutator keeps it current.
type Stream struct {
	Blocks       []*StreamBlock
	Length       int64
	LastID       StreamID
	FirstID      StreamID
	MaxDeleted   StreamID
	EntriesAdded int64
	Groups       []*StreamGroup
	Mem          int64
}

const StreamOverhead = 128

// NewStream returns an empty stream.
func NewStream() *Stream { return &Stream{Mem: StreamOverhead} }

// Memory is the bytes the stream holds (see Collection).
func (s *Stream) Memory() int64 { return s.Mem }

// StreamPos addresses an entry: block b, entry e. b < 0 or b >= len(blocks)
// is "none".
type StreamPos struct{ B, E int }

// Valid reports whether p is a position in the stream (not off its ends).
func (s *Stream) Valid(p StreamPos) bool { return p.B >= 0 && p.B < len(s.Blocks) }

// Ent returns the entry at p. REQUIRES: Valid(p).
func (s *Stream) Ent(p StreamPos) *StreamEntry { return &s.Blocks[p.B].Ents[p.E] }

// Next returns the position after p, live or deleted.
func (s *Stream) Next(p StreamPos) StreamPos {
	p.E++
	if p.E == len(s.Blocks[p.B].Ents) {
		p.B++
		p.E = 0
	}
	return p
}

// Prev returns the position before p, live or deleted.
func (s *Stream) Prev(p StreamPos) StreamPos {
	p.E--
	if p.E < 0 {
		p.B--
		if p.B >= 0 {
			p.E = len(s.Blocks[p.B].Ents) - 1
		}
	}
	return p
}

// blockFor returns the index of the last block whose master ID is <= id, or
// -1 (Redis' raxSeek "<=").
func (s *Stream) blockFor(id StreamID) int {
	lo, hi := 0, len(s.Blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if id.Less(s.Blocks[m].Master) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// SeekGE returns the position of the first entry (tombstones included) with
// an ID >= id.
func (s *Stream) SeekGE(id StreamID) StreamPos {
	k := s.blockFor(id)
	if k < 0 {
		return StreamPos{0, 0}
	}
	ents := s.Blocks[k].Ents
	e, _ := slices.BinarySearchFunc(ents, id, func(x StreamEntry, t StreamID) int { return x.Id.Cmp(t) })
	if e == len(ents) {
		return StreamPos{k + 1, 0}
	}
	return StreamPos{k, e}
}

// SeekLE returns the position of the last entry with an ID <= id.
func (s *Stream) SeekLE(id StreamID) StreamPos {
	k := s.blockFor(id)
	if k < 0 {
		return StreamPos{-1, 0}
	}
	ents := s.Blocks[k].Ents
	e, found := slices.BinarySearchFunc(ents, id, func(x StreamEntry, t StreamID) int { return x.Id.Cmp(t) })
	if !found {
		e--
	}
	return StreamPos{k, e}
}

// Find returns the position of the live entry id.
func (s *Stream) Find(id StreamID) (StreamPos, bool) {
	p := s.SeekGE(id)
	if !s.Valid(p) {
		return p, false
	}
	e := s.Ent(p)
	return p, e.Id == id && e.Flags&EntryDeleted == 0
}

// firstLive returns the first live entry at or after p.
func (s *Stream) firstLive(p StreamPos) StreamPos {
	for s.Valid(p) && s.Ent(p).Flags&EntryDeleted != 0 {
		p = s.Next(p)
	}
	return p
}

// LastValidID is streamLastValidID: the last live entry's ID (0-0 if none).
func (s *Stream) LastValidID() StreamID {
	p := StreamPos{len(s.Blocks) - 1, 0}
	if p.B >= 0 {
		p.E = len(s.Blocks[p.B].Ents) - 1
	}
	for ; s.Valid(p); p = s.Prev(p) {
		if e := s.Ent(p); e.Flags&EntryDeleted == 0 {
			return e.Id
		}
	}
	return StreamID{}
}

// FieldsLen is the total length of fv's strings (Redis' totelelen).
func FieldsLen(fv [][]byte) int {
	n := 0
	for _, b := range fv {
		n += len(b)
	}
	return n
}

// Append adds an entry with ID id (already checked to be > lastID) and the
// field-value pairs fv, opening a block where Redis opens a listpack.
func (s *Stream) Append(id StreamID, fv [][]byte, nodeMaxEntries int64) {
	var b *StreamBlock
	if n := len(s.Blocks); n > 0 {
		b = s.Blocks[n-1]
		if b.LpBytes()+int64(FieldsLen(fv)) >= streamNodeMaxBytes ||
			nodeMaxEntries > 0 && b.Live+b.Dead >= nodeMaxEntries {
			b = nil
		}
	}
	flags := uint8(0)
	if b == nil {
		b = &StreamBlock{Master: id, NMaster: uint32(len(fv) / 2)}
		size := 0
		for i := 0; i < len(fv); i += 2 {
			size += binary.MaxVarintLen32 + len(fv[i])
		}
		for i := 1; i < len(fv); i += 2 {
			size += binary.MaxVarintLen32 + len(fv[i])
		}
		b.Data = make([]byte, 0, max(size, 64))
		b.Ents = make([]StreamEntry, 0, 4)
		b.lpBase = 7 + int64(ListpackIntSize(int64(len(fv)/2))+ListpackIntSize(0))
		for i := 0; i < len(fv); i += 2 {
			b.Data = appendStr(b.Data, fv[i])
			b.lpBase += int64(ListpackStrSize(fv[i]))
		}
		oldCap := cap(s.Blocks)
		s.Blocks = append(s.Blocks, b)
		s.Mem += int64(cap(s.Blocks)-oldCap)*8 + b.memory()
		flags = EntrySameFields
	} else if b.sameFields(fv) {
		flags = EntrySameFields
	}
	before := b.memory()
	e := StreamEntry{Id: id, Off: uint32(len(b.Data)), Nf: uint32(len(fv) / 2), Flags: flags}
	lp := ListpackIntSize(int64(flags)) + ListpackIntSize(int64(id.Ms-b.Master.Ms)) + ListpackIntSize(int64(id.Seq-b.Master.Seq))
	lpCount := int64(len(fv)/2) + 3
	if flags&EntrySameFields != 0 {
		for i := 1; i < len(fv); i += 2 {
			b.Data = appendStr(b.Data, fv[i])
			lp += ListpackStrSize(fv[i])
		}
	} else {
		lp += ListpackIntSize(int64(len(fv) / 2))
		for _, x := range fv {
			b.Data = appendStr(b.Data, x)
			lp += ListpackStrSize(x)
		}
		lpCount += int64(len(fv)/2) + 1
	}
	lp += ListpackIntSize(lpCount)
	b.lpBase += int64(lp)
	b.Ents = append(b.Ents, e)
	b.Live++
	s.Mem += b.memory() - before
	s.Length++
	s.EntriesAdded++
	s.LastID = id
	if s.Length == 1 {
		s.FirstID = id
	}
}

// removeBlock drops block k with all its entries.
func (s *Stream) removeBlock(k int) {
	b := s.Blocks[k]
	s.Mem -= b.memory()
	s.Length -= b.Live
	if k == 0 {
		// Trimming takes blocks from the front: reslice, the next append
		// that reallocates drops the old prefix.
		s.Blocks[0] = nil
		s.Blocks = s.Blocks[1:]
		s.Mem -= 8 // the slot stops counting towards cap(s.blocks)
		return
	}
	s.Blocks = slices.Delete(s.Blocks, k, k+1)
}

// delete marks the live entry at p deleted (Redis' streamIteratorRemoveEntry):
// the block goes when it was its last live entry.
func (s *Stream) delete(p StreamPos) {
	b := s.Blocks[p.B]
	if b.Live == 1 {
		s.removeBlock(p.B)
		return
	}
	b.Ents[p.E].Flags |= EntryDeleted
	b.Live--
	b.Dead++
	s.Length--
}

// DeleteID is XDEL of one ID, with Redis' bookkeeping of the first and the
// largest deleted ID left to the caller.
func (s *Stream) DeleteID(id StreamID) bool {
	p, ok := s.Find(id)
	if !ok {
		return false
	}
	s.delete(p)
	return true
}

// RefreshFirstID recomputes firstID (streamGetEdgeID skipping tombstones).
func (s *Stream) RefreshFirstID() {
	if s.Length == 0 {
		s.FirstID = StreamID{}
		return
	}
	if p := s.firstLive(StreamPos{0, 0}); s.Valid(p) {
		s.FirstID = s.Ent(p).Id
	}
}

const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// TrimArgs are the trimming options of XADD and XTRIM.
type TrimArgs struct {
	Strategy int
	Approx   bool
	Limit    int64
	MaxLen   int64
	MinID    StreamID
	ArgIdx   int // index of the threshold argument
}

// Trim is Redis' streamTrim: whole blocks go from the head while they can;
// with approx it stops at the first block it cannot drop whole, else it
// marks entries of that block deleted. It returns how many entries went.
func (s *Stream) Trim(a *TrimArgs) int64 {
	if a.Strategy == TrimNone {
		return 0
	}
	var deleted int64
	for len(s.Blocks) > 0 {
		if a.Strategy == TrimMaxLen && s.Length <= a.MaxLen {
			break
		}
		b := s.Blocks[0]
		entries := b.Live
		if a.Limit != 0 && deleted+entries > a.Limit {
			break
		}
		var remove bool
		if a.Strategy == TrimMaxLen {
			remove = s.Length-entries >= a.MaxLen
		} else {
			remove = b.Ents[len(b.Ents)-1].Id.Less(a.MinID)
		}
		if remove {
			s.removeBlock(0)
			deleted += entries
			continue
		}
		if a.Approx {
			break
		}
		for i := range b.Ents {
			e := &b.Ents[i]
			if a.Strategy == TrimMaxLen && s.Length <= a.MaxLen ||
				a.Strategy == TrimMinID && !e.Id.Less(a.MinID) {
				break
			}
			if e.Flags&EntryDeleted == 0 {
				e.Flags |= EntryDeleted
				b.Live--
				b.Dead++
				s.Length--
				deleted++
			}
		}
		break
	}
	if s.Length == 0 {
		s.FirstID = StreamID{}
	} else if deleted > 0 {
		s.RefreshFirstID()
	}
	return deleted
}

// ---- consumer groups -------------------------------------------------------

// StreamNACK is a pending entry: delivered to consumer, not yet acknowledged.
type StreamNACK struct {
	DeliveryTime  int64
	DeliveryCount int64
	Consumer      *StreamConsumer
}

const StreamNACKSize = 32

// StreamConsumer is one consumer of a group. Its pel holds the group's NACKs
// whose consumer it is (the same pointers), by ID.
type StreamConsumer struct {
	Name     string
	SeenTime int64
	Pel      PELIndex
}

const StreamConsumerOverhead = 96

// StreamGroup is a consumer group. Invariants: pel holds every NACK of the
// group and each is in exactly its consumer's pel too; consumers are sorted
// by name; entriesRead is -1 when unknown.
type StreamGroup struct {
	Name        string
	LastID      StreamID
	EntriesRead int64
	Pel         PELIndex
	Consumers   []*StreamConsumer
}

const StreamGroupOverhead = 128

// Group returns the consumer group named name, or nil.
func (s *Stream) Group(name []byte) *StreamGroup {
	i, ok := slices.BinarySearchFunc(s.Groups, name, func(g *StreamGroup, n []byte) int { return strings.Compare(g.Name, string(n)) })
	if !ok {
		return nil
	}
	return s.Groups[i]
}

// CreateGroup adds a group, or returns nil when the name is taken.
func (s *Stream) CreateGroup(name []byte, last StreamID, entriesRead int64) *StreamGroup {
	i, ok := slices.BinarySearchFunc(s.Groups, name, func(g *StreamGroup, n []byte) int { return strings.Compare(g.Name, string(n)) })
	if ok {
		return nil
	}
	g := &StreamGroup{Name: string(name), LastID: last, EntriesRead: entriesRead}
	oldCap := cap(s.Groups)
	s.Groups = slices.Insert(s.Groups, i, g)
	s.Mem += int64(cap(s.Groups)-oldCap)*8 + StreamGroupOverhead + int64(len(g.Name))
	return g
}

// DestroyGroup removes g and accounts for its memory.
func (s *Stream) DestroyGroup(g *StreamGroup) {
	i, _ := slices.BinarySearchFunc(s.Groups, g.Name, func(x *StreamGroup, n string) int { return strings.Compare(x.Name, n) })
	s.Groups = slices.Delete(s.Groups, i, i+1)
	s.Mem -= g.memory()
}

// memory is what destroying g gives back.
func (g *StreamGroup) memory() int64 {
	n := StreamGroupOverhead + int64(len(g.Name)) + int64(cap(g.Consumers))*8 + g.Pel.Mem + int64(g.Pel.N)*StreamNACKSize
	for _, c := range g.Consumers {
		n += StreamConsumerOverhead + int64(len(c.Name)) + c.Pel.Mem
	}
	return n
}

// Consumer returns g's consumer named name, or nil.
func (g *StreamGroup) Consumer(name []byte) *StreamConsumer {
	i, ok := slices.BinarySearchFunc(g.Consumers, name, func(c *StreamConsumer, n []byte) int { return strings.Compare(c.Name, string(n)) })
	if !ok {
		return nil
	}
	return g.Consumers[i]
}

// CreateConsumer adds a consumer, or returns nil when the name is taken.
func (s *Stream) CreateConsumer(g *StreamGroup, name []byte, now int64) *StreamConsumer {
	i, ok := slices.BinarySearchFunc(g.Consumers, name, func(c *StreamConsumer, n []byte) int { return strings.Compare(c.Name, string(n)) })
	if ok {
		return nil
	}
	c := &StreamConsumer{Name: string(name), SeenTime: now}
	oldCap := cap(g.Consumers)
	g.Consumers = slices.Insert(g.Consumers, i, c)
	s.Mem += int64(cap(g.Consumers)-oldCap)*8 + StreamConsumerOverhead + int64(len(c.Name))
	return c
}

// DeleteConsumer removes c and its pending entries from g.
func (s *Stream) DeleteConsumer(g *StreamGroup, c *StreamConsumer) {
	for cur := c.Pel.First(); cur.Valid(&c.Pel); cur = c.Pel.Next(cur) {
		g.Pel.Delete(c.Pel.At(cur).Id, &s.Mem)
		s.Mem -= StreamNACKSize
	}
	i, _ := slices.BinarySearchFunc(g.Consumers, c.Name, func(x *StreamConsumer, n string) int { return strings.Compare(x.Name, n) })
	g.Consumers = slices.Delete(g.Consumers, i, i+1)
	s.Mem -= StreamConsumerOverhead + int64(len(c.Name)) + c.Pel.Mem
}

// Ack removes id from g's PEL and its consumer's.
func (s *Stream) Ack(g *StreamGroup, id StreamID) bool {
	n := g.Pel.Get(id)
	if n == nil {
		return false
	}
	g.Pel.Delete(id, &s.Mem)
	n.Consumer.Pel.Delete(id, &s.Mem)
	s.Mem -= StreamNACKSize
	return true
}

// AddNACK creates a pending entry for id owned by c, delivered at now, or
// (when id is already pending) hands it to c with a count of 1.
func (s *Stream) AddNACK(g *StreamGroup, c *StreamConsumer, id StreamID, now int64) {
	if n := g.Pel.Get(id); n != nil {
		n.Consumer.Pel.Delete(id, &s.Mem)
		n.Consumer = c
		n.DeliveryTime = now
		n.DeliveryCount = 1
		c.Pel.Insert(id, n, &s.Mem)
		return
	}
	n := &StreamNACK{DeliveryTime: now, DeliveryCount: 1, Consumer: c}
	g.Pel.Insert(id, n, &s.Mem)
	c.Pel.Insert(id, n, &s.Mem)
	s.Mem += StreamNACKSize
}

// ---- lag and the entries-read counter (Redis 7.0) ----------------------------

// rangeHasTombstones is streamRangeHasTombstones with end = +inf.
func (s *Stream) rangeHasTombstones(start StreamID) bool {
	if s.Length == 0 || s.MaxDeleted.IsZero() {
		return false
	}
	if s.FirstID.Cmp(s.MaxDeleted) > 0 {
		return false
	}
	return start.Cmp(s.MaxDeleted) <= 0
}

// estimateDistance is streamEstimateDistanceFromFirstEverEntry: id's logical
// read counter, or -1 when it cannot be known.
func (s *Stream) estimateDistance(id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.Length == 0 && id.Cmp(s.LastID) < 1 {
		return s.EntriesAdded
	}
	cmpLast := id.Cmp(s.LastID)
	if cmpLast == 0 {
		return s.EntriesAdded
	} else if cmpLast > 0 {
		return -1
	}
	cmpFirst := id.Cmp(s.FirstID)
	if s.MaxDeleted.IsZero() || s.MaxDeleted.Less(s.FirstID) {
		if cmpFirst < 0 {
			return s.EntriesAdded - s.Length
		} else if cmpFirst == 0 {
			return s.EntriesAdded - s.Length + 1
		}
	}
	return -1
}

// Lag is streamReplyWithCGLag's value; ok false means null.
func (s *Stream) Lag(g *StreamGroup) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != -1 && !s.rangeHasTombstones(g.LastID) {
		return s.EntriesAdded - g.EntriesRead, true
	}
	if r := s.estimateDistance(g.LastID); r != -1 {
		return s.EntriesAdded - r, true
	}
	return 0, false
}

// Delivered updates g's last ID and read counter for an entry it is served
// (the group part of streamReplyWithRange).
func (s *Stream) Delivered(g *StreamGroup, id StreamID) {
	if id.Cmp(g.LastID) <= 0 {
		return
	}
	if g.EntriesRead != -1 && !s.rangeHasTombstones(id) {
		g.EntriesRead++
	} else if s.EntriesAdded != 0 {
		g.EntriesRead = s.estimateDistance(id)
	}
	g.LastID = id
}

// ---- the radix tree's shape ------------------------------------------------

// RaxNodes is the node count of the radix tree Redis would hold for these
// block keys (XINFO STREAM radix-tree-nodes): a compressed trie of the
// 16-byte big-endian IDs.
func (s *Stream) RaxNodes() int64 {
	if len(s.Blocks) == 0 {
		return 1
	}
	keys := make([][16]byte, len(s.Blocks))
	for i, b := range s.Blocks {
		binary.BigEndian.PutUint64(keys[i][:8], b.Master.Ms)
		binary.BigEndian.PutUint64(keys[i][8:], b.Master.Seq)
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

// Clone returns a deep copy (COPY).
func (s *Stream) Clone() Collection {
	n := &Stream{
		Length: s.Length, LastID: s.LastID, FirstID: s.FirstID, MaxDeleted: s.MaxDeleted,
		EntriesAdded: s.EntriesAdded, Mem: StreamOverhead,
	}
	n.Blocks = make([]*StreamBlock, len(s.Blocks))
	n.Mem += int64(cap(n.Blocks)) * 8
	for i, b := range s.Blocks {
		nb := *b
		nb.Ents = slices.Clone(b.Ents)
		nb.Data = slices.Clone(b.Data)
		n.Blocks[i] = &nb
		n.Mem += nb.memory()
	}
	for _, g := range s.Groups {
		ng := n.CreateGroup([]byte(g.Name), g.LastID, g.EntriesRead)
		for _, c := range g.Consumers {
			nc := n.CreateConsumer(ng, []byte(c.Name), c.SeenTime)
			for cur := c.Pel.First(); cur.Valid(&c.Pel); cur = c.Pel.Next(cur) {
				it := c.Pel.At(cur)
				nn := &StreamNACK{DeliveryTime: it.N.DeliveryTime, DeliveryCount: it.N.DeliveryCount, Consumer: nc}
				ng.Pel.Insert(it.Id, nn, &n.Mem)
				nc.Pel.Insert(it.Id, nn, &n.Mem)
				n.Mem += StreamNACKSize
			}
		}
	}
	return n
}

// ---- PEL index --------------------------------------------------------------

// PELIndex is an ordered map from entry ID to NACK: a sorted slice of small
// sorted leaves, found by binary search over the leaves' last IDs, so that
// insertions and deletions anywhere move at most one leaf's items and (on a
// split or an emptied leaf) the leaf pointers. mem is the bytes it holds
// beyond the NACKs themselves; every mutator adds its change to *acct too.
type PELIndex struct {
	leaves []*pelLeaf
	N      int
	Mem    int64
}

// PELItem is one pending entry of an index: its ID and its NACK (shared by
// the group's index and its consumer's).
type PELItem struct {
	Id StreamID
	N  *StreamNACK
}

// pelLeaf holds 1..pelLeafMax items sorted by ID, all above the previous
// leaf's and below the next one's.
type pelLeaf struct{ items []PELItem }

const (
	pelLeafMax      = 64
	pelItemSize     = 24
	pelLeafOverhead = 48
)

// PELCursor addresses item i of leaf l.
type PELCursor struct{ l, i int }

// Valid reports whether c is on an item of p.
func (c PELCursor) Valid(p *PELIndex) bool { return c.l < len(p.leaves) }

// At returns the item under c. REQUIRES: c.Valid(p).
func (p *PELIndex) At(c PELCursor) *PELItem { return &p.leaves[c.l].items[c.i] }

// Next returns the cursor on the item after c.
func (p *PELIndex) Next(c PELCursor) PELCursor {
	c.i++
	if c.i == len(p.leaves[c.l].items) {
		c.l++
		c.i = 0
	}
	return c
}

// First returns a cursor on the lowest ID.
func (p *PELIndex) First() PELCursor { return PELCursor{} }

// Last returns a cursor on the highest ID.
func (p *PELIndex) Last() PELCursor {
	l := len(p.leaves) - 1
	return PELCursor{l, len(p.leaves[l].items) - 1}
}

// Seek returns the first item with an ID >= id, and whether it is id.
func (p *PELIndex) Seek(id StreamID) (PELCursor, bool) {
	l, _ := slices.BinarySearchFunc(p.leaves, id, func(lf *pelLeaf, t StreamID) int {
		return lf.items[len(lf.items)-1].Id.Cmp(t)
	})
	if l == len(p.leaves) {
		return PELCursor{l, 0}, false
	}
	i, found := slices.BinarySearchFunc(p.leaves[l].items, id, func(it PELItem, t StreamID) int { return it.Id.Cmp(t) })
	return PELCursor{l, i}, found
}

// Get returns id's NACK, or nil.
func (p *PELIndex) Get(id StreamID) *StreamNACK {
	c, found := p.Seek(id)
	if !found {
		return nil
	}
	return p.At(c).N
}

func (p *PELIndex) account(delta int64, acct *int64) {
	p.Mem += delta
	*acct += delta
}

// Insert adds id → n. REQUIRES: id is not present.
func (p *PELIndex) Insert(id StreamID, n *StreamNACK, acct *int64) {
	c, _ := p.Seek(id)
	p.N++
	if len(p.leaves) == 0 {
		oldCap := cap(p.leaves)
		p.leaves = append(p.leaves, &pelLeaf{items: make([]PELItem, 0, 2)})
		p.account(int64(cap(p.leaves)-oldCap)*8+pelLeafOverhead+2*pelItemSize, acct)
		c = PELCursor{}
	}
	if c.l == len(p.leaves) { // after the last item: append to the last leaf
		c.l--
		c.i = len(p.leaves[c.l].items)
	}
	lf := p.leaves[c.l]
	if len(lf.items) == pelLeafMax {
		if c.l == len(p.leaves)-1 && c.i == pelLeafMax {
			// Appending in ID order: start a new leaf, leaving this one full.
			nl := &pelLeaf{items: make([]PELItem, 0, 8)}
			nl.items = append(nl.items, PELItem{id, n})
			oldCap := cap(p.leaves)
			p.leaves = append(p.leaves, nl)
			p.account(int64(cap(p.leaves)-oldCap)*8+pelLeafOverhead+8*pelItemSize, acct)
			return
		}
		// Split in halves.
		half := pelLeafMax / 2
		nl := &pelLeaf{items: make([]PELItem, pelLeafMax-half, pelLeafMax)}
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
	lf.items = slices.Insert(lf.items, c.i, PELItem{id, n})
	if d := cap(lf.items) - oldCap; d != 0 {
		p.account(int64(d)*pelItemSize, acct)
	}
}

// Delete removes id, reporting whether it was there.
func (p *PELIndex) Delete(id StreamID, acct *int64) bool {
	c, found := p.Seek(id)
	if !found {
		return false
	}
	p.N--
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

// ClaimFor gives the pending entry id (its NACK n) to cons, as XCLAIM and
// XAUTOCLAIM do once they decided to claim it.
func (s *Stream) ClaimFor(n *StreamNACK, id StreamID, cons *StreamConsumer) {
	if n.Consumer == cons {
		return
	}
	if n.Consumer != nil {
		n.Consumer.Pel.Delete(id, &s.Mem)
	}
	cons.Pel.Insert(id, n, &s.Mem)
	n.Consumer = cons
}
