package shard

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// newBareRuntime is a Runtime without its background loops: the access clock
// moves only when a test calls rt.env.evict.tick, so idle times are exact.
func newBareRuntime(t testing.TB, shards int) (*Runtime, *command.Table) {
	t.Helper()
	table := command.New()
	rt, err := New(Config{Shards: shards, OnPanic: func(cmd string, r any, stack []byte) {
		t.Errorf("handler %s panicked: %v\n%s", cmd, r, stack)
	}}, table)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt, table
}

// TestLookupTouches checks which commands record an access (Redis'
// lookupKey) and which do not (LOOKUP_NOTOUCH: OBJECT, TYPE, TTL, EXISTS).
func TestLookupTouches(t *testing.T) {
	rt, table := newBareRuntime(t, 2)
	p := newProducer(rt, table)
	base := time.Now()
	rt.env.Tick(base)
	p.do("SET", "k", "v")
	p.do("HSET", "h", "f", "v")
	idle := func(key string) int64 {
		t.Helper()
		v := p.do("OBJECT", "IDLETIME", key)
		if v.Type != ':' {
			t.Fatalf("OBJECT IDLETIME %s: %q", key, v.Str)
		}
		return v.Int
	}
	rt.env.Tick(base.Add(30 * time.Second))
	for _, cmd := range [][]string{{"TYPE", "k"}, {"EXISTS", "k"}, {"TTL", "k"}, {"PTTL", "k"},
		{"OBJECT", "ENCODING", "k"}, {"MEMORY", "USAGE", "k"}} {
		p.do(cmd...)
		if got := idle("k"); got != 30 {
			t.Fatalf("after %v IDLETIME = %d; want 30 (not an access)", cmd, got)
		}
	}
	for _, cmd := range [][]string{{"GET", "k"}, {"TOUCH", "k"}, {"APPEND", "k", "x"}, {"HGET", "h", "f"}, {"EXPIRE", "k", "100"}} {
		rt.env.Tick(base.Add(60 * time.Second))
		p.do("SET", "reset-nothing", "x")
		key := cmd[1]
		if got := idle(key); got == 0 {
			t.Fatalf("before %v IDLETIME = 0; the clock did not move", cmd)
		}
		p.do(cmd...)
		if got := idle(key); got != 0 {
			t.Fatalf("after %v IDLETIME = %d; want 0 (an access)", cmd, got)
		}
		base = base.Add(60 * time.Second)
	}
}

// TestObjectFreq checks OBJECT FREQ and IDLETIME under LFU and LRU policies,
// with Redis' error texts.
func TestObjectFreq(t *testing.T) {
	rt, table := newBareRuntime(t, 1)
	p := newProducer(rt, table)
	if v := p.do("SET", "k", "v"); v.Type != '+' {
		t.Fatal(v)
	}
	if v := p.do("OBJECT", "FREQ", "k"); v.Type != '-' || !strings.Contains(string(v.Str), "An LFU maxmemory policy is not selected") {
		t.Fatalf("FREQ under noeviction: %q", v.Str)
	}
	rt.SetMaxMemory(0, keyspace.AllKeysLFU)
	p.do("SET", "k2", "v")
	if v := p.do("OBJECT", "FREQ", "k2"); v.Int != keyspace.LFUInitVal {
		t.Fatalf("a new key's FREQ = %d; want %d", v.Int, keyspace.LFUInitVal)
	}
	for range 200 {
		p.do("GET", "k2")
	}
	if v := p.do("OBJECT", "FREQ", "k2"); v.Int < 8 || v.Int > 20 {
		t.Fatalf("FREQ after 200 reads = %d; want about 10 (logarithmic)", v.Int)
	}
	if v := p.do("OBJECT", "IDLETIME", "k2"); v.Type != '-' || string(v.Str) != "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust." {
		t.Fatalf("IDLETIME under LFU: %q", v.Str)
	}
	// Counters decay by one per minute without access.
	before := p.do("OBJECT", "FREQ", "k2").Int
	rt.env.Tick(time.Now().Add(3 * time.Minute))
	if v := p.do("OBJECT", "FREQ", "k2"); v.Int != before-3 {
		t.Fatalf("FREQ after 3 idle minutes = %d; want %d", v.Int, before-3)
	}
}

// fill writes keys of about valueSize bytes until n are written, returning
// their names.
func fill(p *producer, prefix string, n, valueSize int, ttl bool) []string {
	val := strings.Repeat("x", valueSize)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
		if ttl {
			p.do("SET", keys[i], val, "EX", strconv.Itoa(1000+i))
		} else {
			p.do("SET", keys[i], val)
		}
	}
	return keys
}

func (rt *Runtime) evictedTotal() int64 {
	var n int64
	for _, sn := range rt.Snapshots() {
		n += sn.Evicted
	}
	return n
}

// TestEvictionKeepsMemoryUnderLimit fills past maxmemory under every
// evicting policy, one shard and several, and checks the limit holds after
// every write, the evicted count matches the keys gone, and volatile
// policies never take a key without a TTL.
func TestEvictionKeepsMemoryUnderLimit(t *testing.T) {
	const limit = 400 << 10
	for _, policy := range []keyspace.Policy{keyspace.AllKeysLRU, keyspace.AllKeysLFU, keyspace.AllKeysRandom, keyspace.VolatileLRU, keyspace.VolatileLFU, keyspace.VolatileRandom, keyspace.VolatileTTL} {
		for _, shards := range []int{1, 4} {
			t.Run(fmt.Sprintf("%v/shards=%d", policy, shards), func(t *testing.T) {
				rt, table := newBareRuntime(t, shards)
				p := newProducer(rt, table)
				rt.SetMaxMemory(limit, policy)
				volatile := !policy.AllKeys()
				persistent := fill(p, "keep:", 200, 100, false) // about 64 KiB that volatile policies must keep
				var keys []string
				for i := range 3000 {
					keys = append(keys, "k:"+strconv.Itoa(i))
					p.do("SET", keys[i], strings.Repeat("y", 100), "EX", "5000")
					if used := rt.MemoryUsed(); used > limit+400 {
						t.Fatalf("after write %d used memory %d > limit %d + one key", i, used, limit)
					}
				}
				gone := 0
				for _, k := range append(persistent, keys...) {
					if p.do("EXISTS", k).Int == 0 {
						gone++
					}
				}
				if gone == 0 || int64(gone) != rt.evictedTotal() {
					t.Fatalf("%d keys gone, evicted_keys %d", gone, rt.evictedTotal())
				}
				if volatile {
					for _, k := range persistent {
						if p.do("EXISTS", k).Int == 0 {
							t.Fatalf("%v evicted %s, which has no TTL", policy, k)
						}
					}
				}
			})
		}
	}
}

// TestVolatileTTLOrder: the keys expiring soonest go first.
func TestVolatileTTLOrder(t *testing.T) {
	rt, table := newBareRuntime(t, 1)
	p := newProducer(rt, table)
	val := strings.Repeat("v", 200)
	for i := range 1000 {
		p.do("SET", "k"+strconv.Itoa(i), val, "EX", strconv.Itoa(10000+i*10)) // k0 expires first
	}
	limit := rt.MemoryUsed() * 3 / 4
	rt.SetMaxMemory(limit, keyspace.VolatileTTL)
	// Each command evicts for at most 500 µs (more under -race).
	for i := 0; i == 0 || rt.MemoryUsed() > limit && i < 1000; i++ {
		p.do("SET", "trigger", "x")
	}
	// A quarter of the keys went; with 5 samples per round and a pool of
	// 16, almost all of them must come from the soonest-expiring half.
	early, late := 0, 0
	for i := range 1000 {
		if p.do("EXISTS", "k"+strconv.Itoa(i)).Int == 0 {
			if i < 500 {
				early++
			} else {
				late++
			}
		}
	}
	if early+late < 200 || late*10 > early {
		t.Fatalf("evicted %d of the soonest-expiring half and %d of the latest", early, late)
	}
}

// TestOOMAdmission: noeviction refuses commands that may grow memory (and
// only them) once used memory is over the limit; deleting brings it back.
func TestOOMAdmission(t *testing.T) {
	rt, table := newBareRuntime(t, 2)
	p := newProducer(rt, table)
	keys := fill(p, "k:", 500, 100, false)
	rt.SetMaxMemory(rt.MemoryUsed()-1000, keyspace.NoEviction)
	for _, cmd := range [][]string{{"SET", "new", "v"}, {"APPEND", "k:1", "x"}, {"LPUSH", "l", "x"},
		{"MSET", "a", "1", "b", "2", "c", "3"}, {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}} {
		v := p.do(cmd...)
		if v.Type != '-' || string(v.Str) != keyspace.OOMMessage {
			t.Fatalf("%v under the limit's excess: %c%q; want -%s", cmd, v.Type, v.Str, keyspace.OOMMessage)
		}
	}
	if v := p.do("GET", keys[3]); v.Type != '$' {
		t.Fatalf("GET refused: %q", v.Str)
	}
	// Ten keys of about 160 bytes each (a 48-byte slot) free more than the
	// 1,000 bytes the limit is set under.
	if v := p.do("DEL", keys[0], keys[1], keys[2], keys[3], keys[4], keys[5], keys[6], keys[7], keys[8], keys[9]); v.Int != 10 {
		t.Fatalf("DEL: %v", v)
	}
	if v := p.do("SET", "new", "v"); v.Type != '+' {
		t.Fatalf("SET after DEL freed memory: %q", v.Str)
	}
	if rt.evictedTotal() != 0 {
		t.Fatalf("noeviction evicted %d keys", rt.evictedTotal())
	}
	// Volatile policies with no volatile key left refuse as well.
	rt.SetMaxMemory(rt.MemoryUsed()-1000, keyspace.VolatileLRU)
	if v := p.do("SET", "new2", "v"); v.Type != '-' || string(v.Str) != keyspace.OOMMessage {
		t.Fatalf("volatile-lru without volatile keys: %q", v.Str)
	}
	if !rt.OutOfMemory() {
		t.Fatal("OutOfMemory reports false over the limit with nothing evictable")
	}
	rt.SetMaxMemory(0, keyspace.VolatileLRU)
	if rt.OutOfMemory() {
		t.Fatal("OutOfMemory with maxmemory 0")
	}
}

// TestEvictionTouchesWatch: an evicted key counts as changed for WATCH, as
// a DEL does.
func TestEvictionTouchesWatch(t *testing.T) {
	rt, table := newBareRuntime(t, 1)
	p := newProducer(rt, table)
	p.do("SET", "watched", "v")
	var w keyspace.Watch
	rt.Watch(&w, 0, [][]byte{[]byte("watched")})
	defer rt.Unwatch(&w)
	rt.SetMaxMemory(1, keyspace.AllKeysRandom)
	p.do("SET", "other", "v") // evicts everything it can, then refuses
	if p.do("EXISTS", "watched").Int != 0 {
		t.Fatal("watched key survived a limit of 1 byte")
	}
	rt.HoldAll()
	failed := rt.WatchFailed(&w, time.Now().UnixMilli())
	rt.ReleaseAll()
	if !failed {
		t.Fatal("EXEC would not abort after the watched key was evicted")
	}
}

// TestAdmissionAllocatesNothing: with maxmemory set, GET and SET on existing
// keys still allocate nothing.
func TestAdmissionAllocatesNothing(t *testing.T) {
	rt, table := newBareRuntime(t, 4)
	p := newProducer(rt, table)
	keys := fill(p, "k:", 2000, 50, false)
	rt.SetMaxMemory(rt.MemoryUsed()+10_000, keyspace.AllKeysLFU)
	var c keyspace.Ctx
	c.Bind(rt.env)
	get, set := table.Lookup([]byte("get")), table.Lookup([]byte("set"))
	args := [][]byte{[]byte("set"), []byte(keys[7]), []byte(strings.Repeat("z", 50))}
	idx, _ := rt.Route(set, args)
	run := func() {
		c.Now = time.Now().UnixMilli()
		c.Out = c.Out[:0]
		c.Cmd, c.Args = set, args
		rt.TryExec(idx, &c)
		c.Cmd, c.Args = get, args[:2]
		rt.TryExec(idx, &c)
	}
	run()
	if n := testing.AllocsPerRun(1000, run); n != 0 {
		t.Fatalf("%v allocations per SET+GET with maxmemory set", n)
	}
}

// TestMemoryAccountingMatchesHeap: the shards' memory figure (INFO
// used_memory) against what the keys really cost on the Go heap, for small
// strings, small hashes and the members of one large sorted set: the limit
// an operator sets must mean bytes.
func TestMemoryAccountingMatchesHeap(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		cmd  func(i int) []string
	}{
		{"strings", 200000, func(i int) []string { return []string{"SET", "key:" + strconv.Itoa(i), "value:" + strconv.Itoa(i)} }},
		{"hashes", 100000, func(i int) []string {
			return []string{"HSET", "h:" + strconv.Itoa(i), "f1", "v1", "f2", "value2", "field3", "3", "f4", "abcdefghij"}
		}},
		{"sorted set", 200000, func(i int) []string {
			return []string{"ZADD", "z", strconv.Itoa(i * 7 % 1000), "element:" + strconv.Itoa(i)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, table := newBareRuntime(t, 4)
			p := newProducer(rt, table)
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			before := ms.HeapAlloc
			for i := range tc.n {
				p.do(tc.cmd(i)...)
			}
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heap, est := int64(ms.HeapAlloc-before), rt.MemoryUsed()
			ratio := float64(est) / float64(heap)
			t.Logf("%d keys: heap %d B (%.1f per key), accounted %d B (%.1f per key), ratio %.3f",
				tc.n, heap, float64(heap)/float64(tc.n), est, float64(est)/float64(tc.n), ratio)
			if ratio < 0.85 || ratio > 1.2 {
				t.Fatalf("accounted memory is %.2f of the heap the keys use; want 0.85..1.2", ratio)
			}
		})
	}
}

// BenchmarkMaxMemoryCheck is SET of a 50-byte value through TryExec on 4
// shards: unlimited (one atomic load), a limit far above the data (own
// counters only), and at the limit under allkeys-lru with new keys (a full
// sum and one eviction per write).
func BenchmarkMaxMemoryCheck(b *testing.B) {
	for _, mode := range []string{"unlimited", "under-limit", "evicting"} {
		b.Run(mode, func(b *testing.B) {
			rt, table := newBareRuntime(b, 4)
			p := newProducer(rt, table)
			fill(p, "k:", 20000, 50, false)
			switch mode {
			case "under-limit":
				rt.SetMaxMemory(1<<40, keyspace.AllKeysLRU)
			case "evicting":
				rt.SetMaxMemory(rt.MemoryUsed(), keyspace.AllKeysLRU)
			}
			set := table.Lookup([]byte("set"))
			keys := make([][]byte, 1<<16)
			for i := range keys {
				keys[i] = []byte("k:" + strconv.Itoa(i%20000))
				if mode == "evicting" {
					keys[i] = []byte("new:" + strconv.Itoa(i))
				}
			}
			val := []byte(strings.Repeat("z", 50))
			var c keyspace.Ctx
			c.Bind(rt.env)
			c.Now = time.Now().UnixMilli()
			args := [][]byte{[]byte("set"), nil, val}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				args[1] = keys[i&(len(keys)-1)]
				idx, _ := rt.Route(set, args)
				c.Out, c.Cmd, c.Args = c.Out[:0], set, args
				rt.TryExec(idx, &c)
			}
			b.StopTimer()
			if mode == "evicting" && b.N > 10 && rt.evictedTotal() == 0 {
				b.Fatal("nothing was evicted")
			}
		})
	}
}
