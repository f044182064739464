package main

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/svcdb/svcdb/core/redistest"
)

// The master's cron (docs/replication.md): repl-ping-replica-period moves
// an idle stream's offsets by PINGs, repl-backlog-ttl frees the backlog of
// a master left without replicas, so a replica that comes back syncs in
// full instead of continuing.

func TestReplPingPeriodAndBacklogTTL(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(addr)
	m := client(t, addr)
	for _, kv := range [][2]string{{"repl-diskless-sync-delay", "0"}, {"repl-ping-replica-period", "1"}} {
		if err := m.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.ConfigGet(ctx, "repl-ping-slave-period").Val()["repl-ping-slave-period"]; got != "1" {
		t.Errorf("CONFIG GET repl-ping-slave-period (the alias) = %q", got)
	}
	if err := m.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", mport)
	r := client(t, rsrv.Addr)
	waitInSync(t, m, r)

	// An idle master PINGs every second: its offset grows by the PING's
	// 14 bytes (*1\r\n$4\r\nPING\r\n) each time, and the replica follows.
	offset := func() int64 {
		n, _ := strconv.ParseInt(field(m.Info(ctx, "replication").Val(), "master_repl_offset"), 10, 64)
		return n
	}
	o0 := offset()
	waitFor(t, "two PINGs into the stream", func() bool { return offset() >= o0+28 })
	waitInSync(t, m, r) // the replica's offset counted the PINGs too
	if d := offset() - o0; d%14 != 0 {
		t.Errorf("the idle master's offset moved by %d bytes: not a number of PINGs", d)
	}
	// repl-backlog-ttl 1: the replica frozen and dropped, the backlog is
	// freed with a new replication ID; the replica, back, syncs in full.
	if err := m.ConfigSet(ctx, "repl-backlog-ttl", "1").Err(); err != nil {
		t.Fatal(err)
	}
	idBefore := field(m.Info(ctx, "replication").Val(), "master_replid")
	pid, err := strconv.Atoi(field(r.Info(ctx, "server").Val(), "process_id"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck
	if err := m.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the backlog to be freed", func() bool {
		return field(m.Info(ctx, "replication").Val(), "repl_backlog_active") == "0"
	})
	info := m.Info(ctx, "replication").Val()
	if field(info, "master_replid") == idBefore || field(info, "repl_backlog_histlen") != "0" ||
		field(info, "master_replid2") != "0000000000000000000000000000000000000000" {
		t.Errorf("after the backlog was freed (want a new ID, no secondary one, no history):\n%s", info)
	}
	if err := m.Set(ctx, "while-away", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Until the replica reads its closed link it still says "up" at the
	// offset it had, which the master (no backlog, so no offset growth)
	// also has: wait for its PSYNC before waiting for the offsets.
	waitFor(t, "the replica's PSYNC", func() bool {
		return field(m.Info(ctx, "stats").Val(), "sync_partial_err") != "0"
	})
	waitInSync(t, m, r)
	st := m.Info(ctx, "stats").Val()
	if field(st, "sync_full") != "2" || field(st, "sync_partial_ok") != "0" || field(st, "sync_partial_err") != "1" {
		t.Errorf("the replica back after the backlog was freed: sync_full=%s sync_partial_ok=%s sync_partial_err=%s, want 2, 0, 1",
			field(st, "sync_full"), field(st, "sync_partial_ok"), field(st, "sync_partial_err"))
	}
	if r.Get(ctx, "while-away").Val() != "1" {
		t.Errorf("while-away not on the replica")
	}
	if field(m.Info(ctx, "replication").Val(), "repl_backlog_active") != "1" {
		t.Errorf("no backlog once a replica attached again")
	}
}
