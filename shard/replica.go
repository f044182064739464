package shard

import (
	"io"
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

// Begin starts following a master: expiry stops.
func (t *ReplicaTarget) Begin() {
	if t.rep == nil {
		t.rep = t.rt.NewReplayer()
	}
}

// End stops following: expiry resumes, an open MULTI is dropped.
func (t *ReplicaTarget) End() {
	if t.rep != nil {
		t.rep.Finish()
		t.rep = nil
	}
}

var flushAll = [][]byte{[]byte("FLUSHALL")}

// Load replaces the dataset with the RDB read from r: FLUSHALL through
// execute (so the replica's own AOF records it), then LoadRDB. On an error
// the keys loaded so far stay; the link retries the whole sync.
func (t *ReplicaTarget) Load(r io.Reader) error {
	t.Begin()
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
	t.Begin()
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
