package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// Replication tests: the real binary replicates from a real redis-server
// 7.0 master (docs/replication.md).

// writeEveryType writes one key of every type (and a few variants: an
// integer string, a key with a TTL, a big hash, a stream with a group)
// under prefix into c's current database, and a transaction.
func writeEveryType(t *testing.T, c *redis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	p := func(s string) string { return prefix + s }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, p("str"), "hello", 0).Err())
	must(c.Set(ctx, p("int"), "12345", 0).Err())
	must(c.Incr(ctx, p("int")).Err())
	must(c.Set(ctx, p("ttl"), "expiring", time.Hour).Err())
	must(c.RPush(ctx, p("list"), "a", "b", "c", "d").Err())
	must(c.LPop(ctx, p("list")).Err())
	must(c.SAdd(ctx, p("intset"), 1, 2, 3, 4).Err())
	must(c.SAdd(ctx, p("set"), "x", "y", "z").Err())
	must(c.SRem(ctx, p("set"), "y").Err())
	must(c.ZAdd(ctx, p("zset"), redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"}).Err())
	must(c.ZIncrBy(ctx, p("zset"), 10, "b").Err())
	must(c.HSet(ctx, p("hash"), "f1", "v1", "f2", "v2").Err())
	big := make([]any, 0, 1200)
	for i := range 600 {
		big = append(big, "field"+strconv.Itoa(i), strings.Repeat("v", i%100))
	}
	must(c.HSet(ctx, p("bighash"), big...).Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: p("stream"), ID: "1-1", Values: []any{"k", "v"}}).Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: p("stream"), ID: "2-1", Values: []any{"k2", "v2"}}).Err())
	must(c.XGroupCreate(ctx, p("stream"), "grp", "0").Err())
	must(c.Expire(ctx, p("hash"), 2*time.Hour).Err())
	_, err := c.TxPipelined(ctx, func(pp redis.Pipeliner) error {
		pp.Set(ctx, p("tx1"), "1", 0)
		pp.RPush(ctx, p("txlist"), "q")
		return nil
	})
	must(err)
	must(c.Set(ctx, p("gone"), "x", 0).Err())
	must(c.Del(ctx, p("gone")).Err())
}

// dump describes every key of one database: type and contents, with
// whether it has a TTL.
func dump(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		typ := c.Type(ctx, k).Val()
		var v any
		switch typ {
		case "string":
			v = c.Get(ctx, k).Val()
		case "list":
			v = c.LRange(ctx, k, 0, -1).Val()
		case "set":
			m := c.SMembers(ctx, k).Val()
			slices.Sort(m)
			v = m
		case "zset":
			v = c.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "hash":
			v = c.HGetAll(ctx, k).Val()
		case "stream":
			v = fmt.Sprint(c.XRange(ctx, k, "-", "+").Val(), c.XInfoGroups(ctx, k).Val())
		}
		ttl := c.PTTL(ctx, k).Val() > 0
		out[k] = fmt.Sprintf("%s %v ttl=%v", typ, v, ttl)
	}
	return out
}

// sameData fails unless the replica holds exactly the master's keys in
// databases 0 and 3.
func sameData(t *testing.T, master, replica string) {
	const pass = "mpass" // the masters' requirepass (ignored by one without)
	t.Helper()
	for _, db := range []int{0, 3} {
		m := redis.NewClient(&redis.Options{Addr: master, Password: pass, DB: db, MaxRetries: -1})
		r := redis.NewClient(&redis.Options{Addr: replica, DB: db, MaxRetries: -1})
		want, got := dump(t, m), dump(t, r)
		m.Close()
		r.Close()
		if len(want) == 0 && db == 0 {
			t.Fatal("the master has no keys: the test wrote nothing")
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("db %d key %q: replica has %.80q, master %.80q", db, k, got[k], w)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("db %d key %q: on the replica only (%.80q)", db, k, got[k])
			}
		}
	}
}

// waitInSync waits until the replica's link is up and its offset is the
// master's.
func waitInSync(t *testing.T, master, replica *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		mi := master.Info(context.Background(), "replication").Val()
		ri := replica.Info(context.Background(), "replication").Val()
		mo, ro := field(mi, "master_repl_offset"), field(ri, "slave_repl_offset")
		if field(ri, "master_link_status") == "up" && mo != "" && mo == ro {
			return
		}
		last = ri
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("replica not in sync after 30 s:\n%s", last)
}

func field(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startRedisAt restarts a redis-server on a given port (redistest picks a
// fresh port each time; a master restarted in place must keep its port).
func startRedisAt(t *testing.T, port int, dir string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(err) // redistest.StartServer checked it first
	}
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), MaxRetries: -1})
	defer c.Close()
	waitFor(t, "the restarted redis-server", func() bool { return c.Ping(context.Background()).Val() == "PONG" })
	return cmd
}

// setPass sets the master's requirepass to "mpass".
func setPass(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	if err := c.ConfigSet(context.Background(), "requirepass", "mpass").Err(); err != nil {
		t.Fatal(err)
	}
}

func TestReplicaOfRedisMaster(t *testing.T) {
	bin := buildBinary(t)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"disk", []string{"--repl-diskless-sync", "no"}},
		{"diskless", []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}},
	} {
		t.Run(mode.name, func(t *testing.T) { testReplicaOfRedis(t, bin, mode.args) })
	}
}

func testReplicaOfRedis(t *testing.T, bin string, modeArgs []string) {
	ctx := context.Background()
	// requirepass is set once the server answers (redistest's readiness
	// PING has no password): the replica must AUTH with masterauth.
	args := append([]string{"--save", "", "--appendonly", "no", "--repl-ping-replica-period", "1"}, modeArgs...)
	mdir := t.TempDir()
	msrv := redistest.StartServer(t, mdir, args...)
	_, mportS, _ := net.SplitHostPort(msrv.Addr)
	mport, _ := strconv.Atoi(mportS)
	setPass(t, msrv.Addr)
	m := redis.NewClient(&redis.Options{Addr: msrv.Addr, Password: "mpass", MaxRetries: -1})
	defer m.Close()
	m3 := redis.NewClient(&redis.Options{Addr: msrv.Addr, Password: "mpass", DB: 3, MaxRetries: -1})
	defer m3.Close()
	writeEveryType(t, m, "before:")
	writeEveryType(t, m3, "before3:")

	cmd, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	r := client(t, addr)
	if err := r.ConfigSet(ctx, "masterauth", "mpass").Err(); err != nil {
		t.Fatal(err)
	}
	if got := r.Do(ctx, "ROLE").Val(); fmt.Sprint(got) != "[master 0 []]" {
		t.Errorf("ROLE of a master: %v", got)
	}
	if got := r.Do(ctx, "REPLICAOF", "127.0.0.1", mportS).Val(); got != "OK" {
		t.Fatalf("REPLICAOF: %v", got)
	}
	if got := r.Do(ctx, "REPLICAOF", "127.0.0.1", mportS).Val(); got != "OK Already connected to specified master" {
		t.Errorf("REPLICAOF again: %v", got)
	}
	waitInSync(t, m, r)
	writeEveryType(t, m, "after:")
	writeEveryType(t, m3, "after3:")
	if err := m.Del(ctx, "before:str").Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, r)
	sameData(t, msrv.Addr, addr)
	// WAIT on the master sends REPLCONF GETACK and counts the replicas whose
	// ACK reached its offset: exact offsets, or WAIT times out with 0.
	if err := m.Set(ctx, "waited", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n := m.Wait(ctx, 1, 10*time.Second).Val(); n != 1 {
		t.Errorf("WAIT 1 on the master: %d replicas acknowledged", n)
	}

	// A replica refuses writes, answers reads, and says what it is.
	if err := r.Set(ctx, "x", "1", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Errorf("SET on a replica: %v", err)
	}
	role := r.Do(ctx, "ROLE").Val().([]any)
	if len(role) != 5 || role[0] != "slave" || role[1] != "127.0.0.1" || role[2] != int64(mport) || role[3] != "connected" {
		t.Errorf("ROLE of a replica: %v", role)
	}
	ri := r.Info(ctx, "replication").Val()
	for _, f := range []string{"role:slave", "master_link_status:up", "master_sync_in_progress:0", "slave_read_only:1", "master_replid:" + field(m.Info(ctx, "replication").Val(), "master_replid")} {
		if !strings.Contains(ri, f+"\r\n") {
			t.Errorf("INFO replication lacks %q:\n%s", f, ri)
		}
	}

	// A dropped link resumes with a partial resync (+CONTINUE).
	if err := m.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	writeEveryType(t, m, "whiledown:")
	waitFor(t, "a partial resync", func() bool { return field(m.Info(ctx, "stats").Val(), "sync_partial_ok") == "1" })
	waitInSync(t, m, r)
	sameData(t, msrv.Addr, addr)
	if got := field(m.Info(ctx, "stats").Val(), "sync_full"); got != "1" {
		t.Errorf("master's sync_full after a partial resync: %s, want 1", got)
	}

	// The master killed: the link goes down, the stale data is served; the
	// master back on its port (empty: no persistence) syncs it again.
	msrv.Stop()
	waitFor(t, "master_link_status:down", func() bool {
		return field(r.Info(ctx, "replication").Val(), "master_link_status") == "down"
	})
	if v := r.Get(ctx, "after:str").Val(); v != "hello" {
		t.Errorf("stale read while the master is down: %q", v)
	}
	startRedisAt(t, mport, mdir, args...)
	setPass(t, msrv.Addr)
	m2 := redis.NewClient(&redis.Options{Addr: msrv.Addr, Password: "mpass", MaxRetries: -1})
	defer m2.Close()
	writeEveryType(t, m2, "restarted:")
	waitInSync(t, m2, r)
	sameData(t, msrv.Addr, addr)

	// Promoted: writable, data kept.
	if got := r.Do(ctx, "REPLICAOF", "NO", "ONE").Val(); got != "OK" {
		t.Fatalf("REPLICAOF NO ONE: %v", got)
	}
	if err := r.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Errorf("SET after REPLICAOF NO ONE: %v", err)
	}
	if v := r.Get(ctx, "restarted:str").Val(); v != "hello" {
		t.Errorf("data after promotion: %q", v)
	}
	if got := field(r.Info(ctx, "replication").Val(), "role"); got != "master" {
		t.Errorf("role after promotion: %s", got)
	}
	stop(t, cmd)
}

// TestReplicaRefusals: a replica whose master is unreachable serves stale
// data or -MASTERDOWN as replica-serve-stale-data says, refuses writes with
// -READONLY (inside MULTI too) unless replica-read-only is off, and REPLICAOF
// checks its port as Redis.
func TestReplicaRefusals(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	cmd, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	r := client(t, addr)
	if err := r.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0") // a port nobody answers on once closed
	if err != nil {
		t.Fatal(err)
	}
	deadPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", "notaport").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Errorf("REPLICAOF with a bad port: %v", err)
	}
	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", "70000").Err(); err == nil || err.Error() != "ERR Invalid master port" {
		t.Errorf("REPLICAOF with port 70000: %v", err)
	}
	if got := r.Do(ctx, "SLAVEOF", "127.0.0.1", deadPort).Val(); got != "OK" {
		t.Fatalf("SLAVEOF: %v", got)
	}
	if v := r.Get(ctx, "k").Val(); v != "v" {
		t.Errorf("stale read: %q", v)
	}
	if err := r.Set(ctx, "k", "w", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Errorf("SET: %v", err)
	}
	role := r.Do(ctx, "ROLE").Val().([]any)
	if len(role) != 5 || role[0] != "slave" || role[4] != int64(-1) || role[3] == "connected" {
		t.Errorf("ROLE while the master is unreachable: %v", role)
	}
	info := r.Info(ctx, "replication").Val()
	for _, f := range []string{"master_link_status:down", "master_last_io_seconds_ago:-1", "master_link_down_since_seconds:-1", "slave_repl_offset:0", "slave_read_repl_offset:0"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Errorf("INFO replication lacks %q:\n%s", f, info)
		}
	}
	// In MULTI the write is refused when queued and EXEC aborts.
	want := "+OK\r\n-READONLY You can't write against a read only replica.\r\n-EXECABORT Transaction discarded because of previous errors.\r\n"
	if got := readN(t, addr, "MULTI\r\nSET k w\r\nEXEC\r\n", len(want)); got != want {
		t.Errorf("MULTI SET EXEC: %q, want %q", got, want)
	}

	if err := r.ConfigSet(ctx, "replica-serve-stale-data", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Get(ctx, "k").Err(); err == nil || err.Error() != "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'." {
		t.Errorf("GET with serve-stale-data no: %v", err)
	}
	if err := r.Info(ctx, "replication").Err(); err != nil { // INFO has the stale flag
		t.Errorf("INFO with serve-stale-data no: %v", err)
	}
	if err := r.ConfigSet(ctx, "slave-serve-stale-data", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.ConfigSet(ctx, "replica-read-only", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(ctx, "k", "w", 0).Err(); err != nil {
		t.Errorf("SET with replica-read-only no: %v", err)
	}
	if got := r.Do(ctx, "REPLICAOF", "no", "one").Val(); got != "OK" {
		t.Fatalf("REPLICAOF no one: %v", got)
	}
	if v := r.Get(ctx, "k").Val(); v != "w" {
		t.Errorf("after promotion: %q", v)
	}
	stop(t, cmd)
}

// TestReplicaOwnAOF: a replica with appendonly yes keeps what the master
// sent across its own restart: after the full sync its append-only file is
// rewritten from the loaded dataset (it would hold only the FLUSHALL), and
// the stream's commands are appended to it.
func TestReplicaOwnAOF(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	msrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--repl-diskless-sync", "no")
	_, mport, _ := net.SplitHostPort(msrv.Addr)
	m := client(t, msrv.Addr)
	writeEveryType(t, m, "before:")
	dir := t.TempDir()
	cmd, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", dir, "--appendonly", "yes")
	r := client(t, addr)
	// REPLICAOF at once: the rewrite appendonly yes starts at boot may still
	// run when the sync ends, and the one after the sync must wait for it.
	rewrites := field(r.Info(ctx, "persistence").Val(), "aof_rewrites")
	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, r)
	writeEveryType(t, m, "after:")
	waitInSync(t, m, r)
	waitFor(t, "the AOF rewrite after the sync", func() bool {
		p := r.Info(ctx, "persistence").Val()
		n, _ := strconv.Atoi(field(p, "aof_rewrites"))
		n0, _ := strconv.Atoi(rewrites)
		return n > n0 && field(p, "aof_rewrite_in_progress") == "0"
	})
	stop(t, cmd)
	// Restarted, it is a master again (REPLICAOF is not persisted) with
	// every key it had.
	_, addr2, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", dir, "--appendonly", "yes")
	r2 := client(t, addr2)
	waitFor(t, "the restarted replica to load", func() bool { return r2.Ping(ctx).Err() == nil })
	want, got := dump(t, m), dump(t, r2)
	if len(want) == 0 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("after a restart the replica has %d keys, the master %d", len(got), len(want))
		for k, w := range want {
			if got[k] != w {
				t.Errorf("key %q: %.80q, want %.80q", k, got[k], w)
			}
		}
	}
}

// TestReplicaContinuesAfterMasterRestart: a Redis 7.0 master restarted from
// its RDB keeps its old replication ID as its secondary one, so the replica
// continues with +CONTINUE <new ID> (PSYNC2) instead of a full sync, and
// takes the master's new ID and secondary ID as its own.
func TestReplicaContinuesAfterMasterRestart(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	mdir := t.TempDir()
	args := []string{"--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"}
	msrv := redistest.StartServer(t, mdir, args...)
	_, mportS, _ := net.SplitHostPort(msrv.Addr)
	mport, _ := strconv.Atoi(mportS)
	setPass(t, msrv.Addr)
	m := redis.NewClient(&redis.Options{Addr: msrv.Addr, Password: "mpass", MaxRetries: -1})
	defer m.Close()
	writeEveryType(t, m, "before:")
	_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	r := client(t, addr)
	if err := r.ConfigSet(ctx, "masterauth", "mpass").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", mportS).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, r)
	writeEveryType(t, m, "after:")
	waitInSync(t, m, r)
	oldID := field(m.Info(ctx, "replication").Val(), "master_replid")
	// SHUTDOWN SAVE writes the RDB with the replication ID and offset.
	_ = m.ShutdownSave(ctx).Err() // the connection closes: no reply
	<-msrv.Exited()
	startRedisAt(t, mport, mdir, args...)
	setPass(t, msrv.Addr)
	m2 := redis.NewClient(&redis.Options{Addr: msrv.Addr, Password: "mpass", MaxRetries: -1})
	defer m2.Close()
	writeEveryType(t, m2, "restarted:")
	waitInSync(t, m2, r)
	st := m2.Info(ctx, "stats").Val()
	if field(st, "sync_partial_ok") != "1" || field(st, "sync_full") != "0" {
		t.Errorf("after the master's restart: sync_partial_ok %s, sync_full %s; want a partial resync",
			field(st, "sync_partial_ok"), field(st, "sync_full"))
	}
	mi, ri := m2.Info(ctx, "replication").Val(), r.Info(ctx, "replication").Val()
	if field(mi, "master_replid2") != oldID {
		t.Fatalf("the restarted master's replid2 %s, want the old ID %s", field(mi, "master_replid2"), oldID)
	}
	for _, f := range []string{"master_replid", "master_replid2", "second_repl_offset"} {
		if field(ri, f) != field(mi, f) {
			t.Errorf("replica's %s %s, master's %s", f, field(ri, f), field(mi, f))
		}
	}
	sameData(t, msrv.Addr, addr)
}
