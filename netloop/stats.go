package netloop

import (
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/scripting"
)

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
	RejectedShutdown    int64 // of those, refused during shutdown
	CommandsProcessed   int64
	NetInputBytes       int64
	NetOutputBytes      int64
	ProtocolErrors      int64
	EvictedClients      int64 // closed by client eviction (maxmemory-clients)
	ClientsMemory       int64 // the clients' tot-mem summed, as eviction counts it
	OpsPerSec           int64 // instantaneous_ops_per_sec
	EventLoops          int
	// AuthFailures counts refusals since start by reason, indexed like
	// AuthFailureNames (acl.go).
	AuthFailures [numAuthFailures]int64
	// Scripts are the Lua engine's runs and kills since start.
	Scripts scripting.Totals
}

// Stats returns the current snapshot. Totals are since start (CONFIG
// RESETSTAT only changes what INFO shows).
func (s *Server) Stats() Stats {
	t := s.statTotals()
	return Stats{
		State:               s.life.Load(),
		Addr:                s.Addr(),
		ConnectedClients:    s.connected.Load(),
		MaxClients:          s.live.maxClients.Load(),
		ConnectionsReceived: t.connections,
		RejectedConnections: t.rejected,
		RejectedShutdown:    s.stats.rejectedShutdown.Load(),
		CommandsProcessed:   t.commands,
		NetInputBytes:       t.netIn,
		NetOutputBytes:      t.netOut,
		ProtocolErrors:      t.protocolErrors,
		EvictedClients:      t.evictedClients,
		ClientsMemory:       s.cmem.Total(),
		OpsPerSec:           s.stats.opsSampler.rate(),
		EventLoops:          s.cfg.EventLoops,
		AuthFailures:        s.AuthFailures(),
		Scripts:             s.scripts.Totals(),
	}
}

// ClientInfo is one connection as diagnostics show it, read from the
// client's published atomics only (never its loop-owned state).
type ClientInfo struct {
	ID          int64  `json:"id"`
	Addr        string `json:"addr"`
	LocalAddr   string `json:"laddr"`
	Name        string `json:"name"`
	LibName     string `json:"lib_name"`
	LibVer      string `json:"lib_ver"`
	AgeSecs     int64  `json:"age"`
	IdleSecs    int64  `json:"idle"`
	Flags       string `json:"flags"`
	DB          int    `json:"db"`
	RESP        int    `json:"resp"`
	LastCommand string `json:"last_command"`
	Commands    int64  `json:"commands"`
	NetInBytes  int64  `json:"bytes_in"`
	NetOutBytes int64  `json:"bytes_out"`
	InputBuffer int64  `json:"input_buffer"`
	OutputBuf   int64  `json:"output_buffer"`
	// The states CLIENT LIST's flags encode, spelled out for the debug UI:
	// parked in a blocking command, postponed by CLIENT PAUSE, CLIENT
	// TRACKING on, MONITOR.
	Blocked  bool `json:"blocked"`
	Paused   bool `json:"paused"`
	Tracking bool `json:"tracking"`
	Monitor  bool `json:"monitor"`
}

// Clients returns up to limit connected clients (ordered by id) and how many
// are connected in all. limit <= 0 means no limit.
func (s *Server) Clients(limit int) (total int, list []ClientInfo) {
	all := s.clients()
	total = len(all)
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	now := time.Now()
	list = make([]ClientInfo, 0, len(all))
	for _, c := range all {
		last := ""
		if p := c.lastCmd.Load(); p != nil {
			last = *p
		}
		proto := 2
		if c.resp3.Load() {
			proto = 3
		}
		list = append(list, ClientInfo{
			ID: c.id, Addr: c.addr, LocalAddr: c.lad,
			Name: c.stringField(&c.name), LibName: c.stringField(&c.libName), LibVer: c.stringField(&c.libVer),
			AgeSecs:     int64(now.Sub(c.created) / time.Second),
			IdleSecs:    max(0, (now.UnixMilli()-c.lastInteraction.Load())/1000),
			Flags:       clientFlags(c),
			Blocked:     c.blockedPub.Load() != nil,
			Paused:      c.pausedFlag.Load(),
			Tracking:    strings.Contains(trackingFlagLetters(c), "t"),
			Monitor:     c.monitor.Load(),
			DB:          int(c.db.Load()),
			RESP:        proto,
			LastCommand: last,
			Commands:    c.pubCommands.Load(),
			NetInBytes:  c.pubNetIn.Load(),
			NetOutBytes: c.pubNetOut.Load(),
			InputBuffer: c.qbuf.Load(),
			OutputBuf:   c.obl.Load(),
		})
	}
	return total, list
}
