package netloop_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

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
	for _, strat := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(strat.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(strat))
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
