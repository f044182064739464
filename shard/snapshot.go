package shard

import (
	"bufio"
	"errors"
	"io"
	"math/bits"
	"runtime"
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
//     pending keys (at most snapshotStepKeys keys or snapshotStepBytes
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

// ErrSnapshotRunning is WriteSnapshot's answer while another snapshot runs.
var ErrSnapshotRunning = errors.New("ERR Background save already in progress")

// The size of one serialization step: the keys a step encodes before it
// hands its buffer back, and the bytes past which it stops early. Tests
// shrink them to interleave steps with commands as finely as possible.
var (
	snapshotStepKeys  = 256
	snapshotStepBytes = 64 << 10
	// snapshotDuty is the share of one CPU the serialization steps may take
	// while clients are served (the driver sleeps to keep to it; an idle
	// server snapshots at full speed). Measured with svcbench persist (1M
	// keys, a fixed 62k ops/s on one CPU, docs/performance.md): at full
	// speed p99 went 3 -> 100 ms; at 0.25, 0.8 -> 4.8 ms; at 0.10, 0.9 ->
	// 1.2 ms, with BGSAVE taking 3.7 s instead of 1.4 s.
	snapshotDuty = 0.10
)

// snapshotMarked, when set (tests only), is called while every shard is held
// at the snapshot's point in time, after the marking.
var snapshotMarked func(rt *Runtime)

// SnapshotStats describes one WriteSnapshot.
type SnapshotStats struct {
	Keys, Bytes int64
	// EarlyKeys are keys serialized ahead of the cursor because a command
	// was about to change or delete them.
	EarlyKeys int64
	// LongestStep is the longest time a shard was held by one
	// serialization step.
	LongestStep time.Duration
	// Mark is how long every shard was held to mark the point in time.
	Mark     time.Duration
	Duration time.Duration
}

// shardSnap is one shard's part of a running snapshot. Everything in it
// except id, results and msg is owned by the shard's token holder; the
// driver (WriteSnapshot) writes req before it queues msg and reads results.
//
// Invariant: dbs[n] != nil ⇔ database n still has pending keys or early
// entries for this snapshot ⇔ the DB's snap points at dbs[n]; left counts
// them, and the shard's snap points here while left > 0.
type shardSnap struct {
	id      int
	dbs     [NumDatabases]*dbSnap
	left    int
	results chan<- stepResult
	req     struct {
		db  int
		out []byte
	}

	keys, early int64
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
	ss      *shardSnap
	pending []uint64
	cursor  int
	early   []byte
}

// stepResult is a step's answer: the encoded entries, whether the database
// is finished on that shard, and the shard's running totals.
type stepResult struct {
	shard       int
	out         []byte
	done        bool
	keys, early int64
	longest     time.Duration
	took        time.Duration // this step's time holding the shard
}

// WriteSnapshot writes a point-in-time RDB snapshot of every database of
// every shard to w: the header with aux, then for each non-empty database
// SELECTDB (with RESIZEDB) and its entries, then EOF and the checksum. It
// returns when the content is complete and flushed to w (the caller syncs
// and renames the file). At most one snapshot runs at a time
// (ErrSnapshotRunning otherwise). REQUIRES: the caller holds no shard token.
func (rt *Runtime) WriteSnapshot(w io.Writer, aux ...[2]string) (SnapshotStats, error) {
	return rt.WriteSnapshotAt(w, nil, aux...)
}

// WriteSnapshotAt is WriteSnapshot that also calls at (when not nil) at the
// snapshot's point in time, while every shard is held: whatever at does (an
// AOF rewrite switching to a new incremental file) happens between the last
// command in the snapshot and the first one after it. at must be short and
// must not take a shard token; when it fails, nothing is written after the
// header and its error is returned.
func (rt *Runtime) WriteSnapshotAt(w io.Writer, at func() error, aux ...[2]string) (SnapshotStats, error) {
	var st SnapshotStats
	if !rt.snapRunning.CompareAndSwap(false, true) {
		return st, ErrSnapshotRunning
	}
	defer rt.snapRunning.Store(false)
	start := time.Now()
	bw := bufio.NewWriterSize(w, 64<<10)
	wr := rdb.NewWriter(bw)
	if err := wr.Header(aux...); err != nil {
		return st, err
	}
	results := make(chan stepResult, len(rt.shards))
	m, err := rt.markSnapshot(results, at)
	st.Mark = m.hold
	if err != nil {
		return st, err
	}
	last := make([]stepResult, len(rt.shards))
	for db := range NumDatabases {
		if m.keys[db] == 0 {
			continue
		}
		if err = wr.SelectDB(db, uint64(m.keys[db]), uint64(m.expires[db])); err != nil {
			break
		}
		if err = rt.writeSnapshotDB(db, m, wr, results, last); err != nil {
			break
		}
	}
	if err != nil {
		rt.abortSnapshot(m.snaps)
		return st, err
	}
	if err = wr.End(); err == nil {
		err = bw.Flush()
	}
	for _, r := range last {
		st.Keys += r.keys
		st.EarlyKeys += r.early
		st.LongestStep = max(st.LongestStep, r.longest)
	}
	st.Bytes = wr.Written()
	st.Duration = time.Since(start)
	return st, err
}

// snapshotMark is what the marking learned: each shard's part (nil for a
// shard with no keys), which databases each shard has keys in, and the key
// and expiry counts per database at the point in time (for RESIZEDB).
type snapshotMark struct {
	snaps   []*shardSnap
	msgs    []Batch // each shard's step, a control message queued again for each step
	marked  [][NumDatabases]bool
	keys    [NumDatabases]int64
	expires [NumDatabases]int64
	hold    time.Duration
}

// markSnapshot fixes the point in time: it holds every shard and gives each
// non-empty database its bitmap of pending slots, then calls at. When at
// fails the snapshot is detached again before the shards are let go.
func (rt *Runtime) markSnapshot(results chan<- stepResult, at func() error) (*snapshotMark, error) {
	m := &snapshotMark{snaps: make([]*shardSnap, len(rt.shards)), msgs: make([]Batch, len(rt.shards)),
		marked: make([][NumDatabases]bool, len(rt.shards))}
	var all shardSet
	all.all(len(rt.shards))
	rt.holdSet(&all)
	t := time.Now()
	for i, s := range rt.shards {
		ss := &shardSnap{id: i, results: results}
		if rt.snapCompress.Load() {
			ss.lzf = rdb.NewCompressor()
		}
		m.msgs[i].shard = i
		m.msgs[i].control = func(s *Shard) { ss.step(s.store) }
		if s.store.markSnapshot(ss, &m.keys, &m.expires, &m.marked[i]) {
			m.snaps[i] = ss
		}
	}
	var err error
	if at != nil {
		err = at()
	}
	if err != nil {
		rt.detachSnapshot(m.snaps)
	}
	m.hold = time.Since(t)
	if snapshotMarked != nil {
		snapshotMarked(rt)
	}
	rt.releaseSet(&all)
	return m, err
}

// writeSnapshotDB writes database db's entries: one step at a time per
// shard, shards in parallel, each buffer written as it arrives. On a write
// error it stops asking and waits for the steps still out.
func (rt *Runtime) writeSnapshotDB(db int, m *snapshotMark, wr *rdb.Writer, results <-chan stepResult, last []stepResult) error {
	out := 0
	for i, ss := range m.snaps {
		if ss != nil && m.marked[i][db] {
			rt.queueStep(m, i, db, nil)
			out++
		}
	}
	var err error
	var pace pacer
	for out > 0 {
		r := <-results
		last[r.shard] = r
		if err == nil {
			_, err = wr.Write(r.out)
		}
		if r.done || err != nil {
			out--
			continue
		}
		pace.after(r.took, rt.commandsServed())
		rt.queueStep(m, r.shard, db, r.out[:0])
	}
	return err
}

// pacer keeps the serialization steps to snapshotDuty of a CPU: after each
// step it sleeps while the steps' total time is ahead of that share of the
// time elapsed, in sleeps of at least a millisecond.
type pacer struct {
	start    time.Time
	busy     time.Duration
	commands int64 // commands served when the previous step ended
}

// after accounts one step that took step; served is the runtime's command
// count now. Steps while no command ran count nothing: an idle server
// snapshots at full speed.
func (p *pacer) after(step time.Duration, served int64) {
	idle := served == p.commands
	p.commands = served
	if snapshotDuty >= 1 || idle {
		return
	}
	now := time.Now()
	if p.start.IsZero() {
		p.start = now.Add(-step)
	}
	p.busy += step
	ahead := time.Duration(float64(p.busy)/snapshotDuty) - now.Sub(p.start)
	if ahead >= time.Millisecond {
		time.Sleep(ahead)
		return
	}
	// Between sleeps, let a runnable event loop have the CPU first: with one
	// CPU (GOMAXPROCS 1) the loop would otherwise wait for the scheduler's
	// time slice to end.
	runtime.Gosched()
}

// queueStep asks ss's shard for the next step of database db, encoding into
// out. A full queue is offered the message again until it has room.
func (rt *Runtime) queueStep(m *snapshotMark, i, db int, out []byte) {
	ss := m.snaps[i]
	ss.req.db, ss.req.out = db, out
	for !rt.offer(rt.shards[i], &m.msgs[i]) {
		time.Sleep(50 * time.Microsecond)
	}
}

// abortSnapshot detaches a snapshot that failed half-way from every shard,
// so that the hooks stop encoding for it. No step of it is queued any more.
func (rt *Runtime) abortSnapshot(snaps []*shardSnap) {
	var all shardSet
	all.all(len(rt.shards))
	rt.holdSet(&all)
	rt.detachSnapshot(snaps)
	rt.releaseSet(&all)
}

// detachSnapshot clears every shard's and database's pointer to snaps.
// REQUIRES: every shard is held.
func (rt *Runtime) detachSnapshot(snaps []*shardSnap) {
	for i, s := range rt.shards {
		if ss := snaps[i]; ss != nil {
			s.store.detachSnapshot(ss)
		}
	}
}

// markSnapshot gives each non-empty database of st its bitmap of pending
// slots for ss, adding their key and expiry counts to keys and expires and
// marking them in marked. It reports whether any database was marked (st
// then points at ss). REQUIRES: the caller holds st's shard.
func (st *Store) markSnapshot(ss *shardSnap, keys, expires *[NumDatabases]int64, marked *[NumDatabases]bool) bool {
	for n, d := range st.dbs {
		if len(d.index) == 0 {
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
		keys[n] += int64(len(d.index))
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

// detachSnapshot clears st's and its databases' pointers to ss.
// REQUIRES: the caller holds st's shard.
func (st *Store) detachSnapshot(ss *shardSnap) {
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

// step is a serialization step, run by the holder of shard s as a control
// message: the early entries of the requested database, then the next
// pending keys. It never blocks: results has room for every shard's one
// outstanding answer.
func (ss *shardSnap) step(s *Store) {
	t := time.Now()
	db := ss.req.db
	out := ss.req.out[:0]
	ss.req.out = nil
	done := true
	if ds := ss.dbs[db]; ds != nil {
		out = append(out, ds.early...)
		ds.early = ds.early[:0]
		d := s.dbs[db]
		out, done = ds.next(d, out)
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
	ss.results <- stepResult{shard: ss.id, out: out, done: done, keys: ss.keys, early: ss.early, longest: ss.longest, took: took}
}

// next encodes pending keys of d from the cursor on, clearing their bits,
// until the step's budget is spent; done reports that none is left.
func (ds *dbSnap) next(d *DB, out []byte) ([]byte, bool) {
	n := 0
	for ds.cursor < len(ds.pending) {
		w := ds.pending[ds.cursor]
		for w != 0 {
			b := bits.TrailingZeros64(w)
			w &= w - 1
			ds.pending[ds.cursor] = w
			out = ds.ss.appendEntry(out, d.slot(uint32(ds.cursor<<6+b)))
			if n++; n >= snapshotStepKeys || len(out) >= snapshotStepBytes {
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
	ds.early = ds.ss.appendEntry(ds.early, d.slot(pos))
	ds.ss.early++
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
			ds.early = ds.ss.appendEntry(ds.early, d.slot(uint32(w<<6+bits.TrailingZeros64(x))))
			ds.ss.early++
		}
		ds.pending[w] = 0
	}
}

// snapBeforeCommand encodes the still-pending keys c's command is about to
// write, each in its own shard's database (c.single: only keys of that
// shard; else every key's shard is held). Called only while a snapshot
// runs; keys are found as Route finds them, and their shards are the ones
// Route recorded in c (Ctx.shardOf) when the command holds several.
func (c *Ctx) snapBeforeCommand() {
	cmd := c.Cmd
	r := c.env.routes[cmd.ID]
	var buf [16]int
	var keys []int
	switch {
	case r.kind == routeSubKey || r.kind == routeKeyedSub:
		// A container (XGROUP ...): its subcommand's flags decide.
		if len(c.Args) > 2 {
			if sub := c.effective(); sub != cmd && sub.Flags&command.FlagWrite != 0 {
				keys = append(buf[:0], 2)
			}
		}
	case cmd.Flags&command.FlagWrite == 0:
		return
	case cmd.Flags&command.FlagMovableKeys != 0 || r.kind == routeKeySpecs:
		var flags [16]command.KeyFlag
		keys, _, _ = cmd.KeysWithFlags(c.Args, buf[:0], flags[:0])
	default:
		keys = cmd.Keys(c.Args, buf[:0])
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
		if pos, ok := d.index[string(key)]; ok {
			d.snapSave(pos)
		}
	}
}

// ---- encoding one key ----------------------------------------------------------

// appendEntry appends o as one RDB entry (expiry, type, key, value) to dst,
// walking its structure directly: strings as they are (integers through
// AppendInt), lists head to tail, sets, hashes, sorted sets with binary
// scores (TypeZSet2) and streams (TypeStreamListpacks2). A key already
// expired is written too, with its time; loaders skip it.
func (ss *shardSnap) appendEntry(dst []byte, o *object) []byte {
	ss.keys++
	key := values.KeyBytes(o.key)
	switch o.kind {
	case KindString:
		dst = rdb.AppendKey(dst, rdb.TypeString, key, o.expireAt)
		if o.enc == encInt {
			return rdb.AppendInt(dst, o.ival)
		}
		return ss.lzf.AppendString(dst, o.str)
	case KindList:
		dst = rdb.AppendKey(dst, rdb.TypeList, key, o.expireAt)
		n := listLen(o)
		dst = rdb.AppendLen(dst, uint64(n))
		if n > 0 {
			it := listIterAt(o, 0, false)
			for range n {
				dst = ss.lzf.AppendString(dst, it.Next())
			}
		}
		return dst
	case KindSet:
		dst = rdb.AppendKey(dst, rdb.TypeSet, key, o.expireAt)
		n := setLen(o)
		dst = rdb.AppendLen(dst, uint64(n))
		if o.enc == encIntset {
			for i := range n {
				dst = rdb.AppendInt(dst, values.IntsetGet(o.str, i))
			}
			return dst
		}
		t := o.coll.(*values.HTable)
		for i := range t.Len() {
			dst = ss.lzf.AppendString(dst, t.Key(i))
		}
		return dst
	case KindZSet:
		dst = rdb.AppendKey(dst, rdb.TypeZSet2, key, o.expireAt)
		dst = rdb.AppendLen(dst, uint64(zsetLen(o)))
		if o.enc == encListpack {
			lp := o.str
			for off := listpack.First; off < len(lp); {
				m, score, next := values.ZlAt(lp, off)
				dst = ss.lzf.AppendString(dst, m)
				dst = rdb.AppendBinaryDouble(dst, score)
				off = next
			}
			return dst
		}
		sl := o.coll.(*values.Skiplist)
		for x := sl.First(); x != 0; x = sl.Next(x) {
			dst = ss.lzf.AppendString(dst, values.MemberBytes(sl.Member(x)))
			dst = rdb.AppendBinaryDouble(dst, sl.Score(x))
		}
		return dst
	case KindHash:
		dst = rdb.AppendKey(dst, rdb.TypeHash, key, o.expireAt)
		dst = rdb.AppendLen(dst, uint64(hashLen(o)))
		it := newHashIter(o)
		for {
			f, v, ok := it.next()
			if !ok {
				return dst
			}
			dst = ss.lzf.AppendString(dst, f)
			dst = ss.lzf.AppendString(dst, v)
		}
	case KindStream:
		dst = rdb.AppendKey(dst, rdb.TypeStreamListpacks2, key, o.expireAt)
		return rdb.AppendStream(dst, ss.neutralStream(o.coll.(*values.Stream)))
	}
	ss.keys-- // an empty slot: nothing written (never reached while the invariant holds)
	return dst
}

// neutralStream describes s as package rdb's Stream, in ss's reused
// scratch: its live entries (fields and values point into s's blocks), IDs
// and counters, groups with their PELs and consumers. The result is valid
// until s changes or ss encodes another stream.
func (ss *shardSnap) neutralStream(s *values.Stream) *rdb.Stream {
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

// Dirty is the number of changes since the server started (Redis'
// server.dirty), summed over shards: each change of a key counts
// (DB.touched), a flush counts the keys it removed, loading counts nothing.
// The save rules and rdb_changes_since_last_save read it.
func (rt *Runtime) Dirty() int64 {
	var n int64
	for _, s := range rt.shards {
		n += s.store.Dirty()
	}
	return n
}

// SetSnapshotCompression makes snapshots compress strings longer than 20
// bytes with LZF, as Redis' rdbcompression (on by default there and here:
// smaller files for more CPU in the serialization steps).
func (rt *Runtime) SetSnapshotCompression(on bool) { rt.snapCompress.Store(on) }

// commandsServed is the number of commands the shards have run, summed
// from their published counters (the pacer's sign of clients being served).
func (rt *Runtime) commandsServed() int64 {
	var n int64
	for _, s := range rt.shards {
		n += s.stats.reads.Load() + s.stats.writes.Load() + s.stats.other.Load()
	}
	return n
}
