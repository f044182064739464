package shard

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/shard/bigbuf"
	"github.com/svcdb/svcdb/shard/values"
)

// Kind is the type of a value, as TYPE reports it: the one enum of package
// values, shared with the RDB codec. The names below let the command handlers
// say KindList rather than values.KindList.
type Kind = values.Kind

const (
	kindNone   = values.KindNone // an empty slot
	KindString = values.KindString
	KindList   = values.KindList
	KindSet    = values.KindSet
	KindZSet   = values.KindZSet
	KindHash   = values.KindHash
	KindStream = values.KindStream
)

// object is one key and its value. Objects live in fixed-size chunks that never
// move, so an *object stays valid until the key is deleted; it must not outlive
// the command handler that looked it up.
//
// Where a value lives depends on its encoding (see value.go): strings in str
// or ival, compact collections (listpack, intset) in str as one flat buffer,
// full collections behind coll.
type object struct {
	key      string            // shares its bytes with the index map's key
	str      []byte            // encRaw: the string; encListpack/encIntset: the flat encoding
	coll     values.Collection // encHashtable, encSkiplist, encQuicklist, encStream: the structure
	ival     int64             // KindString with encInt: the value, as Redis' OBJ_ENCODING_INT
	expireAt int64             // unix milliseconds; 0 = no expiry
	volIdx   int32             // position in DB.volatile, -1 when expireAt == 0
	access   uint32            // Redis' robj.lru: LRU clock or LFU counter and minutes (evict.go)
	kind     Kind
	enc      encoding
	offHeap  bool // str is a bigbuf mapping, not Go heap (bigstr.go)
}

// encoding is how a string value is held. encInt keeps an integer inside the
// object, so INCR touches no second allocation and parses nothing: on a
// keyspace larger than the cache that saves a memory stall per command.
type encoding uint8

const (
	encRaw       encoding = iota // o.str holds the bytes
	encInt                       // o.ival holds the value; o.str is nil
	encListpack                  // o.str is a listpack (package listpack)
	encIntset                    // o.str is an intset (sorted integers)
	encHashtable                 // o.coll is a hash table (hash or set)
	encSkiplist                  // o.coll is a sorted set's skiplist and map
	encQuicklist                 // o.coll is a list of listpacks
	encStream                    // o.coll is a stream
	encRawEdited                 // o.str holds the bytes, edited in place (APPEND, SETRANGE): Redis' "raw"
)

// value returns a string object's bytes; for encInt they are formatted into
// buf. The result is valid until buf or the object changes.
func (o *object) value(buf *[20]byte) []byte {
	if o.enc == encInt {
		return strconv.AppendInt(buf[:0], o.ival, 10)
	}
	return o.str
}

const chunkBits = 10
const chunkSize = 1 << chunkBits

// DB is one numbered database inside one shard. Keys are found through index
// and stored in slots, a chunked array whose positions never change while a key
// lives: SCAN walks slot positions, so a key present for a whole scan is always
// returned, and RANDOMKEY and the expiry sampler pick random slots in O(1).
//
// Invariants (kept by insert/remove/setExpire):
//   - index[k] == i  ⇔  slot(i).kind != kindNone && slot(i).key == k
//   - free holds exactly the empty slot positions below len(slots)*chunkSize that were used
//   - volatile[o.volIdx] == position of o  ⇔  o.expireAt != 0
type DB struct {
	index    map[string]uint32
	chunks   []*[chunkSize]object
	used     uint32               // slot positions handed out so far
	free     []uint32             // emptied positions, reused before growing
	volatile []uint32             // positions of keys with an expiry
	owner    *Store               // nil for a DB built alone (tests)
	evict    *evictor             // maxmemory policy and access clock (evict.go)
	num      int                  // database number
	blocked  map[string][]*Waiter // clients blocked on keys, oldest first (blocking.go); nil when none
	watched  map[string][]*Watch  // WATCHed keys (watch.go); nil when none
	snap     *dbSnap              // a running snapshot's pending keys (snapshot.go); nil when none
	big      map[*object]struct{} // strings held off the Go heap (bigstr.go); nil when none

	// Published for readers outside the shard (INFO keyspace, metrics).
	keys    atomic.Int64
	expires atomic.Int64
	// Counters owned by the shard, published atomically.
	expired atomic.Int64
	hits    atomic.Int64 // keyspace_hits: reads that found their key
	misses  atomic.Int64 // keyspace_misses
	memory  atomic.Int64 // approximate bytes held by keys and values
	avgTTL  atomic.Int64 // ms; Redis' db->avg_ttl estimate (see expireCycle)
	evicted atomic.Int64 // keys deleted to stay under maxmemory (evict.go)
	offHeap atomic.Int64 // bytes of memory held in off-heap strings (bigstr.go)
}

// objectOverhead approximates the bytes a key costs beyond its key and value
// bytes: its slot (an object, 88 bytes), its index map entry at the map's
// average load (about 40) and the allocator's rounding of the key and value
// buffers to size classes (about 24). Calibrated against the Go heap
// (TestMemoryAccountingMatchesHeap): within about 10% for small keys.
const objectOverhead = 152

func newDB() *DB {
	return &DB{index: make(map[string]uint32), evict: detachedEvictor}
}

func (d *DB) slot(pos uint32) *object {
	return &d.chunks[pos>>chunkBits][pos&(chunkSize-1)]
}

// find returns the object for key without looking at its expiry.
func (d *DB) find(key []byte) (*object, uint32) {
	pos, ok := d.index[string(key)]
	if !ok {
		return nil, 0
	}
	return d.slot(pos), pos
}

// lookup returns the live object for key, deleting it first if it has expired
// (lazy expiry, as Redis' expireIfNeeded), and records the access for the
// eviction policy, as Redis' lookupKey.
func (d *DB) lookup(key []byte, now int64) *object {
	o, _ := d.find(key)
	if o == nil || o.expireAt != 0 && o.expireAt <= now {
		return d.peek(key, now) // nil, after deleting an expired key
	}
	if w := d.evict.stamp.Load(); w&stampLFU == 0 {
		o.access = w // the LRU clock, inline: the common case (evict.go)
	} else {
		d.touch(o)
	}
	return o
}

// peek is lookup without recording the access: Redis' LOOKUP_NOTOUCH, for
// commands that inspect a key (OBJECT, TYPE, TTL, EXISTS, MEMORY USAGE).
func (d *DB) peek(key []byte, now int64) *object {
	o, pos := d.find(key)
	if o == nil {
		return nil
	}
	if o.expireAt != 0 && o.expireAt <= now {
		d.dropKey(o, pos)
		d.expired.Add(1)
		return nil
	}
	return o
}

// insert adds key with an empty value of kind and returns it.
// REQUIRES: key is not present.
func (d *DB) insert(key []byte, kind Kind) *object {
	var pos uint32
	if n := len(d.free); n > 0 {
		pos = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		pos = d.used
		if pos>>chunkBits >= uint32(len(d.chunks)) {
			d.chunks = append(d.chunks, new([chunkSize]object))
		}
		d.used++
	}
	if d.snap != nil {
		d.snapForget(pos) // a key born after the snapshot's point in time
	}
	k := string(key)
	d.index[k] = pos
	o := d.slot(pos)
	*o = object{key: k, kind: kind, volIdx: -1, access: d.evict.newAccess()}
	d.keys.Store(int64(len(d.index)))
	d.memory.Add(int64(len(k) + objectOverhead))
	if d.blocked != nil && (kind == KindList || kind == KindZSet || kind == KindStream) {
		d.markReady(k)
	}
	d.touchedWatches(k)
	return o
}

// remove deletes o from the database.
func (d *DB) remove(o *object) {
	d.removeAt(o, d.index[o.key])
}

func (d *DB) removeAt(o *object, pos uint32) {
	d.countChange()
	d.detach(o, pos)
}

// detach deletes o at slot pos without counting a change: removeAt for
// commands, dropKey for expiry and eviction. WATCHes on the key still see
// it go.
func (d *DB) detach(o *object, pos uint32) {
	if d.snap != nil {
		d.snapSave(pos) // written as it was before it goes
	}
	d.touchedWatches(o.key)
	if d.blocked != nil {
		d.markReady(o.key) // an XREADGROUP waiting on it is told (blocking.go)
	}
	if o.expireAt != 0 {
		d.unindexExpire(o)
	}
	delete(d.index, o.key)
	d.memory.Add(-(int64(len(o.key)+objectOverhead) + o.valueMemory()))
	d.unmapStr(o)
	*o = object{volIdx: -1}
	d.free = append(d.free, pos)
	d.keys.Store(int64(len(d.index)))
	if len(d.index) == 0 {
		d.reset() // give the memory back once the database is empty
	}
}

func (d *DB) reset() {
	clear(d.index)
	d.chunks = nil
	d.used = 0
	d.free = nil
	d.volatile = nil
	d.keys.Store(0)
	d.expires.Store(0)
	d.memory.Store(0)
}

// flush deletes every key and returns how many there were.
func (d *DB) flush() int {
	n := len(d.index)
	if d.snap != nil {
		d.snapFlush()
	}
	if s := d.owner; s != nil { // as Redis' flushdbCommand: server.dirty += keys removed
		s.dirty += int64(n)
		s.dirtyPub.Store(s.dirty)
	}
	for key := range d.watched { // as Redis' touchAllWatchedKeysInDb: only keys that exist
		if _, ok := d.index[key]; ok {
			d.touched(key)
		}
	}
	for key := range d.blocked { // XREADGROUP waiters hear their stream went (blocking.go)
		if _, ok := d.index[key]; ok {
			d.markReady(key)
		}
	}
	d.freeAllOffHeap()
	d.index = make(map[string]uint32)
	d.reset()
	d.avgTTL.Store(0)
	return n
}

// setExpire gives o an expiry (unix ms, > 0), or removes it when at == 0.
func (d *DB) setExpire(o *object, at int64) {
	if at == 0 {
		if o.expireAt != 0 {
			d.clearExpire(o)
		}
		return
	}
	d.touched(o.key)
	if o.expireAt == 0 {
		o.volIdx = int32(len(d.volatile))
		d.volatile = append(d.volatile, d.index[o.key])
		d.expires.Store(int64(len(d.volatile)))
	}
	o.expireAt = at
}

func (d *DB) clearExpire(o *object) {
	d.touched(o.key)
	d.unindexExpire(o)
}

// unindexExpire removes o's expiry and its place in volatile.
func (d *DB) unindexExpire(o *object) {
	i := o.volIdx
	last := len(d.volatile) - 1
	if int(i) != last {
		moved := d.volatile[last]
		d.volatile[i] = moved
		d.slot(moved).volIdx = i
	}
	d.volatile = d.volatile[:last]
	o.expireAt = 0
	o.volIdx = -1
	d.expires.Store(int64(len(d.volatile)))
}

// setString stores val as o's string value, reusing o's buffer when it fits so
// that overwriting a key with a value of similar size allocates nothing.
//
// A value of bigbuf.Threshold bytes or more goes off the Go heap
// (bigstr.go), copied in preemptible steps.
func (d *DB) setString(o *object, val []byte) {
	old := cap(o.str)
	switch {
	case cap(o.str) >= len(val) && cap(o.str) <= 2*len(val)+16:
		o.str = o.str[:len(val)]
		copyPreemptible(o.str, val)
	case len(val) >= bigbuf.Threshold:
		d.unmapStr(o)
		o.str = nil
		d.newStringBuf(o, len(val), len(val), true)
		copyPreemptible(o.str, val)
	default:
		d.unmapStr(o)
		o.str = append(make([]byte, 0, len(val)), val...)
	}
	if o.kind != KindString && d.blocked != nil {
		d.markReady(o.key) // a stream overwritten: its XREADGROUP waiters are told
	}
	o.kind = KindString
	o.enc = encRaw
	d.accountResize(o, old)
	d.touched(o.key)
}

// stringMaxPrealloc is Redis' SDS_MAX_PREALLOC: below it a growing string's
// capacity doubles, at and above it the spare room stops doubling.
const stringMaxPrealloc = 1 << 20

// stringCapFor is the capacity a string that has to grow to need bytes gets:
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
func stringCapFor(need int) int {
	if need < stringMaxPrealloc {
		return 2 * need
	}
	c := need + max(stringMaxPrealloc, need/2)
	if c > MaxStringLen {
		c = max(need, MaxStringLen)
	}
	return c
}

// growString makes o.str need bytes long (need >= len(o.str)), the new
// bytes zero, for APPEND and SETRANGE. Within its capacity it only extends
// the slice; otherwise it moves the string into a buffer of stringCapFor(need)
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
func (d *DB) growString(o *object, need int) {
	if need <= cap(o.str) {
		n := len(o.str)
		o.str = o.str[:need]
		// A reused buffer may hold a previous value's bytes.
		if o.offHeap {
			bigbuf.Zero(o.str[n:])
		} else {
			clear(o.str[n:])
		}
		return
	}
	old := cap(o.str)
	if need >= bigbuf.Threshold && d.growOffHeap(o, need) {
		d.accountResize(o, old)
		return
	}
	buf := make([]byte, need, stringCapFor(need))
	copyPreemptible(buf, o.str)
	d.unmapStr(o) // when an mremap failed
	o.str = buf
	d.accountResize(o, old)
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

// setInt stores n as o's value with the integer encoding, releasing any byte
// buffer.
func (d *DB) setInt(o *object, n int64) {
	d.freeStr(o)
	o.kind, o.enc, o.ival = KindString, encInt, n
	d.touched(o.key)
}

// materialize turns an integer-encoded value into bytes before a command
// edits them in place (APPEND, SETRANGE).
func (d *DB) materialize(o *object) {
	if o.enc != encInt {
		return
	}
	o.str = strconv.AppendInt(make([]byte, 0, 24), o.ival, 10)
	o.enc = encRaw
	d.memory.Add(int64(cap(o.str)))
}

// dropValue empties o's value before it is given a value of another kind.
func (d *DB) dropValue(o *object) {
	d.memory.Add(-o.valueMemory())
	d.unmapStr(o)
	o.str, o.coll = nil, nil
	o.kind, o.enc = kindNone, encRaw
}

// accountResize records that o.str's capacity changed from old. Overwrites
// in place (the common case) change nothing and skip the atomic add.
func (d *DB) accountResize(o *object, old int) {
	if delta := cap(o.str) - old; delta != 0 {
		d.memory.Add(int64(delta))
	}
}

// randomLive returns a random live key's object, or nil if the database is
// empty. Expired keys found on the way are deleted.
func (d *DB) randomLive(now int64) *object {
	for tries := 0; len(d.index) > 0 && tries < 100; tries++ {
		o := d.randomSlot()
		if o == nil {
			continue
		}
		if o.expireAt != 0 && o.expireAt <= now {
			d.dropKey(o, d.index[o.key])
			d.expired.Add(1)
			continue
		}
		return o
	}
	// Sparse slots: fall back to the map's random iteration start.
	for k, pos := range d.index {
		_ = k
		o := d.slot(pos)
		if o.expireAt != 0 && o.expireAt <= now {
			continue
		}
		return o
	}
	return nil
}

func (d *DB) randomSlot() *object {
	if d.used == 0 {
		return nil
	}
	o := d.slot(uint32(rand.IntN(int(d.used))))
	if o.kind == kindNone {
		return nil
	}
	return o
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
			o := d.slot(pos)
			if o.expireAt <= now {
				d.dropKey(o, pos)
				expired++
			} else {
				ttlSum += o.expireAt - now
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
