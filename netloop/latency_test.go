package netloop_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestLatencyMatchesRedis compares LATENCY's help, errors and replies with
// no events with a real redis-server byte for byte, in RESP2 and RESP3.
func TestLatencyMatchesRedis(t *testing.T) {
	ts := startServer(t)
	raddr := redistest.Start(t)
	for _, proto := range []string{"2", "3"} {
		ours, theirs := dialExchanger(t, ts.Addr), dialExchanger(t, raddr)
		ours.do("HELLO", proto)
		theirs.do("HELLO", proto)
		compare := func(cmd ...string) {
			t.Helper()
			if got, want := ours.do(cmd...), theirs.do(cmd...); string(got) != string(want) {
				t.Errorf("RESP%s %q:\n got %q\nwant %q", proto, cmd, got, want)
			}
		}
		for _, cmd := range [][]string{
			{"CONFIG", "SET", "latency-monitor-threshold", "0"},
			{"LATENCY", "RESET"},
			// Monitoring off and never on: "I'm sorry, Dave".
			{"LATENCY", "DOCTOR"},
			{"LATENCY", "HELP"},
			{"latency", "help"},
			{"LATENCY", "HELP", "x"},
			{"LATENCY"},
			{"LATENCY", "foo"},
			{"LATENCY", "HISTORY"},
			{"LATENCY", "HISTORY", "a", "b"},
			{"LATENCY", "HISTORY", "command"},
			{"LATENCY", "GRAPH"},
			{"LATENCY", "GRAPH", "command"},
			{"LATENCY", "GRAPH", "no\x00such"},
			{"LATENCY", "GRAPH", "a\r\nb"},
			{"LATENCY", "LATEST"},
			{"LATENCY", "LATEST", "x"},
			{"LATENCY", "DOCTOR", "x"},
			{"LATENCY", "RESET"},
			{"LATENCY", "RESET", "command", "fast-command"},
		} {
			compare(cmd...)
		}
		// Monitoring on, no spike yet. The text would differ only if one of
		// the processes has transparent huge pages (an extra advice).
		compare("CONFIG", "SET", "latency-monitor-threshold", "10000")
		got, want := ours.do("LATENCY", "DOCTOR"), theirs.do("LATENCY", "DOCTOR")
		if string(got) != string(want) && !strings.Contains(string(got)+string(want), "anonymous huge pages") {
			t.Errorf("RESP%s LATENCY DOCTOR with monitoring on:\n got %q\nwant %q", proto, got, want)
		}
		compare("CONFIG", "SET", "latency-monitor-threshold", "0")
	}
}

// TestLatencyReplies records events into the server's monitor directly (the
// data path's recording is the lead's end-to-end test) and checks LATEST,
// HISTORY, GRAPH, DOCTOR and RESET over TCP, and that CONFIG SET
// latency-monitor-threshold reaches the monitor.
func TestLatencyReplies(t *testing.T) {
	ts := startServer(t)
	mon := ts.Srv.Latency()
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2})
	t.Cleanup(func() { rdb.Close() })
	ctx := testCtx(t, 30*time.Second)

	if mon.Enabled() {
		t.Fatal("the monitor is on by default; latency-monitor-threshold defaults to 0")
	}
	mon.AddIfNeeded("expire-cycle", time.Second)
	if mon.Len() != 0 {
		t.Fatal("recorded while off")
	}
	// 200 ms: high enough that the data path's own recording (commands of
	// this test) never adds to the events below.
	if err := rdb.ConfigSet(ctx, "latency-monitor-threshold", "200").Err(); err != nil {
		t.Fatal(err)
	}
	if mon.Threshold() != 200*time.Millisecond {
		t.Fatalf("threshold = %v after CONFIG SET 200", mon.Threshold())
	}
	before := time.Now().Unix()
	mon.AddIfNeeded("expire-cycle", 250*time.Millisecond)
	mon.AddIfNeeded("expire-cycle", 300*time.Millisecond) // same second: the larger stays
	mon.AddIfNeeded("eviction-cycle", 210*time.Millisecond)
	mon.AddIfNeeded("eviction-cycle", 199*time.Millisecond) // below: ignored
	after := time.Now().Unix()

	c := dialRaw(t, ts.Addr)
	v := c.do("LATENCY", "LATEST")
	if len(v.Elems) != 2 {
		t.Fatalf("LATEST: %s", valueString(v))
	}
	for i, want := range []struct {
		event       string
		latest, max int64
	}{{"eviction-cycle", 210, 210}, {"expire-cycle", 300, 300}} {
		e := v.Elems[i]
		if len(e.Elems) != 4 || string(e.Elems[0].Str) != want.event || e.Elems[1].Int < before || e.Elems[1].Int > after ||
			e.Elems[2].Int != want.latest || e.Elems[3].Int != want.max {
			t.Errorf("LATEST[%d] = %s, want [%s <now> %d %d]", i, valueString(e), want.event, want.latest, want.max)
		}
	}

	hist, err := rdb.Do(ctx, "latency", "history", "expire-cycle").Slice()
	if err != nil || len(hist) == 0 {
		t.Fatalf("HISTORY: %v %v", hist, err)
	}
	last := hist[len(hist)-1].([]any)
	if last[1].(int64) != 300 || last[0].(int64) < before {
		t.Errorf("HISTORY expire-cycle = %v", hist)
	}
	if v := c.do("LATENCY", "HISTORY", "Expire-Cycle"); len(v.Elems) != 0 {
		t.Errorf("HISTORY matches names exactly in Redis: %s", valueString(v))
	}

	g, err := rdb.Do(ctx, "latency", "graph", "expire-cycle").Text()
	if err != nil || !strings.HasPrefix(g, "expire-cycle - high 300 ms, low ") || !strings.Contains(g, "(all time high 300 ms)\n"+strings.Repeat("-", 80)+"\n") {
		t.Errorf("GRAPH: %q %v", g, err)
	}
	// RESP3: verbatim text, as Redis.
	c3 := dialRaw(t, ts.Addr)
	c3.do("HELLO", "3")
	if v := c3.do("LATENCY", "GRAPH", "expire-cycle"); v.Type != '=' || !strings.HasPrefix(string(v.Str), "txt:expire-cycle - high") {
		t.Errorf("RESP3 GRAPH: %c %q", v.Type, v.Str)
	}
	doc := c3.do("LATENCY", "DOCTOR")
	if doc.Type != '=' || !strings.Contains(string(doc.Str), "1. eviction-cycle: 1 latency spikes (average 210ms, mean deviation 0ms, period 1.00 sec). Worst all time event 210ms.") ||
		!strings.Contains(string(doc.Str), "\n2. expire-cycle: ") || !strings.Contains(string(doc.Str), "'CONFIG SET hz 100'") {
		t.Errorf("RESP3 DOCTOR: %c %q", doc.Type, doc.Str)
	}
	// hz 100: no hz advice, as Redis (advise_hz && server.hz < 100).
	if err := rdb.ConfigSet(ctx, "hz", "100").Err(); err != nil {
		t.Fatal(err)
	}
	if d, _ := rdb.Do(ctx, "latency", "doctor").Text(); strings.Contains(d, "CONFIG SET hz") {
		t.Errorf("DOCTOR with hz 100 still advises it:\n%s", d)
	}

	// RESET: by name (case-insensitive, as Redis), then everything.
	if n, err := rdb.Do(ctx, "latency", "reset", "EXPIRE-CYCLE", "expire-cycle", "nope").Int(); err != nil || n != 1 {
		t.Errorf("RESET EXPIRE-CYCLE expire-cycle nope = %d %v, want 1", n, err)
	}
	mon.AddIfNeeded("command", time.Second)
	if n, err := rdb.Do(ctx, "latency", "reset").Int(); err != nil || n != 2 {
		t.Errorf("RESET = %d %v, want 2", n, err)
	}
	if v := c.do("LATENCY", "LATEST"); len(v.Elems) != 0 {
		t.Errorf("LATEST after RESET: %s", valueString(v))
	}
	if v := c.do("LATENCY", "GRAPH", "expire-cycle"); v.Type != '-' || string(v.Str) != "ERR No samples available for event 'expire-cycle'" {
		t.Errorf("GRAPH after RESET: %s", valueString(v))
	}

	// Monitoring on and nothing recorded.
	want := "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
	if d, _ := rdb.Do(ctx, "latency", "doctor").Text(); d != want && !strings.Contains(d, "anonymous huge pages") {
		t.Errorf("DOCTOR with no events = %q", d)
	}

	// Off again.
	if err := rdb.ConfigSet(ctx, "latency-monitor-threshold", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// Events kept from before stay, as in Redis (a loaded machine can make
	// one of the data path's own past 200 ms since the RESET): none is added.
	kept := mon.Len()
	mon.AddIfNeeded("while-off", time.Hour) // a name the data path never records
	if mon.Enabled() || mon.Len() != kept {
		t.Errorf("CONFIG SET latency-monitor-threshold 0: enabled %v, %d events (%d before)", mon.Enabled(), mon.Len(), kept)
	}
}

// TestLatencyRecordsSlowCommand is the end-to-end check: KEYS over 100k
// keys takes tens of milliseconds, so with latency-monitor-threshold 1 it
// becomes a "command" latency event (KEYS is not a fast command) and, with
// slowlog-log-slower-than 1000, a slowlog entry.
func TestLatencyRecordsSlowCommand(t *testing.T) {
	ts := startServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2})
	t.Cleanup(func() { rdb.Close() })
	ctx := testCtx(t, 60*time.Second)
	const keys = 100000
	for b := 0; b < keys/1000; b++ {
		kv := make([]any, 0, 2000)
		for i := range 1000 {
			kv = append(kv, "lat:"+strconv.Itoa(b*1000+i), "v")
		}
		if err := rdb.MSet(ctx, kv...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range [][2]string{{"latency-monitor-threshold", "1"}, {"slowlog-log-slower-than", "1000"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.SlowLogReset(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if n, err := rdb.Keys(ctx, "lat:*").Result(); err != nil || len(n) != keys {
		t.Fatalf("KEYS: %d keys, %v", len(n), err)
	}
	took := time.Since(start)
	if took < 2*time.Millisecond {
		t.Skipf("KEYS over %d keys took only %v: too fast to be a latency event here", keys, took)
	}

	latest, err := rdb.Do(ctx, "latency", "latest").Slice()
	if err != nil {
		t.Fatal(err)
	}
	var found []any
	for _, e := range latest {
		if ev := e.([]any); ev[0] == "command" {
			found = ev
		}
	}
	if found == nil || found[2].(int64) < 1 || found[3].(int64) < found[2].(int64) || found[2].(int64) > took.Milliseconds() {
		t.Fatalf("LATENCY LATEST after a %v KEYS = %v, want a \"command\" event of 1..%d ms", took, latest, took.Milliseconds())
	}
	if h, _ := rdb.Do(ctx, "latency", "history", "command").Slice(); len(h) == 0 {
		t.Error("LATENCY HISTORY command is empty")
	}
	if d, _ := rdb.Do(ctx, "latency", "doctor").Text(); !strings.Contains(d, "1. command: ") {
		t.Errorf("LATENCY DOCTOR does not report the command event:\n%s", d)
	}
	entries, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var keysEntry *redis.SlowLog
	for i := range entries {
		if len(entries[i].Args) == 2 && entries[i].Args[0] == "keys" && entries[i].Args[1] == "lat:*" {
			keysEntry = &entries[i]
		}
	}
	if keysEntry == nil || keysEntry.Duration < time.Millisecond || keysEntry.Duration > took {
		t.Errorf("SLOWLOG after a %v KEYS: %+v", took, entries)
	}
}

// TestOpsRedisCli runs SLOWLOG and LATENCY through redis-cli against svcdb
// and against a real redis-server and compares what redis-cli prints, in
// RESP2 and RESP3 (-3).
func TestOpsRedisCli(t *testing.T) {
	needTool(t, "redis-cli")
	ts := startServer(t)
	raddr := redistest.Start(t)
	_, rport, _ := net.SplitHostPort(raddr)
	script := strings.Join([]string{
		"CONFIG SET slowlog-log-slower-than -1",
		"CONFIG SET latency-monitor-threshold 0",
		"SLOWLOG RESET",
		"LATENCY RESET",
		"SLOWLOG HELP",
		"SLOWLOG GET -2",
		"SLOWLOG GET 1 2",
		"SLOWLOG LEN",
		"SLOWLOG GET",
		"SLOWLOG NOPE",
		"LATENCY HELP",
		"LATENCY DOCTOR",
		"LATENCY LATEST",
		"LATENCY HISTORY command",
		"LATENCY GRAPH command",
		"LATENCY RESET a b",
		"LATENCY NOPE",
	}, "\n") + "\n"
	for _, proto := range [][]string{nil, {"-3"}} {
		ours, err := runTool(t, script, "redis-cli", append([]string{"-p", strconv.Itoa(ts.Port)}, proto...)...)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := runTool(t, script, "redis-cli", append([]string{"-p", rport}, proto...)...)
		if err != nil {
			t.Fatal(err)
		}
		if ours != theirs {
			t.Errorf("redis-cli %v output differs:\n--- svcdb\n%s\n--- redis-server\n%s", proto, ours, theirs)
		}
	}
}
