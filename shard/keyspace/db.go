package keyspace

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/shard/bigbuf"
	"github.com/svcdb/svcdb/shard/keyspace/keyindex"
	"github.com/svcdb/svcdb/shard/values"
)

// Kind is the type of a value, as TYPE reports it: the one enum of package
// values, shared with the RDB codec. The names below let the command handlers
// say KindList rather than values.KindList.
type Kind = values.Kind

const (
	KindNone   = values.KindNone // an empty slot
	KindString = values.KindString
	KindList   = values.KindList
	KindSet    = values.KindSet
	KindZSet   = values.KindZSet
	KindHash   = values.KindHash
	KindStream = values.KindStream
)

const chunkBits = 10
const chunkSize = 1 << chunkBits

// DB is one numbered database inside one shard. Keys are found through index
// and stored in slots, a chunked array whose positions never change while a key
// lives: SCAN walks slot positions, so a key present for a whole scan is always
// returned, and RANDOMKEY and the expiry sampler pick random slots in O(1).
//
// The index (package keyindex) maps keyHash(k) to slot positions and holds no
// key: a lookup compares the candidate slots' Key, and a rehash hashes them
// again (hashAt). So a key costs the index one tag byte and one uint32 per
// bucket, 1.1-2.3 buckets per key (docs/architecture.md, "The keyspace:
// slots and the key index").
//
// Invariants (kept by insert/remove/SetExpire):
//   - index finds k at i  ⇔  slot(i).kind != KindNone && slot(i).key == k
//   - free holds exactly the empty slot positions below len(slots)*chunkSize that were used
//   - volatile[place(i)] == i  ⇔  slot(i).HasExpire(), and volatile holds
//     nothing else; expiry[i>>chunkBits] is non-nil for every such i
//
// A key's expiry time and its place in volatile are kept beside the slots
// (expiry, expiry.go), not in the Object: they took it from 40 to 52 bytes
// (padded to 56) for every key, and a chunk of them is only made for a
// chunk of slots where some key got an expiry.
type DB struct {
	index    keyindex.Index
	view     map[string]uint32 // Index()'s map for tests, built on demand; nil after any change
	chunks   []*[chunkSize]Object
	used     uint32               // slot positions handed out so far
	free     []uint32             // emptied positions, reused before growing
	volatile []uint32             // positions of keys with an expiry
	expiry   []*expiryChunk       // by slot position: its expiry and place in volatile (nil chunk: never had an expiry)
	owner    *Store               // nil for a DB built alone (tests)
	evict    *evictor             // maxmemory policy and access clock (evict.go)
	num      int                  // database number
	blocked  map[string][]*Waiter // clients blocked on keys, oldest first (waiters.go); nil when none
	watched  map[string][]*Watch  // WATCHed keys (watch.go); nil when none
	snap     *dbSnap              // a running snapshot's pending keys (snapshot.go); nil when none
	big      map[*Object]struct{} // strings held off the Go heap (bigstr.go); nil when none

	// Published for readers outside the shard (INFO keyspace, metrics).
	keys    atomic.Int64
	expires atomic.Int64
	// Counters owned by the shard, published atomically.
	expired atomic.Int64
	hits    atomic.Int64 // keyspace_hits: reads that found their key
	misses  atomic.Int64 // keyspace_misses
	memory  atomic.Int64 // per-key view: len(key) + ObjectOverhead + ValueMemory() of every key (memory.go)
	adjust  atomic.Int64 // the structure's real bytes against memory's assumptions (memory.go)
	// structure and indexPub are structureBytes() and the index's bytes,
	// published for INFO memory (memory.go).
	structure atomic.Int64
	indexPub  atomic.Int64
	rehashing atomic.Bool  // the index's Rehashing(), published by accountStructure
	keyRound  int64        // sum over keys of keyCost(len) - len (memory.go); shard-owned
	expChunks int          // non-nil chunks of expiry
	avgTTL    atomic.Int64 // ms; Redis' db->avg_ttl estimate (see expireCycle)
	evicted   atomic.Int64 // keys deleted to stay under maxmemory (evict.go)
	offHeap   atomic.Int64 // bytes of memory held in off-heap strings (bigstr.go)
}

// ObjectOverhead approximates the bytes a key costs beyond its key and value
// bytes: its slot (an Object), its share of the index (5 bytes a bucket,
// 5.7-10 a key with the table 50-88% full) and the allocator's rounding of
// the key (about 8 for short keys). It is MEMORY USAGE's per-key figure;
// used_memory replaces it by what the slots and the index really hold
// (memory.go), so it needs no calibration. It was 152 with a Go map index
// and an 88-byte object, and the literal 98 with an 80-byte one.
const ObjectOverhead = int(unsafe.Sizeof(Object{})) + 18

func newDB() *DB {
	return &DB{evict: detachedEvictor}
}

// keyHash is a key's hash in its database's index: xxhash (as ShardOf) with
// splitmix64's finalizer over it, so that the bits the index takes for the
// home bucket (the top ones) and the tag (the low 7) do not depend on the
// bits that chose the shard: every key of shard s of n has
// xxhash(key) % n == s, which would leave most buckets unused otherwise.
func keyHash(key []byte) uint64 { return remix(xxhash.Sum64(key)) }

func keyHashString(key string) uint64 { return remix(xxhash.Sum64String(key)) }

func remix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// hashAt is the index hash of the key at slot pos: how a rehash moves it.
func (d *DB) hashAt(pos uint32) uint64 { return keyHashString(d.Slot(pos).Key()) }

// Len is the number of keys in d's index (expired keys not yet removed
// included, as DBSIZE counts them).
func (d *DB) Len() int { return d.index.Len() }

// Slots is the number of slot positions handed out so far: Slot(pos) is
// valid for pos < Slots() (SCAN walks them; empty slots have KindNone).
func (d *DB) Slots() uint32 { return d.used }

// EachKey calls fn with every key of d and its object, in slot order; fn
// must not insert or remove keys.
func (d *DB) EachKey(fn func(key string, o *Object)) {
	for pos := range d.used {
		if o := d.Slot(pos); o.Kind != KindNone {
			fn(o.Key(), o)
		}
	}
}

// Hit and Miss count a read that found its key, or did not
// (keyspace_hits, keyspace_misses).
func (d *DB) Hit()  { d.hits.Add(1) }
func (d *DB) Miss() { d.misses.Add(1) }

// CountExpired counts a key removed because its time to live passed
// (expired_keys).
func (d *DB) CountExpired() { d.expired.Add(1) }

// Memory is the approximate bytes held by d's keys and values; AddMemory
// changes it by delta (for a handler that accounts a change itself).
func (d *DB) Memory() int64         { return d.memory.Load() }
func (d *DB) AddMemory(delta int64) { d.memory.Add(delta) }

// Loading reports whether an append-only file is being replayed into d's
// store (never for a DB built alone).
func (d *DB) Loading() bool { return d.owner != nil && d.owner.loading }

// ---- inspection: read-only views for tests and diagnostics ----------------
// REQUIRES (each): the caller holds the store's shard.

// Index is d's keys and their slot positions as a map, built from the slots
// on first use after a change (so a caller that asks again without changing
// d allocates nothing); callers must not change it. For tests and
// diagnostics: commands go through Find.
func (d *DB) Index() map[string]uint32 {
	if d.view == nil {
		d.view = make(map[string]uint32, d.index.Len())
		for pos := range d.used {
			if o := d.Slot(pos); o.Kind != KindNone {
				d.view[o.Key()] = pos
			}
		}
	}
	return d.view
}

// IndexBytes is the memory the key index's tables hold (both while it
// rehashes).
func (d *DB) IndexBytes() int { return d.index.Bytes() }

// OffHeapStrings is the set of d's strings held off the Go heap (nil when
// none; bigstr.go); callers must not change it. OffHeapBytes is their size.
func (d *DB) OffHeapStrings() map[*Object]struct{} { return d.big }
func (d *DB) OffHeapBytes() int64                  { return d.offHeap.Load() }

// Snapshotting reports whether a running snapshot still has keys of d to
// write (snapshot.go).
func (d *DB) Snapshotting() bool { return d.snap != nil }

// Slot returns the object at slot position pos.
func (d *DB) Slot(pos uint32) *Object {
	return &d.chunks[pos>>chunkBits][pos&(chunkSize-1)]
}

// Find returns the object for key without looking at its expiry.
func (d *DB) Find(key []byte) (*Object, uint32) {
	pos, ok := d.index.Find(d.hashOf(key), func(pos uint32) bool { return d.Slot(pos).Key() == string(key) })
	if !ok {
		return nil, 0
	}
	return d.Slot(pos), pos
}

// hashOf is keyHash(key): the hash Route took of these very bytes when the
// running command routed them (Store.hint, see keyHint), else computed.
func (d *DB) hashOf(key []byte) uint64 {
	if st := d.owner; st != nil && st.hint.matches(key) {
		return remix(st.hint.h)
	}
	return keyHash(key)
}

// findString is Find for a key held as a string.
func (d *DB) findString(key string) (*Object, uint32) {
	pos, ok := d.index.Find(keyHashString(key), func(pos uint32) bool { return d.Slot(pos).Key() == key })
	if !ok {
		return nil, 0
	}
	return d.Slot(pos), pos
}

// has reports whether key is in d (expired or not).
func (d *DB) has(key string) bool {
	o, _ := d.findString(key)
	return o != nil
}

// posOf is o's slot position. REQUIRES: o is a live slot of d.
func (d *DB) posOf(o *Object) uint32 {
	pos, _ := d.index.Find(keyHashString(o.Key()), func(pos uint32) bool { return d.Slot(pos) == o })
	return pos
}

// Lookup returns the live object for key, deleting it first if it has expired
// (lazy expiry, as Redis' expireIfNeeded), and records the access for the
// eviction policy, as Redis' lookupKey.
//
// It is Peek (one Find, also for a miss: a miss used to look the key up a
// second time, a third of a missing GET's lookup cost) and the access.
func (d *DB) Lookup(key []byte, now int64) *Object {
	o := d.Peek(key, now)
	if o == nil {
		return nil
	}
	if w := d.evict.stamp.Load(); w&stampLFU == 0 {
		o.Access = w // the LRU clock, inline: the common case (evict.go)
	} else {
		d.touch(o)
	}
	return o
}

// Peek is lookup without recording the access: Redis' LOOKUP_NOTOUCH, for
// commands that inspect a key (OBJECT, TYPE, TTL, EXISTS, MEMORY USAGE).
func (d *DB) Peek(key []byte, now int64) *Object {
	o, pos := d.Find(key)
	if o == nil {
		return nil
	}
	if o.HasExpire() && d.expireAtSlot(pos) <= now {
		d.expireFound(o, pos)
		return nil
	}
	return o
}

// expireFound deletes o, found at pos by a lookup that found it expired
// (lazy expiry), unless CLIENT PAUSE holds expiry: then it is kept and read
// as missing (Redis 7.0).
func (d *DB) expireFound(o *Object, pos uint32) {
	if !d.evict.held.Load() {
		d.dropKey(o, pos, NotifyExpired, "expired")
		d.expired.Add(1)
	}
}

// Insert adds key with an empty value of kind and returns it, and
// publishes the new event (Redis' dbAdd).
// REQUIRES: key is not present.
func (d *DB) Insert(key []byte, kind Kind) *Object {
	o := d.insert(key, kind)
	d.notifyKey(NotifyNew, "new", o.Key())
	return o
}

// Reinsert is Insert for a key whose old value the command just removed
// to put a new one in its place (a STORE destination): as Redis'
// setKey over an existing key (dbOverwrite), no new event.
func (d *DB) Reinsert(key []byte, kind Kind) *Object { return d.insert(key, kind) }

// InsertString is Insert of key followed by SetString(o, val), with the
// key and its value made in one allocation when they colocate (see
// Object): SET and MSET make a new key through it.
// REQUIRES: key is not present.
func (d *DB) InsertString(key, val []byte) *Object {
	o := d.insertString(key, val)
	d.notifyKey(NotifyNew, "new", o.Key())
	return o
}

// insertString is InsertString without the new event (loading).
func (d *DB) insertString(key, val []byte) *Object {
	if len(val) >= bigbuf.Threshold || !colocates(len(key), len(val)) {
		o := d.insert(key, KindString)
		d.SetString(o, val)
		return o
	}
	var kv Object
	kv.setKeyed(unsafe.String(unsafe.SliceData(key), len(key)), val) // a view: setKeyed copies it
	o := d.insertKey(kv.Key(), d.hashOf(key), KindString)
	o.ptr, o.n, o.c, o.words, o.Enc = kv.ptr, kv.n, kv.c, kv.words, EncRaw
	d.memory.Add(o.ValueMemory())
	d.Touched(o.Key())
	return o
}

func (d *DB) insert(key []byte, kind Kind) *Object {
	return d.insertKey(newKey(key), d.hashOf(key), kind)
}

// insertKey is insert with the key's string made by the caller: by newKey,
// or setKeyed's (k's bytes must never change: the index and the slot keep
// them, and the slot only the allocation's start, keyHead), and its hash h
// (keyHash: the caller may have it from Route, see hashOf).
func (d *DB) insertKey(k string, h uint64, kind Kind) *Object {
	if d.evict.held.Load() {
		d.dropHeld(k) // an expired key kept by CLIENT PAUSE (Peek)
	}
	var pos uint32
	if n := len(d.free); n > 0 {
		pos = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		pos = d.used
		if pos>>chunkBits >= uint32(len(d.chunks)) {
			d.chunks = append(d.chunks, new([chunkSize]Object))
		}
		d.used++
	}
	if d.snap != nil {
		d.snapForget(pos) // a key born after the snapshot's point in time
	}
	o := d.Slot(pos)
	*o = Object{key: keyHead(k), Kind: kind, Access: d.evict.newAccess()}
	d.index.Insert(h, pos, d.hashAt)
	d.view = nil
	d.keys.Store(int64(d.index.Len()))
	d.memory.Add(int64(len(k) + ObjectOverhead))
	d.keyRound += int64(keyCost(len(k)) - len(k))
	d.accountStructure()
	if d.blocked != nil && (kind == KindList || kind == KindZSet || kind == KindStream) {
		d.markReady(k)
	}
	d.touchedWatches(k)
	return o
}

// Remove deletes o from the database.
func (d *DB) Remove(o *Object) {
	d.removeAt(o, d.posOf(o))
}

func (d *DB) removeAt(o *Object, pos uint32) {
	d.CountChange()
	d.detach(o, pos)
}

// detach deletes o at slot pos without counting a change: removeAt for
// commands, dropKey for expiry and eviction. WATCHes on the key still see
// it go.
func (d *DB) detach(o *Object, pos uint32) {
	if d.snap != nil {
		d.snapSave(pos) // written as it was before it goes
	}
	d.touchedWatches(o.Key())
	if d.blocked != nil {
		d.markReady(o.Key()) // an XREADGROUP waiting on it is told (waiters.go)
	}
	if o.HasExpire() {
		d.unindexExpire(o, pos)
	}
	d.index.Remove(keyHashString(o.Key()), pos, d.hashAt)
	d.view = nil
	d.memory.Add(-(int64(len(o.Key())+ObjectOverhead) + o.ValueMemory()))
	d.keyRound -= int64(keyCost(len(o.Key())) - len(o.Key()))
	d.unmapStr(o)
	*o = Object{}
	d.free = append(d.free, pos)
	d.keys.Store(int64(d.index.Len()))
	if d.index.Len() == 0 {
		d.reset() // give the memory back once the database is empty
	} else {
		d.accountStructure()
	}
}

func (d *DB) reset() {
	d.index = keyindex.Index{}
	d.view = nil
	d.chunks = nil
	d.used = 0
	d.free = nil
	d.volatile = nil
	d.expiry = nil
	d.expChunks = 0
	d.keyRound = 0
	d.keys.Store(0)
	d.expires.Store(0)
	d.memory.Store(0)
	d.accountStructure()
}

// Flush deletes every key and returns how many there were.
func (d *DB) Flush() int {
	n := d.index.Len()
	if d.snap != nil {
		d.snapFlush()
	}
	if s := d.owner; s != nil { // as Redis' flushdbCommand: server.dirty += keys removed
		s.dirty += int64(n)
		s.dirtyPub.Store(s.dirty)
	}
	for key := range d.watched { // as Redis' touchAllWatchedKeysInDb: only keys that exist
		if d.has(key) {
			d.Touched(key)
		}
	}
	for key := range d.blocked { // XREADGROUP waiters hear their stream went (waiters.go)
		if d.has(key) {
			d.markReady(key)
		}
	}
	d.freeAllOffHeap()
	d.reset()
	d.avgTTL.Store(0)
	return n
}

// SetString stores val as o's string value, reusing o's buffer when it fits so
// that overwriting a key with a value of similar size allocates nothing.
//
// A value of bigbuf.Threshold bytes or more goes off the Go heap
// (bigstr.go), copied in preemptible steps.
func (d *DB) SetString(o *Object, val []byte) {
	checkValueLen(len(val))
	cur := o.Bytes()
	old := cap(cur)
	before := o.ValueMemory()
	switch {
	case cur != nil && old >= len(val) && old <= 2*len(val)+16:
		o.n = uint32(len(val)) // the same buffer: only the length changes
		copyPreemptible(cur[:len(val)], val)
	case len(val) >= bigbuf.Threshold:
		d.unmapStr(o)
		o.SetBytes(nil)
		d.NewStringBuf(o, len(val), len(val), true)
		copyPreemptible(o.Bytes(), val)
	case colocates(len(o.Key()), len(val)):
		d.unmapStr(o)
		o.setKeyed(o.Key(), val) // the previous value's array, if any, is garbage now
	default:
		d.unmapStr(o)
		o.SetBytes(append(make([]byte, 0, len(val)), val...))
	}
	if o.Kind != KindString && d.blocked != nil {
		d.markReady(o.Key()) // a stream overwritten: its XREADGROUP waiters are told
	}
	o.Kind = KindString
	o.Enc = EncRaw
	d.AccountResize(o, before)
	d.Touched(o.Key())
}

// MaxStringLen is the largest string value (Redis' proto-max-bulk-len default).
const MaxStringLen = 512 << 20

// stringMaxPrealloc is Redis' SDS_MAX_PREALLOC: below it a growing string's
// capacity doubles, at and above it the spare room stops doubling.
const stringMaxPrealloc = 1 << 20

// StringCapFor is the capacity a string that has to grow to need bytes gets:
// Redis' sdsMakeRoomFor (greedy) below stringMaxPrealloc, twice what it
// needs; from there on need plus max(stringMaxPrealloc, need/2), never more
// than MaxStringLen unless need itself is (a string can never be longer).
//
// Redis adds a flat 1 MiB because its realloc usually extends a large block
// in place; the Go heap cannot, so every growth copies the whole string into
// fresh pages and leaves the old ones to the GC. With flat +1 MiB steps, 200
// APPENDs of 1 MiB copy about 10 GB (quadratic: 15.6 s in
// BenchmarkAppendGrowth). Growing by half keeps the copying linear (each
// byte copied about twice) and, measured end to end against a server, was
// both faster and left less garbage (RSS) than need/8: 1.17 s and 624 MB
// against 1.90 s and 878 MB (docs/performance.md). The spare room, at most
// a third of the capacity, is counted in used_memory like the rest.
func StringCapFor(need int) int {
	if need < stringMaxPrealloc {
		return 2 * need
	}
	c := need + max(stringMaxPrealloc, need/2)
	if c > MaxStringLen {
		c = max(need, MaxStringLen)
	}
	return c
}

// GrowString makes o.Bytes() need bytes long (need >= len(o.Bytes())), the new
// bytes zero, for APPEND and SETRANGE. Within its capacity it only extends
// the slice; otherwise it moves the string into a buffer of StringCapFor(need)
// bytes, accounted by capacity. REQUIRES: o is a materialized string.
//
// The buffer comes from make, never from append(s, make([]byte, n)...): the
// runtime zeroes a large make in preemptible 256 KiB chunks (and not at all
// for pages fresh from the OS), while append's zero fill is one
// non-preemptible memclr, which for 512 MiB held every other goroutine at
// the next GC's stop-the-world for the whole clear (docs/performance.md).
//
// From bigbuf.Threshold on the string lives off the Go heap and grows with
// mremap by Redis' steps (bigCapFor; bigstr.go).
func (d *DB) GrowString(o *Object, need int) {
	if need <= cap(o.Bytes()) {
		n := len(o.Bytes())
		o.SetBytes(o.Bytes()[:need])
		// A reused buffer may hold a previous value's bytes.
		if o.OffHeap() {
			bigbuf.Zero(o.Bytes()[n:])
		} else {
			clear(o.Bytes()[n:])
		}
		return
	}
	before := o.ValueMemory()
	if need >= bigbuf.Threshold && d.growOffHeap(o, need) {
		d.AccountResize(o, before)
		return
	}
	buf := make([]byte, need, StringCapFor(need))
	copyPreemptible(buf, o.Bytes())
	d.unmapStr(o) // when an mremap failed
	o.SetBytes(buf)
	d.AccountResize(o, before)
}

// copyPreemptible is copy(dst, src) in 256 KiB steps. One copy of a large
// string is one memmove the scheduler cannot interrupt, so a GC that wants
// to stop the world waits for it while every other goroutine already
// stands still; between the steps this goroutine can be preempted.
func copyPreemptible(dst, src []byte) {
	const step = 256 << 10
	for len(src) > step && len(dst) > step {
		copy(dst[:step], src[:step])
		dst, src = dst[step:], src[step:]
	}
	copy(dst, src)
}

// SetInt stores n as o's value with the integer encoding, releasing any byte
// buffer.
func (d *DB) SetInt(o *Object, n int64) {
	d.FreeStr(o)
	o.Kind = KindString
	o.Enc = EncInt
	o.SetInt(n)
	d.Touched(o.Key())
}

// Materialize turns an integer-encoded value into bytes before a command
// edits them in place (APPEND, SETRANGE).
func (d *DB) Materialize(o *Object) {
	if o.Enc != EncInt {
		return
	}
	o.SetBytes(strconv.AppendInt(make([]byte, 0, 24), o.Int(), 10))
	o.Enc = EncRaw
	d.memory.Add(int64(AllocSize(cap(o.Bytes()))))
}

// DropValue empties o's value before it is given a value of another kind.
func (d *DB) DropValue(o *Object) {
	d.memory.Add(-o.ValueMemory())
	d.unmapStr(o)
	o.clearValue()
	o.Kind, o.Enc = KindNone, EncRaw
}

// AccountResize records that o's string bytes changed their allocation;
// before is what o.ValueMemory() was before the change (0 for a value that
// had no bytes). Overwrites in place (the common case) change nothing and
// skip the atomic add. It takes the memory, not the old capacity, because
// a value in its key's allocation (see Object) does not count AllocSize of
// its capacity.
func (d *DB) AccountResize(o *Object, before int64) {
	if delta := o.ValueMemory() - before; delta != 0 {
		d.memory.Add(delta)
	}
}

// RandomLive returns a random live key's object, or nil if the database is
// empty. Expired keys found on the way are deleted.
func (d *DB) RandomLive(now int64) *Object {
	for tries := 0; d.index.Len() > 0 && tries < 100; tries++ {
		o, pos := d.randomSlot()
		if o == nil {
			continue
		}
		if o.HasExpire() && d.expireAtSlot(pos) <= now {
			if !d.evict.held.Load() {
				d.dropKey(o, pos, NotifyExpired, "expired")
				d.expired.Add(1)
			}
			continue
		}
		return o
	}
	// Sparse slots: walk the index from a random bucket.
	var found *Object
	d.index.Each(rand.Uint64(), func(pos uint32) bool {
		o := d.Slot(pos)
		if o.HasExpire() && d.expireAtSlot(pos) <= now {
			return true
		}
		found = o
		return false
	})
	return found
}

func (d *DB) randomSlot() (*Object, uint32) {
	if d.used == 0 {
		return nil, 0
	}
	pos := uint32(rand.IntN(int(d.used)))
	o := d.Slot(pos)
	if o.Kind == KindNone {
		return nil, 0
	}
	return o, pos
}

// rehashStep moves a rehashing key index's entries until the time until
// (unix ns; at least one step of 256 entries), as Redis' incrementallyRehash
// in databasesCron: inserts and removes drain the old table too, but a
// database nobody writes would keep it (and probe it on every miss) until
// then. The runtime's expiry cycle gives it a share of one millisecond per
// cycle, Redis' budget (see Runtime.expireLoop).
func (d *DB) rehashStep(until int64) {
	if !d.index.Rehashing() {
		return
	}
	for d.index.Step(256, d.hashAt) && time.Now().UnixNano() < until {
	}
	d.accountStructure() // the old table goes when drained
}

// expireCycle samples keys with an expiry and deletes the expired ones, as
// Redis' activeExpireCycle: 20 samples a round, another round while more than a
// quarter of the sample had expired, until the deadline (unix ns). It returns
// how many keys it deleted.
func (d *DB) expireCycle(now int64, deadline int64) int {
	deleted := 0
	for len(d.volatile) > 0 {
		sample := min(20, len(d.volatile))
		expired := 0
		var ttlSum, ttlSamples int64
		for range sample {
			if len(d.volatile) == 0 {
				break
			}
			pos := d.volatile[rand.IntN(len(d.volatile))]
			o, at := d.Slot(pos), d.expireAtSlot(pos)
			if at <= now {
				d.dropKey(o, pos, NotifyExpired, "expired")
				expired++
			} else {
				ttlSum += at - now
				ttlSamples++
			}
		}
		if ttlSamples > 0 {
			// As Redis' activeExpireCycle: the first estimate is taken as is,
			// later ones move it by 2% of the difference.
			avg, prev := ttlSum/ttlSamples, d.avgTTL.Load()
			if prev != 0 {
				avg = prev/50*49 + avg/50
			}
			d.avgTTL.Store(avg)
		}
		deleted += expired
		if expired*4 <= sample || time.Now().UnixNano() > deadline {
			break
		}
	}
	d.expired.Add(int64(deleted))
	return deleted
}
