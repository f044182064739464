package shard

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/rdb"
	"github.com/svcdb/svcdb/shard/values"
)

// ---- reading a keyspace through the real read handlers -----------------------

// runner runs one command in database db and returns its reply.
type runner func(db int, args ...string) resp.Value

// keyState is one key as clients see it: its type, its expiry (unix ms, 0 =
// none) and its value in a form that does not depend on the encoding.
type keyState struct {
	kind     string
	expireAt int64
	val      string
}

// valueText reads key's value through read commands, in a form two servers
// holding the same data answer identically whatever their encodings: sets
// and hashes sorted, streams as XINFO STREAM FULL without the radix tree's
// shape (which depends on how the nodes were filled).
func valueText(run runner, db int, kind, key string) string {
	switch kind {
	case "string":
		return run(db, "GET", key).String()
	case "list":
		return run(db, "LRANGE", key, "0", "-1").String()
	case "set":
		v := run(db, "SMEMBERS", key)
		ms := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			ms[i] = string(e.Str)
		}
		slices.Sort(ms)
		return strings.Join(ms, "\x00")
	case "zset":
		return run(db, "ZRANGE", key, "0", "-1", "WITHSCORES").String()
	case "hash":
		v := run(db, "HGETALL", key)
		var ps []string
		for i := 0; i+1 < len(v.Elems); i += 2 {
			ps = append(ps, string(v.Elems[i].Str)+"="+string(v.Elems[i+1].Str))
		}
		slices.Sort(ps)
		return strings.Join(ps, "\x00")
	case "stream":
		v := run(db, "XINFO", "STREAM", key, "FULL", "COUNT", "0")
		var kept []resp.Value
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if name := string(v.Elems[i].Str); name == "radix-tree-keys" || name == "radix-tree-nodes" {
				continue
			}
			kept = append(kept, v.Elems[i], v.Elems[i+1])
		}
		v.Elems = kept
		return v.String()
	}
	return "?" + kind
}

// dumpHeld reads every key of rt through the read handlers, called directly
// with Now = 1 so that no key expires while it looks (a key past its time
// is still read, as the snapshot writes it).
// REQUIRES: every shard of rt is held by the caller.
func dumpHeld(rt *Runtime) map[string]keyState {
	c := &keyspace.Ctx{}
	c.Bind(rt.env)
	run := func(db int, args ...string) resp.Value {
		c.DB, c.Now, c.Out = db, 1, c.Out[:0]
		c.Enter(nil)
		c.Args = c.Args[:0]
		for _, a := range args {
			c.Args = append(c.Args, []byte(a))
		}
		c.Cmd = rt.table.Lookup(c.Args[0])
		rt.env.Handle(c)
		v, _, err := resp.ReadReply(c.Out)
		if err != nil {
			panic(fmt.Sprintf("%v: bad reply %q: %v", args, c.Out, err))
		}
		return v
	}
	out := map[string]keyState{}
	for _, s := range rt.shards {
		for n, d := range s.store.DBs() {
			for k, pos := range d.Index() {
				o := d.Slot(pos)
				out[strconv.Itoa(n)+"/"+k] = keyState{kind: o.Kind.String(), expireAt: d.ExpireAtSlot(pos), val: valueText(run, n, o.Kind.String(), k)}
			}
		}
	}
	return out
}

// dumpAll holds every shard of rt and reads its keyspace.
func dumpAll(rt *Runtime) map[string]keyState {
	rt.HoldAll()
	defer rt.ReleaseAll()
	return dumpHeld(rt)
}

// fileKeys reads an RDB file with package rdb: every key it holds (expired
// ones included) with its type and expiry.
func fileKeys(t *testing.T, file []byte) map[string]keyState {
	t.Helper()
	out := map[string]keyState{}
	_, err := rdb.Load(bytes.NewReader(file), func(e *rdb.Entry) error {
		k := strconv.Itoa(e.DB) + "/" + string(e.Key)
		if _, dup := out[k]; dup {
			return fmt.Errorf("key %s written twice", k)
		}
		out[k] = keyState{kind: e.Kind.String(), expireAt: e.ExpireAt}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the snapshot back: %v", err)
	}
	return out
}

// checkLoadedStructures checks that every database's memory counter equals
// a recount and that every value's structure keeps its invariants (hash
// tables, intsets, skiplists, quicklists, streams).
// REQUIRES: nothing else runs on rt (a runtime that was never started).
func checkLoadedStructures(t *testing.T, rt *Runtime) {
	t.Helper()
	checkValueMemory(t, rt)
	zcheckMemory(t, rt)
	for _, s := range rt.shards {
		for n, d := range s.store.DBs() {
			for k, pos := range d.Index() {
				o := d.Slot(pos)
				switch {
				case o.Enc == keyspace.EncQuicklist:
					want := make([]string, 0, keyspace.ListLen(o))
					for _, e := range keyspace.ListElements(o) {
						want = append(want, string(e))
					}
					checkQuicklist(t, k, o.Coll().(*values.Quicklist), want)
				case o.Enc == keyspace.EncStream:
					if err := checkStream(o.Coll().(*values.Stream)); err != nil {
						t.Fatalf("db %d key %q: %v", n, k, err)
					}
				case o.Kind == keyspace.KindList && keyspace.ListLen(o) == 0:
					t.Fatalf("db %d key %q: empty list kept", n, k)
				}
			}
		}
	}
}

// ---- the randomized point-in-time test ---------------------------------------

var snapDBs = []int{0, 1, 2, 7}

const snapKeysPerType = 40

// snapKey names a key of the type its prefix says: s string, l list, S set,
// z sorted set, h hash, x stream.
func snapKey(r *rand.Rand, prefix byte) string {
	return string(prefix) + ":" + strconv.Itoa(r.IntN(snapKeysPerType))
}

// fillSnapshotData gives every database of snapDBs keys of every type and
// encoding: integer, short and long strings, small and large lists, intsets
// and hash-table sets, listpack and skiplist sorted sets, listpack and
// hash-table hashes, streams with groups, consumers and pending entries;
// some keys with a long time to live, some with one that passes while the
// test runs.
func fillSnapshotData(p *producer, r *rand.Rand) {
	for _, db := range snapDBs {
		p.ctx.DB = db
		for i := range snapKeysPerType {
			n := strconv.Itoa(i)
			switch i % 3 {
			case 0:
				p.do("SET", "s:"+n, strconv.Itoa(r.IntN(100000)))
			case 1:
				p.do("SET", "s:"+n, strings.Repeat("v", 1+r.IntN(80)))
			default:
				p.do("INCRBY", "s:"+n, strconv.Itoa(r.IntN(1000)))
			}
			elems := 3
			if i%8 == 0 {
				elems = 300
			}
			args := []string{"RPUSH", "l:" + n}
			for j := range elems {
				args = append(args, "e"+strconv.Itoa(j))
			}
			p.do(args...)
			args = []string{"SADD", "S:" + n}
			members := 5
			if i%7 == 0 {
				members = 600
			}
			for j := range members {
				if i%2 == 0 {
					args = append(args, strconv.Itoa(j*1000-500))
				} else {
					args = append(args, "m"+strconv.Itoa(j))
				}
			}
			p.do(args...)
			args = []string{"ZADD", "z:" + n}
			members = 4
			if i%6 == 0 {
				members = 200
			}
			for j := range members {
				args = append(args, strconv.FormatFloat(r.Float64()*100-50, 'g', -1, 64), "zm"+strconv.Itoa(j))
			}
			p.do(args...)
			args = []string{"HSET", "h:" + n}
			fields := 4
			if i%9 == 0 {
				fields = 600
			}
			for j := range fields {
				args = append(args, "f"+strconv.Itoa(j), strconv.Itoa(r.IntN(1000)))
			}
			p.do(args...)
			for j := range 15 {
				if j%4 == 0 {
					p.do("XADD", "x:"+n, "*", "a", strconv.Itoa(j), "other", "x")
				} else {
					p.do("XADD", "x:"+n, "*", "a", strconv.Itoa(j), "b", "y")
				}
			}
			if i%2 == 0 {
				p.do("XGROUP", "CREATE", "x:"+n, "g", "0")
				p.do("XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "x:"+n, ">")
				p.do("XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", "x:"+n, ">")
			}
			switch i % 10 {
			case 3:
				p.do("PEXPIRE", "h:"+n, strconv.Itoa(3600_000))
			case 4:
				p.do("PEXPIRE", "s:"+n, strconv.Itoa(1+r.IntN(200)))
			}
		}
		for j := range 6 { // BLMOVE destinations (blocking clients are served into them)
			p.do("RPUSH", "{bm}dst:"+strconv.Itoa(j), "a", "b", "c")
		}
	}
	p.ctx.DB = 0
}

// randomWrite runs one random write through the real handlers: single-key
// changes of every type, deletions, short and long expiries, multi-shard
// commands (MSET, RENAME, LMOVE, SMOVE, ZUNIONSTORE, COPY to another
// database), consumer-group bookkeeping and, rarely, FLUSHDB.
func randomWrite(p *producer, r *rand.Rand) {
	p.ctx.DB = snapDBs[r.IntN(len(snapDBs))]
	v := strconv.Itoa(r.IntN(1000))
	prefixes := "slSzhx"
	anyKey := func() string { return snapKey(r, prefixes[r.IntN(len(prefixes))]) }
	switch op := r.IntN(34); op {
	case 0:
		p.do("SET", snapKey(r, 's'), v)
	case 1:
		p.do("INCR", snapKey(r, 's'))
	case 2:
		p.do("APPEND", snapKey(r, 's'), v)
	case 3:
		p.do("DEL", anyKey(), anyKey())
	case 4:
		p.do("PEXPIRE", anyKey(), strconv.Itoa(1+r.IntN(30)))
	case 5:
		p.do("PERSIST", anyKey())
	case 6:
		p.do("EXPIRE", anyKey(), "7200")
	case 7:
		p.do("LPUSH", snapKey(r, 'l'), v)
	case 8:
		p.do("RPOP", snapKey(r, 'l'))
	case 9:
		p.do("LMOVE", snapKey(r, 'l'), snapKey(r, 'l'), "LEFT", "RIGHT")
	case 10:
		p.do("LSET", snapKey(r, 'l'), "0", v)
	case 11:
		p.do("SADD", snapKey(r, 'S'), v)
	case 12:
		p.do("SREM", snapKey(r, 'S'), v, "m1", "-500")
	case 13:
		p.do("SMOVE", snapKey(r, 'S'), snapKey(r, 'S'), "m2")
	case 14:
		p.do("SPOP", snapKey(r, 'S'))
	case 15:
		p.do("ZADD", snapKey(r, 'z'), v, "zm"+v)
	case 16:
		p.do("ZINCRBY", snapKey(r, 'z'), "1.5", "zm1")
	case 17:
		p.do("ZPOPMIN", snapKey(r, 'z'))
	case 18:
		p.do("ZUNIONSTORE", snapKey(r, 'z'), "2", snapKey(r, 'z'), snapKey(r, 'z'))
	case 19:
		p.do("HSET", snapKey(r, 'h'), "f"+v, v)
	case 20:
		p.do("HDEL", snapKey(r, 'h'), "f1", "f2")
	case 21:
		p.do("HINCRBY", snapKey(r, 'h'), "f3", "7")
	case 22:
		p.do("XADD", snapKey(r, 'x'), "*", "a", v)
	case 23:
		p.do("XTRIM", snapKey(r, 'x'), "MAXLEN", strconv.Itoa(r.IntN(12)))
	case 24:
		p.do("XREADGROUP", "GROUP", "g", "c"+strconv.Itoa(r.IntN(3)), "COUNT", "2", "STREAMS", snapKey(r, 'x'), ">")
	case 25:
		p.do("XAUTOCLAIM", snapKey(r, 'x'), "g", "carol", "0", "0-0", "COUNT", "2")
	case 26:
		p.do("XGROUP", "CREATECONSUMER", snapKey(r, 'x'), "g", "dave"+v)
	case 27:
		p.do("XGROUP", "SETID", snapKey(r, 'x'), "g", "0")
	case 28:
		pre := prefixes[r.IntN(len(prefixes))]
		p.do("RENAME", snapKey(r, pre), snapKey(r, pre))
	case 29:
		pre := prefixes[r.IntN(len(prefixes))]
		p.do("COPY", snapKey(r, pre), snapKey(r, pre), "DB", strconv.Itoa(snapDBs[r.IntN(len(snapDBs))]), "REPLACE")
	case 30:
		p.do("MSET", snapKey(r, 's'), v, snapKey(r, 's'), v, snapKey(r, 's'), v)
	case 31:
		p.do("GETDEL", snapKey(r, 's'))
	case 32:
		p.do("SINTERSTORE", snapKey(r, 'S'), snapKey(r, 'S'), snapKey(r, 'S'))
	case 33:
		if r.IntN(50) == 0 {
			p.ctx.DB = 7
			p.do("FLUSHDB")
		} else {
			p.do("GETEX", snapKey(r, 's'), "PX", "5")
		}
	}
}

// randomTransaction runs a few writes as EXEC does: holding every shard
// (HoldAll), through ExecHeld, then ReleaseAll.
func randomTransaction(rt *Runtime, table *command.Table, r *rand.Rand) {
	db := snapDBs[r.IntN(len(snapDBs))]
	v := strconv.Itoa(r.IntN(1000))
	cmds := [][]string{
		{"SET", snapKey(r, 's'), v},
		{"DEL", snapKey(r, 'h')},
		{"RPUSH", snapKey(r, 'l'), v},
		{"ZADD", snapKey(r, 'z'), v, "t" + v},
		{"HSET", snapKey(r, 'h'), "tx", v},
		{"RENAME", snapKey(r, 'S'), snapKey(r, 'S')},
	}
	rt.HoldAll()
	for range 3 {
		args := cmds[r.IntN(len(cmds))]
		c := &keyspace.Ctx{DB: db, Now: time.Now().UnixMilli()}
		c.Bind(rt.env)
		for _, a := range args {
			c.Args = append(c.Args, []byte(a))
		}
		c.Cmd = table.Lookup(c.Args[0])
		rt.ExecHeld(c)
	}
	rt.ReleaseAll()
}

// blockingMove parks a BLMOVE client on an empty source and pushes to the
// source, so the runtime serves the client (serveKey) into a destination
// list that existed at the point in time.
//
// The client blocks with no timeout: it must be served by a push, never by
// a timer. Several goroutines park on the same source (in the same
// database), so a client may be served by another's push and then wait for
// a later one; every goroutine pushes once after parking, and a push finds
// at least its own client parked, so each parked client is served. A
// timeout of a second used to run out on a loaded machine before the push
// that served it came, and the timeout's null reply failed the test.
func blockingMove(rt *Runtime, p *producer, r *rand.Rand) error {
	db := snapDBs[r.IntN(len(snapDBs))]
	src, dst := "{bm}src", "{bm}dst:"+strconv.Itoa(r.IntN(6))
	p.ctx.DB = db
	p.do("DEL", src)
	w := make(parked, 1)
	c := &keyspace.Ctx{DB: db, Now: time.Now().UnixMilli(), Blocker: w}
	c.Bind(rt.env)
	for _, a := range []string{"BLMOVE", src, dst, "LEFT", "RIGHT", "0"} {
		c.Args = append(c.Args, []byte(a))
	}
	c.Cmd = p.table.Lookup(c.Args[0])
	rt.ExecMulti(c)
	if c.Blocked == nil {
		return nil // served at once (the source was not empty after all)
	}
	p.do("RPUSH", src, "pushed")
	select {
	case reply := <-w:
		if string(reply) != "$6\r\npushed\r\n" {
			return fmt.Errorf("BLMOVE replied %q", reply)
		}
	case <-time.After(time.Minute): // a lost wake-up, not a slow one
		return errors.New("a blocked BLMOVE was never served")
	}
	return nil
}

func newSnapRuntime(t testing.TB, shards int, st Strategy, start bool) (*Runtime, *command.Table) {
	t.Helper()
	table := command.New()
	rt, err := New(Config{Shards: shards, Strategy: st, ActiveExpireEvery: 5 * time.Millisecond,
		OnPanic: func(cmd string, r any, stack []byte) { t.Errorf("handler %s panicked: %v\n%s", cmd, r, stack) }}, table)
	if err != nil {
		t.Fatal(err)
	}
	if start {
		rt.Start()
	}
	t.Cleanup(rt.Close)
	return rt, table
}

// TestSnapshotPointInTime is the proof of the versioned snapshot: while
// writers change, delete, expire and flush keys through the real handlers
// (single-shard and multi-shard commands, EXEC-style transactions, blocked
// clients being served), a snapshot taken one key every few steps must hold
// exactly the keyspace of the instant it was marked: every key, type, TTL
// and value, read back both by package rdb and by LoadRDB into a fresh
// runtime, whose memory accounting must then add up.
//
// Each round checks the point in time; the rounds go on (3 at least, 12 at
// most) until the writers have raced the snapshot often enough that keys
// were written early, so the test cannot pass without the hooks at work.
func TestSnapshotPointInTime(t *testing.T) {
	for _, st := range []Strategy{RunToCompletion, Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			var early int64
			round := 0
			for ; round < 3 || early < 100 && round < 12; round++ {
				early += testSnapshotPointInTime(t, st, uint64(round))
			}
			if early < 100 {
				t.Fatalf("%d rounds wrote only %d keys early: the writers did not race the snapshots", round, early)
			}
		})
	}
}

// testSnapshotPointInTime runs one round and returns how many keys the
// snapshot wrote early.
func testSnapshotPointInTime(t *testing.T, st Strategy, seed uint64) int64 {
	keys, bytes_ := keyspace.SnapshotStepKeys, keyspace.SnapshotStepBytes
	keyspace.SnapshotStepKeys, keyspace.SnapshotStepBytes = 3, 2048
	defer func() { keyspace.SnapshotStepKeys, keyspace.SnapshotStepBytes = keys, bytes_ }()

	rt, table := newSnapRuntime(t, 4, st, true)
	fillSnapshotData(newProducer(rt, table), rand.New(rand.NewPCG(seed, 1)))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ops atomic.Int64
	errc := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newProducer(rt, table)
			r := rand.New(rand.NewPCG(seed, uint64(g)+10))
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch r.IntN(20) {
				case 0:
					randomTransaction(rt, table, r)
				case 1:
					if err := blockingMove(rt, p, r); err != nil {
						errc <- err
						return
					}
				default:
					randomWrite(p, r)
				}
				ops.Add(1)
			}
		}()
	}
	var moves atomic.Int64
	wg.Add(1)
	go func() { // blocked clients served into lists of the point in time
		defer wg.Done()
		p := newProducer(rt, table)
		r := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := blockingMove(rt, p, r); err != nil {
				errc <- err
				return
			}
			moves.Add(1)
		}
	}()
	time.Sleep(10 * time.Millisecond)

	var recorded map[string]keyState
	snapshotMarked = func(rt *Runtime) { recorded = dumpHeld(rt) }
	var file bytes.Buffer
	opsBefore, movesBefore := ops.Load(), moves.Load()
	stats, err := rt.WriteSnapshot(&file, [2]string{"redis-ver", "7.0.15"})
	snapshotMarked = nil
	opsDuring, movesDuring := ops.Load()-opsBefore, moves.Load()-movesBefore
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s seed %d: %d keys, %d bytes, %d early, %d writes and %d served blocked clients during the snapshot, longest step %v, mark %v, took %v",
		st, seed, stats.Keys, stats.Bytes, stats.EarlyKeys, opsDuring, movesDuring, stats.LongestStep, stats.Mark, stats.Duration)
	if stats.Keys != int64(len(recorded)) || stats.Bytes != int64(file.Len()) {
		t.Fatalf("stats say %d keys, %d bytes; recorded %d keys, file has %d bytes", stats.Keys, stats.Bytes, len(recorded), file.Len())
	}

	// Every key of the point in time, with its type and expiry, exactly
	// once, and nothing else (expired keys included: they are written).
	inFile := fileKeys(t, file.Bytes())
	for k, want := range recorded {
		got, ok := inFile[k]
		if !ok || got.kind != want.kind || got.expireAt != want.expireAt {
			t.Fatalf("key %s: file has %+v (present %v); at the point in time it was %s expiring at %d", k, got, ok, want.kind, want.expireAt)
		}
	}
	for k := range inFile {
		if _, ok := recorded[k]; !ok {
			t.Fatalf("key %s is in the file but did not exist at the point in time", k)
		}
	}

	// Every value, read back through LoadRDB and the read handlers.
	fresh, _ := newSnapRuntime(t, 3, RunToCompletion, false)
	t0 := time.Now().UnixMilli()
	ls, err := fresh.LoadRDB(bytes.NewReader(file.Bytes()))
	t1 := time.Now().UnixMilli()
	if err != nil {
		t.Fatalf("LoadRDB: %v", err)
	}
	loaded := dumpAll(fresh)
	if ls.Keys != int64(len(loaded)) || ls.Keys+ls.Expired != int64(len(recorded)) {
		t.Fatalf("LoadRDB says %d keys and %d expired; the runtime holds %d, the file %d", ls.Keys, ls.Expired, len(loaded), len(recorded))
	}
	for k, want := range recorded {
		got, ok := loaded[k]
		switch {
		case want.expireAt != 0 && want.expireAt < t0:
			if ok {
				t.Fatalf("key %s expired at %d, before the load at %d, yet was loaded", k, want.expireAt, t0)
			}
		case !ok && (want.expireAt == 0 || want.expireAt > t1):
			t.Fatalf("key %s (%s) was not loaded", k, want.kind)
		case ok && got != want:
			t.Fatalf("key %s differs after the round trip:\n got %+v\nwant %+v", k, got, want)
		}
	}
	for k := range loaded {
		if _, ok := recorded[k]; !ok {
			t.Fatalf("LoadRDB made key %s, which was not in the snapshot", k)
		}
	}
	checkLoadedStructures(t, fresh)

	// Nothing of the snapshot is left attached to the shards.
	rt.HoldAll()
	for _, s := range rt.shards {
		if s.store.Snapshotting() {
			t.Errorf("shard %d still has a snapshot attached", s.id)
		}
		for n, d := range s.store.DBs() {
			if d.Snapshotting() {
				t.Errorf("shard %d db %d still has a snapshot attached", s.id, n)
			}
		}
	}
	rt.ReleaseAll()
	return stats.EarlyKeys
}

// TestSnapshotOneAtATime: a second WriteSnapshot while one runs is refused
// with Redis' error, and an empty keyspace gives a file with no database.
func TestSnapshotOneAtATime(t *testing.T) {
	rt, table := newSnapRuntime(t, 2, RunToCompletion, true)
	var empty bytes.Buffer
	if _, err := rt.WriteSnapshot(&empty); err != nil {
		t.Fatal(err)
	}
	if got := fileKeys(t, empty.Bytes()); len(got) != 0 {
		t.Fatalf("empty keyspace: file holds %v", got)
	}
	p := newProducer(rt, table)
	p.do("SET", "a", "1")
	var second error
	snapshotMarked = func(rt *Runtime) { _, second = rt.WriteSnapshot(&bytes.Buffer{}) }
	defer func() { snapshotMarked = nil }()
	if _, err := rt.WriteSnapshot(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if second == nil || second.Error() != "ERR Background save already in progress" {
		t.Fatalf("second snapshot: %v", second)
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestSnapshotWriteError: a snapshot whose writer fails half-way returns
// the error, detaches from every shard (later writes pay nothing) and does
// not stop the next snapshot.
func TestSnapshotWriteError(t *testing.T) {
	keys := keyspace.SnapshotStepKeys
	keyspace.SnapshotStepKeys = 10
	defer func() { keyspace.SnapshotStepKeys = keys }()
	rt, table := newSnapRuntime(t, 4, RunToCompletion, true)
	p := newProducer(rt, table)
	for i := range 3000 {
		p.ctx.DB = i % 3
		p.do("SET", "k"+strconv.Itoa(i), strings.Repeat("x", 100))
	}
	if _, err := rt.WriteSnapshot(&failingWriter{n: 100 << 10}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v; want the writer's error", err)
	}
	rt.HoldAll()
	for _, s := range rt.shards {
		if s.store.Snapshotting() {
			t.Errorf("shard %d: snapshot still attached", s.id)
		}
		for n, d := range s.store.DBs() {
			if d.Snapshotting() {
				t.Errorf("shard %d db %d: snapshot still attached", s.id, n)
			}
		}
	}
	rt.ReleaseAll()
	var file bytes.Buffer
	st, err := rt.WriteSnapshot(&file)
	if err != nil || st.Keys != 3000 || len(fileKeys(t, file.Bytes())) != 3000 {
		t.Fatalf("after a failed snapshot: %+v, %v", st, err)
	}
}

// TestDirty: changes count, loading does not, a flush counts its keys.
func TestDirty(t *testing.T) {
	rt, table := newSnapRuntime(t, 2, RunToCompletion, true)
	p := newProducer(rt, table)
	if rt.Dirty() != 0 {
		t.Fatalf("fresh runtime: Dirty %d", rt.Dirty())
	}
	p.do("SET", "a", "1")
	p.do("SET", "b", "1")
	p.do("GET", "a")
	after := rt.Dirty()
	if after == 0 {
		t.Fatal("SET did not count")
	}
	var file bytes.Buffer
	if _, err := rt.WriteSnapshot(&file); err != nil {
		t.Fatal(err)
	}
	fresh, _ := newSnapRuntime(t, 2, RunToCompletion, false)
	if _, err := fresh.LoadRDB(bytes.NewReader(file.Bytes())); err != nil {
		t.Fatal(err)
	}
	if fresh.Dirty() != 0 {
		t.Fatalf("loading counted %d changes", fresh.Dirty())
	}
	p.do("FLUSHALL")
	if got := rt.Dirty(); got < after+2 {
		t.Fatalf("FLUSHALL of 2 keys: Dirty %d -> %d", after, got)
	}
}

// TestWriteSnapshotAt: at runs once, at the point in time, with every shard
// held; the file holds exactly the keyspace at did see. When at fails, the
// snapshot stops with its error and leaves nothing attached.
func TestWriteSnapshotAt(t *testing.T) {
	rt, table := newSnapRuntime(t, 4, RunToCompletion, true)
	p := newProducer(rt, table)
	for i := range 100 {
		p.do("SET", "k"+strconv.Itoa(i), "v")
	}
	calls := 0
	var seen map[string]keyState
	var file bytes.Buffer
	_, err := rt.WriteSnapshotAt(&file, func() error {
		calls++
		for _, s := range rt.shards {
			if s.token.Load() != 1 {
				t.Errorf("shard %d not held during at", s.id)
			}
		}
		seen = dumpHeld(rt)
		return nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("WriteSnapshotAt: %v, at called %d times", err, calls)
	}
	inFile := fileKeys(t, file.Bytes())
	if len(inFile) != len(seen) || len(seen) != 100 {
		t.Fatalf("file holds %d keys; at saw %d", len(inFile), len(seen))
	}
	boom := errors.New("boom")
	if _, err := rt.WriteSnapshotAt(&bytes.Buffer{}, func() error { return boom }); err != boom {
		t.Fatalf("failing at: got %v", err)
	}
	rt.HoldAll()
	for _, s := range rt.shards {
		if s.store.Snapshotting() {
			t.Errorf("shard %d: snapshot still attached after at failed", s.id)
		}
		for n, d := range s.store.DBs() {
			if d.Snapshotting() {
				t.Errorf("shard %d db %d: snapshot still attached after at failed", s.id, n)
			}
		}
	}
	rt.ReleaseAll()
	p.do("SET", "k0", "changed") // no hook left to encode it
	if _, err := rt.WriteSnapshot(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
}
