// Package redistest starts a real redis-server for tests that compare svcdb
// with Redis (golden scripts, COMMAND metadata, CONFIG SET texts). It is test
// support only: non-test code must never import it, and it imports nothing
// of ours.
package redistest

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

var versionWarning sync.Once

// Start runs redis-server (no persistence) on a free 127.0.0.1 port, stopped
// by t.Cleanup, and returns its address once it answers PING. Without
// redis-server the test fails when CI=true and skips otherwise.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is required to compare with Redis 7.0 (make test installs it: apt-get install redis-server)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set CI=true to make this a failure")
	}
	if out, err := exec.Command(bin, "--version").Output(); err == nil && !bytes.Contains(out, []byte("v=7.0.")) {
		versionWarning.Do(func() { t.Logf("warning: the expectations describe Redis 7.0; found %s", bytes.TrimSpace(out)) })
	}
	var lastLog string
	for attempt := 0; attempt < 3; attempt++ {
		// A free port from the kernel; another process may take it before
		// redis-server binds, hence the retries.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

		var log syncBuffer
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no")
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop := func() {
			cmd.Process.Kill()
			<-exited
		}
		if waitPong(addr, exited) {
			t.Cleanup(stop)
			return addr
		}
		stop()
		lastLog = log.String()
	}
	t.Fatalf("could not start redis-server; last log:\n%s", lastLog)
	return ""
}

// waitPong polls addr for up to 10 s until PING answers, or the process exits.
func waitPong(addr string, exited <-chan struct{}) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return false // died (port taken?): the caller retries
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			continue
		}
		c.SetDeadline(time.Now().Add(time.Second))
		c.Write([]byte("PING\r\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if line == "+PONG\r\n" {
			return true
		}
	}
	return false
}

// syncBuffer collects the server's output for the failure message.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
