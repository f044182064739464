package main

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// noReplicasCases are run on a master once its only replica went away,
// with min-replicas-to-write 1: "exec" ends a transaction queued while the
// replica was good, the others are EVAL/FCALL calls.
var noReplicasCases = [][]any{
	{"exec", "SET", "t", "1"},
	{"exec", "GET", "t"},
	{"EVAL", "#!lua\nreturn redis.call('set','a','b')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get','a')", "0"},
	{"EVAL", "return redis.call('set','a','b')", "0"},
	{"EVAL", "return redis.pcall('set','a','b')", "0"},
	{"EVAL", "return redis.call('get','a')", "0"},
	{"FCALL", "w", "0"},
	{"FCALL_RO", "r", "0"},
	{"FCALL", "r", "0"},
}

// noReplicasReplies runs noReplicasCases on the master at maddr and returns
// each reply (value or error) as text.
func noReplicasReplies(t *testing.T, maddr string) []string {
	t.Helper()
	ctx := context.Background()
	_, mport, _ := net.SplitHostPort(maddr)
	m := client(t, maddr)
	lib := "#!lua name=nr\n" +
		"redis.register_function('w', function() return redis.call('set','f','1') end)\n" +
		"redis.register_function{function_name='r', callback=function() return redis.call('get','f') end, flags={'no-writes'}}\n"
	if err := m.Do(ctx, "FUNCTION", "LOAD", "REPLACE", lib).Err(); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"min-replicas-to-write", "1"}, {"min-replicas-max-lag", "10"}} {
		if err := m.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", mport)
	defer rsrv.Stop()
	waitFor(t, "a good replica", func() bool { return m.Set(ctx, "k", "v", 0).Err() == nil })
	// Transactions queued while the replica is good.
	var txns []*redis.Conn
	for _, cs := range noReplicasCases {
		if cs[0] != "exec" {
			continue
		}
		tc := m.Conn()
		defer tc.Close()
		if err := tc.Do(ctx, "MULTI").Err(); err != nil {
			t.Fatal(err)
		}
		if s := tc.Do(ctx, cs[1:]...).Val(); s != "QUEUED" {
			t.Fatalf("%v queued: %v", cs[1:], s)
		}
		txns = append(txns, tc)
	}
	r := client(t, rsrv.Addr)
	if err := r.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "-NOREPLICAS once the replica left", func() bool {
		err := m.Set(ctx, "k", "w", 0).Err()
		return err != nil && err.Error() == "NOREPLICAS Not enough good replicas to write."
	})
	var out []string
	for _, cs := range noReplicasCases {
		var v any
		var err error
		if cs[0] == "exec" {
			v, err = txns[0].Do(ctx, "EXEC").Result()
			txns = txns[1:]
		} else {
			v, err = m.Do(ctx, cs...).Result()
		}
		out = append(out, fmt.Sprintf("%v / %v", v, err))
	}
	if v, err := m.Get(ctx, "a").Result(); err == nil {
		t.Errorf("a script wrote a = %q without good replicas", v)
	}
	return out
}

// TestNoReplicasAtExecAndInScripts: with min-replicas-to-write, EXEC of a
// transaction with writes queued while the replicas were good is aborted
// once they are gone (processCommand checks EXEC with its queued commands'
// flags), a script or function that may write is refused before it runs
// (scriptPrepareForRun), and an EVAL without a shebang fails at its first
// write (scriptVerifyWriteCommandAllow): every reply as a real redis-server
// 7.0 gives it.
func TestNoReplicasAtExecAndInScripts(t *testing.T) {
	bin := buildBinary(t)
	cmd, addr, _ := startProcess(t, bin, "--http-port", "0", "--data-dir", t.TempDir())
	defer stop(t, cmd)
	msrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	want := noReplicasReplies(t, msrv.Addr)
	got := noReplicasReplies(t, addr)
	for i, cs := range noReplicasCases {
		if got[i] != want[i] {
			t.Errorf("%q: %q, redis-server %q", cs, got[i], want[i])
		}
	}
	if want[0] != "<nil> / EXECABORT Transaction discarded because of: NOREPLICAS Not enough good replicas to write." {
		t.Errorf("redis-server's EXEC: %q", want[0])
	}
}
