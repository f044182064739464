package keyspace

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"unsafe"
)

// TestObjectSize pins the slot size the memory accounting and the docs
// assume: the access word took the object from 80 to 88 bytes, moving the
// volatile place out of it (DB.volPos) back to 80, one set of value
// words instead of three value fields to 48, and the expiry time beside
// the slot (expiry.go) to 40, the key as one pointer to its length-prefixed
// allocation (object.go) to 32 (issue 20, part 1).
func TestObjectSize(t *testing.T) {
	if got := unsafe.Sizeof(Object{}); got != 32 {
		t.Fatalf("object is %d bytes; docs/architecture.md (\"The keyspace\") assumes 32", got)
	}
	if ObjectOverhead < int(unsafe.Sizeof(Object{}))+6 {
		t.Fatalf("objectOverhead %d does not cover the object (%d) and its index bucket", ObjectOverhead, unsafe.Sizeof(Object{}))
	}
}

func TestParsePolicy(t *testing.T) {
	for _, name := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
		"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"} {
		p, err := ParsePolicy(name)
		if err != nil || p.String() != name {
			t.Errorf("ParsePolicy(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ParsePolicy("allkeys-fifo"); err == nil {
		t.Error("ParsePolicy accepted allkeys-fifo")
	}
	// Redis' flag bits decide what a policy tracks.
	if AllKeysLFU&policyLFU == 0 || VolatileLFU&policyLFU == 0 || AllKeysLRU&policyLFU != 0 ||
		AllKeysLRU&policyAllKeys == 0 || VolatileLRU&policyAllKeys != 0 || VolatileTTL&(policyLRU|policyLFU) != 0 {
		t.Error("policy flag bits differ from Redis' MAXMEMORY_FLAG_*")
	}
}

// TestLFUArithmetic checks evict.c's counter arithmetic: deterministic
// increments up to LFU_INIT_VAL+1, then probability 1/((c-5)*10+1),
// saturation at 255, one decrement per minute with the 16-bit wrap.
func TestLFUArithmetic(t *testing.T) {
	for c := uint32(0); c <= LFUInitVal; c++ {
		if got := lfuLogIncr(c); got != c+1 {
			t.Fatalf("lfuLogIncr(%d) = %d; want %d (probability 1)", c, got, c+1)
		}
	}
	if lfuLogIncr(255) != 255 {
		t.Fatal("the counter must saturate at 255")
	}
	const n = 200000
	for _, c := range []uint32{6, 10, 20} {
		inc := 0
		for range n {
			if lfuLogIncr(c) == c+1 {
				inc++
			}
		}
		p := 1 / (float64(c-LFUInitVal)*lfuLogFactor + 1)
		if got := float64(inc) / n; got < p*0.9 || got > p*1.1 {
			t.Errorf("counter %d incremented with frequency %.4f; want %.4f", c, got, p)
		}
	}
	e := &evictor{}
	e.minutes.Store(100)
	for _, tc := range []struct{ ldt, counter, want uint32 }{
		{100, 7, 7}, {97, 7, 4}, {90, 7, 0}, {0, 255, 155},
	} {
		if got := e.lfuDecr(tc.ldt<<8 | tc.counter); got != tc.want {
			t.Errorf("lfuDecr(ldt %d, counter %d) at minute 100 = %d; want %d", tc.ldt, tc.counter, got, tc.want)
		}
	}
	e.minutes.Store(2) // wrapped: 65535-65530+2 = 7 minutes
	if got := e.lfuDecr(65530<<8 | 10); got != 3 {
		t.Errorf("lfuDecr across the minute wrap = %d; want 3", got)
	}
}

func TestIdleMillisWraps(t *testing.T) {
	e := &evictor{}
	e.stamp.Store(50)
	if got := e.idleMillis(40); got != 10_000 {
		t.Errorf("idle = %d ms; want 10000", got)
	}
	if got := e.idleMillis(lruClockMax - 5); got != 55_000 { // estimateObjectIdleTime's wrap
		t.Errorf("idle across the clock wrap = %d ms; want 55000", got)
	}
}

// TestEvictionPoolKeepsBest feeds the pool random candidates and checks it
// holds the 16 best, sorted, as Redis' evictionPoolPopulate does.
func TestEvictionPoolKeepsBest(t *testing.T) {
	var p evictionPool
	var all []uint64
	for i := range 500 {
		idle := rand.Uint64N(1 << 40)
		all = append(all, idle)
		p.insert(idle, strconv.Itoa(i), 0)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	best := all[len(all)-evictionPoolSize:]
	for i, ent := range p.entries {
		if !ent.used || ent.idle != best[i] {
			t.Fatalf("entry %d = %+v; want idle %d (pool %+v)", i, ent, best[i], p.entries)
		}
	}
}
