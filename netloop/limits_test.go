package netloop_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/netloop"
)

// exchange sends input on a fresh connection and returns what the server
// answered, and whether it closed the connection, within wait of silence.
// A write the server refuses by closing is not an error.
func exchange(t *testing.T, addr, input string, wait time.Duration) (reply string, closed bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, _ = c.Write([]byte(input))
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		var ne net.Error
		switch {
		case err == nil:
		case errors.As(err, &ne) && ne.Timeout():
			return string(got), false
		default: // EOF or reset: closed
			return string(got), true
		}
	}
}

// redisWithPassword starts a real redis-server and sets its requirepass
// (redistest waits for an unauthenticated PING, so it is set afterwards).
func redisWithPassword(t *testing.T, pass string) string {
	t.Helper()
	srv := redistest.StartServer(t, t.TempDir())
	r := dialRaw(t, srv.Addr)
	want(t, r.do("CONFIG", "SET", "requirepass", pass), `+"OK"`)
	return srv.Addr
}

// TestUnauthenticatedLimitsAsRedis sends what an unauthenticated client may
// and may not send to svcdb and to a real redis-server 7.0 with a password:
// the replies must be byte for byte the same, and so must whether the
// connection is closed.
func TestUnauthenticatedLimitsAsRedis(t *testing.T) {
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.RequirePass = "secret" }))
	redisAddr := redisWithPassword(t, "secret")

	ten := "*10\r\n$3\r\nSET\r\n" + strings.Repeat("$1\r\na\r\n", 9)
	cases := []struct {
		name, in  string
		wantReply string // svcdb's, checked as well as equality with Redis
		wantClose bool
	}{
		{"eleven arguments", "*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n", true},
		{"a million arguments", "*1000000\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n", true},
		{"bulk of 16385", "*2\r\n$4\r\nAUTH\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n", true},
		{"512 MB bulk", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + strings.Repeat("v", 100000),
			"-ERR Protocol error: unauthenticated bulk length\r\n", true},
		{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length\r\n", true},
		{"count over INT_MAX", "*2147483648\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true},
		{"ten arguments", ten, "-NOAUTH Authentication required.\r\n", false},
		{"bulk of 16384", "*2\r\n$4\r\nECHO\r\n$16384\r\n" + strings.Repeat("v", 16384) + "\r\n", "-NOAUTH Authentication required.\r\n", false},
		{"AUTH lifts the limits in the same read", multibulk("AUTH", "secret") + multibulk("ECHO", strings.Repeat("v", 20000)),
			"+OK\r\n$20000\r\n" + strings.Repeat("v", 20000) + "\r\n", false},
		{"inline is bounded only by its length", strings.Repeat("a", 70000), "-ERR Protocol error: too big inline request\r\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, closed := exchange(t, ts.Addr, tc.in, 300*time.Millisecond)
			if got != tc.wantReply || closed != tc.wantClose {
				t.Errorf("svcdb: %.120q closed=%v, want %.120q closed=%v", got, closed, tc.wantReply, tc.wantClose)
			}
			rgot, rclosed := exchange(t, redisAddr, tc.in, 300*time.Millisecond)
			if got != rgot || closed != rclosed {
				t.Errorf("svcdb %.120q closed=%v, Redis %.120q closed=%v", got, closed, rgot, rclosed)
			}
		})
	}
	assertServes(t, ts.Addr)
}

func assertServes(t *testing.T, addr string) {
	t.Helper()
	r := dialRaw(t, addr)
	want(t, r.do("AUTH", "secret"), `+"OK"`)
	want(t, r.do("PING"), `+"PONG"`)
}

// TestUnauthenticatedQueryBufferCapped: a client that must authenticate and
// sends commands without reading the replies stops being parsed (output
// back-pressure); its unparsed input is capped at 1 MiB, not at
// client-query-buffer-limit, and the client is closed.
func TestUnauthenticatedQueryBufferCapped(t *testing.T) {
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.RequirePass = "secret" }))
	c, err := net.Dial("tcp", ts.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	chunk := []byte(strings.Repeat("*1\r\n$4\r\nPING\r\n", 64<<10/14))
	deadline := time.Now().Add(20 * time.Second)
	sent := 0
	for time.Now().Before(deadline) {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := c.Write(chunk)
		sent += n
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue // the server is not reading: it is either paused or gone
			}
			break // closed by the server
		}
		if sent > 512<<20 {
			t.Fatalf("sent %d MB without being closed", sent>>20)
		}
	}
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("AUTH", "secret"), `+"OK"`)
	eventually(t, 10*time.Second, func() bool { return len(admin.clientList()) == 1 },
		"the flooding client is still connected after %d MB", sent>>20)
}

// TestQueryBufferLimitMidBulk: with client-query-buffer-limit 1mb, a 4 MB
// bulk sent slowly closes the client once more than 1 MB is buffered, and
// CLIENT LIST shows qbuf growing meanwhile. Redis does the same.
func TestQueryBufferLimitMidBulk(t *testing.T) {
	ts := startServer(t)
	redisSrv := redistest.StartServer(t, t.TempDir())
	for _, tc := range []struct{ name, addr string }{{"svcdb", ts.Addr}, {"redis", redisSrv.Addr}} {
		t.Run(tc.name, func(t *testing.T) {
			admin := dialRaw(t, tc.addr)
			want(t, admin.do("CONFIG", "SET", "client-query-buffer-limit", "1mb"), `+"OK"`)
			t.Cleanup(func() { admin.do("CONFIG", "SET", "client-query-buffer-limit", "1gb") })

			c := dialRaw(t, tc.addr)
			id := c.id()
			c.write("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4194304\r\n")
			chunk := strings.Repeat("v", 32<<10)
			var qbufs []int
			for sent := 0; sent < 4<<20; sent += len(chunk) {
				_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.c.Write([]byte(chunk)); err != nil {
					break // closed
				}
				if sent%(256<<10) == 0 {
					line, ok := admin.clientList("ID", id)[id]
					if !ok {
						break // closed
					}
					q, _ := strconv.Atoi(line["qbuf"])
					qbufs = append(qbufs, q)
					if q > 1<<20+64<<10 {
						t.Fatalf("qbuf %d past the 1 MB limit", q)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
			eventually(t, 5*time.Second, func() bool { _, ok := admin.clientList("ID", id)[id]; return !ok },
				"the client is still connected after sending 4 MB with a 1 MB limit")
			if _, err := c.tryRead(time.Second); err == nil {
				t.Errorf("the client got a reply")
			}
			grew := 0
			for i := 1; i < len(qbufs); i++ {
				if qbufs[i] > qbufs[i-1] {
					grew++
				}
			}
			if len(qbufs) < 3 || grew < 2 || qbufs[len(qbufs)-1] < 512<<10 {
				t.Errorf("qbuf did not grow while the bulk arrived: %v", qbufs)
			}
			t.Logf("qbuf while the bulk arrived: %v", qbufs)
		})
	}
}

// TestClientListQueryBufferFields: while a large command arrives, CLIENT
// LIST shows the bytes buffered (qbuf), room left in the buffer
// (qbuf-free), the arguments already read (argv-mem: SET and k), and a
// tot-mem that counts them.
func TestClientListQueryBufferFields(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	c := dialRaw(t, ts.Addr)
	id := c.id()
	c.write("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + strings.Repeat("v", 2<<20))
	var line map[string]string
	eventually(t, 5*time.Second, func() bool {
		line = admin.clientList("ID", id)[id]
		q, _ := strconv.Atoi(line["qbuf"])
		return q >= 2<<20
	}, "qbuf never reached the 2 MB sent: %v", line)
	free, _ := strconv.Atoi(line["qbuf-free"])
	tot, _ := strconv.Atoi(line["tot-mem"])
	q, _ := strconv.Atoi(line["qbuf"])
	if line["argv-mem"] != "4" || free <= 0 || tot < q+free {
		t.Errorf("qbuf=%s qbuf-free=%s argv-mem=%s tot-mem=%s", line["qbuf"], line["qbuf-free"], line["argv-mem"], line["tot-mem"])
	}
	c.write(strings.Repeat("v", 3000000-2<<20) + "\r\n")
	want(t, c.read(), `+"OK"`)
	if v := c.do("STRLEN", "k"); v.Int != 3000000 {
		t.Fatalf("STRLEN = %s", v)
	}
	line = admin.clientList("ID", id)[id]
	if line["qbuf"] != "0" || line["qbuf-free"] != "0" || line["argv-mem"] != "0" {
		t.Errorf("after the command: qbuf=%s qbuf-free=%s argv-mem=%s", line["qbuf"], line["qbuf-free"], line["argv-mem"])
	}
}

// TestProtoMaxBulkLenLive: CONFIG SET proto-max-bulk-len applies to the
// next command of every connection, as in Redis.
func TestProtoMaxBulkLenLive(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	other := dialRaw(t, ts.Addr)
	want(t, other.do("PING"), `+"PONG"`)
	value := strings.Repeat("v", 2<<20)
	want(t, c.do("SET", "k", value), `+"OK"`)
	want(t, c.do("CONFIG", "SET", "proto-max-bulk-len", "1mb"), `+"OK"`)
	want(t, c.do("CONFIG", "GET", "proto-max-bulk-len"), `["proto-max-bulk-len" "1048576"]`)
	// Only the command up to the bulk's length: the server closes the
	// connection on that header, and a client still writing the payload
	// could see its write reset instead of the reply.
	other.write("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.Itoa(len(value)) + "\r\n")
	if got := other.readUntilClosed(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("2 MB bulk with proto-max-bulk-len 1mb: %q", got)
	}
	want(t, c.do("SET", "k", value[:1<<20]), `+"OK"`)
	want(t, c.do("CONFIG", "SET", "proto-max-bulk-len", "4mb"), `+"OK"`)
	want(t, c.do("SET", "k", value), `+"OK"`)
}

// TestLargeCommandsInPieces: commands of several large arguments, large
// arguments followed by small ones, and small commands around them, sent
// in one write or in random pieces, all run as sent (large commands are
// read into their own buffer; see querybuf.go).
func TestLargeCommandsInPieces(t *testing.T) {
	ts := startServer(t)
	big := func(n int, c byte) string { return strings.Repeat(string(c), n) }
	a, b, c := big(300<<10, 'a'), big(600<<10, 'b'), big(1<<20+7, 'c')
	in := multibulk("MSET", "a", a, "b", b) + multibulk("PING") + multibulk("STRLEN", "a") +
		multibulk("SET", "c", c, "EX", "100") + "PING\r\n" + multibulk("STRLEN", "b") +
		multibulk("APPEND", "c", a) + multibulk("STRLEN", "c")
	want := `+"OK"+"PONG"(integer) 307200+"OK"+"PONG"(integer) 614400(integer) 1355783(integer) 1355783`
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 6 {
		r := dialRaw(t, ts.Addr)
		if round == 0 {
			r.write(in)
		} else {
			go func() {
				for rest := in; len(rest) > 0; {
					n := min(len(rest), 1+rng.IntN(200<<10))
					if _, err := r.c.Write([]byte(rest[:n])); err != nil {
						return
					}
					rest = rest[n:]
					time.Sleep(time.Millisecond)
				}
			}()
		}
		var got strings.Builder
		for range 8 {
			got.WriteString(r.read().String())
		}
		if got.String() != want {
			t.Fatalf("round %d: %s, want %s", round, got.String(), want)
		}
		if v := r.do("GET", "b"); string(v.Str) != b {
			t.Fatalf("round %d: GET b is %d bytes", round, len(v.Str))
		}
	}
}

// TestLargeArgumentThenManySmall: one large argument followed by many small
// ones in the same command, sent in pieces, all arrive (the command's own
// buffer grows by a quarter at a time, not per argument).
func TestLargeArgumentThenManySmall(t *testing.T) {
	ts := startServer(t)
	var sb strings.Builder // multibulk() would be quadratic here
	sb.WriteString("*100004\r\n" + multibulk("HSET", "h", "big", strings.Repeat("v", 1<<20))[len("*4\r\n"):])
	for i := range 50000 {
		f, v := "f"+strconv.Itoa(i), strconv.Itoa(i)
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n$%d\r\n%s\r\n", len(f), f, len(v), v)
	}
	in := sb.String()
	r := dialRaw(t, ts.Addr)
	start := time.Now()
	go func() {
		for rest := in; len(rest) > 0; {
			n := min(len(rest), 16<<10)
			if _, err := r.c.Write([]byte(rest[:n])); err != nil {
				return
			}
			rest = rest[n:]
		}
	}()
	if v := r.read(); v.Int != 50001 {
		t.Fatalf("HSET: %s", v)
	}
	t.Logf("%d bytes in %v", len(in), time.Since(start))
	if v := r.do("HLEN", "h"); v.Int != 50001 {
		t.Fatalf("HLEN: %s", v)
	}
}
