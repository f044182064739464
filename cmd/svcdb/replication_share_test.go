package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// Several replicas share one full sync (docs/replication.md): two
// replicas (a real redis-server and a svcdb) told REPLICAOF together get
// one snapshot, diskless and disk-based, as from a real redis-server
// master, which the same scenario runs against for comparison.

func TestReplicasShareOneFullSync(t *testing.T) {
	bin := buildBinary(t)
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless="+diskless, func(t *testing.T) { testReplicasShareOneFullSync(t, bin, diskless) })
	}
}

// shareSettings are the master's settings for the scenario: diskless, a
// delay longer than any test waits, ended by the second replica
// (repl-diskless-sync-max-replicas 2), so both share the snapshot however
// loaded the machine is; disk-based, enough data that the second replica
// arrives while the first one's snapshot is being written.
func shareSettings(diskless string) []string {
	if diskless == "yes" {
		return []string{"repl-diskless-sync", "yes", "repl-diskless-sync-delay", "3600", "repl-diskless-sync-max-replicas", "2"}
	}
	return []string{"repl-diskless-sync", "no"}
}

func testReplicasShareOneFullSync(t *testing.T, bin, diskless string) {
	ctx := context.Background()
	keys := 1000
	if diskless == "no" {
		keys = 400_000 // about 40 MB of snapshot: the second replica attaches while it is written
	}

	// svcdb as the master.
	_, addr, _, logs := startProcessEnv(t, bin, nil, "--http-port", "0", "--data-dir", t.TempDir())
	m := client(t, addr)
	settings := shareSettings(diskless)
	for i := 0; i < len(settings); i += 2 {
		if err := m.ConfigSet(ctx, settings[i], settings[i+1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	m3 := redis.NewClient(&redis.Options{Addr: addr, DB: 3, MaxRetries: -1})
	defer m3.Close()
	writeEveryType(t, m, "before:")
	writeEveryType(t, m3, "before3:")
	fill(t, addr, keys)
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	_, saddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	replicaOfTogether(t, addr, rsrv.Addr, saddr)
	r, s := client(t, rsrv.Addr), client(t, saddr)
	waitInSync(t, m, r)
	waitInSync(t, m, s)
	writeEveryType(t, m, "after:")
	writeEveryType(t, m3, "after3:")
	waitInSync(t, m, r)
	waitInSync(t, m, s)
	sameData(t, addr, rsrv.Addr)
	sameData(t, addr, saddr)
	sameFill(t, rsrv.Addr, keys)
	sameFill(t, saddr, keys)
	target := "replicas sockets"
	if diskless == "no" {
		target = "disk"
	}
	if n := strings.Count(logs.String(), "Starting BGSAVE for SYNC with target: "+target); n != 1 {
		t.Errorf("svcdb took %d snapshots for the two replicas' full syncs, want 1; log:\n%s", n, logs)
	}
	if got := field(m.Info(ctx, "stats").Val(), "sync_full"); got != "2" {
		t.Errorf("svcdb sync_full = %s, want 2", got)
	}

	// A real redis-server master, the same scenario: one fork.
	rm := redistest.StartServer(t, t.TempDir(), append([]string{"--save", "", "--appendonly", "no"}, dashed(settings)...)...)
	mc := client(t, rm.Addr)
	fill(t, rm.Addr, keys)
	r1 := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	r2 := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	replicaOfTogether(t, rm.Addr, r1.Addr, r2.Addr)
	waitInSync(t, mc, client(t, r1.Addr))
	waitInSync(t, mc, client(t, r2.Addr))
	st := mc.Info(ctx, "stats").Val()
	if field(st, "total_forks") != "1" || field(st, "sync_full") != "2" {
		t.Errorf("redis-server master: total_forks=%s sync_full=%s, want 1 and 2 (the scenario does not share there either)",
			field(st, "total_forks"), field(st, "sync_full"))
	}
}

// dashed turns CONFIG SET pairs into redis-server's command-line options.
func dashed(pairs []string) []string {
	out := make([]string, 0, len(pairs))
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, "--"+pairs[i], pairs[i+1])
	}
	return out
}

// fillDB is the database fill writes to: sameData compares databases 0
// and 3 key by key, too slow for this many keys; sameFill reads them back
// with MGET.
const fillDB = 5

// fill writes n keys of 100 bytes (key:<i>) into database fillDB, pipelined.
func fill(t *testing.T, addr string, n int) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: fillDB, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < n; i += 1000 {
		args := make([]any, 0, 2000)
		for k := i; k < min(i+1000, n); k++ {
			args = append(args, fmt.Sprint("key:", k), fillValue(k))
		}
		if err := c.MSet(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func fillValue(k int) string { return fmt.Sprintf("%-100d", k) }

// sameFill fails unless the replica at addr holds exactly fill's n keys.
func sameFill(t *testing.T, addr string, n int) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: fillDB, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	if got := c.DBSize(ctx).Val(); got != int64(n) {
		t.Errorf("%s: database %d has %d keys, want %d", addr, fillDB, got, n)
	}
	for i := 0; i < n; i += 1000 {
		keys := make([]string, 0, 1000)
		for k := i; k < min(i+1000, n); k++ {
			keys = append(keys, fmt.Sprint("key:", k))
		}
		vals, err := c.MGet(ctx, keys...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range vals {
			if v != fillValue(i+j) {
				t.Fatalf("%s: %s = %.40q, want %.40q", addr, keys[j], v, fillValue(i+j))
			}
		}
	}
}

// replicaOfTogether sends REPLICAOF master to every replica at once.
func replicaOfTogether(t *testing.T, master string, replicas ...string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(master)
	var wg sync.WaitGroup
	errs := make([]error, len(replicas))
	for i, addr := range replicas {
		c := client(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Do(context.Background(), "REPLICAOF", host, port).Err()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("REPLICAOF on %s: %v", replicas[i], err)
		}
	}
}
