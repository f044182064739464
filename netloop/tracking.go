package netloop

// Client-side caching's glue: the tables, the per-client state and the
// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO logic are package
// tracking (netloop/tracking, see its doc); this file plugs it into the
// runtime's hooks, the client (an ID, its protocol, its Pub/Sub mailbox)
// and the command path.

import (
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/netloop/tracking"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// trackGlue is the server's tracking table and the commands the glue
// recognises (resolved once, compared by pointer).
type trackGlue struct {
	tracking.Table
	flushall, flushdb *command.Command
	client            *command.Command // CLIENT keeps CACHING's flag (Redis' resetClient)
}

// initTracking prepares the table; New calls it once s.params is set.
func (s *Server) initTracking() {
	t := &s.track
	t.Init(s.trackingClient, func() {
		s.rt.SetHooks(&shard.Hooks{Changed: s.trackChanged, Read: s.trackRead, Dropped: s.trackDropped})
	})
	t.flushall = s.table.Lookup([]byte("flushall"))
	t.flushdb = s.table.Lookup([]byte("flushdb"))
	t.client = s.table.Lookup([]byte("client"))
	t.SetMaxKeys(s.params.Int("tracking-table-max-keys"))
	s.params.OnChange("tracking-table-max-keys", func(string) error {
		t.SetMaxKeys(s.params.Int("tracking-table-max-keys"))
		return nil
	})
}

// trackingClient finds a connected client for the table (a REDIRECT
// target); nil when none has id.
func (s *Server) trackingClient(id int64) tracking.Client {
	s.registryMu.Lock()
	c := s.registry[id]
	s.registryMu.Unlock()
	if c == nil {
		return nil // not a typed nil in the interface
	}
	return c
}

// ---- the runtime's hooks (called by a shard's token holder) -----------------

// trackRead remembers the keys a read-only command named for the client
// that ran it (Redis' trackingRememberKeys), or, in a script, the keys the
// script declared (Ctx.TrackKeys, see trackScript).
func (s *Server) trackRead(c *keyspace.Ctx) {
	keys := c.TrackKeys
	var buf [8][]byte
	if keys == nil {
		keys = c.CommandKeys(buf[:0])
	}
	s.track.Remember(c.Tracking, keys)
}

// trackChanged invalidates the keys of a command that changed the dataset;
// FLUSHDB and FLUSHALL invalidate everything.
func (s *Server) trackChanged(c *keyspace.Ctx) {
	t := &s.track
	if !t.Active() {
		return
	}
	if c.Cmd == t.flushall || c.Cmd == t.flushdb {
		t.Flush(true)
		return
	}
	var buf [8][]byte
	for _, k := range c.CommandKeys(buf[:0]) {
		t.Invalidate(c.Tracking, k, true)
	}
}

// trackDropped invalidates a key expiry or eviction removed.
func (s *Server) trackDropped(_ int, key string) { s.track.Dropped(key) }

// ---- the client as the table sees it (tracking.Client) --------------------------

// ID is tracking.Client's.
func (c *client) ID() int64 { return c.id }

// RESP3 is tracking.Client's. Any goroutine.
func (c *client) RESP3() bool { return c.resp3.Load() }

// Subscribed is tracking.Client's. Any goroutine.
func (c *client) Subscribed() bool { return c.inPubSub() }

// Post appends m to c's mailbox and wakes it, as deliver does for PUBLISH
// (tracking.Client's). Any goroutine, c's own loop included: the message
// then follows the replies of the turn running now.
func (c *client) Post(m tracking.Message) {
	if c.killed.Load() {
		return
	}
	ps := c.pubsubOf()
	box := ps.box.Open()
	wasEmpty := len(box) == 0
	size := ps.box.Close(m.AppendTo(box))
	c.srv.posted(c, ps, size, wasEmpty, c.inPubSub())
}

// ---- per client (on its loop) ------------------------------------------------

// syncTracking sets what the runtime reads from c's context: the client's
// ID while it tracks, and whether its next command's reads are remembered.
func (c *client) syncTracking() {
	on, reads := c.trk.Mode()
	if !on {
		c.ctx.Tracking, c.ctx.TrackReads = 0, false
		return
	}
	c.ctx.Tracking, c.ctx.TrackReads = c.id, reads
}

// trackAfterCommand ends CLIENT CACHING's effect after the command it was
// for, as Redis' resetClient: not after CLIENT itself, nor while a
// transaction is being queued (it lasts until EXEC). c tracks.
func (s *Server) trackAfterCommand(c *client, cmd *command.Command) {
	if cmd == s.track.client || c.multi.active {
		return
	}
	if c.trk.EndCaching() {
		c.syncTracking()
	}
}

// enableTracking is tracking.Table.Enable for c; on c's loop.
func (s *Server) enableTracking(c *client, redirect int64, opts uint32, prefixes [][]byte) {
	s.track.Enable(&c.trk, c, redirect, opts, prefixes)
	c.trackingChanged()
}

// trackingChanged follows a change of c's tracking state.
func (c *client) trackingChanged() {
	if on, _ := c.trk.Mode(); on {
		c.pubsubOf() // its mailbox, made on its own loop
	}
	c.syncTracking()
}

// disableTracking is tracking.Table.Disable for c; on c's loop (CLIENT
// TRACKING OFF, RESET, OnClose).
func (s *Server) disableTracking(c *client) {
	s.track.Disable(&c.trk)
	c.syncTracking()
}

// trackScript makes the reads of a script c runs remember what Redis
// 7.0.15 remembers (call() with server.script_caller: trackingRememberKeys
// of the caller, whose command is the EVAL or FCALL): for every read-only
// command the script calls, the keys the script declared (keys, borrowed
// for the script's run), not the keys the command named; with no declared
// keys, nothing. The script itself (EVAL_RO, FCALL_RO) remembers nothing,
// as 7.0.15 excludes them. trackScriptEnd undoes it.
func (c *client) trackScript(keys [][]byte) {
	if !c.ctx.TrackReads {
		return
	}
	if len(keys) == 0 {
		c.ctx.TrackReads = false
		return
	}
	c.ctx.TrackKeys = keys
}

// trackScriptEnd undoes trackScript when the script has run.
func (c *client) trackScriptEnd() {
	c.ctx.TrackKeys = nil
	c.syncTracking()
}

// ---- commands ------------------------------------------------------------------

// cmdTracking is CLIENT TRACKING.
func (s *Server) cmdTracking(c *client, args [][]byte) {
	c.out = s.track.Command(c.out, &c.trk, c, args)
	c.trackingChanged()
}

// cmdCaching is CLIENT CACHING YES|NO.
func (s *Server) cmdCaching(c *client, args [][]byte) {
	c.out = c.trk.Caching(c.out, args)
	c.syncTracking()
}

// trackingRedirect is GETREDIR's and CLIENT LIST's redir. Any goroutine.
func trackingRedirect(c *client) int64 { return c.trk.Redirect() }

// trackingFlagLetters are CLIENT LIST's t, R and B. Any goroutine.
func trackingFlagLetters(c *client) string { return c.trk.FlagLetters() }

// cmdTrackingInfo is CLIENT TRACKINGINFO.
func (s *Server) cmdTrackingInfo(c *client) { c.out = c.trk.Info(c.out, c.ctx.RESP3) }

// trackingInfo is INFO's tracking_total_keys, _items and _prefixes.
func (s *Server) trackingInfo() (keys, items, prefixes int64) { return s.track.Stats() }

// trackEmptyFlush sends the null invalidation for c's FLUSHDB or FLUSHALL
// when it removed nothing (tracking.Table.FlushUnseen); called with the
// command's reply when it is accounted, so a refused flush (a syntax
// error) sends nothing. A flush inside EXEC that removes nothing says
// nothing (EXEC's commands are not processed one by one).
func (s *Server) trackEmptyFlush(c *client, reply []byte) {
	if string(reply) != "+OK\r\n" {
		return
	}
	s.track.FlushUnseen(c.flushSeen)
}
