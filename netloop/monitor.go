package netloop

// MONITOR as Redis 7.0.15 has it.
//
// # What a monitor sees
//
// One line per command (pubsub.AppendMonitorLine has its format), with the
// database the command ran in as it stood after it ran (SELECT 3 shows 3),
// as Redis feeds monitors at the end of call().
//
// Which commands, and when, as Redis 7.0:
//   - a command is shown once it ran, whatever its reply (a WRONGTYPE error
//     included); commands refused before running (unknown, wrong arity,
//     NOAUTH, ACL, OOM, -BUSY) are not shown;
//   - commands flagged admin (CONFIG, CLIENT KILL, MONITOR ...) or
//     skip_monitor are never shown, with two exceptions Redis makes
//     explicitly: EVAL, EVALSHA, their _RO forms and FCALL, FCALL_RO are
//     shown before they run, so the commands of the script follow them;
//   - commands queued by MULTI are shown when EXEC runs them, before EXEC;
//   - AUTH and HELLO AUTH show their passwords (and user names) as
//     "(redacted)", as Redis' redactClientCommandArgument;
//   - a blocking command is shown when it first runs, not again when served.
//
// # Cost when nobody monitors
//
// One atomic load per executed command (Server.monitoring, in
// accountWaited, the one place every executed command passes on the loop,
// whether it ran inline, in a queued batch, in EXEC or in a script), and
// one more for local commands (Server.local, for the scripts shown first).
// Nothing is formatted or allocated until a monitor exists.
//
// # Delivery
//
// The line is formatted once on the loop that ran the command and appended
// to each monitor's mailbox, the byte buffer Pub/Sub messages use
// (pubsub.Mailbox), under that monitor's own mutex held only
// for the append; the monitor's loop is woken when its mailbox goes from
// empty to non-empty and writes it at the start of its next turn. A slow
// monitor never blocks the writer: its mailbox grows, bounded by the normal
// class of client-output-buffer-limit as Redis bounds a monitor (a monitor
// is a normal client there); past it the monitor is closed. A monitor that
// ran the command itself gets the line after the command's reply, as in
// Redis.
//
// Ordering across clients is the order in which loops format lines, which
// for two loops running at once is not a total order of execution (Redis
// runs one command at a time); per client it is the order its commands ran.

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop/pubsub"
)

// monitorHub is the list of monitors.
type monitorHub struct {
	// n is len(list), the one atomic the data path reads.
	n    atomic.Int32
	mu   sync.Mutex
	list []*client // in MONITOR order; guarded by mu

	// The normal class of client-output-buffer-limit, bytes (0: none),
	// which bounds a monitor's mailbox.
	limits pubsub.Limits
}

// initMonitor follows client-output-buffer-limit's normal class. New calls
// it once s.params is set.
func (s *Server) initMonitor() {
	apply := func(v string) {
		n, _, _ := config.OutputBufferLimits(v)
		s.mon.limits.Set(n)
	}
	apply(s.params.String("client-output-buffer-limit"))
	s.params.OnChange("client-output-buffer-limit", func(v string) error { apply(v); return nil })
}

// monitoring reports whether any client monitors: the data path's one check.
func (s *Server) monitoring() bool { return s.mon.n.Load() != 0 }

const errMonitorDenyBlocking = "ERR MONITOR isn't allowed for DENY BLOCKING client"

// cmdMonitor is MONITOR: c becomes a monitor. As Redis, inside EXEC it is
// refused (a client that expects one reply per command), and a client that
// monitors already, or is a replica, gets no reply at all.
func (s *Server) cmdMonitor(c *client) {
	if c.multi.inExec {
		c.out = resp.AppendError(c.out, errMonitorDenyBlocking)
		return
	}
	if c.monitor.Load() || c.replica != nil {
		return
	}
	c.pubsubOf() // the mailbox
	h := &s.mon
	h.mu.Lock()
	h.list = append(h.list, c)
	h.n.Store(int32(len(h.list)))
	h.mu.Unlock()
	c.monitor.Store(true)
	c.out = append(c.out, resp.OK...)
}

// stopMonitor ends c's monitoring (RESET, close).
func (s *Server) stopMonitor(c *client) {
	if !c.monitor.Load() {
		return
	}
	h := &s.mon
	h.mu.Lock()
	if i := slices.Index(h.list, c); i >= 0 {
		h.list = slices.Delete(h.list, i, i+1) // keeps the order; clears the freed slot
	}
	h.n.Store(int32(len(h.list)))
	h.mu.Unlock()
	c.monitor.Store(false)
}

// monitorShownFirst are the commands Redis feeds to monitors explicitly
// before running them (evalCommand, fcallCommand), so the commands the
// script runs follow; they are flagged skip_monitor for call().
func monitorShownFirst(cmd *command.Command) bool {
	switch cmd.Name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// feedMonitorsBefore shows a script command before it runs (Server.local).
func (s *Server) feedMonitorsBefore(c *client, cmd *command.Command, args [][]byte) {
	if cmd.Parent == nil && monitorShownFirst(cmd) {
		s.feedMonitors(c, args, false)
	}
}

// feedMonitorsAfter shows a command that ran (accountWaited), unless Redis
// hides it: admin and skip_monitor commands. checked is the subcommand of
// a container.
func (s *Server) feedMonitorsAfter(c *client, checked *command.Command, args [][]byte) {
	if checked.Flags&(command.FlagAdmin|command.FlagSkipMonitor) != 0 {
		return
	}
	if checked.Parent != nil && checked.Parent.Flags&(command.FlagAdmin|command.FlagSkipMonitor) != 0 {
		return
	}
	s.feedMonitors(c, args, s.inScript(c))
}

// inScript reports whether c is running a script's command now: the
// script holds every shard and marks the client as in EXEC, and no EXEC
// of another client can run meanwhile (it would need the shards too).
func (s *Server) inScript(c *client) bool {
	return c.multi.inExec && s.scriptClock.start.Load() != 0
}

// feedMonitors formats the line for args run by c and appends it to every
// monitor's mailbox.
func (s *Server) feedMonitors(c *client, args [][]byte, lua bool) {
	addr := c.addr
	if lua {
		addr = "lua"
	}
	line := pubsub.AppendMonitorLine(make([]byte, 0, 64+len(c.addr)+16*len(args)), time.Now(), c.ctx.DB, addr, args)

	h := &s.mon
	h.mu.Lock()
	for _, m := range h.list {
		s.monitorDeliver(m, line)
	}
	h.mu.Unlock()
}

// monitorDeliver appends line to monitor m's mailbox and wakes m, or closes
// m past the normal class of client-output-buffer-limit.
func (s *Server) monitorDeliver(m *client, line []byte) {
	if m.killed.Load() {
		return
	}
	ps := m.ps.Load()
	box := ps.box.Open()
	wasEmpty := len(box) == 0
	size := ps.box.Close(append(box, line...))
	if s.mon.limits.Over(&ps.box, pubsub.Used(m.obl.Load(), size)) {
		s.closeOverLimit(m, "normal")
		return
	}
	if wasEmpty {
		_ = m.conn.Wake(nil)
	}
}
