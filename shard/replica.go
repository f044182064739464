package shard

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// ReplicaTarget is what a replica's link (core/replication) does to the
// keyspace: a full sync flushes every database and loads the master's RDB
// with LoadRDB, the path dump.rdb takes at start-up; the master's stream
// runs through a Replayer, so every command of it goes through execute (the
// one entry point: statistics, the replica's own AOF feed, hooks) as an AOF
// replay's do. While the server is a replica nothing expires on its own
// (the Replayer's loading mode): the master's DELs decide, as Redis
// replicas wait for their master's. Its methods are called by the link's
// goroutine only, one at a time.
type ReplicaTarget struct {
	rt  *Runtime
	rep *Replayer // nil while the server is not a replica
}

// NewReplicaTarget returns the target the replication link drives.
func (rt *Runtime) NewReplicaTarget() *ReplicaTarget { return &ReplicaTarget{rt: rt} }

// Begin starts following a master: expiry stops, and the write fence goes
// up (see writeFence). at runs while every shard is held, after the fence
// is up: no command runs then, and no client's write runs after it (while
// readOnly reports replica-read-only), so what at reads (the replication
// offset a demoted master asks its new master to continue from) is the
// whole dataset's. REQUIRES: the caller holds no shard token.
func (t *ReplicaTarget) Begin(readOnly func() bool, at func()) {
	t.begin()
	var all keyspace.ShardSet
	all.All(len(t.rt.shards))
	t.rt.holdSet(&all)
	t.rt.fence.Store(&writeFence{stream: &t.rep.ctx, readOnly: readOnly})
	if at != nil {
		at()
	}
	t.rt.releaseSet(&all)
}

func (t *ReplicaTarget) begin() {
	if t.rep == nil {
		t.rep = t.rt.NewReplayer()
	}
}

// End stops following: the fence comes down, expiry resumes, an open MULTI
// is dropped.
func (t *ReplicaTarget) End() {
	t.rt.fence.Store(nil)
	if t.rep != nil {
		t.rep.Finish()
		t.rep = nil
	}
}

// writeFence is a replica's guard at the one entry point (execute): a
// client's write command runs only from the master's stream (the
// replayer's context) while replica-read-only is on. The role check a
// client's command passes when it is dispatched (netloop, -READONLY) comes
// before its shard runs it; a write that passed it while the server was a
// master may run after REPLICAOF made it a replica, and would change the
// dataset behind the replication offset the server asks its new master to
// continue from. The fence refuses it with -READONLY instead, as if it had
// come a moment later. One atomic load per command on a master.
type writeFence struct {
	stream   *keyspace.Ctx // the master's stream's context: it writes
	readOnly func() bool   // replica-read-only; nil: on
}

var errReadOnly = []byte(replication.ErrReadOnly)

func (f *writeFence) refuses(c *keyspace.Ctx) bool {
	if c == f.stream {
		return false
	}
	flags := c.Cmd.Flags
	if c.Sub != nil || len(c.Cmd.Subcommands) > 0 {
		flags = c.Effective().Flags // a container is its subcommand
	}
	return flags&command.FlagWrite != 0 && (f.readOnly == nil || f.readOnly())
}

var flushAll = [][]byte{[]byte("FLUSHALL")}

// Load replaces the dataset with the RDB read from r: FLUSHALL through
// execute (so the replica's own AOF records it), then LoadRDB. On an error
// the keys loaded so far stay; the link retries the whole sync.
func (t *ReplicaTarget) Load(r io.Reader) error {
	t.begin()
	t.rep.DropMulti()
	if err := t.rep.Apply(flushAll); err != nil {
		return err
	}
	t.rep.ctx.DB = 0
	_, err := t.rt.LoadRDB(r)
	return err
}

// Apply runs one command of the master's stream.
func (t *ReplicaTarget) Apply(args [][]byte) error {
	t.begin()
	return t.rep.Apply(args)
}

// DropMulti forgets a transaction the master did not finish sending.
func (t *ReplicaTarget) DropMulti() {
	if t.rep != nil {
		t.rep.DropMulti()
	}
}

// DropMulti forgets an open MULTI's queued commands.
func (r *Replayer) DropMulti() { r.inTx, r.multi = false, r.multi[:0] }

// logSinks are the two consumers of the records execute makes (the
// keyspace's LogFeed): the append-only file and the replication stream
// (core/replication's master side). Both get the same bytes in the same
// order, SELECTs included, from the one feed: a command is recorded once.
type logSinks struct {
	mu   sync.Mutex
	aof  keyspace.AppendLog
	repl keyspace.AppendLog
}

// teeLog appends to the append-only file and to the replication stream;
// the offset returned is the file's (durability waits compare it).
type teeLog struct{ aof, repl keyspace.AppendLog }

func (t teeLog) Append(p []byte) int64 {
	t.repl.Append(p)
	return t.aof.Append(p)
}

// installLogSinks gives the keyspace a fresh feed over the sinks in force:
// its first record starts with SELECT (a new replica's stream must, as
// Redis sets slaveseldb to -1 for a full sync). REQUIRES: rt.logSinks.mu,
// and no command runs (before serving, or every shard held).
func (rt *Runtime) installLogSinks() {
	a, r := rt.logSinks.aof, rt.logSinks.repl
	switch {
	case a != nil && r != nil:
		rt.env.SetAppendLog(teeLog{a, r})
	case a != nil:
		rt.env.SetAppendLog(a)
	case r != nil:
		rt.env.SetAppendLog(r)
	default:
		rt.env.SetAppendLog(nil)
	}
}

// StartReplicaFeed makes feed the replication stream's sink without a
// snapshot: a replica promoted to master continues the stream its backlog
// holds (PSYNC2), every record from now on reaching feed, the first one
// preceded by SELECT. It holds every shard while it installs the sink.
// REQUIRES: the caller holds no shard token.
func (rt *Runtime) StartReplicaFeed(feed replication.FeedSink) {
	var all keyspace.ShardSet
	all.All(len(rt.shards))
	rt.holdSet(&all)
	rt.logSinks.mu.Lock()
	rt.logSinks.repl = feed
	rt.installLogSinks()
	rt.logSinks.mu.Unlock()
	rt.releaseSet(&all)
}

// SnapshotRunning reports whether a snapshot (BGSAVE, an AOF rewrite, a
// replica's full sync) is being written: a replica serving a full sync
// waits for it before it pauses its master's stream.
func (rt *Runtime) SnapshotRunning() bool { return rt.snapRunning.Load() }

// WriteReplicaSnapshot writes the point-in-time snapshot a replica's full
// sync sends (the BGSAVE path: WriteSnapshotAt, no stop of the world) and,
// at its point in time with every shard held, makes feed the replication
// stream's sink (every record after the snapshot reaches it, the first
// one preceded by SELECT; not while feed reports IsReplica: a replica's
// replicas get its master's stream) and calls at. While another snapshot runs
// (BGSAVE, an AOF rewrite) it waits for it, as Redis' replica waits in
// wait_bgsave. REQUIRES: the caller holds no shard token.
func (rt *Runtime) WriteReplicaSnapshot(w io.Writer, feed replication.FeedSink, at func()) error {
	for {
		_, err := rt.WriteSnapshotAt(w, func() error {
			// A replica serving its own replica (chained) sends them its
			// master's stream, not its own records: no sink until it is
			// promoted (StartReplicaFeed).
			if r, ok := feed.(interface{ IsReplica() bool }); !ok || !r.IsReplica() {
				rt.logSinks.mu.Lock()
				rt.logSinks.repl = feed
				rt.installLogSinks()
				rt.logSinks.mu.Unlock()
			}
			at()
			return nil
		}, [2]string{"repl-stream-db", "0"})
		if !errors.Is(err, ErrSnapshotRunning) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
