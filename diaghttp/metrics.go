package diaghttp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// commandDurationBuckets are the `le` bounds of svc_commands_duration_seconds:
// 100 µs to 10 s, with 0.1 s (the p99 alert threshold) among them.
var commandDurationBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// family is one metric family: its metadata, written by us, and its samples,
// written by a metrics.Set of its own. VictoriaMetrics/metrics writes either
// no metadata or empty HELP text, and cannot make a callback counter; owning
// the "# HELP"/"# TYPE" lines fixes both.
type family struct {
	name, help, typ string
	set             *metrics.Set
}

// registry holds every metric. Gauges and callback counters read the
// snapshot taken at the start of each scrape (one Source call per scrape, so
// all values in a scrape agree); scrapes run one at a time.
type registry struct {
	src      Source
	families []*family

	// svc_commands_duration_seconds: registered at zero now; the data path
	// feeds it in a later slice (per-loop recording, see LIBRARIES.md §2 on
	// the histogram's mutex).
	cmdDuration *metrics.PrometheusHistogram
	// svc_persistence_errors_total: 0 until persistence exists.
	persistErrors *metrics.Counter

	mu     sync.Mutex // one scrape at a time; guards snap and buf
	snap   scrape
	buf    bytes.Buffer
	shards int
}

type scrape struct {
	net    netloop.Stats
	shards []shard.Snapshot
	maxMem int64
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
	fam := r.add("svc_commands_duration_seconds", "Command execution time in seconds.", "histogram")
	r.cmdDuration = fam.set.NewPrometheusHistogramExt("svc_commands_duration_seconds", commandDurationBuckets)
	fam = r.add("svc_persistence_errors_total", "Persistence (snapshot or append) failures since start.", "counter")
	r.persistErrors = fam.set.NewCounter("svc_persistence_errors_total")
	c("svc_connections_rejected_total", "Connections refused (maxclients reached or shutting down) since start.",
		func(sc *scrape) float64 { return float64(sc.net.RejectedConnections) })
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
	fam = r.add("svc_build_info", "Build information; the value is always 1.", "gauge")
	fam.set.NewGauge(`svc_build_info{version=`+labelValue(version)+`}`, func() float64 { return 1 })
	return r
}

func (r *registry) add(name, help, typ string) *family {
	f := &family{name: name, help: help, typ: typ, set: metrics.NewSet()}
	r.families = append(r.families, f)
	return f
}

// write renders the whole exposition: our families, then Go runtime and
// process metrics.
func (r *registry) write(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap = scrape{net: r.src.Net(), shards: r.src.Shards(), maxMem: r.src.MaxMemoryBytes()}
	r.buf.Reset()
	for _, f := range r.families {
		fmt.Fprintf(&r.buf, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		f.set.WritePrometheus(&r.buf)
	}
	var proc bytes.Buffer
	metrics.WriteProcessMetrics(&proc)
	annotate(&r.buf, proc.Bytes())
	w.Write(r.buf.Bytes())
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

// CommandDurations is svc_commands_duration_seconds, for the data path to
// feed (a later slice). Update costs a mutex: record per loop and merge, or
// call it off the hot path.
func (s *Server) CommandDurations() *metrics.PrometheusHistogram { return s.metrics.cmdDuration }

// PersistenceErrors is svc_persistence_errors_total, for persistence to count
// its failures once it exists.
func (s *Server) PersistenceErrors() *metrics.Counter { return s.metrics.persistErrors }
