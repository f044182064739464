package diaghttp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/lifecycle"
)

// Tests of /debug/api/cluster, metrics, slowlog and latency: a real svcdb
// and a real diaghttp server (the start fixture), real Redis traffic over
// TCP, real HTTP requests.

const apiToken = "s3cret"

var (
	apiAuth      = map[string]string{"Authorization": "Bearer " + apiToken}
	apiEndpoints = []string{"/debug/api/cluster", "/debug/api/metrics", "/debug/api/slowlog", "/debug/api/latency"}
)

// apiGet fetches path with the token, expects 200 with the API's headers and
// decodes the body into v.
func apiGet(t *testing.T, f *fixture, path string, v any) string {
	t.Helper()
	r := f.do(t, "GET", path, apiAuth)
	if r.code != 200 {
		t.Fatalf("GET %s: %d %s", path, r.code, r.body)
	}
	if ct := r.hdr.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	if cc := r.hdr.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("GET %s: Cache-Control %q", path, cc)
	}
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("GET %s: not the expected JSON: %v\n%.500s", path, err, r.body)
	}
	return r.body
}

// bulk sends a command and reads a bulk-string reply.
func (r *redisConn) bulk(t *testing.T, args ...string) string {
	t.Helper()
	line := r.do(t, args...)
	if !strings.HasPrefix(line, "$") {
		t.Fatalf("%v: %q, want a bulk string", args, line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		t.Fatalf("%v: bulk length %q", args, line)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r.rd, buf); err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func (r *redisConn) ok(t *testing.T, args ...string) {
	t.Helper()
	if got := r.do(t, args...); got != "+OK" {
		t.Fatalf("%v: %q", args, got)
	}
}

// apiTime is status.Time as decoded from JSON.
type apiTime struct {
	Unix int64  `json:"unix"`
	ISO  string `json:"iso"`
}

// check says whether the instant is near now and both forms agree.
func (tm apiTime) check(t *testing.T, what string) {
	t.Helper()
	iso, err := time.Parse(time.RFC3339, tm.ISO)
	if err != nil || iso.Unix() != tm.Unix || !strings.HasSuffix(tm.ISO, "Z") {
		t.Fatalf("%s: %+v (ISO %v)", what, tm, err)
	}
	if d := time.Since(time.Unix(tm.Unix, 0)); d < -2*time.Second || d > time.Minute {
		t.Fatalf("%s: %+v is %v from now", what, tm, d)
	}
}

// TestDebugAPIAuthAndMethods: every endpoint wants the token (401 with the
// Bearer challenge), answers GET and HEAD with it, and refuses other
// methods with 405.
func TestDebugAPIAuthAndMethods(t *testing.T) {
	f := start(t, apiToken)
	for _, p := range apiEndpoints {
		for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic czNjcmV0"}} {
			r := f.do(t, "GET", p, hdr)
			expect(t, r, 401, `{"error":"unauthorized"}`)
			if r.hdr.Get("WWW-Authenticate") != `Bearer realm="svcdb"` || r.hdr.Get("Content-Type") != "application/json" ||
				r.hdr.Get("Cache-Control") != "no-store" {
				t.Fatalf("GET %s %v: headers %v", p, hdr, r.hdr)
			}
		}
		expect(t, f.do(t, "HEAD", p, nil), 401, "")

		var v map[string]any
		get := apiGet(t, f, p, &v)
		r := f.do(t, "HEAD", p, apiAuth)
		expect(t, r, 200, "")
		if r.body != "" || r.hdr.Get("Content-Type") != "application/json" || r.hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("HEAD %s: body %q, headers %v", p, r.body, r.hdr)
		}
		if get == "" {
			t.Fatalf("GET %s: empty body", p)
		}
		for _, m := range []string{"POST", "PUT", "DELETE"} {
			r := f.do(t, m, p, apiAuth)
			expect(t, r, 405, `{"error":"method not allowed"}`)
			if r.hdr.Get("Allow") != "GET, HEAD" {
				t.Fatalf("%s %s: Allow %q", m, p, r.hdr.Get("Allow"))
			}
		}
	}
	// Without a configured token the API is closed (403), these endpoints
	// included.
	g := start(t, "")
	for _, p := range apiEndpoints {
		r := g.do(t, "GET", p, map[string]string{"Authorization": "Bearer "})
		expect(t, r, 403, "")
		if !strings.Contains(r.body, "--http-token") {
			t.Fatalf("GET %s without a token configured: %s", p, r.body)
		}
	}
}

type clusterNodeJSON struct {
	ID           string `json:"id"`
	Address      string `json:"address"`
	Role         string `json:"role"`
	Status       string `json:"status"`
	State        string `json:"state"`
	Myself       bool   `json:"myself"`
	ShardCount   int    `json:"shard_count"`
	EventLoops   int    `json:"event_loops"`
	OwnsAllSlots bool   `json:"owns_all_slots"`
	Slots        []struct {
		Start int `json:"start"`
		End   int `json:"end"`
	} `json:"slots"`
	Shards []struct {
		ID         int   `json:"id"`
		Keys       int64 `json:"keys"`
		Expires    int64 `json:"expires"`
		QueueDepth int   `json:"queue_depth"`
	} `json:"shards"`
	Replicas []json.RawMessage `json:"replicas"`
}

type clusterJSON struct {
	Mode           string            `json:"mode"`
	ClusterEnabled bool              `json:"cluster_enabled"`
	GeneratedAt    apiTime           `json:"generated_at"`
	Node           clusterNodeJSON   `json:"node"`
	Nodes          []clusterNodeJSON `json:"nodes"`
}

func TestClusterAPI(t *testing.T) {
	f := start(t, apiToken)
	c := dialRedis(t, f.redis)
	const nkeys = 40
	for i := range nkeys {
		c.ok(t, "SET", fmt.Sprintf("k%d", i), "v")
	}
	c.ok(t, "SET", "ttl", "v", "EX", "100")
	runID := regexp.MustCompile(`(?m)^run_id:([0-9a-f]{40})\r$`).FindStringSubmatch(c.bulk(t, "INFO", "server"))
	if runID == nil {
		t.Fatal("INFO server has no run_id")
	}

	// The fixture's lifecycle starts at "starting": the node says so.
	var doc clusterJSON
	apiGet(t, f, "/debug/api/cluster", &doc)
	if doc.Node.Status != "starting" || doc.Node.State != "starting" {
		t.Fatalf("while starting: node %+v", doc.Node)
	}
	f.src.life.Set(lifecycle.Ready)
	body := apiGet(t, f, "/debug/api/cluster", &doc)

	n := doc.Node
	if doc.Mode != "standalone" || doc.ClusterEnabled || n.ID != runID[1] || n.Address != f.redis || n.Role != "master" ||
		n.Status != "online" || n.State != "ready" || !n.Myself || n.ShardCount != f.shards || n.EventLoops != 2 ||
		!n.OwnsAllSlots || len(n.Slots) != 1 || n.Slots[0].Start != 0 || n.Slots[0].End != 16383 ||
		len(n.Shards) != f.shards || n.Replicas == nil || len(n.Replicas) != 0 {
		t.Fatalf("cluster document: %s", body)
	}
	doc.GeneratedAt.check(t, "generated_at")
	var keys, expires int64
	for i, sh := range n.Shards {
		if sh.ID != i || sh.QueueDepth < 0 {
			t.Fatalf("shard %d: %+v", i, sh)
		}
		keys += sh.Keys
		expires += sh.Expires
	}
	if keys != nkeys+1 || expires != 1 {
		t.Fatalf("shards hold %d keys, %d with a TTL; want %d, 1: %s", keys, expires, nkeys+1, body)
	}
	if len(doc.Nodes) != 1 || doc.Nodes[0].ID != n.ID || !doc.Nodes[0].Myself || doc.Nodes[0].Status != "online" {
		t.Fatalf("nodes: %s", body)
	}

	f.src.life.Set(lifecycle.ShuttingDown)
	apiGet(t, f, "/debug/api/cluster", &doc)
	if doc.Node.Status != "shutting_down" || doc.Nodes[0].Status != "shutting_down" {
		t.Fatalf("while shutting down: node %+v", doc.Node)
	}
}

type rateJSON struct {
	WindowSecs           int     `json:"window_secs"`
	OpsPerSec            float64 `json:"ops_per_sec"`
	KeyspaceHitsPerSec   float64 `json:"keyspace_hits_per_sec"`
	KeyspaceMissesPerSec float64 `json:"keyspace_misses_per_sec"`
	NetInputBytesPerSec  float64 `json:"net_input_bytes_per_sec"`
	NetOutputBytesPerSec float64 `json:"net_output_bytes_per_sec"`
	ExpiredKeysPerSec    float64 `json:"expired_keys_per_sec"`
	Commands             []struct {
		Name      string  `json:"name"`
		Calls     int64   `json:"calls"`
		OpsPerSec float64 `json:"ops_per_sec"`
	} `json:"commands"`
}

func (r rateJSON) command(name string) float64 {
	for _, c := range r.Commands {
		if c.Name == name {
			return c.OpsPerSec
		}
	}
	return 0
}

type metricsJSON struct {
	Timestamp apiTime `json:"timestamp"`
	Server    struct {
		Version    string `json:"version"`
		State      string `json:"state"`
		EventLoops int    `json:"event_loops"`
		Shards     int    `json:"shards"`
	} `json:"server"`
	Clients struct {
		Connected           int64 `json:"connected"`
		MaxClients          int64 `json:"max_clients"`
		ConnectionsReceived int64 `json:"connections_received_total"`
		ConnectionsRejected struct {
			MaxClients   int64 `json:"maxclients"`
			ShuttingDown int64 `json:"shutting_down"`
		} `json:"connections_rejected_total"`
	} `json:"clients"`
	Memory struct {
		UsedBytes      int64 `json:"used_bytes"`
		MaxMemoryBytes int64 `json:"maxmemory_bytes"`
	} `json:"memory"`
	Commands struct {
		ProcessedTotal         int64 `json:"processed_total"`
		ProtocolErrorsTotal    int64 `json:"protocol_errors_total"`
		InstantaneousOpsPerSec int64 `json:"instantaneous_ops_per_sec"`
		Duration               struct {
			Count   int64 `json:"count"`
			SumUS   int64 `json:"sum_us"`
			Buckets []struct {
				LeUS  int64 `json:"le_us"`
				Count int64 `json:"count"`
			} `json:"buckets"`
		} `json:"duration"`
		ErrorReplies []struct {
			Code  string `json:"code"`
			Count int64  `json:"count"`
		} `json:"error_replies"`
		PerCommand []struct {
			Name          string `json:"name"`
			Calls         int64  `json:"calls"`
			FailedCalls   int64  `json:"failed_calls"`
			RejectedCalls int64  `json:"rejected_calls"`
			DurationUS    int64  `json:"duration_us"`
		} `json:"per_command"`
	} `json:"commands"`
	Keyspace struct {
		Keys             int64 `json:"keys"`
		Expires          int64 `json:"expires"`
		HitsTotal        int64 `json:"hits_total"`
		MissesTotal      int64 `json:"misses_total"`
		ExpiredKeysTotal int64 `json:"expired_keys_total"`
		Databases        []struct {
			DB      int   `json:"db"`
			Keys    int64 `json:"keys"`
			Expires int64 `json:"expires"`
		} `json:"databases"`
	} `json:"keyspace"`
	Network struct {
		InputBytesTotal  int64 `json:"input_bytes_total"`
		OutputBytesTotal int64 `json:"output_bytes_total"`
	} `json:"network"`
	Shards []struct {
		ID              int   `json:"id"`
		Keys            int64 `json:"keys"`
		Expires         int64 `json:"expires"`
		MemoryUsedBytes int64 `json:"memory_used_bytes"`
		QueueDepth      int   `json:"queue_depth"`
		CommandsTotal   int64 `json:"commands_total"`
	} `json:"shards"`
	Persistence struct {
		Enabled     bool `json:"enabled"`
		ErrorsTotal struct {
			RDB      int64 `json:"rdb"`
			AOFWrite int64 `json:"aof_write"`
			AOFFsync int64 `json:"aof_fsync"`
			Load     int64 `json:"load"`
		} `json:"errors_total"`
		LastSaveTimestampSeconds int64 `json:"last_save_timestamp_seconds"`
		BGSaveInProgress         bool  `json:"bgsave_in_progress"`
		AOFRewriteInProgress     bool  `json:"aof_rewrite_in_progress"`
		WritesRefused            bool  `json:"writes_refused"`
	} `json:"persistence"`
	Process map[string]float64 `json:"process"`
	Rates   struct {
		Last1s  rateJSON `json:"last_1s"`
		Last60s rateJSON `json:"last_60s"`
	} `json:"rates"`
}

// TestMetricsAPI: the JSON snapshot holds the values /metrics exposes, and
// the server-side rates follow real traffic.
func TestMetricsAPI(t *testing.T) {
	f := start(t, apiToken)
	f.src.life.Set(lifecycle.Ready)
	var doc metricsJSON
	apiGet(t, f, "/debug/api/metrics", &doc)
	if w1, w60 := doc.Rates.Last1s.WindowSecs, doc.Rates.Last60s.WindowSecs; w1 > 1 || w60 >= 60 || w60 < w1 {
		t.Fatalf("fresh server: windows %d s and %d s", w1, w60)
	}
	if doc.Rates.Last1s.Commands == nil || doc.Commands.PerCommand == nil || doc.Keyspace.Databases == nil {
		t.Fatal("empty lists must be [], not null")
	}

	// Traffic for a little over two sampler ticks: sets, hits, misses,
	// keys expiring (lazily, on GET), an error reply.
	c := dialRedis(t, f.redis)
	c.ok(t, "CLIENT", "SETNAME", "metrics-probe")
	deadline := time.Now().Add(2500 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		k := fmt.Sprintf("k%d", i%100)
		c.ok(t, "SET", k, "v")
		c.bulk(t, "GET", k)
		if r := c.do(t, "GET", "missing"); r != "$-1" {
			t.Fatalf("GET missing: %q", r)
		}
		if i%10 == 0 {
			c.ok(t, "SET", "short", "v", "PX", "1")
			time.Sleep(2 * time.Millisecond)
			if r := c.do(t, "GET", "short"); r != "$-1" { // expired: removed on access
				t.Fatalf("GET of an expired key: %q", r)
			}
		}
	}
	if r := c.do(t, "INCR", "k1"); !strings.HasPrefix(r, "-ERR") {
		t.Fatalf("INCR of a non-integer: %q", r)
	}
	// The rates cover the traffic once the sampler has ticked past it.
	time.Sleep(1100 * time.Millisecond)
	body := apiGet(t, f, "/debug/api/metrics", &doc)
	r1, r60 := doc.Rates.Last1s, doc.Rates.Last60s
	if r1.WindowSecs != 1 || r60.WindowSecs < 2 || r60.WindowSecs >= 60 {
		t.Fatalf("windows %d s and %d s: %s", r1.WindowSecs, r60.WindowSecs, body)
	}
	for name, v := range map[string]float64{
		"ops_per_sec": r60.OpsPerSec, "keyspace_hits_per_sec": r60.KeyspaceHitsPerSec,
		"keyspace_misses_per_sec": r60.KeyspaceMissesPerSec, "net_input_bytes_per_sec": r60.NetInputBytesPerSec,
		"net_output_bytes_per_sec": r60.NetOutputBytesPerSec, "expired_keys_per_sec": r60.ExpiredKeysPerSec,
		"set ops_per_sec": r60.command("set"), "get ops_per_sec": r60.command("get"),
	} {
		if !(v > 0) {
			t.Errorf("last_60s %s = %v under traffic", name, v)
		}
	}
	if r60.command("get") < r60.command("set") || r60.Commands[0].Name != "get" {
		t.Errorf("commands not busiest first (GET runs twice as often as SET): %+v", r60.Commands)
	}
	if got, want := r60.OpsPerSec*float64(r60.WindowSecs), float64(doc.Commands.ProcessedTotal); got > want*1.1 {
		t.Errorf("%v ops/s over %d s is more than the %v commands processed", r60.OpsPerSec, r60.WindowSecs, want)
	}

	// The snapshot's values are /metrics' values (no Redis traffic between
	// the two requests).
	_, m := f.scrape(t)
	body = apiGet(t, f, "/debug/api/metrics", &doc)
	eq := func(what string, got int64, metric string) {
		t.Helper()
		want, ok := m[metric]
		if !ok || float64(got) != want {
			t.Errorf("%s = %d; /metrics %s = %v (present %v)", what, got, metric, want, ok)
		}
	}
	eq("commands.processed_total", doc.Commands.ProcessedTotal, "svc_commands_processed_total")
	eq("commands.protocol_errors_total", doc.Commands.ProtocolErrorsTotal, "svc_protocol_errors_total")
	eq("commands.duration.count", doc.Commands.Duration.Count, "svc_commands_duration_seconds_count")
	eq("clients.connected", doc.Clients.Connected, "svc_connected_clients")
	eq("clients.max_clients", doc.Clients.MaxClients, "svc_max_clients")
	eq("clients.connections_received_total", doc.Clients.ConnectionsReceived, "svc_connections_received_total")
	eq("clients.connections_rejected_total.maxclients", doc.Clients.ConnectionsRejected.MaxClients, `svc_connections_rejected_total{reason="maxclients"}`)
	eq("memory.used_bytes", doc.Memory.UsedBytes, "svc_memory_used_bytes")
	eq("memory.maxmemory_bytes", doc.Memory.MaxMemoryBytes, "svc_memory_maxmemory_bytes")
	eq("keyspace.hits_total", doc.Keyspace.HitsTotal, "svc_keyspace_hits_total")
	eq("keyspace.misses_total", doc.Keyspace.MissesTotal, "svc_keyspace_misses_total")
	eq("keyspace.expired_keys_total", doc.Keyspace.ExpiredKeysTotal, "svc_expired_keys_total")
	eq("network.input_bytes_total", doc.Network.InputBytesTotal, "svc_net_input_bytes_total")
	eq("network.output_bytes_total", doc.Network.OutputBytesTotal, "svc_net_output_bytes_total")
	eq("persistence.errors_total.rdb", doc.Persistence.ErrorsTotal.RDB, `svc_persistence_errors_total{kind="rdb"}`)
	eq("persistence.errors_total.aof_write", doc.Persistence.ErrorsTotal.AOFWrite, `svc_persistence_errors_total{kind="aof-write"}`)
	eq("persistence.errors_total.aof_fsync", doc.Persistence.ErrorsTotal.AOFFsync, `svc_persistence_errors_total{kind="aof-fsync"}`)
	eq("persistence.errors_total.load", doc.Persistence.ErrorsTotal.Load, `svc_persistence_errors_total{kind="load"}`)
	eq("persistence.last_save_timestamp_seconds", doc.Persistence.LastSaveTimestampSeconds, "svc_persistence_last_save_timestamp_seconds")
	if !strings.Contains(body, `"persistence":{"enabled":false,"errors_total":{"rdb":0,"aof_write":0,"aof_fsync":0,"load":0},`) {
		t.Errorf("persistence without a manager: %+v", doc.Persistence)
	}
	for i, sh := range doc.Shards {
		eq(fmt.Sprintf("shards[%d].keys", i), sh.Keys, fmt.Sprintf(`svc_shard_keys{shard="%d"}`, i))
		eq(fmt.Sprintf("shards[%d].commands_total", i), sh.CommandsTotal, fmt.Sprintf(`svc_shard_commands_total{shard="%d"}`, i))
		eq(fmt.Sprintf("shards[%d].queue_depth", i), int64(sh.QueueDepth), fmt.Sprintf(`svc_shard_queue_depth{shard="%d"}`, i))
	}
	for _, c := range doc.Commands.PerCommand {
		eq(c.Name+" calls", c.Calls, fmt.Sprintf(`svc_command_calls_total{cmd=%q}`, c.Name))
		eq(c.Name+" failed_calls", c.FailedCalls, fmt.Sprintf(`svc_command_failed_calls_total{cmd=%q}`, c.Name))
	}
	for _, b := range doc.Commands.Duration.Buckets {
		le := strconv.FormatFloat(float64(b.LeUS)/1e6, 'g', -1, 64)
		eq(fmt.Sprintf("duration bucket le_us=%d", b.LeUS), b.Count, fmt.Sprintf(`svc_commands_duration_seconds_bucket{le=%q}`, le))
	}
	for _, e := range doc.Commands.ErrorReplies {
		eq("error_replies "+e.Code, e.Count, fmt.Sprintf(`svc_error_replies_total{code=%q}`, e.Code))
	}
	if len(doc.Shards) != f.shards || len(doc.Commands.Duration.Buckets) != 25 || doc.Commands.Duration.Buckets[0].LeUS != 1 {
		t.Errorf("shards %d, buckets %+v", len(doc.Shards), doc.Commands.Duration.Buckets)
	}
	if doc.Server.Version != "1.2.3-test" || doc.Server.State != "ready" || doc.Server.EventLoops != 2 || doc.Server.Shards != f.shards {
		t.Errorf("server: %+v", doc.Server)
	}
	if doc.Keyspace.Keys != 100 || len(doc.Keyspace.Databases) != 1 || doc.Keyspace.Databases[0].DB != 0 || doc.Keyspace.Databases[0].Keys != 100 {
		t.Errorf("keyspace: %+v", doc.Keyspace)
	}
	byName := map[string]int64{}
	for _, c := range doc.Commands.PerCommand {
		byName[c.Name] = c.FailedCalls
	}
	if byName["incr"] != 1 {
		t.Errorf("incr failed_calls = %d, want 1", byName["incr"])
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if doc.Process[name] <= 0 {
			t.Errorf("process[%q] = %v", name, doc.Process[name])
		}
	}
	doc.Timestamp.check(t, "timestamp")

	// Idle: the 1 s rates fall back to zero.
	time.Sleep(2100 * time.Millisecond)
	apiGet(t, f, "/debug/api/metrics", &doc)
	if r := doc.Rates.Last1s; r.OpsPerSec != 0 || len(r.Commands) != 0 || r.WindowSecs != 1 {
		t.Errorf("idle last_1s: %+v", r)
	}
	if doc.Rates.Last60s.OpsPerSec == 0 {
		t.Error("idle last_60s forgot the traffic of seconds ago")
	}
}

type slowlogJSON struct {
	Len             int             `json:"len"`
	MaxLen          int             `json:"max_len"`
	LogSlowerThanUS int64           `json:"log_slower_than_us"`
	Enabled         bool            `json:"enabled"`
	Count           int             `json:"count"`
	Entries         []slowEntryJSON `json:"entries"`
}

type slowEntryJSON struct {
	ID         int64    `json:"id"`
	Timestamp  apiTime  `json:"timestamp"`
	DurationUS *int64   `json:"duration_us"`
	Command    []string `json:"command"`
	ClientAddr string   `json:"client_addr"`
	ClientName string   `json:"client_name"`
}

func TestSlowlogAPI(t *testing.T) {
	f := start(t, apiToken)
	var doc slowlogJSON
	apiGet(t, f, "/debug/api/slowlog", &doc)
	if doc.Len != 0 || len(doc.Entries) != 0 || doc.Entries == nil || doc.MaxLen != 128 ||
		doc.LogSlowerThanUS != 10000 || !doc.Enabled || doc.Count != 128 {
		t.Fatalf("fresh slowlog: %+v", doc)
	}

	c := dialRedis(t, f.redis)
	c.ok(t, "CLIENT", "SETNAME", "slow-probe")
	c.ok(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	long := strings.Repeat("x", 300)
	c.ok(t, "SET", "greeting", long)
	c.bulk(t, "GET", "greeting")
	body := apiGet(t, f, "/debug/api/slowlog", &doc)
	if doc.LogSlowerThanUS != 0 || !doc.Enabled || doc.Len < 3 || len(doc.Entries) != doc.Len {
		t.Fatalf("slowlog after CONFIG SET: %s", body)
	}
	if !slices.IsSortedFunc(doc.Entries, func(a, b slowEntryJSON) int { return int(b.ID - a.ID) }) {
		t.Fatalf("entries not newest first: %s", body)
	}
	newest := doc.Entries[0]
	if !slices.Equal(newest.Command, []string{"GET", "greeting"}) {
		t.Fatalf("newest entry %+v, want GET greeting", newest)
	}
	set := doc.Entries[1]
	if len(set.Command) != 3 || set.Command[0] != "SET" || !strings.HasPrefix(set.Command[2], strings.Repeat("x", 128)) ||
		!strings.Contains(set.Command[2], "more bytes") {
		t.Fatalf("SET entry, argument not truncated as SLOWLOG GET does: %+v", set.Command)
	}
	local := c.c.LocalAddr().String()
	for i, e := range doc.Entries {
		if e.ClientAddr != local || e.ClientName != "slow-probe" || e.DurationUS == nil || *e.DurationUS < 0 {
			t.Fatalf("entry %d: %+v, want client %s slow-probe", i, e, local)
		}
		e.Timestamp.check(t, fmt.Sprintf("entry %d timestamp", i))
	}

	apiGet(t, f, "/debug/api/slowlog?count=1", &doc)
	if len(doc.Entries) != 1 || doc.Entries[0].ID != newest.ID || doc.Count != 1 || doc.Len < 3 {
		t.Fatalf("count=1: %+v", doc)
	}
	apiGet(t, f, "/debug/api/slowlog?count=0", &doc)
	if len(doc.Entries) != 0 || doc.Len < 3 {
		t.Fatalf("count=0: %+v", doc)
	}
	for _, bad := range []string{"", "x", "-1", "1.5", "99999999999", "1048577"} {
		r := f.do(t, "GET", "/debug/api/slowlog?count="+bad, apiAuth)
		expect(t, r, 400, "")
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || !strings.Contains(e.Error, "count") ||
			r.hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("count=%q: %s %v", bad, r.body, r.hdr)
		}
	}

	c.ok(t, "CONFIG", "SET", "slowlog-log-slower-than", "-1")
	c.ok(t, "CONFIG", "SET", "slowlog-max-len", "5")
	apiGet(t, f, "/debug/api/slowlog", &doc)
	if doc.Enabled || doc.LogSlowerThanUS != -1 || doc.MaxLen != 5 || doc.Len > 5 {
		t.Fatalf("disabled slowlog: %+v", doc)
	}
}

type latencyJSON struct {
	Commands []cmdLatencyJSON `json:"commands"`
	Monitor  struct {
		ThresholdMS int64 `json:"threshold_ms"`
		Enabled     bool  `json:"enabled"`
	} `json:"monitor"`
	Events []struct {
		Event    string  `json:"event"`
		Latest   apiTime `json:"latest"`
		LatestMS int64   `json:"latest_ms"`
		MaxMS    int64   `json:"max_ms"`
		History  []struct {
			Time      apiTime `json:"time"`
			LatencyMS int64   `json:"latency_ms"`
		} `json:"history"`
	} `json:"events"`
}

type cmdLatencyJSON struct {
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	P50US  float64 `json:"p50_us"`
	P90US  float64 `json:"p90_us"`
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"`
	MaxUS  float64 `json:"max_us"`
}

func TestLatencyAPI(t *testing.T) {
	f := start(t, apiToken)
	var doc latencyJSON
	apiGet(t, f, "/debug/api/latency", &doc)
	if doc.Commands == nil || doc.Events == nil || len(doc.Events) != 0 || doc.Monitor.Enabled || doc.Monitor.ThresholdMS != 0 {
		t.Fatalf("fresh server: %+v", doc)
	}

	c := dialRedis(t, f.redis)
	const n = 200
	for i := range n {
		c.ok(t, "SET", fmt.Sprintf("k%d", i), "v")
	}
	c.ok(t, "CONFIG", "SET", "latency-monitor-threshold", "5")
	c.ok(t, "DEBUG", "SLEEP", "0.02")
	// Two goroutines' worth of HTTP readers while the traffic runs: the
	// endpoints read snapshots only (the race detector watches).
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 5 {
				var d latencyJSON
				apiGet(t, f, "/debug/api/latency", &d)
			}
		})
	}
	for i := range n {
		c.bulk(t, "GET", fmt.Sprintf("k%d", i))
	}
	wg.Wait()

	body := apiGet(t, f, "/debug/api/latency", &doc)
	byName := map[string]int{}
	for i, cl := range doc.Commands {
		byName[cl.Name] = i
		if !(cl.P50US <= cl.P90US && cl.P90US <= cl.P99US && cl.P99US <= cl.P999US && cl.P999US <= cl.MaxUS) || cl.Count <= 0 || cl.MaxUS <= 0 {
			t.Fatalf("command %+v", cl)
		}
	}
	for _, name := range []string{"set", "get"} {
		i, ok := byName[name]
		if !ok || doc.Commands[i].Count != n || doc.Commands[i].P50US <= 0 {
			t.Fatalf("%s: want %d calls with latencies: %s", name, n, body)
		}
	}
	if i, ok := byName["debug"]; !ok || doc.Commands[i].MaxUS < 20000 || doc.Commands[i].P50US < 10000 {
		t.Fatalf("DEBUG SLEEP 0.02 should show 20 ms: %s", body)
	}
	if !slices.IsSortedFunc(doc.Commands, func(a, b cmdLatencyJSON) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatalf("commands not by name: %s", body)
	}

	if doc.Monitor.ThresholdMS != 5 || !doc.Monitor.Enabled {
		t.Fatalf("monitor: %+v", doc.Monitor)
	}
	found := false
	for _, e := range doc.Events {
		if e.Event != "command" {
			continue
		}
		found = true
		if e.LatestMS < 20 || e.MaxMS < e.LatestMS || len(e.History) == 0 || e.History[len(e.History)-1].LatencyMS != e.LatestMS {
			t.Fatalf("command event: %+v", e)
		}
		e.Latest.check(t, "event latest")
		e.History[0].Time.check(t, "event history")
	}
	if !found {
		t.Fatalf("no \"command\" latency event after DEBUG SLEEP 0.02 with threshold 5 ms: %s", body)
	}
}

// /debug/api/keyspace-events is behind the token and bounded: bad
// parameters are refused before anything is watched, and a watch ends at
// its seconds.
func TestKeyspaceEventsAPIBounds(t *testing.T) {
	f := start(t, apiToken)
	expect(t, f.do(t, "GET", "/debug/api/keyspace-events?pattern=*", nil), 401, `{"error":"unauthorized"}`)
	for _, tc := range []struct{ query, want string }{
		{"", "pattern is required"},
		{"pattern=" + strings.Repeat("x", 257), "pattern is required"},
		{"pattern=*&seconds=0", "seconds must be an integer from 1 to 30"},
		{"pattern=*&seconds=31", "seconds must be an integer from 1 to 30"},
		{"pattern=*&max=1001", "max must be an integer from 1 to 1000"},
	} {
		r := f.do(t, "GET", "/debug/api/keyspace-events?"+tc.query, apiAuth)
		if r.code != 400 || !strings.Contains(r.body, tc.want) {
			t.Errorf("%q: %d %s, want 400 %q", tc.query, r.code, r.body, tc.want)
		}
	}
	var v struct {
		Seconds int               `json:"seconds"`
		Events  []json.RawMessage `json:"events"`
	}
	apiGet(t, f, "/debug/api/keyspace-events?pattern=__keyevent@0__:nosuch&seconds=1", &v)
	if v.Seconds != 1 || v.Events == nil || len(v.Events) != 0 {
		t.Errorf("a watch with nothing published: %+v", v)
	}
}
