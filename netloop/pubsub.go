package netloop

// Pub/Sub's glue: the registry, the subscriptions and the messages'
// encoding are package pubsub's (netloop/pubsub/doc.go); here is what
// needs a client: its mailbox, the pubsub class of the output buffer
// limit, closing a client past it, and the commands' wiring.
//
// # The mailbox
//
// A client's mailbox (pubsubState.box, pubsub.Mailbox) is appended to by
// publishers (Deliver), invalidations (tracking.go, Post) and MONITOR
// (monitor.go); its loop writes it at the start of its next turn
// (pubsubDeliver, called from OnTraffic).
//
// # Slow subscribers
//
// client-output-buffer-limit's pubsub class applies to subscribed clients:
// what waits in the mailbox plus what waits in the socket's outbound buffer
// (obl, published by flush) is checked on every append (publisher side) and
// after every write (subscriber side); the first pubsub.InTransit bytes of
// the mailbox are not counted (see there). Past the hard limit, or past the soft
// limit for longer than its seconds, the client is marked killed and woken,
// and its loop closes it, logging Redis' line. Until it is closed it still
// counts as a receiver, as a client Redis has scheduled to close does.

import (
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop/pubsub"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// pubsubState is one client's subscriptions and mailbox, made on first use
// and kept until it closes.
type pubsubState struct {
	subs pubsub.State
	box  pubsub.Mailbox
}

// initPubSub prepares the registry and follows client-output-buffer-limit.
// New calls it once s.params is set.
func (s *Server) initPubSub() {
	s.pubsub.Init()
	apply := func(v string) {
		_, _, ps := config.OutputBufferLimits(v)
		s.psLimits.Set(ps)
	}
	apply(s.params.String("client-output-buffer-limit"))
	s.params.OnChange("client-output-buffer-limit", func(v string) error { apply(v); return nil })
}

// pubsubOf returns c's state, making it on first use. Any goroutine: an
// invalidation (tracking.go) may need the mailbox of a client that never
// subscribed.
func (c *client) pubsubOf() *pubsubState {
	if ps := c.ps.Load(); ps != nil {
		return ps
	}
	ps := &pubsubState{}
	if !c.ps.CompareAndSwap(nil, ps) {
		return c.ps.Load()
	}
	return ps
}

// inPubSub reports whether c has any subscription; from any goroutine.
func (c *client) inPubSub() bool {
	sub, psub, ssub := pubsubCounts(c)
	return sub+psub+ssub > 0
}

// pubsubCounts are c's channel, pattern and shard channel subscriptions
// (CLIENT LIST's sub, psub and ssub); from any goroutine.
func pubsubCounts(c *client) (sub, psub, ssub int32) {
	if ps := c.ps.Load(); ps != nil {
		return ps.subs.Counts()
	}
	return 0, 0, 0
}

// pubsubQueued is the size of c's mailbox (part of CLIENT LIST omem).
func pubsubQueued(c *client) int64 {
	if ps := c.ps.Load(); ps != nil {
		return ps.box.Size()
	}
	return 0
}

// clientType is the client's class for CLIENT LIST/KILL TYPE: "pubsub" while
// subscribed, else "normal" (there are no replicas or masters).
func clientType(c *client) string {
	if c.inPubSub() {
		return "pubsub"
	}
	return "normal"
}

// ---- mailbox -------------------------------------------------------------------

// drainMailbox moves c's waiting messages to the end of c.out; on c's loop.
func drainMailbox(c *client, ps *pubsubState) { c.out = ps.box.DrainTo(c.out) }

// posted follows an append to c's mailbox: past the pubsub output limit
// (when limited) c is scheduled to close, else its loop is woken if the
// mailbox was empty (a non-empty one has a wake-up pending already).
func (s *Server) posted(c *client, ps *pubsubState, size int64, wasEmpty, limited bool) {
	if limited && s.psLimits.Over(&ps.box, pubsub.Used(c.obl.Load(), size)) {
		s.closeOverLimit(c, "pubsub")
		return
	}
	if wasEmpty {
		_ = c.conn.Wake(nil)
	}
}

// pubsubDeliver runs at the start of each of c's turns (OnTraffic): it
// writes the messages waiting in c's mailbox and checks the output limit.
// It reports whether c must be closed now.
func (s *Server) pubsubDeliver(c *client) (closeNow bool) {
	ps := c.ps.Load()
	if ps == nil || ps.box.Size() == 0 {
		return false
	}
	drainMailbox(c, ps)
	s.flush(c)
	// The pubsub class applies to subscribed clients; a RESP3 client that
	// only receives invalidations (tracking.go) is a normal client.
	if c.inPubSub() && s.psLimits.Over(&ps.box, pubsub.Used(c.obl.Load(), ps.box.Size())) {
		s.closeOverLimit(c, "pubsub")
		return true
	}
	return false
}

// closeOverLimit schedules c's close past its class of
// client-output-buffer-limit, once, logging Redis' line.
func (s *Server) closeOverLimit(c *client, class string) {
	if c.killed.Swap(true) {
		return
	}
	line := strings.TrimSuffix(s.clientLine(c, time.Now()), "\n")
	s.log.Warn("Client "+line+" scheduled to be closed ASAP for overcoming of output buffer limits.",
		"id", c.id, "addr", c.addr, "class", class)
	_ = c.conn.Wake(nil)
}

// Deliver is pubsub.Subscriber's: m goes to c's mailbox, or, when c
// published it (m.From is c, or the context of c's command that reported
// a keyspace event), into the reply being built. Any goroutine.
func (c *client) Deliver(m pubsub.Message) {
	if c.killed.Load() {
		return // being closed: counted, not written (as Redis' CLOSE_ASAP)
	}
	ps := c.ps.Load()
	switch from := m.From.(type) {
	case *client:
		if from == c {
			drainMailbox(c, ps) // earlier messages first
			c.out = m.AppendTo(c.out, c.ctx.RESP3)
			return
		}
	case *keyspace.Ctx:
		if from == &c.ctx || from == &c.batch.Ctx {
			from.Out = m.AppendTo(from.Out, from.RESP3)
			return
		}
	}
	box := ps.box.Open()
	wasEmpty := len(box) == 0
	size := ps.box.Close(m.AppendTo(box, c.resp3.Load()))
	c.srv.posted(c, ps, size, wasEmpty, true)
}

// ---- commands ------------------------------------------------------------------

// pubsubDenied refuses, with Redis' error, a command a RESP2 client in
// Pub/Sub mode may not run. process calls it after the authentication check,
// as Redis' processCommand orders them.
func (s *Server) pubsubDenied(c *client, cmd *command.Command) bool {
	ps := c.ps.Load()
	if ps == nil || c.ctx.RESP3 || !ps.subs.Subscribed() || pubsub.Allowed(cmd.FullName) {
		return false
	}
	c.out = pubsub.AppendDenied(c.out, cmd.FullName)
	return true
}

// pubsubPing answers PING in RESP2 Pub/Sub mode (["pong", message]) and
// reports whether it did.
func (s *Server) pubsubPing(c *client, args [][]byte) bool {
	ps := c.ps.Load()
	if ps == nil || c.ctx.RESP3 || !ps.subs.Subscribed() {
		return false
	}
	c.out = pubsub.AppendPong(c.out, args)
	return true
}

// cmdPubSub runs the Pub/Sub commands; on c's loop.
func (s *Server) cmdPubSub(c *client, cmd *command.Command, args [][]byte) {
	switch cmd.Name {
	case "subscribe":
		s.subscribe(c, pubsub.Channel, args[1:])
	case "psubscribe":
		s.subscribe(c, pubsub.Pattern, args[1:])
	case "ssubscribe":
		if c.multi.inExec {
			// As Redis: a client that expects one reply per command (inside
			// EXEC) may not SSUBSCRIBE; SUBSCRIBE is let through there for
			// backward compatibility.
			c.out = resp.AppendError(c.out, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
			return
		}
		s.subscribe(c, pubsub.Shard, args[1:])
	case "unsubscribe":
		s.unsubscribe(c, pubsub.Channel, args[1:])
	case "punsubscribe":
		s.unsubscribe(c, pubsub.Pattern, args[1:])
	case "sunsubscribe":
		s.unsubscribe(c, pubsub.Shard, args[1:])
	case "publish":
		c.out = resp.AppendInt(c.out, s.pubsub.Publish(c, pubsub.Channel, args[1], args[2]))
	case "spublish":
		c.out = resp.AppendInt(c.out, s.pubsub.Publish(c, pubsub.Shard, args[1], args[2]))
	case "pubsub":
		c.out = s.pubsub.Introspect(c.out, cmd.Name, s.subcommand(c, cmd, args).Name, args)
	}
}

// subscribe is (P|S)SUBSCRIBE (pubsub.Registry.Subscribe).
func (s *Server) subscribe(c *client, k pubsub.Kind, names [][]byte) {
	ps := c.pubsubOf()
	c.out = s.pubsub.Subscribe(c.out, c.ctx.RESP3, &ps.subs, c, k, names)
}

// unsubscribe is (P|S)UNSUBSCRIBE, with names or (none) all of the kind.
// Messages published before the unsubscription are written before its
// confirmation.
func (s *Server) unsubscribe(c *client, k pubsub.Kind, names [][]byte) {
	ps := c.ps.Load()
	if ps == nil {
		ps = &pubsubState{} // nothing subscribed
	}
	if names = s.pubsub.Leave(&ps.subs, c, k, names); names != nil {
		drainMailbox(c, ps)
	}
	c.out = ps.subs.Confirm(c.out, c.ctx.RESP3, k, names)
}

// pubsubReset is RESET's part: every subscription ends without
// confirmations; messages already published are written first.
func (s *Server) pubsubReset(c *client) {
	if ps := c.ps.Load(); ps != nil {
		s.pubsub.RemoveAll(&ps.subs, c)
		drainMailbox(c, ps)
	}
}

// pubsubClose forgets a closing client's subscriptions (OnClose).
func (s *Server) pubsubClose(c *client) {
	if ps := c.ps.Load(); ps != nil {
		s.pubsub.RemoveAll(&ps.subs, c)
	}
}
