package netloop

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/panjf2000/gnet/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/tracing"
	"github.com/svcdb/svcdb/shard/keyspace"
)

var errMaxClients = []byte("-ERR max number of clients reached\r\n")

// OnOpen admits a connection or refuses it past maxclients, as Redis does:
// the error line is written, then the connection is closed and counted.
func (s *Server) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if s.connected.Add(1) > s.live.maxClients.Load() || s.life.Load().Stopping() {
		s.connected.Add(-1)
		s.stats.rejected.Add(1)
		if s.life.Load().Stopping() {
			s.stats.rejectedShutdown.Add(1)
		}
		gc.SetContext(nil)
		return errMaxClients, gnet.Close
	}
	s.stats.connectionsReceived.Add(1) // as Redis: refused connections are only in rejected
	local := s.peerIsLocal(gc.RemoteAddr())
	if s.protectedModeRefuses(local) { // security.go
		// As Redis: counted as received, not as rejected (Redis'
		// rejected_connections counts maxclients only); the client is
		// created and freed there, here it never is.
		s.connected.Add(-1)
		gc.SetContext(nil)
		return errProtectedMode, gnet.Close
	}
	c := s.newClient(gc)
	c.fd = gc.Fd()
	c.local = local
	if a := gc.RemoteAddr(); a != nil {
		c.addr = a.String()
	}
	if a := gc.LocalAddr(); a != nil {
		c.lad = a.String()
	}
	gc.SetContext(c)
	s.register(c)
	return nil, gnet.None
}

// recoverConn turns a panic in loop-side code into the end of that one
// connection, logged as the bug it is, instead of the end of the server.
// Shard handlers recover on their own (shard.Runtime.run).
func (s *Server) recoverConn(c *client, action *gnet.Action) {
	r := recover()
	if r == nil {
		return
	}
	s.stats.panics.Add(1)
	buf := make([]byte, 16<<10)
	buf = buf[:runtime.Stack(buf, false)]
	s.log.Error("BUG: panic while serving a client; closing it", "id", c.id, "addr", c.addr, "panic", fmt.Sprint(r), "stack", string(buf))
	if s.cfg.OnPanic != nil {
		s.cfg.OnPanic(r)
	}
	*action = gnet.Close
}

// newClient builds a client's state; gc may be nil in benchmarks that drive
// consume directly.
func (s *Server) newClient(gc gnet.Conn) *client {
	c := &client{
		srv:     s,
		conn:    gc,
		id:      s.nextID.Add(1),
		created: time.Now(),
		loop:    s.loopFor(gc),
	}
	s.setDefaultAuth(c) // acl.go
	c.parser.Limits = s.cfg.ProtoLimits
	s.rt.Bind(&c.ctx)
	c.ctx.Blocker = c
	s.cmem.Track(&c.mem, c)
	c.batch.Owner = c
	s.rt.Bind(&c.batch.Ctx)
	c.lastInteraction.Store(c.created.UnixMilli())
	c.tick = cmdstats.At(c.created)
	return c
}

// OnClose forgets the connection.
func (s *Server) OnClose(gc gnet.Conn, _ error) gnet.Action {
	c, ok := gc.Context().(*client)
	if !ok || c == nil {
		return gnet.None
	}
	c.to(connClosed)
	s.dropBig(c) // a large command's buffer goes with the client, at once
	s.connected.Add(-1)
	s.pubsubClose(c)
	s.stopMonitor(c)
	s.unparkPaused(c)
	s.disableTracking(c)
	s.unblockOnClose(c)
	if c.multi.watch.Watching() {
		s.rt.Unwatch(&c.multi.watch)
	}
	s.cmem.Forget(&c.mem)
	s.unregister(c)
	return gnet.None
}

// OnTraffic runs on the connection's loop when bytes arrive or the connection
// is woken (its batch completed, its shard's queue has room, it was killed,
// back-pressure eased, a held reply became durable).
func (s *Server) OnTraffic(gc gnet.Conn) (action gnet.Action) {
	c := gc.Context().(*client)
	defer s.recoverConn(c, &action)
	if c.killed.Load() || s.overQueryLimit(c, gc) || (c.aclRecheck.Load() && s.aclRecheckFailed(c)) {
		return gnet.Close
	}
	// A reply computed off the loop (a queued batch, an async command) may
	// come from before a message in the mailbox was posted: an
	// invalidation must not overtake the reply of the read it invalidates
	// (tracking.go), so the mailbox then waits for the reply.
	late := c.state == connQueued || c.state == connQueuedThenClose || c.state == connAwaiting
	if !late && c.ps.Load() != nil && s.pubsubDeliver(c) {
		return gnet.Close // over the pubsub output buffer limit
	}
	resumed := c.state == connOutputPaused
	if !s.resume(c, gc) {
		c.publishQueryBuffer(gc) // input still arrives: client eviction sees it
		return gnet.None         // still waiting; what it waits for wakes the loop again
	}
	if late && c.ps.Load() != nil && s.pubsubDeliver(c) {
		return gnet.Close
	}
	if c.state == connClosing {
		return s.closeWhenWritten(c)
	}
	if !resumed && c.state == connReading && gc.OutboundBuffered() > s.cfg.OutputSoftLimit {
		// Replies of earlier turns are still unread: parse nothing more
		// until they drain. Its input waits in the query buffer, whose
		// limit (1 MiB before AUTH) closes a client that never reads.
		s.flush(c)
		s.pauseOutput(c)
		c.publishQueryBuffer(gc)
		return gnet.None
	}
	turn := time.Now()
	now := turn.UnixMilli()
	c.parser.Limits.MaxBulkLen = s.live.maxBulkLen.Load() // CONFIG SET applies to the next command
	c.ctx.Now = now
	c.tick = cmdstats.At(turn)
	more := c.state == connReading // a turn that resumed into another wait parses nothing
	if more && c.qb != nil {       // a large command is arriving into its own buffer (querybuf.go)
		var closeNow bool
		if closeNow, more = s.readBig(c, gc); closeNow {
			return gnet.Close
		}
	}
	if need := c.parser.Need(); need > 0 && gc.InboundBuffered() < need {
		// A request is still arriving and the parser knows its size: don't
		// have gnet copy the whole partial request into one buffer on every
		// read (quadratic in the request's size); wait until it is all here.
		// A batch opened or replies taken this turn still go out below.
		more = false
	}
	if more {
		buf, _ := gc.Peek(-1)
		off, closeNow := s.consume(c, buf)
		if closeNow {
			return gnet.Close
		}
		c.netIn += int64(off)
		if (c.state == connFilling && c.protoErr != nil || !s.startBig(c, gc, buf, off)) && off > 0 {
			_, _ = gc.Discard(off) // gnet's Discard(0) would drop everything buffered
		}
	}
	if c.state == connFilling {
		s.submitBatch(c)
	}
	// Counters are published before the replies go out, so a client that has
	// its reply finds its command counted (CLIENT LIST, /debug/api/clients).
	c.publishQueryBuffer(gc)
	c.publish(now)
	if c.state == connClosing {
		return s.closeWhenWritten(c)
	}
	c.loop.writeBack(c)
	if s.track.Pending() {
		s.track.Broadcast() // BCAST: the keys this turn changed (netloop/tracking)
	}
	return gnet.None
}

// resume ends the wait c's state names when what it waited for has come,
// applying its result (a batch's replies, a deferred reply), and reports
// whether the turn may go on; false leaves c waiting, to be woken again.
func (s *Server) resume(c *client, gc gnet.Conn) bool {
	switch c.state {
	case connReading, connClosing:
		return true
	case connDurable: // replies held until the log is on disk (persistcmd.go)
		if s.flush(c); len(c.out) > 0 || c.state != connDurable {
			return c.state == connClosing // still held, or the disk failed
		}
		c.to(connReading)
		return true
	case connAwaiting, connBlocked:
		reply := c.deferred.Swap(nil)
		if reply == nil {
			return false // woken early; completion wakes us again
		}
		if c.dropReply { // CLIENT REPLY OFF|SKIP
			c.dropReply = false
		} else {
			c.out = append(c.out, *reply...)
		}
		w := c.blocked
		c.blocked = nil
		c.blockedPub.Store(nil)
		c.waitAck.Store(nil)
		c.to(connReading)
		if c.abortedBlocked.Swap(false) { // REPLICAOF ended the wait: reply, then close
			c.to(connClosing)
			return true
		}
		if w != nil {
			c.ctx.LogEnd = max(c.ctx.LogEnd, w.LogEnd()) // a served blocking command's change, for durable
			if s.unparked(c, w) {
				c.loop.writeBack(c)
				return false // blocked again; its own wake-up comes later
			}
		}
		return true
	case connWaitingRoom, connWaitingRoomThenClose:
		if !s.rt.TrySubmit(&c.batch) {
			return false // still full; the shard wakes us when it takes a batch
		}
		if c.state == connWaitingRoom {
			c.to(connQueued)
		} else {
			c.to(connQueuedThenClose)
		}
		return false // the batch's completion wakes us (it may already have)
	case connQueued, connQueuedThenClose:
		if !c.batch.Done() {
			return false // woken early; the batch's completion wakes us again
		}
		s.batchBack(c)
		return true
	case connPaused: // the pause ended (or a spurious wake: the command parks again)
		c.pausedFlag.Store(false)
		c.to(connReading)
		return true
	case connOutputPaused:
		if gc.OutboundBuffered() > s.cfg.OutputSoftLimit/2 {
			return false
		}
		c.to(connReading)
		s.pausedMu.Lock()
		delete(s.paused, c)
		s.pausedMu.Unlock()
		return true
	}
	panic(fmt.Sprintf("BUG: connection %d woken in state %v", c.id, c.state))
}

// closeWhenWritten writes c's replies and closes it, or, when they are held
// until the log has them on disk, keeps it open until the log wakes it.
func (s *Server) closeWhenWritten(c *client) gnet.Action {
	if s.flush(c); len(c.out) > 0 {
		return gnet.None
	}
	return gnet.Close
}

// batchSpan is the per-request span of the batch's command number cmd.
type batchSpan struct {
	cmd  int
	span trace.Span
}

// batchBack takes the replies of c's completed batch and accounts for its
// commands; the connection goes back to reading, or, after a protocol
// error, writes the error and closes.
func (s *Server) batchBack(c *client) {
	c.takeBatchReplies()
	c.commands += int64(c.batch.Len())
	// Every command of the batch waited from the parse of the first to the
	// completion of the last: that is what its client saw.
	waited := c.batch.Finished() - c.batchStart
	for i := range c.batch.Len() {
		cmd, args, reply, ns := c.batch.Executed(i)
		s.accountWaited(c, cmd, args, reply, max(waited, ns), ns)
	}
	for i, bs := range c.spans {
		_, _, reply, _ := c.batch.Executed(bs.cmd)
		s.cfg.Tracer.EndCommand(bs.span, tracing.ReplyError(reply))
		c.spans[i] = batchSpan{}
	}
	c.spans = c.spans[:0]
	if c.state == connQueuedThenClose {
		c.out = appendProtocolError(c.out, c.protoErr)
		c.protoErr = nil
		c.to(connClosing)
		return
	}
	c.to(connReading)
}

// pauseOutput stops parsing c until its unread replies drain; the resumer
// wakes it to check. A reply held for the log (connDurable) waits for that
// first.
func (s *Server) pauseOutput(c *client) {
	if c.state != connReading {
		return
	}
	c.to(connOutputPaused)
	s.pause(c)
}

// consume parses and runs the complete commands at the front of buf, stopping
// early when a batch is queued, the client must close, or output back-pressure
// pauses it. It returns how many bytes it consumed, and closeNow when the
// connection must be closed at once (protocol error or query buffer limit).
// It is the whole per-command path (parse, lookup, route, execute, encode) and
// runs on the client's loop.
func (s *Server) consume(c *client, buf []byte) (off int, closeNow bool) {
	for off < len(buf) && c.parsing() && c.protoErr == nil {
		// As Redis' authRequired(c) in processMultibulkBuffer, asked anew for
		// every command: AUTH earlier in the same read lifts the limits.
		c.parser.Limits.Unauthenticated = s.authRequired(c)
		args, n, err := c.parser.Parse(buf[off:], c.argv[:0])
		if err != nil {
			return off, s.protocolError(c, err)
		}
		if n == 0 {
			break // incomplete; the query buffer limit is checked every turn (OnTraffic)
		}
		c.argv = args
		if len(args) == 0 {
			off += n
			continue
		}
		if c.replyMode != replyOn {
			if !s.processQuiet(c, args) { // CLIENT REPLY OFF|SKIP (clientcmd.go)
				break
			}
		} else if !s.process(c, args) {
			break // the command belongs to a different shard than the open batch
		}
		off += n
		if c.state == connReading && len(c.out) > s.cfg.OutputSoftLimit {
			s.flush(c)
			if c.conn.OutboundBuffered() > s.cfg.OutputSoftLimit {
				s.pauseOutput(c)
				break
			}
		}
	}
	if cap(c.argv) > maxRetainedArgv {
		c.argv = nil // a rare huge command's argument headers: not kept for the connection's life
	}
	return off, false
}

// maxRetainedArgv is the largest argument slice a client keeps between
// reads. A command of 2M arguments left 48 MB of slice headers (24 B each)
// reachable from its client until it disconnected, and pointing into its
// query buffer; Redis 7.0 sizes a client's argv per command and frees it
// with the arguments (freeClientArgv). Checked once per read, not per
// command.
const maxRetainedArgv = 1 << 12

// takeBatchReplies moves a completed batch's replies to c's output, with
// the append-only log offset they acknowledge (for durable).
func (c *client) takeBatchReplies() {
	if c.dropReply { // CLIENT REPLY OFF|SKIP: the batch is that one command
		c.dropReply = false
	} else {
		c.out = append(c.out, c.batch.Out...)
	}
	c.ctx.LogEnd = max(c.ctx.LogEnd, c.batch.Ctx.LogEnd)
	c.batch.Ctx.LogEnd = 0
}

func (s *Server) flush(c *client) {
	if len(c.out) == 0 || !s.durable(c) {
		return // nothing to write, or held until durable (persistcmd.go)
	}
	c.netOut += int64(len(c.out))
	c.pubNetOut.Store(c.netOut)
	_, _ = c.conn.Write(c.out)
	if cap(c.out) > 64<<10 && len(c.out) < cap(c.out)/4 {
		c.out = nil // a burst's buffer is not kept for an idle connection
	} else {
		c.out = c.out[:0]
	}
	c.obl.Store(int64(c.conn.OutboundBuffered()))
	s.cmem.Update(&c.mem, c.memUsage(), !c.noEvict.Load())
}

// openBatch starts c's batch for shard idx with cmd, whose token was taken:
// the connection fills it for the rest of the turn (connFilling).
func (s *Server) openBatch(c *client, idx int, cmd *command.Command, args [][]byte) {
	b := &c.batch
	b.Reset()
	b.Target(idx)
	b.Ctx.DB, b.Ctx.RESP3 = c.ctx.DB, c.ctx.RESP3
	b.Ctx.Tracking, b.Ctx.TrackReads = c.ctx.Tracking, c.ctx.TrackReads
	b.Add(cmd, args)
	c.batchStart = c.tick // the end of the previous command: this one's parse began
	c.to(connFilling)
}

// submitBatch queues the batch filled this turn; the connection parses
// nothing more until the shard hands it back (see the package doc). A full
// queue parks it until the shard has room (connWaitingRoom).
func (s *Server) submitBatch(c *client) {
	closing := c.protoErr != nil
	switch ok := s.rt.TrySubmit(&c.batch); {
	case ok && closing:
		c.to(connQueuedThenClose)
	case ok:
		c.to(connQueued)
	case closing:
		c.to(connWaitingRoomThenClose)
	default:
		c.to(connWaitingRoom)
	}
}

// protocolError handles bad input and reports whether the connection must
// close now, as Redis closes it after replying. Commands accepted before the
// bad input in an open batch still run and answer first: the batch is
// submitted and the connection waits for it in a ...ThenClose state, which
// writes the error and closes once the batch is back (never waiting on the
// loop).
func (s *Server) protocolError(c *client, err error) (closeNow bool) {
	s.stats.protocolErrors.Add(1)
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		s.log.Debug("protocol error", "id", c.id, "addr", c.addr, "err", pe.Error(), "input", pe.Snippet)
	}
	if c.state == connFilling {
		c.protoErr = err // submitted at the end of the turn (OnTraffic)
		return false
	}
	c.out = appendProtocolError(c.out, err)
	s.flush(c)
	return true
}

// appendProtocolError appends Redis' reply to a protocol error.
func appendProtocolError(dst []byte, err error) []byte {
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		return pe.AppendReply(dst)
	}
	return resp.AppendError(dst, "ERR Protocol error: "+err.Error())
}

// process runs or queues one command. It reports false, without consuming the
// command, when a batch is open for another shard: the batch goes first. Rare
// paths are out of line: the common one stays a few contiguous cache lines
// (docs/performance.md, "Instruction-cache misses on the hot path").
func (s *Server) process(c *client, args [][]byte) bool {
	cmd := s.table.Lookup(args[0])
	if c.state == connFilling {
		return s.join(c, cmd, args)
	}
	// Redis' order of checks (processCommand): existence, arity, subcommand,
	// then authentication. A command refused here is not counted as processed.
	mark := len(c.out)
	if cmd == nil || !cmd.CheckArity(len(args)) {
		s.refuseUnknownOrArity(c, cmd, args, mark)
		return true
	}
	c.setLastCmd(&cmd.FullName)
	if cmd == s.debugCmd && s.debugRefused(c, args) { // enable-debug-command (security.go), before AUTH as Redis
		s.refuseDebug(c, cmd, mark)
		return true
	}
	checked := cmd
	if len(cmd.Subcommands) > 0 && len(args) > 1 { // COMMAND alone is valid
		if checked = s.checkSub(c, cmd, args, mark); checked == nil {
			return true
		}
	}
	if !c.authed && checked.Flags&command.FlagNoAuth == 0 && s.acl.AuthRequired() {
		s.authFails[FailNoAuth].Add(1)
		refuse(s, c, checked, resp.ErrNoAuth, mark)
		return true
	}
	if !c.user.AllowsAll() && s.aclDenied(c, checked, args, mark) { // acl.go
		return true
	}
	if refusal := s.persistenceRefusal(cmd, checked); refusal != "" { // persistcmd.go
		refuse(s, c, checked, refusal, mark)
		return true
	}
	if refusal := s.replicationRefusal(checked); refusal != "" { // replcmd.go
		refuse(s, c, checked, refusal, mark)
		return true
	}
	if c.ps.Load() != nil && s.pubsubDenied(c, checked) { // RESP2 subscribed mode
		s.rejected(c, checked, c.out[mark:])
		return true
	}
	if s.clientPause.mode.Load() != pauseNone && s.pauseHolds(c, checked) { // pause.go
		s.parkPaused(c)
		return false // not consumed: it runs when the pause ends
	}
	if c.multi.active && s.queueInMulti(c, cmd, checked, args, mark) {
		return true
	}
	if s.scriptClock.start.Load() != 0 && s.refuseBusy(c, checked, mark) { // scripting.go
		return true
	}
	c.commands++
	if cmd == s.track.flushall || cmd == s.track.flushdb {
		c.flushSeen = s.track.Flushes() // tracking.go: trackEmptyFlush
	}
	idx, where := s.rt.RouteFor(&c.ctx, cmd, args) // recorded in c.ctx for the execution below
	var span trace.Span
	if where != keyspace.OneShard || s.cfg.Tracer.PerRequest() {
		span = s.dispatch(c, cmd, checked, args, idx, where)
	} else {
		s.runOne(c, cmd, checked, args, idx)
	}
	if c.state != connFilling {
		s.executed(c, checked, args, mark)
	}
	if c.ctx.Tracking != 0 {
		s.trackAfterCommand(c, cmd) // CLIENT CACHING lasts one command
	}
	if span != nil {
		s.cfg.Tracer.EndCommand(span, tracing.ReplyError(c.out[mark:]))
	}
	return true
}

// runOne runs a command of one shard on the loop when the shard is free, or
// opens a batch for it (connFilling) when another loop holds it.
func (s *Server) runOne(c *client, cmd, checked *command.Command, args [][]byte, idx int) {
	c.ctx.Cmd, c.ctx.Sub, c.ctx.Args, c.ctx.Out = cmd, subOf(cmd, checked), args, c.out
	if s.rt.TryExec(idx, &c.ctx) {
		c.out, c.ctx.Out, c.ctx.Args = c.ctx.Out, nil, nil
		return
	}
	c.ctx.Out, c.ctx.Args = nil, nil
	c.commands-- // counted when the batch completes
	s.openBatch(c, idx, cmd, args)
}

// join adds the command to c's open batch if it may: only commands for the
// batch's shard may, and not one whose reads are tracked differently (CLIENT
// CACHING's one command starts a batch of its own).
func (s *Server) join(c *client, cmd *command.Command, args [][]byte) bool {
	if cmd == nil || !cmd.CheckArity(len(args)) || !c.authed || c.batch.Len() >= s.cfg.MaxBatch || s.writeRefused(cmd) || s.clientPause.mode.Load() != pauseNone || c.replyMode != replyOn || !s.joinAllowed(c, cmd, args) || c.batch.Ctx.TrackReads != c.ctx.TrackReads {
		return false
	}
	idx, where := s.rt.Route(cmd, args)
	if where != keyspace.OneShard || idx != c.batch.TargetShard() {
		return false
	}
	c.batch.Add(cmd, args)
	c.setLastCmd(&cmd.FullName)
	if s.cfg.Tracer.PerRequest() {
		_, sp := s.cfg.Tracer.StartCommand(context.Background(), cmd.FullName, c.ctx.DB, idx, c.addr)
		c.spans = append(c.spans, batchSpan{cmd: c.batch.Len() - 1, span: sp})
	}
	return true
}

// dispatch runs a command not of one shard, or with a per-request span: it
// returns the span, or nil when the command's batch is to end it.
func (s *Server) dispatch(c *client, cmd, checked *command.Command, args [][]byte, idx int, where keyspace.Where) (span trace.Span) {
	if s.cfg.Tracer.PerRequest() { // one atomic load when per-request spans are off
		spanShard := -1
		if where == keyspace.OneShard {
			spanShard = idx
		}
		_, span = s.cfg.Tracer.StartCommand(context.Background(), checked.FullName, c.ctx.DB, spanShard, c.addr)
	}
	switch where {
	case keyspace.OneShard:
		if s.runOne(c, cmd, checked, args, idx); c.state == connFilling && span != nil {
			c.spans = append(c.spans, batchSpan{cmd: c.batch.Len() - 1, span: span}) // ended when the batch completes
			return nil
		}
	case keyspace.Coordinated:
		c.ctx.Sub = subOf(cmd, checked)
		s.execCoordinated(c, cmd, args, 0)
	default:
		s.local(c, cmd, subOf(cmd, checked), args)
	}
	return span
}

// checkSub resolves cmd's subcommand args[1] for process, or replies its
// error and returns nil.
func (s *Server) checkSub(c *client, cmd *command.Command, args [][]byte, mark int) *command.Command {
	sub := s.table.LookupSub(cmd, args[1])
	if sub == nil {
		c.out = resp.AppendErrUnknownSubcommand(c.out, args[1], cmd.Name)
		s.rejected(c, nil, c.out[mark:]) // as Redis: only in errorstats
		return nil
	}
	c.setLastCmd(&sub.FullName)
	if !sub.CheckArity(len(args)) {
		c.out = resp.AppendErrWrongArity(c.out, []byte(sub.FullName))
		s.rejected(c, sub, c.out[mark:])
		return nil
	}
	return sub
}

// refuseUnknownOrArity replies to an unknown command (nil) or a wrong arity.
func (s *Server) refuseUnknownOrArity(c *client, cmd *command.Command, args [][]byte, mark int) {
	if cmd == nil {
		c.out = resp.AppendErrUnknownCommand(c.out, args[0], args[1:])
	} else {
		c.setLastCmd(&cmd.FullName)
		c.out = resp.AppendErrWrongArity(c.out, args[0])
	}
	s.rejected(c, cmd, c.out[mark:])
}

// refuse replies refusal, a whole error line.
func refuse[T string | []byte](s *Server, c *client, checked *command.Command, refusal T, mark int) {
	c.out = append(c.out, refusal...)
	s.rejected(c, checked, c.out[mark:])
}
