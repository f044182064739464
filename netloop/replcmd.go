package netloop

import (
	"errors"
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

// cmdReplicaOf runs REPLICAOF and SLAVEOF (replicaofCommand).
func (s *Server) cmdReplicaOf(c *client, args [][]byte) {
	r := s.cfg.Replication
	if r == nil {
		c.out = resp.AppendError(c.out, "ERR replication is not configured in this server")
		return
	}
	if resp.EqualFold(args[1], "no") && resp.EqualFold(args[2], "one") {
		if r.IsReplica() {
			r.SetMasterNone()
			s.log.Info("MASTER MODE enabled", "by", c.addr)
		}
		c.out = append(c.out, resp.OK...)
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
	if err := r.SetMaster(string(args[1]), int(port)); err != nil {
		if errors.Is(err, replication.ErrSameMaster) {
			c.out = append(c.out, "+OK Already connected to specified master\r\n"...)
			return
		}
		c.out = resp.AppendError(c.out, "ERR "+err.Error())
		return
	}
	s.log.Info("REPLICAOF", "master", string(args[1])+":"+string(args[2]), "by", c.addr)
	c.out = append(c.out, resp.OK...)
}

// infoReplicationFrom writes INFO replication from the replication role.
func (s *Server) infoReplicationFrom(b *strings.Builder) {
	s.cfg.Replication.Info(func(name string, v any) { field(b, name, v) })
}
