package netloop_test

import (
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/redistest"
)

// A script's reads and client tracking, as Redis 7.0.15 remembers them
// (server.c call() with server.script_caller): for every read-only command
// a script calls, the keys the script declared (EVAL's or FCALL's KEYS)
// are remembered for the calling client, in its mode (OPTIN with CLIENT
// CACHING yes ...); the keys the command itself read are not, and a
// script that calls no read-only command, or declares no keys, remembers
// nothing; EVAL_RO and FCALL_RO themselves remember nothing. The same
// steps run against svcdb (four shards, so keys spread) and a real
// redis-server, and the transcripts must be identical.
func TestTrackingScriptReads(t *testing.T) {
	var want string
	for _, target := range []string{"svcdb", "redis-server"} {
		t.Run(target, func(t *testing.T) {
			var addr string
			if target == "svcdb" {
				addr = startServer(t, withShards(4)).Addr
			} else {
				addr = redistest.Start(t)
			}
			got := scriptTrackingTranscript(t, addr)
			if want == "" {
				want = got
			} else if got != want {
				t.Fatalf("transcript differs from svcdb's\nredis-server:\n%s\nsvcdb:\n%s", got, want)
			}
			// What the transcript must say, whoever produced it.
			for _, line := range []string{
				`EVAL get KEYS[1] (k1) | SET k1 → push["invalidate", ["k1"]]`,
				`EVAL get "u" (declared d) | SET u → none`,
				`EVAL get "u" (declared d) | SET d → push["invalidate", ["d"]]`,
				`EVAL get "z", no keys | SET z → none`,
				`EVAL set only (wk) | SET wk → none`,
				`EVAL_RO return 1 (ro) | SET ro → none`,
				`FCALL_RO rd (fk) | SET fk → push["invalidate", ["fk"]]`,
				`OPTIN: EVAL get KEYS[1] (oi) | SET oi → none`,
				`OPTIN: CACHING yes, EVAL get KEYS[1] (oy) | SET oy → push["invalidate", ["oy"]]`,
			} {
				if !strings.Contains(got, line+"\n") {
					t.Errorf("transcript lacks %q:\n%s", line, got)
				}
			}
		})
	}
}

// scriptTrackingTranscript runs the steps against addr: each line is a
// tracking client's script, another client's SET, and the pushes the
// tracking client then has waiting (read up to a PING's reply).
func scriptTrackingTranscript(t *testing.T, addr string) string {
	w := dialRaw(t, addr)
	w.do("MSET", "k1", "a", "u", "b", "d", "c", "z", "d", "fk", "e", "oi", "f", "oy", "g")
	lib := "#!lua name=trklib\nredis.register_function{function_name='rd', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}}"
	if got := formatReply(w.do("FUNCTION", "LOAD", "REPLACE", lib)); got != `"trklib"` {
		t.Fatalf("FUNCTION LOAD: %s", got)
	}
	var b strings.Builder
	pushes := func(c *rawConn) string {
		var p []string
		c.write(multibulk("PING"))
		for {
			v := c.read()
			if v.Type != '>' {
				if got := formatReply(v); got != "+PONG" {
					t.Fatalf("want pushes then PONG, got %s", got)
				}
				break
			}
			p = append(p, formatReply(v))
		}
		if len(p) == 0 {
			return "none"
		}
		return strings.Join(p, " ")
	}
	step := func(c *rawConn, name, key string, script ...string) {
		if len(script) > 0 {
			if v := c.do(script...); v.Type == '-' {
				t.Fatalf("%s: %s", name, formatReply(v))
			}
		}
		w.do("SET", key, "changed")
		b.WriteString(name + " | SET " + key + " → " + pushes(c) + "\n")
	}
	c := trackingConn(t, addr)
	step(c, "EVAL get KEYS[1] (k1)", "k1", "EVAL", "return redis.call('get', KEYS[1])", "1", "k1")
	step(c, `EVAL get "u" (declared d)`, "u", "EVAL", "return redis.call('get', 'u')", "1", "d")
	step(c, `EVAL get "u" (declared d)`, "d")
	step(c, `EVAL get "z", no keys`, "z", "EVAL", "return redis.call('get', 'z')", "0")
	step(c, "EVAL set only (wk)", "wk", "EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "wk")
	step(c, "EVAL_RO return 1 (ro)", "ro", "EVAL_RO", "return 1", "1", "ro")
	step(c, "FCALL_RO rd (fk)", "fk", "FCALL_RO", "rd", "1", "fk")
	in := trackingConn(t, addr, "OPTIN")
	step(in, "OPTIN: EVAL get KEYS[1] (oi)", "oi", "EVAL", "return redis.call('get', KEYS[1])", "1", "oi")
	if got := formatReply(in.do("CLIENT", "CACHING", "yes")); got != "+OK" {
		t.Fatalf("CLIENT CACHING yes: %s", got)
	}
	step(in, "OPTIN: CACHING yes, EVAL get KEYS[1] (oy)", "oy", "EVAL", "return redis.call('get', KEYS[1])", "1", "oy")
	return b.String()
}
