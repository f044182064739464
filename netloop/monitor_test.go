package netloop_test

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// monitorScript is run, one command at a time, by a client while another
// monitors; svcdb's MONITOR output must equal redis-server's with the
// timestamps and the client's port masked.
var monitorScript = [][]string{
	{"FLUSHALL"},
	{"SET", "a", "hello world"},
	{"SET", "b", "x\x01\n\"\\y\x00\xff\t\a\b\r\x7f"},
	{"SELECT", "3"},
	{"INCR", "c"},
	{"SELECT", "0"},
	{"SET", "12345", "67890"},
	{"LPUSH", "a", "1"},                     // WRONGTYPE: shown, it ran
	{"GET", "a", "b"},                       // wrong arity: refused, not shown
	{"NOSUCHCOMMAND", "x"},                  // unknown: not shown
	{"CONFIG", "GET", "maxmemory"},          // admin: not shown
	{"CLIENT", "NO-EVICT", "off"},           // admin subcommand: not shown
	{"CLIENT", "GETNAME"},                   // shown
	{"AUTH", "secret"},                      // redacted (and an error)
	{"AUTH", "user", "secret"},              // both redacted
	{"AUTH", "a", "b", "c"},                 // syntax error before redaction: shown as is
	{"HELLO", "2", "AUTH", "default", "pw"}, // redacted
	{"HELLO", "2", "SETNAME", "n1", "AUTH", "default", "pw"},
	{"EVAL", "redis.call('set','k','v'); return redis.call('get','k')", "0"},
	{"EVAL", "redis.call('select',4); return redis.call('incr','x')", "0"},
	{"EVALSHA", "0000000000000000000000000000000000000000", "0"},
	{"FUNCTION", "LOAD", "REPLACE", "#!lua name=mlib\nredis.register_function('mf', function(k, a) redis.call('select', 5); return redis.call('set', k[1], a[1]) end)"},
	{"FCALL", "mf", "1", "key", "val"},
	{"FCALL", "nosuch", "0"},
	{"MULTI"},
	{"SET", "x", "1"},
	{"INCR", "x"},
	{"EVAL", "return redis.call('ping')", "0"},
	{"EXEC"},
	{"MULTI"},
	{"GET", "x", "y"},
	{"EXEC"}, // EXECABORT: shown
	{"MULTI"},
	{"MONITOR"},
	{"EXEC"},
	{"WATCH", "k"},
	{"DISCARD"},
	{"BLPOP", "nolist", "0.01"},
	{"MSET", "m1", "1", "m2", "2", "m3", "3"},
	{"PUBLISH", "ch", "msg"},
	{"ECHO", "end"},
}

func TestMonitorMatchesRedis(t *testing.T) {
	needTool(t, "redis-server")
	want := monitorOutput(t, redistest.Start(t))
	got := monitorOutput(t, startServer(t).Addr)
	if got != want {
		t.Errorf("MONITOR output differs\n--- svcdb\n%s\n--- redis-server\n%s", got, want)
	}
}

var monitorStamp = regexp.MustCompile(`^\+\d{10}\.\d{6} \[`)

// monitorOutput runs monitorScript against addr and returns what a monitor
// saw, with each timestamp checked and masked and the client's address
// replaced by ADDR; then the monitor's own PING, reply and line.
func monitorOutput(t *testing.T, addr string) string {
	t.Helper()
	mon := dialRaw(t, addr)
	if r := mon.do("MONITOR"); string(r.Str) != "OK" {
		t.Fatalf("MONITOR: %v", r)
	}
	c := dialRaw(t, addr)
	var b strings.Builder
	for _, cmd := range monitorScript {
		b.WriteString(strings.Join(cmd, " ") + " -> " + c.read2(cmd) + "\n")
	}
	out := regexp.MustCompile(`"id", :\d+`).ReplaceAllString(b.String(), `"id", :ID`) // HELLO's client id
	caddr := c.c.LocalAddr().String()
	var lines []string
	for {
		v := mon.read()
		line := string(v.Str)
		if v.Type != '+' || !monitorStamp.MatchString("+"+line) {
			t.Fatalf("monitor line %q has no timestamp", line)
		}
		_, rest, _ := strings.Cut(line, "[")
		line = "[" + rest
		line = strings.ReplaceAll(line, caddr, "ADDR")
		lines = append(lines, line)
		if strings.HasSuffix(line, `"ECHO" "end"`) {
			break
		}
	}
	// The monitor's own command: its reply first, then its line.
	mon.write(multibulk("PING"))
	own := string(mon.read().Str) + " / "
	own += string(mon.read().Str)
	reply, line, _ := strings.Cut(own, " / ")
	_, line, _ = strings.Cut(line, "[")
	own = reply + " / [" + line
	own = strings.ReplaceAll(own, mon.c.LocalAddr().String(), "MONADDR")
	return out + strings.Join(lines, "\n") + "\n" + own
}

// read2 sends cmd and reads its reply.
func (r *rawConn) read2(cmd []string) string {
	r.t.Helper()
	r.write(multibulk(cmd...))
	return formatReply(r.read())
}

// A slow monitor never holds writers up: many writers on every loop run
// while a monitor reads nothing, and each sees its replies at once; then
// the monitor gets every line, in each writer's order.
func TestMonitorSlowReaderDoesNotBlockWriters(t *testing.T) {
	ts := startServer(t)
	mon := dialRaw(t, ts.Addr)
	if r := mon.do("MONITOR"); string(r.Str) != "OK" {
		t.Fatalf("MONITOR: %v", r)
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialRaw(t, ts.Addr)
			for i := range each {
				if r := c.do("SET", "k"+string(rune('a'+w)), strings.Repeat("v", 100)+string(rune('0'+i%10))); string(r.Str) != "OK" {
					t.Errorf("SET: %v", r)
					return
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	for n < writers*each {
		v, err := mon.tryRead(10 * time.Second)
		if err != nil {
			t.Fatalf("after %d lines: %v", n, err)
		}
		if strings.Contains(string(v.Str), `"SET" "k`) {
			n++
		}
	}
}
