package diaghttp

import (
	"bufio"
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/core/scripting"
	"github.com/svcdb/svcdb/core/slowlog"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// The read-only JSON documents of /debug/api/: cluster, metrics, slowlog,
// latency and scripts (SPEC Part B "JSON documents"). handlers.go has already checked the
// method and the Bearer token and set Cache-Control: no-store. Each document
// is a typed struct built from the Source's snapshots; keys are snake_case,
// counts are JSON integers, rates and latencies numbers, and every instant
// is {"unix": seconds, "iso": "yyyy-mm-ddThh:mm:ssZ"} (status.Time), as in
// the status document.

// docs builds the documents of this file from a Source: the HTTP server
// serves them and diagnostic bundles store them (bundle.go). metrics and
// rates are the registry and the rate sampler the metrics document reads;
// both belong to the Bundles when there is one (see Config.Bundles).
type docs struct {
	src     Source
	version string
	metrics *registry
	rates   *rateSampler
}

// debugAPI serves the endpoints of this file; sub is the path after
// /debug/api/.
func (s *Server) debugAPI(ctx *fasthttp.RequestCtx, sub string) {
	switch sub {
	case "cluster":
		writeAPIJSON(ctx, s.clusterDoc(time.Now()))
	case "metrics":
		writeAPIJSON(ctx, s.metricsDoc(time.Now()))
	case "slowlog":
		count := defaultSlowlogCount
		if args := ctx.QueryArgs(); args.Has("count") {
			n, err := strconv.Atoi(string(args.Peek("count")))
			if err != nil || n < 0 || n > maxSlowlogCount {
				jsonError(ctx, fasthttp.StatusBadRequest, "count must be an integer from 0 to "+strconv.Itoa(maxSlowlogCount))
				return
			}
			count = n
		}
		writeAPIJSON(ctx, s.slowlogDoc(count))
	case "latency":
		writeAPIJSON(ctx, s.latencyDoc())
	case "scripts":
		writeAPIJSON(ctx, s.scriptsDoc())
	default:
		jsonError(ctx, fasthttp.StatusNotFound, "not found")
	}
}

// writeAPIJSON replies 200 with v encoded by goccy/go-json: byte-identical
// to encoding/json for these plain structs (LIBRARIES.md §4), and the
// metrics document, polled by the UI every second, is the largest we
// serve. Maps are not used except for the process metrics, whose keys it
// sorts as encoding/json does.
func writeAPIJSON(ctx *fasthttp.RequestCtx, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		jsonError(ctx, fasthttp.StatusInternalServerError, "encoding the response failed")
		return
	}
	ctx.SetContentType(ctJSON)
	ctx.SetBody(body)
}

// ---- /debug/api/cluster -----------------------------------------------------

// clusterDoc is the topology. svcdb has no clustering yet: mode is
// "standalone" and the node list holds this node alone. Its slots are
// reported in CLUSTER SHARDS' notation as the one range 0-16383 (the node
// owns the whole keyspace); owns_all_slots says so without the reader
// having to know Redis Cluster. svcdb's internal shards are not Redis
// Cluster slots (a key's shard is xxhash(key or {tag}) mod shard_count):
// they are listed under node.shards.
type clusterDoc struct {
	Mode           string        `json:"mode"` // "standalone"
	ClusterEnabled bool          `json:"cluster_enabled"`
	GeneratedAt    status.Time   `json:"generated_at"`
	Node           clusterNode   `json:"node"`  // this node
	Nodes          []clusterNode `json:"nodes"` // every node, this one included
	// Replication is this node's replication role: its master and link
	// (on a replica) or its replicas with their offsets and lag (on a
	// master), as INFO replication (docs/replication.md).
	Replication replication.Status `json:"replication"`
}

type clusterNode struct {
	ID      string `json:"id"`      // INFO run_id
	Address string `json:"address"` // the Redis port's host:port
	Role    string `json:"role"`    // "master"
	// Status is "online" when the node accepts commands, otherwise its
	// lifecycle state: "starting", "draining" or "shutting_down".
	Status       string        `json:"status"`
	State        string        `json:"state"` // lifecycle state: starting, ready, draining, shutting_down
	Myself       bool          `json:"myself"`
	ShardCount   int           `json:"shard_count"`
	EventLoops   int           `json:"event_loops"`
	OwnsAllSlots bool          `json:"owns_all_slots"`
	Slots        []slotRange   `json:"slots"`
	Shards       []nodeShard   `json:"shards"` // internal shards, by id
	Replicas     []clusterNode `json:"replicas"`
}

type slotRange struct {
	Start int `json:"start"`
	End   int `json:"end"` // inclusive
}

// nodeShard is one internal shard, from its published counters.
type nodeShard struct {
	ID         int   `json:"id"`
	Keys       int64 `json:"keys"`
	Expires    int64 `json:"expires"`
	QueueDepth int   `json:"queue_depth"`
}

// clusterSlots is the last Redis Cluster hash slot (16384 slots).
const clusterSlots = 16384

func (s *docs) clusterDoc(now time.Time) clusterDoc {
	st := s.src.Lifecycle()
	snaps := s.src.Shards()
	node := clusterNode{
		ID:           s.src.RunID(),
		Address:      s.src.RedisAddr(),
		Role:         "master",
		Status:       "online",
		State:        st.Name(),
		Myself:       true,
		ShardCount:   len(snaps),
		EventLoops:   s.src.Net().EventLoops,
		OwnsAllSlots: true,
		Slots:        []slotRange{{0, clusterSlots - 1}},
		Shards:       make([]nodeShard, len(snaps)),
		Replicas:     []clusterNode{},
	}
	if st != lifecycle.Ready {
		node.Status = node.State
	}
	for i := range snaps {
		sn := &snaps[i]
		node.Shards[i] = nodeShard{ID: sn.ID, Keys: sn.TotalKeys(), Expires: sn.TotalExpires(), QueueDepth: sn.QueueDepth}
	}
	repl := replicationOf(s.src)
	if repl.Role == "replica" {
		node.Role = "replica"
	}
	return clusterDoc{
		Mode:        "standalone",
		GeneratedAt: status.At(now),
		Node:        node,
		Nodes:       []clusterNode{node},
		Replication: repl,
	}
}

// ---- /debug/api/metrics -----------------------------------------------------

// metricsDoc is every metric of /metrics, read from one set of snapshots and
// grouped, plus the sampler's rates over the last 1 s and 60 s. Totals count
// since start, as /metrics does (CONFIG RESETSTAT only changes INFO).
type metricsDoc struct {
	Timestamp   status.Time        `json:"timestamp"`
	Server      metricsServer      `json:"server"`
	Clients     metricsClients     `json:"clients"`
	Memory      metricsMemory      `json:"memory"`
	Commands    metricsCommands    `json:"commands"`
	Keyspace    metricsKeyspace    `json:"keyspace"`
	Network     metricsNetwork     `json:"network"`
	Shards      []metricsShard     `json:"shards"`
	Persistence metricsPersistence `json:"persistence"`
	// Process holds the Go runtime and process samples of /metrics (go_*,
	// process_*), keyed by the sample's name and labels as written there.
	Process map[string]float64 `json:"process"`
	Rates   metricsRates       `json:"rates"`
}

type metricsServer struct {
	Version    string `json:"version"`
	State      string `json:"state"`
	EventLoops int    `json:"event_loops"`
	Shards     int    `json:"shards"`
}

type metricsClients struct {
	Connected           int64           `json:"connected"`
	MaxClients          int64           `json:"max_clients"`
	ConnectionsReceived int64           `json:"connections_received_total"`
	ConnectionsRejected rejectedReasons `json:"connections_rejected_total"`
}

type rejectedReasons struct {
	MaxClients   int64 `json:"maxclients"`
	ShuttingDown int64 `json:"shutting_down"`
}

type metricsMemory struct {
	UsedBytes      int64 `json:"used_bytes"`
	MaxMemoryBytes int64 `json:"maxmemory_bytes"` // 0: unlimited
}

type metricsCommands struct {
	ProcessedTotal      int64 `json:"processed_total"`
	ProtocolErrorsTotal int64 `json:"protocol_errors_total"`
	// InstantaneousOpsPerSec is INFO's instantaneous_ops_per_sec.
	InstantaneousOpsPerSec int64 `json:"instantaneous_ops_per_sec"`
	// Duration is svc_commands_duration_seconds: all commands together.
	Duration     durationHistogram `json:"duration"`
	ErrorReplies []errorReplies    `json:"error_replies"` // every code, as /metrics
	PerCommand   []commandCounts   `json:"per_command"`   // commands called since start, by name
}

// durationHistogram is a latency histogram in microseconds with cumulative
// buckets at the power-of-two bounds of /metrics' `le` labels.
type durationHistogram struct {
	Count   int64         `json:"count"`
	SumUS   int64         `json:"sum_us"`
	Buckets []cumulBucket `json:"buckets"` // le_us 1, 2, 4 ... 16777216; count is the +Inf bucket
}

type cumulBucket struct {
	LeUS  int64 `json:"le_us"`
	Count int64 `json:"count"` // samples at or below le_us
}

type errorReplies struct {
	Code  string `json:"code"`
	Count int64  `json:"count"`
}

type commandCounts struct {
	Name          string `json:"name"`
	Calls         int64  `json:"calls"`
	FailedCalls   int64  `json:"failed_calls"`
	RejectedCalls int64  `json:"rejected_calls"`
	DurationUS    int64  `json:"duration_us"` // total time spent, microseconds
}

type metricsKeyspace struct {
	Keys             int64        `json:"keys"`
	Expires          int64        `json:"expires"`
	HitsTotal        int64        `json:"hits_total"`
	MissesTotal      int64        `json:"misses_total"`
	ExpiredKeysTotal int64        `json:"expired_keys_total"`
	Databases        []databaseKs `json:"databases"` // databases holding keys
}

type databaseKs struct {
	DB      int   `json:"db"`
	Keys    int64 `json:"keys"`
	Expires int64 `json:"expires"`
}

type metricsNetwork struct {
	InputBytesTotal  int64 `json:"input_bytes_total"`
	OutputBytesTotal int64 `json:"output_bytes_total"`
}

type metricsShard struct {
	ID              int   `json:"id"`
	Keys            int64 `json:"keys"`
	Expires         int64 `json:"expires"`
	MemoryUsedBytes int64 `json:"memory_used_bytes"`
	QueueDepth      int   `json:"queue_depth"`
	CommandsTotal   int64 `json:"commands_total"`
	ReadsTotal      int64 `json:"reads_total"`
	WritesTotal     int64 `json:"writes_total"`
}

// metricsPersistence is the svc_persistence_* series; booleans are the 0/1
// gauges, errors_total is svc_persistence_errors_total by kind.
type metricsPersistence struct {
	Enabled                  bool                     `json:"enabled"`
	ErrorsTotal              status.PersistenceErrors `json:"errors_total"`
	LastSaveTimestampSeconds int64                    `json:"last_save_timestamp_seconds"`
	BGSaveInProgress         bool                     `json:"bgsave_in_progress"`
	AOFRewriteInProgress     bool                     `json:"aof_rewrite_in_progress"`
	WritesRefused            bool                     `json:"writes_refused"`
}

type metricsRates struct {
	Last1s  rateWindow `json:"last_1s"`
	Last60s rateWindow `json:"last_60s"`
}

func persistenceMetrics(p status.Persistence) metricsPersistence {
	return metricsPersistence{
		Enabled:                  p.Enabled,
		ErrorsTotal:              p.ErrorsTotal,
		LastSaveTimestampSeconds: p.RDB.LastSave.Unix,
		BGSaveInProgress:         p.RDB.BGSaveInProgress,
		AOFRewriteInProgress:     p.AOF.RewriteInProgress,
		WritesRefused:            p.WritesRefused != nil,
	}
}

func (s *docs) metricsDoc(now time.Time) metricsDoc {
	nst := s.src.Net()
	snaps := s.src.Shards()
	cmds := s.src.CommandStats()
	d := metricsDoc{
		Timestamp: status.At(now),
		Server: metricsServer{
			Version: s.version, State: s.src.Lifecycle().Name(),
			EventLoops: nst.EventLoops, Shards: len(snaps),
		},
		Clients: metricsClients{
			Connected: nst.ConnectedClients, MaxClients: nst.MaxClients,
			ConnectionsReceived: nst.ConnectionsReceived,
			ConnectionsRejected: rejectedReasons{
				MaxClients:   nst.RejectedConnections - nst.RejectedShutdown,
				ShuttingDown: nst.RejectedShutdown,
			},
		},
		Memory: metricsMemory{MaxMemoryBytes: s.src.MaxMemoryBytes()},
		Commands: metricsCommands{
			ProcessedTotal: nst.CommandsProcessed, ProtocolErrorsTotal: nst.ProtocolErrors,
			InstantaneousOpsPerSec: nst.OpsPerSec,
			ErrorReplies:           []errorReplies{},
			PerCommand:             []commandCounts{},
		},
		Keyspace:    metricsKeyspace{Databases: []databaseKs{}},
		Network:     metricsNetwork{InputBytesTotal: nst.NetInputBytes, OutputBytesTotal: nst.NetOutputBytes},
		Shards:      make([]metricsShard, len(snaps)),
		Persistence: persistenceMetrics(persistenceOf(s.src)),
		Process:     processMetrics(),
		Rates: metricsRates{
			Last1s:  s.rates.rates(1, s.src.CommandName),
			Last60s: s.rates.rates(rateSlots-1, s.src.CommandName),
		},
	}

	var perDB [keyspace.NumDatabases]databaseKs
	for i := range snaps {
		sn := &snaps[i]
		d.Shards[i] = metricsShard{
			ID: sn.ID, Keys: sn.TotalKeys(), Expires: sn.TotalExpires(), MemoryUsedBytes: sn.MemoryUsed,
			QueueDepth: sn.QueueDepth, CommandsTotal: sn.Commands, ReadsTotal: sn.Reads, WritesTotal: sn.Writes,
		}
		d.Memory.UsedBytes += sn.MemoryUsed
		ks := &d.Keyspace
		ks.Keys += sn.TotalKeys()
		ks.Expires += sn.TotalExpires()
		ks.HitsTotal += sn.Hits
		ks.MissesTotal += sn.Misses
		ks.ExpiredKeysTotal += sn.Expired
		for db := range perDB {
			perDB[db].Keys += sn.Keys[db]
			perDB[db].Expires += sn.Expires[db]
		}
	}
	for db, v := range perDB {
		if v.Keys > 0 {
			v.DB = db
			d.Keyspace.Databases = append(d.Keyspace.Databases, v)
		}
	}

	total := cmds.Total()
	d.Commands.Duration = durationHistogram{
		Count: total.Latency.Count, SumUS: total.Total.Microseconds(),
		Buckets: make([]cumulBucket, cmdstats.Pow2Bounds),
	}
	for k := range cmdstats.Pow2Bounds {
		d.Commands.Duration.Buckets[k] = cumulBucket{LeUS: 1 << k, Count: total.Latency.Cumulative(k)}
	}
	for i, code := range cmdstats.ErrorCodes() {
		d.Commands.ErrorReplies = append(d.Commands.ErrorReplies, errorReplies{code, cmds.Errors[i]})
	}
	for id, c := range cmds.Commands {
		if c != nil {
			d.Commands.PerCommand = append(d.Commands.PerCommand, commandCounts{
				Name: s.src.CommandName(id), Calls: c.Calls, FailedCalls: c.Failed,
				RejectedCalls: c.Rejected, DurationUS: c.Total.Microseconds(),
			})
		}
	}
	slices.SortFunc(d.Commands.PerCommand, func(a, b commandCounts) int { return cmp.Compare(a.Name, b.Name) })
	return d
}

// processMetrics reads the Go runtime and process samples /metrics writes
// (VictoriaMetrics/metrics' WriteProcessMetrics), "name{labels}" -> value.
func processMetrics() map[string]float64 {
	var buf bytes.Buffer
	metrics.WriteProcessMetrics(&buf)
	out := map[string]float64{}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp <= 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil || v != v || v > 1e300 || v < -1e300 { // NaN and ±Inf have no JSON form
			continue
		}
		out[line[:sp]] = v
	}
	return out
}

// ---- /debug/api/scripts -----------------------------------------------------

// ScriptsSource is implemented by a Source that runs Lua scripts
// (netloop.Server.SlowScripts): /debug/api/scripts and the Performance
// view's slow scripts list them. A Source without it lists none.
type ScriptsSource interface {
	SlowScripts(n int) []scripting.RunStat
}

// maxScriptsListed bounds /debug/api/scripts.
const maxScriptsListed = 50

// scriptsDoc is the cached scripts and loaded functions that ran, the
// slowest single run first.
type scriptsDoc struct {
	Scripts []scriptEntry `json:"scripts"`
}

type scriptEntry struct {
	Kind    string      `json:"kind"` // eval or function
	Name    string      `json:"name"` // the script's SHA1 or the function's name
	Library string      `json:"library,omitempty"`
	Source  string      `json:"source"` // the body's (or library code's) first 200 bytes
	Calls   int64       `json:"calls"`
	Failed  int64       `json:"failed"` // runs that replied an error
	TotalUS int64       `json:"total_us"`
	MeanUS  int64       `json:"mean_us"`
	MaxUS   int64       `json:"max_us"`
	LastRun status.Time `json:"last_run"`
}

func (s *docs) scriptsDoc() scriptsDoc {
	d := scriptsDoc{Scripts: []scriptEntry{}}
	ss, ok := s.src.(ScriptsSource)
	if !ok {
		return d
	}
	for _, r := range ss.SlowScripts(maxScriptsListed) {
		d.Scripts = append(d.Scripts, scriptEntry{
			Kind: r.Kind, Name: r.Name, Library: r.Library, Source: r.Source,
			Calls: r.Calls, Failed: r.Failed, TotalUS: r.TotalUS, MeanUS: r.MeanUS, MaxUS: r.MaxUS,
			LastRun: status.At(r.LastRun),
		})
	}
	return d
}

// ---- /debug/api/slowlog -----------------------------------------------------

// /debug/api/slowlog?count= : default 128 (Redis' default slowlog-max-len),
// at most slowlog.MaxRing, the most entries the log can hold.
const (
	defaultSlowlogCount = 128
	maxSlowlogCount     = slowlog.MaxRing
)

// slowlogDoc is the newest count entries of the slow-command log, newest
// first, with the log's settings.
type slowlogDoc struct {
	Len    int `json:"len"`     // entries in the log (SLOWLOG LEN)
	MaxLen int `json:"max_len"` // slowlog-max-len
	// LogSlowerThanUS is slowlog-log-slower-than in microseconds: -1 when
	// the log is disabled, 0 when every command is logged.
	LogSlowerThanUS int64          `json:"log_slower_than_us"`
	Enabled         bool           `json:"enabled"`
	Count           int            `json:"count"` // entries asked for
	Entries         []slowlogEntry `json:"entries"`
}

type slowlogEntry struct {
	ID         int64       `json:"id"`
	Timestamp  status.Time `json:"timestamp"` // when it was logged
	DurationUS int64       `json:"duration_us"`
	// Command is the command and its arguments, truncated as SLOWLOG GET
	// shows them (slowlog-max-arg-len bytes each, at most 32).
	Command    []string `json:"command"`
	ClientAddr string   `json:"client_addr"`
	ClientName string   `json:"client_name"`
}

func (s *docs) slowlogDoc(count int) slowlogDoc {
	log := s.src.Slowlog()
	d := slowlogDoc{Len: log.Len(), MaxLen: log.MaxLen(), Count: count, Entries: []slowlogEntry{}}
	if th := log.Threshold(); th < 0 {
		d.LogSlowerThanUS = -1
	} else {
		d.LogSlowerThanUS = th.Microseconds()
		d.Enabled = true
	}
	for _, e := range log.Get(count) {
		args := e.Args
		if args == nil {
			args = []string{}
		}
		d.Entries = append(d.Entries, slowlogEntry{
			ID: e.ID, Timestamp: status.At(e.Time), DurationUS: e.Duration.Microseconds(),
			Command: args, ClientAddr: e.ClientAddr, ClientName: e.ClientName,
		})
	}
	return d
}

// ---- /debug/api/latency -----------------------------------------------------

// latencyDoc is the per-command latency distribution (from the command
// statistics' histograms, every call since start or CONFIG RESETSTAT) and
// the latency monitor's events as LATENCY LATEST and HISTORY report them.
type latencyDoc struct {
	Commands []commandLatency `json:"commands"` // commands with calls, by name
	Monitor  latencyMonitor   `json:"monitor"`
	Events   []latencyEvent   `json:"events"` // by event name
}

// commandLatency is in microseconds. Percentiles are interpolated inside
// histogram buckets at most 25% wide, and capped at max (interpolation can
// overshoot the slowest call in the top bucket); max is the longest call
// since start (CONFIG RESETSTAT does not reset it).
type commandLatency struct {
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	P50US  float64 `json:"p50_us"`
	P90US  float64 `json:"p90_us"`
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"` // p99.9
	MaxUS  float64 `json:"max_us"`
}

type latencyMonitor struct {
	// ThresholdMS is latency-monitor-threshold; 0: the monitor is off.
	ThresholdMS int64 `json:"threshold_ms"`
	Enabled     bool  `json:"enabled"`
}

// latencyEvent is one line of LATENCY LATEST plus the event's LATENCY
// HISTORY, oldest first.
type latencyEvent struct {
	Event    string          `json:"event"`
	Latest   status.Time     `json:"latest"`
	LatestMS int64           `json:"latest_ms"`
	MaxMS    int64           `json:"max_ms"`
	History  []latencySample `json:"history"`
}

type latencySample struct {
	Time      status.Time `json:"time"`
	LatencyMS int64       `json:"latency_ms"`
}

func (s *docs) latencyDoc() latencyDoc {
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	d := latencyDoc{Commands: []commandLatency{}, Events: []latencyEvent{}}
	for id, c := range s.src.CommandStats().Commands {
		if c == nil || c.Latency.Count == 0 {
			continue
		}
		h := &c.Latency
		p := func(q float64) float64 { return us(min(h.Percentile(q), c.Max)) }
		d.Commands = append(d.Commands, commandLatency{
			Name: s.src.CommandName(id), Count: h.Count,
			P50US: p(0.50), P90US: p(0.90), P99US: p(0.99), P999US: p(0.999),
			MaxUS: us(c.Max),
		})
	}
	slices.SortFunc(d.Commands, func(a, b commandLatency) int { return cmp.Compare(a.Name, b.Name) })

	mon := s.src.Latency()
	d.Monitor.ThresholdMS = mon.Threshold().Milliseconds()
	d.Monitor.Enabled = mon.Enabled()
	for _, ev := range mon.Latest() {
		e := latencyEvent{
			Event: ev.Event, Latest: status.At(ev.Time), LatestMS: ev.LatestMillis, MaxMS: ev.MaxMillis,
			History: []latencySample{},
		}
		for _, smp := range mon.History(ev.Event) {
			e.History = append(e.History, latencySample{status.At(smp.Time), smp.Millis})
		}
		d.Events = append(d.Events, e)
	}
	return d
}
