package diaghttp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/gcstats"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/persist"
)

// family is one metric family: its metadata, written by us, and its samples,
// written by a metrics.Set of its own. VictoriaMetrics/metrics writes either
// no metadata or empty HELP text, and cannot make a callback counter; owning
// the "# HELP"/"# TYPE" lines fixes both.
type family struct {
	name, help, typ string
	set             *metrics.Set
	// samples, when set, writes the family's samples instead of set: for
	// series computed from the command statistics at scrape time.
	samples func(w *bytes.Buffer)
}

// registry holds every metric. Gauges and callback counters read the
// snapshot taken at the start of each scrape (one Source call per scrape, so
// all values in a scrape agree); scrapes run one at a time.
type registry struct {
	src      Source
	families []*family

	mu      sync.Mutex // one scrape at a time; guards snap, buf and current
	snap    scrape
	current string // the family a custom writer is writing
	buf     bytes.Buffer
	shards  int
}

type scrape struct {
	net    netloop.Stats
	shards []shard.Snapshot
	maxMem int64
	cmds   *cmdstats.Snapshot
	// slowlogLen, state and persist are read once per scrape too.
	slowlogLen int
	state      lifecycle.State
	persist    status.Persistence
	repl       replication.Status
	// gc is the collector's reading (core/gcstats), taken once per scrape
	// from runtime/metrics: never on the data path.
	gc gcstats.Stats
}

// ReplicationSource is the part of a Source that reports replication
// (cmd/svcdb's source reads core/replication's Replica). A Source without
// it is a master without replicas: its svc_replication_* series say so.
type ReplicationSource interface {
	Replication() replication.Status
}

// replicationOf reads src's replication state.
func replicationOf(src Source) replication.Status {
	if rs, ok := src.(ReplicationSource); ok {
		return rs.Replication()
	}
	return replication.Status{Role: "master", LinkUp: true, Replicas: []replication.ReplicaStatus{}}
}

// PersistenceSource is the part of a Source that reports persistence
// (cmd/svcdb's source reads the persistence manager through
// netloop.Server.PersistenceStatus). A Source without it has no persistence:
// its svc_persistence_* series read 0.
type PersistenceSource interface {
	Persistence() status.Persistence
}

// persistenceOf reads src's persistence section, or the section of a server
// without persistence.
func persistenceOf(src Source) status.Persistence {
	if ps, ok := src.(PersistenceSource); ok {
		return ps.Persistence()
	}
	return status.Persistence{}
}

// UsersSource is implemented by a Source that has ACL users
// (netloop.Server.ACLUsers): /debug/api/users and bundles' users.json list
// them with their rules, never their password hashes. A Source without it
// lists none.
type UsersSource interface {
	ACLUsers() []acl.UserSummary
}

// usersOf reads src's ACL users, or none.
func usersOf(src Source) []acl.UserSummary {
	if us, ok := src.(UsersSource); ok {
		return us.ACLUsers()
	}
	return []acl.UserSummary{}
}

// persistErrorKinds are svc_persistence_errors_total's kind label values
// (shard/persist's error kinds) and where each count lives.
var persistErrorKinds = []struct {
	kind  string
	count func(*status.PersistenceErrors) int64
}{
	{persist.KindRDB, func(e *status.PersistenceErrors) int64 { return e.RDB }},
	{persist.KindAOFWrite, func(e *status.PersistenceErrors) int64 { return e.AOFWrite }},
	{persist.KindAOFFsync, func(e *status.PersistenceErrors) int64 { return e.AOFFsync }},
	{persist.KindLoad, func(e *status.PersistenceErrors) int64 { return e.Load }},
}

func newRegistry(src Source, version string) *registry {
	r := &registry{src: src}
	r.shards = len(src.Shards())

	g := func(name, help string, f func(*scrape) float64) {
		fam := r.add(name, help, "gauge")
		fam.set.NewGauge(name, func() float64 { return f(&r.snap) })
	}
	// c registers a counter whose value is read from the snapshot at scrape
	// time (a callback gauge underneath, exposed with TYPE counter: the
	// sources are monotonic totals since start).
	c := func(name, help string, f func(*scrape) float64) {
		fam := r.add(name, help, "counter")
		fam.set.NewGauge(name, func() float64 { return f(&r.snap) })
	}
	perShard := func(name, help string, f func(*shard.Snapshot) float64) {
		fam := r.add(name, help, "gauge")
		for i := 0; i < r.shards; i++ {
			fam.set.NewGauge(fmt.Sprintf(`%s{shard="%d"}`, name, i), func() float64 {
				if i < len(r.snap.shards) {
					return f(&r.snap.shards[i])
				}
				return 0
			})
		}
	}
	sumShards := func(f func(*shard.Snapshot) int64) func(*scrape) float64 {
		return func(sc *scrape) float64 {
			var n int64
			for i := range sc.shards {
				n += f(&sc.shards[i])
			}
			return float64(n)
		}
	}

	// The six published metrics (SPEC Part A).
	g("svc_memory_used_bytes", "Memory used by the keyspace, summed over shards, in bytes.",
		sumShards(func(s *shard.Snapshot) int64 { return s.MemoryUsed }))
	g("svc_memory_maxmemory_bytes", "The maxmemory limit in bytes; 0 when unlimited.",
		func(sc *scrape) float64 { return float64(sc.maxMem) })
	g("svc_memory_overhead_bytes", "The part of svc_memory_used_bytes held by the keyspace's structure (slots, key indexes, expiry lists) rather than keys and values, in bytes (INFO used_memory_overhead).",
		sumShards(func(s *shard.Snapshot) int64 { return s.MemoryStructure }))
	g("svc_memory_index_bytes", "The key indexes' tables, both while one rehashes: part of svc_memory_overhead_bytes, in bytes (INFO used_memory_index).",
		sumShards(func(s *shard.Snapshot) int64 { return s.MemoryIndex }))
	r.custom("svc_commands_duration_seconds",
		"Latency of each command as its client sees it, from its parse to its reply being ready to write (waiting for its shard's queue and token included), all commands together, in seconds.",
		"histogram", r.writeHistogram("svc_commands_duration_seconds", func(t *cmdstats.Command) (*cmdstats.Histogram, time.Duration) { return &t.Latency, t.Total }))
	r.custom("svc_commands_execution_seconds",
		"Time each command spent executing, without its wait for a shard: svc_commands_duration_seconds minus the queue and token wait, all commands together, in seconds.",
		"histogram", r.writeHistogram("svc_commands_execution_seconds", func(t *cmdstats.Command) (*cmdstats.Histogram, time.Duration) { return &r.snap.cmds.Exec, t.Exec }))
	fam := r.add("svc_persistence_errors_total",
		"Persistence failures since start, by kind: rdb (writing a snapshot), aof-write (writing or rewriting the append-only file), aof-fsync (fsyncing it), load (reading the files at start-up).", "counter")
	for _, k := range persistErrorKinds {
		fam.set.NewGauge(`svc_persistence_errors_total{kind="`+k.kind+`"}`, func() float64 {
			return float64(k.count(&r.snap.persist.ErrorsTotal))
		})
	}
	fam = r.add("svc_connections_rejected_total", "Connections refused since start, by reason (maxclients reached, or the server shutting down).", "counter")
	fam.set.NewGauge(`svc_connections_rejected_total{reason="maxclients"}`, func() float64 {
		return float64(r.snap.net.RejectedConnections - r.snap.net.RejectedShutdown)
	})
	fam.set.NewGauge(`svc_connections_rejected_total{reason="shutting_down"}`, func() float64 {
		return float64(r.snap.net.RejectedShutdown)
	})
	fam = r.add("svc_auth_failures_total", "Clients refused since start, by reason: wrongpass (AUTH or HELLO AUTH with bad credentials), noauth (a command before authenticating), noperm_cmd, noperm_key, noperm_channel (ACL denials of a command, a key, a channel).", "counter")
	for i, name := range netloop.AuthFailureNames {
		fam.set.NewGauge(`svc_auth_failures_total{reason="`+name+`"}`, func() float64 {
			return float64(r.snap.net.AuthFailures[i])
		})
	}
	fam = r.add("svc_replication_role", "This node's replication role: 1 for the role it has (master, or replica of a master), 0 for the other.", "gauge")
	for _, role := range []string{"master", "replica"} {
		fam.set.NewGauge(`svc_replication_role{role="`+role+`"}`, func() float64 { return boolGauge(r.snap.repl.Role == role) })
	}
	g("svc_replication_link_up", "1 while a replica's link to its master streams; 0 while it is down or syncing; always 1 on a master.",
		func(sc *scrape) float64 { return boolGauge(sc.repl.LinkUp) })
	g("svc_replication_connected_replicas", "Replicas attached to this node (INFO's connected_slaves).",
		func(sc *scrape) float64 { return float64(sc.repl.ConnectedReplicas) })
	g("svc_replication_offset_bytes", "The replication offset: master_repl_offset on a master, the processed offset on a replica.",
		func(sc *scrape) float64 { return float64(sc.repl.Offset) })
	g("svc_replication_lag_seconds", "On a replica, seconds since the last byte from its master (since the link went down while it is down); on a master, the largest of its replicas' acknowledgement lags.",
		func(sc *scrape) float64 { return float64(sc.repl.LagSeconds) })
	c("svc_replication_full_syncs_total", "Full synchronisations this node served as a master since start.",
		func(sc *scrape) float64 { return float64(sc.repl.FullSyncs) })
	c("svc_replication_partial_syncs_total", "Partial resynchronisations (+CONTINUE) this node served as a master since start.",
		func(sc *scrape) float64 { return float64(sc.repl.PartialSyncs) })
	g("svc_replication_backlog_bytes", "Bytes held in the replication backlog (repl_backlog_histlen).",
		func(sc *scrape) float64 { return float64(sc.repl.BacklogBytes) })
	perShard("svc_shard_keys", "Keys held by the shard, across all databases.",
		func(s *shard.Snapshot) float64 { return float64(s.TotalKeys()) })

	// What an operator of a Redis-like server expects beyond those.
	g("svc_connected_clients", "Client connections currently open.",
		func(sc *scrape) float64 { return float64(sc.net.ConnectedClients) })
	g("svc_max_clients", "The maxclients limit.",
		func(sc *scrape) float64 { return float64(sc.net.MaxClients) })
	c("svc_connections_received_total", "Client connections admitted since start.",
		func(sc *scrape) float64 { return float64(sc.net.ConnectionsReceived) })
	c("svc_commands_processed_total", "Commands processed since start.",
		func(sc *scrape) float64 { return float64(sc.net.CommandsProcessed) })
	c("svc_protocol_errors_total", "RESP protocol errors since start.",
		func(sc *scrape) float64 { return float64(sc.net.ProtocolErrors) })
	c("svc_clients_evicted_total", "Clients closed by client eviction (maxmemory-clients) since start; INFO's evicted_clients.",
		func(sc *scrape) float64 { return float64(sc.net.EvictedClients) })
	g("svc_clients_memory_bytes", "Memory of every client connection (the sum of CLIENT LIST's tot-mem), what maxmemory-clients limits.",
		func(sc *scrape) float64 { return float64(sc.net.ClientsMemory) })
	c("svc_net_input_bytes_total", "Bytes read from clients since start.",
		func(sc *scrape) float64 { return float64(sc.net.NetInputBytes) })
	c("svc_net_output_bytes_total", "Bytes written to clients since start.",
		func(sc *scrape) float64 { return float64(sc.net.NetOutputBytes) })
	c("svc_keyspace_hits_total", "Successful key lookups since start.",
		sumShards(func(s *shard.Snapshot) int64 { return s.Hits }))
	c("svc_keyspace_misses_total", "Failed key lookups since start.",
		sumShards(func(s *shard.Snapshot) int64 { return s.Misses }))
	c("svc_expired_keys_total", "Keys removed by expiry since start.",
		sumShards(func(s *shard.Snapshot) int64 { return s.Expired }))
	perShard("svc_shard_expires", "Keys with a time to live held by the shard, across all databases.",
		func(s *shard.Snapshot) float64 { return float64(s.TotalExpires()) })
	perShard("svc_shard_queue_depth", "Batches waiting in the shard's queue.",
		func(s *shard.Snapshot) float64 { return float64(s.QueueDepth) })
	perShard("svc_shard_memory_used_bytes", "Memory used by the shard's keyspace in bytes.",
		func(s *shard.Snapshot) float64 { return float64(s.MemoryUsed) })
	fam = r.add("svc_shard_commands_total", "Commands executed by the shard since start.", "counter")
	for i := 0; i < r.shards; i++ {
		fam.set.NewGauge(fmt.Sprintf(`svc_shard_commands_total{shard="%d"}`, i), func() float64 {
			if i < len(r.snap.shards) {
				return float64(r.snap.shards[i].Commands)
			}
			return 0
		})
	}
	r.custom("svc_command_calls_total", "Calls of each command that ran, by command (those called at least once).", "counter",
		r.writePerCommand(func(c *cmdstats.Command) int64 { return c.Calls }))
	r.custom("svc_command_failed_calls_total", "Calls that ran and replied with an error, by command (those called at least once).", "counter",
		r.writePerCommand(func(c *cmdstats.Command) int64 { return c.Failed }))
	r.custom("svc_command_rejected_calls_total", "Calls refused before running (wrong arity, not authenticated), by command.", "counter",
		r.writePerCommand(func(c *cmdstats.Command) int64 { return c.Rejected }))
	r.custom("svc_command_duration_seconds_total", "Latency of each command as its clients saw it (parse to reply ready, waits for its shard included), summed by command, in seconds.", "counter",
		r.writePerCommandFloat(func(c *cmdstats.Command) float64 { return c.Total.Seconds() }))
	r.custom("svc_command_execution_seconds_total", "Time each command spent executing, without its wait for a shard, summed by command, in seconds.", "counter",
		r.writePerCommandFloat(func(c *cmdstats.Command) float64 { return c.Exec.Seconds() }))
	r.custom("svc_error_replies_total", "Error replies by error code (INFO errorstats), every code from the start.", "counter",
		func(w *bytes.Buffer) {
			for i, code := range cmdstats.ErrorCodes() {
				fmt.Fprintf(w, "svc_error_replies_total{code=%q} %d\n", code, r.snap.cmds.Errors[i])
			}
		})
	g("svc_slowlog_length", "Entries in the slow log (SLOWLOG LEN).",
		func(sc *scrape) float64 { return float64(sc.slowlogLen) })
	c("svc_evicted_keys_total", "Keys evicted to stay under maxmemory since start (INFO evicted_keys, without CONFIG RESETSTAT).",
		sumShards(func(s *shard.Snapshot) int64 { return s.Evicted }))
	g("svc_persistence_enabled", "1 when save rules are set or appendonly is on, else 0.",
		func(sc *scrape) float64 { return boolGauge(sc.persist.Enabled) })
	g("svc_persistence_last_save_timestamp_seconds", "Unix time of the last successful RDB snapshot (LASTSAVE); the start time before the first.",
		func(sc *scrape) float64 { return float64(sc.persist.RDB.LastSave.Unix) })
	g("svc_persistence_bgsave_in_progress", "1 while an RDB snapshot is being written, else 0.",
		func(sc *scrape) float64 { return boolGauge(sc.persist.RDB.BGSaveInProgress) })
	g("svc_persistence_aof_rewrite_in_progress", "1 while the append-only file is being rewritten, else 0.",
		func(sc *scrape) float64 { return boolGauge(sc.persist.AOF.RewriteInProgress) })
	g("svc_persistence_writes_refused", "1 while write commands are refused with -MISCONF because persistence fails, else 0.",
		func(sc *scrape) float64 { return boolGauge(sc.persist.WritesRefused != nil) })
	// Scripts (EVAL family and FCALL): runs by kind, those that replied an
	// error, and those SCRIPT KILL or FUNCTION KILL stopped.
	scriptKinds := []struct {
		kind        string
		runs, fails func(*scrape) int64
	}{
		{"eval", func(sc *scrape) int64 { return sc.net.Scripts.EvalRuns }, func(sc *scrape) int64 { return sc.net.Scripts.EvalFailed }},
		{"function", func(sc *scrape) int64 { return sc.net.Scripts.FunctionRuns }, func(sc *scrape) int64 { return sc.net.Scripts.FunctionFailed }},
	}
	fam = r.add("svc_scripts_executions_total", "Lua runs since start, by kind: eval (EVAL, EVALSHA and their _RO forms) or function (FCALL, FCALL_RO).", "counter")
	for _, k := range scriptKinds {
		fam.set.NewGauge(`svc_scripts_executions_total{kind="`+k.kind+`"}`, func() float64 { return float64(k.runs(&r.snap)) })
	}
	fam = r.add("svc_scripts_failed_total", "Lua runs since start that replied with an error (a script's error, a refused command it raised, a kill), by kind.", "counter")
	for _, k := range scriptKinds {
		fam.set.NewGauge(`svc_scripts_failed_total{kind="`+k.kind+`"}`, func() float64 { return float64(k.fails(&r.snap)) })
	}
	c("svc_scripts_killed_total", "Lua runs stopped by SCRIPT KILL or FUNCTION KILL since start.",
		func(sc *scrape) float64 { return float64(sc.net.Scripts.Killed) })
	// The Go collector (issue 20): what a pointer-rich heap of millions of
	// keys costs, read from runtime/metrics at scrape time.
	c("svc_gc_cycles_total", "Completed Go garbage-collection cycles since start.",
		func(sc *scrape) float64 { return float64(sc.gc.Cycles) })
	c("svc_gc_forced_cycles_total", "GC cycles forced by the application (runtime.GC, debug.FreeOSMemory) rather than started by the pacer, since start.",
		func(sc *scrape) float64 { return float64(sc.gc.Forced) })
	r.custom("svc_gc_pause_seconds", "Stop-the-world pauses of the Go collector (two per cycle), in seconds; _sum is estimated from the runtime's buckets (within about 12%).",
		"histogram", func(w *bytes.Buffer) {
			gcstats.WritePauseHistogram(w, "svc_gc_pause_seconds", &r.snap.gc.Pauses)
		})
	c("svc_gc_cpu_seconds_total", "CPU time the Go collector took since start (background and idle marking, mark assist, pauses), as the Go runtime estimates it, in seconds.",
		func(sc *scrape) float64 { return sc.gc.CPUSeconds })
	c("svc_gc_assist_cpu_seconds_total", "Part of svc_gc_cpu_seconds_total spent in mark assist: goroutines (event loops and shards included) that allocated during a cycle marking instead of running their own work, in seconds.",
		func(sc *scrape) float64 { return sc.gc.AssistCPUSeconds })
	c("svc_gc_process_cpu_seconds_total", "All CPU time of the process as the Go runtime estimates it (the denominator for svc_gc_cpu_seconds_total), in seconds.",
		func(sc *scrape) float64 { return sc.gc.TotalCPUSeconds })
	g("svc_gc_heap_goal_bytes", "The heap size at which the Go collector aims to finish its next cycle, in bytes.",
		func(sc *scrape) float64 { return float64(sc.gc.HeapGoal) })
	g("svc_gc_heap_live_bytes", "Heap the last GC cycle marked live, in bytes.",
		func(sc *scrape) float64 { return float64(sc.gc.HeapLive) })
	g("svc_gc_scan_heap_bytes", "Part of the heap that may hold pointers, which every GC cycle scans (its mark work grows with it), in bytes.",
		func(sc *scrape) float64 { return float64(sc.gc.ScanHeap) })
	g("svc_gc_heap_objects", "Objects in the Go heap (live, and dead ones not yet swept): what each GC cycle marks one by one.",
		func(sc *scrape) float64 { return float64(sc.gc.HeapObjects) })
	g("svc_gc_gogc_percent", "The GOGC percent in effect; -1 when the collector is off.",
		func(sc *scrape) float64 { return float64(sc.gc.GOGC) })
	fam = r.add("svc_lifecycle_state", "1 for the server's current lifecycle state, 0 for the others.", "gauge")
	for _, st := range []lifecycle.State{lifecycle.Starting, lifecycle.Ready, lifecycle.Draining, lifecycle.ShuttingDown} {
		fam.set.NewGauge(`svc_lifecycle_state{state="`+st.Name()+`"}`, func() float64 {
			if r.snap.state == st {
				return 1
			}
			return 0
		})
	}
	fam = r.add("svc_build_info", "Build information; the value is always 1.", "gauge")
	fam.set.NewGauge(`svc_build_info{version=`+labelValue(version)+`}`, func() float64 { return 1 })
	return r
}

func (r *registry) add(name, help, typ string) *family {
	f := &family{name: name, help: help, typ: typ, set: metrics.NewSet()}
	r.families = append(r.families, f)
	return f
}

func (r *registry) custom(name, help, typ string, samples func(w *bytes.Buffer)) {
	r.families = append(r.families, &family{name: name, help: help, typ: typ, samples: samples})
}

// writeHistogram writes a histogram of all commands together from the
// command statistics (svc_commands_duration_seconds from their latency,
// svc_commands_execution_seconds from their execution time): `le` bounds at
// powers of two of a microsecond (the statistics' own bucket bounds, so each
// count is exact), 1 µs to 16.8 s. histogram_quantile interpolates between
// them as for any classic histogram.
func (r *registry) writeHistogram(name string, of func(total *cmdstats.Command) (*cmdstats.Histogram, time.Duration)) func(w *bytes.Buffer) {
	return func(w *bytes.Buffer) {
		total := r.snap.cmds.Total()
		h, sum := of(&total)
		for k := range cmdstats.Pow2Bounds {
			le := strconv.FormatFloat(float64(int64(1)<<k)/1e6, 'g', -1, 64)
			fmt.Fprintf(w, "%s_bucket{le=%q} %d\n", name, le, h.Cumulative(k))
		}
		fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n", name, h.Count)
		fmt.Fprintf(w, "%s_sum %s\n", name, strconv.FormatFloat(sum.Seconds(), 'g', -1, 64))
		fmt.Fprintf(w, "%s_count %d\n", name, h.Count)
	}
}

// writePerCommand writes one sample per command that has statistics,
// labelled with the command's full name from the command table (bounded).
func (r *registry) writePerCommand(v func(*cmdstats.Command) int64) func(w *bytes.Buffer) {
	return func(w *bytes.Buffer) {
		for id, c := range r.snap.cmds.Commands {
			if c != nil {
				fmt.Fprintf(w, "%s{cmd=%q} %d\n", r.current, r.src.CommandName(id), v(c))
			}
		}
	}
}

func (r *registry) writePerCommandFloat(v func(*cmdstats.Command) float64) func(w *bytes.Buffer) {
	return func(w *bytes.Buffer) {
		for id, c := range r.snap.cmds.Commands {
			if c != nil {
				fmt.Fprintf(w, "%s{cmd=%q} %s\n", r.current, r.src.CommandName(id), strconv.FormatFloat(v(c), 'g', -1, 64))
			}
		}
	}
}

// write renders the whole exposition: our families, then Go runtime and
// process metrics.
func (r *registry) write(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap = scrape{net: r.src.Net(), shards: r.src.Shards(), maxMem: r.src.MaxMemoryBytes(), cmds: r.src.CommandStats(),
		slowlogLen: r.src.Slowlog().Len(), state: r.src.Lifecycle(), persist: persistenceOf(r.src), repl: replicationOf(r.src),
		gc: gcstats.Read()}
	r.buf.Reset()
	for _, f := range r.families {
		fmt.Fprintf(&r.buf, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		if f.samples != nil {
			r.current = f.name
			f.samples(&r.buf)
			continue
		}
		f.set.WritePrometheus(&r.buf)
	}
	var proc bytes.Buffer
	metrics.WriteProcessMetrics(&proc)
	annotate(&r.buf, proc.Bytes())
	_, _ = w.Write(r.buf.Bytes()) // the fasthttp response or a bytes.Buffer: cannot fail
}

// annotate copies the library's Go/process exposition, which has no HELP
// lines, grouping samples by name and giving each name HELP and TYPE lines
// (counter for *_total, untyped otherwise, which is what the samples are
// without metadata) so the whole scrape passes `promtool check metrics`.
func annotate(dst *bytes.Buffer, src []byte) {
	var order []string
	lines := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if _, ok := lines[name]; !ok {
			order = append(order, name)
		}
		lines[name] = append(lines[name], line)
	}
	for _, name := range order {
		typ := "untyped"
		if strings.HasSuffix(name, "_total") {
			typ = "counter"
		}
		fmt.Fprintf(dst, "# HELP %s Go runtime or process metric (github.com/VictoriaMetrics/metrics).\n# TYPE %s %s\n", name, name, typ)
		for _, l := range lines[name] {
			dst.WriteString(l)
			dst.WriteByte('\n')
		}
	}
}

// labelValue quotes s as a Prometheus label value.
func labelValue(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// boolGauge is a gauge's value for a condition: 1 or 0.
func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
