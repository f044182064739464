package netloop

import (
	"strings"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/status"
)

// Persistence is what the server needs of the persistence manager
// (shard/persist.Manager).
type Persistence interface {
	// Loading reports whether the dataset is being loaded.
	Loading() bool
	// WriteDenied is the error (no leading '-') write commands get while the
	// disk refuses writes, or "".
	WriteDenied() string
	LastSave() int64
	// Save writes a snapshot and returns when it is on disk; BGSave starts
	// one. Both fail with "ERR Background save already in progress" while
	// one runs.
	Save() error
	// BGSave starts a snapshot (or, with schedule, schedules one while an
	// AOF rewrite runs) and returns Redis' status reply.
	BGSave(schedule bool) (string, error)
	// BGRewriteAOF starts (or schedules, while a snapshot runs) rewriting
	// the append-only file and returns Redis' status reply; it fails with
	// Redis' text while one runs.
	BGRewriteAOF() (string, error)
	// Info writes the INFO persistence fields.
	Info(add func(name string, value any))
	// StatusSection is the status document's persistence section.
	StatusSection() status.Persistence
	// AwaitDurable reports whether changes up to append-only log offset end
	// may be acknowledged (always, unless appendfsync is always and they are
	// not on disk yet); when not, n.Notify is called once that may have
	// changed. The error is the disk's.
	AwaitDurable(end int64, n interface{ Notify() }) (bool, error)
}

// durable reports whether c's replies may be written: under appendfsync
// always they wait until the changes they acknowledge are on disk. While
// they wait the connection parses nothing more (connDurable) and its event
// loop serves other clients; the log wakes it (Notify) after the fsync that
// covers them, one fsync for every client waiting: the group commit Redis
// does in beforeSleep, without stopping the loop. If the disk fails the
// replies are never sent and the connection closes: an unacknowledged write
// may be retried by its client, an acknowledged one is never lost.
func (s *Server) durable(c *client) bool {
	end := c.ctx.LogEnd
	if end == 0 || s.cfg.Persistence == nil {
		return true
	}
	ok, err := s.cfg.Persistence.AwaitDurable(end, c)
	switch {
	case err != nil:
		s.log.Warn("closing a client whose writes could not be made durable", "id", c.id, "addr", c.addr, "err", err)
		c.out = c.out[:0]
		c.ctx.LogEnd = 0
		c.to(connClosing)
		return false
	case ok:
		c.ctx.LogEnd = 0
		return true
	}
	// Held. A reading connection stops parsing until the log wakes it; in
	// any other phase the replies stay in c.out and are offered again by the
	// next flush, when that phase ends (OnTraffic).
	if c.state == connReading {
		c.to(connDurable)
	}
	return false
}

// Notify wakes c's loop once the append-only log may have become durable
// for c's held replies (shard/aof.Notifier).
func (c *client) Notify() { _ = c.conn.Wake(nil) }

// errSaveInProgress is Redis' reply while a snapshot runs.
const errSaveInProgress = "ERR Background save already in progress"

// persistenceRefusal returns the error a command gets before it runs because
// of persistence, as Redis' processCommand: -LOADING while the dataset loads
// (for commands without the loading flag), -MISCONF for write commands and
// PING while the disk refuses writes. "" lets it run. One atomic load each
// when persistence is healthy.
func (s *Server) persistenceRefusal(cmd, checked *command.Command) string {
	p := s.cfg.Persistence
	if p == nil {
		return ""
	}
	if p.Loading() && checked.Flags&command.FlagLoading == 0 {
		return "-LOADING Redis is loading the dataset in memory\r\n"
	}
	if checked.Flags&command.FlagWrite != 0 || cmd.Name == "ping" {
		if msg := p.WriteDenied(); msg != "" {
			return "-" + msg + "\r\n"
		}
	}
	return ""
}

// writeRefused reports whether a command may not join an open batch because
// persistence or a replica's role refuses it (the full path then replies the
// error).
func (s *Server) writeRefused(cmd *command.Command) bool {
	if s.replicaJoinRefused(cmd) { // replcmd.go: -READONLY, -MASTERDOWN, -LOADING
		return true
	}
	p := s.cfg.Persistence
	return p != nil && cmd.Flags&command.FlagWrite != 0 && p.WriteDenied() != ""
}

// cmdPersistence runs SAVE, BGSAVE, BGREWRITEAOF and LASTSAVE.
func (s *Server) cmdPersistence(c *client, cmd *command.Command, args [][]byte) {
	p := s.cfg.Persistence
	if p == nil {
		if cmd.Name == "lastsave" { // as a Redis that never saved: the start time
			c.out = resp.AppendInt(c.out, s.started.Unix())
			return
		}
		c.out = resp.AppendError(c.out, "ERR persistence is not configured in this server")
		return
	}
	switch cmd.Name {
	case "lastsave":
		c.out = resp.AppendInt(c.out, p.LastSave())
	case "save":
		// The snapshot takes as long as the dataset needs: off the event loop.
		s.runAsync(c, func() []byte {
			if err := p.Save(); err != nil {
				if err.Error() == errSaveInProgress {
					return resp.AppendError(nil, err.Error())
				}
				return resp.AppendError(nil, "ERR") // Redis' shared.err; the log says why
			}
			return append([]byte(nil), resp.OK...)
		})
	case "bgsave":
		if len(args) > 2 || (len(args) == 2 && !resp.EqualFold(args[1], "schedule")) {
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
		reply, err := p.BGSave(len(args) == 2)
		if err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
		c.out = resp.AppendSimpleString(c.out, reply)
	case "bgrewriteaof":
		reply, err := p.BGRewriteAOF()
		if err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
		c.out = resp.AppendSimpleString(c.out, reply)
	}
}

// infoPersistence writes INFO persistence from the persistence manager.
func (s *Server) infoPersistence(_ *infoInput, b *strings.Builder) {
	p := s.cfg.Persistence
	if p == nil {
		field(b, "loading", 0)
		field(b, "async_loading", 0)
		field(b, "svc_persistence", "off (no data-dir wired: this server keeps data in memory only)")
		field(b, "rdb_bgsave_in_progress", 0)
		field(b, "rdb_last_save_time", s.started.Unix())
		field(b, "aof_enabled", 0)
		return
	}
	p.Info(func(name string, v any) { field(b, name, v) })
}
