package netloop_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/slowlog"
	"github.com/svcdb/svcdb/diaghttp"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/keyspace"
)

const (
	evictLimit     = 4 << 20 // CONFIG SET maxmemory 4mb
	evictValueSize = 1000
	// evictSlack is what one more key may add after the last check: its value,
	// its name and the per-key overhead of the accounting.
	evictSlack = evictValueSize + 200
)

// evictEnv is a real svcdb over TCP, its go-redis client, and the keys a
// test wrote.
type evictEnv struct {
	t       *testing.T
	ctx     context.Context
	rdb     *redis.Client
	written map[string]bool
}

func startEvictEnv(t *testing.T, policy string) *evictEnv {
	t.Helper()
	ts := startServer(t, withShards(4))
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr})
	t.Cleanup(func() { rdb.Close() })
	e := &evictEnv{t: t, ctx: context.Background(), rdb: rdb, written: map[string]bool{}}
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	for _, kv := range [][2]string{{"maxmemory-policy", policy}, {"maxmemory", "4mb"}} {
		if err := rdb.ConfigSet(e.ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", kv[0], kv[1], err)
		}
	}
	return e
}

func (e *evictEnv) info(section string) map[string]string {
	e.t.Helper()
	s, err := e.rdb.Info(e.ctx, section).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	_, f := parseInfo(e.t, s)
	return f
}

// set writes keys (with a TTL when ttl > 0) in pipelines of 200 and checks
// after each pipeline that used memory stays under the limit plus one key.
// It returns how many writes were refused with -OOM.
func (e *evictEnv) set(keys []string, ttl func(i int) time.Duration) (oom int) {
	e.t.Helper()
	val := strings.Repeat("v", evictValueSize)
	for start := 0; start < len(keys); start += 200 {
		end := min(start+200, len(keys))
		cmds, _ := e.rdb.Pipelined(e.ctx, func(p redis.Pipeliner) error {
			for i := start; i < end; i++ {
				p.Set(e.ctx, keys[i], val, ttl(i))
			}
			return nil
		})
		for i, c := range cmds {
			switch err := c.Err(); {
			case err == nil:
				e.written[keys[start+i]] = true
			case err.Error() == keyspace.OOMMessage:
				oom++
			default:
				e.t.Fatalf("SET %s: %v", keys[start+i], err)
			}
		}
		if used := infoInt(e.t, e.info("memory"), "used_memory"); used > evictLimit+evictSlack {
			e.t.Fatalf("used_memory %d after a burst of writes; maxmemory %d (+%d for one key)", used, evictLimit, evictSlack)
		}
	}
	return oom
}

// checkEvictedCount: INFO evicted_keys equals the keys that disappeared (no
// key expires during these tests: their TTLs are an hour or more).
func (e *evictEnv) checkEvictedCount() int64 {
	e.t.Helper()
	// The expiry loop may evict one more key (the last write may have left
	// memory a key over the limit): read until the count holds still.
	var evicted, gone int64
	for before := int64(-1); before != evicted; {
		before = infoInt(e.t, e.info("stats"), "evicted_keys")
		size, err := e.rdb.DBSize(e.ctx).Result()
		if err != nil {
			e.t.Fatal(err)
		}
		gone = int64(len(e.written)) - size
		evicted = infoInt(e.t, e.info("stats"), "evicted_keys")
	}
	if evicted != gone {
		e.t.Fatalf("evicted_keys %d; %d of %d written keys disappeared", evicted, gone, len(e.written))
	}
	return evicted
}

// survivors counts which of keys still exist.
func (e *evictEnv) survivors(keys []string) int {
	e.t.Helper()
	n := 0
	for start := 0; start < len(keys); start += 500 {
		got, err := e.rdb.Exists(e.ctx, keys[start:min(start+500, len(keys))]...).Result()
		if err != nil {
			e.t.Fatal(err)
		}
		n += int(got)
	}
	return n
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func noTTL(int) time.Duration { return 0 }

// TestEvictionPolicies fills a 4 MB maxmemory past its limit under each
// policy, through go-redis, and checks what was evicted.
func TestEvictionPolicies(t *testing.T) {
	t.Run("noeviction", func(t *testing.T) {
		t.Parallel()
		e := startEvictEnv(t, "noeviction")
		keys := names("k:", 6000)
		if oom := e.set(keys, noTTL); oom == 0 {
			t.Fatal("6000 keys of 1 KB fitted in 4 MB")
		}
		if e.checkEvictedCount() != 0 {
			t.Fatal("noeviction evicted keys")
		}
		if v, err := e.rdb.Get(e.ctx, keys[0]).Result(); err != nil || len(v) != evictValueSize {
			t.Fatalf("GET over the limit: %q %v", v, err)
		}
		// The expiry loop's rehash steps may end an index's rehash after
		// the burst and free its old table, taking used_memory back under
		// the limit: a SET may then fit, as in Redis when serverCron's
		// rehash frees a table. Write until refused: a freed table of a
		// shard's index (tens of KB at this size) holds hundreds of these
		// small keys, 4 MB of them could not fit, and used memory stays
		// under the limit (plus one key) all along.
		for i := 0; ; i++ {
			err := e.rdb.Set(e.ctx, "one-more:"+strconv.Itoa(i), "v", 0).Err()
			if err != nil && err.Error() == keyspace.OOMMessage {
				t.Logf("%d small SETs fitted after the burst", i)
				break
			}
			if err != nil || i == 50000 {
				t.Fatalf("SET %d over the limit: %v", i, err)
			}
		}
		if used := infoInt(t, e.info("memory"), "used_memory"); used > evictLimit+evictSlack {
			t.Fatalf("used_memory %d after the small SETs; maxmemory %d (+%d for one key)", used, evictLimit, evictSlack)
		}
		if n, err := e.rdb.Del(e.ctx, keys[:50]...).Result(); err != nil || n != 50 {
			t.Fatalf("DEL over the limit: %d %v", n, err)
		}
		if err := e.rdb.Set(e.ctx, "one-more", "v", 0).Err(); err != nil {
			t.Fatalf("SET after DEL freed memory: %v", err)
		}
	})

	t.Run("allkeys-lru", func(t *testing.T) {
		t.Parallel()
		e := startEvictEnv(t, "allkeys-lru")
		hot, old, fresh := names("hot:", 200), names("old:", 3100), names("new:", 2500)
		e.set(hot, noTTL)
		e.set(old, noTTL) // just under the limit: nothing evicted yet
		if e.checkEvictedCount() != 0 {
			t.Fatal("evicted before the limit was reached")
		}
		// The LRU clock has a resolution of one second: wait until it ticks
		// past the last old write, so every old key is idler than anything
		// touched from now on. (Writing 3100 keys can straddle a tick on a
		// slow run, and the keys written after it would share a second with
		// the hot ones. The last write may have left memory one key over the
		// limit, which the expiry loop evicts a moment later: ask the last
		// old key left.)
		eventually(t, 4*time.Second, func() bool {
			for i := len(old) - 1; i >= 0; i-- {
				if idle, err := e.rdb.ObjectIdleTime(e.ctx, old[i]).Result(); err == nil {
					return idle >= time.Second
				}
			}
			return false
		}, "OBJECT IDLETIME never reached 1 s")
		for start := 0; start < len(fresh); start += 100 {
			e.read(hot, 1)
			e.set(fresh[start:start+100], noTTL)
		}
		evicted := e.checkEvictedCount()
		h, o, f := e.survivors(hot), e.survivors(old), e.survivors(fresh)
		t.Logf("evicted %d; survivors: hot %d/%d, old %d/%d, new %d/%d", evicted, h, len(hot), o, len(old), f, len(fresh))
		// Sampled LRU, as Redis': a sample of maxmemory-samples keys that
		// holds no old key evicts one touched in the last LRU second, so a
		// few hot and new keys go too, more on a slow run (-race, a loaded
		// machine). Random eviction would take each group at the same rate
		// (about 40% here); LRU must take old keys at least twice as often
		// as hot or new ones (seen: 4 to 10 times; on a slow run the first
		// new keys are idler than the last ones, and rightly go sooner).
		rate := func(alive, all int) float64 { return 1 - float64(alive)/float64(all) }
		oldRate := rate(o, len(old))
		if evicted < 1000 || oldRate < 0.4 || oldRate < 2*rate(h, len(hot)) || oldRate < 2*rate(f, len(fresh)) {
			t.Fatal("LRU did not evict the least recently used keys first")
		}
	})

	t.Run("allkeys-lfu", func(t *testing.T) {
		t.Parallel()
		e := startEvictEnv(t, "allkeys-lfu")
		hot, cold := names("hot:", 200), names("cold:", 7000)
		// A counter decays by one for each minute of the LFU clock (unix
		// minutes, lfu-decay-time 1) since its last access: a new key read
		// across a minute tick says 4, and a hot key that stayed at 6 drops
		// to the new keys' 5. Run the counter checks clear of a tick.
		awayFromMinuteTick(20 * time.Second)
		e.set(hot, noTTL)
		before := e.rdb.ObjectFreq(e.ctx, hot[0]).Val()
		e.read(hot, 40)
		// The counter grows by chance (Redis' logarithmic counter: from 6 a
		// read raises it with probability 1/11), so one key stays at 6 after
		// 40 reads 2.4% of the time: look at the best of 20.
		var after int64
		for _, k := range hot[:20] {
			after = max(after, e.rdb.ObjectFreq(e.ctx, k).Val())
		}
		if before != 5 || after < before+2 {
			t.Fatalf("OBJECT FREQ %d for a new key (want 5), at most %d after 40 reads", before, after)
		}
		if f := e.rdb.ObjectFreq(e.ctx, "missing").Err(); f != redis.Nil {
			t.Fatalf("OBJECT FREQ of a missing key: %v", f)
		}
		e.set(cold, noTTL)
		evicted := e.checkEvictedCount()
		h, c := e.survivors(hot), e.survivors(cold)
		t.Logf("evicted %d; survivors: hot %d/%d, cold %d/%d", evicted, h, len(hot), c, len(cold))
		if evicted < 2000 || h < len(hot)*95/100 || c > len(cold)*2/3 {
			t.Fatal("LFU did not keep the frequently read keys")
		}
	})

	t.Run("allkeys-random", func(t *testing.T) {
		t.Parallel()
		e := startEvictEnv(t, "allkeys-random")
		if oom := e.set(names("k:", 7000), noTTL); oom != 0 {
			t.Fatalf("%d writes refused under allkeys-random", oom)
		}
		if e.checkEvictedCount() < 2000 {
			t.Fatal("too few keys evicted")
		}
	})

	for _, policy := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			e := startEvictEnv(t, policy)
			persistent := names("keep:", 800)
			e.set(persistent, noTTL)
			// volatile-ttl: key i expires 3600+10*rank(i) s from now, ranks
			// shuffled so a key's age says nothing of its TTL.
			volatile := names("vol:", 6000)
			rank := rand.Perm(len(volatile))
			if oom := e.set(volatile, func(i int) time.Duration {
				return time.Duration(3600+10*rank[i]) * time.Second
			}); oom != 0 {
				t.Fatalf("%d writes refused while volatile keys could be evicted", oom)
			}
			evicted := e.checkEvictedCount()
			if got := e.survivors(persistent); got != len(persistent) {
				t.Fatalf("%s evicted %d keys without a TTL", policy, len(persistent)-got)
			}
			if policy == "volatile-ttl" {
				// Most evicted keys must be among the soonest to expire.
				early := 0
				for i, k := range volatile {
					if rank[i] < int(evicted)*5/4 && e.rdb.Exists(e.ctx, k).Val() == 0 {
						early++
					}
				}
				t.Logf("%d evicted; %d of them among the %d soonest to expire", evicted, early, evicted*5/4)
				if early < int(evicted)*85/100 {
					t.Fatal("volatile-ttl did not evict the keys with the shortest TTL first")
				}
			}
			// Keys without a TTL crowd the volatile ones out, then -OOM.
			if oom := e.set(names("more:", 5000), noTTL); oom == 0 {
				t.Fatal("no -OOM once no key with a TTL was left")
			}
			if db0 := e.info("keyspace")["db0"]; !strings.Contains(db0, ",expires=0,") {
				t.Fatalf("-OOM while keys with a TTL were left: db0:%s", db0)
			}
			e.checkEvictedCount()
		})
	}
}

// awayFromMinuteTick returns when the next need of wall time lies within one
// minute of the server's LFU clock (unix seconds / 60, which the server's
// cached clock follows a moment late), waiting for the next minute if not.
func awayFromMinuteTick(need time.Duration) {
	const lag = 2 * time.Second // how late the cached clock may tick, generously
	into := time.Duration(time.Now().UnixNano() % int64(time.Minute))
	switch {
	case into < lag: // the cached clock may not have ticked yet
		time.Sleep(lag - into)
	case into+need > time.Minute:
		time.Sleep(time.Minute - into + lag)
	}
}

// read GETs every key n times, pipelined.
func (e *evictEnv) read(keys []string, n int) {
	e.t.Helper()
	// A key may already be gone (evicted): GET answers nil, which is fine.
	if _, err := e.rdb.Pipelined(e.ctx, func(p redis.Pipeliner) error {
		for range n {
			for _, k := range keys {
				p.Get(e.ctx, k)
			}
		}
		return nil
	}); err != nil && err != redis.Nil {
		e.t.Fatal(err)
	}
}

// TestOOMRepliesMatchRedis runs the same script against a real redis-server
// and svcdb with maxmemory 1 under noeviction: which commands are refused,
// inside and outside MULTI, and how EXEC aborts, byte for byte.
func TestOOMRepliesMatchRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is required (apt-get install redis-server)")
	}
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	script := []struct {
		conn int // 0: the client; 1: a second connection (CONFIG SET while 0 is in MULTI)
		args []string
	}{
		{0, []string{"SET", "a", "hello"}},
		{0, []string{"CONFIG", "SET", "maxmemory-policy", "noeviction"}},
		{0, []string{"CONFIG", "SET", "maxmemory", "1"}},
		{0, []string{"SET", "x", "1"}},
		{0, []string{"APPEND", "a", "x"}},
		{0, []string{"LPUSH", "l", "x"}},
		{0, []string{"GET", "a"}},
		{0, []string{"STRLEN", "a"}},
		{0, []string{"DEL", "nothing"}},
		{0, []string{"EXPIRE", "a", "1000"}},
		{0, []string{"MULTI"}},
		{0, []string{"GET", "a"}},
		{0, []string{"SET", "y", "1"}},
		{0, []string{"PING"}},
		{0, []string{"MULTI"}},
		{0, []string{"WATCH", "a"}},
		{0, []string{"EXEC"}},
		{0, []string{"MULTI"}},
		{0, []string{"DISCARD"}},
		{1, []string{"CONFIG", "SET", "maxmemory", "0"}},
		{0, []string{"MULTI"}},
		{0, []string{"SET", "y", "1"}},
		{0, []string{"GET", "a"}},
		{1, []string{"CONFIG", "SET", "maxmemory", "1"}},
		{0, []string{"EXEC"}},
		{0, []string{"MULTI"}},
		{0, []string{"EXEC"}},
		{1, []string{"CONFIG", "SET", "maxmemory", "0"}},
		{0, []string{"MULTI"}},
		{0, []string{"GET", "a"}},
		{1, []string{"CONFIG", "SET", "maxmemory", "1"}},
		{0, []string{"EXEC"}},
		{1, []string{"CONFIG", "SET", "maxmemory", "0"}},
		{0, []string{"SET", "x", "1"}},
	}
	run := func(addr string) []string {
		conns := []*rawConn{dialRaw(t, addr), dialRaw(t, addr)}
		var out []string
		for _, step := range script {
			out = append(out, fmt.Sprintf("%v -> %s", step.args, conns[step.conn].do(step.args...)))
		}
		return out
	}
	want := run(redistest.Start(t))
	got := run(startServer(t).Addr)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d:\n svcdb %s\n redis %s", i, got[i], want[i])
		}
	}
}

// TestObjectIdleTime: OBJECT IDLETIME grows with time and resets on access,
// not on TYPE, EXISTS, TTL or OBJECT itself; the same steps against a real
// redis-server give the same answers.
func TestObjectIdleTime(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is required (apt-get install redis-server)")
	}
	conns := []*rawConn{dialRaw(t, startServer(t).Addr), dialRaw(t, redistest.Start(t))}
	for _, r := range conns {
		r.do("SET", "read", "v")
		r.do("SET", "inspected", "v")
	}
	time.Sleep(2500 * time.Millisecond) // the LRU clock counts whole seconds
	for i, r := range conns {
		server := []string{"svcdb", "redis"}[i]
		for _, cmd := range [][]string{{"TYPE", "inspected"}, {"EXISTS", "inspected"}, {"TTL", "inspected"}, {"OBJECT", "ENCODING", "inspected"}} {
			r.do(cmd...)
		}
		if idle := r.do("OBJECT", "IDLETIME", "inspected").Int; idle < 2 || idle > 3 {
			t.Errorf("%s: IDLETIME of a key only inspected for 2.5 s = %d; want 2..3", server, idle)
		}
		if idle := r.do("OBJECT", "IDLETIME", "read").Int; idle < 2 || idle > 3 {
			t.Errorf("%s: IDLETIME after 2.5 s = %d; want 2..3", server, idle)
		}
		r.do("GET", "read")
		if idle := r.do("OBJECT", "IDLETIME", "read").Int; idle != 0 {
			t.Errorf("%s: IDLETIME right after GET = %d; want 0", server, idle)
		}
		r.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
		if v := r.do("OBJECT", "IDLETIME", "read"); v.Type != '-' || !strings.HasPrefix(string(v.Str), "ERR An LFU maxmemory policy is selected") {
			t.Errorf("%s: IDLETIME under allkeys-lfu: %s", server, v)
		}
		r.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	}
}

// TestMaxMemoryFollowsConfigSet: CONFIG SET maxmemory moves
// svc_memory_maxmemory_bytes on /metrics, INFO maxmemory, the shards' limit
// and the Go runtime's memory limit (maxmemory + 10% + 8 MiB), and back.
func TestMaxMemoryFollowsConfigSet(t *testing.T) {
	atStart := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(atStart) })
	reg := config.New()
	ts := startServer(t, withNetConfig(func(nc *netloop.Config) { nc.Params = reg }))
	diag := diaghttp.New(diaghttp.Config{Bind: "127.0.0.1", Port: 0, Version: "test"},
		testDiagSource{srv: ts.Srv, rt: ts.RT, reg: reg, table: command.New()})
	if err := diag.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = diag.Shutdown(ctx)
	})
	metric := func(name string) float64 {
		t.Helper()
		res, err := http.Get("http://" + diag.Addr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
		if m == nil {
			t.Fatalf("no %s in /metrics", name)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	r := dialRaw(t, ts.Addr)
	for _, step := range []struct {
		value   string
		bytes   int64
		goLimit int64
	}{
		{"100mb", 100 << 20, 100<<20 + 10<<20 + 8<<20},
		{"1gb", 1 << 30, 1<<30 + 1<<30/10 + 8<<20},
		// maxmemory 0 gives back the limit the process started with, not
		// the one this test found: an earlier test's server may have left
		// its own (the limit is the process').
		{"0", 0, netloop.GoMemoryLimit(0)},
	} {
		if v := r.do("CONFIG", "SET", "maxmemory", step.value); string(v.Str) != "OK" {
			t.Fatalf("CONFIG SET maxmemory %s: %s", step.value, v)
		}
		if got := metric("svc_memory_maxmemory_bytes"); got != float64(step.bytes) {
			t.Errorf("maxmemory %s: svc_memory_maxmemory_bytes %v; want %d", step.value, got, step.bytes)
		}
		if got := infoInt(t, r.info("memory"), "maxmemory"); got != step.bytes {
			t.Errorf("maxmemory %s: INFO maxmemory %d", step.value, got)
		}
		if got, _ := ts.RT.MaxMemory(); got != step.bytes {
			t.Errorf("maxmemory %s: the shards' limit is %d", step.value, got)
		}
		if got := debug.SetMemoryLimit(-1); got != step.goLimit {
			t.Errorf("maxmemory %s: Go memory limit %d; want %d", step.value, got, step.goLimit)
		}
	}
	if netloop.GoMemoryLimit(math.MaxInt64) != math.MaxInt64 {
		t.Error("GoMemoryLimit overflows for a huge maxmemory")
	}
	r.do("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
	if _, p := ts.RT.MaxMemory(); p != keyspace.VolatileTTL || r.info("memory")["maxmemory_policy"] != "volatile-ttl" {
		t.Errorf("maxmemory-policy volatile-ttl: shards have %v, INFO %q", p, r.info("memory")["maxmemory_policy"])
	}
	for i := range 100 {
		r.do("SET", "k"+strconv.Itoa(i), strings.Repeat("v", 100))
	}
	if used, info := metric("svc_memory_used_bytes"), infoInt(t, r.info("memory"), "used_memory"); used != float64(info) || info < 100*100 {
		t.Errorf("svc_memory_used_bytes %v, INFO used_memory %d", used, info)
	}
}

// testDiagSource is what cmd/svcdb's diagSource reads, over a test server.
type testDiagSource struct {
	srv   *netloop.Server
	rt    *shard.Runtime
	reg   *config.Registry
	table *command.Table
}

func (d testDiagSource) Lifecycle() lifecycle.State                    { return lifecycle.Ready }
func (d testDiagSource) Net() netloop.Stats                            { return d.srv.Stats() }
func (d testDiagSource) Shards() []shard.Snapshot                      { return d.rt.Snapshots() }
func (d testDiagSource) MaxMemoryBytes() int64                         { return d.reg.Size("maxmemory") }
func (d testDiagSource) Config() []config.Entry                        { return d.reg.Entries() }
func (d testDiagSource) Clients(limit int) (int, []netloop.ClientInfo) { return d.srv.Clients(limit) }
func (d testDiagSource) StatusJSON() []byte                            { return d.srv.StatusJSON() }
func (d testDiagSource) CommandStats() *cmdstats.Snapshot              { return d.srv.CommandStats() }
func (d testDiagSource) CommandName(id int) string                     { return d.table.ByID(id).FullName }
func (d testDiagSource) CommandCallCounts(dst []int64) []int64         { return d.srv.CommandCallCounts(dst) }
func (d testDiagSource) RunID() string                                 { return d.srv.RunID() }
func (d testDiagSource) RedisAddr() string                             { return d.srv.Addr() }
func (d testDiagSource) Slowlog() *slowlog.Log                         { return d.srv.Slowlog() }
func (d testDiagSource) Latency() *latency.Monitor                     { return d.srv.Latency() }
func (d testDiagSource) InfoText(sections ...string) string            { return d.srv.InfoText(sections...) }
func (d testDiagSource) RecentLogs(int) []string                       { return nil }
