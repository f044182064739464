package netloop_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

func waitBlocked(t testing.TB, admin *rawConn, n int) {
	t.Helper()
	eventually(t, 5*time.Second, func() bool { return infoInt(t, admin.info("clients"), "blocked_clients") == int64(n) }, "waiting for %d blocked clients", n)
}

// keysOnShards returns n keys with the given prefix that live on n different
// shards.
func keysOnShards(t testing.TB, ts *testServer, prefix string, n int) []string {
	t.Helper()
	seen := map[int]bool{}
	var keys []string
	for i := 0; len(keys) < n && i < 10000; i++ {
		k := fmt.Sprint(prefix, i)
		if s := ts.RT.ShardOf([]byte(k)); !seen[s] {
			seen[s] = true
			keys = append(keys, k)
		}
	}
	if len(keys) < n {
		t.Fatalf("could not find %d keys on distinct shards", n)
	}
	return keys
}

func bulkStrings(v resp.Value) []string {
	var out []string
	for _, e := range v.Elems {
		out = append(out, string(e.Str))
	}
	return out
}

// TestBlockingServedInBlockOrder: clients blocked on one list are served in
// the order they blocked, by a push from another client, one element each.
func TestBlockingServedInBlockOrder(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	var waiters []*rawConn
	for i := range 3 {
		w := dialRaw(t, ts.Addr)
		w.write(multibulk("BLPOP", "q", "0"))
		waitBlocked(t, admin, i+1)
		waiters = append(waiters, w)
	}
	if v := admin.do("RPUSH", "q", "a", "b", "c", "d"); v.Int != 4 {
		t.Fatalf("RPUSH = %v; want 4 (the length before the blocked clients take their elements)", v)
	}
	for i, want := range []string{"a", "b", "c"} {
		if got := bulkStrings(waiters[i].read()); len(got) != 2 || got[0] != "q" || got[1] != want {
			t.Fatalf("waiter %d got %v; want [q %s]", i, got, want)
		}
	}
	if v := admin.do("LRANGE", "q", "0", "-1"); len(v.Elems) != 1 || string(v.Elems[0].Str) != "d" {
		t.Fatalf("left in q: %v; want [d]", v)
	}
	waitBlocked(t, admin, 0)
}

// TestBlockingTimeout: BLPOP on an empty key replies nil after its timeout,
// and the command after it in the pipeline waits for that reply.
func TestBlockingTimeout(t *testing.T) {
	ts := startServer(t)
	r := dialRaw(t, ts.Addr)
	start := time.Now()
	r.write(multibulk("BLPOP", "none", "0.2") + multibulk("PING"))
	if v := r.read(); !v.Null {
		t.Fatalf("BLPOP after timeout = %v; want a null array", v)
	}
	if el := time.Since(start); el < 190*time.Millisecond {
		t.Fatalf("BLPOP returned after %v; want about 200ms", el)
	}
	if v := r.read(); string(v.Str) != "PONG" {
		t.Fatalf("PING after BLPOP = %v", v)
	}
	r.do("HELLO", "3")
	r.write(multibulk("BRPOPLPUSH", "none", "dst", "0.05"))
	if v := r.read(); v.Type != '_' {
		t.Fatalf("RESP3 BRPOPLPUSH timeout = %v (type %q); want null", v, v.Type)
	}
}

// TestBlockingKeysOnSeveralShards: BLPOP on keys of different shards is woken
// by a push to any of them and takes only from that one.
func TestBlockingKeysOnSeveralShards(t *testing.T) {
	ts := startServer(t, withShards(4))
	keys := keysOnShards(t, ts, "bk", 3)
	admin, w := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	w.write(multibulk(append([]string{"BLPOP"}, append(keys, "5")...)...))
	waitBlocked(t, admin, 1)
	admin.do("RPUSH", keys[2], "x")
	if got := bulkStrings(w.read()); len(got) != 2 || got[0] != keys[2] || got[1] != "x" {
		t.Fatalf("got %v; want [%s x]", got, keys[2])
	}
	admin.do("RPUSH", keys[0], "y")
	if v := admin.do("LLEN", keys[0]); v.Int != 1 {
		t.Fatalf("a push after the client was served was taken: LLEN = %v", v)
	}
	waitBlocked(t, admin, 0)
}

// TestBlockingMoveAcrossShards: BLMOVE whose source and destination live on
// different shards moves the element once it arrives.
func TestBlockingMoveAcrossShards(t *testing.T) {
	ts := startServer(t, withShards(4))
	keys := keysOnShards(t, ts, "mv", 2)
	src, dst := keys[0], keys[1]
	admin, w := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	w.write(multibulk("BLMOVE", src, dst, "LEFT", "RIGHT", "5"))
	waitBlocked(t, admin, 1)
	admin.do("RPUSH", src, "e1")
	if v := w.read(); string(v.Str) != "e1" {
		t.Fatalf("BLMOVE = %v; want e1", v)
	}
	if v := admin.do("LRANGE", dst, "0", "-1"); len(v.Elems) != 1 || string(v.Elems[0].Str) != "e1" {
		t.Fatalf("destination = %v; want [e1]", v)
	}
	if v := admin.do("EXISTS", src); v.Int != 0 {
		t.Fatalf("source still exists")
	}
	waitBlocked(t, admin, 0)
}

// TestBlockedClientDisconnects: a blocked client that goes away takes
// nothing: the next push stays in the list.
func TestBlockedClientDisconnects(t *testing.T) {
	ts := startServer(t)
	admin, w := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	w.write(multibulk("BLPOP", "gone", "0"))
	waitBlocked(t, admin, 1)
	w.c.Close()
	waitBlocked(t, admin, 0)
	admin.do("RPUSH", "gone", "kept")
	if v := admin.do("LLEN", "gone"); v.Int != 1 {
		t.Fatalf("LLEN = %v; want 1: a closed client took the element", v)
	}
}

// TestBlockingProducersConsumers: consumers in BLPOP loops and producers
// pushing concurrently; every element is received exactly once.
func TestBlockingProducersConsumers(t *testing.T) {
	ts := startServer(t, withShards(4))
	const producers, consumers, each = 4, 6, 300
	keys := []string{"pc:a", "pc:b", "pc:c"}
	got := make(chan string, producers*each)
	var cwg sync.WaitGroup
	for range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			r := dialRaw(t, ts.Addr)
			for {
				v := r.do(append([]string{"BLPOP"}, append(keys, "1")...)...)
				if v.Null {
					return // idle for a second: done
				}
				got <- string(v.Elems[1].Str)
			}
		}()
	}
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			r := dialRaw(t, ts.Addr)
			for i := range each {
				r.do("RPUSH", keys[i%len(keys)], fmt.Sprint(p, ":", i))
			}
		}()
	}
	pwg.Wait()
	cwg.Wait()
	close(got)
	seen := map[string]bool{}
	for v := range got {
		if seen[v] {
			t.Fatalf("%s received twice", v)
		}
		seen[v] = true
	}
	if len(seen) != producers*each {
		admin := dialRaw(t, ts.Addr)
		t.Fatalf("received %d of %d elements; left: %v %v %v", len(seen), producers*each,
			admin.do("LLEN", keys[0]), admin.do("LLEN", keys[1]), admin.do("LLEN", keys[2]))
	}
}
