package aof

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
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

// redisServer is a real redis-server 7.0 on 127.0.0.1 (redistest.Server)
// with the AOF on and its files in dir, and a go-redis Client that
// t.Cleanup closes before it stops the server.
type redisServer struct {
	*redistest.Server
	Client *redis.Client
	log    serverLog // rs.log.String(), as load_test.go reads it: the same as rs.Log()
}

// serverLog reads the server's output so far with String.
type serverLog struct{ s *redistest.Server }

func (l serverLog) String() string { return l.s.Log() }

// startRedis starts redis-server with --appendonly yes --dir dir and
// extra arguments, once it answers PING; t.Cleanup kills it if the test
// has not stopped it.
func startRedis(t testing.TB, dir string, extra ...string) *redisServer {
	t.Helper()
	args := append([]string{"--save", "", "--appendonly", "yes", "--logfile", ""}, extra...)
	srv := redistest.StartServer(t, dir, args...)
	rs := &redisServer{Server: srv, Client: redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1}), log: serverLog{srv}}
	t.Cleanup(func() { rs.Client.Close() })
	return rs
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
	case <-rs.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("redis-server did not exit after SHUTDOWN:\n%s", rs.Log())
	}
	rs.Client.Close()
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
