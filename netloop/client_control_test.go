package netloop_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// clientID returns the connection's CLIENT ID.
func clientID(t *testing.T, c *rawConn) string {
	t.Helper()
	return strconv.FormatInt(c.do("CLIENT", "ID").Int, 10)
}

// postponed sends cmd on a new connection and reports whether its reply
// is held back for 150 ms (then reads the reply once the pause has ended).
func postponed(t *testing.T, addr string, cmd []string) (bool, func() string) {
	c := dialRaw(t, addr)
	c.write(multibulk(cmd...))
	v, err := c.tryRead(150 * time.Millisecond)
	if err == nil {
		return false, func() string { return formatReply(v) }
	}
	return true, func() string { return formatReply(c.read()) }
}

// Which commands CLIENT PAUSE WRITE postpones, compared with redis-server:
// writes and the may_replicate commands (EVAL, PUBLISH, PFCOUNT ...), not
// reads, PING or EVAL_RO.
func TestClientPauseWriteMatchesRedis(t *testing.T) {
	needTool(t, "redis-server")
	cmds := [][]string{
		{"SET", "a", "1"}, {"GET", "a"}, {"PING"}, {"PUBLISH", "ch", "m"}, {"SPUBLISH", "ch", "m"},
		{"EVAL", "return 1", "0"}, {"EVAL_RO", "return 1", "0"}, {"PFCOUNT", "h"}, {"EXPIRE", "a", "100"},
		{"SCRIPT", "LOAD", "return 1"}, {"FCALL", "nosuch", "0"}, {"FCALL_RO", "nosuch", "0"}, {"FLUSHALL"},
		{"MULTI"}, {"DBSIZE"},
	}
	run := func(addr string) string {
		admin := dialRaw(t, addr)
		var b strings.Builder
		for _, cmd := range cmds {
			admin.do("CLIENT", "PAUSE", "100000", "WRITE")
			held, reply := postponed(t, addr, cmd)
			admin.do("CLIENT", "UNPAUSE")
			fmt.Fprintf(&b, "%s: postponed=%v reply=%s\n", strings.Join(cmd, " "), held, reply())
		}
		return b.String()
	}
	want := run(redistest.Start(t))
	if got := run(startServer(t).Addr); got != want {
		t.Errorf("svcdb:\n%s\nredis-server:\n%s", got, want)
	}
}

// Many clients under a pause: readers go on, writers park (no reply) and
// all run once CLIENT UNPAUSE comes; a PAUSE ALL ends by itself at its
// timeout. Run with -race.
func TestClientPauseManyClients(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	if r := admin.do("CLIENT", "PAUSE", "100000", "WRITE"); string(r.Str) != "OK" {
		t.Fatalf("PAUSE: %v", r)
	}
	const n = 24
	writers := make([]*rawConn, n)
	for i := range writers {
		writers[i] = dialRaw(t, ts.Addr)
		writers[i].write(multibulk("INCR", "counter"))
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := dialRaw(t, ts.Addr)
			for range 20 {
				if v := r.do("GET", "counter"); v.Type != '_' && v.Type != '$' {
					t.Errorf("GET during pause: %v", v)
				}
			}
		}()
	}
	wg.Wait()
	for i, w := range writers {
		if v, err := w.tryRead(20 * time.Millisecond); err == nil {
			t.Fatalf("writer %d answered during the pause: %v", i, v)
		}
	}
	if v := admin.do("GET", "counter"); strings.HasPrefix(formatReply(v), `"`) {
		t.Fatalf("counter = %v during the pause", v)
	}
	admin.do("CLIENT", "UNPAUSE")
	for _, w := range writers {
		if v := w.read(); v.Type != ':' {
			t.Fatalf("INCR after UNPAUSE: %v", v)
		}
	}
	if v := admin.do("GET", "counter"); string(v.Str) != strconv.Itoa(n) {
		t.Fatalf("counter = %v, want %d", v, n)
	}

	// PAUSE ALL for 200 ms: even PING waits, and runs at the end without
	// an UNPAUSE.
	admin.do("CLIENT", "PAUSE", "200", "ALL")
	pingers := make([]*rawConn, n)
	for i := range pingers {
		pingers[i] = dialRaw(t, ts.Addr)
		pingers[i].write(multibulk("PING"))
	}
	if v, err := pingers[0].tryRead(50 * time.Millisecond); err == nil {
		t.Fatalf("PING answered during PAUSE ALL: %v", v)
	}
	for _, p := range pingers {
		if v := p.read(); string(v.Str) != "PONG" {
			t.Fatalf("PING after the pause: %v", v)
		}
	}
}

// CLIENT UNBLOCK with TIMEOUT and ERROR on every kind of blocking command,
// compared with redis-server.
func TestClientUnblockMatchesRedis(t *testing.T) {
	needTool(t, "redis-server")
	run := func(addr string) string {
		admin := dialRaw(t, addr)
		admin.do("FLUSHALL")
		admin.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		var b strings.Builder
		for _, cmd := range [][]string{
			{"BLPOP", "l", "0"}, {"BRPOPLPUSH", "l", "d", "0"}, {"BLMOVE", "l", "d", "LEFT", "RIGHT", "0"},
			{"BZPOPMIN", "z", "0"}, {"BZMPOP", "0", "1", "z", "MIN"}, {"BLMPOP", "0", "1", "l", "LEFT"},
			{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"},
			{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"},
		} {
			for _, how := range []string{"TIMEOUT", "ERROR", ""} {
				c := dialRaw(t, addr)
				id := clientID(t, c)
				c.write(multibulk(cmd...))
				waitBlocked(t, admin, 1)
				args := []string{"CLIENT", "UNBLOCK", id}
				if how != "" {
					args = append(args, how)
				}
				n := formatReply(admin.do(args...))
				fmt.Fprintf(&b, "%s %s: %s %s; again %s\n", cmd[0], how, n, formatReply(c.read()), formatReply(admin.do("CLIENT", "UNBLOCK", id)))
				waitBlocked(t, admin, 0)
			}
		}
		// A client that is not blocked.
		fmt.Fprintf(&b, "self: %s\n", formatReply(admin.do("CLIENT", "UNBLOCK", clientID(t, admin))))
		return b.String()
	}
	want := run(redistest.Start(t))
	if got := run(startServer(t).Addr); got != want {
		t.Errorf("svcdb:\n%s\nredis-server:\n%s", got, want)
	}
}

// Many blocked clients unblocked at once from several goroutines while
// data arrives for some of them: each gets exactly one reply. Run with -race.
func TestClientUnblockManyClients(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	const n = 32
	clients := make([]*rawConn, n)
	ids := make([]string, n)
	for i := range clients {
		clients[i] = dialRaw(t, ts.Addr)
		ids[i] = clientID(t, clients[i])
		clients[i].write(multibulk("BLPOP", "q"+strconv.Itoa(i%4), "0"))
	}
	waitBlocked(t, admin, n)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := dialRaw(t, ts.Addr)
			for i := g; i < n; i += 4 {
				a.do("CLIENT", "UNBLOCK", ids[i], "ERROR")
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a := dialRaw(t, ts.Addr)
		for i := range 4 {
			a.do("RPUSH", "q"+strconv.Itoa(i), "x")
		}
	}()
	wg.Wait()
	for i, c := range clients {
		got := formatReply(c.read())
		if got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK" && !strings.HasPrefix(got, `["q`) {
			t.Errorf("client %d: %s", i, got)
		}
		if v, err := c.tryRead(10 * time.Millisecond); err == nil {
			t.Errorf("client %d: second reply %v", i, v)
		}
	}
	waitBlocked(t, admin, 0)
}

// CLIENT REPLY OFF, ON and SKIP, with inline, queued and blocking
// commands, compared with redis-server byte for byte.
func TestClientReplyMatchesRedis(t *testing.T) {
	needTool(t, "redis-server")
	run := func(addr string) string {
		c := dialRaw(t, addr)
		c.do("FLUSHALL")
		var in strings.Builder
		for _, cmd := range [][]string{
			{"CLIENT", "REPLY", "OFF"}, {"SET", "a", "1"}, {"GET", "a"}, {"NOSUCH"}, {"CLIENT", "REPLY", "SKIP"},
			{"BLPOP", "nolist", "0.01"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"},
			{"CLIENT", "REPLY", "SKIP"}, {"INCR", "a"}, {"GET", "a"},
			{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"PING", "x"}, {"PING", "y"},
			{"CLIENT", "REPLY", "SKIP"}, {"BLPOP", "nolist", "0.01"}, {"ECHO", "after-blpop"},
			{"CLIENT", "REPLY", "OFF"}, {"MSET", "m1", "1", "m2", "2"}, {"CLIENT", "REPLY", "ON"}, {"MGET", "m1", "m2"},
			{"ECHO", "end"},
		} {
			in.WriteString(multibulk(cmd...))
		}
		c.write(in.String())
		var b strings.Builder
		for {
			got := formatReply(c.read())
			b.WriteString(got + "\n")
			if got == `"end"` {
				break
			}
		}
		return b.String()
	}
	want := run(redistest.Start(t))
	for _, shards := range []int{1, 4} {
		if got := run(startServer(t, withShards(shards)).Addr); got != want {
			t.Errorf("shards=%d svcdb:\n%s\nredis-server:\n%s", shards, got, want)
		}
	}
}

// CLIENT LIST flags for a monitor (O), a blocked client (b), a paused one
// (b) and NO-EVICT (e), as Redis shows them.
func TestClientListFlags(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	flagsOf := func(id string) string {
		list := string(admin.do("CLIENT", "LIST", "ID", id).Str)
		i := strings.Index(list, " flags=")
		return strings.Fields(list[i+7:])[0]
	}
	mon := dialRaw(t, ts.Addr)
	monID := clientID(t, mon)
	mon.do("MONITOR")
	if f := flagsOf(monID); f != "O" {
		t.Errorf("monitor flags = %q, want O", f)
	}
	b := dialRaw(t, ts.Addr)
	bID := clientID(t, b)
	b.do("CLIENT", "NO-EVICT", "on")
	b.write(multibulk("BLPOP", "nolist", "0"))
	waitBlocked(t, admin, 1)
	if f := flagsOf(bID); f != "be" {
		t.Errorf("blocked no-evict flags = %q, want be", f)
	}
	admin.do("CLIENT", "UNBLOCK", bID)
	b.read()
	admin.do("CLIENT", "PAUSE", "100000", "WRITE")
	b.write(multibulk("SET", "k", "v"))
	eventually(t, 5*time.Second, func() bool { return flagsOf(bID) == "be" }, "paused client flags b")
	admin.do("CLIENT", "UNPAUSE")
	b.read()
	if f := flagsOf(bID); f != "e" {
		t.Errorf("flags after = %q, want e", f)
	}
}
