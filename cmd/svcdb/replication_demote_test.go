package main

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// A demoted master continues from the replica promoted in its place
// (docs/replication.md, "A demoted master"): REPLICAOF host port on a
// master sends PSYNC <own replid> <own offset+1>, and the promoted replica,
// which holds the old master's ID as its secondary one, answers +CONTINUE.

// syncStats returns INFO stats' sync_full and sync_partial_ok.
func syncStats(t *testing.T, c *redis.Client) (full, partialOK int) {
	t.Helper()
	info := c.Info(context.Background(), "stats").Val()
	full, err1 := strconv.Atoi(field(info, "sync_full"))
	partialOK, err2 := strconv.Atoi(field(info, "sync_partial_ok"))
	if err1 != nil || err2 != nil {
		t.Fatalf("INFO stats without sync_full or sync_partial_ok:\n%s", info)
	}
	return full, partialOK
}

// switchover promotes replica and makes master its replica, then checks
// that the old master continued with a partial resync (the promoted one's
// sync_partial_ok grows by one, its sync_full does not) and holds every key
// the promoted one has, including those written after the promotion.
func switchover(t *testing.T, master, replica *redis.Client, maddr, raddr, tag string) {
	t.Helper()
	ctx := context.Background()
	full0, partial0 := syncStats(t, replica)
	if err := replica.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	writeEveryType(t, replica, tag+":")
	r3 := redis.NewClient(&redis.Options{Addr: raddr, DB: 3, MaxRetries: -1})
	defer r3.Close()
	writeEveryType(t, r3, tag+"3:")
	for i := range 200 {
		if err := replica.Incr(ctx, "counter").Err(); err != nil {
			t.Fatal(err)
		}
		if err := replica.Set(ctx, tag+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, rport, _ := net.SplitHostPort(raddr)
	if err := master.Do(ctx, "REPLICAOF", "127.0.0.1", rport).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, replica, master)
	full1, partial1 := syncStats(t, replica)
	if full1 != full0 || partial1 != partial0+1 {
		t.Errorf("the promoted replica served sync_full %d -> %d, sync_partial_ok %d -> %d; want a partial resync only",
			full0, full1, partial0, partial1)
	}
	sameData(t, raddr, maddr)
	// The old master follows the new one's stream from there.
	if err := replica.Set(ctx, tag+"-after-rejoin", "yes", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, replica, master)
	if got := master.Get(ctx, tag+"-after-rejoin").Val(); got != "yes" {
		t.Errorf("%s-after-rejoin on the old master: %q", tag, got)
	}
	if got := field(master.Info(ctx, "replication").Val(), "master_replid"); got != field(replica.Info(ctx, "replication").Val(), "master_replid") {
		t.Errorf("the old master's master_replid is %s, not the new master's", got)
	}
}

// TestDemotedMasterContinues: svcdb master A, svcdb replica B; B promoted,
// A made B's replica continues with +CONTINUE.
func TestDemotedMasterContinues(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	_, aaddr, alog := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, aport, _ := net.SplitHostPort(aaddr)
	a := client(t, aaddr)
	a3 := redis.NewClient(&redis.Options{Addr: aaddr, DB: 3, MaxRetries: -1})
	defer a3.Close()
	writeEveryType(t, a, "before:")
	_, baddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	b := client(t, baddr)
	if err := b.Do(ctx, "REPLICAOF", "127.0.0.1", aport).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, a, b)
	writeEveryType(t, a, "streamed:")
	writeEveryType(t, a3, "streamed3:")
	waitInSync(t, a, b)
	switchover(t, a, b, aaddr, baddr, "promoted")
	if t.Failed() {
		t.Logf("old master's log:\n%s", alog)
	}
	// And back: A promoted, B (a demoted master again) continues from A.
	switchover(t, b, a, baddr, aaddr, "back")
}

// TestDemotedMasterContinuesFromRedis: a real redis-server replica of a
// svcdb master is promoted; the svcdb master made its replica continues
// with +CONTINUE (Redis holds svcdb's ID as its master_replid2).
func TestDemotedMasterContinuesFromRedis(t *testing.T) {
	bin := buildBinary(t)
	_, aaddr, alog := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, aport, _ := net.SplitHostPort(aaddr)
	a := client(t, aaddr)
	writeEveryType(t, a, "before:")
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", aport)
	r := client(t, rsrv.Addr)
	waitInSync(t, a, r)
	a3 := redis.NewClient(&redis.Options{Addr: aaddr, DB: 3, MaxRetries: -1})
	defer a3.Close()
	writeEveryType(t, a, "streamed:")
	writeEveryType(t, a3, "streamed3:")
	waitInSync(t, a, r)
	switchover(t, a, r, aaddr, rsrv.Addr, "promoted")
	if t.Failed() {
		t.Logf("svcdb's log:\n%s", alog)
	}
}
