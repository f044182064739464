// Package redistest starts a real redis-server for tests that compare svcdb
// with Redis (golden scripts, COMMAND metadata, CONFIG SET texts, RDB and
// AOF files Redis writes or loads). It is test support only: non-test code
// must never import it, and it imports nothing of ours.
package redistest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// readyTimeout is how long StartServer waits for +PONG: long enough for a
// server that loads a large RDB or AOF at start-up (PING answers -LOADING
// meanwhile).
const readyTimeout = 20 * time.Second

// startAttempts bounds the retries when another process takes the free port
// between our choosing it and redis-server binding it.
const startAttempts = 3

var versionCheck sync.Once

// freePort returns a port the kernel has just handed out on 127.0.0.1. A
// variable so that this package's own test can hand out a taken one.
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Server is a real redis-server run by a test on 127.0.0.1. Once StartServer
// returns it, Addr has answered PING with +PONG from this very process (its
// INFO process_id), so any file in Dir it loads at start-up is loaded. Exited
// is closed exactly when the process has exited; Stop may be called any
// number of times and from t.Cleanup.
type Server struct {
	Addr string // host:port, 127.0.0.1 and the port it listens on
	Dir  string // its --dir: where it reads and writes dump.rdb and appendonlydir

	cmd      *exec.Cmd
	log      *syncBuffer
	exited   chan struct{}
	stopOnce sync.Once
}

// Start runs redis-server with no persistence (--save "" --appendonly no) in
// a temporary directory, stopped by t.Cleanup, and returns its address once
// it answers PING. Without redis-server the test fails when CI=true and
// skips otherwise.
func Start(t testing.TB) string {
	t.Helper()
	return StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no").Addr
}

// StartServer runs redis-server on a free 127.0.0.1 port with --dir dir and
// then args (Redis config options, e.g. "--appendonly", "yes"; later ones
// override earlier ones), and returns it once PING answers +PONG, waiting up
// to 20 s while it loads its files. A port another process took first is
// retried with a fresh one. t.Cleanup stops the server. Without
// redis-server the test fails when CI=true and skips otherwise.
func StartServer(t testing.TB, dir string, args ...string) *Server {
	t.Helper()
	bin := lookupRedisServer(t)
	var lastLog string
	for attempt := 0; attempt < startAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{
			Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Dir:    dir,
			log:    &syncBuffer{},
			exited: make(chan struct{}),
		}
		all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--daemonize", "no", "--dir", dir}, args...)
		s.cmd = exec.Command(bin, all...)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		go func() { s.cmd.Wait(); close(s.exited) }()
		if s.waitReady() {
			t.Cleanup(s.Stop)
			return s
		}
		s.Stop()
		lastLog = s.Log()
		if !strings.Contains(lastLog, "Address already in use") {
			break
		}
	}
	t.Fatalf("could not start redis-server; last log:\n%s", lastLog)
	return nil
}

// lookupRedisServer returns redis-server's path, failing the test under
// CI=true and skipping it otherwise when there is none, and warns once when
// it is not Redis 7.0.
func lookupRedisServer(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is required to compare with Redis 7.0 (make test installs it: apt-get install redis-server)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set CI=true to make this a failure")
	}
	versionCheck.Do(func() {
		if out, err := exec.Command(bin, "--version").Output(); err == nil && !bytes.Contains(out, []byte("v=7.0.")) {
			t.Logf("warning: the expectations describe Redis 7.0; found %s", bytes.TrimSpace(out))
		}
	})
	return bin
}

// Log returns everything the server has written to stdout and stderr so far.
func (s *Server) Log() string { return s.log.String() }

// Exited is closed once the process has exited (after Stop, SHUTDOWN, or a
// crash).
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Stop kills the server (SIGKILL) unless it has exited already, and waits
// for it to exit. It is idempotent.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		select {
		case <-s.exited:
		default:
			s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// waitReady polls Addr until PING answers +PONG (not -LOADING) from this
// process, for up to readyTimeout, or until the process exits (the port was
// taken, or an argument or file was refused).
func (s *Server) waitReady() bool {
	for deadline := time.Now().Add(readyTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-s.exited:
			return false
		default:
		}
		if answersPong(s.Addr, s.cmd.Process.Pid) {
			return true
		}
	}
	return false
}

// answersPong reports whether the server at addr answers PING with +PONG and
// is process pid by INFO server's process_id: another server that took the
// port before ours could bind it must not pass for ours.
func answersPong(addr string, pid int) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\nINFO server\r\n")); err != nil {
		return false
	}
	r := bufio.NewReader(c)
	if line, _ := r.ReadString('\n'); line != "+PONG\r\n" {
		return false
	}
	head, _ := r.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(head, "$"), "\r\n"))
	if !strings.HasPrefix(head, "$") || err != nil || n < 0 {
		return false
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return false
	}
	return bytes.Contains(body, []byte("\r\nprocess_id:"+strconv.Itoa(pid)+"\r\n"))
}

// syncBuffer collects the server's output; the process writes it while the
// test reads it.
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
