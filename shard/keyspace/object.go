package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/svcdb/svcdb/shard/values"
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
// bytes to 48; moving the expiry time beside the slot took it to 40, and
// the key behind one pointer to 32 (TestObjectSize keeps it there). words
// says what they hold:
//   - wordsNone: nothing (ptr nil, n and c 0): an empty slot, a value being
//     built, a string whose buffer was dropped (FreeStr).
//   - wordsBytes: ptr is the first byte of a []byte's backing array, n its
//     length, c its capacity; Bytes() rebuilds the slice. ptr is an
//     unsafe.Pointer, never a uintptr, so the collector sees it and keeps
//     the array alive; an off-heap string's (OffHeap) points into a bigbuf
//     mapping, which the collector ignores and bigstr.go frees.
//   - wordsKeyBytes: wordsBytes whose array is the rest of the key's own
//     allocation: one heap object holds the key's length prefix, its bytes
//     and then the value's, ptr = key + keyHeadLen(len(Key())) (SetString
//     and InsertString make them; see "Key and value in one allocation"
//     below).
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
// allocation with its key: [length prefix | key bytes | value bytes,
// capacity c]. A GET at
// 10M keys then misses the cache on the index bucket, the slot and the
// key, whose line most often holds the value too, instead of on a fourth,
// separate, value array; and the collector has one object to mark per key
// instead of two (docs/architecture.md, "Key and value in one
// allocation"). What keeps it safe:
//   - the key's region is never written after the allocation is made: the
//     value words' slice starts after it (Bytes), and every write through
//     it stays within [ptr, ptr+c). So a Key() string held elsewhere (WATCH,
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
//     value as AllocSize(keyHeadLen(len(Key()))+c) - keyCost(len(Key())).
//
// # The key behind one pointer
//
// The slot holds the key as one pointer, key, to the start of the key's
// allocation, which begins with the key's length: one byte for a key under
// 128 bytes (the length itself, high bit clear), else five: the byte 0x80
// and the length as a little-endian uint32 (a key of 4 GiB or more is
// refused: putKey). Key() reads the first byte and returns an
// unsafe.String over the bytes after the prefix: no allocation, inlined,
// and the prefix shares the key's first cache line, so a lookup reads
// nothing it did not read when the slot held a 16-byte string header. A
// varint (LEB128) would take 2 bytes instead of 5 for keys of 128 bytes to
// 16 KiB, at most 2.3% of such a key, but its decoding loop kept Key() from
// inlining. The header took 8 bytes more in every slot (40 -> 32); the
// prefix costs a key one byte of its allocation (five from 128 bytes on),
// which moves a key whose allocation filled its size class exactly into
// the next (docs/architecture.md, "Bytes per key", lists the lengths). An
// empty slot's key is nil (Key() is ""); the empty key of a live slot
// points at emptyKeyHead, a static zero prefix, and allocates nothing. The
// prefix is never written after the allocation is made, as the key's bytes
// are not.
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
	key unsafe.Pointer // the key's allocation: length prefix, key bytes (Key(); the index compares lookups with it, keyindex holds no key)

	ptr  unsafe.Pointer // the value words (see above), with words below
	n, c uint32

	Access uint32 // Redis' robj.lru: LRU clock or LFU counter and minutes (evict.go)
	Kind   Kind
	Enc    Encoding
	flags  objectFlags // flagOffHeap, flagExpire
	words  valueWords  // what ptr, n and c hold
}

// Key is o's key: an unsafe.String over its allocation's bytes after the
// length prefix (see "The key behind one pointer"), "" for an empty slot.
// It allocates nothing, and the string stays valid (and keeps the
// allocation alive) whatever becomes of o: the key's bytes are never
// written after they are made.
//
// It inlines (cost 44 of the compiler's 80 with the prefix below; a
// varint's loop for long keys, binary.Uvarint, made it a call).
func (o *Object) Key() string {
	p := o.key
	if p == nil {
		return ""
	}
	if n := *(*byte)(p); n < shortKeyLen {
		return unsafe.String((*byte)(unsafe.Add(p, 1)), n)
	}
	// A long key's allocation is over 128 bytes: the conversions below stay
	// inside it (as -race's checkptr checks).
	n := binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(p, 1))[:])
	return unsafe.String((*byte)(unsafe.Add(p, longKeyPrefix)), n)
}

const (
	// shortKeyLen: a key shorter than this has a 1-byte prefix, its length.
	shortKeyLen = 0x80
	// longKeyPrefix is the prefix of a longer key: the byte 0x80, then the
	// length as a little-endian uint32.
	longKeyPrefix = 5
	// maxKeyLen bounds a key's length: the long prefix holds a uint32.
	maxKeyLen = math.MaxUint32
)

// keyPrefixLen is the bytes of the length prefix of a key of n bytes.
func keyPrefixLen(n int) int {
	if n < shortKeyLen {
		return 1
	}
	return longKeyPrefix
}

// keyHeadLen is the bytes of a key of n bytes with its prefix: where a
// value colocated with it starts in their allocation.
func keyHeadLen(n int) int { return keyPrefixLen(n) + n }

// emptyKeyHead is the key allocation of every empty key: a zero length
// (and a byte after it, so that Key()'s pointer past the prefix stays
// inside it).
var emptyKeyHead [2]byte

// putKey writes key with its length prefix at the front of buf, which
// holds at least keyHeadLen(len(key)) bytes. It panics (a handler's panic
// is an error reply) for a key of 4 GiB or more, reachable only with
// proto-max-bulk-len raised past it, before anything is written.
func putKey(buf []byte, key string) {
	if len(key) < shortKeyLen {
		buf[0] = byte(len(key))
		copy(buf[1:], key)
		return
	}
	if uint64(len(key)) > maxKeyLen {
		panic("keyspace: a key of 4 GiB or more (its length prefix holds a uint32)")
	}
	buf[0] = shortKeyLen
	binary.LittleEndian.PutUint32(buf[1:], uint32(len(key)))
	copy(buf[longKeyPrefix:], key)
}

// newKey makes key's allocation (its length prefix and bytes) and returns
// the key as Key() will read it: a string over that allocation, which
// keyHead gives back.
func newKey(key []byte) string {
	return newKeyString(unsafe.String(unsafe.SliceData(key), len(key))) // a view: copied
}

// newKeyString is newKey for a key held as a string.
func newKeyString(key string) string {
	if len(key) == 0 {
		return ""
	}
	if uint64(len(key)) > maxKeyLen {
		putKey(nil, key) // its panic, before a 4 GiB allocation
	}
	buf := make([]byte, keyHeadLen(len(key)))
	putKey(buf, key)
	return unsafe.String(&buf[len(buf)-len(key)], len(key))
}

// keyHead is the start of the allocation a key string made by newKey (or
// read by Key()) lies in: the pointer an Object's key holds.
func keyHead(k string) unsafe.Pointer {
	if len(k) == 0 {
		return unsafe.Pointer(&emptyKeyHead[0])
	}
	return unsafe.Add(unsafe.Pointer(unsafe.StringData(k)), -keyPrefixLen(len(k)))
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
// counts a colocated value. The allocation holds the key's length prefix
// too (keyHeadLen). An empty value has nothing to share (and its words
// would point one past the allocation): SET of a key of 16 bytes or more
// to "" failed with an internal error when colocates only asked for 16
// bytes together.
func colocates(klen, c int) bool {
	n := keyHeadLen(klen) + c
	return klen > 0 && c > 0 && n >= 16 && n <= maxSmallAlloc
}

// setKeyed makes o's key and its value words one new allocation holding
// key's prefix and bytes and then val (with capacity len(val)), as the
// Object doc's "Key and value in one allocation" says. The previous key
// string, if any, is left to whoever else holds it. REQUIRES:
// colocates(len(key), len(val)), and key equals o.Key() when o is a live
// slot (the index holds its hash).
func (o *Object) setKeyed(key string, val []byte) {
	h := keyHeadLen(len(key))
	buf := make([]byte, h+len(val))
	putKey(buf, key)
	copy(buf[h:], val)
	o.key = unsafe.Pointer(&buf[0])
	o.ptr, o.n, o.c, o.words = unsafe.Pointer(&buf[h]), uint32(len(val)), uint32(len(val)), wordsKeyBytes
}

// unshareKey gives o's key an allocation of its own when it shares one with
// the value (wordsKeyBytes), before the value words change to anything else
// (see Object). The old allocation stays valid for every other holder of
// the key string.
func (o *Object) unshareKey() {
	if o.words == wordsKeyBytes {
		o.key = keyHead(newKeyString(o.Key()))
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
		if o.key != nil || o.words != wordsNone || o.ptr != nil || o.n != 0 || o.c != 0 || o.flags != 0 {
			return fmt.Errorf("empty slot holds key %p, value words %d (ptr %p, %d, %d, flags %#x)", o.key, o.words, o.ptr, o.n, o.c, o.flags)
		}
		return nil
	}
	if o.key == nil || keyHead(o.Key()) != o.key {
		return fmt.Errorf("key %q: allocation at %p, its bytes at %p (a prefix of %d bytes expected)", o.Key(), o.key, unsafe.StringData(o.Key()), keyPrefixLen(len(o.Key())))
	}
	want := wordsFor(o.Enc)
	switch {
	case o.words == want:
	case o.words == wordsKeyBytes && want == wordsBytes:
		if o.Kind != KindString || o.OffHeap() || len(o.Key()) == 0 || o.ptr != unsafe.Add(unsafe.Pointer(unsafe.StringData(o.Key())), len(o.Key())) ||
			!colocates(len(o.Key()), int(o.c)) {
			return fmt.Errorf("key %q: value words in the key's allocation, kind %d, offheap %v, at %p (key at %p), capacity %d",
				o.Key(), o.Kind, o.OffHeap(), o.ptr, unsafe.StringData(o.Key()), o.c)
		}
	case o.words == wordsNone && want == wordsBytes && !o.OffHeap():
		return nil // a string or flat value without a buffer
	default:
		return fmt.Errorf("key %q: encoding %d with value words %d (want %d)", o.Key(), o.Enc, o.words, want)
	}
	switch o.words {
	case wordsBytes, wordsKeyBytes:
		if o.ptr == nil || o.n > o.c {
			return fmt.Errorf("key %q: bytes at %p, length %d, capacity %d", o.Key(), o.ptr, o.n, o.c)
		}
	case wordsInt:
		if o.ptr != nil {
			return fmt.Errorf("key %q: integer with a pointer %p", o.Key(), o.ptr)
		}
	default:
		if o.ptr == nil || o.n != 0 || o.c != 0 {
			return fmt.Errorf("key %q: collection at %p with %d, %d", o.Key(), o.ptr, o.n, o.c)
		}
	}
	if o.OffHeap() && (o.words != wordsBytes || o.Kind != KindString) { // never wordsKeyBytes
		return fmt.Errorf("key %q: off-heap but words %d, kind %d", o.Key(), o.words, o.Kind)
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
