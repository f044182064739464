package netloop

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/gcstats"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop/meminfo"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// infoSections lists INFO's sections in Redis' order, with whether a plain
// INFO (default) includes them.
var infoSections = []struct {
	name    string
	dflt    bool
	section func(s *Server, in *infoInput, b *strings.Builder)
}{
	{"server", true, (*Server).infoServer},
	{"clients", true, (*Server).infoClients},
	{"memory", true, (*Server).infoMemory},
	{"persistence", true, (*Server).infoPersistence},
	{"stats", true, (*Server).infoStats},
	{"replication", true, (*Server).infoReplication},
	{"cpu", true, (*Server).infoCPU},
	{"commandstats", false, (*Server).infoCommandstats},
	{"errorstats", false, (*Server).infoErrorstats},
	{"latencystats", false, (*Server).infoLatencystats},
	{"keyspace", true, (*Server).infoKeyspace},
	{"hotshards", true, (*Server).infoHotshards},
	{"svc", true, (*Server).infoSvc},
}

// info builds INFO's text for the requested sections (none: default; "all";
// "everything"; or section names, case-insensitive).
func (s *Server) info(args [][]byte) string {
	want := map[string]bool{}
	all, dflt := false, len(args) == 0
	for _, a := range args {
		n := strings.ToLower(string(a))
		switch n {
		case "all", "everything":
			all = true
		case "default":
			dflt = true
		default:
			want[n] = true
		}
	}
	var b strings.Builder
	in := &infoInput{s: s}
	for _, sec := range infoSections {
		if !(all || want[sec.name] || (dflt && sec.dflt)) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		title := strings.ToUpper(sec.name[:1]) + sec.name[1:]
		if sec.name == "cpu" {
			title = "CPU"
		}
		b.WriteString("# " + title + "\r\n")
		sec.section(s, in, &b)
	}
	return b.String()
}

// InfoText is INFO's text for sections as INFO takes them (none: the
// default sections; "everything": all), for diagnostic bundles. Safe from
// any goroutine once Start has returned; before that (the HTTP side may ask
// while the server starts) it says so instead of reading what Start has not
// written yet.
func (s *Server) InfoText(sections ...string) string {
	select {
	case <-s.booted:
	default:
		return "# Server\r\nsvc_info:unavailable (the Redis port is not accepting yet)\r\n"
	}
	args := make([][]byte, len(sections))
	for i, sec := range sections {
		args[i] = []byte(sec)
	}
	return s.info(args)
}

func field(b *strings.Builder, k string, v any) {
	fmt.Fprintf(b, "%s:%v\r\n", k, v)
}

func (s *Server) infoServer(_ *infoInput, b *strings.Builder) {
	up := time.Since(s.started)
	exe, _ := os.Executable()
	field(b, "redis_version", RedisVersion)
	field(b, "svc_version", s.cfg.Version)
	field(b, "redis_mode", "standalone")
	field(b, "os", runtime.GOOS+" "+runtime.GOARCH)
	field(b, "arch_bits", 64)
	field(b, "multiplexing_api", "epoll")
	field(b, "go_version", runtime.Version())
	field(b, "process_id", os.Getpid())
	field(b, "run_id", s.runID)
	field(b, "tcp_port", s.port)
	field(b, "server_time_usec", time.Now().UnixMicro())
	field(b, "uptime_in_seconds", int64(up.Seconds()))
	field(b, "uptime_in_days", int64(up.Hours()/24))
	field(b, "hz", s.params.Int("hz"))
	field(b, "configured_hz", s.params.Int("hz"))
	field(b, "executable", exe)
	field(b, "config_file", s.cfg.ConfigFile)
	field(b, "io_threads_active", 0)
}

func (s *Server) infoClients(_ *infoInput, b *strings.Builder) {
	field(b, "connected_clients", s.connected.Load())
	field(b, "cluster_connections", 0)
	field(b, "maxclients", s.live.maxClients.Load())
	field(b, "blocked_clients", s.rt.BlockedClients()+s.blockedWaits())
	field(b, "tracking_clients", s.track.Clients())
	field(b, "clients_in_timeout_table", 0)
}

// infoMemory: netloop/meminfo maps the figures to Redis' names.
func (s *Server) infoMemory(in *infoInput, b *strings.Builder) {
	var ks meminfo.Keyspace
	for _, sn := range in.shards() {
		ks.Used, ks.OffHeap = ks.Used+sn.MemoryUsed, ks.OffHeap+sn.MemoryOffHeap
		ks.Structure, ks.Index = ks.Structure+sn.MemoryStructure, ks.Index+sn.MemoryIndex
		ks.HeapWaste += sn.MemoryHeapWaste
	}
	meminfo.Write(b, meminfo.Input{Keyspace: ks, MaxMemory: s.params.Size("maxmemory"),
		Policy: s.params.String("maxmemory-policy"), Scripts: s.scripts.Memory()})
}

func (s *Server) infoStats(in *infoInput, b *strings.Builder) {
	st := s.statTotals().minus(s.stats.base.Load())
	expired, hits, misses, netIn, netOut := st.expired, st.hits, st.misses, st.netIn, st.netOut
	// As Redis (stat_numconnections counts accepted clients only), refused
	// connections are in rejected_connections, not here.
	field(b, "total_connections_received", st.connections)
	field(b, "total_commands_processed", st.commands)
	field(b, "instantaneous_ops_per_sec", s.stats.opsSampler.rate())
	field(b, "total_net_input_bytes", netIn)
	field(b, "total_net_output_bytes", netOut)
	field(b, "rejected_connections", st.rejected)
	if r := s.cfg.Replication; r != nil { // the master side's syncs (core/replication)
		full, ok, bad := r.SyncStats()
		field(b, "sync_full", full)
		field(b, "sync_partial_ok", ok)
		field(b, "sync_partial_err", bad)
	}
	field(b, "expired_keys", expired)
	field(b, "evicted_keys", st.evicted)
	field(b, "evicted_clients", st.evictedClients) // maxmemory-clients (netloop/clientmem)
	field(b, "keyspace_hits", hits)
	field(b, "keyspace_misses", misses)
	psChannels, psPatterns, psShard := s.pubsub.Counts()
	field(b, "pubsub_channels", psChannels)
	field(b, "pubsub_patterns", psPatterns)
	field(b, "pubsubshard_channels", psShard)
	trkKeys, trkItems, trkPrefixes := s.trackingInfo()
	field(b, "tracking_total_keys", trkKeys)
	field(b, "tracking_total_items", trkItems)
	field(b, "tracking_total_prefixes", trkPrefixes)
	field(b, "total_protocol_errors", st.protocolErrors)
	field(b, "total_error_replies", in.cmds().ErrorTotal())
}

// infoInput is what one INFO reply reads, taken once on first use and shared
// by its sections: INFO everything would otherwise sum the command
// statistics four times and read the shards five.
type infoInput struct {
	s         *Server
	shardSnap []shard.Snapshot
	cmdSnap   *cmdstats.Snapshot
}

func (in *infoInput) shards() []shard.Snapshot {
	if in.shardSnap == nil {
		in.shardSnap = in.s.rt.Snapshots()
	}
	return in.shardSnap
}

func (in *infoInput) cmds() *cmdstats.Snapshot {
	if in.cmdSnap == nil {
		in.cmdSnap = in.s.cmdStats.Snapshot()
	}
	return in.cmdSnap
}

// writes is what Redis calls the dirty counter: write commands executed
// since the last save, which for svcdb is since start.
// infoReplication: the replication role's fields (replcmd.go); without one,
// a standalone master's, whose offsets stay at their start.
func (s *Server) infoReplication(_ *infoInput, b *strings.Builder) {
	if s.cfg.Replication != nil {
		s.infoReplicationFrom(b)
		return
	}
	field(b, "role", "master")
	field(b, "connected_slaves", 0)
	field(b, "master_failover_state", "no-failover")
	field(b, "master_replid", s.replID)
	field(b, "master_replid2", strings.Repeat("0", 40))
	field(b, "master_repl_offset", 0)
	field(b, "second_repl_offset", -1)
	field(b, "repl_backlog_active", 0)
	field(b, "repl_backlog_size", 1<<20)
	field(b, "repl_backlog_first_byte_offset", 0)
	field(b, "repl_backlog_histlen", 0)
}

func (s *Server) infoCPU(_ *infoInput, b *strings.Builder) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) string { return fmt.Sprintf("%d.%06d", t.Sec, t.Usec) }
	field(b, "used_cpu_sys", tv(ru.Stime))
	field(b, "used_cpu_user", tv(ru.Utime))
}

func (s *Server) infoKeyspace(in *infoInput, b *strings.Builder) {
	var keys, expires, ttlWeighted [keyspace.NumDatabases]int64
	for _, sn := range in.shards() {
		for i := range keys {
			keys[i] += sn.Keys[i]
			expires[i] += sn.Expires[i]
			ttlWeighted[i] += sn.AvgTTL[i] * sn.Expires[i]
		}
	}
	for i := range keys {
		if keys[i] > 0 {
			// avg_ttl: each shard's running estimate (as Redis keeps per db),
			// weighted by its keys with a time to live.
			var avg int64
			if expires[i] > 0 {
				avg = ttlWeighted[i] / expires[i]
			}
			fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", i, keys[i], expires[i], avg)
		}
	}
}

func (s *Server) infoSvc(in *infoInput, b *strings.Builder) {
	field(b, "svc_shards", s.rt.NumShards())
	field(b, "svc_event_loops", s.cfg.EventLoops)
	field(b, "svc_drain_strategy", s.rt.Strategy())
	var depth int
	var batches int64
	for _, sn := range in.shards() {
		depth += sn.QueueDepth
		batches += sn.Batches
	}
	field(b, "svc_shard_queue_depth", depth)
	field(b, "svc_shard_batches_queued_total", batches)
	gc := gcstats.Read() // the collector's gc_* fields (core/gcstats): a new section would change INFO all's list
	gc.WriteInfo(b)
}

// ---- CONFIG ------------------------------------------------------------------

func (s *Server) cmdConfig(c *client, cmd *command.Command, args [][]byte) {
	sub := s.subcommand(c, cmd, args)
	switch sub.Name {
	case "get":
		patterns := make([]string, 0, len(args)-2)
		for _, p := range args[2:] {
			patterns = append(patterns, string(p))
		}
		pairs := s.params.Get(patterns)
		c.out = resp.AppendMapHeader(c.out, len(pairs), c.ctx.RESP3)
		for _, kv := range pairs {
			c.out = resp.AppendBulkString(c.out, kv[0])
			c.out = resp.AppendBulkString(c.out, kv[1])
		}
	case "set":
		if len(args)%2 != 0 { // arity (-4) passed: Redis calls an unpaired value a syntax error
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
		pairs := make([][2]string, 0, (len(args)-2)/2)
		for i := 2; i+1 < len(args); i += 2 {
			pairs = append(pairs, [2]string{string(args[i]), string(args[i+1])})
		}
		if err := s.params.SetMany(pairs, config.SourceRuntime); err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
		c.out = append(c.out, resp.OK...)
	case "resetstat":
		s.resetStats()
		c.out = append(c.out, resp.OK...)
	case "help":
		c.out = resp.AppendArrayHeader(c.out, len(configHelp))
		for _, l := range configHelp {
			c.out = resp.AppendSimpleString(c.out, l)
		}
	case "rewrite":
		path := s.params.ConfigFile()
		if path == "" {
			c.out = resp.AppendError(c.out, "ERR The server is running without a config file")
			return
		}
		if err := s.params.Rewrite(path); err != nil {
			s.log.Warn("CONFIG REWRITE failed", "file", path, "err", err)
			c.out = resp.AppendError(c.out, "ERR Rewriting config file: "+err.Error())
			return
		}
		c.out = append(c.out, resp.OK...)
	default:
		c.out = resp.AppendError(c.out, "ERR CONFIG "+strings.ToUpper(sub.Name)+" is not supported by svcdb yet")
	}
}

// configHelp is Redis 7.0's CONFIG HELP text.
var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
	"HELP",
	"    Prints this help.",
}

// statTotals are the cumulative counters INFO stats shows. CONFIG RESETSTAT
// records them as a baseline that INFO subtracts: the counters themselves
// belong to loops and shards and are never written by anyone else.
type statTotals struct {
	commands, connections, rejected, netIn, netOut, expired, hits, misses, protocolErrors int64
	evicted, evictedClients                                                               int64
}

func (s *Server) statTotals() statTotals {
	t := statTotals{
		commands:       s.totalCommands(),
		connections:    s.stats.connectionsReceived.Load(),
		rejected:       s.stats.rejected.Load(),
		protocolErrors: s.stats.protocolErrors.Load(),
		evictedClients: s.cmem.Evicted(),
	}
	t.netIn, t.netOut = s.totalNet()
	for _, sn := range s.rt.Snapshots() {
		t.expired += sn.Expired
		t.evicted += sn.Evicted
		t.hits += sn.Hits
		t.misses += sn.Misses
	}
	return t
}

func (t statTotals) minus(base *statTotals) statTotals {
	if base == nil {
		return t
	}
	return statTotals{
		commands: t.commands - base.commands, connections: t.connections - base.connections,
		rejected: t.rejected - base.rejected, netIn: t.netIn - base.netIn, netOut: t.netOut - base.netOut,
		expired: t.expired - base.expired, hits: t.hits - base.hits, misses: t.misses - base.misses,
		protocolErrors: t.protocolErrors - base.protocolErrors,
		evicted:        t.evicted - base.evicted, evictedClients: t.evictedClients - base.evictedClients,
	}
}

// resetStats is CONFIG RESETSTAT.
func (s *Server) resetStats() {
	t := s.statTotals()
	s.stats.base.Store(&t)
	s.cmdStats.Reset()
}
