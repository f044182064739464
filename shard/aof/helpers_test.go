package aof

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// tool returns the path of a real tool the test needs, failing (never
// skipping) when it is missing.
func tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required (Debian packages redis-tools and redis-server 7.0): %v", name, err)
	}
	return p
}

// checkAOF runs redis-check-aof on a manifest and fails unless it calls
// every file valid.
func checkAOF(t testing.TB, manifest string) string {
	t.Helper()
	out, err := exec.Command(tool(t, "redis-check-aof"), manifest).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("All AOF files and manifest are valid")) {
		t.Fatalf("redis-check-aof %s: %v\n%s", manifest, err, out)
	}
	return string(out)
}

// enc is one command as RESP multibulk, as Redis writes it in an AOF.
func enc(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// cmdText joins a command's arguments with spaces, for comparisons.
func cmdText(args [][]byte) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = string(a)
	}
	return strings.Join(s, " ")
}

// loadAll loads an AOF and returns its base path and its commands as text.
func loadAll(t testing.TB, dir, filename string, truncatedOK bool) (string, []string, LoadInfo, error) {
	t.Helper()
	var basePath string
	var cmds []string
	info, err := Load(dir, filename, truncatedOK,
		func(path string, isRDB bool) error {
			if !isRDB {
				t.Errorf("base %s: isRDB false for an RDB base", path)
			}
			basePath = path
			return nil
		},
		func(args [][]byte) error {
			cmds = append(cmds, cmdText(args))
			return nil
		})
	return basePath, cmds, info, err
}

// rdbWithStrings builds a small valid RDB (version 10) holding string keys
// in database 0: what a test needs for a base with data, without package
// shard/rdb. Keys and values must be shorter than 64 bytes.
func rdbWithStrings(kv ...string) []byte {
	b := []byte("REDIS0010")
	b = append(b, 0xFE, 0) // SELECTDB 0
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, 0) // RDB_TYPE_STRING
		b = append(b, byte(len(kv[i])))
		b = append(b, kv[i]...)
		b = append(b, byte(len(kv[i+1])))
		b = append(b, kv[i+1]...)
	}
	b = append(b, 0xFF)
	return binary.LittleEndian.AppendUint64(b, redisCRC64(0, b))
}

// redisServer is a real redis-server 7.0 on 127.0.0.1, with the AOF on and
// its files in dir.
type redisServer struct {
	Addr   string
	Client *redis.Client
	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
}

// startRedis starts redis-server with --appendonly yes --dir dir and
// extra arguments, once it answers PING; t.Cleanup kills it if the test
// has not stopped it.
func startRedis(t testing.TB, dir string, extra ...string) *redisServer {
	t.Helper()
	bin := tool(t, "redis-server")
	var lastLog string
	for attempt := 0; attempt < 3; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		rs := &redisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited: make(chan struct{}), log: &syncBuffer{}}
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "yes", "--dir", dir, "--daemonize", "no", "--logfile", ""}, extra...)
		rs.cmd = exec.Command(bin, args...)
		rs.cmd.Stdout, rs.cmd.Stderr = rs.log, rs.log
		if err := rs.cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		go func() { rs.cmd.Wait(); close(rs.exited) }()
		if waitPong(rs.Addr, rs.exited) {
			rs.Client = redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1})
			t.Cleanup(rs.kill)
			return rs
		}
		rs.kill()
		lastLog = rs.log.String()
		if strings.Contains(lastLog, "Address already in use") {
			continue
		}
		t.Fatalf("redis-server did not start:\n%s", lastLog)
	}
	t.Fatalf("could not start redis-server; last log:\n%s", lastLog)
	return nil
}

// runRedisUntilExit runs redis-server on dir expecting it to refuse to
// start, and returns its log.
func runRedisUntilExit(t testing.TB, dir string, extra ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--dir", dir,
		"--daemonize", "no", "--logfile", ""}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, tool(t, "redis-server"), args...).CombinedOutput()
	return string(out)
}

// Shutdown stops the server with SHUTDOWN (the AOF is flushed and fsynced)
// and waits for it to exit.
func (rs *redisServer) Shutdown(t testing.TB) {
	t.Helper()
	rs.Client.Shutdown(context.Background()) // the connection drops: no reply
	select {
	case <-rs.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("redis-server did not exit after SHUTDOWN:\n%s", rs.log.String())
	}
	rs.Client.Close()
}

func (rs *redisServer) kill() {
	select {
	case <-rs.exited:
	default:
		rs.cmd.Process.Kill()
		<-rs.exited
	}
	if rs.Client != nil {
		rs.Client.Close()
	}
}

// waitPong polls addr until PING answers PONG, for up to 10 s, or until the
// process exits.
func waitPong(addr string, exited <-chan struct{}) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return false
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

// copyDir copies a flat directory (an appendonlydir) to a new temp dir.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// writeAOFDir writes an appendonlydir by hand: an empty RDB base (seq 1)
// and the given incremental files (seq 1, 2, ...), with their manifest.
func writeAOFDir(t testing.TB, dir string, incr ...[]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Base: &FileInfo{Name: baseName(DefaultFilename, 1), Seq: 1, Type: TypeBase}, BaseSeq: 1}
	if err := os.WriteFile(filepath.Join(dir, m.Base.Name), EmptyRDB(), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, data := range incr {
		fi := FileInfo{Name: incrName(DefaultFilename, int64(i+1)), Seq: int64(i + 1), Type: TypeIncr}
		if err := os.WriteFile(filepath.Join(dir, fi.Name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m.Incr = append(m.Incr, fi)
		m.IncrSeq = fi.Seq
	}
	if err := writeManifest(dir, DefaultFilename, m); err != nil {
		t.Fatal(err)
	}
}
