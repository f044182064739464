package netloop

import (
	"errors"
	"strconv"
	"strings"

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
	// Info writes the INFO replication fields.
	Info(add func(name string, value any))
	// AppendRole appends ROLE's reply.
	AppendRole(dst []byte) []byte
}

// replicationRefusal is Replication.Refusal, "" without replication.
func (s *Server) replicationRefusal(checked *command.Command) string {
	if s.cfg.Replication == nil {
		return ""
	}
	return s.cfg.Replication.Refusal(checked.Flags)
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
// and takes every shard once: it runs off the event loop (runAsync).
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
		// Stopping the link waits for its goroutine, which may be loading a
		// snapshot: off the event loop.
		addr := c.addr
		s.runAsync(c, func() []byte {
			r.SetMasterNone()
			s.log.Info("MASTER MODE enabled", "by", addr)
			return append([]byte(nil), resp.OK...)
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
	s.runAsync(c, func() []byte {
		if err := r.SetMaster(host, int(port)); err != nil {
			if errors.Is(err, replication.ErrSameMaster) {
				return []byte("+OK Already connected to specified master\r\n")
			}
			return resp.AppendError(nil, "ERR "+err.Error())
		}
		s.log.Info("REPLICAOF", "master", host+":"+strconv.FormatInt(port, 10), "by", addr)
		return append([]byte(nil), resp.OK...)
	})
}

// infoReplicationFrom writes INFO replication from the replication role.
func (s *Server) infoReplicationFrom(b *strings.Builder) {
	s.cfg.Replication.Info(func(name string, v any) { field(b, name, v) })
}
