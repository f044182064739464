package netloop_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
)

// statFields parses "calls=3,usec=5,..." into a map.
func statFields(t testing.TB, s string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("malformed stat %q", s)
		}
		m[k] = v
	}
	return m
}

func statInt(t testing.TB, m map[string]string, k string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(m[k], 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, m[k], err)
	}
	return n
}

// TestCommandStats drives real traffic through go-redis (inline execution,
// queued batches under the dedicated strategy, coordinated multi-shard
// commands, loop-local commands, failures and rejections) and reads INFO
// commandstats, errorstats and latencystats back with go-redis' own INFO
// parser.
func TestCommandStats(t *testing.T) {
	for _, strategy := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(strategy.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(strategy))
			ctx := context.Background()
			rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2})
			defer rdb.Close()
			const n = 200
			pipe := rdb.Pipeline()
			for i := range n {
				pipe.Set(ctx, fmt.Sprintf("k%d", i), i, 0)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if err := rdb.Get(ctx, fmt.Sprintf("k%d", i)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			rdb.Set(ctx, "text", "abc", 0)
			if err := rdb.Incr(ctx, "text").Err(); err == nil {
				t.Fatal("INCR of a non-integer succeeded")
			}
			rdb.MSet(ctx, "a", 1, "b", 2, "c", 3) // coordinated across shards
			raw := dialRaw(t, ts.Addr)
			wantErr(t, raw.do("GET"), "ERR wrong number of arguments for 'get' command")
			wantErr(t, raw.do("NOSUCH"), "ERR unknown command 'NOSUCH', with args beginning with: ")
			want(t, raw.do("PING"), `+"PONG"`)

			info, err := rdb.InfoMap(ctx, "everything").Result()
			if err != nil {
				t.Fatal(err)
			}
			cs := info["Commandstats"]
			set := statFields(t, cs["cmdstat_set"])
			if got := statInt(t, set, "calls"); got != n+1 {
				t.Errorf("set calls %d, want %d", got, n+1)
			}
			get := statFields(t, cs["cmdstat_get"])
			if statInt(t, get, "calls") != n || statInt(t, get, "rejected_calls") != 1 || statInt(t, get, "failed_calls") != 0 {
				t.Errorf("cmdstat_get %v, want calls=%d rejected_calls=1 failed_calls=0", get, n)
			}
			if statInt(t, get, "usec") <= 0 {
				t.Errorf("cmdstat_get usec %v", get["usec"])
			}
			incr := statFields(t, cs["cmdstat_incr"])
			if statInt(t, incr, "calls") != 1 || statInt(t, incr, "failed_calls") != 1 {
				t.Errorf("cmdstat_incr %v, want calls=1 failed_calls=1", incr)
			}
			if statInt(t, statFields(t, cs["cmdstat_mset"]), "calls") != 1 || statInt(t, statFields(t, cs["cmdstat_ping"]), "calls") != 1 {
				t.Errorf("mset %q ping %q", cs["cmdstat_mset"], cs["cmdstat_ping"])
			}
			if _, ok := cs["cmdstat_nosuch"]; ok {
				t.Error("an unknown command has commandstats")
			}
			// Errors: the INCR failure, the arity rejection and the unknown command.
			if got := info["Errorstats"]["errorstat_ERR"]; got != "count=3" {
				t.Errorf("errorstat_ERR=%q, want count=3", got)
			}
			if got := info["Stats"]["total_error_replies"]; got != "3" {
				t.Errorf("total_error_replies=%q, want 3", got)
			}
			lat := statFields(t, info["Latencystats"]["latency_percentiles_usec_get"])
			p50, _ := strconv.ParseFloat(lat["p50"], 64)
			p99, _ := strconv.ParseFloat(lat["p99"], 64)
			p999, _ := strconv.ParseFloat(lat["p99.9"], 64)
			if !(p50 > 0 && p50 <= p99 && p99 <= p999) {
				t.Errorf("latency_percentiles_usec_get %v", lat)
			}

			// CONFIG RESETSTAT starts the counts again, as in Redis.
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			rdb.Get(ctx, "k1")
			info, _ = rdb.InfoMap(ctx, "commandstats", "errorstats").Result()
			if got := statInt(t, statFields(t, info["Commandstats"]["cmdstat_get"]), "calls"); got != 1 {
				t.Errorf("after RESETSTAT get calls %d, want 1", got)
			}
			if _, ok := info["Commandstats"]["cmdstat_set"]; ok {
				t.Errorf("after RESETSTAT cmdstat_set is still listed: %q", info["Commandstats"]["cmdstat_set"])
			}
			if len(info["Errorstats"]) != 0 {
				t.Errorf("after RESETSTAT errorstats %v", info["Errorstats"])
			}
		})
	}
}

// histogram reads one command's LATENCY HISTOGRAM entry (RESP2 or RESP3).
func histogram(t testing.TB, v resp.Value) (calls int64, bounds, counts []int64) {
	t.Helper()
	m := pairs(t, v)
	calls = m["calls"].Int
	h := m["histogram_usec"]
	if len(h.Elems)%2 != 0 {
		t.Fatalf("histogram_usec %s", h)
	}
	for i := 0; i < len(h.Elems); i += 2 {
		bounds = append(bounds, h.Elems[i].Int)
		counts = append(counts, h.Elems[i+1].Int)
	}
	return calls, bounds, counts
}

func TestLatencyHistogram(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	for i := range 50 {
		c.do("SET", fmt.Sprint("key", i), "v")
	}
	c.do("GET", "key1")
	for _, proto := range []string{"2", "3"} {
		c.do("HELLO", proto)
		v := c.do("LATENCY", "HISTOGRAM", "set", "nosuch", "client")
		m := pairs(t, v)
		if _, ok := m["set"]; !ok || len(m) != 1 { // CLIENT was never called; NOSUCH does not exist
			t.Fatalf("LATENCY HISTOGRAM set nosuch client (RESP%s): %s", proto, v)
		}
		calls, bounds, counts := histogram(t, m["set"])
		if calls != 50 {
			t.Errorf("RESP%s: set calls %d, want 50", proto, calls)
		}
		for i := range bounds {
			if bounds[i]&(bounds[i]-1) != 0 || (i > 0 && (bounds[i] <= bounds[i-1] || counts[i] <= counts[i-1])) {
				t.Fatalf("RESP%s: bounds %v counts %v: want rising powers of two with rising counts", proto, bounds, counts)
			}
		}
		if len(counts) == 0 || counts[len(counts)-1] != 50 {
			t.Errorf("RESP%s: cumulative counts %v should end at 50", proto, counts)
		}
	}
	// Without arguments: every command that was called.
	all := pairs(t, c.do("LATENCY", "HISTOGRAM"))
	for _, name := range []string{"set", "get", "hello"} {
		if _, ok := all[name]; !ok {
			t.Errorf("LATENCY HISTOGRAM lacks %s: %v", name, all)
		}
	}
}

// TestSlowCommandsAreRecorded: a command that really takes long (DEBUG SLEEP)
// lands in the slowlog with its client's address and name, and in the
// latency monitor as a "command" event; fast commands land in neither.
func TestSlowCommandsAreRecorded(t *testing.T) {
	ts := startServer(t, withDebugCommand("yes"))
	c := dialRaw(t, ts.Addr)
	want(t, c.do("CONFIG", "SET", "slowlog-log-slower-than", "100000", "latency-monitor-threshold", "100"), `+"OK"`)
	want(t, c.do("CLIENT", "SETNAME", "sleeper"), `+"OK"`)
	want(t, c.do("SLOWLOG", "RESET"), `+"OK"`)
	c.do("SET", "k", "v")
	want(t, c.do("DEBUG", "SLEEP", "0.15"), `+"OK"`)
	c.do("GET", "k")

	v := c.do("SLOWLOG", "GET")
	if v.Type != '*' || len(v.Elems) != 1 {
		t.Fatalf("SLOWLOG GET: %s, want exactly the DEBUG SLEEP entry", v)
	}
	e := v.Elems[0].Elems
	if len(e) != 6 {
		t.Fatalf("slowlog entry %s", v.Elems[0])
	}
	if us := e[2].Int; us < 150000 || us > 5000000 {
		t.Errorf("duration %d µs, want about 150000", us)
	}
	var args []string
	for _, a := range e[3].Elems {
		args = append(args, string(a.Str))
	}
	local := c.c.LocalAddr().String()
	if strings.Join(args, " ") != "DEBUG SLEEP 0.15" || string(e[4].Str) != local || string(e[5].Str) != "sleeper" {
		t.Errorf("entry args %q addr %q name %q, want DEBUG SLEEP 0.15 from %s named sleeper", args, e[4].Str, e[5].Str, local)
	}

	latest := c.do("LATENCY", "LATEST")
	if latest.Type != '*' || len(latest.Elems) != 1 {
		t.Fatalf("LATENCY LATEST: %s, want one event", latest)
	}
	ev := latest.Elems[0].Elems
	if string(ev[0].Str) != "command" || ev[2].Int < 150 || ev[3].Int < ev[2].Int {
		t.Errorf("LATENCY LATEST entry %s, want command with latest >= 150 ms", latest.Elems[0])
	}
	if h := c.do("LATENCY", "HISTORY", "command"); len(h.Elems) != 1 || h.Elems[0].Elems[1].Int < 150 {
		t.Errorf("LATENCY HISTORY command: %s", h)
	}
}

// TestExpireCycleLatencyEvent: an active expiry cycle that holds a shard for
// at least latency-monitor-threshold is recorded as "expire-cycle".
func TestExpireCycleLatencyEvent(t *testing.T) {
	ts := startServer(t, withShards(1))
	c := dialRaw(t, ts.Addr)
	want(t, c.do("CONFIG", "SET", "latency-monitor-threshold", "1"), `+"OK"`)
	// Many keys that expire at once: the next cycles spend their whole time
	// budget (a quarter of 100 ms) deleting them.
	const n = 300000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "*5\r\n$3\r\nSET\r\n$%d\r\nx%d\r\n$1\r\nv\r\n$2\r\nPX\r\n$2\r\n50\r\n", len(fmt.Sprint("x", i)), i)
	}
	// Written while the replies are read: svcdb stops reading a client
	// whose unread replies pass 1 MiB, so a client that wrote all 16 MB
	// before reading would wait on itself.
	wrote := make(chan error, 1)
	go func() {
		_ = c.c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		_, err := c.c.Write([]byte(b.String()))
		wrote <- err
	}()
	for range n {
		c.read()
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool {
		for _, e := range c.do("LATENCY", "LATEST").Elems {
			if string(e.Elems[0].Str) == "expire-cycle" && e.Elems[2].Int >= 1 {
				return true
			}
		}
		return false
	}, "no expire-cycle latency event")
}
