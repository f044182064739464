package netloop_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/shard"
)

// notifyStep is one step of the keyspace notification scenario: commands
// run by the writer (a "sleep N" entry waits N ms), after which the
// subscriber's messages up to a marker are collected. sorted: the step's
// messages come in no set order (eviction picks keys at random).
type notifyStep struct {
	name   string
	cmds   [][]string
	sorted bool
	// blockedPop: before the commands, another client starts BLPOP on this
	// key, which the commands serve (its events come from serving it).
	blockedPop string
}

var notifyScenario = []notifyStep{
	{name: "new and set", cmds: [][]string{{"CONFIG", "SET", "notify-keyspace-events", "AKEn"}, {"SET", "a", "1"}, {"SET", "a", "2"}}},
	{name: "other database", cmds: [][]string{{"SELECT", "1"}, {"SET", "b", "1"}, {"DEL", "b"}, {"SELECT", "0"}}},
	{name: "EXEC", cmds: [][]string{{"MULTI"}, {"SET", "a", "3"}, {"INCR", "a"}, {"LPUSH", "l", "x"}, {"RPOP", "l"}, {"EXEC"}}},
	{name: "blocking pop served", blockedPop: "bl", cmds: [][]string{{"RPUSH", "bl", "v1", "v2"}}},
	{name: "lazy expiry", cmds: [][]string{{"SET", "e", "v", "PX", "20"}, {"sleep", "60"}, {"GET", "e"}, {"sleep", "200"}}},
	{name: "active expiry", cmds: [][]string{{"SET", "e2", "v", "PX", "20"}, {"sleep", "400"}}},
	{name: "eviction", sorted: true, cmds: [][]string{
		{"SET", "k1", "v"}, {"HSET", "k2", "f", "v"},
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}, {"CONFIG", "SET", "maxmemory", "1"},
		{"sleep", "500"}, {"CONFIG", "SET", "maxmemory", "0"},
	}},
	{name: "keymiss", cmds: [][]string{{"CONFIG", "SET", "notify-keyspace-events", "Em"}, {"GET", "nosuch"}, {"HGET", "nosuch", "f"}, {"SET", "x", "1"}}},
	{name: "off", cmds: [][]string{{"CONFIG", "SET", "notify-keyspace-events", ""}, {"SET", "a", "1"}, {"DEL", "a"}}},
}

// runNotifyScenario runs the scenario against addr and returns, per step,
// the messages a RESP2 subscriber on another connection received, formatted.
func runNotifyScenario(t *testing.T, addr string) [][]string {
	t.Helper()
	w := dialRaw(t, addr)
	sub := dialRaw(t, addr)
	w.do("FLUSHALL")
	sub.do("PSUBSCRIBE", "__key*__:*")
	sub.do("SUBSCRIBE", "marker")
	var out [][]string
	for i, st := range notifyScenario {
		var blocked *rawConn
		if st.blockedPop != "" {
			blocked = dialRaw(t, addr)
			blocked.write(multibulk("BLPOP", st.blockedPop, "0"))
			time.Sleep(100 * time.Millisecond) // parked before the push
		}
		for _, cmd := range st.cmds {
			if cmd[0] == "sleep" {
				ms, _ := strconv.Atoi(cmd[1])
				time.Sleep(time.Duration(ms) * time.Millisecond)
				continue
			}
			if v := w.do(cmd...); v.Type == '-' {
				t.Fatalf("%s: step %q: %q: %s", addr, st.name, cmd, v.Str)
			}
		}
		if blocked != nil {
			if got := formatReply(blocked.read()); got != `["bl", "v1"]` {
				t.Errorf("%s: BLPOP replied %s", addr, got)
			}
		}
		marker := strconv.Itoa(i)
		w.do("PUBLISH", "marker", marker)
		var msgs []string
		for {
			v := sub.read()
			if len(v.Elems) == 3 && string(v.Elems[1].Str) == "marker" {
				if string(v.Elems[2].Str) != marker {
					t.Fatalf("%s: marker %s, want %s", addr, v.Elems[2].Str, marker)
				}
				break
			}
			msgs = append(msgs, formatReply(v))
		}
		if st.sorted {
			slices.Sort(msgs)
		}
		out = append(out, msgs)
	}
	return out
}

// TestKeyspaceNotificationsAsRedis runs the scenario against redis-server
// and svcdb (both strategies) and compares every message a subscriber on
// another connection received: new, other databases, EXEC, a served
// blocked pop, lazy and active expiry, eviction, keymiss, and nothing
// once notifications are off.
func TestKeyspaceNotificationsAsRedis(t *testing.T) {
	want := runNotifyScenario(t, redistest.Start(t))
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			got := runNotifyScenario(t, startServer(t, withStrategy(st)).Addr)
			for i, step := range notifyScenario {
				if !slices.Equal(got[i], want[i]) {
					t.Errorf("step %q:\n  svcdb: %q\n  redis: %q", step.name, got[i], want[i])
				}
			}
		})
	}
}
