package netloop_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// decodeStatus parses a status document and checks what every document
// must satisfy whatever the state.
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
	if d.Cluster.Mode != "standalone" || d.Cluster.Shards != len(d.Shards) || d.Persistence.Available || d.Persistence.Message == "" {
		t.Errorf("cluster/persistence: %+v %+v", d.Cluster, d.Persistence)
	}
	return d
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
				raw, err := rdb.Do(ctx, "STATUS", "JSON").Text()
				if err != nil {
					t.Fatalf("RESP%d STATUS JSON: %v", proto, err)
				}
				d := decodeStatus(t, raw)
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
			}

			// Thresholds from the registry follow CONFIG SET.
			rdb := redis.NewClient(&redis.Options{Addr: ts.Addr})
			defer rdb.Close()
			for _, kv := range [][2]string{{"maxmemory", "100"}, {"maxclients", "10"}, {"status-connection-warning-percent", "1"}, {"hotshards-enabled", "no"}} {
				if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := rdb.Do(ctx, "STATUS", "JSON").Text()
			if err != nil {
				t.Fatal(err)
			}
			d := decodeStatus(t, raw)
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
				t.Errorf("disabled hot shards: %s", raw[strings.Index(raw, `"hot_shards"`):])
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
