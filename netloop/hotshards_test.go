package netloop_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

// fields turns a DEBUG HOTSHARDS map (RESP3) or flat name/value array (RESP2)
// into a map by name.
func fields(t *testing.T, v resp.Value, resp3 bool) map[string]resp.Value {
	t.Helper()
	want := byte('*')
	if resp3 {
		want = '%'
	}
	if v.Type != want || len(v.Elems)%2 != 0 {
		t.Fatalf("want a %c name/value reply, got %c %q %v", want, v.Type, v.Str, v.Elems)
	}
	m := map[string]resp.Value{}
	for i := 0; i < len(v.Elems); i += 2 {
		m[string(v.Elems[i].Str)] = v.Elems[i+1]
	}
	return m
}

// num reads a double (RESP3 ',', RESP2 bulk) or an integer.
func num(t *testing.T, v resp.Value, resp3 bool) float64 {
	t.Helper()
	switch {
	case v.Type == ':':
		return float64(v.Int)
	case resp3 && v.Type == ',':
		return v.Float
	case !resp3 && v.Type == '$':
		f, err := strconv.ParseFloat(string(v.Str), 64)
		if err != nil {
			t.Fatalf("double %q: %v", v.Str, err)
		}
		return f
	}
	t.Fatalf("not a number for resp3=%v: %c %q", resp3, v.Type, v.Str)
	return 0
}

func TestDebugHotShardsSkewedTraffic(t *testing.T) {
	ts := startServer(t, withShards(4))
	hot := ts.RT.ShardOf([]byte("{hot}"))
	// One cold key on each other shard.
	cold := map[int]string{}
	for i := 0; len(cold) < 3; i++ {
		k := "cold:" + strconv.Itoa(i)
		if sh := ts.RT.ShardOf([]byte(k)); sh != hot && cold[sh] == "" {
			cold[sh] = k
		}
	}
	c := dialRaw(t, ts.Addr)
	var sb strings.Builder
	n := 0
	for i := range 50 {
		k := fmt.Sprintf("{hot}:%d", i)
		sb.WriteString(multibulk("SET", k, "v"))
		sb.WriteString(multibulk("GET", k))
		n += 2
	}
	for _, k := range cold {
		sb.WriteString(multibulk("SET", k, "v"))
		n++
	}
	burst := sb.String()
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		c.write(burst)
		for range n {
			if v := c.read(); v.Type == '-' {
				t.Fatalf("traffic: %s", v.Str)
			}
		}
	}

	for _, resp3 := range []bool{false, true} {
		if resp3 {
			if v := c.do("HELLO", "3"); v.Type != '%' {
				t.Fatalf("HELLO 3: %c %q", v.Type, v.Str)
			}
		}
		m := fields(t, c.do("DEBUG", "HOTSHARDS", "PERIOD", "2"), resp3)
		if p := m["period_secs"].Int; p != 2 {
			t.Errorf("resp3=%v: period_secs = %d, want 2", resp3, p)
		}
		if m["num_shards"].Int != 4 || m["hot_count"].Int != 1 || m["warm_count"].Int != 0 {
			t.Errorf("resp3=%v: num_shards=%d hot_count=%d warm_count=%d", resp3, m["num_shards"].Int, m["hot_count"].Int, m["warm_count"].Int)
		}
		total := num(t, m["total_ops_per_sec"], resp3)
		if ratio := num(t, m["imbalance_ratio"], resp3); ratio <= 2 || total <= 0 {
			t.Errorf("resp3=%v: imbalance_ratio=%v total_ops_per_sec=%v", resp3, ratio, total)
		}
		shards := m["shards"]
		if shards.Type != '*' || len(shards.Elems) != 4 {
			t.Fatalf("resp3=%v: shards: %c with %d elements", resp3, shards.Type, len(shards.Elems))
		}
		for i, sv := range shards.Elems {
			h := fields(t, sv, resp3)
			pct := num(t, h["percentage"], resp3)
			ops, reads, writes := num(t, h["ops_per_sec"], resp3), num(t, h["reads_per_sec"], resp3), num(t, h["writes_per_sec"], resp3)
			status := string(h["status"].Str)
			if h["shard_id"].Int != int64(i) || h["queue_depth"].Type != ':' {
				t.Errorf("resp3=%v shard %d: shard_id=%d queue_depth %c", resp3, i, h["shard_id"].Int, h["queue_depth"].Type)
			}
			if i == hot {
				if status != "HOT" || pct <= 80 || h["keys"].Int != 50 || reads <= 0 || writes <= 0 || ops < reads+writes-1 {
					t.Errorf("resp3=%v hot shard %d: status=%s pct=%v keys=%d ops=%v reads=%v writes=%v",
						resp3, i, status, pct, h["keys"].Int, ops, reads, writes)
				}
			} else if status != "OK" || pct >= 10 || h["keys"].Int != 1 {
				t.Errorf("resp3=%v cold shard %d: status=%s pct=%v keys=%d", resp3, i, status, pct, h["keys"].Int)
			}
		}
		recs := m["recommendations"]
		if recs.Type != '*' || len(recs.Elems) == 0 || !strings.Contains(string(recs.Elems[0].Str), "hash tag") {
			t.Errorf("resp3=%v: recommendations %v", resp3, recs.Elems)
		}
	}

	// INFO: default sections include it, and it can be asked for by name.
	c2 := dialRaw(t, ts.Addr)
	for _, args := range [][]string{{"INFO"}, {"INFO", "hotshards"}} {
		info := string(c2.do(args...).Str)
		for _, want := range []string{"# Hotshards\r\n", "hotshards_period_secs:", "hotshards_total_ops_per_sec:",
			"hotshards_imbalance_ratio:", "hotshards_hot_count:1\r\n", "hotshards_warm_count:0\r\n",
			fmt.Sprintf("shard%d:ops_per_sec=", hot), "status=HOT\r\n", "keys=50,"} {
			if !strings.Contains(info, want) {
				t.Errorf("%v: no %q in\n%s", args, want, info)
			}
		}
	}
}

func TestDebugHotShardsErrors(t *testing.T) {
	ts := startServer(t, withShards(2))
	c := dialRaw(t, ts.Addr)
	for _, p := range []string{"0", "-3", "abc", "1.5", ""} {
		if v := c.do("DEBUG", "HOTSHARDS", "PERIOD", p); v.Type != '-' || string(v.Str) != "ERR PERIOD must be a positive integer number of seconds" {
			t.Errorf("PERIOD %q: %c %q", p, v.Type, v.Str)
		}
	}
	if v := c.do("DEBUG", "HOTSHARDS", "PERIOD"); v.Type != '-' || string(v.Str) != "ERR syntax error" {
		t.Errorf("PERIOD without value: %c %q", v.Type, v.Str)
	}
	// enable-debug-command is no by default: Redis' refusal (security_test.go
	// has the rest).
	if v := c.do("DEBUG", "OBJECT", "k"); v.Type != '-' || !strings.HasPrefix(string(v.Str), "ERR DEBUG command not allowed.") {
		t.Errorf("DEBUG OBJECT: %c %q", v.Type, v.Str)
	}
	if v := c.do("DEBUG"); v.Type != '-' || !strings.Contains(string(v.Str), "wrong number of arguments") {
		t.Errorf("DEBUG alone: %c %q", v.Type, v.Str)
	}
	if v := c.do("DEBUG", "HELP"); v.Type != '*' || len(v.Elems) < 2 {
		t.Errorf("DEBUG HELP: %c %v", v.Type, v.Elems)
	}
	// A period beyond what was recorded is clamped: the reply says what was used.
	m := fields(t, c.do("DEBUG", "hotshards", "period", "600"), false)
	if p := m["period_secs"].Int; p < 0 || p > 60 {
		t.Errorf("PERIOD 600: period_secs = %d", p)
	}
	if m["imbalance_ratio"].Type != '$' || m["num_shards"].Int != 2 {
		t.Errorf("idle report: %v", m)
	}
	if v := c.do("CONFIG", "SET", "hotshards-enabled", "no"); v.Type != '+' {
		t.Fatalf("CONFIG SET: %c %q", v.Type, v.Str)
	}
	if v := c.do("DEBUG", "HOTSHARDS"); v.Type != '-' || string(v.Str) != "ERR hot-shard tracking is disabled ([hotshards] enabled = false)" {
		t.Errorf("disabled: %c %q", v.Type, v.Str)
	}
	if info := string(c.do("INFO", "hotshards").Str); !strings.Contains(info, "hotshards_enabled:0\r\n") {
		t.Errorf("INFO when disabled:\n%s", info)
	}
}
