package netloop

import (
	"github.com/svcdb/svcdb/core/replication"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// The status collector: the one place the status document is built, for
// STATUS JSON (below) and GET /status/json (diaghttp, through StatusJSON).
// Both call Status, so for one instant and one state they are the same bytes
// (times are at one-second precision; see core/status).

// StatusDeadline is how long the collector waits for each shard's owner to
// answer its control message (shard.Runtime.Inspect). An idle or merely busy
// shard answers in microseconds; 100ms is a tenth of a second-resolution
// poll, long enough that only a stuck shard (a command running for 100ms, a
// pathological expiry cycle) misses it, and short enough that STATUS JSON,
// which runs on an event loop, stalls that loop's other clients at most this
// long. A shard that misses it is reported late, with null keyspace fields.
const StatusDeadline = 100 * time.Millisecond

// processStarted is when this process started (package initialisation):
// svc.started_at and svc.uptime_seconds count from here, so a document
// served while the dataset loads already has a meaningful age.
var processStarted = time.Now()

var statusHelp = []string{
	"STATUS <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"JSON",
	"    Return the status document as one JSON string, the same as GET /status/json:",
	"    svc, health, cluster, clients, memory, persistence, shards, keyspace,",
	"    commands and hot_shards.",
	"HELP",
	"    Prints this help.",
}

// cmdStatus is STATUS: JSON returns the document, HELP or no subcommand the
// help. process has already refused unknown subcommands and bad arities.
func (s *Server) cmdStatus(c *client, cmd *command.Command, args [][]byte) {
	if len(args) >= 2 && s.subcommand(c, cmd, args).Name == "json" {
		c.out = resp.AppendBulk(c.out, s.Status(time.Now()))
		return
	}
	c.out = resp.AppendArrayHeader(c.out, len(statusHelp))
	for _, l := range statusHelp {
		c.out = resp.AppendSimpleString(c.out, l)
	}
}

// StatusJSON renders the status document for now; GET /status/json serves
// it. Safe from any goroutine; it waits at most StatusDeadline for the shards.
func (s *Server) StatusJSON() []byte { return s.Status(time.Now()) }

// Status renders the status document describing the instant now.
func (s *Server) Status(now time.Time) []byte {
	d := s.StatusDocument(now)
	return status.Render(&d)
}

// StatusDocument collects the status document for the instant now: the
// shards' owners answer a control message (at most StatusDeadline), the rest
// comes from published counters and the parameter registry. It reads only
// what is safe before Start and during shutdown, so /status/json works in
// every lifecycle state.
func (s *Server) StatusDocument(now time.Time) status.Document {
	reports := s.rt.Inspect(StatusDeadline)
	snaps := s.rt.Snapshots()
	period, hotPct, warmPct := s.hotShardDefaults()
	heat := s.rt.HotShards(period, hotPct, warmPct)
	totals := s.statTotals()
	state := lifecycleName(s.life.Load())
	connected, maxClients := s.connected.Load(), s.live.maxClients.Load()
	maxMemory := s.params.Size("maxmemory")
	memWarn := s.params.Int("status-memory-warning-percent")
	connWarn := s.params.Int("status-connection-warning-percent")

	var used int64
	for _, sn := range snaps {
		used += sn.MemoryUsed // published: known even for a late shard
	}

	d := status.Document{
		Svc: status.Svc{
			Version:       s.cfg.Version,
			RedisVersion:  RedisVersion,
			GitCommit:     status.GitCommit(),
			GoVersion:     runtime.Version(),
			PID:           os.Getpid(),
			State:         state,
			StartedAt:     status.At(processStarted),
			GeneratedAt:   status.At(now),
			UptimeSeconds: max(now.Unix()-processStarted.Unix(), 0),
		},
		Cluster: status.Cluster{
			Mode:   "standalone",
			NodeID: s.runID,
			// From the registry, not s.addr: Start writes that while HTTP may
			// already be serving this document (lifecycle starting).
			Address:       net.JoinHostPort(s.cfg.Bind, strconv.FormatInt(s.params.Int("port"), 10)),
			Shards:        s.rt.NumShards(),
			EventLoops:    s.cfg.EventLoops,
			DrainStrategy: s.rt.Strategy().String(),
		},
		Clients: status.Clients{
			Connected:           connected,
			MaxClients:          maxClients,
			UsedPercent:         status.Percent(connected, maxClients),
			WarningPercent:      connWarn,
			ConnectionsReceived: totals.connections,
			ConnectionsRejected: totals.rejected,
		},
		Memory: status.Memory{
			UsedBytes:      used,
			MaxMemoryBytes: maxMemory,
			WarningPercent: memWarn,
			Policy:         s.params.String("maxmemory-policy"),
		},
		Persistence: s.PersistenceStatus(),
		Shards:      make([]status.Shard, 0, len(reports)),
		Keyspace:    status.Keyspace{Complete: true, LateShards: []int{}, Databases: []status.Database{}},
		Commands:    status.Commands{Total: totals.commands, OpsPerSec: s.stats.opsSampler.rate()},
	}
	if maxMemory > 0 {
		p := status.Percent(used, maxMemory)
		d.Memory.UsedPercent = &p
	}

	var keys, expires [keyspace.NumDatabases]int64
	for i := range reports {
		r := &reports[i]
		sh := status.Shard{ID: r.ID, State: status.ShardOK, QueueDepth: r.QueueDepth}
		if r.ID < len(heat.Shards) {
			sh.OpsPerSec = status.Round2(heat.Shards[r.ID].OpsPerSec)
		}
		if r.Late {
			sh.State = status.ShardLate
			d.Keyspace.Complete = false
			d.Keyspace.LateShards = append(d.Keyspace.LateShards, r.ID)
		} else {
			k, e, m := r.TotalKeys(), r.TotalExpires(), r.MemoryUsed
			sh.Keys, sh.Expires, sh.MemoryBytes = &k, &e, &m
			for db := range keys {
				keys[db] += r.Keys[db]
				expires[db] += r.Expires[db]
			}
		}
		d.Shards = append(d.Shards, sh)
	}
	for db := range keys {
		if keys[db] > 0 {
			d.Keyspace.Databases = append(d.Keyspace.Databases, status.Database{DB: db, Keys: keys[db], Expires: expires[db]})
		}
	}

	if s.params.Bool("hotshards-enabled") {
		rep := &status.HotReport{
			PeriodSecs:      heat.PeriodSecs,
			TotalOpsPerSec:  status.Round2(heat.TotalOpsPerSec),
			ImbalanceRatio:  status.Round2(heat.ImbalanceRatio),
			HotCount:        heat.HotCount,
			WarmCount:       heat.WarmCount,
			Shards:          make([]status.ShardHot, 0, len(heat.Shards)),
			Recommendations: append([]string{}, heat.Recommendations...),
		}
		for _, h := range heat.Shards {
			rep.Shards = append(rep.Shards, status.ShardHot{
				ID: h.ID, OpsPerSec: status.Round2(h.OpsPerSec), ReadsPerSec: status.Round2(h.ReadsPerSec),
				WritesPerSec: status.Round2(h.WritesPerSec), Percentage: status.Round2(h.Percentage), Status: h.Status,
			})
		}
		d.HotShards = status.HotShards{Enabled: true, HotReport: rep}
	}

	d.Health = status.Assess(status.HealthInput{
		State:                    state,
		UsedMemory:               used,
		MaxMemory:                maxMemory,
		MemoryWarningPercent:     memWarn,
		Connected:                connected,
		MaxClients:               maxClients,
		ConnectionWarningPercent: connWarn,
		LateShards:               d.Keyspace.LateShards,
		Deadline:                 StatusDeadline,
		Persistence:              d.Persistence,
		Replication:              s.replicationHealth(),
	})
	return d
}

// replicationHealth is what the health verdict reads of replication; nil
// without it (Config.Replication nil or a role that reports no status).
func (s *Server) replicationHealth() *status.ReplicationHealth {
	rs, ok := s.cfg.Replication.(interface{ Status() replication.Status })
	if !ok {
		return nil
	}
	st := rs.Status()
	return &status.ReplicationHealth{Master: st.Role == "master", Online: st.OnlineReplicas, Peak: st.PeakReplicas,
		MinToWrite: st.MinReplicasToWrite, Good: st.GoodReplicas}
}

// PersistenceStatus is the status document's persistence section, also
// what /metrics reads of persistence at scrape time. A server without a
// persistence manager (Config.Persistence nil) saves nothing: the section
// says so, with the process start as the last save (Redis' lastsave before
// any save).
func (s *Server) PersistenceStatus() status.Persistence {
	if p := s.cfg.Persistence; p != nil {
		return p.StatusSection()
	}
	return status.NoPersistence(processStarted, s.params.String("appendfsync"))
}

// lifecycleName is the document's name for a lifecycle state.
func lifecycleName(st lifecycle.State) string {
	if st.Stopping() { // the document has one state for both phases
		return status.StateShuttingDown
	}
	return st.Name()
}
