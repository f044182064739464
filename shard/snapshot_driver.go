package shard

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/rdb"
)

// ErrSnapshotRunning is WriteSnapshot's answer while another snapshot runs.
var ErrSnapshotRunning = errors.New("ERR Background save already in progress")

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
	results := make(chan keyspace.StepResult, len(rt.shards))
	var codes []string
	m, err := rt.markSnapshot(results, func() error {
		codes = rt.libraryCodes() // functions.go: at the point in time
		if at != nil {
			return at()
		}
		return nil
	})
	st.Mark = m.hold
	if err != nil {
		return st, err
	}
	if err = writeFunctions(wr, codes); err != nil {
		rt.abortSnapshot(m.snaps)
		return st, err
	}
	last := make([]keyspace.StepResult, len(rt.shards))
	var pace pacer
	for db := range keyspace.NumDatabases {
		if m.keys[db] == 0 {
			continue
		}
		if err = wr.SelectDB(db, uint64(m.keys[db]), uint64(m.expires[db])); err != nil {
			break
		}
		if err = rt.writeSnapshotDB(db, m, wr, results, last, &pace); err != nil {
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
		st.Keys += r.Keys
		st.EarlyKeys += r.Early
		st.LongestStep = max(st.LongestStep, r.Longest)
	}
	st.Bytes = wr.Written()
	st.Duration = time.Since(start)
	return st, err
}

// snapshotDuty is the share of one CPU the serialization steps may take
// while clients are served (the driver sleeps to keep to it; an idle
// server snapshots at full speed). Measured with svcbench persist (1M
// keys, a fixed 62k ops/s on one CPU, docs/performance.md): at full
// speed p99 went 3 -> 100 ms; at 0.25, 0.8 -> 4.8 ms; at 0.10, 0.9 ->
// 1.2 ms, with BGSAVE taking 3.7 s instead of 1.4 s.
var snapshotDuty = 0.10

// snapshotMark is what the marking learned: each shard's part (nil for a
// shard with no keys), which databases each shard has keys in, and the key
// and expiry counts per database at the point in time (for RESIZEDB).
type snapshotMark struct {
	snaps   []*keyspace.SnapshotPart
	msgs    []Batch         // each shard's step, a control message queued again for each step
	offered []time.Duration // each shard's last queueStep: its offer's time
	marked  [][keyspace.NumDatabases]bool
	keys    [keyspace.NumDatabases]int64
	expires [keyspace.NumDatabases]int64
	hold    time.Duration
}

// markSnapshot fixes the point in time: it holds every shard and gives each
// non-empty database its bitmap of pending slots, then calls at. When at
// fails the snapshot is detached again before the shards are let go.
func (rt *Runtime) markSnapshot(results chan<- keyspace.StepResult, at func() error) (*snapshotMark, error) {
	m := &snapshotMark{snaps: make([]*keyspace.SnapshotPart, len(rt.shards)), msgs: make([]Batch, len(rt.shards)),
		offered: make([]time.Duration, len(rt.shards)), marked: make([][keyspace.NumDatabases]bool, len(rt.shards))}
	// Everything that allocates without the shards (each part's LZF
	// table is 64 KiB) is made before they are held: the hold stops every
	// shard, and an allocation may be asked to help the collector.
	parts := make([]*keyspace.SnapshotPart, len(rt.shards))
	for i := range rt.shards {
		ss := keyspace.NewSnapshotPart(i, results, rt.snapCompress.Load())
		parts[i] = ss
		m.msgs[i].shard = i
		m.msgs[i].control = func(s *Shard) { ss.Step(s.store) }
	}
	var all keyspace.ShardSet
	all.All(len(rt.shards))
	rt.holdSet(&all)
	t := time.Now()
	for i, s := range rt.shards {
		if s.store.MarkSnapshot(parts[i], &m.keys, &m.expires, &m.marked[i]) {
			m.snaps[i] = parts[i]
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
//
// The driver gives the CPU back after every step it asks for (pace.pause):
// it usually runs the step itself (offer finds the token free), and with
// one CPU for the process (GOMAXPROCS 1) an event loop woken meanwhile
// waits for the driver's goroutine to yield; without a yield the Go
// scheduler preempts it only after 10 ms, often in the middle of a step
// with the shard's token held.
func (rt *Runtime) writeSnapshotDB(db int, m *snapshotMark, wr *rdb.Writer, results <-chan keyspace.StepResult, last []keyspace.StepResult, pace *pacer) error {
	out := 0
	for i, ss := range m.snaps {
		if ss != nil && m.marked[i][db] {
			m.offered[i] = rt.queueStep(m, i, db, nil)
			out++
			pace.pause(m.offered[i], rt.commandsServed())
		}
	}
	var err error
	for out > 0 {
		r := <-results
		t := time.Now()
		last[r.Shard] = r
		if err == nil {
			_, err = wr.Write(r.Out)
		}
		// The step ran in the driver's offer (which also drained the
		// batches queued meanwhile: the offer took at least the step's
		// time) or in a loop that held the shard: either way the process'
		// CPU, counted once.
		spent := max(m.offered[r.Shard], r.Took)
		if r.Done || err != nil {
			out--
			pace.pause(spent+time.Since(t), rt.commandsServed())
			continue
		}
		m.offered[r.Shard] = rt.queueStep(m, r.Shard, db, r.Out[:0])
		pace.pause(spent+time.Since(t), rt.commandsServed())
	}
	return err
}

// pacer keeps everything the snapshot spends (the steps, the batches the
// driver drains with them, the CRC and the file's writes) to snapshotDuty
// of a CPU while clients are served: after each step it sleeps while that
// total is ahead of its share of the time elapsed (in sleeps of at least a
// millisecond), and yields otherwise. An idle server (no command served
// for snapshotIdleAfter) snapshots at full speed, still yielding between
// steps.
//
// It used to count the steps' own time only, and to call the server idle
// when no command had run since the previous step: with one CPU the
// driver, never yielding on an "idle" step, kept the loops from running
// and so kept the count still. In the trace of a BGSAVE of 3M keys under
// load it slept once and yielded 455 times in 11,717 steps, and the
// scheduler preempted it mid-step (docs/performance.md, "The snapshot's
// tail, traced").
type pacer struct {
	start    time.Time     // when pacing began: the first step while clients were served
	busy     time.Duration // the snapshot's time since start
	commands int64         // commands served at the last pause
	servedAt time.Time     // when that count last moved
}

// snapshotIdleAfter is how long no command must run before the pacer
// calls the server idle. The driver yields after every step, so a loop
// with work gets the CPU within a step; this is only how long a lull must
// last before the snapshot stops pacing.
const snapshotIdleAfter = 20 * time.Millisecond

// pause accounts spent (what the snapshot used since the previous pause),
// then sleeps or yields; served is the runtime's command count now.
func (p *pacer) pause(spent time.Duration, served int64) {
	now := time.Now()
	if p.servedAt.IsZero() || served != p.commands {
		p.commands, p.servedAt = served, now // the first pause assumes clients
	}
	if snapshotDuty >= 1 || now.Sub(p.servedAt) >= snapshotIdleAfter {
		p.start, p.busy = time.Time{}, 0 // idle: pacing starts again with the next client
		runtime.Gosched()
		return
	}
	if p.start.IsZero() {
		p.start = now.Add(-spent)
	}
	p.busy += spent
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
// out, and returns how long the offer took: when the token was free the
// driver ran the step itself, and the batches queued meanwhile. A full
// queue is offered the message again until it has room.
func (rt *Runtime) queueStep(m *snapshotMark, i, db int, out []byte) time.Duration {
	t := time.Now()
	ss := m.snaps[i]
	ss.Request(db, out)
	for !rt.offer(rt.shards[i], &m.msgs[i]) {
		time.Sleep(50 * time.Microsecond)
	}
	return time.Since(t)
}

// abortSnapshot detaches a snapshot that failed half-way from every shard,
// so that the hooks stop encoding for it. No step of it is queued any more.
func (rt *Runtime) abortSnapshot(snaps []*keyspace.SnapshotPart) {
	var all keyspace.ShardSet
	all.All(len(rt.shards))
	rt.holdSet(&all)
	rt.detachSnapshot(snaps)
	rt.releaseSet(&all)
}

// detachSnapshot clears every shard's and database's pointer to snaps.
// REQUIRES: every shard is held.
func (rt *Runtime) detachSnapshot(snaps []*keyspace.SnapshotPart) {
	for i, s := range rt.shards {
		if ss := snaps[i]; ss != nil {
			s.store.DetachSnapshot(ss)
		}
	}
}

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
