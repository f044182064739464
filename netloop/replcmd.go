package netloop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/core/resp"
)

// Replication is what the server needs of this node's replication role
// (core/replication.Replica): the refusals a replica gives clients, REPLICAOF,
// ROLE and INFO replication. nil: a standalone master (tests).
type Replication interface {
	// Refusal is the error (CRLF included) a client's command with these
	// flags gets because the server is a replica (-READONLY, -MASTERDOWN,
	// -LOADING), or "". One atomic load on a master: it is on the hot path.
	Refusal(flags command.Flag) string
	// SetMaster starts replicating from host:port; replication.ErrSameMaster
	// when it already follows that master.
	SetMaster(host string, port int) error
	// SetMasterNone makes the server a master again.
	SetMasterNone()
	// IsReplica reports whether the server follows a master.
	IsReplica() bool
	// Master returns the master's host and port, false on a master; it
	// never waits for a role change in progress.
	Master() (host string, port int, ok bool)
	// Info writes the INFO replication fields.
	Info(add func(name string, value any))
	// AppendRole appends ROLE's reply.
	AppendRole(dst []byte) []byte
	// Attach serves a replica that sent SYNC or PSYNC: it owns conn from
	// then on (the full sync, the stream, its ACKs).
	Attach(conn net.Conn, info replication.ReplicaInfo, psync bool, replID string, offset int64)
	// SyncStats returns INFO stats' sync_full, sync_partial_ok and
	// sync_partial_err.
	SyncStats() (full, partialOK, partialErr int64)
	// StartWait is WAIT: the count at once (nil wait) or a blocked wait
	// ending through owner (timeout 0: forever; negative: never blocks);
	// BlockedWaits counts those blocked (INFO's blocked_clients).
	StartWait(n int, timeout time.Duration, owner replication.WaitOwner) (*replication.AckWait, int)
	BlockedWaits() int64
	// LinkClients lists the replication links (attached replicas, the link
	// to our master) for CLIENT LIST; KillLinks closes those match selects
	// (CLIENT KILL TYPE replica / master) and returns how many.
	LinkClients() []replication.LinkClient
	KillLinks(match func(replication.LinkClient) bool) int
}

// NewClientID hands out the next client ID (replication links take theirs
// from the same sequence as clients).
func (s *Server) NewClientID() int64 { return s.nextID.Add(1) }

// linkType is CLIENT LIST/KILL's type of a replication link.
func linkType(l replication.LinkClient) string {
	if l.Master {
		return "master"
	}
	return "replica"
}

// appendLinkLines writes CLIENT LIST's lines for the replication links of
// type typ ("" any; "slave" is "replica") and, when ids is not nil, with
// those IDs.
func (s *Server) appendLinkLines(b *strings.Builder, typ string, ids map[int64]bool, now time.Time) {
	r := s.cfg.Replication
	if r == nil {
		return
	}
	if typ == "slave" {
		typ = "replica"
	}
	for _, l := range r.LinkClients() {
		if (typ != "" && linkType(l) != typ) || (ids != nil && !ids[l.ID]) {
			continue
		}
		flags := "S"
		if l.Master {
			flags = "M"
		}
		fmt.Fprintf(b, "id=%d addr=%s laddr=%s fd=-1 name= age=%d idle=%d flags=%s db=0 sub=0 psub=0 ssub=0 multi=-1 "+
			"qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=default redir=-1 resp=2 lib-name= lib-ver=\n",
			l.ID, l.Addr, l.LAddr, int64(now.Sub(l.Created)/time.Second), max(int64(now.Sub(l.LastIO)/time.Second), 0), flags, l.Cmd)
	}
}

// killLinks is CLIENT KILL for the replication links: typ "replica",
// "slave", "master" or "" (any; "normal" and "pubsub" select no link), with
// the ID, ADDR, LADDR and MAXAGE filters (0 or "": any).
func (s *Server) killLinks(typ string, id int64, addr, laddr string, maxAge int64) int64 {
	r := s.cfg.Replication
	if r == nil || typ == "normal" || typ == "pubsub" {
		return 0
	}
	if typ == "slave" {
		typ = "replica"
	}
	now := time.Now()
	return int64(r.KillLinks(func(l replication.LinkClient) bool {
		return (typ == "" || linkType(l) == typ) && (id == 0 || l.ID == id) && (addr == "" || l.Addr == addr) &&
			(laddr == "" || l.LAddr == laddr) && (maxAge == 0 || int64(now.Sub(l.Created)/time.Second) >= maxAge)
	}))
}

// replicationRefusal is Replication.Refusal, "" without replication.
func (s *Server) replicationRefusal(checked *command.Command) string {
	if s.cfg.Replication == nil {
		return ""
	}
	return s.cfg.Replication.Refusal(checked.Flags)
}

// tooFewReplicas reports whether this master refuses writes with
// -NOREPLICAS now (min-replicas-to-write): Redis' !checkGoodReplicasStatus,
// for the checks that run after dispatch (EXEC, scripts).
func (s *Server) tooFewReplicas() bool {
	return s.cfg.Replication != nil && s.cfg.Replication.Refusal(command.FlagWrite) == replication.ErrNoReplicas
}

// replicaJoinRefused reports whether cmd may not join an open batch because
// the server is a replica: the full path (process) then checks it. A
// container (XGROUP) never joins on a replica: its flags are its
// subcommand's, which the join path does not resolve.
func (s *Server) replicaJoinRefused(cmd *command.Command) bool {
	r := s.cfg.Replication
	if r == nil {
		return false
	}
	return r.Refusal(cmd.Flags) != "" || (len(cmd.Subcommands) > 0 && r.IsReplica())
}

// cmdReplicaOf runs REPLICAOF and SLAVEOF (replicaofCommand). Changing the
// role waits for the old link's goroutine (it may be loading a snapshot)
// and takes every shard once: it runs off the event loop (runAsync), and
// inside EXEC, which holds every shard, after EXEC let them go (Sentinel
// sends MULTI, REPLICAOF, CONFIG REWRITE, CLIENT KILL, EXEC): the reply is
// the one the change will give, known beforehand.
func (s *Server) cmdReplicaOf(c *client, args [][]byte) {
	r := s.cfg.Replication
	if r == nil {
		c.out = resp.AppendError(c.out, "ERR replication is not configured in this server")
		return
	}
	if resp.EqualFold(args[1], "no") && resp.EqualFold(args[2], "one") {
		if !r.IsReplica() {
			c.out = append(c.out, resp.OK...)
			return
		}
		addr := c.addr
		s.recordReplicaOf("")
		s.changeRole(c, resp.OK, func() {
			r.SetMasterNone()
			s.log.Info("MASTER MODE enabled", "by", addr)
		})
		return
	}
	port, ok := resp.ParseInt(args[2])
	if !ok {
		c.out = append(c.out, resp.ErrNotInteger...)
		return
	}
	if port < 0 || port > 65535 {
		c.out = resp.AppendError(c.out, "ERR Invalid master port")
		return
	}
	host, addr := string(args[1]), c.addr
	if h, p, ok := r.Master(); ok && p == int(port) && strings.EqualFold(h, host) {
		c.out = append(c.out, "+OK Already connected to specified master\r\n"...)
		return
	}
	s.recordReplicaOf(host + " " + strconv.FormatInt(port, 10))
	s.changeRole(c, resp.OK, func() {
		// As replicationSetMaster: clients blocked on a master's keys get an
		// error and are disconnected, whatever the link does next.
		if n := s.rt.AbortBlocked([]byte(errUnblockedRoleChange)); n > 0 {
			s.log.Info("blocked clients disconnected by REPLICAOF", "clients", n)
		}
		if err := r.SetMaster(host, int(port)); err != nil {
			if !errors.Is(err, replication.ErrSameMaster) { // a concurrent REPLICAOF got there first
				s.log.Warn("REPLICAOF failed", "master", host, "err", err)
			}
			return
		}
		s.log.Info("REPLICAOF", "master", host+":"+strconv.FormatInt(port, 10), "by", addr)
	})
}

// errUnblockedRoleChange is what a client blocked in BLPOP, BZPOPMIN,
// XREAD... gets when REPLICAOF host port runs (Redis 7.0's
// disconnectAllBlockedClients); its connection is then closed.
const errUnblockedRoleChange = "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"

// recordReplicaOf stores the role REPLICAOF asked for as the replicaof
// parameter ("" for NO ONE) at once, before the change itself runs, so a
// CONFIG REWRITE after it (in the same transaction, as Sentinel sends them)
// persists the new role.
func (s *Server) recordReplicaOf(v string) {
	if s.params == nil {
		return
	}
	if err := s.params.Record("replicaof", v); err != nil {
		s.log.Warn("replicaof not recorded for CONFIG REWRITE", "value", v, "err", err)
	}
}

// changeRole runs a role change off the event loop and replies reply, or,
// inside EXEC, replies at once and leaves the change for after EXEC.
func (s *Server) changeRole(c *client, reply []byte, change func()) {
	if c.multi.inExec {
		c.out = append(c.out, reply...)
		c.multi.afterExec = append(c.multi.afterExec, change)
		return
	}
	s.runAsync(c, func() []byte {
		change()
		return append([]byte(nil), reply...)
	})
}

// infoReplicationFrom writes INFO replication from the replication role.
func (s *Server) infoReplicationFrom(b *strings.Builder) {
	s.cfg.Replication.Info(func(name string, v any) { field(b, name, v) })
}

// cmdReplconf runs REPLCONF (replconfCommand) for a connection that is
// becoming a replica: listening-port, ip-address and capa are kept for its
// SYNC/PSYNC; ACK and GETACK are answered by nothing on a client connection
// (a replica's ACKs after the handoff are read by core/replication).
func (s *Server) cmdReplconf(c *client, args [][]byte) {
	if len(args)%2 == 0 {
		c.out = resp.AppendError(c.out, "ERR syntax error")
		return
	}
	if c.replica == nil {
		c.replica = &replication.ReplicaInfo{}
	}
	for i := 1; i < len(args); i += 2 {
		opt, val := args[i], args[i+1]
		switch {
		case resp.EqualFold(opt, "listening-port"):
			port, ok := resp.ParseInt(val)
			if !ok {
				c.out = append(c.out, resp.ErrNotInteger...)
				return
			}
			c.replica.ListeningPort = int(port)
		case resp.EqualFold(opt, "ip-address"):
			c.replica.IP = string(val)
		case resp.EqualFold(opt, "capa"):
			switch {
			case resp.EqualFold(val, "eof"):
				c.replica.CapaEOF = true
			case resp.EqualFold(val, "psync2"):
				c.replica.CapaPSync2 = true
			}
		case resp.EqualFold(opt, "ack"), resp.EqualFold(opt, "getack"):
			return // no reply, as Redis to a client that is not a replica
		case resp.EqualFold(opt, "rdb-only"):
			c.out = resp.AppendError(c.out, "ERR REPLCONF rdb-only is not supported by this server")
			return
		default:
			c.out = resp.AppendError(c.out, "ERR Unrecognized REPLCONF option: "+string(opt))
			return
		}
	}
	c.out = append(c.out, resp.OK...)
}

// cmdSync runs SYNC and PSYNC <replid> <offset> (syncCommand): the
// connection's socket is handed to core/replication, which answers
// +FULLRESYNC or +CONTINUE and streams; this loop forgets the connection
// (it closes its own descriptor of the socket, a duplicate stays with the
// replica's goroutines). A replica serves replicas too (chained): it
// answers -NOMASTERLINK itself while its own link is down.
func (s *Server) cmdSync(c *client, args [][]byte) {
	r := s.cfg.Replication
	if r == nil {
		c.out = resp.AppendError(c.out, "ERR replication is not configured in this server")
		return
	}
	psync := resp.EqualFold(args[0], "psync")
	var replID string
	var offset int64 = -1
	if psync {
		if len(args) != 3 {
			c.out = resp.AppendError(c.out, "ERR wrong number of arguments for 'psync' command")
			return
		}
		replID = string(args[1])
		off, ok := resp.ParseInt(args[2])
		if !ok {
			c.out = append(c.out, resp.ErrNotInteger...)
			return
		}
		offset = off
	}
	info := replication.ReplicaInfo{}
	if c.replica != nil {
		info = *c.replica
	}
	info.Addr = c.addr
	info.ID = c.id
	if info.IP == "" {
		info.IP, _, _ = net.SplitHostPort(c.addr)
	}
	fd, err := c.conn.Dup()
	if err != nil {
		c.out = resp.AppendError(c.out, "ERR "+err.Error())
		return
	}
	f := os.NewFile(uintptr(fd), "replica "+c.addr)
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		c.out = resp.AppendError(c.out, "ERR "+err.Error())
		return
	}
	s.log.Info("replica asks for synchronization", "replica", c.addr, "psync", psync)
	r.Attach(nc, info, psync, replID, offset)
	c.to(connClosing)
}

// cmdWait runs WAIT numreplicas timeout (waitCommand), blocking the client
// as BLPOP does; inside EXEC it does not wait (as Redis, where a
// transaction never blocks).
func (s *Server) cmdWait(c *client, args [][]byte) {
	r := s.cfg.Replication
	if r != nil && r.IsReplica() {
		c.out = resp.AppendError(c.out, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n, ok := resp.ParseInt(args[1])
	if !ok {
		c.out = append(c.out, resp.ErrNotInteger...)
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
	if r == nil {
		c.out = resp.AppendInt(c.out, 0)
		return
	}
	timeout := time.Duration(ms) * time.Millisecond
	if c.multi.inExec {
		timeout = -1
	}
	if w, acked := r.StartWait(int(n), timeout, c); acked == replication.WaitUnblocked {
		c.out = append(c.out, replication.UnblockedRoleChange...)
	} else if w == nil {
		c.out = resp.AppendInt(c.out, int64(acked))
	} else { // a blocked client (core/replication/wait.go): c.Unblocked or c.Aborted ends it
		c.waitAck.Store(w)
		c.to(connBlocked)
	}
}

// blockedWaits counts the clients blocked in WAIT.
func (s *Server) blockedWaits() int64 {
	if r := s.cfg.Replication; r != nil {
		return r.BlockedWaits()
	}
	return 0
}
