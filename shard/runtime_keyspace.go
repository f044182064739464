package shard

// The runtime's calls into the keyspace that need no token logic of their
// own: routing, the log feed, the encoding thresholds, parked clients.

import (
	"github.com/svcdb/svcdb/core/command"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// Route tells the producer where cmd with args runs. args must already have
// passed the arity check. A producer that runs the command next calls
// RouteFor instead, so the execution hashes no key again.
func (rt *Runtime) Route(cmd *command.Command, args [][]byte) (shard int, where keyspace.Where) {
	return rt.env.Route(cmd, args)
}

// RouteFor is Route for the command about to run with c: it records in c
// what it found (the shard, or every key's shard and the set of them) for
// the execution of the same command that follows (TryExec, ExecMulti,
// ExecHeld), which then hashes no key again; the execution consumes it.
func (rt *Runtime) RouteFor(c *keyspace.Ctx, cmd *command.Command, args [][]byte) (shard int, where keyspace.Where) {
	return rt.env.RouteFor(c, cmd, args)
}

// SetAppendLog makes the runtime record every change in l (nil: stop).
// Call it while no command runs (before serving, or holding every shard).
// The replication stream (replica.go), when on, keeps receiving the same
// records.
func (rt *Runtime) SetAppendLog(l keyspace.AppendLog) {
	rt.logSinks.mu.Lock()
	defer rt.logSinks.mu.Unlock()
	rt.logSinks.aof = l
	rt.installLogSinks()
}

// logged reports whether c's command is one whose changes are logged: a
// write command, or a container's write subcommand.
func (rt *Runtime) logged(c *keyspace.Ctx) bool {
	return c.Effective().Flags&command.FlagWrite != 0
}

// SetEncodingLimits replaces the thresholds; values already stored convert
// when next written, as in Redis.
func (rt *Runtime) SetEncodingLimits(l keyspace.EncodingLimits) { rt.env.SetEncodingLimits(l) }

// BlockedClients is how many clients are parked now (INFO blocked_clients).
func (rt *Runtime) BlockedClients() int64 { return rt.env.Blocked() }

// serveReady serves the waiters of s's ready keys, oldest first, each
// waiter's command run through execute on s (counted there).
// REQUIRES: the caller holds s's token.
func (rt *Runtime) serveReady(s *Shard) { s.store.ServeReady(s.runServed) }

// AbortBlocked ends every parked client's wait with reply, taking each
// shard in turn (keyspace.Store.AbortWaiters), and returns how many.
func (rt *Runtime) AbortBlocked(reply []byte) int {
	n := 0
	for _, s := range rt.shards {
		rt.acquire(s)
		n += s.store.AbortWaiters(reply)
		rt.release(s)
	}
	return n
}
