package keyspace

import (
	"math/bits"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/rdb"
	"github.com/svcdb/svcdb/shard/values"
)

// Snapshots (SAVE, BGSAVE): a point-in-time RDB file written while the
// shards keep serving, Dragonfly's versioned-snapshot idea on our slot array.
//
//   - Mark. WriteSnapshot holds every shard at once, as a multi-shard command
//     does, for as long as it takes to give each non-empty database a bitmap
//     with one bit per slot position holding a key (all ones up to DB.used,
//     minus the free positions), then lets go. That instant is the
//     snapshot's point in time on every shard, so a multi-shard command
//     (MSET across shards, MULTI/EXEC) is wholly in it or wholly out.
//   - Serialize. The caller's goroutine then asks each shard, database by
//     database, for a step: a control message (inspect.go) that whoever
//     holds the shard runs between command batches. A step encodes the next
//     pending keys (at most SnapshotStepKeys keys or SnapshotStepBytes
//     bytes) into a buffer, clearing their bits, and hands the buffer back
//     through a channel that always has room; the caller writes it out and
//     asks for the next step. Shards are asked in parallel within a
//     database; the databases follow each other, since the file needs each
//     database's entries after its SELECTDB.
//   - Keep the point in time. A key whose bit is still set and that is
//     about to change or go is encoded first, into its database's "early"
//     buffer, and its bit cleared: before a write command runs (its keys,
//     each on its own shard), before any deletion (DB.removeAt: DEL,
//     expiry, eviction, RENAME, COPY ... REPLACE), before a database is
//     flushed (every pending key of it), and before a blocked client is
//     served. A key created after the mark lands in a free or new slot whose
//     bit is clear (insert clears it as well), so it is not in the file. The
//     early buffer goes out with the database's next step.
//
// Invariant (per database, while a snapshot runs): a set bit means the slot
// holds the same key, with the same value and expiry, as at the point in
// time. When no snapshot runs the write path pays one nil check per command
// (Shard.snap), and the DB primitives one each (DB.snap).

// The size of one serialization step: the keys a step encodes before it
// hands its buffer back, the bytes past which it stops early, and the time
// past which it stops early (checked every snapshotClockEvery keys). A
// command for the shard waits for at most one step, so the time bound is
// what bounds that wait: 256 small strings took 116 µs at the median, but
// keys with large values (or LZF on long strings) made steps of several
// milliseconds (docs/performance.md, "The snapshot's tail, traced"). Tests
// shrink them to interleave steps with commands as finely as possible.
var (
	SnapshotStepKeys  = 256
	SnapshotStepBytes = 64 << 10
	SnapshotStepTime  = 100 * time.Microsecond
)

// snapshotClockEvery is how many keys a step encodes between two reads of
// the clock (a read costs about 20 ns; a small key about 400 ns to encode).
const snapshotClockEvery = 16

// NewSnapshotPart starts shard id's part of a snapshot: its steps answer on
// results; compress writes strings longer than 20 bytes LZF-compressed
// (rdbcompression yes).
func NewSnapshotPart(id int, results chan<- StepResult, compress bool) *SnapshotPart {
	ss := &SnapshotPart{id: id, results: results}
	if compress {
		ss.lzf = rdb.NewCompressor()
	}
	return ss
}

// Request sets what the next Step does: encode database db's entries into
// out. The driver calls it before it queues the step.
func (ss *SnapshotPart) Request(db int, out []byte) { ss.req.db, ss.req.out = db, out }

// SnapshotPart is one shard's part of a running snapshot. Everything in it
// except id, results and msg is owned by the shard's token holder; the
// driver (WriteSnapshot) writes req before it queues msg and reads results.
//
// Invariant: dbs[n] != nil ⇔ database n still has pending keys or early
// entries for this snapshot ⇔ the DB's snap points at dbs[n]; left counts
// them, and the shard's snap points here while left > 0.
type SnapshotPart struct {
	id      int
	dbs     [NumDatabases]*dbSnap
	left    int
	results chan<- StepResult
	req     struct {
		db  int
		out []byte
	}

	Keys, Early int64
	longest     time.Duration
	// lzf compresses strings longer than 20 bytes (rdbcompression yes, as
	// Redis); nil writes them as they are.
	lzf *rdb.Compressor

	// Scratch reused by every stream the shard encodes.
	stream  rdb.Stream
	fields  [][]byte
	pel     []rdb.StreamPending
	members []rdb.StreamConsumer
}

// dbSnap is one database's pending keys: bit p of pending is set while the
// key in slot p is still to be written as it was at the point in time.
// cursor is the next word of pending a step looks at; early holds entries
// encoded ahead of the cursor.
type dbSnap struct {
	ss      *SnapshotPart
	pending []uint64
	cursor  int
	early   []byte
}

// StepResult is a step's answer: the encoded entries, whether the database
// is finished on that shard, and the shard's running totals.
type StepResult struct {
	Shard       int
	Out         []byte
	Done        bool
	Keys, Early int64
	Longest     time.Duration
	Took        time.Duration // this step's time holding the shard
}

// MarkSnapshot gives each non-empty database of st its bitmap of pending
// slots for ss, adding their key and expiry counts to keys and expires and
// marking them in marked. It reports whether any database was marked (st
// then points at ss). REQUIRES: the caller holds st's shard.
func (st *Store) MarkSnapshot(ss *SnapshotPart, keys, expires *[NumDatabases]int64, marked *[NumDatabases]bool) bool {
	for n, d := range st.dbs {
		if d.index.Len() == 0 {
			continue
		}
		ds := &dbSnap{ss: ss, pending: make([]uint64, (d.used+63)/64)}
		for w := range ds.pending {
			ds.pending[w] = ^uint64(0)
		}
		if r := d.used % 64; r != 0 {
			ds.pending[len(ds.pending)-1] = 1<<r - 1
		}
		for _, p := range d.free {
			ds.pending[p>>6] &^= 1 << (p & 63)
		}
		keys[n] += int64(d.index.Len())
		expires[n] += int64(len(d.volatile))
		d.snap, ss.dbs[n] = ds, ds
		ss.left++
		marked[n] = true
	}
	if ss.left > 0 {
		st.snap = ss
		return true
	}
	return false
}

// DetachSnapshot clears st's and its databases' pointers to ss.
// REQUIRES: the caller holds st's shard.
func (st *Store) DetachSnapshot(ss *SnapshotPart) {
	for n, ds := range ss.dbs {
		if ds != nil && st.dbs[n].snap == ds {
			st.dbs[n].snap = nil
		}
		ss.dbs[n] = nil
	}
	ss.left = 0
	if st.snap == ss {
		st.snap = nil
	}
}

// Step is a serialization step, run by the holder of shard s as a control
// message: the early entries of the requested database, then the next
// pending keys. It never blocks: results has room for every shard's one
// outstanding answer.
func (ss *SnapshotPart) Step(s *Store) {
	t := time.Now()
	db := ss.req.db
	out := ss.req.out[:0]
	ss.req.out = nil
	done := true
	if ds := ss.dbs[db]; ds != nil {
		out = append(out, ds.early...)
		ds.early = ds.early[:0]
		d := s.dbs[db]
		out, done = ds.next(d, out, t)
		if done {
			if d.snap == ds {
				d.snap = nil
			}
			ss.dbs[db] = nil
			if ss.left--; ss.left == 0 && s.snap == ss {
				s.snap = nil
			}
		}
	}
	took := time.Since(t)
	ss.longest = max(ss.longest, took)
	ss.results <- StepResult{Shard: ss.id, Out: out, Done: done, Keys: ss.Keys, Early: ss.Early, Longest: ss.longest, Took: took}
}

// next encodes pending keys of d from the cursor on, clearing their bits,
// until the step's budget (keys, bytes, time since start) is spent; done
// reports that none is left.
func (ds *dbSnap) next(d *DB, out []byte, start time.Time) ([]byte, bool) {
	n := 0
	for ds.cursor < len(ds.pending) {
		w := ds.pending[ds.cursor]
		for w != 0 {
			b := bits.TrailingZeros64(w)
			w &= w - 1
			ds.pending[ds.cursor] = w
			pos := uint32(ds.cursor<<6 + b)
			out = ds.ss.AppendEntry(out, d.Slot(pos), d.ExpireAtSlot(pos))
			if n++; n >= SnapshotStepKeys || len(out) >= SnapshotStepBytes {
				return out, false
			}
			if n%snapshotClockEvery == 0 && time.Since(start) >= SnapshotStepTime {
				return out, false
			}
		}
		ds.cursor++
	}
	return out, true
}

// ---- hooks: keeping the point in time ------------------------------------------

// snapSave encodes the key in slot pos into the early buffer when it is
// still pending, before something changes or deletes it.
// REQUIRES: d.snap != nil; the caller holds d's shard.
func (d *DB) snapSave(pos uint32) {
	ds := d.snap
	w := int(pos >> 6)
	bit := uint64(1) << (pos & 63)
	if w >= len(ds.pending) || ds.pending[w]&bit == 0 {
		return
	}
	ds.pending[w] &^= bit
	ds.early = ds.ss.AppendEntry(ds.early, d.Slot(pos), d.ExpireAtSlot(pos))
	ds.ss.Early++
}

// snapForget clears slot pos's bit: insert puts a key created after the
// point in time there. REQUIRES: d.snap != nil.
func (d *DB) snapForget(pos uint32) {
	ds := d.snap
	if w := int(pos >> 6); w < len(ds.pending) {
		ds.pending[w] &^= 1 << (pos & 63)
	}
}

// snapFlush encodes every key of d still pending, before the whole
// database is emptied (FLUSHDB, FLUSHALL). REQUIRES: d.snap != nil.
func (d *DB) snapFlush() {
	ds := d.snap
	for w := ds.cursor; w < len(ds.pending); w++ {
		for x := ds.pending[w]; x != 0; x &= x - 1 {
			pos := uint32(w<<6 + bits.TrailingZeros64(x))
			ds.early = ds.ss.AppendEntry(ds.early, d.Slot(pos), d.ExpireAtSlot(pos))
			ds.ss.Early++
		}
		ds.pending[w] = 0
	}
}

// SnapBeforeCommand encodes the still-pending keys c's command is about to
// write, each in its own shard's database (c.single: only keys of that
// shard; else every key's shard is held). Called only while a snapshot
// runs; keys are found as Route finds them, and their shards are the ones
// Route recorded in c (Ctx.shardOf) when the command holds several.
func (c *Ctx) SnapBeforeCommand() {
	cmd := c.Cmd
	r := c.env.routes[cmd.ID]
	// The positions go into the context's kept arrays: a stack array
	// escaped through KeysWithFlags, one allocation per write command
	// while a snapshot ran (enough to start GC cycles during a BGSAVE
	// under load). The results are never kept: a key spec's function may
	// return a slice of its own.
	if c.snapKeys == nil {
		c.snapKeys, c.snapFlags = make([]int, 0, 16), make([]command.KeyFlag, 0, 16)
	}
	var keys []int
	switch {
	case r.kind == RouteSubKey || r.kind == RouteKeyedSub:
		// A container (XGROUP ...): its subcommand's flags decide.
		if len(c.Args) > 2 {
			if sub := c.Effective(); sub != cmd && sub.Flags&command.FlagWrite != 0 {
				keys = append(c.snapKeys[:0], 2)
			}
		}
	case cmd.Flags&command.FlagWrite == 0:
		return
	case cmd.Flags&command.FlagMovableKeys != 0 || r.kind == RouteKeySpecs:
		keys, _, _ = cmd.KeysWithFlags(c.Args, c.snapKeys[:0], c.snapFlags[:0])
	default:
		keys = cmd.Keys(c.Args, c.snapKeys[:0])
	}
	for _, i := range keys {
		key := c.Args[i]
		s := c.single
		if s == nil {
			s = c.env.stores[c.shardOf(key)] // as Route recorded it
		} else if c.env.shardOf(key) != s.id {
			continue
		}
		d := s.dbs[c.DB]
		if d.snap == nil {
			continue
		}
		if o, pos := d.Find(key); o != nil {
			d.snapSave(pos)
		}
	}
}

// ---- encoding one key ----------------------------------------------------------

// AppendEntry appends o as one RDB entry (expiry, type, key, value) to dst,
// walking its structure directly: strings as they are (integers through
// AppendInt), lists head to tail, sets, hashes, sorted sets with binary
// scores (TypeZSet2) and streams (TypeStreamListpacks2). A key already
// expired is written too, with its time; loaders skip it. expireAt is
// the key's expiry (unix ms; 0 for none: DB.ExpireAtSlot).
func (ss *SnapshotPart) AppendEntry(dst []byte, o *Object, expireAt int64) []byte {
	typ, ok := rdbType(o)
	if !ok {
		return dst // an empty slot: nothing written (never reached while the invariant holds)
	}
	ss.Keys++
	dst = rdb.AppendKey(dst, typ, values.KeyBytes(o.Key()), expireAt)
	return ss.appendValue(dst, o)
}

// AppendDumpPayload appends DUMP's payload for o (Redis' createDumpPayload):
// its RDB type byte and value as AppendEntry writes them, then the RDB
// version and the CRC64. ss may be any SnapshotPart (DumpEncoder's): only
// its compressor and scratch are used.
func (ss *SnapshotPart) AppendDumpPayload(dst []byte, o *Object) []byte {
	typ, _ := rdbType(o)
	start := len(dst)
	dst = append(dst, typ)
	dst = ss.appendValue(dst, o)
	return rdb.AppendDumpFooter(dst, start)
}

// DumpEncoder returns the SnapshotPart of d's store that encodes single
// values for DUMP (AppendDumpPayload), made at the first call; it
// compresses strings longer than 20 bytes with LZF as Redis' DUMP does
// under rdbcompression yes. Only the holder of d's shard may use it.
func (d *DB) DumpEncoder() *SnapshotPart {
	if d.owner == nil {
		return &SnapshotPart{lzf: rdb.NewCompressor()}
	}
	if d.owner.dumpEnc == nil {
		d.owner.dumpEnc = &SnapshotPart{lzf: rdb.NewCompressor()}
	}
	return d.owner.dumpEnc
}

// rdbType is the RDB type AppendEntry writes o's value as.
func rdbType(o *Object) (byte, bool) {
	switch o.Kind {
	case KindString:
		return rdb.TypeString, true
	case KindList:
		return rdb.TypeList, true
	case KindSet:
		return rdb.TypeSet, true
	case KindZSet:
		return rdb.TypeZSet2, true
	case KindHash:
		return rdb.TypeHash, true
	case KindStream:
		return rdb.TypeStreamListpacks2, true
	}
	return 0, false
}

// appendValue appends o's value, the part of an entry after its key.
func (ss *SnapshotPart) appendValue(dst []byte, o *Object) []byte {
	switch o.Kind {
	case KindString:
		if o.Enc == EncInt {
			return rdb.AppendInt(dst, o.Int())
		}
		return ss.lzf.AppendString(dst, o.Bytes())
	case KindList:
		n := ListLen(o)
		dst = rdb.AppendLen(dst, uint64(n))
		if n > 0 {
			it := ListIterAt(o, 0, false)
			for range n {
				dst = ss.lzf.AppendString(dst, it.Next())
			}
		}
		return dst
	case KindSet:
		n := SetLen(o)
		dst = rdb.AppendLen(dst, uint64(n))
		if o.Enc == EncIntset {
			for i := range n {
				dst = rdb.AppendInt(dst, values.IntsetGet(o.Bytes(), i))
			}
			return dst
		}
		// A listpack set is written as a hash table's would be: Redis 7.0
		// has no RDB_TYPE_SET_LISTPACK.
		for it := NewSetIter(o); ; {
			m, ok := it.Next()
			if !ok {
				return dst
			}
			dst = ss.lzf.AppendString(dst, m.Str)
		}
	case KindZSet:
		dst = rdb.AppendLen(dst, uint64(ZSetLen(o)))
		if o.Enc == EncListpack {
			lp := o.Bytes()
			for off := listpack.First; off < len(lp); {
				m, score, next := values.ZlAt(lp, off)
				dst = ss.lzf.AppendString(dst, m)
				dst = rdb.AppendBinaryDouble(dst, score)
				off = next
			}
			return dst
		}
		sl := o.Coll().(*values.Skiplist)
		for x := sl.First(); x != 0; x = sl.Next(x) {
			dst = ss.lzf.AppendString(dst, values.MemberBytes(sl.Member(x)))
			dst = rdb.AppendBinaryDouble(dst, sl.Score(x))
		}
		return dst
	case KindHash:
		dst = rdb.AppendLen(dst, uint64(HashLen(o)))
		it := NewHashIter(o)
		for {
			f, v, ok := it.Next()
			if !ok {
				return dst
			}
			dst = ss.lzf.AppendString(dst, f)
			dst = ss.lzf.AppendString(dst, v)
		}
	case KindStream:
		return rdb.AppendStream(dst, ss.neutralStream(o.Coll().(*values.Stream)))
	}
	return dst
}

// neutralStream describes s as package rdb's Stream, in ss's reused
// scratch: its live entries (fields and values point into s's blocks), IDs
// and counters, groups with their PELs and consumers. The result is valid
// until s changes or ss encodes another stream.
func (ss *SnapshotPart) neutralStream(s *values.Stream) *rdb.Stream {
	st := &ss.stream
	st.Entries = st.Entries[:0]
	ss.fields = ss.fields[:0]
	for _, b := range s.Blocks {
		for i := range b.Ents {
			e := &b.Ents[i]
			if e.Flags&values.EntryDeleted != 0 {
				continue
			}
			start := len(ss.fields)
			for it := b.Fields(e); ; {
				f, v, ok := it.Next()
				if !ok {
					break
				}
				ss.fields = append(ss.fields, f, v)
			}
			end := len(ss.fields)
			st.Entries = append(st.Entries, rdb.StreamEntry{ID: rdbID(e.Id), Fields: ss.fields[start:end:end]})
		}
	}
	st.Length = uint64(s.Length)
	st.LastID = rdbID(s.LastID)
	st.FirstID = rdbID(s.FirstID)
	st.MaxDeletedID = rdbID(s.MaxDeleted)
	st.EntriesAdded = uint64(s.EntriesAdded)
	st.Groups = st.Groups[:0]
	ss.pel = ss.pel[:0]
	ss.members = ss.members[:0]
	for _, g := range s.Groups {
		ps, cs := len(ss.pel), len(ss.members)
		for cur := g.Pel.First(); cur.Valid(&g.Pel); cur = g.Pel.Next(cur) {
			it := g.Pel.At(cur)
			ss.pel = append(ss.pel, rdb.StreamPending{ID: rdbID(it.Id), DeliveryTime: it.N.DeliveryTime,
				DeliveryCount: uint64(it.N.DeliveryCount), Consumer: values.MemberBytes(it.N.Consumer.Name)})
		}
		for _, c := range g.Consumers {
			ss.members = append(ss.members, rdb.StreamConsumer{Name: values.MemberBytes(c.Name), SeenTime: c.SeenTime})
		}
		pe, ce := len(ss.pel), len(ss.members)
		st.Groups = append(st.Groups, rdb.StreamGroup{Name: values.MemberBytes(g.Name), LastID: rdbID(g.LastID),
			EntriesRead: g.EntriesRead, PEL: ss.pel[ps:pe:pe], Consumers: ss.members[cs:ce:ce]})
	}
	return st
}

func rdbID(id values.StreamID) rdb.StreamID { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }

// ---- Dirty ------------------------------------------------------------------
