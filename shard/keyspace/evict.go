package keyspace

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Memory limits and eviction: maxmemory, maxmemory-policy and the per-key
// access clock, as Redis' evict.c and the lru field of its objects.
//
// Every key keeps an access word (object.access), updated by each lookup a
// command makes (DB.lookup; DB.peek is Redis' LOOKUP_NOTOUCH). Under the LRU
// policies and noeviction it is Redis' LRU clock, unix seconds modulo 2^24;
// under the LFU policies it is Redis' logarithmic access counter (low 8 bits)
// and the minutes of its last decrement (16 bits above). Both clocks come
// from the runtime's cached clock, refreshed by the expiry loop, never from
// time.Now per command.
//
// Eviction is Redis' sampled approximation, per shard: before a command that
// may grow memory (command.FlagDenyOOM) the shard that executes it compares
// its own usage with its fair share of maxmemory (the counters of the
// databases it writes); only near that share does it sum every shard's, and
// when the total is over the limit it deletes its own keys, best candidates
// first from a pool of 16 fed by 5 samples per database, until the total is
// under the limit. When nothing here can be evicted the command is refused
// with -OOM. The expiry loop does the same for every shard 10 times a second,
// so a lowered limit or a shard that only serves reads is brought back under
// the limit too.

// Policy is a maxmemory-policy, numbered as Redis' MAXMEMORY_* constants: the
// low bits say what a policy tracks (LRU, LFU) and whether it may evict any
// key or only keys with a time to live.
type Policy uint32

const (
	policyLRU     Policy = 1 << 0 // MAXMEMORY_FLAG_LRU
	policyLFU     Policy = 1 << 1 // MAXMEMORY_FLAG_LFU
	policyAllKeys Policy = 1 << 2 // MAXMEMORY_FLAG_ALLKEYS

	VolatileLRU    = 0<<8 | policyLRU
	VolatileLFU    = 1<<8 | policyLFU
	VolatileTTL    = Policy(2 << 8)
	VolatileRandom = Policy(3 << 8)
	AllKeysLRU     = 4<<8 | policyLRU | policyAllKeys
	AllKeysLFU     = 5<<8 | policyLFU | policyAllKeys
	AllKeysRandom  = 6<<8 | policyAllKeys
	NoEviction     = Policy(7 << 8)
)

var policyNames = []struct {
	p    Policy
	name string
}{
	{VolatileLRU, "volatile-lru"}, {VolatileLFU, "volatile-lfu"}, {VolatileTTL, "volatile-ttl"},
	{VolatileRandom, "volatile-random"}, {AllKeysLRU, "allkeys-lru"}, {AllKeysLFU, "allkeys-lfu"},
	{AllKeysRandom, "allkeys-random"}, {NoEviction, "noeviction"},
}

// AllKeys reports whether p evicts among every key (allkeys-*), not only
// among keys with a time to live.
func (p Policy) AllKeys() bool { return p&policyAllKeys != 0 }

func (p Policy) String() string {
	for _, n := range policyNames {
		if n.p == p {
			return n.name
		}
	}
	return fmt.Sprintf("Policy(%d)", uint32(p))
}

// ParsePolicy reads a maxmemory-policy name as Redis writes it.
func ParsePolicy(name string) (Policy, error) {
	for _, n := range policyNames {
		if n.name == name {
			return n.p, nil
		}
	}
	return 0, fmt.Errorf("unknown maxmemory-policy %q", name)
}

// Redis' constants (server.h, evict.c); maxmemory-samples, lfu-log-factor and
// lfu-decay-time are Redis' defaults, not parameters in svcdb.
const (
	lruBits            = 24
	lruClockMax        = 1<<lruBits - 1 // LRU_CLOCK_MAX
	lruClockResolution = 1000           // ms per LRU clock tick (LRU_CLOCK_RESOLUTION)
	LFUInitVal         = 5              // LFU_INIT_VAL: a new key's counter
	lfuLogFactor       = 10             // lfu-log-factor
	lfuDecayTime       = 1              // lfu-decay-time, minutes per counter decrement
	maxmemorySamples   = 5              // maxmemory-samples
	evictionPoolSize   = 16             // EVPOOL_SIZE
	// EvictionTimeLimit bounds the eviction a command waits for, as Redis'
	// evictionTimeLimitUs at maxmemory-eviction-tenacity 10; past it the
	// command runs and the next ones (and the expiry loop) go on evicting.
	EvictionTimeLimit = 500 * time.Microsecond
)

// OOMMessage is Redis' shared.oomerr without its "-" and line end: the reply
// to a command that may grow memory while used memory is over maxmemory.
const OOMMessage = "OOM command not allowed when used memory > 'maxmemory'."

const OOMReply = "-" + OOMMessage + "\r\n"

// evictor is the runtime's memory limit, eviction policy and access clock,
// and one eviction pool per shard.
//
// Invariants: limit, policy, over and the clocks are written by CONFIG SET
// (SetMaxMemory), the expiry loop and shards executing commands, and read by
// anyone with one atomic load each; pools[i] is touched only by the holder of
// shard i's token. stamp&lruClockMax == unix seconds & lruClockMax (Redis'
// LRU clock) and minutes == (unix seconds / 60) & 65535 for the same instant
// (sec); stamp's stampLFU bit is set exactly while policy is an LFU policy,
// so a lookup decides and reads the clock with one load. mu orders the
// writers of stamp (tick, setPolicy).
type evictor struct {
	_       [64]byte     // keep the read-mostly words below off other fields' cache lines
	limit   atomic.Int64 // maxmemory in bytes; 0 = unlimited
	policy  atomic.Uint32
	over    atomic.Bool   // the last sum of every shard's memory was over limit
	stamp   atomic.Uint32 // the LRU clock, | stampLFU under an LFU policy
	minutes atomic.Uint32 // Redis' LFUGetTimeInMinutes
	// held: CLIENT PAUSE is in effect; no key expires (DB.Peek keeps an
	// expired key, which reads as missing) and none is evicted.
	held atomic.Bool
	_    [64]byte
	mu   sync.Mutex
	sec  int64 // unix seconds of the last tick; guarded by mu
}

const stampLFU = 1 << 31

// detachedEvictor serves databases built outside a Runtime (tests of DB
// alone): no limit, noeviction, a clock frozen at package start.
var detachedEvictor = func() *evictor {
	e := &evictor{}
	e.tick(time.Now())
	e.setPolicy(NoEviction)
	return e
}()

// attach gives every database of shards this evictor and each shard a pool.
func (e *evictor) attach(stores []*Store) {
	e.tick(time.Now())
	e.setPolicy(NoEviction)
	for _, st := range stores {
		for _, d := range st.dbs {
			d.evict = e
		}
	}
}

// tick refreshes the cached clocks (Redis' serverCron updating lruclock and
// unixtime).
func (e *evictor) tick(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sec = now.Unix()
	e.minutes.Store(uint32(e.sec/60) & 65535)
	e.storeStamp()
}

// setPolicy changes the policy and the stamp's LFU bit with it.
func (e *evictor) setPolicy(p Policy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.policy.Store(uint32(p))
	e.storeStamp()
}

// storeStamp derives stamp from sec and policy. REQUIRES: e.mu held.
func (e *evictor) storeStamp() {
	w := uint32(e.sec & lruClockMax)
	if e.loadPolicy()&policyLFU != 0 {
		w |= stampLFU
	}
	e.stamp.Store(w)
}

func (e *evictor) loadPolicy() Policy { return Policy(e.policy.Load()) }

// lruClock is Redis' LRU_CLOCK, from the cached clock.
func (e *evictor) lruClock() uint32 { return e.stamp.Load() & lruClockMax }

// ---- the access word ---------------------------------------------------------

// newAccess is a new key's access word, as Redis' createObject sets lru.
func (e *evictor) newAccess() uint32 {
	w := e.stamp.Load()
	if w&stampLFU != 0 {
		return e.minutes.Load()<<8 | LFUInitVal
	}
	return w
}

// touch records an access to o, as Redis' lookupKey: the LRU clock, or the
// decayed and incremented LFU counter (updateLFU).
func (d *DB) touch(o *Object) {
	w := d.evict.stamp.Load()
	if w&stampLFU != 0 {
		w = d.evict.lfuTouched(o.Access)
	}
	o.Access = w
}

// lfuTouched is Redis' updateLFU on an access word (apart from touch so that
// touch, the LRU case, inlines).
func (e *evictor) lfuTouched(access uint32) uint32 {
	return e.minutes.Load()<<8 | lfuLogIncr(e.lfuDecr(access))
}

// idleMillis is Redis' estimateObjectIdleTime: milliseconds since the access
// recorded in access, reading it as an LRU clock.
func (e *evictor) idleMillis(access uint32) uint64 {
	clock := e.lruClock()
	if clock >= access {
		return uint64(clock-access) * lruClockResolution
	}
	return uint64(clock+(lruClockMax-access)) * lruClockResolution
}

// lfuDecr is Redis' LFUDecrAndReturn: the counter in access, decremented once
// per lfuDecayTime minutes since its last decrement (not stored back).
func (e *evictor) lfuDecr(access uint32) uint32 {
	ldt, counter := access>>8, access&255
	now := e.minutes.Load()
	elapsed := now - ldt // LFUTimeElapsed
	if now < ldt {
		elapsed = 65535 - ldt + now
	}
	if periods := elapsed / lfuDecayTime; periods > 0 {
		if periods > counter {
			return 0
		}
		counter -= periods
	}
	return counter
}

// lfuLogIncr is Redis' LFULogIncr: increment the counter with probability
// 1/((counter-LFU_INIT_VAL)*lfu-log-factor+1), saturating at 255.
func lfuLogIncr(counter uint32) uint32 {
	if counter == 255 {
		return 255
	}
	base := float64(counter) - LFUInitVal
	if base < 0 {
		base = 0
	}
	if rand.Float64() < 1/(base*lfuLogFactor+1) {
		counter++
	}
	return counter
}

// ---- configuration and figures ---------------------------------------------------

// MemoryUsed sums the store's databases' counters; anyone may call it.
func (st *Store) MemoryUsed() int64 {
	var n int64
	for _, d := range st.dbs {
		n += d.Used()
	}
	return n + st.heapWasteShare()
}

// Evict deletes keys of the store chosen by the policy until need bytes are
// freed, nothing in it can be evicted, or budget is spent (checked every 16
// keys, as Redis does). It returns the bytes freed, the keys deleted and
// whether it stopped on the budget. REQUIRES: the caller holds the store's
// shard.
func (st *Store) Evict(need int64, budget time.Duration) (freed int64, keys int, timedOut bool) {
	e := &st.env.evict
	policy := e.loadPolicy()
	if policy == NoEviction || need <= 0 {
		return 0, 0, false
	}
	start := time.Now()
	pool := &st.pool
	for freed < need {
		d, o, pos := pool.victim(st, policy, e)
		if o == nil {
			break
		}
		// What used_memory loses, the structure's part included: from a
		// database's second chunk on, the slot stays (memory.go).
		before := d.Used()
		d.dropKey(o, pos, NotifyEvicted, "evicted") // a DEL for the append-only log

		freed += before - d.Used()
		d.evicted.Add(1)
		if keys++; keys%16 == 0 && time.Since(start) > budget {
			timedOut = true
			break
		}
	}
	return freed, keys, timedOut
}

// evictionPool is Redis' EvictionPoolLRU for one shard: the best candidates
// seen so far, ordered by ascending idle score (the best to evict last).
// Entries name keys, not slots, and are checked when taken: a key deleted or
// changed since it was sampled is a ghost and skipped.
type evictionPool struct {
	entries [evictionPoolSize]poolEntry
	nextDB  int    // the random policies' next database (Redis' static next_db)
	usedDBs uint16 // databases commands that may grow memory selected here (bit per number)
	_       [64]byte
}

// UsedDBsMemory is admit's quick figure for shard s: the memory of the
// databases commands that may grow memory have selected here, db included,
// so the usual single database costs one load rather than 16. A database
// filled otherwise (COPY ... DB n) is missed here until selected, and seen by
// the full sums (the expiry loop's, 10 times a second).
func (st *Store) UsedDBsMemory(db int) int64 {
	p := &st.pool
	p.usedDBs |= 1 << db
	var n int64
	for m := p.usedDBs; m != 0; m &= m - 1 {
		n += st.dbs[bits.TrailingZeros16(m)].Used()
	}
	return n
}

type poolEntry struct {
	idle uint64 // larger is a better candidate
	key  string
	db   int32
	used bool
}

// victim returns the next key of s to evict by policy, or nil when s has none.
func (p *evictionPool) victim(s *Store, policy Policy, e *evictor) (*DB, *Object, uint32) {
	allKeys := policy&policyAllKeys != 0
	if policy == AllKeysRandom || policy == VolatileRandom {
		for range NumDatabases {
			p.nextDB = (p.nextDB + 1) % NumDatabases
			d := s.dbs[p.nextDB]
			if o, pos := d.randomCandidate(allKeys); o != nil {
				return d, o, pos
			}
		}
		return nil, nil, 0
	}
	for {
		total := 0
		for i, d := range s.dbs {
			n := len(d.volatile)
			if allKeys {
				n = d.index.Len()
			}
			if n > 0 {
				total += n
				p.populate(d, int32(i), policy, e)
			}
		}
		if total == 0 {
			return nil, nil, 0
		}
		// Best to worst; a ghost is dropped and the next one tried. A pool
		// holding only ghosts is refilled by the next round.
		for k := evictionPoolSize - 1; k >= 0; k-- {
			ent := &p.entries[k]
			if !ent.used {
				continue
			}
			d, key := s.dbs[ent.db], ent.key
			*ent = poolEntry{}
			if o, pos := d.findString(key); o != nil && (allKeys || o.HasExpire()) {
				return d, o, pos
			}
		}
	}
}

// populate samples d's keys (every key, or those with a TTL) and inserts
// each that beats the pool's worst, as Redis' evictionPoolPopulate.
func (p *evictionPool) populate(d *DB, db int32, policy Policy, e *evictor) {
	var sample [maxmemorySamples]uint32
	n := d.sample(policy&policyAllKeys != 0, sample[:])
	for _, pos := range sample[:n] {
		o := d.Slot(pos)
		var idle uint64
		switch {
		case policy&policyLRU != 0:
			idle = e.idleMillis(o.Access)
		case policy&policyLFU != 0:
			idle = 255 - uint64(e.lfuDecr(o.Access))
		default: // volatile-ttl: the sooner it expires, the better
			idle = math.MaxUint64 - uint64(d.ExpireAtSlot(pos))
		}
		p.insert(idle, o.Key(), db)
	}
}

// insert puts a candidate in its place, keeping entries sorted by idle.
func (p *evictionPool) insert(idle uint64, key string, db int32) {
	ents := &p.entries
	k := 0
	for k < evictionPoolSize && ents[k].used && ents[k].idle < idle {
		k++
	}
	switch {
	case k == 0 && ents[evictionPoolSize-1].used:
		return // worse than the worst, and the pool is full
	case k < evictionPoolSize && !ents[k].used:
		// an empty slot at the insertion point
	case !ents[evictionPoolSize-1].used:
		copy(ents[k+1:], ents[k:evictionPoolSize-1]) // room on the right
	default:
		k-- // full: drop the worst (leftmost) to make room
		copy(ents[:k], ents[1:k+1])
	}
	ents[k] = poolEntry{idle: idle, key: key, db: db, used: true}
}

// sample fills dst with positions of random keys of d (any key when allKeys,
// else keys with a TTL) and returns how many it found, up to len(dst). Keys
// may repeat, as with Redis' dictGetSomeKeys.
func (d *DB) sample(allKeys bool, dst []uint32) int {
	if !allKeys {
		if len(d.volatile) == 0 {
			return 0
		}
		for i := range dst {
			dst[i] = d.volatile[rand.IntN(len(d.volatile))]
		}
		return len(dst)
	}
	if d.index.Len() == 0 {
		return 0
	}
	n := 0
	for tries := 0; n < len(dst) && tries < 4*len(dst); tries++ {
		pos := uint32(rand.IntN(int(d.used)))
		if d.Slot(pos).Kind != KindNone {
			dst[n] = pos
			n++
		}
	}
	if n == 0 { // mostly empty slots: the index from a random bucket
		d.index.Each(rand.Uint64(), func(pos uint32) bool {
			dst[n] = pos
			n++
			return n < len(dst)
		})
	}
	return n
}

// randomCandidate returns a random key of d for the random policies.
func (d *DB) randomCandidate(allKeys bool) (*Object, uint32) {
	var one [1]uint32
	if d.sample(allKeys, one[:]) == 0 {
		return nil, 0
	}
	return d.Slot(one[0]), one[0]
}

// ---- commands --------------------------------------------------------------------
