package netloop

import (
	"net"
	"strconv"
)

// RunID is the server's random identity for this run, 40 hex digits: INFO's
// run_id, the status document's cluster.node_id and /debug/api/cluster's
// node id. Fixed by New; safe for concurrent use.
func (s *Server) RunID() string { return s.runID }

// Addr is the Redis port's host:port. It is safe to call from any goroutine
// at any time, also while Start runs (the diagnostics
// server is up before the Redis port): until the port accepts it is the
// configured address (port 0 until Start has picked a free one); once the
// engine has booted, the address really bound.
func (s *Server) Addr() string {
	select {
	case <-s.booted: // Start wrote s.addr before the engine booted
		return s.addr
	default:
	}
	return net.JoinHostPort(s.cfg.Bind, strconv.FormatInt(s.params.Int("port"), 10))
}
