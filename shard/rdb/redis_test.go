package rdb

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// needTool returns the path of a tool the test cannot do without; a
// missing tool fails the test (it never skips).
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required (apt-get install redis-server redis-tools): %v", name, err)
	}
	return p
}

// redisServer is a real redis-server 7.0 on 127.0.0.1, persisting into
// dir/dbfilename, stopped by t.Cleanup.
type redisServer struct {
	t      testing.TB
	Addr   string
	Dir    string
	cmd    *exec.Cmd
	log    *lockedBuffer
	exited chan struct{}
}

// startRedis starts redis-server with --dir dir --dbfilename file (it loads
// that file if it exists) and no automatic saves.
func startRedis(t testing.TB, dir, file string, extra ...string) *redisServer {
	t.Helper()
	bin := needTool(t, "redis-server")
	var lastLog string
	for attempt := 0; attempt < 3; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--dbfilename", file,
			"--daemonize", "no", "--enable-debug-command", "yes", "--enable-protected-configs", "yes"}, extra...)
		s := &redisServer{t: t, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir,
			cmd: exec.Command(bin, args...), log: &lockedBuffer{}, exited: make(chan struct{})}
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		go func() { s.cmd.Wait(); close(s.exited) }()
		if s.waitReady() {
			t.Cleanup(s.stop)
			return s
		}
		s.stop()
		lastLog = s.log.String()
		if bytes.Contains([]byte(lastLog), []byte("Address already in use")) {
			continue
		}
		break
	}
	t.Fatalf("redis-server did not start; its log:\n%s", lastLog)
	return nil
}

func (s *redisServer) stop() {
	s.cmd.Process.Kill()
	<-s.exited
}

// waitReady polls PING until +PONG (not -LOADING), for up to 20 s.
func (s *redisServer) waitReady() bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-s.exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
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

// client returns a go-redis client (RESP2) for db, closed by t.Cleanup.
func (s *redisServer) client(db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, Protocol: 2, DisableIdentity: true})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// save runs SAVE into file name (in s.Dir) and returns its path.
func (s *redisServer) save(name string) string {
	s.t.Helper()
	ctx := context.Background()
	c := s.client(0)
	if err := c.ConfigSet(ctx, "dbfilename", name).Err(); err != nil {
		s.t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		s.t.Fatalf("SAVE: %v\n%s", err, s.log.String())
	}
	return filepath.Join(s.Dir, name)
}

// checkRDB runs redis-check-rdb on path and fails unless it exits 0 and
// reports no error.
func checkRDB(t testing.TB, path string) string {
	t.Helper()
	bin := needTool(t, "redis-check-rdb")
	out, err := exec.Command(bin, path).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("--- RDB ERROR DETECTED ---")) || !bytes.Contains(out, []byte("RDB looks OK!")) {
		t.Fatalf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
	return string(out)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
