package netloop_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/persist"
)

// decodeStatus parses a status document and checks what every document
// must satisfy whatever the state.
// statusWithoutLateShards asks STATUS JSON until no shard missed the
// collector's deadline (StatusDeadline, 100 ms), at most five times: under
// -race on a loaded machine a shard's owner may not be scheduled in time,
// which the document rightly reports as shard_late (TestStatusLateShard
// tests that), but it is not what the caller is testing.
func statusWithoutLateShards(t *testing.T, rdb *redis.Client) (string, status.Document) {
	t.Helper()
	for try := 1; ; try++ {
		raw, err := rdb.Do(context.Background(), "STATUS", "JSON").Text()
		if err != nil {
			t.Fatalf("STATUS JSON: %v", err)
		}
		d := decodeStatus(t, raw)
		late := false
		for _, sh := range d.Shards {
			late = late || sh.State != status.ShardOK
		}
		if !late || try == 5 {
			return raw, d
		}
	}
}

func decodeStatus(t *testing.T, raw string) status.Document {
	t.Helper()
	var d status.Document
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("status document does not decode: %v\n%s", err, raw)
	}
	// Every section, in the order SPEC Part B lists them, and nothing else.
	var keys []string
	top := json.NewDecoder(strings.NewReader(raw))
	if tok, err := top.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v %v", tok, err)
	}
	for top.More() {
		tok, err := top.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := top.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(keys, " "); got != "svc health cluster clients memory persistence shards keyspace commands hot_shards" {
		t.Fatalf("sections %s", got)
	}
	// Integers are integers: no count carries a fraction or an exponent.
	for _, m := range regexp.MustCompile(`"(keys|expires|memory_bytes|queue_depth|total|connected|max_clients|used_bytes|unix|pid|uptime_seconds|id|db|shards)":(-?[0-9.eE+]+)`).FindAllStringSubmatch(raw, -1) {
		if _, err := strconv.ParseInt(m[2], 10, 64); err != nil {
			t.Errorf("%s is %s, not an integer", m[1], m[2])
		}
	}
	if d.Svc.PID != os.Getpid() || d.Svc.GoVersion == "" || d.Svc.GitCommit == "" || d.Svc.RedisVersion != netloop.RedisVersion {
		t.Errorf("svc: %+v", d.Svc)
	}
	if d.Svc.GeneratedAt != status.At(time.Unix(d.Svc.GeneratedAt.Unix, 0)) || d.Svc.UptimeSeconds != d.Svc.GeneratedAt.Unix-d.Svc.StartedAt.Unix {
		t.Errorf("times: %+v", d.Svc)
	}
	if d.Health.Issues == nil || d.Keyspace.LateShards == nil || d.Keyspace.Databases == nil {
		t.Errorf("a list rendered as null: %s", raw)
	}
	if d.Cluster.Mode != "standalone" || d.Cluster.Shards != len(d.Shards) {
		t.Errorf("cluster: %+v", d.Cluster)
	}
	checkPersistenceSection(t, raw, d.Persistence)
	return d
}

// checkPersistenceSection checks what every persistence section satisfies,
// with or without a persistence manager.
func checkPersistenceSection(t *testing.T, raw string, p status.Persistence) {
	t.Helper()
	okErr := func(v string) bool { return v == status.PersistOK || v == status.PersistErr }
	if p.Enabled != (p.RDB.Enabled || p.AOF.Enabled) || p.RDB.Enabled != (len(p.RDB.SaveRules) > 0) || p.RDB.SaveRules == nil ||
		!okErr(p.RDB.LastBGSaveStatus) || !okErr(p.AOF.LastWriteStatus) || !okErr(p.AOF.LastFsyncStatus) ||
		(p.RDB.LastBGSaveStatus == status.PersistOK) != (p.RDB.LastError == nil) || p.RDB.LastSave != status.At(time.Unix(p.RDB.LastSave.Unix, 0)) ||
		(p.AOF.Fsync != "always" && p.AOF.Fsync != "everysec" && p.AOF.Fsync != "no") || (!p.AOF.Enabled && p.AOF.CurrentSizeBytes != nil) {
		t.Errorf("persistence section: %+v", p)
	}
	for _, m := range regexp.MustCompile(`"(changes_since_last_save|current_size_bytes|rdb|aof_write|aof_fsync|load|seconds|changes)":(-?[0-9.eE+]+)`).FindAllStringSubmatch(raw, -1) {
		if _, err := strconv.ParseInt(m[2], 10, 64); err != nil {
			t.Errorf("%s is %s, not an integer", m[1], m[2])
		}
	}
	if p.WritesRefused == nil && !strings.Contains(raw, `"writes_refused":null`) {
		t.Errorf("writes_refused not rendered as null: %s", raw)
	}
}

func TestStatusJSON(t *testing.T) {
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st), withShards(4))
			ctx := context.Background()
			for _, proto := range []int{2, 3} {
				rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: proto})
				defer rdb.Close()
				for i := range 50 {
					if err := rdb.Set(ctx, "p"+strconv.Itoa(proto)+":"+strconv.Itoa(i), "v", 0).Err(); err != nil {
						t.Fatal(err)
					}
				}
				if err := rdb.Set(ctx, "ttl"+strconv.Itoa(proto), "v", time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
				raw, d := statusWithoutLateShards(t, rdb)
				wantKeys := int64(51 * (proto - 1)) // RESP2 wrote 51 keys, then RESP3 51 more
				if d.Svc.Version != "test" || d.Svc.State != status.StateReady || d.Health.Status != status.Healthy || len(d.Health.Issues) != 0 {
					t.Errorf("RESP%d: svc %+v health %+v", proto, d.Svc, d.Health)
				}
				info, _ := rdb.Info(ctx, "server").Result()
				if !strings.Contains(info, "run_id:"+d.Cluster.NodeID+"\r\n") || d.Cluster.Address != ts.Addr || d.Cluster.DrainStrategy != st.String() {
					t.Errorf("cluster %+v; INFO server:\n%s", d.Cluster, info)
				}
				var sum, sumExp int64
				for i, sh := range d.Shards {
					if sh.ID != i || sh.State != status.ShardOK || sh.Keys == nil || sh.Expires == nil || sh.MemoryBytes == nil {
						t.Fatalf("shard %d: %+v", i, sh)
					}
					sum += *sh.Keys
					sumExp += *sh.Expires
				}
				if sum != wantKeys || sumExp != int64(proto-1) || !d.Keyspace.Complete || len(d.Keyspace.Databases) != 1 ||
					d.Keyspace.Databases[0] != (status.Database{DB: 0, Keys: wantKeys, Expires: int64(proto - 1)}) {
					t.Errorf("RESP%d: shards sum %d/%d keyspace %+v; want %d keys", proto, sum, sumExp, d.Keyspace, wantKeys)
				}
				if d.Memory.UsedBytes <= 0 || d.Memory.MaxMemoryBytes != 0 || d.Memory.UsedPercent != nil || !strings.Contains(raw, `"used_percent":null`) {
					t.Errorf("memory: %+v", d.Memory)
				}
				if d.Clients.Connected < 1 || d.Clients.MaxClients != 10000 || d.Commands.Total < 51 {
					t.Errorf("clients %+v commands %+v", d.Clients, d.Commands)
				}
				if !d.HotShards.Enabled || d.HotShards.HotReport == nil || len(d.HotShards.Shards) != 4 {
					t.Errorf("hot_shards: %+v", d.HotShards)
				}
				// No persistence manager: nothing is saved and nothing fails.
				if p := d.Persistence; p.Enabled || p.Loading || p.WritesRefused != nil || p.ErrorsTotal != (status.PersistenceErrors{}) ||
					p.RDB.LastBGSaveStatus != status.PersistOK || p.AOF.LastFsync != nil || p.AOF.Fsync != "everysec" {
					t.Errorf("persistence without a manager: %+v", p)
				}
			}

			// Thresholds from the registry follow CONFIG SET.
			rdb := redis.NewClient(&redis.Options{Addr: ts.Addr})
			defer rdb.Close()
			for _, kv := range [][2]string{{"maxmemory", "100"}, {"maxclients", "10"}, {"status-connection-warning-percent", "1"}, {"hotshards-enabled", "no"}} {
				if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
					t.Fatal(err)
				}
			}
			raw, d := statusWithoutLateShards(t, rdb)
			var codes []string
			for _, is := range d.Health.Issues {
				codes = append(codes, is.Code+"/"+is.Severity)
			}
			if d.Health.Status != status.Degraded || strings.Join(codes, " ") != "memory_pressure/warning near_connection_limit/warning" {
				t.Errorf("health %s %v", d.Health.Status, codes)
			}
			if d.Memory.MaxMemoryBytes != 100 || d.Memory.UsedPercent == nil || *d.Memory.UsedPercent < 100 {
				t.Errorf("memory %+v", d.Memory)
			}
			if d.HotShards.Enabled || !strings.HasSuffix(raw, `"hot_shards":{"enabled":false}}`) {
				t.Errorf("disabled hot shards: %s", raw)
			}
		})
	}
}

// TestStatusLateShard: a shard whose owner cannot answer (its token is held)
// is reported late, with null keyspace fields, and health is degraded; the
// others answer; STATUS JSON takes about the deadline, not more.
func TestStatusLateShard(t *testing.T) {
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st), withShards(4))
			c := dialRaw(t, ts.Addr)
			for i := range 40 {
				c.do("SET", "k"+strconv.Itoa(i), "v")
			}
			const late = 2
			release := ts.RT.HoldShard(late)
			t.Cleanup(release) // before the server's cleanup: Close needs the token
			start := time.Now()
			v := c.do("STATUS", "JSON")
			took := time.Since(start)
			release()
			if v.Type != '$' {
				t.Fatalf("STATUS JSON: %c %q", v.Type, v.Str)
			}
			raw := string(v.Str)
			d := decodeStatus(t, raw)
			if took < netloop.StatusDeadline || took > netloop.StatusDeadline+2*time.Second {
				t.Errorf("STATUS JSON with a late shard took %v; deadline %v", took, netloop.StatusDeadline)
			}
			for i, sh := range d.Shards {
				if i == late {
					if sh.State != status.ShardLate || sh.Keys != nil || sh.Expires != nil || sh.MemoryBytes != nil {
						t.Errorf("late shard: %+v", sh)
					}
					continue
				}
				if sh.State != status.ShardOK || sh.Keys == nil {
					t.Errorf("shard %d: %+v", i, sh)
				}
			}
			if !strings.Contains(raw, `{"id":2,"state":"late","keys":null,"expires":null,"memory_bytes":null,`) {
				t.Errorf("late shard not rendered with nulls: %s", raw)
			}
			if d.Keyspace.Complete || len(d.Keyspace.LateShards) != 1 || d.Keyspace.LateShards[0] != late {
				t.Errorf("keyspace: %+v", d.Keyspace)
			}
			if d.Health.Status != status.Degraded || len(d.Health.Issues) != 1 || d.Health.Issues[0].Code != status.IssueShardLate ||
				!strings.Contains(d.Health.Issues[0].Message, "shard 2 did not answer within 100ms") {
				t.Errorf("health: %+v", d.Health)
			}
			// Released: everyone answers again.
			if d := decodeStatus(t, string(c.do("STATUS", "JSON").Str)); d.Health.Status != status.Healthy || !d.Keyspace.Complete {
				t.Errorf("after release: %+v %+v", d.Health, d.Keyspace)
			}
		})
	}
}

// TestStatusNotReady: while starting or shutting down the document says so
// and health is unhealthy (STATUS is allowed while loading).
func TestStatusNotReady(t *testing.T) {
	life := new(lifecycle.Tracker)
	ts := startServer(t, withNetConfig(func(nc *netloop.Config) { nc.Lifecycle = life }))
	c := dialRaw(t, ts.Addr)
	life.Set(lifecycle.Starting)
	d := decodeStatus(t, string(c.do("STATUS", "JSON").Str))
	if d.Svc.State != status.StateStarting || d.Health.Status != status.Unhealthy || d.Health.Issues[0].Code != status.IssueNotReady ||
		d.Health.Issues[0].Severity != status.SeverityCritical {
		t.Errorf("starting: %+v %+v", d.Svc, d.Health)
	}
	life.Set(lifecycle.Ready)
}

func TestStatusHelpAndErrors(t *testing.T) {
	ts := startServer(t)
	for _, proto := range []string{"2", "3"} {
		c := dialRaw(t, ts.Addr)
		c.do("HELLO", proto)
		for _, args := range [][]string{{"STATUS"}, {"STATUS", "HELP"}, {"status", "help"}} {
			v := c.do(args...)
			if v.Type != '*' || len(v.Elems) < 4 {
				t.Fatalf("RESP%s %v: %c %q", proto, args, v.Type, v.Str)
			}
			for _, e := range v.Elems {
				if e.Type != '+' {
					t.Fatalf("RESP%s %v: help line %c %q is not a simple string", proto, args, e.Type, e.Str)
				}
			}
			if first := string(v.Elems[0].Str); !strings.HasPrefix(first, "STATUS <subcommand>") {
				t.Errorf("help starts with %q", first)
			}
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"STATUS", "FOO"}, "ERR unknown subcommand 'FOO'. Try STATUS HELP."},
			{[]string{"STATUS", "json", "x"}, "ERR wrong number of arguments for 'status|json' command"},
			{[]string{"STATUS", "HELP", "x"}, "ERR wrong number of arguments for 'status|help' command"},
		} {
			if v := c.do(tc.args...); v.Type != '-' || string(v.Str) != tc.want {
				t.Errorf("RESP%s %v: %c %q; want -%s", proto, tc.args, v.Type, v.Str, tc.want)
			}
		}
	}
}

// TestStatusRedisCli: redis-cli prints the document as it is (RESP2 and
// RESP3), and COMMAND DOCS describes STATUS.
func TestStatusRedisCli(t *testing.T) {
	needTool(t, "redis-cli")
	ts := startServer(t)
	p := strconv.Itoa(ts.Port)
	for _, proto := range []string{"-2", "-3"} {
		out, err := runTool(t, "", "redis-cli", "-p", p, proto, "STATUS", "JSON")
		if err != nil {
			t.Fatalf("redis-cli %s: %v %q", proto, err, out)
		}
		d := decodeStatus(t, strings.TrimSuffix(out, "\n"))
		if d.Health.Status != status.Healthy {
			t.Errorf("redis-cli %s: %+v", proto, d.Health)
		}
		out, err = runTool(t, "", "redis-cli", "-p", p, proto, "STATUS", "NOPE")
		if err != nil || !strings.Contains(out, "ERR unknown subcommand 'NOPE'. Try STATUS HELP.") {
			t.Errorf("redis-cli %s STATUS NOPE: %v %q", proto, err, out)
		}
	}
	out, err := runTool(t, "", "redis-cli", "-p", p, "COMMAND", "DOCS", "status")
	if err != nil || !strings.Contains(out, "status document") || !strings.Contains(out, "json") {
		t.Errorf("COMMAND DOCS status: %v %q", err, out)
	}
}

// persistServer is a real svcdb with a real persistence manager over
// dataDir: the wiring of cmd/svcdb (the manager loads after the port
// opens, the lifecycle turns ready once it has), stopped by t.Cleanup.
type persistServer struct {
	addr string
	reg  *config.Registry
	pm   *persist.Manager
	life *lifecycle.Tracker
}

func startPersistServer(t *testing.T, params map[string]string) *persistServer {
	t.Helper()
	reg := config.New()
	for k, v := range params {
		if err := reg.Set(k, v, config.SourceFlag); err != nil {
			t.Fatal(err)
		}
	}
	table := command.New()
	rt, err := shard.New(shard.Config{Shards: 4, Strategy: shard.RunToCompletion,
		OnPanic: func(cmd string, r any, stack []byte) { t.Errorf("BUG: handler for %s panicked: %v\n%s", cmd, r, stack) }}, table)
	if err != nil {
		t.Fatal(err)
	}
	rt.Start()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	pm := persist.New(rt, reg, logger)
	pm.BeginLoading()
	life := new(lifecycle.Tracker)
	srv := netloop.New(netloop.Config{Bind: "127.0.0.1", EventLoops: 2, Version: "test", Params: reg, Logger: logger,
		Lifecycle: life, Persistence: pm}, table, rt)
	if err := srv.Start(); err != nil {
		rt.Close()
		t.Fatal(err)
	}
	ps := &persistServer{addr: srv.Addr(), reg: reg, pm: pm, life: life}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stopping server: %v", err)
		}
		if err := pm.Close(false); err != nil {
			t.Errorf("closing persistence: %v", err)
		}
		rt.Close()
	})
	return ps
}

// TestStatusPersistence: the persistence section and health of a server
// with a real persistence manager (RDB save rules and the append-only file
// under t.TempDir()): loading, a SAVE, a snapshot that fails on the real
// file system (writes refused with -MISCONF, reads still served, health
// degraded naming the error), and the recovery.
func TestStatusPersistence(t *testing.T) {
	dir := t.TempDir()
	ps := startPersistServer(t, map[string]string{"data-dir": dir, "save": "3600 1 300 100", "appendonly": "yes", "appendfsync": "always"})
	c := dialRaw(t, ps.addr)

	// Loading: the server is starting, STATUS still answers.
	d := decodeStatus(t, string(c.do("STATUS", "JSON").Str))
	if !d.Persistence.Loading || d.Svc.State != status.StateStarting || d.Health.Status != status.Unhealthy || d.Health.Issues[0].Code != status.IssueNotReady {
		t.Errorf("loading: persistence %+v svc %+v health %+v", d.Persistence, d.Svc, d.Health)
	}
	if v := c.do("GET", "k"); v.Type != '-' || !strings.HasPrefix(string(v.Str), "LOADING") {
		t.Errorf("GET while loading: %c %q", v.Type, v.Str)
	}
	if err := ps.pm.Load(); err != nil {
		t.Fatal(err)
	}
	ps.life.Set(lifecycle.Ready)
	ps.pm.Start()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ps.addr})
	defer rdb.Close()
	for i := range 20 {
		if err := rdb.Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now().Unix()
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	lastsave, err := rdb.LastSave(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rdb.Do(ctx, "STATUS", "JSON").Text()
	if err != nil {
		t.Fatal(err)
	}
	d = decodeStatus(t, raw)
	p := d.Persistence
	if !p.Enabled || p.Loading || !p.RDB.Enabled || len(p.RDB.SaveRules) != 2 || p.RDB.SaveRules[1] != (status.SaveRule{Seconds: 300, Changes: 100}) ||
		p.RDB.LastBGSaveStatus != "ok" || p.RDB.BGSaveInProgress || p.RDB.ChangesSinceLastSave != 0 || p.RDB.LastError != nil ||
		p.RDB.LastSave.Unix != lastsave || lastsave < before {
		t.Errorf("rdb after SAVE: %+v (LASTSAVE %d)", p.RDB, lastsave)
	}
	if !p.AOF.Enabled || p.AOF.Fsync != "always" || p.AOF.LastWriteStatus != "ok" || p.AOF.LastFsyncStatus != "ok" ||
		p.AOF.CurrentSizeBytes == nil || *p.AOF.CurrentSizeBytes <= 0 || p.AOF.LastFsync == nil || p.AOF.LastFsync.Unix < before-5 {
		t.Errorf("aof: %+v", p.AOF)
	}
	if p.ErrorsTotal != (status.PersistenceErrors{}) || p.WritesRefused != nil || d.Svc.State != status.StateReady || d.Health.Status != status.Healthy {
		t.Errorf("errors %+v refused %v health %+v", p.ErrorsTotal, p.WritesRefused, d.Health)
	}
	if err := rdb.Set(ctx, "k1", "v2", 0).Err(); err != nil { // one change, as Redis counts an overwrite
		t.Fatal(err)
	}
	if d := decodeStatus(t, rdb.Do(ctx, "STATUS", "JSON").Val().(string)); d.Persistence.RDB.ChangesSinceLastSave != 1 {
		t.Errorf("changes_since_last_save after one SET: %d", d.Persistence.RDB.ChangesSinceLastSave)
	}

	// The snapshot fails on the file system: data-dir is now a regular file.
	blocker := filepath.Join(dir, "not-a-directory")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ps.reg.Set("data-dir", blocker, config.SourceFlag); err != nil {
		t.Fatal(err)
	}
	if err := rdb.BgSave(ctx).Err(); err != nil {
		t.Fatalf("BGSAVE: %v", err)
	}
	eventually(t, 10*time.Second, func() bool {
		return ps.pm.WriteDenied() != ""
	}, "writes still accepted after a failed snapshot")
	if err := rdb.Set(ctx, "refused", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF ") {
		t.Errorf("SET while the snapshot fails: %v", err)
	}
	if v, err := rdb.Get(ctx, "k1").Result(); err != nil || v != "v2" {
		t.Errorf("GET while the snapshot fails: %q %v", v, err)
	}
	raw = rdb.Do(ctx, "STATUS", "JSON").Val().(string)
	d = decodeStatus(t, raw)
	p = d.Persistence
	if p.RDB.LastBGSaveStatus != "err" || p.RDB.LastError == nil || !strings.Contains(*p.RDB.LastError, "not a directory") ||
		p.ErrorsTotal.RDB != 1 || p.WritesRefused == nil || !strings.HasPrefix(*p.WritesRefused, "MISCONF Redis is configured to save RDB snapshots") ||
		p.RDB.LastSave.Unix != lastsave {
		t.Errorf("after a failed snapshot: %+v %+v refused %v", p.RDB, p.ErrorsTotal, p.WritesRefused)
	}
	if d.Health.Status != status.Degraded || len(d.Health.Issues) != 1 || d.Health.Issues[0].Code != status.IssuePersistenceFailing ||
		d.Health.Issues[0].Severity != status.SeverityWarning || !strings.Contains(d.Health.Issues[0].Message, *p.RDB.LastError) {
		t.Errorf("health while persistence fails: %+v", d.Health)
	}

	// Repaired: a SAVE succeeds and writes are accepted again.
	if err := ps.reg.Set("data-dir", dir, config.SourceFlag); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE after the repair: %v", err)
	}
	// SAVE replies just before the manager recomputes the refusal
	// (persist.finishSnapshot closes the job, then calls Refresh).
	eventually(t, 5*time.Second, func() bool { return ps.pm.WriteDenied() == "" }, "writes still refused after a successful SAVE")
	d = decodeStatus(t, rdb.Do(ctx, "STATUS", "JSON").Val().(string))
	if p := d.Persistence; p.RDB.LastBGSaveStatus != "ok" || p.RDB.LastError != nil || p.WritesRefused != nil || p.ErrorsTotal.RDB != 1 ||
		d.Health.Status != status.Healthy {
		t.Errorf("after the repair: %+v health %+v", p, d.Health)
	}
	if err := rdb.Set(ctx, "accepted", "v", 0).Err(); err != nil {
		t.Errorf("SET after the repair: %v", err)
	}
}
