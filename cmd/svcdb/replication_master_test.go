package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// The master side: a real redis-server 7.0 replicates from the svcdb
// binary (docs/replication.md).

func TestRedisReplicaOfSvcdb(t *testing.T) {
	bin := buildBinary(t)
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) { testRedisReplicaOfSvcdb(t, bin, diskless) })
	}
}

func testRedisReplicaOfSvcdb(t *testing.T, bin, diskless string) {
	ctx := context.Background()
	_, addr, _, logs := startProcessEnv(t, bin, nil, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(addr)
	m := client(t, addr)
	if err := m.ConfigSet(ctx, "repl-diskless-sync", diskless).Err(); err != nil {
		t.Fatal(err)
	}
	m3 := redis.NewClient(&redis.Options{Addr: addr, DB: 3, MaxRetries: -1})
	defer m3.Close()
	writeEveryType(t, m, "before:")
	writeEveryType(t, m3, "before3:")
	if err := m.Set(ctx, "short-ttl", "x", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}

	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", mport)
	_, rport, _ := net.SplitHostPort(rsrv.Addr)
	r := client(t, rsrv.Addr)
	waitInSync(t, m, r)
	if got := strings.Contains(logs.String(), "succeeded (diskless)"); got != (diskless == "yes") {
		t.Errorf("repl-diskless-sync %s: the log says diskless=%v", diskless, got)
	}
	writeEveryType(t, m, "after:")
	writeEveryType(t, m3, "after3:")
	// An expiry on the master reaches the replica as a DEL.
	waitFor(t, "short-ttl to expire on the master", func() bool { return m.Exists(ctx, "short-ttl").Val() == 0 })
	waitInSync(t, m, r)
	sameData(t, addr, rsrv.Addr)
	// WAIT counts the replica once it acknowledged the stream so far.
	if err := m.Set(ctx, "waited", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Do(ctx, "WAIT", 1, 5000).Int64(); err != nil || got != 1 {
		t.Errorf("WAIT 1 5000 = %d, %v", got, err)
	}
	if r.Get(ctx, "waited").Val() != "1" {
		t.Errorf("WAIT returned before the replica had the write")
	}
	start := time.Now()
	if got, err := m.Do(ctx, "WAIT", 2, 200).Int64(); err != nil || got != 1 || time.Since(start) < 200*time.Millisecond {
		t.Errorf("WAIT 2 200 = %d, %v after %v (want 1 after the timeout)", got, err, time.Since(start))
	}
	if n := r.Exists(ctx, "short-ttl").Val(); n != 0 {
		t.Errorf("short-ttl still on the replica")
	}

	info := m.Info(ctx, "replication").Val()
	want := "ip=127.0.0.1,port=" + rport + ",state=online,offset="
	if field(info, "connected_slaves") != "1" || !strings.HasPrefix(field(info, "slave0"), want) ||
		field(info, "repl_backlog_active") != "1" {
		t.Errorf("INFO replication on the master:\n%s", info)
	}
	role := fmt.Sprint(m.Do(ctx, "ROLE").Val())
	if !strings.HasPrefix(role, "[master ") || !strings.Contains(role, "[[127.0.0.1 "+rport+" ") {
		t.Errorf("ROLE on the master: %s", role)
	}
	if got := field(r.Info(ctx, "replication").Val(), "master_replid"); got != field(info, "master_replid") {
		t.Errorf("replica's master_replid %s, master's %s", got, field(info, "master_replid"))
	}

	// The replica's link broken: it continues with +CONTINUE.
	if err := r.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, "while-down", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the partial resync", func() bool { return field(m.Info(ctx, "stats").Val(), "sync_partial_ok") == "1" })
	waitInSync(t, m, r)
	st := m.Info(ctx, "stats").Val()
	if field(st, "sync_full") != "1" || field(st, "sync_partial_err") != "0" {
		t.Errorf("INFO stats after a partial resync: sync_full=%s sync_partial_err=%s", field(st, "sync_full"), field(st, "sync_partial_err"))
	}
	if r.Get(ctx, "while-down").Val() != "1" {
		t.Errorf("while-down not on the replica")
	}
	sameData(t, addr, rsrv.Addr)

	// repl-backlog-size resizes the backlog in place.
	if err := m.ConfigSet(ctx, "repl-backlog-size", "2mb").Err(); err != nil {
		t.Fatal(err)
	}
	info = m.Info(ctx, "replication").Val()
	if field(info, "repl_backlog_size") != "2097152" || field(info, "repl_backlog_first_byte_offset") != "1" {
		t.Errorf("after CONFIG SET repl-backlog-size 2mb:\n%s", info)
	}
}

// TestSlowReplicaDisconnected: a stopped replica never slows the master's
// writes; past client-output-buffer-limit's replica class it is dropped,
// and when it comes back it syncs again in full (the backlog no longer
// holds what it missed).
func TestSlowReplicaDisconnected(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(addr)
	m := client(t, addr)
	if err := m.ConfigSet(ctx, "client-output-buffer-limit", "replica 2mb 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", mport)
	r := client(t, rsrv.Addr)
	if err := m.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, r)
	pid, err := strconv.Atoi(field(r.Info(ctx, "server").Val(), "process_id"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck
	val := strings.Repeat("x", 100<<10)
	for i := range 400 { // 40 MB: past the socket buffers and the 2 MB limit
		if err := m.Set(ctx, fmt.Sprint("big:", i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the slow replica to be dropped", func() bool {
		return field(m.Info(ctx, "replication").Val(), "connected_slaves") == "0"
	})
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, r)
	if f := field(m.Info(ctx, "stats").Val(), "sync_full"); f != "2" {
		t.Errorf("sync_full = %s, want 2 (the dropped replica missed more than the backlog holds)", f)
	}
	if n := r.DBSize(ctx).Val(); n != 401 {
		t.Errorf("replica has %d keys, want 401", n)
	}
}

// TestSvcdbReplicaOfSvcdb: both ends are svcdb, every type before and
// after the attach, diskless (the default).
func TestSvcdbReplicaOfSvcdb(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(addr)
	m := client(t, addr)
	m3 := redis.NewClient(&redis.Options{Addr: addr, DB: 3, MaxRetries: -1})
	defer m3.Close()
	writeEveryType(t, m, "before:")
	writeEveryType(t, m3, "before3:")
	_, raddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	r := client(t, raddr)
	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, r)
	writeEveryType(t, m, "after:")
	writeEveryType(t, m3, "after3:")
	waitInSync(t, m, r)
	sameData(t, addr, raddr)
	if got := field(m.Info(ctx, "replication").Val(), "connected_slaves"); got != "1" {
		t.Errorf("connected_slaves = %s", got)
	}
	// A replica whose link is up serves replicas (chained: under its
	// master's ID; replication_chain_test.go).
	if got, want := firstLine(t, raddr, "PSYNC ? -1\r\n"), "+FULLRESYNC "+field(m.Info(ctx, "replication").Val(), "master_replid")+" "; !strings.HasPrefix(got, want) {
		t.Errorf("PSYNC on a replica: %q, want %q...", got, want)
	}
}
