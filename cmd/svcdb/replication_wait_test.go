package main

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// WAIT on a master that never had a replica blocks as in Redis: for its
// timeout (forever with 0), as a blocked client (INFO blocked_clients,
// CLIENT LIST flag b, CLIENT UNBLOCK), and a replica that attaches ends
// it. The same assertions run against a real redis-server.

func TestWaitBlocksWithoutReplicas(t *testing.T) {
	bin := buildBinary(t)
	_, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	for _, m := range []struct{ name, addr string }{{"svcdb", addr}, {"redis-server", rsrv.Addr}} {
		t.Run(m.name, func(t *testing.T) { testWaitBlocks(t, m.addr) })
	}
}

// pendingWait is a WAIT sent on its own connection, its reply to come.
type pendingWait struct {
	id    int64
	reply chan error // nil error: the count is in n
	n     int64
}

func startWait(t *testing.T, addr string, numreplicas, ms int) *pendingWait {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: -1, PoolSize: 1})
	t.Cleanup(func() { c.Close() })
	id, err := c.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := &pendingWait{id: id, reply: make(chan error, 1)}
	go func() {
		var err error
		p.n, err = c.Do(ctx, "WAIT", numreplicas, ms).Int64()
		p.reply <- err
	}()
	return p
}

func (p *pendingWait) result(t *testing.T) (int64, error) {
	t.Helper()
	select {
	case err := <-p.reply:
		return p.n, err
	case <-time.After(30 * time.Second):
		t.Fatal("WAIT did not return within 30 s")
		return 0, nil
	}
}

func testWaitBlocks(t *testing.T, addr string) {
	ctx := context.Background()
	m := client(t, addr)
	if err := m.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// WAIT 0 answers at once; WAIT 1 100 after its timeout.
	if n, err := m.Do(ctx, "WAIT", 0, 0).Int64(); err != nil || n != 0 {
		t.Errorf("WAIT 0 0 = %d, %v", n, err)
	}
	start := time.Now()
	if n, err := m.Do(ctx, "WAIT", 1, 100).Int64(); err != nil || n != 0 || time.Since(start) < 100*time.Millisecond {
		t.Errorf("WAIT 1 100 = %d, %v after %v; want 0 after at least 100 ms", n, err, time.Since(start))
	}

	blocked := func() string { return field(m.Info(ctx, "clients").Val(), "blocked_clients") }
	flagsOf := func(id int64) string {
		for _, line := range strings.Split(m.ClientList(ctx).Val(), "\n") {
			if strings.HasPrefix(line, "id="+strconv.FormatInt(id, 10)+" ") {
				for _, f := range strings.Fields(line) {
					if v, ok := strings.CutPrefix(f, "flags="); ok {
						return v
					}
				}
			}
		}
		return "(no such client)"
	}
	// WAIT 1 0 blocks: a blocked client; CLIENT UNBLOCK ends it with the
	// count so far, or with UNBLOCKED.
	for _, how := range []string{"TIMEOUT", "ERROR"} {
		p := startWait(t, addr, 1, 0)
		waitFor(t, "WAIT 1 0 to block", func() bool { return blocked() == "1" })
		if f := flagsOf(p.id); f != "b" {
			t.Errorf("CLIENT LIST flags of the client in WAIT: %q, want b", f)
		}
		if n, err := m.Do(ctx, "CLIENT", "UNBLOCK", p.id, how).Int64(); err != nil || n != 1 {
			t.Errorf("CLIENT UNBLOCK %s = %d, %v", how, n, err)
		}
		n, err := p.result(t)
		switch how {
		case "TIMEOUT":
			if err != nil || n != 0 {
				t.Errorf("WAIT ended by CLIENT UNBLOCK TIMEOUT: %d, %v; want 0", n, err)
			}
		case "ERROR":
			if err == nil || err.Error() != "UNBLOCKED client unblocked via CLIENT UNBLOCK" {
				t.Errorf("WAIT ended by CLIENT UNBLOCK ERROR: %d, %v", n, err)
			}
		}
		if b := blocked(); b != "0" {
			t.Errorf("blocked_clients = %s after the WAIT ended", b)
		}
	}

	// A replica that attaches ends a pending WAIT 1 0 with 1.
	p := startWait(t, addr, 1, 0)
	waitFor(t, "WAIT 1 0 to block", func() bool { return blocked() == "1" })
	host, port, _ := net.SplitHostPort(addr)
	replica := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", host, port)
	if n, err := p.result(t); err != nil || n != 1 {
		t.Errorf("WAIT 1 0 when a replica attached: %d, %v; want 1", n, err)
	}
	if client(t, replica.Addr).Get(ctx, "k").Val() != "v" {
		t.Errorf("the replica WAIT counted lacks the write made before it")
	}
}
