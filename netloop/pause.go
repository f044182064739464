package netloop

// CLIENT PAUSE and CLIENT UNPAUSE as Redis 7.0.15.
//
// CLIENT PAUSE <ms> [WRITE|ALL] postpones, until the pause ends, every
// command (ALL, the default) or the commands that may change the dataset or
// the replication stream (WRITE): those flagged write, the ones Redis 7.0
// flags may_replicate (EVAL, EVALSHA, FCALL, PUBLISH, SPUBLISH, PFCOUNT;
// COMMAND INFO does not show that flag), and EXEC of a transaction that
// queued any of them. As in Redis' processCommand, the check comes after
// the command was looked up, its arity, authentication and ACL checked, and
// before MULTI queues it. A second PAUSE keeps the later end and the
// stricter mode. Replicas are never paused. While a pause lasts the active
// expiry cycle, its eviction and lazy expiry's deletes are held
// (shard.Runtime.HoldExpiry): an expired key reads as missing and stays
// counted by DBSIZE until the pause ends, as Redis 7.0's expireIfNeeded.
//
// A postponed client parks: the command stays unparsed in its input, the
// connection goes to connPaused and its loop forgets it until the pause
// ends (CLIENT UNPAUSE, or the timer at the pause's end), which wakes every
// parked client; each parses its command again and runs it, or parks again
// under a newer pause. Nothing spins and nothing polls.
//
// The data path's cost when no pause is in effect is one atomic load per
// command (pauseState.mode).

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// Pause modes, ordered: a stricter mode is larger.
const (
	pauseNone int32 = iota
	pauseWrite
	pauseAll
)

// pauseState is the server's client pause.
type pauseState struct {
	mode atomic.Int32 // pauseNone, pauseWrite or pauseAll: the data path's one load
	mu   sync.Mutex
	end  int64       // unix ms the pause ends; guarded by mu
	tmr  *time.Timer // ends the pause at end; guarded by mu
	// parked are the clients waiting for the pause to end; guarded by mu.
	parked map[*client]struct{}
}

func (s *Server) cmdClientPause(c *client, args [][]byte) {
	mode := pauseAll
	if len(args) == 4 {
		switch {
		case resp.EqualFold(args[3], "write"):
			mode = pauseWrite
		case resp.EqualFold(args[3], "all"):
		default:
			c.out = resp.AppendError(c.out, "ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	} else if len(args) > 4 {
		c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], "client")
		return
	}
	ms, ok := resp.ParseInt(args[2])
	if !ok {
		c.out = resp.AppendError(c.out, "ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.out = resp.AppendError(c.out, "ERR timeout is negative")
		return
	}
	now := time.Now().UnixMilli()
	if ms > 1<<62-now {
		c.out = resp.AppendError(c.out, "ERR timeout is out of range")
		return
	}
	s.pauseClients(now+ms, mode)
	c.out = append(c.out, resp.OK...)
}

// pauseClients starts or extends the pause: the later end and the stricter
// mode win, as Redis' pauseClients.
func (s *Server) pauseClients(end int64, mode int32) {
	p := &s.clientPause
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode.Load() != pauseNone {
		end = max(end, p.end)
		mode = max(mode, p.mode.Load())
	}
	p.end = end
	p.mode.Store(mode)
	s.rt.HoldExpiry(true)
	if p.tmr != nil {
		p.tmr.Stop()
	}
	p.tmr = time.AfterFunc(time.Until(time.UnixMilli(end)), s.pauseTimerFired)
}

// pauseTimerFired ends the pause if its end has come (a later PAUSE may
// have moved it; its own timer then fires later).
func (s *Server) pauseTimerFired() {
	p := &s.clientPause
	p.mu.Lock()
	if p.mode.Load() == pauseNone || time.Now().UnixMilli() < p.end {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	s.unpauseClients()
}

// unpauseClients ends the pause and wakes every parked client.
func (s *Server) unpauseClients() {
	p := &s.clientPause
	p.mu.Lock()
	p.mode.Store(pauseNone)
	p.end = 0
	if p.tmr != nil {
		p.tmr.Stop()
		p.tmr = nil
	}
	s.rt.HoldExpiry(false)
	for c := range p.parked {
		_ = c.conn.Wake(nil)
	}
	clear(p.parked)
	p.mu.Unlock()
}

func (s *Server) cmdClientUnpause(c *client) {
	s.unpauseClients()
	c.out = append(c.out, resp.OK...)
}

// pauseHolds reports whether the pause in effect postpones checked (args
// are its arguments, for EXEC the client's queue is read). Called only
// when pauseState.mode is not pauseNone.
func (s *Server) pauseHolds(c *client, checked *command.Command) bool {
	switch s.clientPause.mode.Load() {
	case pauseNone:
		return false
	case pauseAll:
		return c.replica == nil
	}
	if c.replica != nil {
		return false
	}
	if mayReplicate(checked) {
		return true
	}
	if checked.Name == "exec" && checked.Parent == nil && c.multi.active {
		for _, q := range c.multi.queue {
			if mayReplicate(q.checked) {
				return true
			}
		}
	}
	return false
}

// mayReplicate: a command CLIENT PAUSE WRITE postpones (Redis'
// CMD_WRITE|CMD_MAY_REPLICATE).
func mayReplicate(cmd *command.Command) bool {
	if cmd.Flags&(command.FlagWrite|command.FlagMayReplicate) != 0 {
		return true
	}
	if cmd.Parent != nil {
		return false
	}
	switch cmd.Name {
	case "eval", "evalsha", "fcall", "publish", "spublish", "pfcount":
		return true
	}
	return false
}

// parkPaused makes c wait for the pause to end; its command stays in its
// input and runs when c is woken (resume, connPaused).
func (s *Server) parkPaused(c *client) {
	p := &s.clientPause
	p.mu.Lock()
	if p.mode.Load() == pauseNone { // ended meanwhile: wake at once
		p.mu.Unlock()
		c.to(connPaused)
		_ = c.conn.Wake(nil)
		return
	}
	if p.parked == nil {
		p.parked = make(map[*client]struct{})
	}
	p.parked[c] = struct{}{}
	p.mu.Unlock()
	c.to(connPaused)
	c.pausedFlag.Store(true)
}

// unparkPaused forgets a closing client.
func (s *Server) unparkPaused(c *client) {
	p := &s.clientPause
	p.mu.Lock()
	delete(p.parked, c)
	p.mu.Unlock()
}
