package diaghttp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/status"
)

// StatusJSON serves the netloop server's collector, as cmd/svcdb's source.
func (s *source) StatusJSON() []byte { return s.srv.StatusJSON() }

// statusConn sends STATUS JSON over a plain TCP connection and returns the
// bulk string.
type statusConn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dialStatus(t *testing.T, addr string) *statusConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &statusConn{t: t, c: c, rd: bufio.NewReader(c)}
}

// set writes key=v and expects +OK.
func (sc *statusConn) set(key, v string) {
	sc.t.Helper()
	sc.c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(sc.c, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(v), v)
	if line, err := sc.rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
		sc.t.Fatalf("SET: %q %v", line, err)
	}
}

func (sc *statusConn) statusJSON() string {
	sc.t.Helper()
	sc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := sc.c.Write([]byte("*2\r\n$6\r\nSTATUS\r\n$4\r\nJSON\r\n")); err != nil {
		sc.t.Fatal(err)
	}
	line, err := sc.rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") {
		sc.t.Fatalf("STATUS JSON: %q %v", line, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		sc.t.Fatalf("bulk length %q", line)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(sc.rd, buf); err != nil {
		sc.t.Fatal(err)
	}
	return string(buf[:n])
}

func TestStatusJSONEndpoint(t *testing.T) {
	f := start(t, "s3cret") // a token is configured, and /status/json still needs none
	r := f.do(t, "GET", "/status/json", nil)
	expect(t, r, 200, "")
	if r.hdr.Get("Content-Type") != "application/json" || r.hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("headers: %v", r.hdr)
	}
	var d status.Document
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatalf("body does not decode: %v\n%s", err, r.body)
	}
	if d.Svc.State != status.StateReady || d.Health.Status != status.Healthy || len(d.Shards) != f.shards || d.Cluster.Mode != "standalone" {
		t.Fatalf("document: %s", r.body)
	}
	h := f.do(t, "HEAD", "/status/json", nil)
	expect(t, h, 200, "")
	if h.body != "" || h.hdr.Get("Content-Type") != "application/json" || h.hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("HEAD: %q %v", h.body, h.hdr)
	}
	r = f.do(t, "POST", "/status/json", nil)
	expect(t, r, 405, "")
	if r.hdr.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST: %v", r.hdr)
	}
}

// TestStatusJSONSameAsCommand: GET /status/json and STATUS JSON come from one
// collector, so for the same instant (the document's one-second precision)
// and the same inputs they are the same bytes. The HTTP request goes first:
// it changes no counter the document shows, and STATUS JSON's own command is
// counted only after its reply is built, so the inputs agree unless a second
// boundary or an ops/sec sample (every 100ms) falls between the two; a few
// attempts rule those out.
func TestStatusJSONSameAsCommand(t *testing.T) {
	f := start(t, "")
	sc := dialStatus(t, f.redis)
	for i := range 100 {
		sc.set("key:"+strconv.Itoa(i), "value")
	}
	sc.statusJSON() // the connection is registered (connected: 1) before comparing
	var lastHTTP, lastRESP string
	for attempt := range 50 {
		r := f.do(t, "GET", "/status/json", nil)
		expect(t, r, 200, "")
		resp := sc.statusJSON()
		if r.body == resp {
			var d status.Document
			if err := json.Unmarshal([]byte(resp), &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Keyspace.Databases) != 1 || d.Keyspace.Databases[0].Keys != 100 {
				t.Fatalf("keyspace %+v", d.Keyspace)
			}
			t.Logf("identical at attempt %d (%d bytes, generated_at %s)", attempt+1, len(resp), d.Svc.GeneratedAt.ISO)
			return
		}
		lastHTTP, lastRESP = r.body, resp
		time.Sleep(time.Duration(attempt) * time.Millisecond)
	}
	t.Fatalf("never identical; last pair differs at %s", firstDiff(lastHTTP, lastRESP))
}

func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-60, 0)
	return fmt.Sprintf("byte %d:\nhttp %q\nresp %q", i, a[lo:min(i+60, len(a))], b[lo:min(i+60, len(b))])
}
