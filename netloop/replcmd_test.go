package netloop

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/shard"
)

// TestHotPathAllocsWithReplication: the replication role's check costs no
// allocation, on a master and on a replica (reads served, writes refused
// with Redis' -READONLY text).
func TestHotPathAllocsWithReplication(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	table := command.New()
	rt, err := shard.New(shard.Config{Shards: 4}, table)
	if err != nil {
		t.Fatal(err)
	}
	repl := replication.New(replication.Config{Target: rt.NewReplicaTarget(), RetryMin: time.Hour, RetryMax: time.Hour})
	srv := New(Config{Replication: repl}, table, rt)
	c := srv.newClient(nil)
	c.ctx.Now = time.Now().UnixMilli()
	h := &hotPath{srv: srv, c: c, rt: rt}
	h.run(t, []byte(hotSetup))
	check := func(role string, cmds ...string) {
		t.Helper()
		for _, name := range cmds {
			for _, hc := range hotCommands {
				if hc.name != name {
					continue
				}
				buf := []byte(strings.Repeat(hc.in, 16))
				h.run(t, buf)
				if n := testing.AllocsPerRun(500, func() { h.run(t, buf) }); n != 0 {
					t.Errorf("%s on a %s: %v allocs per run; want 0", hc.name, role, n)
				}
			}
		}
	}
	check("master", "GET", "SET", "HGET", "LPUSH+RPOP")

	l, err := net.Listen("tcp", "127.0.0.1:0") // closed at once: the link stays down
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := repl.SetMaster("127.0.0.1", port); err != nil {
		t.Fatal(err)
	}
	defer repl.SetMasterNone()
	check("replica", "GET", "HGET", "ZSCORE")
	if got := string(h.run(t, []byte(mb("SET", "key:000042", "x")))); got != replication.ErrReadOnly {
		t.Errorf("SET on a replica: %q", got)
	}
	if got := string(h.run(t, []byte(mb("GET", "key:000042")))); got != "$10\r\nvalue:0042\r\n" {
		t.Errorf("GET on a replica: %q", got)
	}
	// A batch open for a shard takes no write on a replica either.
	in := mb("GET", "key:000042") + mb("SET", "key:000042", "x") + mb("GET", "key:000042")
	if got := string(h.run(t, []byte(in))); got != "$10\r\nvalue:0042\r\n"+replication.ErrReadOnly+"$10\r\nvalue:0042\r\n" {
		t.Errorf("pipelined GET SET GET on a replica: %q", got)
	}
}
