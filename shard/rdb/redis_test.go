package rdb

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
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

// redisServer is a real redis-server 7.0 on 127.0.0.1 (redistest.Server),
// persisting into Dir/dbfilename, stopped by t.Cleanup, with the go-redis
// clients and SAVE these tests use.
type redisServer struct {
	*redistest.Server
	t testing.TB
}

// startRedis starts redis-server with --dir dir --dbfilename file (it loads
// that file if it exists) and no automatic saves, DEBUG and protected
// configs enabled, then extra.
func startRedis(t testing.TB, dir, file string, extra ...string) *redisServer {
	t.Helper()
	args := append([]string{"--save", "", "--appendonly", "no", "--dbfilename", file,
		"--enable-debug-command", "yes", "--enable-protected-configs", "yes"}, extra...)
	return &redisServer{Server: redistest.StartServer(t, dir, args...), t: t}
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
		s.t.Fatalf("SAVE: %v\n%s", err, s.Log())
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
