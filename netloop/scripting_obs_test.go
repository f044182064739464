package netloop_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/scripting"
)

// scriptInfoField matches INFO memory's scripting fields (Redis 7.0.15's
// used_memory_lua, used_memory_vm_*, *_scripts*, *functions*, *libraries*).
var scriptInfoField = regexp.MustCompile(`^(used_memory_lua|used_memory_vm_|used_memory_scripts|number_of_cached_scripts|number_of_functions|number_of_libraries|used_memory_functions)`)

// scriptInfo returns INFO memory's scripting fields in order, and by name.
func scriptInfo(t *testing.T, c *redis.Client) (names []string, vals map[string]int64) {
	t.Helper()
	vals = map[string]int64{}
	for _, line := range strings.Split(c.Info(context.Background(), "memory").Val(), "\r\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || !scriptInfoField.MatchString(name) {
			continue
		}
		names = append(names, name)
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			vals[name] = n
		}
	}
	return names, vals
}

// TestScriptInfoMemoryAsRedis: INFO memory has Redis 7.0.15's scripting
// fields, in its order, and their values follow what is loaded: the
// counts as Redis', the VM sizes measured (they grow with a script and a
// library), used_memory_scripts the sum of the eval and function parts.
func TestScriptInfoMemoryAsRedis(t *testing.T) {
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t)})
	defer rc.Close()
	ts := startServer(t)
	sc := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer sc.Close()

	want, _ := scriptInfo(t, rc)
	got, before := scriptInfo(t, sc)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("scripting fields:\n got %v\nwant %v", got, want)
	}
	if before["used_memory_vm_eval"] <= 0 || before["used_memory_lua"] != before["used_memory_vm_eval"] {
		t.Errorf("VM size at start: %v", before)
	}

	const lib = "#!lua name=obslib\nlocal big = {}\nfor i = 1, 1000 do big[i] = 'x' .. i end\n" +
		"redis.register_function('f1', function(keys, args) return #big end)\n" +
		"redis.register_function{function_name='f2', callback=function(keys, args) return 2 end, description='two'}\n"
	for _, c := range []*redis.Client{rc, sc} {
		if err := c.FunctionLoad(ctx, lib).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Eval(ctx, "return {1,2,3,'some longer string to count'}", nil).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, rv := scriptInfo(t, rc)
	_, after := scriptInfo(t, sc)
	for _, name := range []string{"number_of_cached_scripts", "number_of_functions", "number_of_libraries"} {
		if after[name] != rv[name] {
			t.Errorf("%s = %d, redis-server %d", name, after[name], rv[name])
		}
	}
	if after["used_memory_vm_eval"] <= before["used_memory_vm_eval"] {
		t.Errorf("used_memory_vm_eval %d after a script, %d before", after["used_memory_vm_eval"], before["used_memory_vm_eval"])
	}
	// the library's 1000-string table is an upvalue of its functions
	if grew := after["used_memory_vm_functions"] - before["used_memory_vm_functions"]; grew < 1000*16 {
		t.Errorf("used_memory_vm_functions grew by %d with a 1000-string library", grew)
	}
	if after["used_memory_vm_total"] != after["used_memory_vm_eval"]+after["used_memory_vm_functions"] {
		t.Errorf("vm_total %d is not eval + functions: %v", after["used_memory_vm_total"], after)
	}
	if after["used_memory_functions"] < int64(len(lib)) {
		t.Errorf("used_memory_functions %d < the library's %d code bytes", after["used_memory_functions"], len(lib))
	}
	if after["used_memory_scripts"] != after["used_memory_scripts_eval"]+after["used_memory_functions"] {
		t.Errorf("used_memory_scripts is not eval + functions: %v", after)
	}
	sc.FunctionFlush(ctx)
	if _, v := scriptInfo(t, sc); v["number_of_libraries"] != 0 || v["used_memory_functions"] != 0 {
		t.Errorf("after FUNCTION FLUSH: %v", v)
	}
}

// slowEntry is a SLOWLOG GET entry's command and client address, with the
// address of a real connection replaced by "client".
func slowEntries(t *testing.T, c *redis.Client) []string {
	t.Helper()
	logs, err := c.SlowLogGet(context.Background(), -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(logs) - 1; i >= 0; i-- { // oldest first
		l := logs[i]
		addr := l.ClientAddr
		if addr != "?:0" {
			addr = "client"
		}
		out = append(out, strings.Join(l.Args, " ")+" @"+addr+" name="+l.ClientName)
	}
	return out
}

// TestScriptCommandEffects: the commands a script calls count in
// commandstats as their own calls (and EVAL as one call of its own), both
// they and the EVAL are in the slow log (they under the script's client,
// "?:0", as Redis), and a long script is a latency "command" event: each
// checked against redis-server in the same run.
func TestScriptCommandEffects(t *testing.T) {
	ctx := context.Background()
	// a minute to read: the long script below is slow under -race
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t), ReadTimeout: time.Minute})
	defer rc.Close()
	ts := startServer(t)
	sc := redis.NewClient(&redis.Options{Addr: ts.Addr, ReadTimeout: time.Minute})
	defer sc.Close()
	const script = "redis.call('set', KEYS[1], 'b') redis.call('incr', 'undeclared') return redis.call('get', KEYS[1])"
	stats := map[string]string{}
	slow := map[string][]string{}
	latest := map[string]bool{}
	for name, c := range map[string]*redis.Client{"redis-server": rc, "svcdb": sc} {
		for _, cmd := range [][]any{
			{"config", "set", "slowlog-log-slower-than", "0"},
			{"config", "set", "latency-monitor-threshold", "1"},
			{"slowlog", "reset"}, {"config", "resetstat"},
		} {
			if err := c.Do(ctx, cmd...).Err(); err != nil {
				t.Fatalf("%s: %v: %v", name, cmd, err)
			}
		}
		if v, err := c.Eval(ctx, script, []string{"k"}).Text(); err != nil || v != "b" {
			t.Fatalf("%s: EVAL = %q, %v", name, v, err)
		}
		if err := c.FunctionLoad(ctx, "#!lua name=obs\nredis.register_function('g', function(keys) return redis.call('get', keys[1]) end)").Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.FCall(ctx, "g", []string{"k"}).Err(); err != nil {
			t.Fatalf("%s: FCALL: %v", name, err)
		}
		info := c.Info(ctx, "commandstats").Val()
		var calls []string
		for _, cmd := range []string{"eval", "fcall", "set", "get", "incr"} {
			m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(info)
			if m == nil {
				calls = append(calls, cmd+"=none")
			} else {
				calls = append(calls, cmd+"="+m[1])
			}
		}
		stats[name] = strings.Join(calls, " ")
		if err := c.Eval(ctx, "local i = 0 while i < 1000000 do i = i + 1 end return i", nil).Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range slowEntries(t, c) {
			if !strings.HasPrefix(e, "config") && !strings.HasPrefix(e, "function load") && !strings.HasPrefix(e, "info") {
				slow[name] = append(slow[name], e)
			}
		}
		lat, err := c.Do(ctx, "latency", "latest").Slice()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range lat {
			if row, ok := ev.([]any); ok && len(row) > 0 && row[0] == "command" {
				latest[name] = true
			}
		}
	}
	if stats["svcdb"] != stats["redis-server"] || stats["svcdb"] != "eval=1 fcall=1 set=1 get=2 incr=1" {
		t.Errorf("commandstats calls: svcdb %q, redis-server %q", stats["svcdb"], stats["redis-server"])
	}
	if strings.Join(slow["svcdb"], "\n") != strings.Join(slow["redis-server"], "\n") {
		t.Errorf("slow log:\nsvcdb:\n  %s\nredis-server:\n  %s", strings.Join(slow["svcdb"], "\n  "), strings.Join(slow["redis-server"], "\n  "))
	}
	if !latest["svcdb"] || !latest["redis-server"] {
		t.Errorf("LATENCY LATEST has a command event: %v", latest)
	}
}

// TestScriptHotShards: the keys a script touches, declared or not, count
// on the hot-shard counters of the shards that hold them: a script
// writing only {hot} keys makes that shard HOT and leaves the others idle.
func TestScriptHotShards(t *testing.T) {
	ts := startServer(t, withShards(4))
	hot := ts.RT.ShardOf([]byte("{hot}"))
	c := dialRaw(t, ts.Addr)
	sha := c.do("SCRIPT", "LOAD", "for i = 1, 50 do redis.call('set', '{hot}:' .. i, 'v') redis.call('get', '{hot}:' .. i) end return 1")
	if sha.Type != '$' {
		t.Fatalf("SCRIPT LOAD: %c %q", sha.Type, sha.Str)
	}
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		if v := c.do("EVALSHA", string(sha.Str), "0"); v.Type != ':' {
			t.Fatalf("EVALSHA: %c %q", v.Type, v.Str)
		}
	}
	m := fields(t, c.do("DEBUG", "HOTSHARDS", "PERIOD", "2"), false)
	if m["hot_count"].Int != 1 {
		t.Errorf("hot_count = %d, want 1", m["hot_count"].Int)
	}
	for i, sv := range m["shards"].Elems {
		h := fields(t, sv, false)
		reads, writes := num(t, h["reads_per_sec"], false), num(t, h["writes_per_sec"], false)
		if i == hot {
			if string(h["status"].Str) != "HOT" || reads < 100 || writes < 100 {
				t.Errorf("hot shard %d: status %s reads/s %v writes/s %v", i, h["status"].Str, reads, writes)
			}
		} else if reads != 0 || writes != 0 {
			t.Errorf("shard %d: reads/s %v writes/s %v, want none", i, reads, writes)
		}
	}
}

// TestScriptRunTotals: Stats().Scripts counts runs by kind, the runs that
// replied an error, and the runs SCRIPT KILL stopped (the svc_scripts_*
// metrics read them).
func TestScriptRunTotals(t *testing.T) {
	ts := startServer(t)
	runner := dialRaw(t, ts.Addr)
	for _, cmd := range [][]string{
		{"EVAL", "return 1", "0"},
		{"EVAL", "return redis.call('incr', KEYS[1])", "1", "n"},
		{"EVAL", "error('boom')", "0"},
		{"FUNCTION", "LOAD", "#!lua name=tot\nredis.register_function('t', function() return 1 end)"},
		{"FCALL", "t", "0"},
	} {
		runner.do(cmd...)
	}
	runner.write(multibulk("EVAL", `local t0 = tonumber(redis.call('time')[1])
while tonumber(redis.call('time')[1]) - t0 < 30 do end`, "0"))
	time.Sleep(50 * time.Millisecond)
	other := otherLoopConn(t, ts.Addr)
	eventually(t, 5*time.Second, func() bool { return string(other.do("SCRIPT", "KILL").Str) == "OK" }, "SCRIPT KILL never stopped the script")
	if v, err := runner.tryRead(5 * time.Second); err != nil || !strings.HasPrefix(string(v.Str), "ERR Script killed") {
		t.Fatalf("killed script's reply: %v, %v", v, err)
	}
	got := ts.Srv.Stats().Scripts
	want := scripting.Totals{EvalRuns: 4, EvalFailed: 2, FunctionRuns: 1, Killed: 1}
	if got != want {
		t.Errorf("Stats().Scripts = %+v, want %+v", got, want)
	}
	if list := ts.Srv.SlowScripts(10); len(list) != 5 || list[0].Calls != 1 || !strings.Contains(list[0].Source, "while") {
		t.Errorf("SlowScripts: the killed script is not the slowest: %+v", list)
	}
}
