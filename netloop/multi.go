package netloop

import (
	"unsafe"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// MULTI/EXEC/DISCARD/WATCH/UNWATCH and parked (blocked) clients.
//
// Between MULTI and EXEC a client's commands are checked as usual (unknown
// command, arity, authentication, no-multi flag: each error marks the
// transaction failed, as Redis' flagTransaction) and otherwise queued with
// copies of their arguments. EXEC takes every shard (shard.Runtime.HoldAll),
// checks the client's watched keys, runs the queue and lets the shards go, so
// the transaction is atomic across shards: no other client's command runs
// between its commands. Blocking commands inside a transaction reply at once
// as on timeout, as in Redis.

// multiState is a client's transaction, owned by its loop.
type multiState struct {
	active bool           // between MULTI and EXEC/DISCARD
	failed bool           // a queued command was refused: EXEC replies EXECABORT
	inExec bool           // EXEC is running the queue (no parking, no async work)
	queue  []queuedCmd    // commands waiting for EXEC
	watch  keyspace.Watch // WATCHed keys
	// afterExec is work a queued command left for after EXEC released the
	// shards: REPLICAOF's role change, which waits for the old link's
	// goroutine and takes every shard itself (replcmd.go). The client parks
	// until it is done, so its next command sees the new role.
	afterExec []func()
}

type queuedCmd struct {
	cmd     *command.Command // the top-level command (routing, handlers)
	checked *command.Command // the subcommand when there is one (statistics)
	args    [][]byte         // owned copies
}

// multiControl reports whether cmd runs at once even inside MULTI.
func multiControl(cmd *command.Command) bool {
	switch cmd.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// queueInMulti queues a checked command inside MULTI, or refuses it when it
// may not run in a transaction. It reports whether it handled the command.
func (s *Server) queueInMulti(c *client, cmd, checked *command.Command, args [][]byte, mark int) bool {
	if c.multi.active && s.refuseOOMInMulti(c, cmd, checked, mark) {
		return true
	}
	if !c.multi.active || multiControl(cmd) {
		return false
	}
	if checked.Flags&command.FlagNoMulti != 0 {
		c.out = resp.AppendError(c.out, "ERR Command not allowed inside a transaction")
		s.rejected(c, checked, c.out[mark:])
		return true
	}
	q := queuedCmd{cmd: cmd, checked: checked, args: make([][]byte, len(args))}
	size := int64(unsafe.Sizeof(q)) + int64(len(args))*int64(unsafe.Sizeof(args[0]))
	for i, a := range args {
		q.args[i] = append([]byte(nil), a...)
		size += int64(len(a))
	}
	c.multi.queue = append(c.multi.queue, q)
	c.multiMem.Add(size) // counted by client eviction (clientcmd.go memUsage)
	c.out = append(c.out, "+QUEUED\r\n"...)
	c.lap()
	return true
}

// refuseOOMInMulti is Redis' maxmemory check for a client inside MULTI
// (processCommand): while used memory is over maxmemory after evicting what
// the policy allows, every command but EXEC, DISCARD, QUIT and RESET is
// refused with -OOM, and EXEC too when the transaction queued a command that
// may grow memory, aborting it. It reports whether it refused the command.
func (s *Server) refuseOOMInMulti(c *client, cmd, checked *command.Command, mark int) bool {
	if checked.Flags&command.FlagNoMulti != 0 {
		return false // "not allowed inside a transaction" comes first, as in Redis
	}
	switch cmd.Name {
	case "discard", "quit", "reset":
		return false
	case "exec":
		denyOOM := false
		for _, q := range c.multi.queue {
			denyOOM = denyOOM || q.checked.Flags&command.FlagDenyOOM != 0
		}
		if !denyOOM || !s.rt.OutOfMemory() {
			return false
		}
		c.out = resp.AppendError(c.out, "EXECABORT Transaction discarded because of: "+keyspace.OOMMessage)
		s.rejected(c, checked, c.out[mark:])
		s.endMulti(c)
		return true
	}
	if !s.rt.OutOfMemory() {
		return false
	}
	c.out = resp.AppendError(c.out, keyspace.OOMMessage)
	s.rejected(c, checked, c.out[mark:])
	return true
}

func (s *Server) cmdMulti(c *client) {
	if c.multi.active {
		c.out = resp.AppendError(c.out, "ERR MULTI calls can not be nested")
		return
	}
	c.multi.active = true
	c.out = append(c.out, resp.OK...)
}

func (s *Server) cmdDiscard(c *client) {
	if !c.multi.active {
		c.out = resp.AppendError(c.out, "ERR DISCARD without MULTI")
		return
	}
	s.endMulti(c)
	c.out = append(c.out, resp.OK...)
}

func (s *Server) cmdWatch(c *client, args [][]byte) {
	if c.multi.active {
		c.out = resp.AppendError(c.out, "ERR WATCH inside MULTI is not allowed")
		return
	}
	s.rt.Watch(&c.multi.watch, c.ctx.DB, args[1:])
	c.out = append(c.out, resp.OK...)
}

func (s *Server) cmdUnwatch(c *client) {
	s.rt.Unwatch(&c.multi.watch)
	c.out = append(c.out, resp.OK...)
}

// endMulti forgets the transaction and the watched keys (EXEC, DISCARD,
// RESET, close).
func (s *Server) endMulti(c *client) {
	clear(c.multi.queue)
	c.multi.queue = c.multi.queue[:0]
	c.multiMem.Store(0)
	c.multi.active, c.multi.failed = false, false
	s.rt.Unwatch(&c.multi.watch)
}

// execNoReplicas is processCommand's -NOREPLICAS check for EXEC, whose
// write flag is its queued commands': replicas that were good when the
// writes were queued may have gone since. It discards the transaction with
// execCommandAbort's reply and reports whether it did.
func (s *Server) execNoReplicas(c *client) bool {
	if !s.tooFewReplicas() {
		return false
	}
	for _, q := range c.multi.queue {
		if q.checked.Flags&command.FlagWrite != 0 {
			c.out = append(c.out, execAbortNoReplicas...)
			s.endMulti(c)
			return true
		}
	}
	return false
}

// execAbortNoReplicas is execCommandAbort's reply for -NOREPLICAS.
var execAbortNoReplicas = "-EXECABORT Transaction discarded because of: " + replication.ErrNoReplicas[1:]

func (s *Server) cmdExec(c *client) {
	if !c.multi.active {
		c.out = resp.AppendError(c.out, "ERR EXEC without MULTI")
		return
	}
	if s.execNoReplicas(c) {
		return
	}
	if c.multi.failed {
		c.out = resp.AppendError(c.out, "EXECABORT Transaction discarded because of previous errors.")
		s.endMulti(c)
		return
	}
	s.rt.HoldAll()
	if s.rt.WatchFailed(&c.multi.watch, c.ctx.Now) {
		s.rt.ReleaseAll()
		c.out = resp.AppendNullArray(c.out, c.ctx.RESP3)
		s.endMulti(c)
		return
	}
	c.out = resp.AppendArrayHeader(c.out, len(c.multi.queue))
	c.multi.inExec = true
	blocker := c.ctx.Blocker
	c.ctx.Blocker = nil // blocking commands reply at once inside EXEC
	for _, q := range c.multi.queue {
		mark := len(c.out)
		if !c.user.AllowsAll() && s.aclDeniedInExec(c, q.checked, q.args) { // acl.go
			continue
		}
		if _, where := s.rt.RouteFor(&c.ctx, q.cmd, q.args); where == keyspace.NotShard {
			s.local(c, q.cmd, subOf(q.cmd, q.checked), q.args)
		} else {
			c.ctx.Cmd, c.ctx.Sub, c.ctx.Args, c.ctx.Out = q.cmd, subOf(q.cmd, q.checked), q.args, c.out
			s.rt.ExecHeld(&c.ctx)
			c.out, c.ctx.Out, c.ctx.Args = c.ctx.Out, nil, nil
		}
		c.commands++
		s.executed(c, q.checked, q.args, mark)
	}
	c.ctx.Blocker = blocker
	c.multi.inExec = false
	c.ctx.LogEnd = max(c.ctx.LogEnd, s.rt.ReleaseAll()) // the transaction's record, for durable
	s.endMulti(c)
	if after := c.multi.afterExec; len(after) > 0 {
		c.multi.afterExec = nil
		s.runAsync(c, func() []byte {
			for _, f := range after {
				f()
			}
			return nil
		})
	}
}

// ---- parked clients ------------------------------------------------------------

// Unblocked is called by whoever ends a blocked client's wait (shard.Unblocker).
func (c *client) Unblocked(reply []byte, retry bool) {
	if retry {
		c.retryBlocked.Store(true)
		reply = []byte{}
	}
	c.deferred.Store(&reply)
	_ = c.conn.Wake(nil)
}

// Aborted is called when the server ends c's wait (keyspace.Aborter): the
// reply goes out and the connection closes, as Redis'
// disconnectAllBlockedClients does (CLIENT_CLOSE_AFTER_REPLY).
func (c *client) Aborted(reply []byte) {
	c.abortedBlocked.Store(true)
	c.Unblocked(reply, false)
}

// park makes c wait for w: it parses nothing more until the reply is in.
func (s *Server) park(c *client, w *keyspace.Waiter) {
	c.blocked = w
	c.blockedPub.Store(w) // for CLIENT UNBLOCK and CLIENT LIST on other loops
	c.to(connBlocked)
}

// unparked is called by OnTraffic when a parked client's wait for w ended.
// It reports whether the client is parked again (a retried command blocked
// anew).
func (s *Server) unparked(c *client, w *keyspace.Waiter) bool {
	if !c.retryBlocked.Swap(false) {
		return false
	}
	// Serving needed shards the server did not hold: run the command again,
	// holding all of its keys, with what is left of its timeout.
	cmd, args := w.Command()
	return s.execCoordinated(c, cmd, args, w.Deadline())
}

// execCoordinated runs a command holding every shard it involves
// (shard.Runtime.ExecMulti) and parks the client when the command blocked; it
// reports whether it did. retryDeadline is a retried waiter's deadline (0
// otherwise).
func (s *Server) execCoordinated(c *client, cmd *command.Command, args [][]byte, retryDeadline int64) bool {
	c.ctx.Cmd, c.ctx.Args, c.ctx.Out = cmd, args, c.out
	c.ctx.RetryDeadline = retryDeadline
	s.rt.ExecMulti(&c.ctx)
	c.ctx.RetryDeadline = 0
	c.out, c.ctx.Out, c.ctx.Args = c.ctx.Out, nil, nil
	w := c.ctx.Blocked
	if w == nil {
		return false
	}
	c.ctx.Blocked = nil
	s.park(c, w)
	return true
}

// unblockOnClose ends a closing client's wait.
func (s *Server) unblockOnClose(c *client) {
	if w := c.blocked; w != nil {
		w.Cancel()
	}
	if w := c.waitAck.Load(); w != nil {
		w.Cancel()
	}
}

// subOf is the subcommand process resolved (checked) for the runtime's
// Ctx.Sub, nil when cmd has none: the runtime then looks nothing up again.
func subOf(cmd, checked *command.Command) *command.Command {
	if checked == cmd {
		return nil
	}
	return checked
}
