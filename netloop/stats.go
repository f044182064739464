package netloop

import "github.com/svcdb/svcdb/core/lifecycle"

// Stats is a read-only snapshot of the network side for diagnostics
// (diaghttp, INFO). Building it reads atomics and takes the client registry's
// lock briefly; it never waits on an event loop or a shard.
type Stats struct {
	State               lifecycle.State
	Addr                string
	ConnectedClients    int64
	MaxClients          int64
	ConnectionsReceived int64 // admitted connections since start
	RejectedConnections int64 // refused at maxclients or during shutdown
	CommandsProcessed   int64
	NetInputBytes       int64
	NetOutputBytes      int64
	ProtocolErrors      int64
	OpsPerSec           int64 // instantaneous_ops_per_sec
	EventLoops          int
}

// Stats returns the current snapshot. Totals are since start (CONFIG
// RESETSTAT only changes what INFO shows).
func (s *Server) Stats() Stats {
	t := s.statTotals()
	return Stats{
		State:               s.life.Load(),
		Addr:                s.addr,
		ConnectedClients:    s.connected.Load(),
		MaxClients:          s.live.maxClients.Load(),
		ConnectionsReceived: t.connections,
		RejectedConnections: t.rejected,
		CommandsProcessed:   t.commands,
		NetInputBytes:       t.netIn,
		NetOutputBytes:      t.netOut,
		ProtocolErrors:      t.protocolErrors,
		OpsPerSec:           s.stats.opsSampler.rate(),
		EventLoops:          s.cfg.EventLoops,
	}
}
