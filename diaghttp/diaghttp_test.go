package diaghttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/logging"
	"github.com/svcdb/svcdb/core/slowlog"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/diaghttp"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/persist"
)

// source reads a real netloop.Server and shard.Runtime; the lifecycle state
// comes from a Tracker the test drives.
type source struct {
	life   *lifecycle.Tracker
	srv    *netloop.Server
	rt     *shard.Runtime
	maxMem atomic.Int64
	reg    *config.Registry
	table  *command.Table
	logs   *logging.Logger  // RecentLogs; nil: none
	pm     *persist.Manager // Persistence; nil: the server's own section (none)
}

func (s *source) Lifecycle() lifecycle.State { return s.life.Load() }
func (s *source) Net() netloop.Stats         { return s.srv.Stats() }
func (s *source) Shards() []shard.Snapshot   { return s.rt.Snapshots() }
func (s *source) MaxMemoryBytes() int64      { return s.maxMem.Load() }
func (s *source) Config() []config.Entry     { return s.reg.Entries() }
func (s *source) Clients(limit int) (int, []netloop.ClientInfo) {
	return s.srv.Clients(limit)
}
func (s *source) WatchKeyspace(pattern string, d time.Duration, limit int, stop <-chan struct{}) ([]netloop.KeyspaceEvent, int64, error) {
	return s.srv.WatchKeyspace(pattern, d, limit, stop)
}
func (s *source) NotifyKeyspaceEvents() string     { return s.srv.NotifyKeyspaceEvents() }
func (s *source) ACLUsers() []acl.UserSummary      { return s.srv.ACLUsers() }
func (s *source) CommandStats() *cmdstats.Snapshot { return s.srv.CommandStats() }
func (s *source) CommandName(id int) string        { return s.table.ByID(id).FullName }

func (s *source) CommandCallCounts(dst []int64) []int64 { return s.srv.CommandCallCounts(dst) }
func (s *source) RunID() string                         { return s.srv.RunID() }
func (s *source) RedisAddr() string                     { return s.srv.Addr() }
func (s *source) Slowlog() *slowlog.Log                 { return s.srv.Slowlog() }
func (s *source) Latency() *latency.Monitor             { return s.srv.Latency() }
func (s *source) InfoText(sections ...string) string    { return s.srv.InfoText(sections...) }
func (s *source) Persistence() status.Persistence {
	if s.pm != nil {
		return s.pm.StatusSection()
	}
	return s.srv.PersistenceStatus()
}
func (s *source) RecentLogs(n int) []string {
	if s.logs == nil {
		return nil
	}
	return s.logs.Recent(n)
}

type fixture struct {
	src    *source
	redis  string // the Redis port's address
	http   *diaghttp.Server
	base   string
	shards int
}

// start runs a real svcdb (4 shards, 2 loops, maxclients 2) on 127.0.0.1 and
// a diaghttp server over it, both on free ports.
func start(t *testing.T, token string) *fixture {
	t.Helper()
	return startWith(t, token, shard.Config{Shards: 4, Strategy: shard.RunToCompletion})
}

// startWith is start over a shard runtime configured by sc.
func startWith(t *testing.T, token string, sc shard.Config) *fixture {
	t.Helper()
	table := command.New()
	rt, err := shard.New(sc, table)
	if err != nil {
		t.Fatal(err)
	}
	rt.Start()
	life := &lifecycle.Tracker{}
	// enable-debug-command yes: the latency test stalls a loop with DEBUG SLEEP.
	srv := netloop.New(netloop.Config{Bind: "127.0.0.1", EventLoops: 2, MaxClients: 2, Version: "test", EnableDebugCommand: "yes"}, table, rt)
	if err := srv.Start(); err != nil {
		rt.Close()
		t.Fatal(err)
	}
	src := &source{life: life, srv: srv, rt: rt, reg: config.New(), table: table}
	h := diaghttp.New(diaghttp.Config{Bind: "127.0.0.1", Token: token, Version: "1.2.3-test"}, src)
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("http shutdown: %v", err)
		}
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("redis stop: %v", err)
		}
		rt.Close()
	})
	return &fixture{src: src, redis: srv.Addr(), http: h, base: "http://" + h.Addr(), shards: rt.NumShards()}
}

type reply struct {
	code int
	hdr  http.Header
	body string
}

func (f *fixture) do(t *testing.T, method, path string, hdr map[string]string) reply {
	t.Helper()
	return request(t, method, f.base+path, hdr, 10*time.Second)
}

// request sends one HTTP request with the headers given and reads the whole
// answer.
func request(t *testing.T, method, url string, hdr map[string]string, timeout time.Duration) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{res.StatusCode, res.Header, string(b)}
}

func expect(t *testing.T, r reply, code int, body string) {
	t.Helper()
	if r.code != code || (body != "" && r.body != body) {
		t.Fatalf("got %d %q, want %d %q", r.code, r.body, code, body)
	}
	if r.hdr.Get("X-Content-Type-Options") != "nosniff" || r.hdr.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("hygiene headers missing: %v", r.hdr)
	}
	if strings.HasPrefix(r.body, "{") && r.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("JSON body with Content-Type %q", r.hdr.Get("Content-Type"))
	}
}

func TestHealthFollowsLifecycle(t *testing.T) {
	f := start(t, "")
	steps := []struct {
		state       lifecycle.State
		word        string
		live, ready int
	}{
		{lifecycle.Starting, "starting", 200, 503},
		{lifecycle.Ready, "ok", 200, 200},
		{lifecycle.Draining, "draining", 200, 503},
		{lifecycle.ShuttingDown, "shutting down", 503, 503},
	}
	for _, st := range steps {
		f.src.life.Set(st.state)
		body := `{"status":"` + st.word + `"}`
		for _, p := range []string{"/health/live", "/healthz"} {
			expect(t, f.do(t, "GET", p, nil), st.live, body)
			r := f.do(t, "HEAD", p, nil)
			expect(t, r, st.live, "")
			if r.body != "" {
				t.Fatalf("HEAD %s has a body %q", p, r.body)
			}
		}
		for _, p := range []string{"/health/ready", "/readyz"} {
			expect(t, f.do(t, "GET", p, nil), st.ready, body)
			expect(t, f.do(t, "HEAD", p, nil), st.ready, "")
		}
	}
}

func TestAuth(t *testing.T) {
	f := start(t, "s3cret")
	unauth := `{"error":"unauthorized"}`
	for name, hdr := range map[string]map[string]string{
		"missing":      nil,
		"wrong token":  {"Authorization": "Bearer nope"},
		"empty token":  {"Authorization": "Bearer "},
		"basic scheme": {"Authorization": "Basic czNjcmV0"},
		"no scheme":    {"Authorization": "s3cret"},
		"prefix":       {"Authorization": "Bearer s3cre"},
	} {
		r := f.do(t, "GET", "/debug/api/ping", hdr)
		expect(t, r, 401, unauth)
		if r.hdr.Get("WWW-Authenticate") != `Bearer realm="svcdb"` || r.hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: headers %v", name, r.hdr)
		}
	}
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		r := f.do(t, "GET", "/debug/api/ping", map[string]string{"Authorization": scheme + " s3cret"})
		expect(t, r, 200, `{"ok":true}`)
		if r.hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("API response without Cache-Control: no-store: %v", r.hdr)
		}
	}
	// Unknown API paths: 401 without the token, 404 with it.
	expect(t, f.do(t, "GET", "/debug/api/nope", nil), 401, unauth)
	expect(t, f.do(t, "GET", "/debug/api/nope", map[string]string{"Authorization": "Bearer s3cret"}), 404, `{"error":"not found"}`)
}

func TestNoTokenConfigured(t *testing.T) {
	f := start(t, "")
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer "}, {"Authorization": "Bearer anything"}} {
		r := f.do(t, "GET", "/debug/api/ping", hdr)
		expect(t, r, 403, "")
		for _, hint := range []string{`{"error":"`, "[http] token", "SVC_HTTP_TOKEN", "--http-token"} {
			if !strings.Contains(r.body, hint) {
				t.Fatalf("403 body %q does not mention %q", r.body, hint)
			}
		}
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	f := start(t, "s3cret")
	for _, p := range []string{"/", "/nope", "/health", "/metricsx", "/debug/api"} {
		expect(t, f.do(t, "GET", p, nil), 404, `{"error":"not found"}`)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		for _, p := range []string{"/health/live", "/metrics", "/debug/api/ping", "/nope"} {
			r := f.do(t, m, p, nil)
			expect(t, r, 405, `{"error":"method not allowed"}`)
			if r.hdr.Get("Allow") != "GET, HEAD" {
				t.Fatalf("%s %s: Allow %q", m, p, r.hdr.Get("Allow"))
			}
		}
	}
}

// redisConn is a minimal RESP client for the commands the test needs.
type redisConn struct {
	c  net.Conn
	rd *bufio.Reader
}

func dialRedis(t *testing.T, addr string) *redisConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &redisConn{c, bufio.NewReader(c)}
}

func (r *redisConn) line(t *testing.T) string {
	t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	s, err := r.rd.ReadString('\n')
	if err != nil {
		t.Fatalf("redis read: %v", err)
	}
	return strings.TrimRight(s, "\r\n")
}

func (r *redisConn) do(t *testing.T, args ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := r.c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	return r.line(t)
}

var sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$`)

// samples parses an exposition into "name{labels}" -> value.
func samples(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		m := sampleRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unparsable exposition line %q", l)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out[m[1]+m[2]] = v
	}
	return out
}

func (f *fixture) scrape(t *testing.T) (string, map[string]float64) {
	t.Helper()
	r := f.do(t, "GET", "/metrics", nil)
	if r.code != 200 || !strings.HasPrefix(r.hdr.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %q", r.code, r.hdr.Get("Content-Type"))
	}
	return r.body, samples(t, r.body)
}

func TestMetrics(t *testing.T) {
	f := start(t, "")
	text, m := f.scrape(t)

	// The six published metrics exist from the first scrape, at zero.
	first := map[string]float64{
		"svc_memory_used_bytes":                                  0,
		"svc_memory_maxmemory_bytes":                             0,
		`svc_commands_duration_seconds_bucket{le="1e-06"}`:       0,
		`svc_commands_duration_seconds_bucket{le="0.131072"}`:    0,
		`svc_commands_duration_seconds_bucket{le="+Inf"}`:        0,
		"svc_commands_duration_seconds_count":                    0,
		"svc_commands_duration_seconds_sum":                      0,
		`svc_persistence_errors_total{kind="rdb"}`:               0,
		`svc_persistence_errors_total{kind="aof-write"}`:         0,
		`svc_persistence_errors_total{kind="aof-fsync"}`:         0,
		`svc_persistence_errors_total{kind="load"}`:              0,
		"svc_persistence_bgsave_in_progress":                     0,
		"svc_persistence_aof_rewrite_in_progress":                0,
		"svc_persistence_writes_refused":                         0,
		`svc_connections_rejected_total{reason="maxclients"}`:    0,
		`svc_connections_rejected_total{reason="shutting_down"}`: 0,
		`svc_auth_failures_total{reason="wrongpass"}`:            0,
		`svc_auth_failures_total{reason="noauth"}`:               0,
		`svc_auth_failures_total{reason="noperm_cmd"}`:           0,
		`svc_auth_failures_total{reason="noperm_key"}`:           0,
		`svc_auth_failures_total{reason="noperm_channel"}`:       0,
		`svc_error_replies_total{code="ERR"}`:                    0,
		`svc_build_info{version="1.2.3-test"}`:                   1,
		"svc_slowlog_length":                                     0,
		"svc_evicted_keys_total":                                 0,
		"svc_persistence_enabled":                                0,
		`svc_lifecycle_state{state="starting"}`:                  1,
		`svc_lifecycle_state{state="ready"}`:                     0,
		`svc_lifecycle_state{state="shutting_down"}`:             0,
		`svc_replication_role{role="master"}`:                    1, // a Source without replication
		`svc_replication_role{role="replica"}`:                   0,
		"svc_replication_link_up":                                1,
		"svc_replication_connected_replicas":                     0,
		"svc_replication_offset_bytes":                           0,
		"svc_replication_lag_seconds":                            0,
		"svc_replication_full_syncs_total":                       0,
		"svc_replication_partial_syncs_total":                    0,
		"svc_replication_backlog_bytes":                          0,
	}
	for i := 0; i < f.shards; i++ {
		first[fmt.Sprintf(`svc_shard_keys{shard="%d"}`, i)] = 0
		first[fmt.Sprintf(`svc_shard_queue_depth{shard="%d"}`, i)] = 0
	}
	for k, want := range first {
		if v, ok := m[k]; !ok || v != want {
			t.Errorf("first scrape: %s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	for fam, typ := range map[string]string{
		"svc_memory_used_bytes": "gauge", "svc_memory_maxmemory_bytes": "gauge",
		"svc_commands_duration_seconds": "histogram", "svc_persistence_errors_total": "counter",
		"svc_connections_rejected_total": "counter", "svc_shard_keys": "gauge", "svc_auth_failures_total": "counter",
		"svc_commands_processed_total": "counter", "svc_connected_clients": "gauge",
		"svc_persistence_enabled": "gauge", "svc_persistence_last_save_timestamp_seconds": "gauge",
		"svc_persistence_bgsave_in_progress": "gauge", "svc_persistence_aof_rewrite_in_progress": "gauge",
		"svc_persistence_writes_refused": "gauge",
	} {
		if !strings.Contains(text, "# TYPE "+fam+" "+typ+"\n") {
			t.Errorf("no TYPE %s %s", fam, typ)
		}
	}
	if v := m["svc_persistence_last_save_timestamp_seconds"]; v <= 0 || v > float64(time.Now().Unix()) {
		t.Errorf("svc_persistence_last_save_timestamp_seconds = %v without persistence; want the start time", v)
	}
	if _, ok := m["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	if _, ok := m["process_resident_memory_bytes"]; !ok {
		t.Error("no process metrics")
	}
	checkMetrics(t, text)

	// Values follow the server.
	c := dialRedis(t, f.redis)
	const nkeys = 50
	for i := 0; i < nkeys; i++ {
		if r := c.do(t, "SET", fmt.Sprintf("key:%d", i), "v"); r != "+OK" {
			t.Fatalf("SET: %q", r)
		}
	}
	// An error reply, counted by code and as a failed call.
	if r := c.do(t, "INCR", "key:1"); !strings.HasPrefix(r, "-ERR") {
		t.Fatalf("INCR of a non-integer: %q", r)
	}
	c.do(t, "GET", "key:1")
	c.do(t, "GET", "missing")
	// maxclients is 2: the second connection is admitted, the third refused.
	dialRedis(t, f.redis).do(t, "PING")
	over := dialRedis(t, f.redis)
	if l := over.line(t); !strings.Contains(l, "max number of clients") {
		t.Fatalf("third client: %q", l)
	}
	f.src.maxMem.Store(1 << 20)

	text, m = f.scrape(t)
	var keys float64
	for i := 0; i < f.shards; i++ {
		keys += m[fmt.Sprintf(`svc_shard_keys{shard="%d"}`, i)]
	}
	if keys != nkeys {
		t.Errorf("sum of svc_shard_keys = %v, want %d", keys, nkeys)
	}
	checks := map[string]func(float64) bool{
		`svc_connections_rejected_total{reason="maxclients"}`:    func(v float64) bool { return v == 1 },
		`svc_connections_rejected_total{reason="shutting_down"}`: func(v float64) bool { return v == 0 },
		`svc_command_calls_total{cmd="set"}`:                     func(v float64) bool { return v == nkeys },
		`svc_command_calls_total{cmd="get"}`:                     func(v float64) bool { return v == 2 },
		`svc_command_failed_calls_total{cmd="incr"}`:             func(v float64) bool { return v == 1 },
		`svc_error_replies_total{code="ERR"}`:                    func(v float64) bool { return v == 1 },
		`svc_command_duration_seconds_total{cmd="set"}`:          func(v float64) bool { return v > 0 },
		"svc_commands_duration_seconds_count":                    func(v float64) bool { return v >= nkeys+3 },
		`svc_commands_duration_seconds_bucket{le="+Inf"}`:        func(v float64) bool { return v == m["svc_commands_duration_seconds_count"] },
		`svc_commands_duration_seconds_bucket{le="16.777216"}`:   func(v float64) bool { return v > 0 },
		"svc_memory_maxmemory_bytes":                             func(v float64) bool { return v == 1<<20 },
		"svc_memory_used_bytes":                                  func(v float64) bool { return v > 0 },
		"svc_commands_processed_total":                           func(v float64) bool { return v >= nkeys+3 },
		"svc_keyspace_hits_total":                                func(v float64) bool { return v >= 1 },
		"svc_keyspace_misses_total":                              func(v float64) bool { return v >= 1 },
		"svc_net_input_bytes_total":                              func(v float64) bool { return v > 0 },
		"svc_net_output_bytes_total":                             func(v float64) bool { return v > 0 },
		"svc_connected_clients":                                  func(v float64) bool { return v == 2 },
	}
	for k, ok := range checks {
		if !ok(m[k]) {
			t.Errorf("after traffic: %s = %v", k, m[k])
		}
	}
	checkMetrics(t, text)
}

// TestPersistenceMetrics: the svc_persistence_* series follow a real
// persistence manager (save rules, data-dir under t.TempDir()): a snapshot
// that fails on the real file system counts an rdb error and refuses writes,
// a repaired one clears the refusal and moves the last-save time; every
// scrape passes promtool, and /debug/api/metrics agrees with /metrics.
func TestPersistenceMetrics(t *testing.T) {
	f := start(t, apiToken)
	f.src.life.Set(lifecycle.Ready)
	dir := t.TempDir()
	reg := config.New()
	for k, v := range map[string]string{"data-dir": dir, "save": "3600 1"} {
		if err := reg.Set(k, v, config.SourceFlag); err != nil {
			t.Fatal(err)
		}
	}
	pm := persist.New(f.src.rt, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := pm.Load(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pm.Close(false); err != nil {
			t.Errorf("closing persistence: %v", err)
		}
	})
	f.src.pm = pm

	check := func(stage string, want map[string]float64) map[string]float64 {
		t.Helper()
		text, m := f.scrape(t)
		checkMetrics(t, text)
		for k, v := range want {
			if got, ok := m[k]; !ok || got != v {
				t.Errorf("%s: %s = %v (present %v), want %v", stage, k, got, ok, v)
			}
		}
		var doc metricsJSON
		apiGet(t, f, "/debug/api/metrics", &doc)
		p := doc.Persistence
		api := map[string]float64{
			`svc_persistence_errors_total{kind="rdb"}`:       float64(p.ErrorsTotal.RDB),
			`svc_persistence_errors_total{kind="aof-write"}`: float64(p.ErrorsTotal.AOFWrite),
			`svc_persistence_errors_total{kind="aof-fsync"}`: float64(p.ErrorsTotal.AOFFsync),
			`svc_persistence_errors_total{kind="load"}`:      float64(p.ErrorsTotal.Load),
			"svc_persistence_enabled":                        b2f(p.Enabled),
			"svc_persistence_bgsave_in_progress":             b2f(p.BGSaveInProgress),
			"svc_persistence_aof_rewrite_in_progress":        b2f(p.AOFRewriteInProgress),
			"svc_persistence_writes_refused":                 b2f(p.WritesRefused),
			"svc_persistence_last_save_timestamp_seconds":    float64(p.LastSaveTimestampSeconds),
		}
		for k, v := range api {
			if m[k] != v {
				t.Errorf("%s: /debug/api/metrics has %v for %s, /metrics %v", stage, v, k, m[k])
			}
		}
		return m
	}

	before := float64(time.Now().Unix())
	if err := pm.Save(); err != nil {
		t.Fatal(err)
	}
	m := check("saved", map[string]float64{
		"svc_persistence_enabled":                  1,
		`svc_persistence_errors_total{kind="rdb"}`: 0,
		"svc_persistence_writes_refused":           0,
		"svc_persistence_bgsave_in_progress":       0,
	})
	if ts := m["svc_persistence_last_save_timestamp_seconds"]; ts < before || ts > float64(time.Now().Unix()) {
		t.Errorf("last save %v; the SAVE ran at %v", ts, before)
	}

	// data-dir is now a regular file: the snapshot cannot be written.
	blocker := filepath.Join(dir, "not-a-directory")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reg.Set("data-dir", blocker, config.SourceFlag); err != nil {
		t.Fatal(err)
	}
	if err := pm.Save(); err == nil {
		t.Fatal("a snapshot into a data-dir that is a file succeeded")
	}
	failed := check("failed", map[string]float64{
		`svc_persistence_errors_total{kind="rdb"}`:       1,
		`svc_persistence_errors_total{kind="aof-write"}`: 0,
		"svc_persistence_writes_refused":                 1,
		"svc_persistence_last_save_timestamp_seconds":    m["svc_persistence_last_save_timestamp_seconds"],
	})

	// Repaired: writes are accepted again; the error count stays.
	if err := reg.Set("data-dir", dir, config.SourceFlag); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(int64(failed["svc_persistence_last_save_timestamp_seconds"])+1, 0))) // a later second
	if err := pm.Save(); err != nil {
		t.Fatal(err)
	}
	// Save returns just before the manager recomputes the refusal
	// (persist.finishSnapshot closes the job, then calls Refresh).
	for deadline := time.Now().Add(5 * time.Second); pm.WriteDenied() != "" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	m = check("repaired", map[string]float64{
		`svc_persistence_errors_total{kind="rdb"}`: 1,
		"svc_persistence_writes_refused":           0,
	})
	if m["svc_persistence_last_save_timestamp_seconds"] <= failed["svc_persistence_last_save_timestamp_seconds"] {
		t.Errorf("last save did not move: %v", m["svc_persistence_last_save_timestamp_seconds"])
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// promtool finds promtool; missing fails the test under CI=true and skips it
// otherwise.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found (install Debian package prometheus)")
		}
		t.Skip("promtool not found; set CI=true to make this a failure")
	}
	return p
}

func checkMetrics(t *testing.T, text string) {
	t.Helper()
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestAlertRules(t *testing.T) {
	p := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "../profiles/prometheus/alerts.yml"},
		{"test", "rules", "../profiles/prometheus/alerts_test.yml"},
	} {
		if out, err := exec.Command(p, args...).CombinedOutput(); err != nil {
			t.Fatalf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

func TestStartErrors(t *testing.T) {
	f := start(t, "")
	for _, bind := range []string{"localhost", "not-an-ip"} {
		if err := diaghttp.New(diaghttp.Config{Bind: bind}, f.src).Start(); err == nil {
			t.Errorf("bind %q accepted", bind)
		}
	}
	_, port, _ := net.SplitHostPort(f.http.Addr())
	p, _ := strconv.Atoi(port)
	if err := diaghttp.New(diaghttp.Config{Port: p}, f.src).Start(); err == nil {
		t.Error("second server on a busy port started")
	}
	// IPv6 literal, when the host has loopback v6.
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		h := diaghttp.New(diaghttp.Config{Bind: "::1"}, f.src)
		if err := h.Start(); err != nil {
			t.Fatal(err)
		}
		defer h.Shutdown(context.Background())
		if !strings.HasPrefix(h.Addr(), "[::1]:") {
			t.Fatalf("v6 addr %q", h.Addr())
		}
		res, err := http.Get("http://" + h.Addr() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("v6 /healthz %d", res.StatusCode)
		}
	}
	if err := diaghttp.New(diaghttp.Config{}, f.src).Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown before Start: %v", err)
	}
}

// TestConfigAPI: /debug/api/config lists every parameter with value,
// default, source and mutability, and never a secret's value.
func TestConfigAPI(t *testing.T) {
	f := start(t, "s3cret")
	if err := f.src.reg.Set("requirepass", "hunter2-secret", config.SourceFlag); err != nil {
		t.Fatal(err)
	}
	if err := f.src.reg.Set("maxclients", "123", config.SourceRuntime); err != nil {
		t.Fatal(err)
	}
	expect(t, f.do(t, "GET", "/debug/api/config", nil), 401, `{"error":"unauthorized"}`)
	r := f.do(t, "GET", "/debug/api/config", map[string]string{"Authorization": "Bearer s3cret"})
	expect(t, r, 200, "")
	if strings.Contains(r.body, "hunter2-secret") {
		t.Fatalf("the config API shows a secret: %s", r.body)
	}
	var doc struct {
		Parameters []struct {
			Name, Value, Default, Source string
			Mutable, Secret              bool
		} `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, r.body)
	}
	byName := map[string]int{}
	for i, p := range doc.Parameters {
		byName[p.Name] = i
	}
	if len(doc.Parameters) != len(config.New().Params()) {
		t.Fatalf("%d parameters; the registry has %d", len(doc.Parameters), len(config.New().Params()))
	}
	mc := doc.Parameters[byName["maxclients"]]
	if mc.Value != "123" || mc.Default != "10000" || mc.Source != "runtime" || !mc.Mutable {
		t.Fatalf("maxclients: %+v", mc)
	}
	rp := doc.Parameters[byName["requirepass"]]
	if rp.Value != config.Redacted || !rp.Secret || rp.Source != "flag" {
		t.Fatalf("requirepass: %+v", rp)
	}
	if p := doc.Parameters[byName["port"]]; p.Mutable {
		t.Fatalf("port reported mutable: %+v", p)
	}
}

// TestClientsAPI: /debug/api/clients is bounded by ?limit= and shows what
// CLIENT LIST shows, read from a real server.
func TestClientsAPI(t *testing.T) {
	f := start(t, "s3cret")
	var conns []net.Conn
	for i := range 2 { // the fixture's maxclients is 2
		c, err := net.Dial("tcp", f.redis)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "CLIENT SETNAME probe-%d\r\n", i)
		buf := make([]byte, 16)
		if n, _ := c.Read(buf); string(buf[:n]) != "+OK\r\n" {
			t.Fatalf("SETNAME: %q", buf[:n])
		}
		conns = append(conns, c)
	}
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	r := f.do(t, "GET", "/debug/api/clients", auth)
	expect(t, r, 200, "")
	var doc struct {
		Total   int `json:"total"`
		Limit   int `json:"limit"`
		Clients []struct {
			ID          int64  `json:"id"`
			Name        string `json:"name"`
			LastCommand string `json:"last_command"`
			Commands    int64  `json:"commands"`
		} `json:"clients"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Total != 2 || doc.Limit != 1000 || len(doc.Clients) != doc.Total {
		t.Fatalf("clients: %+v", doc)
	}
	named := 0
	for _, c := range doc.Clients {
		if strings.HasPrefix(c.Name, "probe-") && c.LastCommand == "client|setname" && c.Commands == 1 {
			named++
		}
	}
	if named != 2 {
		t.Fatalf("want the 2 named clients with their last command: %s", r.body)
	}
	r = f.do(t, "GET", "/debug/api/clients?limit=1", auth)
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil || len(doc.Clients) != 1 || doc.Total != 2 {
		t.Fatalf("limit=1: %v %s", err, r.body)
	}
	for _, bad := range []string{"0", "-1", "x", "10001"} {
		expect(t, f.do(t, "GET", "/debug/api/clients?limit="+bad, auth), 400, "")
	}
	_ = conns
}

// TestUsersAPI: /debug/api/users lists the ACL users with their rules and
// how many passwords they have, never the password hashes.
func TestUsersAPI(t *testing.T) {
	f := start(t, "s3cret")
	c, err := net.Dial("tcp", f.redis)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "ACL SETUSER app on >apppass ~app:* +@read\r\n")
	buf := make([]byte, 16)
	if n, _ := c.Read(buf); string(buf[:n]) != "+OK\r\n" {
		t.Fatalf("SETUSER: %q", buf[:n])
	}
	expect(t, f.do(t, "GET", "/debug/api/users", nil), 401, "")
	r := f.do(t, "GET", "/debug/api/users", map[string]string{"Authorization": "Bearer s3cret"})
	expect(t, r, 200, "")
	if strings.Contains(r.body, acl.HashPassword("apppass")) || strings.Contains(r.body, "apppass") {
		t.Fatalf("a password leaked: %s", r.body)
	}
	for _, w := range []string{`"name":"app"`, `"rules":"on ~app:* resetchannels -@all +@read"`, `"passwords":1`, `"name":"default"`} {
		if !strings.Contains(strings.ReplaceAll(r.body, " ", ""), strings.ReplaceAll(w, " ", "")) {
			t.Errorf("no %s in %s", w, r.body)
		}
	}
}
