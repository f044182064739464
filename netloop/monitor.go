package netloop

// MONITOR as Redis 7.0.15 has it.
//
// # What a monitor sees
//
// One line per command, as Redis' replicationFeedMonitors writes it:
//
//	+<unix seconds>.<microseconds> [<db> <client ip:port>] "arg" "arg" ...\r\n
//
// with every argument quoted as sdscatrepr quotes it (appendRepr), the
// address "lua" for a command a script ran (redis.call in EVAL or FCALL),
// and the database the command ran in as it stood after it ran (SELECT 3
// shows 3), as Redis feeds monitors at the end of call().
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
// (pubsub.go, pubsubState.box), under that monitor's own mutex held only
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/resp"
)

// monitorHub is the list of monitors.
type monitorHub struct {
	// n is len(list), the one atomic the data path reads.
	n    atomic.Int32
	mu   sync.Mutex
	list []*client // in MONITOR order; guarded by mu

	// The normal class of client-output-buffer-limit, bytes (0: none),
	// which bounds a monitor's mailbox.
	limits outputLimits
}

// initMonitor follows client-output-buffer-limit's normal class. New calls
// it once s.params is set.
func (s *Server) initMonitor() {
	apply := func(v string) {
		n, _, _ := config.OutputBufferLimits(v)
		s.mon.limits.set(n)
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
	h.list = removeClient(h.list, c)
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
	now := time.Now()
	line := make([]byte, 0, 64+len(c.addr)+16*len(args))
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		line = append(line, '0')
	}
	line = strconv.AppendInt(line, int64(us), 10)
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(c.ctx.DB), 10)
	line = append(line, ' ')
	if lua {
		line = append(line, "lua"...)
	} else {
		line = append(line, c.addr...)
	}
	line = append(line, "] "...)
	redact := redactedArgs(args)
	for i, a := range args {
		if i > 0 {
			line = append(line, ' ')
		}
		if redact.has(i) {
			line = append(line, `"(redacted)"`...)
			continue
		}
		line = resp.AppendRepr(line, a)
	}
	line = append(line, "\r\n"...)

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
	ps.mu.Lock()
	wasEmpty := len(ps.box) == 0
	ps.box = append(ps.box, line...)
	size := int64(len(ps.box))
	ps.size.Store(size)
	ps.mu.Unlock()
	if s.monitorOverLimit(ps, pubsubUsed(m, size)) {
		if !m.killed.Swap(true) {
			line := strings.TrimSuffix(s.clientLine(m, time.Now()), "\n")
			s.log.Warn("Client "+line+" scheduled to be closed ASAP for overcoming of output buffer limits.",
				"id", m.id, "addr", m.addr, "class", "normal")
			_ = m.conn.Wake(nil)
		}
		return
	}
	if wasEmpty {
		_ = m.conn.Wake(nil)
	}
}

// monitorOverLimit applies the normal class to a monitor's used bytes,
// as pubsubOverLimit applies the pubsub class.
func (s *Server) monitorOverLimit(ps *pubsubState, used int64) bool {
	return s.mon.limits.over(ps, used)
}

// argSet is a small set of argument positions.
type argSet uint64

func (a argSet) has(i int) bool { return i < 64 && a&(1<<i) != 0 }

// redactedArgs are the arguments Redis 7.0 shows as "(redacted)":
// AUTH's password and user name (authCommand redacts them when it has two
// or three arguments), and the user name and password of HELLO's AUTH
// option (helloCommand redacts them as it reads the option, so an option
// it refused before stops it).
func redactedArgs(args [][]byte) argSet {
	var set argSet
	switch {
	case resp.EqualFold(args[0], "auth"):
		if len(args) == 2 || len(args) == 3 {
			for i := 1; i < len(args); i++ {
				set |= 1 << i
			}
		}
	case resp.EqualFold(args[0], "hello"):
		if len(args) < 2 {
			return 0
		}
		if v, ok := resp.ParseInt(args[1]); !ok || v < 2 || v > 3 {
			return 0
		}
		for i := 2; i < len(args) && i < 62; i++ {
			more := len(args) - i - 1
			switch {
			case resp.EqualFold(args[i], "auth") && more >= 2:
				set |= 1<<(i+1) | 1<<(i+2)
				i += 2
			case resp.EqualFold(args[i], "setname") && more >= 1:
				i++
			default:
				return set
			}
		}
	}
	return set
}
