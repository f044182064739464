package main

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// Chained replicas (docs/replication.md, "Chained replicas"): a svcdb
// replica serves its own replicas the master's stream verbatim, at the
// master's offsets and under its ID.

// writeLoad writes to c until stop is closed: INCRs of one counter (a
// command applied twice or lost shows in its value), SETs of fresh keys and
// transactions. It returns when the load ended.
func writeLoad(t *testing.T, c *redis.Client, stop <-chan struct{}) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Incr(ctx, "load:counter").Err(); err != nil {
				t.Errorf("INCR under load: %v", err)
				return
			}
			if err := c.Set(ctx, "load:"+strconv.Itoa(i), i, 0).Err(); err != nil {
				t.Errorf("SET under load: %v", err)
				return
			}
			if i%10 == 0 {
				_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Incr(ctx, "load:txcounter")
					p.RPush(ctx, "load:txlist", i)
					return nil
				})
				if err != nil {
					t.Errorf("MULTI under load: %v", err)
					return
				}
			}
		}
	}()
	return wg.Wait
}

// waitStats waits until c's INFO stats show sync_full full and
// sync_partial_ok partial.
func waitStats(t *testing.T, c *redis.Client, who string, full, partial int) {
	t.Helper()
	var gf, gp int
	waitFor(t, who+" sync_full "+strconv.Itoa(full)+" sync_partial_ok "+strconv.Itoa(partial), func() bool {
		gf, gp = syncStats(t, c)
		return gf == full && gp == partial
	})
}

// TestChainedReplicas: svcdb master M, svcdb replica S of M, and two
// replicas of S: a real redis-server R (diskless full sync from S) and a
// svcdb S2 (disk-based), both synced while M takes writes. Every key is
// compared; R's offset is M's. S's link to M broken: R and S2 stay
// attached and continue. S2 continues from M and back from S. S promoted:
// R and S2 continue from it with +CONTINUE.
func TestChainedReplicas(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	_, maddr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(maddr)
	m := client(t, maddr)
	m3 := redis.NewClient(&redis.Options{Addr: maddr, DB: 3, MaxRetries: -1})
	defer m3.Close()
	writeEveryType(t, m, "before:")
	writeEveryType(t, m3, "before3:")

	_, saddr, slog := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	_, sport, _ := net.SplitHostPort(saddr)
	s := client(t, saddr)
	if err := s.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, m, s)
	defer func() {
		if t.Failed() {
			t.Logf("the middle replica's log:\n%s", slog)
		}
	}()

	// Both sub-replicas sync in full from S while M takes writes.
	stop := make(chan struct{})
	load := redis.NewClient(&redis.Options{Addr: maddr, MaxRetries: -1})
	defer load.Close()
	loadDone := writeLoad(t, load, stop)
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", sport)
	r := client(t, rsrv.Addr)
	waitFor(t, "redis-server's link to the svcdb replica", func() bool {
		return field(r.Info(ctx, "replication").Val(), "master_link_status") == "up"
	})
	if err := s.ConfigSet(ctx, "repl-diskless-sync", "no").Err(); err != nil {
		t.Fatal(err)
	}
	_, s2addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	s2 := client(t, s2addr)
	if err := s2.Do(ctx, "REPLICAOF", "127.0.0.1", sport).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the svcdb sub-replica's link", func() bool {
		return field(s2.Info(ctx, "replication").Val(), "master_link_status") == "up"
	})
	writeEveryType(t, m, "after:")
	writeEveryType(t, m3, "after3:")
	close(stop)
	loadDone()
	waitInSync(t, m, s)
	waitInSync(t, m, r) // the same offsets as the master's
	waitInSync(t, s, s2)
	sameData(t, maddr, rsrv.Addr)
	sameData(t, maddr, s2addr)
	if n, _ := strconv.Atoi(m.Get(ctx, "load:counter").Val()); n == 0 {
		t.Error("the write load wrote nothing")
	}
	info := s.Info(ctx, "replication").Val()
	if got := field(info, "connected_slaves"); got != "2" {
		t.Errorf("the middle replica's connected_slaves = %s", got)
	}
	for _, c := range []*redis.Client{s, r, s2} {
		if got, want := field(c.Info(ctx, "replication").Val(), "master_replid"), field(m.Info(ctx, "replication").Val(), "master_replid"); got != want {
			t.Errorf("master_replid %s down the chain, the master's %s", got, want)
		}
	}
	mFull, mPartial := syncStats(t, m)
	waitStats(t, s, "the middle replica", 2, 0)

	// S's link to M breaks: its replicas stay attached and continue.
	if err := s.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
		t.Fatal(err)
	}
	writeEveryType(t, m, "afterbreak:")
	waitStats(t, m, "the master", mFull, mPartial+1)
	waitInSync(t, m, r)
	waitInSync(t, m, s2)
	sameData(t, maddr, rsrv.Addr)
	waitStats(t, s, "the middle replica (its replicas stayed)", 2, 0)

	// A sub-replica continues from the master itself, and back from S:
	// the same ID and offsets at both.
	if err := s2.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitStats(t, m, "the master", mFull, mPartial+2)
	waitInSync(t, m, s2)
	if err := s2.Do(ctx, "REPLICAOF", "127.0.0.1", sport).Err(); err != nil {
		t.Fatal(err)
	}
	waitStats(t, s, "the middle replica", 2, 1)
	waitInSync(t, s, s2)

	// S promoted: R and S2 learn its new ID and continue.
	if err := s.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	writeEveryType(t, s, "promoted:")
	waitStats(t, s, "the promoted replica", 2, 3)
	waitInSync(t, s, r)
	waitInSync(t, s, s2)
	sameData(t, saddr, rsrv.Addr)
	sameData(t, saddr, s2addr)
	sid := field(s.Info(ctx, "replication").Val(), "master_replid")
	for _, c := range []*redis.Client{r, s2} {
		if got := field(c.Info(ctx, "replication").Val(), "master_replid"); got != sid {
			t.Errorf("a sub-replica's master_replid %s, the promoted replica's %s", got, sid)
		}
	}
}

// firstLine sends req on a new connection to addr and returns the first
// line of the answer, without its CRLF.
func firstLine(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", req, err)
	}
	return strings.TrimRight(line, "\r\n")
}

// TestChainedReplicaRefusesWhileLinkDown: a replica whose own link is not
// up answers SYNC and PSYNC with -NOMASTERLINK, as Redis' syncCommand.
func TestChainedReplicaRefusesWhileLinkDown(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0") // a port where no master answers
	if err != nil {
		t.Fatal(err)
	}
	_, dead, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	c := client(t, addr)
	if err := c.Do(ctx, "REPLICAOF", "127.0.0.1", dead).Err(); err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{"PSYNC ? -1\r\n", "SYNC\r\n"} {
		if got, want := firstLine(t, addr, req), "-NOMASTERLINK Can't SYNC while not connected with my master"; got != want {
			t.Errorf("%q on a replica whose link is down: %q, want %q", req, got, want)
		}
	}
}
