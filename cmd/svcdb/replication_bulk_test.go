package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// The checks with real processes at scale: a 1M-key full sync
// under write load with every key compared at the end, and a svcdb
// replica SIGKILLed mid-stream that restarts, resyncs and converges.

// bulkKeys is the size of the master's dataset.
const bulkKeys = 1_000_000

// rawConn is a RESP connection for the bulk parts, where go-redis' per
// command cost (under -race) would dominate: pipelined SETs and MGETs.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, r: bufio.NewReaderSize(c, 1<<20)}
}

func appendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// line reads one reply line without its CRLF.
func (c *rawConn) line() ([]byte, error) {
	l, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("bad reply line %q", l)
	}
	return l[:len(l)-2], nil
}

// mget sends MGET keys and returns the values (nil for a missing key),
// copied.
func (c *rawConn) mget(keys [][]byte) ([][]byte, error) {
	cmd := appendCommand(nil, append([][]byte{[]byte("MGET")}, keys...)...)
	if _, err := c.c.Write(cmd); err != nil {
		return nil, err
	}
	head, err := c.line()
	if err != nil {
		return nil, err
	}
	if len(head) == 0 || head[0] != '*' {
		return nil, fmt.Errorf("MGET answered %q", head)
	}
	n, err := strconv.Atoi(string(head[1:]))
	if err != nil || n != len(keys) {
		return nil, fmt.Errorf("MGET answered %q for %d keys", head, len(keys))
	}
	out := make([][]byte, n)
	for i := range out {
		h, err := c.line()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 || h[0] != '$' {
			return nil, fmt.Errorf("MGET element %q", h)
		}
		size, err := strconv.Atoi(string(h[1:]))
		if err != nil {
			return nil, err
		}
		if size < 0 {
			continue
		}
		v := make([]byte, size+2)
		if _, err := io.ReadFull(c.r, v); err != nil {
			return nil, err
		}
		out[i] = v[:size]
	}
	return out, nil
}

func bulkKey(i int) []byte { return []byte("bulk:" + strconv.Itoa(i)) }

func bulkValue(i int) []byte { return []byte("v" + strconv.Itoa(i*7919) + ":0123456789abcdef") }

// loadBulk writes bulkKeys keys into addr over 4 connections, each with
// 5,000 SETs in flight, and checks every reply.
func loadBulk(t *testing.T, addr string) {
	t.Helper()
	const conns, batch = 4, 5000
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for w := range conns {
		c := dialRaw(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			set := []byte("SET")
			var buf []byte
			for lo := w * batch; lo < bulkKeys; lo += conns * batch {
				hi := min(lo+batch, bulkKeys)
				buf = buf[:0]
				for i := lo; i < hi; i++ {
					buf = appendCommand(buf, set, bulkKey(i), bulkValue(i))
				}
				if _, err := c.c.Write(buf); err != nil {
					errs <- err
					return
				}
				for i := lo; i < hi; i++ {
					l, err := c.line()
					if err != nil || string(l) != "+OK" {
						errs <- fmt.Errorf("SET %s: %q, %v", bulkKey(i), l, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// writer keeps writing to the master until stopped: new keys, counters,
// overwrites, appends and deletes of loaded keys (so the snapshot and the
// stream both matter), 100 commands per pipeline.
type writer struct {
	stop   chan struct{}
	done   chan error
	rounds atomic.Int64
}

func startWriter(addr string) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan error, 1)}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	go func() {
		defer c.Close()
		ctx := context.Background()
		for j := 0; ; j++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for k := range 20 {
					n := j*20 + k
					p.Set(ctx, "w:"+strconv.Itoa(n), n, 0)
					p.Incr(ctx, "cnt:"+strconv.Itoa(n%97))
					p.Set(ctx, string(bulkKey(n*7919%bulkKeys)), "over:"+strconv.Itoa(n), 0)
					p.Append(ctx, string(bulkKey(n*104729%bulkKeys)), ":a"+strconv.Itoa(n))
					p.Del(ctx, string(bulkKey(n*15485863%bulkKeys)))
				}
				return nil
			})
			if err != nil {
				w.done <- fmt.Errorf("writer round %d: %w", j, err)
				return
			}
			w.rounds.Add(1)
		}
	}()
	return w
}

func (w *writer) finish(t *testing.T) {
	t.Helper()
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatal(err)
	}
	if w.rounds.Load() == 0 {
		t.Fatal("the writer wrote nothing")
	}
}

// allKeys returns every key of the master's database 0 (SCAN).
func allKeys(t *testing.T, c *redis.Client) [][]byte {
	t.Helper()
	ctx := context.Background()
	var keys [][]byte
	var cursor uint64
	for {
		ks, next, err := c.Scan(ctx, cursor, "*", 10000).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			keys = append(keys, []byte(k))
		}
		if cursor = next; cursor == 0 {
			return keys
		}
	}
}

// sameKeys fails unless every replica has the master's DBSIZE and, key by
// key (the master's SCAN, then MGET in batches of 1,000 on every server),
// the master's value.
func sameKeys(t *testing.T, master string, replicas ...string) {
	t.Helper()
	ctx := context.Background()
	m := client(t, master)
	want := m.DBSize(ctx).Val()
	for _, r := range replicas {
		if got := client(t, r).DBSize(ctx).Val(); got != want {
			t.Errorf("replica %s: DBSIZE %d, master %d", r, got, want)
		}
	}
	keys := allKeys(t, m)
	if int64(len(keys)) != want {
		t.Fatalf("SCAN returned %d keys, DBSIZE %d", len(keys), want)
	}
	mc := dialRaw(t, master)
	rcs := make([]*rawConn, len(replicas))
	for i, r := range replicas {
		rcs[i] = dialRaw(t, r)
	}
	diffs := 0
	for lo := 0; lo < len(keys); lo += 1000 {
		batch := keys[lo:min(lo+1000, len(keys))]
		mv, err := mc.mget(batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, rc := range rcs {
			rv, err := rc.mget(batch)
			if err != nil {
				t.Fatal(err)
			}
			for j := range batch {
				if mv[j] == nil || !bytes.Equal(mv[j], rv[j]) {
					if diffs++; diffs <= 10 {
						t.Errorf("key %q: replica %s has %q, master %q", batch[j], replicas[i], rv[j], mv[j])
					}
				}
			}
		}
	}
	if diffs > 0 {
		t.Fatalf("%d keys differ (of %d)", diffs, len(keys))
	}
	t.Logf("%d keys equal on the master and %d replicas", len(keys), len(replicas))
}

// waitSynced waits until the replica's link is up and its offset is the
// master's, for up to a minute (a 1M-key load on a busy machine).
func waitSynced(t *testing.T, master, replica *redis.Client, what string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		mi := master.Info(ctx, "replication").Val()
		ri := replica.Info(ctx, "replication").Val()
		mo, ro := field(mi, "master_repl_offset"), field(ri, "slave_repl_offset")
		if field(ri, "master_link_status") == "up" && field(ri, "master_sync_in_progress") == "0" && mo != "" && mo == ro {
			return
		}
		last = fmt.Sprintf("master_repl_offset %s; replica:\n%s", mo, ri)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not in sync after a minute: %s", what, last)
}

// waitLinkUp waits until the replica finished its full sync (the writer may
// still be writing, so offsets are not compared).
func waitLinkUp(t *testing.T, replica *redis.Client, what string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		ri, err := replica.Info(ctx, "replication").Result()
		if err == nil && field(ri, "master_link_status") == "up" && field(ri, "master_sync_in_progress") == "0" {
			return
		}
		last = ri
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: no finished full sync after a minute:\n%s", what, last)
}

// TestBulkFullSyncUnderWriteLoad: a svcdb master with 1M keys and a writer
// that never pauses; a svcdb replica and a redis-server replica attach and
// sync in full under that load; then the svcdb replica is SIGKILLed while
// the writer writes, restarted and attached again. When the writer stops
// and the offsets match, every key and value on both replicas is the
// master's.
func TestBulkFullSyncUnderWriteLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("1M keys: not in -short")
	}
	ctx := context.Background()
	bin := buildBinary(t)
	_, addr, _ := startProcess(t, bin, "--data-dir", t.TempDir())
	_, mport, _ := net.SplitHostPort(addr)
	m := client(t, addr)

	start := time.Now()
	loadBulk(t, addr)
	if n := m.DBSize(ctx).Val(); n != bulkKeys {
		t.Fatalf("master DBSIZE %d after loading %d keys", n, bulkKeys)
	}
	t.Logf("loaded %d keys in %v", bulkKeys, time.Since(start).Round(time.Millisecond))

	w := startWriter(addr)
	defer func() {
		select {
		case <-w.stop:
		default:
			close(w.stop)
			<-w.done //nolint:errcheck // the test has failed already; the writer's error adds nothing
		}
	}()
	time.Sleep(200 * time.Millisecond) // the writer is writing when the syncs start

	rdir := t.TempDir()
	rcmd, raddr, rlog := startProcess(t, bin, "--data-dir", rdir)
	r := client(t, raddr)
	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no")
	rr := client(t, rsrv.Addr)
	syncStart := time.Now()
	for _, c := range []*redis.Client{r, rr} {
		if err := c.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitLinkUp(t, r, "the svcdb replica")
	waitLinkUp(t, rr, "the redis-server replica")
	t.Logf("both replicas synced in full within %v under write load (%d writer rounds so far)",
		time.Since(syncStart).Round(time.Millisecond), w.rounds.Load())

	// Mid-stream: the writer still writes while the svcdb replica dies
	// without a chance to flush anything, and comes back on its data dir.
	before := w.rounds.Load()
	time.Sleep(300 * time.Millisecond)
	if err := rcmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = rcmd.Wait()
	waitFor(t, "the master to see its svcdb replica gone", func() bool {
		return field(m.Info(ctx, "replication").Val(), "connected_slaves") == "1"
	})
	time.Sleep(300 * time.Millisecond)
	_, raddr2, rlog2 := startProcess(t, bin, "--data-dir", rdir)
	r2 := client(t, raddr2)
	if err := r2.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, r2, "the restarted svcdb replica")
	time.Sleep(300 * time.Millisecond)
	if w.rounds.Load() == before {
		t.Fatal("the writer made no progress while the replica was killed and restarted")
	}

	w.finish(t)
	waitSynced(t, m, r2, "the restarted svcdb replica")
	waitSynced(t, m, rr, "the redis-server replica")
	if t.Failed() {
		t.Logf("first svcdb replica's log:\n%s\nrestarted replica's log:\n%s", rlog, rlog2)
	}
	sameKeys(t, addr, raddr2, rsrv.Addr)
	if got := field(m.Info(ctx, "replication").Val(), "connected_slaves"); got != "2" {
		t.Errorf("connected_slaves %s at the end, want 2", got)
	}
	if got := field(m.Info(ctx, "stats").Val(), "sync_full"); got != "3" {
		t.Errorf("sync_full %s, want 3 (two replicas, then the restarted one)", got)
	}
}
