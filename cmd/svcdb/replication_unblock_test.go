package main

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// blockedCommands are parked on a master before it becomes a replica.
var blockedCommands = []string{
	"BLPOP l1 0",
	"BRPOP l2 l3 0",
	"BLMOVE l4 dst LEFT RIGHT 0",
	"BZPOPMIN z1 0",
	"XREAD BLOCK 0 STREAMS s1 $",
	"WAIT 5 0", // one replica is attached: it waits forever
}

// roleChangeReplies parks blockedCommands on addr, sends REPLICAOF to a
// port nobody answers on, and returns what each blocked connection got
// before it was closed ("" and the error when it was not closed).
func roleChangeReplies(t *testing.T, addr string) []string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx := context.Background()
	r := client(t, addr)
	if err := r.XGroupCreateMkStream(ctx, "s1", "g", "$").Err(); err != nil {
		t.Fatal(err)
	}
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", port(addr))
	defer rsrv.Stop()
	waitFor(t, "the replica online", func() bool {
		return strings.Contains(r.Info(ctx, "replication").Val(), "state=online")
	})
	var conns []net.Conn
	for _, cmd := range blockedCommands {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(inline(cmd))); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitFor(t, "clients blocked", func() bool {
		// blocked_clients counts WAIT too, as Redis
		n, _ := strconv.Atoi(field(r.Info(ctx, "clients").Val(), "blocked_clients"))
		return n >= len(blockedCommands) &&
			strings.Contains(r.ClientList(ctx).Val(), "cmd=wait")
	})
	if got := r.Do(ctx, "REPLICAOF", "127.0.0.1", deadPort).Val(); got != "OK" {
		t.Fatalf("REPLICAOF: %v", got)
	}
	var replies []string
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c) // until the server closes it
		if err != nil {
			t.Errorf("%s: connection not closed after %q: %v", blockedCommands[i], got, err)
		}
		replies = append(replies, string(got))
	}
	if v := field(r.Info(ctx, "clients").Val(), "blocked_clients"); v != "0" {
		t.Errorf("blocked_clients after REPLICAOF: %s", v)
	}
	if err := r.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	return replies
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// inline encodes cmd (space-separated words) as a RESP array.
func inline(cmd string) string {
	words := strings.Fields(cmd)
	out := "*" + strconv.Itoa(len(words)) + "\r\n"
	for _, w := range words {
		out += "$" + strconv.Itoa(len(w)) + "\r\n" + w + "\r\n"
	}
	return out
}

// TestReplicaOfUnblocksBlockedClients: REPLICAOF host port on a master
// ends every blocking command with Redis 7.0's -UNBLOCKED error and closes
// those connections (replicationSetMaster → disconnectAllBlockedClients),
// byte for byte as a real redis-server does.
func TestReplicaOfUnblocksBlockedClients(t *testing.T) {
	bin := buildBinary(t)
	cmd, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	defer stop(t, cmd)
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	want := roleChangeReplies(t, rsrv.Addr)
	got := roleChangeReplies(t, addr)
	const unblocked = "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"
	for i := range blockedCommands {
		if want[i] != unblocked {
			t.Errorf("redis-server %s: %q", blockedCommands[i], want[i])
		}
		if got[i] != want[i] {
			t.Errorf("%s: %q, redis-server %q", blockedCommands[i], got[i], want[i])
		}
	}
}
