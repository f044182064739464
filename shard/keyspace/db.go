package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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

// Object is one key and its value. Objects live in fixed-size chunks that never
// move, so an *object stays valid until the key is deleted; it must not outlive
// the command handler that looked it up.
//
// Where a value lives depends on its encoding (see value.go): strings in
// the value words as bytes or as an integer, compact collections (listpack,
// intset) as bytes holding one flat buffer, full collections as a pointer
// to their structure.
//
// The value words (ptr, n, c, words) are one union read and written only
// through the accessors below (Bytes, SetBytes, Int, SetInt, Coll,
// SetColl): a byte string, an integer or a collection, never two at once.
// They replaced three fields (Str []byte, Coll values.Collection, IntVal
// int64: 48 bytes of which at most 24 were live) and took the slot from 80
// bytes to 48; moving the expiry time beside the slot took it to 40
// (TestObjectSize keeps it there). words says what they hold:
//   - wordsNone: nothing (ptr nil, n and c 0): an empty slot, a value being
//     built, a string whose buffer was dropped (FreeStr).
//   - wordsBytes: ptr is the first byte of a []byte's backing array, n its
//     length, c its capacity; Bytes() rebuilds the slice. ptr is an
//     unsafe.Pointer, never a uintptr, so the collector sees it and keeps
//     the array alive; an off-heap string's (OffHeap) points into a bigbuf
//     mapping, which the collector ignores and bigstr.go frees.
//   - wordsKeyBytes: wordsBytes whose array is the rest of the key's own
//     allocation: one heap object holds the key's bytes and then the
//     value's, ptr = unsafe.StringData(Key) + len(Key), and Key is an
//     unsafe.String over the front of it (SetString and InsertString make
//     them; see "Key and value in one allocation" below).
//   - wordsInt: n and c are the low and high halves of the int64; ptr nil.
//   - wordsHTable, wordsSkiplist, wordsQuicklist, wordsStream: ptr is the
//     collection (*values.HTable, ...); Coll() rebuilds the interface from
//     it without allocating, and no box sits between the slot and the
//     structure.
//
// And Enc says which of them is live (checked by checkDB's model test,
// verifyObject):
//   - EncRaw, EncRawEdited, EncListpack, EncIntset: wordsBytes (or
//     wordsNone for a string without bytes; or wordsKeyBytes for a string,
//     Kind KindString, on the Go heap)
//   - EncInt: wordsInt
//   - EncHashtable: wordsHTable; EncSkiplist: wordsSkiplist; EncQuicklist:
//     wordsQuicklist; EncStream: wordsStream
//
// A byte value's length and capacity are uint32: no value reaches 4 GiB
// (MaxStringLen and proto-max-bulk-len stop strings at 512 MiB; a listpack
// or intset converts to its full encoding long before), and SetBytes
// panics rather than truncate one that would.
//
// # Key and value in one allocation
//
// A string of Go heap bytes set by SET (SetString, InsertString) shares one
// allocation with its key: [key bytes | value bytes, capacity c]. A GET at
// 10M keys then misses the cache on the index bucket, the slot and the
// key, whose line most often holds the value too, instead of on a fourth,
// separate, value array; and the collector has one object to mark per key
// instead of two (docs/architecture.md, "Key and value in one
// allocation"). What keeps it safe:
//   - the key's region is never written after the allocation is made: the
//     value words' slice starts after it (Bytes), and every write through
//     it stays within [ptr, ptr+c). So a Key string held elsewhere (WATCH,
//     the blocked table, the eviction pool, a snapshot's pending keys)
//     stays valid and unchanged whatever becomes of the value, and the
//     collector keeps the allocation alive for it;
//   - any value that is not written back into the same array (a different
//     slice from SetBytes, SetInt, SetColl, clearValue, MoveValue) first
//     gives the key an allocation of its own (unshareKey), so that a dead
//     value is never kept alive by its key and used_memory stays exact;
//   - a replaced string of another size is colocated again (SetString), a
//     new key is made in the same allocation (InsertString); only pairs
//     whose key and value together are at least 16 and at most
//     maxSmallAlloc bytes are colocated (colocates): the tiny allocator and
//     large objects round differently, and memory.go counts a colocated
//     value as AllocSize(len(Key)+c) - keyAllocSize(len(Key)).
//
// # Expiry beside the slot
//
// A key's expiry time is not in the Object: most keys have none, and the 8
// bytes an ExpireAt field took in every slot were 1/6 of it. The flag
// flagExpire says the key has one; the time and the key's place in the
// DB's volatile list live in an expiryChunk beside the slot's chunk, made
// only for a chunk of slots where some key got an expiry (DB.expiry; see
// expiry.go). A lookup of a key without expiry tests the flag and touches
// nothing else; a key with one pays one more access (its chunk's time), as
// Redis' separate expires dict costs a second lookup. Readers go through
// HasExpire, DB.ExpireAt and DB.ExpireAtSlot, writers through SetExpire.
type Object struct {
	Key string // the index compares lookups with it (keyindex holds no key)

	ptr  unsafe.Pointer // the value words (see above), with words below
	n, c uint32

	Access uint32 // Redis' robj.lru: LRU clock or LFU counter and minutes (evict.go)
	Kind   Kind
	Enc    Encoding
	flags  objectFlags // flagOffHeap, flagExpire
	words  valueWords  // what ptr, n and c hold
}

// objectFlags are an Object's one-bit facts.
type objectFlags uint8

const (
	flagOffHeap objectFlags = 1 << iota // the bytes are a bigbuf mapping, not Go heap (bigstr.go)
	flagExpire                          // the key has an expiry, kept in DB.expiry (expiry.go)
)

// OffHeap reports whether o's bytes are a bigbuf mapping, not Go heap
// (bigstr.go).
func (o *Object) OffHeap() bool { return o.flags&flagOffHeap != 0 }

func (o *Object) setOffHeap(on bool) {
	if on {
		o.flags |= flagOffHeap
	} else {
		o.flags &^= flagOffHeap
	}
}

// HasExpire reports whether o's key has an expiry: one flag test, nothing
// else read (DB.ExpireAt gives the time).
func (o *Object) HasExpire() bool { return o.flags&flagExpire != 0 }

// valueWords says what an Object's value words hold (see Object).
type valueWords uint8

const (
	wordsNone valueWords = iota
	wordsBytes
	wordsKeyBytes
	wordsInt
	wordsHTable
	wordsSkiplist
	wordsQuicklist
	wordsStream
)

// hasBytes reports whether the value words hold bytes, the key's
// allocation's or their own.
func (o *Object) hasBytes() bool { return o.words == wordsBytes || o.words == wordsKeyBytes }

// colocates reports whether a key of klen bytes and a value of capacity c
// share one allocation (see Object): the tiny allocator (under 16 bytes)
// and large objects (over maxSmallAlloc) are not rounded the way memory.go
// counts a colocated value.
func colocates(klen, c int) bool {
	return klen > 0 && klen+c >= 16 && klen+c <= maxSmallAlloc
}

// setKeyed makes o's Key and its value words one new allocation holding
// key and then val (with capacity len(val)), as the Object doc's "Key and
// value in one allocation" says. The previous key string, if any, is left
// to whoever else holds it. REQUIRES: colocates(len(key), len(val)), and
// key equals o.Key when o is a live slot (the index holds its hash).
func (o *Object) setKeyed(key string, val []byte) {
	buf := make([]byte, len(key)+len(val))
	copy(buf, key)
	copy(buf[len(key):], val)
	o.Key = unsafe.String(&buf[0], len(key))
	o.ptr, o.n, o.c, o.words = unsafe.Pointer(&buf[len(key)]), uint32(len(val)), uint32(len(val)), wordsKeyBytes
}

// unshareKey gives o's key an allocation of its own when it shares one with
// the value (wordsKeyBytes), before the value words change to anything else
// (see Object). The old allocation stays valid for every other holder of
// the key string.
func (o *Object) unshareKey() {
	if o.words == wordsKeyBytes {
		o.Key = strings.Clone(o.Key)
		o.words = wordsBytes
	}
}

// Bytes is a string's bytes or a compact collection's flat buffer (nil when
// the value words hold no bytes). The slice aliases the object's buffer:
// writing through it changes the value, and it is valid until the value is
// replaced.
func (o *Object) Bytes() []byte {
	if !o.hasBytes() {
		return nil
	}
	return unsafe.Slice((*byte)(o.ptr), o.c)[:o.n]
}

// SetBytes makes b the value's bytes, replacing what the words held. A nil
// b clears the words only when they hold bytes (so that clearing a value's
// bytes and then its collection, as code written for separate fields does,
// leaves whichever was live). It panics if b's capacity reaches 4 GiB.
//
// A b that starts where a value sharing the key's allocation starts (the
// same array, resliced or appended to within its capacity) stays in it;
// any other b first gives the key an allocation of its own (unshareKey).
func (o *Object) SetBytes(b []byte) {
	if b == nil {
		if o.hasBytes() {
			o.unshareKey()
			o.ptr, o.n, o.c, o.words = nil, 0, 0, wordsNone
		}
		return
	}
	checkValueLen(cap(b))
	p := unsafe.Pointer(unsafe.SliceData(b))
	if o.words == wordsKeyBytes && p == o.ptr {
		o.n = uint32(len(b)) // the same array: its capacity cannot have grown
		return
	}
	o.unshareKey()
	o.ptr, o.n, o.c, o.words = p, uint32(len(b)), uint32(cap(b)), wordsBytes
}

// maxValueLen is the largest capacity the value words can hold.
const maxValueLen = math.MaxUint32

// checkValueLen panics (a handler's panic is an error reply: the runtime's
// call) when a byte value of capacity c cannot be held in the value words:
// only reachable with proto-max-bulk-len raised above 4 GiB. Called before
// anything changes where a caller would otherwise leave an object half
// written (SetString, NewStringBuf).
func checkValueLen(c int) {
	if uint64(c) > maxValueLen {
		panic("keyspace: a value of 4 GiB or more (the value words hold a uint32 capacity)")
	}
}

// Int is an EncInt string's integer (0 when the words hold none).
func (o *Object) Int() int64 {
	if o.words != wordsInt {
		return 0
	}
	return int64(uint64(o.n) | uint64(o.c)<<32)
}

// SetInt makes v the value's integer, replacing what the words held. It
// does not set Enc (DB.SetInt does both).
func (o *Object) SetInt(v int64) {
	o.unshareKey()
	o.ptr, o.n, o.c, o.words = nil, uint32(uint64(v)), uint32(uint64(v)>>32), wordsInt
}

// Coll is a full collection's structure (nil when the words hold none).
func (o *Object) Coll() values.Collection {
	switch o.words {
	case wordsHTable:
		return (*values.HTable)(o.ptr)
	case wordsSkiplist:
		return (*values.Skiplist)(o.ptr)
	case wordsQuicklist:
		return (*values.Quicklist)(o.ptr)
	case wordsStream:
		return (*values.Stream)(o.ptr)
	}
	return nil
}

// SetColl makes c the value's structure, replacing what the words held. A
// nil c clears the words only when they hold a collection (see SetBytes).
// It panics for a Collection type the words have no tag for.
func (o *Object) SetColl(c values.Collection) {
	var w valueWords
	var p unsafe.Pointer
	switch c := c.(type) {
	case nil:
		if o.words >= wordsHTable {
			o.clearValue()
		}
		return
	case *values.HTable:
		w, p = wordsHTable, unsafe.Pointer(c)
	case *values.Skiplist:
		w, p = wordsSkiplist, unsafe.Pointer(c)
	case *values.Quicklist:
		w, p = wordsQuicklist, unsafe.Pointer(c)
	case *values.Stream:
		w, p = wordsStream, unsafe.Pointer(c)
	default:
		panic(fmt.Sprintf("keyspace: no value words for a %T", c))
	}
	o.unshareKey()
	o.ptr, o.n, o.c, o.words = p, 0, 0, w
}

// clearValue empties the value words, whatever they hold.
func (o *Object) clearValue() {
	o.unshareKey()
	o.ptr, o.n, o.c, o.words = nil, 0, 0, wordsNone
}

// MoveValue moves src's value words and encoding to dst (RENAME, MOVE),
// leaving src with none; nothing else of either object changes, and no
// memory is accounted. A value in src's key's allocation moves as a copy
// in an array of its own (it cannot follow dst's key there), so that
// dst.ValueMemory() may differ from what src's was: a caller that moves
// the figure between databases reads dst's after the move.
func MoveValue(dst, src *Object) {
	if src.words == wordsKeyBytes {
		b := src.Bytes()
		dst.SetBytes(append(make([]byte, 0, cap(b)), b...))
		dst.Enc = src.Enc
		src.clearValue()
		return
	}
	dst.ptr, dst.n, dst.c, dst.words, dst.Enc = src.ptr, src.n, src.c, src.words, src.Enc
	src.clearValue()
}

// verifyWords checks that o's value words agree with its encoding (the
// Object doc's invariants): an empty slot holds nothing, a live one what
// its Enc says, and each kind of words is well formed.
func (o *Object) verifyWords() error {
	if o.Kind == KindNone {
		if o.words != wordsNone || o.ptr != nil || o.n != 0 || o.c != 0 || o.flags != 0 {
			return fmt.Errorf("empty slot holds value words %d (ptr %p, %d, %d, flags %#x)", o.words, o.ptr, o.n, o.c, o.flags)
		}
		return nil
	}
	want := wordsFor(o.Enc)
	switch {
	case o.words == want:
	case o.words == wordsKeyBytes && want == wordsBytes:
		if o.Kind != KindString || o.OffHeap() || len(o.Key) == 0 || o.ptr != unsafe.Add(unsafe.Pointer(unsafe.StringData(o.Key)), len(o.Key)) ||
			!colocates(len(o.Key), int(o.c)) {
			return fmt.Errorf("key %q: value words in the key's allocation, kind %d, offheap %v, at %p (key at %p), capacity %d",
				o.Key, o.Kind, o.OffHeap(), o.ptr, unsafe.StringData(o.Key), o.c)
		}
	case o.words == wordsNone && want == wordsBytes && !o.OffHeap():
		return nil // a string or flat value without a buffer
	default:
		return fmt.Errorf("key %q: encoding %d with value words %d (want %d)", o.Key, o.Enc, o.words, want)
	}
	switch o.words {
	case wordsBytes, wordsKeyBytes:
		if o.ptr == nil || o.n > o.c {
			return fmt.Errorf("key %q: bytes at %p, length %d, capacity %d", o.Key, o.ptr, o.n, o.c)
		}
	case wordsInt:
		if o.ptr != nil {
			return fmt.Errorf("key %q: integer with a pointer %p", o.Key, o.ptr)
		}
	default:
		if o.ptr == nil || o.n != 0 || o.c != 0 {
			return fmt.Errorf("key %q: collection at %p with %d, %d", o.Key, o.ptr, o.n, o.c)
		}
	}
	if o.OffHeap() && (o.words != wordsBytes || o.Kind != KindString) { // never wordsKeyBytes
		return fmt.Errorf("key %q: off-heap but words %d, kind %d", o.Key, o.words, o.Kind)
	}
	return nil
}

// VerifyValueWords checks every slot of d with verifyWords (for the
// property tests of the commands that build values).
// REQUIRES: the caller holds the store's shard.
func (d *DB) VerifyValueWords() error {
	for pos := range d.used {
		if err := d.Slot(pos).verifyWords(); err != nil {
			return fmt.Errorf("slot %d: %w", pos, err)
		}
	}
	return nil
}

// wordsFor is what the value words of a live object of encoding enc hold;
// EncRaw and the flat encodings may also hold none.
func wordsFor(enc Encoding) valueWords {
	switch enc {
	case EncInt:
		return wordsInt
	case EncHashtable:
		return wordsHTable
	case EncSkiplist:
		return wordsSkiplist
	case EncQuicklist:
		return wordsQuicklist
	case EncStream:
		return wordsStream
	}
	return wordsBytes
}

// Encoding is how a string value is held. EncInt keeps an integer inside the
// object, so INCR touches no second allocation and parses nothing: on a
// keyspace larger than the cache that saves a memory stall per command.
type Encoding uint8

const (
	EncRaw       Encoding = iota // o.Bytes() is the string
	EncInt                       // o.Int() is the value; o.Bytes() is nil
	EncListpack                  // o.Bytes() is a listpack (package listpack)
	EncIntset                    // o.Bytes() is an intset (sorted integers)
	EncHashtable                 // o.Coll() is a hash table (hash or set)
	EncSkiplist                  // o.Coll() is a sorted set's skiplist and map
	EncQuicklist                 // o.Coll() is a list of listpacks
	EncStream                    // o.Coll() is a stream
	EncRawEdited                 // o.Bytes() is the string, edited in place (APPEND, SETRANGE): Redis' "raw"
)

// Value returns a string object's bytes; for EncInt they are formatted into
// buf. The result is valid until buf or the object changes.
func (o *Object) Value(buf *[20]byte) []byte {
	if o.Enc == EncInt {
		return strconv.AppendInt(buf[:0], o.Int(), 10)
	}
	return o.Bytes()
}

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
	keyRound  int64        // sum over keys of keyAllocSize(len) - len (memory.go); shard-owned
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
func (d *DB) hashAt(pos uint32) uint64 { return keyHashString(d.Slot(pos).Key) }

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
			fn(o.Key, o)
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
				d.view[o.Key] = pos
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
	pos, ok := d.index.Find(d.hashOf(key), func(pos uint32) bool { return d.Slot(pos).Key == string(key) })
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
	pos, ok := d.index.Find(keyHashString(key), func(pos uint32) bool { return d.Slot(pos).Key == key })
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
	pos, _ := d.index.Find(keyHashString(o.Key), func(pos uint32) bool { return d.Slot(pos) == o })
	return pos
}

// Lookup returns the live object for key, deleting it first if it has expired
// (lazy expiry, as Redis' expireIfNeeded), and records the access for the
// eviction policy, as Redis' lookupKey.
//
// It finds the key once: a miss used to look it up a second time (through
// Peek), which was a third of a missing GET's lookup cost.
func (d *DB) Lookup(key []byte, now int64) *Object {
	o, pos := d.Find(key)
	if o == nil {
		return nil
	}
	if o.HasExpire() && d.expireAtSlot(pos) <= now {
		d.expireFound(o, pos)
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
	d.notifyKey(NotifyNew, "new", o.Key)
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
	d.notifyKey(NotifyNew, "new", o.Key)
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
	o := d.insertKey(kv.Key, d.hashOf(key), KindString)
	o.ptr, o.n, o.c, o.words, o.Enc = kv.ptr, kv.n, kv.c, kv.words, EncRaw
	d.memory.Add(o.ValueMemory())
	d.Touched(o.Key)
	return o
}

func (d *DB) insert(key []byte, kind Kind) *Object {
	return d.insertKey(string(key), d.hashOf(key), kind)
}

// insertKey is insert with the key's string made by the caller (k's bytes
// must never change: the index and the slot keep it) and its hash h
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
	*o = Object{Key: k, Kind: kind, Access: d.evict.newAccess()}
	d.index.Insert(h, pos, d.hashAt)
	d.view = nil
	d.keys.Store(int64(d.index.Len()))
	d.memory.Add(int64(len(k) + ObjectOverhead))
	d.keyRound += int64(keyAllocSize(len(k)) - len(k))
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
	d.touchedWatches(o.Key)
	if d.blocked != nil {
		d.markReady(o.Key) // an XREADGROUP waiting on it is told (waiters.go)
	}
	if o.HasExpire() {
		d.unindexExpire(o, pos)
	}
	d.index.Remove(keyHashString(o.Key), pos, d.hashAt)
	d.view = nil
	d.memory.Add(-(int64(len(o.Key)+ObjectOverhead) + o.ValueMemory()))
	d.keyRound -= int64(keyAllocSize(len(o.Key)) - len(o.Key))
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
	case colocates(len(o.Key), len(val)):
		d.unmapStr(o)
		o.setKeyed(o.Key, val) // the previous value's array, if any, is garbage now
	default:
		d.unmapStr(o)
		o.SetBytes(append(make([]byte, 0, len(val)), val...))
	}
	if o.Kind != KindString && d.blocked != nil {
		d.markReady(o.Key) // a stream overwritten: its XREADGROUP waiters are told
	}
	o.Kind = KindString
	o.Enc = EncRaw
	d.AccountResize(o, before)
	d.Touched(o.Key)
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
	d.Touched(o.Key)
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

// rehashStep moves a rehashing key index's entries for up to a millisecond,
// as Redis' incrementallyRehash in databasesCron: inserts and removes drain
// the old table too, but a database nobody writes would keep it (and probe
// it on every miss) until then.
func (d *DB) rehashStep() {
	if !d.index.Rehashing() {
		return
	}
	until := time.Now().Add(time.Millisecond)
	for d.index.Step(256, d.hashAt) && time.Now().Before(until) {
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
