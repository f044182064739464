package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/proc"
)

// rssOf reads the server's resident set size.
func rssOf(t *testing.T, pid int) int64 {
	t.Helper()
	n, err := proc.ReadRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sendBulkStart opens a connection, authenticates it when pass is set,
// announces a SET whose value is announced bytes long, and sends sent bytes
// of it. Write errors end the sending: the server may close the connection.
func sendBulkStart(t *testing.T, addr, pass string, announced, sent int, payload []byte) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if pass != "" {
		fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(pass), pass)
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+OK\r\n" {
			t.Fatalf("AUTH: %q %v", line, err)
		}
	}
	if _, err := fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n", announced); err != nil {
		return c
	}
	for n := 0; n < sent; n += len(payload) {
		if _, err := c.Write(payload[:min(len(payload), sent-n)]); err != nil {
			break
		}
	}
	return c
}

// TestUnauthenticatedHugeBulksRSS: connections that have not authenticated
// announce 512 MB bulks and send 4 MB each; each is answered Redis'
// "unauthenticated bulk length" error and closed, and the server's resident
// size stays where it was.
func TestUnauthenticatedHugeBulksRSS(t *testing.T) {
	bin := buildBinary(t)
	cmd, addr, _ := startProcess(t, bin, "--data-dir", t.TempDir(), "--requirepass", "secret", "--http-port", "0")
	pid := cmd.Process.Pid
	time.Sleep(200 * time.Millisecond)
	before := rssOf(t, pid)
	payload := []byte(strings.Repeat("x", 1<<20))
	for range 8 {
		c := sendBulkStart(t, addr, "", 512<<20, 4<<20, payload)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		if line != "-ERR Protocol error: unauthenticated bulk length\r\n" {
			t.Fatalf("reply %q", line)
		}
	}
	after := rssOf(t, pid)
	t.Logf("RSS before %.1f MB, after 8 x 4 MB sent unauthenticated %.1f MB", float64(before)/1e6, float64(after)/1e6)
	if after-before > 8<<20 {
		t.Errorf("RSS grew by %.1f MB", float64(after-before)/1e6)
	}
	if got := roundTrip(t, addr, "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n"); got != "+OK\r\n" {
		t.Fatalf("server no longer serves: %q", got)
	}
}

// TestBufferedBulkRSS: 8 authenticated connections each send 16 MB of a
// 24 MB bulk. The server's resident size grows by at most 1.5 times what
// is buffered, and comes back near where it was within seconds of the
// clients closing.
func TestBufferedBulkRSS(t *testing.T) {
	bin := buildBinary(t)
	cmd, addr, _ := startProcess(t, bin, "--data-dir", t.TempDir(), "--requirepass", "secret", "--http-port", "0")
	pid := cmd.Process.Pid
	time.Sleep(200 * time.Millisecond)
	before := rssOf(t, pid)
	payload := []byte(strings.Repeat("x", 1<<20))
	const conns, sent = 8, 16 << 20
	var cs []net.Conn
	for range conns {
		cs = append(cs, sendBulkStart(t, addr, "secret", 24<<20, sent, payload))
	}
	// The last bytes may still be on their way through the sockets.
	time.Sleep(300 * time.Millisecond)
	buffered := rssOf(t, pid)
	for _, c := range cs {
		c.Close()
	}
	released := buffered
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if released = rssOf(t, pid); released-before < 16<<20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ratio := float64(buffered-before) / float64(conns*sent)
	t.Logf("RSS before %.1f MB, with %d x %d MB buffered %.1f MB (%.2fx), after the clients closed %.1f MB",
		float64(before)/1e6, conns, sent>>20, float64(buffered)/1e6, ratio, float64(released)/1e6)
	if ratio > 1.5 {
		t.Errorf("buffered input cost %.2fx its size in RSS", ratio)
	}
	if released-before >= 16<<20 {
		t.Errorf("RSS still %.1f MB above its start 15 s after the clients closed", float64(released-before)/1e6)
	}
}
