package keyspace

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/values"
)

// NumDatabases is the number of SELECTable databases, as Redis' default.
const NumDatabases = 16

// MaxShards bounds the shard count so a multi-key command can name its shards
// in a fixed-size bit set.
const MaxShards = 256

// ShardSet is a set of shard numbers.
type ShardSet [MaxShards / 64]uint64

func (s *ShardSet) Add(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s *ShardSet) Has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }
func (s *ShardSet) All(n int) {
	for i := range n {
		s.Add(i)
	}
}

// Store is one shard's part of the keyspace: its databases, the keys that
// may serve blocked clients, a running snapshot's part, its change counter
// and its eviction pool.
//
// Only the holder of the shard's token reads or writes a Store: the runtime
// keeps each Store in an unexported field of its Shard and hands it to
// keyspace code only while it holds that shard's token (a command through
// execute, maintenance after acquire, a control message run by the drainer).
// No mutex guards it. What a reader outside the holder may see is published
// through atomics (the DB counters, dirtyPub).
type Store struct {
	id  int
	env *Env
	dbs [NumDatabases]*DB
	// ready lists keys that may serve blocked clients (waiters.go).
	ready    []readyKey
	serveCtx Ctx           // scratch for serving them
	snap     *SnapshotPart // a running snapshot's part in this store (snapshot.go); nil when none
	// dirty counts changes to the store's keys (Redis' server.dirty), one
	// per touched key; published to readers through dirtyPub.
	dirty    int64
	dirtyPub atomic.Int64
	loading  bool          // an append-only file is being replayed: no active expiry (replay.go)
	pool     evictionPool  // the best eviction candidates seen (evict.go)
	dumpEnc  *SnapshotPart // DUMP's encoder (DumpEncoder), made at the first DUMP
	grew     bool          // a database's index or slots grew by a table or chunk (memory.go)
	// hint is the running command's routed first key and its hash, for
	// its DBs' lookups (keyHint); zero between commands.
	hint keyHint
}

// Env is what every Store of one keyspace shares: the stores themselves
// (a command holding several shards reaches their stores through its Ctx),
// the command handlers and how each routes, the encoding thresholds, the
// append-only log's feed, the eviction policy and clocks, and the count of
// parked clients. The runtime builds one and keeps it unexported; its
// stores are touched only under their tokens (see Store).
type Env struct {
	stores   []*Store
	table    *command.Table
	handlers []Handler // by command ID; nil for commands not executed by shards
	routes   []route   // by command ID
	limits   encodingLimits
	prop     atomic.Pointer[LogFeed] // the append-only log's feed (aoflog.go); nil when off
	blocked  atomic.Int64            // parked clients (waiters.go)
	// heapWaste is the Go heap's fragmentation counted in used_memory
	// (SetHeapWaste); 0 unless the runtime counts it.
	heapWaste atomic.Int64
	evict     evictor // maxmemory, eviction policy and access clock (evict.go)
	// dropped is told of every key expiry or eviction removes (dropKey,
	// aoflog.go); nil when nobody listens. Client tracking invalidates
	// the key there.
	dropped atomic.Pointer[func(db int, key string)]
	notify  notifyState // keyspace notifications (notify.go)
}

// NewEnv builds the stores of a keyspace of n shards for table's commands,
// executed by handlers (from the commands packages: shard/commands).
// The caller keeps the stores as the token rule says (see Store): Env
// offers no way back to them.
func NewEnv(n int, table *command.Table, handlers Handlers) (*Env, []*Store, error) {
	e := &Env{table: table}
	for i := range n {
		st := &Store{id: i, env: e}
		for j := range st.dbs {
			st.dbs[j] = newDB()
			st.dbs[j].owner, st.dbs[j].num = st, j
		}
		e.stores = append(e.stores, st)
	}
	e.evict.attach(e.stores)
	if err := e.register(handlers); err != nil {
		return nil, nil, err
	}
	return e, e.stores, nil
}

// ShardOf returns the shard that owns key among n: xxhash of the key, or of
// the part between the first '{' and the next '}' when that part is not
// empty (Redis Cluster's hash tag rule), so keys sharing a tag live on one
// shard.
func ShardOf(key []byte, n int) int {
	return shardOfHash(xxhash.Sum64(HashTag(key)), n)
}

// shardOfHash is the shard among n of a key whose hash (of its tag, see
// ShardOf) is h. A power of two (the default 16) takes a mask, which is the
// same as the modulo: a 64-bit division was 1.3% of svcdb's CPU under GET
// at pipeline 16 (docs/performance.md, "GET's last percent").
func shardOfHash(h uint64, n int) int {
	if n&(n-1) == 0 {
		return int(h & uint64(n-1))
	}
	return int(h % uint64(n))
}

// shardAndHash is shardOf(key) with the hash it took when that hash is the
// whole key's (the key has no hash tag): the DB's index then takes it for
// its own (keyHash) instead of hashing the key again. whole is false when
// the shard came from a tag's hash.
func (e *Env) shardAndHash(key []byte) (shard int, h uint64, whole bool) {
	tag := HashTag(key)
	h = xxhash.Sum64(tag)
	return shardOfHash(h, len(e.stores)), h, len(tag) == len(key)
}

// HashTag is the part of key ShardOf hashes: between the first '{' and the
// next '}' when that part is not empty, else the whole key. It searches
// with bytes.IndexByte rather than a loop over each byte: the byte loop
// was a third of routing's instructions for a 16-byte key.
func HashTag(key []byte) []byte {
	i := bytes.IndexByte(key, '{')
	if i < 0 {
		return key
	}
	if j := bytes.IndexByte(key[i+1:], '}'); j > 0 {
		return key[i+1 : i+1+j]
	}
	return key
}

// shardOf is the shard of key in this keyspace.
func (e *Env) shardOf(key []byte) int { return ShardOf(key, len(e.stores)) }

// keyHint is the xxhash of the key bytes at p (n of them), taken by Route
// for a command's first key: DB.Find uses it for exactly those bytes, the
// same pointer and length, and hashes any other key (db.go, hashOf). It
// lives in a Store from the moment the command that routed it enters the
// store (Ctx.Enter) until it finishes (Ctx.Finished), while the command's
// arguments are borrowed and never written: the bytes cannot change under
// it, and a stale hint cannot outlive the command.
type keyHint struct {
	p *byte
	n int
	h uint64
}

// matches reports whether h was taken over exactly key's bytes.
func (h *keyHint) matches(key []byte) bool {
	return h.n == len(key) && h.n != 0 && h.p == unsafe.SliceData(key)
}

// A SCAN cursor names a shard and a slot position within it:
// cursor = position<<8 | shard. Cursor 0 starts at shard 0; when a shard is
// done the cursor moves to the next shard's position 0, and after the last
// shard it is 0 again. Slot positions never move while a key lives, so a key
// present for the whole iteration is returned (at least once), as in Redis.
const ScanShardBits = 8

// ParseScanCursor reads a SCAN cursor of a keyspace of n shards.
func ParseScanCursor(b []byte, n int) (shard int, pos uint64, err error) {
	v, ok := values.ParseStrtoul(b)
	if !ok {
		return 0, 0, strconv.ErrSyntax
	}
	shard = int(v & (1<<ScanShardBits - 1))
	if shard >= n {
		return 0, 0, strconv.ErrRange
	}
	return shard, v >> ScanShardBits, nil
}

// DBs is the store's databases, by number.
// REQUIRES: the caller holds the store's shard.
func (st *Store) DBs() *[NumDatabases]*DB { return &st.dbs }

// Dirty is the store's change counter as last published; anyone may read it.
func (st *Store) Dirty() int64 { return st.dirtyPub.Load() }

// SetLoading turns active expiry off (on) while an append-only file is
// replayed. REQUIRES: the caller holds the store's shard.
func (st *Store) SetLoading(on bool) { st.loading = on }

// Loading reports whether an append-only file is being replayed.
// REQUIRES: the caller holds the store's shard.
func (st *Store) Loading() bool { return st.loading }

// Snapshotting reports whether a snapshot has keys pending in this store.
// REQUIRES: the caller holds the store's shard.
func (st *Store) Snapshotting() bool { return st.snap != nil }

// HasReady reports whether keys wait to serve blocked clients.
// REQUIRES: the caller holds the store's shard.
func (st *Store) HasReady() bool { return len(st.ready) > 0 }

// Blocked is how many clients are parked now; anyone may read it.
func (e *Env) Blocked() int64 { return e.blocked.Load() }

// LogFeed is the append-only log's feed, nil while the log is off.
func (e *Env) LogFeed() *LogFeed { return e.prop.Load() }

// SetAppendLog makes the keyspace record every change in l (nil: stop).
// Call it while no command runs (before serving, or holding every shard).
func (e *Env) SetAppendLog(l AppendLog) {
	if l == nil {
		e.prop.Store(nil)
		return
	}
	e.prop.Store(&LogFeed{log: l, lastDB: -1})
}

// SetKeyDropped makes the keyspace call fn for every key it removes on its
// own (lazy and active expiry, eviction) with the database number and the
// key, by the shard's token holder, before the key goes; nil: nobody.
func (e *Env) SetKeyDropped(fn func(db int, key string)) {
	if fn == nil {
		e.dropped.Store(nil)
		return
	}
	e.dropped.Store(&fn)
}

// Limits returns the encoding thresholds in force.
func (e *Env) Limits() *EncodingLimits {
	if l := e.limits.p.Load(); l != nil {
		return l
	}
	return &DefaultEncodingLimits
}

// SetEncodingLimits replaces the thresholds; values already stored convert
// when next written, as in Redis.
func (e *Env) SetEncodingLimits(l EncodingLimits) { e.limits.p.Store(&l) }

// MemoryLimit is maxmemory in bytes (0: unlimited); one atomic load.
func (e *Env) MemoryLimit() int64 { return e.evict.limit.Load() }

// MaxMemory reports the limit and policy in force.
func (e *Env) MaxMemory() (int64, Policy) { return e.evict.limit.Load(), e.evict.loadPolicy() }

// SetMaxMemory applies maxmemory (bytes, 0 = unlimited) and maxmemory-policy.
func (e *Env) SetMaxMemory(limit int64, p Policy) {
	e.evict.setPolicy(p)
	e.evict.limit.Store(max(limit, 0))
	if limit <= 0 {
		e.evict.over.Store(false)
	}
}

// OverLimit reports whether the last sum of every shard's memory was over
// the limit (the stores' quick check reads it).
func (e *Env) OverLimit() bool { return e.evict.over.Load() }

// SetHeapWaste publishes the Go heap's fragmentation the runtime counts in
// used_memory (shard/heapwaste.go); heapWasteShare is store st's part of
// it, the remainder of the division going to store 0, so the stores'
// figures add up to it exactly.
func (e *Env) SetHeapWaste(n int64) { e.heapWaste.Store(n) }

func (st *Store) heapWasteShare() int64 {
	w, n := st.env.heapWaste.Load(), int64(len(st.env.stores))
	if w == 0 || n == 0 {
		return 0
	}
	share := w / n
	if st.id == 0 {
		share += w - share*n
	}
	return share
}

// SetOverLimit publishes the result of a sum of every shard's memory.
func (e *Env) SetOverLimit(over bool) {
	if e.evict.over.Load() != over {
		e.evict.over.Store(over)
	}
}

// HoldExpiry makes lookups keep expired keys (on) while CLIENT PAUSE
// lasts, as Redis 7.0's expireIfNeeded; ExpiryHeld reports it.
func (e *Env) HoldExpiry(on bool) { e.evict.held.Store(on) }
func (e *Env) ExpiryHeld() bool   { return e.evict.held.Load() }

// Tick refreshes the access clocks (Redis' serverCron updating lruclock).
func (e *Env) Tick(now time.Time) { e.evict.tick(now) }

// Counters are a store's published figures.
type Counters struct {
	Keys, Expires, AvgTTL                 [NumDatabases]int64
	Expired, Evicted, MemoryUsed, OffHeap int64
	Hits, Misses                          int64
	// MemoryStructure is the part of MemoryUsed the slots, key indexes and
	// expiry lists hold, MemoryIndex the indexes' part of it (memory.go).
	// MemoryHeapWaste is the store's share of the Go heap's fragmentation,
	// also part of MemoryUsed (0 unless the runtime counts it).
	MemoryStructure, MemoryIndex, MemoryHeapWaste int64
}

// Counters reads the store's published figures; anyone may call it.
func (st *Store) Counters() Counters {
	var c Counters
	for i, d := range st.dbs {
		c.Keys[i] = d.keys.Load()
		c.Expires[i] = d.expires.Load()
		c.AvgTTL[i] = d.avgTTL.Load()
		c.Expired += d.expired.Load()
		c.Evicted += d.evicted.Load()
		c.MemoryUsed += d.Used()
		c.OffHeap += d.offHeap.Load()
		c.MemoryStructure += d.StructureBytes()
		c.MemoryIndex += d.IndexBytesPublished()
		c.Hits += d.hits.Load()
		c.Misses += d.misses.Load()
	}
	c.MemoryHeapWaste = st.heapWasteShare()
	c.MemoryUsed += c.MemoryHeapWaste
	return c
}

// Rehashing reports whether any of the store's key indexes was rehashing
// at its last change (DB.RehashingPublished); anyone may call it.
func (st *Store) Rehashing() bool {
	for _, d := range st.dbs {
		if d.RehashingPublished() {
			return true
		}
	}
	return false
}

// Sizes reads what only the holder may read: each database's index and
// expiry index sizes, and the memory figure.
// REQUIRES: the caller holds the store's shard.
func (st *Store) Sizes() (keys, expires [NumDatabases]int64, memory int64) {
	for i, d := range st.dbs {
		keys[i] = int64(d.index.Len())
		expires[i] = int64(len(d.volatile))
		memory += d.Used()
	}
	return keys, expires, memory
}

// ExpireCycle is the active expiry of every database of the store, until
// deadline (unix ns); nothing expires while a log is replayed. A database
// whose key index is rehashing first gets a step of it (rehashStep), until
// rehashUntil (unix ns): the store's share of the cycle's rehash budget.
// REQUIRES: the caller holds the store's shard.
func (st *Store) ExpireCycle(now, deadline, rehashUntil int64) {
	for _, d := range st.dbs {
		d.rehashStep(rehashUntil)
		if st.loading {
			break // the log being replayed decides what expired
		}
		d.expireCycle(now, deadline)
	}
}
