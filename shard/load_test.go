package shard

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// ---- a real redis-server and a raw RESP client --------------------------------

// startRedis runs redis-server with dir as its data directory (dump.rdb
// there is loaded at start and written by SAVE) and extra config arguments,
// stopped by t.Cleanup (or earlier by Stop), once it answers PING (after
// loading dump.rdb).
func startRedis(t *testing.T, dir string, extra ...string) *redistest.Server {
	t.Helper()
	args := append([]string{"--save", "", "--appendonly", "no", "--dbfilename", "dump.rdb"}, extra...)
	return redistest.StartServer(t, dir, args...)
}

// respConn is a RESP2 client for tests: one command, one reply.
type respConn struct {
	t    *testing.T
	c    net.Conn
	buf  []byte
	db   int
	read []byte
}

func dialRESP(t *testing.T, addr string) *respConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &respConn{t: t, c: c, read: make([]byte, 64<<10)}
}

// do runs args in database db (SELECTing it first when needed).
func (rc *respConn) do(db int, args ...string) resp.Value {
	rc.t.Helper()
	if db != rc.db {
		rc.db = db
		if v := rc.do(db, "SELECT", strconv.Itoa(db)); v.Type != '+' {
			rc.t.Fatalf("SELECT %d: %v", db, v)
		}
	}
	out := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		out = resp.AppendBulkString(out, a)
	}
	rc.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.c.Write(out); err != nil {
		rc.t.Fatal(err)
	}
	for {
		if v, n, err := resp.ReadReply(rc.buf); err != nil {
			rc.t.Fatalf("%v: %v", args, err)
		} else if n > 0 {
			rc.buf = rc.buf[n:]
			return v
		}
		n, err := rc.c.Read(rc.read)
		if err != nil {
			rc.t.Fatalf("%v: %v", args, err)
		}
		rc.buf = append(rc.buf, rc.read[:n]...)
	}
}

// producerRunner runs commands on a runtime through a producer, in any
// database.
func producerRunner(p *producer) runner {
	return func(db int, args ...string) resp.Value {
		p.ctx.DB = db
		return p.do(args...)
	}
}

// ---- the data both servers are filled with ------------------------------------

// fillEveryEncoding writes, through run, keys of every type and every
// encoding Redis 7.0 has, in several databases: int, embstr and raw strings
// (binary and empty ones too), small and large lists and lists of long
// elements, intsets of every width and hash-table sets, listpack and
// skiplist sorted sets (infinite scores included), listpack and hash-table
// hashes, and streams: plain, trimmed and deleted-from, with consumer
// groups, consumers, pending entries and an emptied stream. Keys in db 0
// get times to live at ExpireAt (unix ms).
func fillEveryEncoding(t *testing.T, run runner, expireAt int64) {
	t.Helper()
	must := func(db int, args ...string) resp.Value {
		t.Helper()
		v := run(db, args...)
		if v.Type == '-' {
			t.Fatalf("%v: %s", args, v.Str)
		}
		return v
	}
	many := func(cmd, key string, n int, elem func(i int) []string) {
		args := []string{cmd, key}
		for i := range n {
			args = append(args, elem(i)...)
		}
		must(0, args...)
	}
	must(0, "SET", "str:int", "12345")
	must(0, "SET", "str:neg", "-42")
	must(0, "SET", "str:max", "9223372036854775807")
	must(0, "SET", "str:notint", "0123")
	must(0, "SET", "str:float", "3.14")
	must(0, "SET", "str:short", "hello")
	must(0, "SET", "str:44", strings.Repeat("e", 44))
	must(0, "SET", "str:long", strings.Repeat("long", 100))
	must(0, "SET", "str:bin", "a\x00b\xffc\r\n")
	must(0, "SET", "str:empty", "")
	must(0, "INCRBY", "str:incr", "77")
	must(0, "APPEND", "str:append", "abc")
	must(0, "APPEND", "str:append", "def")
	must(0, "SET", "str:ttl", "expiring")
	must(0, "PEXPIREAT", "str:ttl", strconv.FormatInt(expireAt, 10))

	must(0, "RPUSH", "list:small", "a", "b", "c", "1", "-2", "300000")
	many("RPUSH", "list:big", 1500, func(i int) []string { return []string{"element-" + strconv.Itoa(i)} })
	many("RPUSH", "list:ints", 200, func(i int) []string { return []string{strconv.Itoa(i * 37)} })
	many("RPUSH", "list:longelems", 8, func(i int) []string { return []string{strings.Repeat(strconv.Itoa(i), 9000)} })
	must(0, "LPUSH", "list:ttl", "x")
	must(0, "PEXPIREAT", "list:ttl", strconv.FormatInt(expireAt, 10))

	must(0, "SADD", "set:int16", "1", "2", "3", "-5", "30000")
	must(0, "SADD", "set:int32", "1", "70000", "-70000")
	must(0, "SADD", "set:int64", "1", "9223372036854775807", "-9223372036854775808")
	must(0, "SADD", "set:str", "apple", "banana", "1")
	must(0, "SADD", "set:intthenstr", "5", "-7") // an intset, then a listpack (Redis 7.2's rules)
	must(0, "SADD", "set:intthenstr", "x")
	many("SADD", "set:bigint", 600, func(i int) []string { return []string{strconv.Itoa(i)} })
	many("SADD", "set:bigstr", 300, func(i int) []string { return []string{"member-" + strconv.Itoa(i)} })
	must(0, "SADD", "set:ttl", "7")
	must(0, "PEXPIREAT", "set:ttl", strconv.FormatInt(expireAt, 10))

	must(0, "ZADD", "zset:small", "1", "one", "2.5", "two", "-3", "minus", "0", "zero", "inf", "top", "-inf", "bottom")
	many("ZADD", "zset:big", 200, func(i int) []string { return []string{strconv.Itoa(i % 17), "m" + strconv.Itoa(i)} })
	must(0, "ZADD", "zset:longmember", "1", strings.Repeat("x", 100))
	must(0, "ZADD", "zset:intscores", "-129", "a", "4503599627370496", "b", "36028797018963967", "c", "36028797018963968", "d", "-0", "e")
	must(0, "ZADD", "zset:frac", "0.1", "a", "1e300", "b", "-1.5e-300", "c", "123456789.123", "d")
	must(0, "ZADD", "zset:ttl", "1", "a")
	must(0, "PEXPIREAT", "zset:ttl", strconv.FormatInt(expireAt, 10))

	must(0, "HSET", "hash:small", "f1", "v1", "f2", "2", "num", "-17", "empty", "")
	many("HSET", "hash:big", 600, func(i int) []string { return []string{"field" + strconv.Itoa(i), strconv.Itoa(i * i)} })
	must(0, "HSET", "hash:longval", "f", strings.Repeat("v", 100))
	must(0, "HSET", "hash:ttl", "f", "v")
	must(0, "PEXPIREAT", "hash:ttl", strconv.FormatInt(expireAt, 10))

	for i := 1; i <= 250; i++ {
		id := "1000-" + strconv.Itoa(i)
		if i%5 == 0 {
			must(0, "XADD", "stream:plain", id, "other", strconv.Itoa(i), "x", "y")
		} else {
			must(0, "XADD", "stream:plain", id, "name", "n"+strconv.Itoa(i), "value", strconv.Itoa(i*3))
		}
	}
	must(0, "XDEL", "stream:plain", "1000-7", "1000-100", "1000-250")
	must(0, "XTRIM", "stream:plain", "MAXLEN", "200")
	for i := 1; i <= 30; i++ {
		must(0, "XADD", "stream:groups", strconv.Itoa(2000+i)+"-0", "k", "v"+strconv.Itoa(i))
	}
	must(0, "XGROUP", "CREATE", "stream:groups", "g1", "0")
	must(0, "XGROUP", "CREATE", "stream:groups", "g2", "$")
	must(0, "XGROUP", "CREATE", "stream:groups", "g3", "2010-0", "ENTRIESREAD", "10")
	must(0, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "stream:groups", ">")
	must(0, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "4", "STREAMS", "stream:groups", ">")
	must(0, "XREADGROUP", "GROUP", "g3", "carol", "COUNT", "2", "STREAMS", "stream:groups", ">")
	must(0, "XACK", "stream:groups", "g1", "2001-0", "2007-0")
	must(0, "XCLAIM", "stream:groups", "g1", "bob", "0", "2002-0")
	must(0, "XGROUP", "CREATECONSUMER", "stream:groups", "g2", "idle")
	must(0, "XDEL", "stream:groups", "2030-0")
	must(0, "XADD", "stream:empty", "5-1", "a", "b")
	must(0, "XDEL", "stream:empty", "5-1")
	must(0, "XADD", "stream:setid", "7-1", "a", "b")
	must(0, "XSETID", "stream:setid", "9-9", "ENTRIESADDED", "12", "MAXDELETEDID", "8-0")
	must(0, "XADD", "stream:ttl", "1-1", "a", "b")
	must(0, "PEXPIREAT", "stream:ttl", strconv.FormatInt(expireAt, 10))

	must(3, "SET", "db3:str", "three")
	must(3, "RPUSH", "db3:list", "a", "b")
	must(3, "HSET", "db3:hash", "a", "1")
	must(15, "SADD", "db15:set", "x", "y")
	must(15, "SET", "{tag}a", "1")
	must(15, "SET", "{tag}b", "2")
}

// keyspaceVia reads every key of databases 0..15 through run: type, expiry
// and value (valueText), and OBJECT ENCODING separately.
func keyspaceVia(t *testing.T, run runner) (keys, encodings map[string]string) {
	t.Helper()
	keys, encodings = map[string]string{}, map[string]string{}
	for db := range keyspace.NumDatabases {
		for _, k := range run(db, "KEYS", "*").Elems {
			key := string(k.Str)
			kind := string(run(db, "TYPE", key).Str)
			at := run(db, "PEXPIRETIME", key).Int
			name := strconv.Itoa(db) + "/" + key
			keys[name] = fmt.Sprintf("%s expire=%d %s", kind, at, valueText(run, db, kind, key))
			encodings[name] = string(run(db, "OBJECT", "ENCODING", key).Str)
		}
	}
	return keys, encodings
}

// compareKeyspaces fails when a and b (from keyspaceVia) differ.
func compareKeyspaces(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing", k))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%s:\n   got %.400q\n  want %.400q", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: unexpected", k))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s: %d differences:\n%s", what, len(diffs), strings.Join(diffs[:min(len(diffs), 20)], "\n"))
	}
	if len(want) == 0 {
		t.Fatalf("%s: nothing to compare", what)
	}
	t.Logf("%s: %d keys equal", what, len(want))
}

// checkRDB runs Debian's redis-check-rdb on path; it fails the test unless
// the file is reported OK.
func checkRDB(t *testing.T, path string) {
	t.Helper()
	bin, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		t.Fatal("redis-check-rdb is required (apt-get install redis-tools)")
	}
	out, err := exec.Command(bin, path).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
		t.Fatalf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
}

// ---- the tests ------------------------------------------------------------------

// TestRDBRoundTripRedis: svcdb → RDB → redis-server → RDB → svcdb keeps
// every type, encoding-independent value and TTL. Our file passes
// redis-check-rdb and loads into redis-server; the file redis-server writes
// back loads with LoadRDB; after each load OBJECT ENCODING is what Redis
// reports after loading the same file, and memory accounting adds up.
func TestRDBRoundTripRedis(t *testing.T) {
	expireAt := time.Now().Add(3 * time.Hour).UnixMilli()
	src, table := newSnapRuntime(t, 4, RunToCompletion, true)
	srcRun := producerRunner(newProducer(src, table))
	fillEveryEncoding(t, srcRun, expireAt)
	want, _ := keyspaceVia(t, srcRun)

	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := src.WriteSnapshot(f, [2]string{"redis-ver", "7.0.15"}, [2]string{"redis-bits", "64"},
		[2]string{"ctime", strconv.FormatInt(time.Now().Unix(), 10)}, [2]string{"used-mem", "1000000"}, [2]string{"aof-base", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st.Keys != int64(len(want)) {
		t.Fatalf("snapshot wrote %d keys; the keyspace has %d", st.Keys, len(want))
	}
	checkRDB(t, filepath.Join(dir, "dump.rdb"))

	// Our file in redis-server.
	srv := startRedis(t, dir)
	rc := dialRESP(t, srv.Addr)
	inRedis, redisEnc := keyspaceVia(t, rc.do)
	compareKeyspaces(t, "redis-server after loading our snapshot", inRedis, want)

	// Our file in svcdb: the encodings Redis chose for the same file.
	own, ownTable := newSnapRuntime(t, 3, RunToCompletion, false)
	file, _ := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if _, err := own.LoadRDB(bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	checkLoadedStructures(t, own)
	ownKeys, ownEnc := keyspaceVia(t, producerRunner(newProducer(own, ownTable)))
	compareKeyspaces(t, "svcdb after loading its own snapshot", ownKeys, want)
	compareKeyspaces(t, "OBJECT ENCODING after loading the same file", ownEnc, redisEnc)

	// Redis' file back in svcdb.
	if v := rc.do(0, "SAVE"); v.Type != '+' {
		t.Fatalf("SAVE: %v", v)
	}
	srv.Stop()
	back, backTable := newSnapRuntime(t, 2, Dedicated, true)
	file, _ = os.ReadFile(filepath.Join(dir, "dump.rdb"))
	ls, err := back.LoadRDB(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if ls.Keys != int64(len(want)) || ls.Expired != 0 {
		t.Fatalf("LoadRDB of Redis' file: %+v; want %d keys", ls, len(want))
	}
	backKeys, _ := keyspaceVia(t, producerRunner(newProducer(back, backTable)))
	compareKeyspaces(t, "svcdb after the round trip through redis-server", backKeys, want)
}

// TestLoadRedisDump: a dump.rdb that redis-server wrote after being filled
// by commands loads with LoadRDB and reads back equal, streams with groups,
// consumers and pending entries included; OBJECT ENCODING after the load is
// what redis-server reports after loading the same file, under the default
// thresholds and under lower *-entries thresholds given to both; memory
// accounting adds up; keys already expired are skipped and counted.
func TestLoadRedisDump(t *testing.T) {
	dir := t.TempDir()
	srv := startRedis(t, dir)
	rc := dialRESP(t, srv.Addr)
	fillEveryEncoding(t, rc.do, time.Now().Add(3*time.Hour).UnixMilli())
	rc.do(5, "SET", "gone", "x", "PX", "30")
	rc.do(5, "HSET", "gone:hash", "f", "v")
	rc.do(5, "PEXPIRE", "gone:hash", "30")
	// SAVE writes the two short-lived keys (with their times); by the time
	// LoadRDB reads the file they have expired, so it must skip them.
	if v := rc.do(0, "SAVE"); v.Type != '+' {
		t.Fatalf("SAVE: %v", v)
	}
	want, _ := keyspaceVia(t, rc.do)
	delete(want, "5/gone")
	delete(want, "5/gone:hash")
	srv.Stop()
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond) // the two short-lived keys are past their time now

	type limits struct {
		name  string
		redis []string
		ours  keyspace.EncodingLimits
	}
	low := keyspace.DefaultEncodingLimits
	low.HashMaxListpackEntries, low.SetMaxIntsetEntries, low.ZSetMaxListpackEntries = 3, 3, 3
	for _, l := range []limits{
		{"default thresholds", nil, keyspace.DefaultEncodingLimits},
		{"low thresholds", []string{"--hash-max-listpack-entries", "3", "--set-max-intset-entries", "3", "--zset-max-listpack-entries", "3"}, low},
	} {
		t.Run(l.name, func(t *testing.T) {
			rt, table := newSnapRuntime(t, 4, RunToCompletion, true)
			rt.SetEncodingLimits(l.ours)
			ls, err := rt.LoadRDB(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if ls.Keys != int64(len(want)) || ls.Expired != 2 {
				t.Fatalf("LoadRDB: %+v; want %d keys and 2 expired", ls, len(want))
			}
			got, gotEnc := keyspaceVia(t, producerRunner(newProducer(rt, table)))
			compareKeyspaces(t, "svcdb after loading Redis' dump", got, want)

			// Redis' encodings after loading the same file (the expired
			// keys are skipped by it too).
			reload := t.TempDir()
			if err := os.WriteFile(filepath.Join(reload, "dump.rdb"), file, 0o644); err != nil {
				t.Fatal(err)
			}
			srv := startRedis(t, reload, l.redis...)
			_, redisEnc := keyspaceVia(t, dialRESP(t, srv.Addr).do)
			compareKeyspaces(t, "OBJECT ENCODING after loading the same file", gotEnc, redisEnc)

			fresh, _ := newSnapRuntime(t, 4, RunToCompletion, false)
			fresh.SetEncodingLimits(l.ours)
			if _, err := fresh.LoadRDB(bytes.NewReader(file)); err != nil {
				t.Fatal(err)
			}
			checkLoadedStructures(t, fresh)
		})
	}
}

// TestLoadRDBErrors: a key already present is Redis' "duplicated key"
// error; a truncated file is an error, never a panic.
func TestLoadRDBErrors(t *testing.T) {
	src, table := newSnapRuntime(t, 2, RunToCompletion, true)
	p := newProducer(src, table)
	for i := range 50 {
		p.do("SET", "k"+strconv.Itoa(i), "v")
	}
	var file bytes.Buffer
	if _, err := src.WriteSnapshot(&file); err != nil {
		t.Fatal(err)
	}
	if _, err := src.LoadRDB(bytes.NewReader(file.Bytes())); err == nil || !strings.Contains(err.Error(), "RDB has duplicated key 'k") {
		t.Fatalf("loading keys that exist: %v", err)
	}
	fresh, _ := newSnapRuntime(t, 2, RunToCompletion, false)
	if _, err := fresh.LoadRDB(bytes.NewReader(file.Bytes()[:file.Len()/2])); err == nil {
		t.Fatal("a truncated file loaded without an error")
	}
}

// ---- the benchmark ----------------------------------------------------------------

// fillStrings inserts n string keys of 16-byte values into db 0 directly
// (holding each shard), the fastest way to a large keyspace.
func fillStrings(rt *Runtime, n int) {
	val := []byte("0123456789abcdef")
	var key []byte
	for _, s := range rt.shards {
		rt.acquire(s)
	}
	for i := range n {
		key = strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10)
		d := rt.shards[rt.ShardOf(key)].store.DBs()[0]
		o := d.Insert(key, keyspace.KindString)
		d.SetString(o, val)
	}
	for _, s := range rt.shards {
		rt.release(s)
	}
}

// BenchmarkSnapshot1M snapshots 1M keys while two producers keep
// overwriting random keys, and reports the longest time a shard was held by
// one step, the keys serialized per second, the keys written early, the
// writes done meanwhile and their worst latency (and the worst over 100 ms
// of the same load without a snapshot); then it loads the file into
// a fresh runtime and reports LoadRDB's keys per second. Times are reported,
// never asserted. Run with -benchtime=1x.
func BenchmarkSnapshot1M(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		rt, table := newSnapRuntime(b, 4, RunToCompletion, true)
		fillStrings(rt, n)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var writes, worst atomic.Int64
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := newProducer(rt, table)
				r := rand.New(rand.NewPCG(uint64(g), 7))
				for {
					select {
					case <-stop:
						return
					default:
					}
					t := time.Now()
					p.do("SET", "key:"+strconv.Itoa(r.IntN(n)), "fedcba9876543210")
					if d := int64(time.Since(t)); d > worst.Load() {
						worst.Store(d)
					}
					writes.Add(1)
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		worst.Store(0)
		time.Sleep(100 * time.Millisecond)
		idleWorst := worst.Load() // the same writes without a snapshot, for comparison
		worst.Store(0)
		w0 := writes.Load()
		var file bytes.Buffer
		file.Grow(40 << 20)
		st, err := rt.WriteSnapshot(&file)
		w1 := writes.Load()
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		fresh, _ := newSnapRuntime(b, 4, RunToCompletion, false)
		t0 := time.Now()
		ls, err := fresh.LoadRDB(bytes.NewReader(file.Bytes()))
		loadTime := time.Since(t0)
		if err != nil || ls.Keys != n {
			b.Fatalf("LoadRDB: %+v, %v", ls, err)
		}
		b.ReportMetric(float64(st.LongestStep.Microseconds()), "longest-step-µs")
		b.ReportMetric(float64(st.Mark.Microseconds()), "mark-µs")
		b.ReportMetric(float64(st.Keys)/st.Duration.Seconds(), "snapshot-keys/s")
		b.ReportMetric(float64(st.EarlyKeys), "early-keys")
		b.ReportMetric(float64(w1-w0), "writes-during")
		b.ReportMetric(float64(time.Duration(worst.Load()).Microseconds()), "worst-write-µs")
		b.ReportMetric(float64(time.Duration(idleWorst).Microseconds()), "worst-write-no-snapshot-µs")
		b.ReportMetric(float64(ls.Keys)/loadTime.Seconds(), "load-keys/s")
		b.ReportMetric(float64(st.Bytes)/(1<<20), "file-MiB")
	}
}

// TestSnapshotStepAllocs: in steady state a step allocates nothing per key
// beyond its output buffer (strings, lists, sets, hashes, sorted sets).
func TestSnapshotStepAllocs(t *testing.T) {
	rt, table := newSnapRuntime(t, 1, RunToCompletion, false)
	p := newProducer(rt, table)
	for i := range 200 {
		k := strconv.Itoa(i)
		p.do("SET", "s"+k, "value"+k)
		p.do("INCR", "i"+k)
		p.do("RPUSH", "l"+k, "a", "b", "c")
		p.do("SADD", "S"+k, "1", "2", "x")
		p.do("HSET", "h"+k, "f", "v")
		p.do("ZADD", "z"+k, "1", "m")
	}
	s := rt.shards[0]
	d := s.store.DBs()[0]
	ss := &keyspace.SnapshotPart{}
	out := make([]byte, 0, 1<<20)
	allocs := testing.AllocsPerRun(20, func() {
		out = out[:0]
		for _, pos := range d.Index() {
			out = ss.AppendEntry(out, d.Slot(pos), d.ExpireAtSlot(pos))
		}
	})
	if allocs > 0 {
		t.Fatalf("encoding %d keys allocated %.1f times", len(d.Index()), allocs)
	}
}
