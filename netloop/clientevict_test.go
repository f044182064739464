package netloop_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// clientField returns field f of client id's CLIENT LIST line, "" when the
// client is gone.
func clientField(t *testing.T, admin *rawConn, id, f string) string {
	t.Helper()
	line := string(admin.do("CLIENT", "LIST", "ID", id).Str)
	for _, kv := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(kv, f+"="); ok {
			return v
		}
	}
	return ""
}

// drainClosed reads what c still has to read until the server's close
// shows (EOF or reset), failing after 10 s of a connection still open.
func drainClosed(t *testing.T, c *rawConn) {
	t.Helper()
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1<<20)
	for {
		if _, err := c.rd.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("connection still open after 10 s")
			}
			return
		}
	}
}

func listed(t *testing.T, admin *rawConn, id string) bool {
	return clientField(t, admin, id, "id") == id
}

// Client eviction (maxmemory-clients) against redis-server, the same
// sequence on both, transcripts compared:
//  1. a client piling up unread replies (pipelined GETs of a 100 kB value)
//     is evicted, a small client stays, evicted_clients counts it;
//  2. a NO-EVICT client doing the same is not evicted, and as its memory
//     still counts, the only evictable client left (the small one) goes;
//     the NO-EVICT client then reads every reply;
//  3. a client whose query buffer grows past the limit (a large argument
//     still arriving) is evicted;
//  4. so is a client whose MULTI queue does (two 300 kB SETs queued).
//
// The admin connection is NO-EVICT so it can watch.
func TestClientEvictionMatchesRedis(t *testing.T) {
	needTool(t, "redis-server")
	const gets = 400
	run := func(addr string) string {
		var b strings.Builder
		admin := dialRaw(t, addr)
		admin.do("CLIENT", "NO-EVICT", "ON")
		admin.do("SET", "big", strings.Repeat("x", 100000))
		small := dialRaw(t, addr)
		smallID := clientID(t, small)
		fmt.Fprintf(&b, "CONFIG SET maxmemory-clients 512kb: %s\n", formatReply(admin.do("CONFIG", "SET", "maxmemory-clients", "512kb")))

		big := dialRaw(t, addr)
		bigID := clientID(t, big)
		big.write(strings.Repeat(multibulk("GET", "big"), gets))
		eventually(t, 10*time.Second, func() bool { return !listed(t, admin, bigID) }, "the client with unread replies is evicted")
		drainClosed(t, big)
		fmt.Fprintf(&b, "1. small client: PING %s, listed %v; evicted_clients %s\n",
			formatReply(small.do("PING")), listed(t, admin, smallID), rawInfoField(t, admin, "stats", "evicted_clients"))

		keep := dialRaw(t, addr)
		keepID := clientID(t, keep)
		fmt.Fprintf(&b, "CLIENT NO-EVICT ON: %s\n", formatReply(keep.do("CLIENT", "NO-EVICT", "ON")))
		keep.write(strings.Repeat(multibulk("GET", "big"), gets))
		eventually(t, 10*time.Second, func() bool {
			n, _ := strconv.Atoi(clientField(t, admin, keepID, "tot-mem"))
			return n > 512<<10
		}, "the NO-EVICT client's tot-mem passes the limit")
		eventually(t, 10*time.Second, func() bool { return !listed(t, admin, smallID) }, "the small client is evicted")
		fmt.Fprintf(&b, "2. NO-EVICT client listed %v, flags %s; small client listed %v; evicted_clients %s\n",
			listed(t, admin, keepID), clientField(t, admin, keepID, "flags"), listed(t, admin, smallID),
			rawInfoField(t, admin, "stats", "evicted_clients"))
		got := 0
		for range gets {
			if v := keep.read(); len(v.Str) == 100000 {
				got++
			}
		}
		fmt.Fprintf(&b, "   NO-EVICT client read %d full replies\n", got)
		// Redis records a client's memory after commands and in its cron,
		// not after its replies are written: the drained client's figure
		// stays high for up to 100 ms and would evict the next clients.
		// Closing it takes its figure out at once.
		keep.c.Close()
		eventually(t, 10*time.Second, func() bool { return !listed(t, admin, keepID) }, "the NO-EVICT client is gone")

		q := dialRaw(t, addr)
		qID := clientID(t, q)
		// The server may close it before it has sent everything.
		_, _ = q.c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$4000000\r\n" + strings.Repeat("v", 1<<20)))
		eventually(t, 10*time.Second, func() bool { return !listed(t, admin, qID) }, "the client with a large query buffer is evicted")
		fmt.Fprintf(&b, "3. large query buffer evicted; evicted_clients %s\n", rawInfoField(t, admin, "stats", "evicted_clients"))
		m := dialRaw(t, addr)
		mID := clientID(t, m)
		m.do("MULTI")
		_, _ = m.c.Write([]byte(strings.Repeat(multibulk("SET", "m", strings.Repeat("m", 300000)), 2)))
		eventually(t, 10*time.Second, func() bool { return !listed(t, admin, mID) }, "the client with a large MULTI queue is evicted")
		fmt.Fprintf(&b, "4. large MULTI queue evicted; evicted_clients %s\n", rawInfoField(t, admin, "stats", "evicted_clients"))
		fmt.Fprintf(&b, "CONFIG SET maxmemory-clients 0: %s\n", formatReply(admin.do("CONFIG", "SET", "maxmemory-clients", "0")))
		return b.String()
	}
	want := run(redistest.Start(t))
	t.Logf("redis-server:\n%s", want)
	if got := run(startServer(t).Addr); got != want {
		t.Errorf("svcdb:\n%s\nredis-server:\n%s", got, want)
	}
}

// maxmemory-clients as a percentage of maxmemory follows both parameters
// live: 1% of 50 MB evicts a client piling up unread replies; with
// maxmemory back at 0 the percentage means no limit, and CONFIG SET
// maxmemory-clients 0 turns it off.
func TestClientEvictionPercentOfMaxmemory(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	admin.do("CLIENT", "NO-EVICT", "ON")
	admin.do("SET", "big", strings.Repeat("x", 100000))
	t.Cleanup(func() { admin.do("CONFIG", "SET", "maxmemory", "0", "maxmemory-clients", "0") })
	if v := admin.do("CONFIG", "SET", "maxmemory", "50mb", "maxmemory-clients", "1%"); string(v.Str) != "OK" {
		t.Fatalf("CONFIG SET: %s", formatReply(v))
	}
	if v := admin.do("CONFIG", "GET", "maxmemory-clients"); formatReply(v) != `["maxmemory-clients", "1%"]` {
		t.Fatalf("CONFIG GET maxmemory-clients = %s", formatReply(v))
	}
	pile := func() (*rawConn, string) {
		c := dialRaw(t, ts.Addr)
		id := clientID(t, c)
		c.write(strings.Repeat(multibulk("GET", "big"), 400))
		return c, id
	}
	_, id := pile()
	eventually(t, 10*time.Second, func() bool { return !listed(t, admin, id) }, "evicted past 1% of maxmemory")

	admin.do("CONFIG", "SET", "maxmemory", "0") // 1% of no limit: off
	c, id := pile()
	eventually(t, 10*time.Second, func() bool {
		n, _ := strconv.Atoi(clientField(t, admin, id, "tot-mem"))
		return n > 512<<10
	}, "tot-mem passes 1% of 50 MB")
	time.Sleep(200 * time.Millisecond)
	if !listed(t, admin, id) {
		t.Fatal("evicted with maxmemory 0 and maxmemory-clients 1%")
	}
	for range 400 {
		c.read()
	}
	if got := rawInfoField(t, admin, "stats", "evicted_clients"); got != "1" {
		t.Fatalf("evicted_clients = %s, want 1", got)
	}
}
