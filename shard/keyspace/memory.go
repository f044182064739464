package keyspace

import "unsafe"

// Memory accounting: what used_memory (and so maxmemory) counts for a
// database, and why each part is what it is (docs/architecture.md, "Memory
// accounting").
//
// A database's figure is two numbers, kept by the shard that owns it and
// published atomically:
//
//   - memory, the per-key view: for every key, len(key) + ObjectOverhead +
//     ValueMemory(). MEMORY USAGE reports one key's share of it, and the
//     model tests check it key by key.
//   - adjust, the structure's truth against that view: the slot chunks as
//     allocated, the key index's tables as allocated (both while it
//     rehashes), the expiry list, times and places, the key strings with
//     their length prefixes rounded the way the allocator rounds them, less the ObjectOverhead the
//     per-key view assumed. It can be negative (a small database whose
//     index is less than ObjectOverhead assumes).
//
// Used() = memory + adjust is what INFO used_memory sums and eviction and
// admission compare with maxmemory. Nothing here walks a value: every term
// is kept as keys and values change (insert, detach, SetExpire,
// ValueChanged, a rehash step).
//
// Invariant (checkDB's model test checks it): adjust == structureBytes() -
// Len()*ObjectOverhead + keyRound, after every exported method returns.

// objectBytes is one slot's size; chunkBytes one chunk of slots', as the
// allocator hands it out (a large object: whole pages). Both follow the
// Object type: nothing here assumes its size.
const (
	objectBytes      = int64(unsafe.Sizeof(Object{}))
	chunkBytes       = objectBytes * chunkSize
	expiryChunkBytes = int64(unsafe.Sizeof(expiryChunk{}))
	expiryBytes      = expiryChunkBytes / chunkSize // one key's time and place
)

// structureBytes is the memory d's structure holds beyond its keys' strings
// and values: slots, index, expiry list, times and places (expiry.go),
// and the slices that point at them.
//
// A database's first chunk of slots (and of expiry data) is counted by the
// keys in it, not whole: 32 KiB of chunk for the first key of a database
// would make a small maxmemory (the tests' 400 KiB over 4 shards) unable to
// hold anything, and evicting a key from it would free nothing. Past the
// first chunk, slots count live or not up to the highest one handed out
// (d.used): a database of 1M keys holds every such slot, and evicting a key
// frees its key and value but not its slot (a later insert reuses it). A
// new chunk is not counted whole when it is taken: 32 KiB in one insert
// stays over maxmemory under noeviction, with nothing to evict (a 4 MB
// limit ended 31 KB over it). The first chunk's empty part and the last
// chunk's untouched tail, under 2*chunkBytes per database used, are the
// keyspace's fixed part (docs/architecture.md).
func (d *DB) structureBytes() int64 {
	n := int64(d.index.Bytes())
	if len(d.chunks) > 0 {
		n += min(int64(d.index.Len()), chunkSize) * objectBytes
		if d.used > chunkSize {
			n += int64(d.used-chunkSize) * objectBytes // every slot handed out past the first chunk
		}
	}
	if d.expChunks > 0 {
		n += int64(d.expChunks-1)*expiryChunkBytes + min(int64(len(d.volatile)), chunkSize)*expiryBytes
	}
	n += int64(cap(d.chunks)+cap(d.expiry))*8 + int64(cap(d.free)+cap(d.volatile))*4
	return n
}

// growthJump is the structural growth in one change that TakeGrowth reports:
// more than a key's slot (objectBytes), so a new index table,
// a new expiry chunk (12 KiB) or a grown slice of slot
// numbers (the expiry list doubling past 2,048 keys adds 2 KiB) is evicted
// right after its command rather than left over maxmemory until the next
// write. With a 48-byte (now 32-byte) slot more keys fit under a small maxmemory and the
// expiry list's growth alone took a 400 KB limit 1.5 KB over.
const growthJump = 256

// accountStructure publishes adjust after a change of d's keys, expiries or
// index. A few loads and multiplications: it runs on every insert and
// delete.
func (d *DB) accountStructure() {
	s, idx := d.structureBytes(), int64(d.index.Bytes())
	if prev := d.structure.Load(); s != prev {
		if d.owner != nil && s > prev+growthJump {
			d.owner.grew = true // a chunk or a grown slice, not a key's slot: see TakeGrowth
		}
		d.structure.Store(s) // stores only on change: an atomic store is a locked instruction
	}
	if prev := d.indexPub.Load(); idx != prev {
		if d.owner != nil && idx > prev {
			d.owner.grew = true // a new table
		}
		d.indexPub.Store(idx)
	}
	if r := d.index.Rehashing(); r != d.rehashing.Load() {
		d.rehashing.Store(r)
	}
	d.adjust.Store(s - int64(d.index.Len()*ObjectOverhead) + d.keyRound)
}

// Used is d's bytes as used_memory counts them: the per-key view (Memory)
// corrected by what the structure really holds (see above). Anyone may call
// it.
func (d *DB) Used() int64 { return d.memory.Load() + d.adjust.Load() }

// StructureBytes is what d's slots, index and expiry list hold, and
// IndexBytesPublished the index's part of it (INFO memory's breakdown).
// Anyone may call them.
func (d *DB) StructureBytes() int64      { return d.structure.Load() }
func (d *DB) IndexBytesPublished() int64 { return d.indexPub.Load() }

// RehashingPublished reports whether d's key index was rehashing at its
// last change: its old table is held until the rehash ends, then garbage
// (core/memdecay waits for it before returning memory). Anyone may call it.
func (d *DB) RehashingPublished() bool { return d.rehashing.Load() }

// keyCost is what a key of klen bytes costs the allocator: its allocation
// holds the length prefix and the key (keyHeadLen; object.go, "The key
// behind one pointer"), rounded by keyAllocSize. The empty key allocates
// nothing (emptyKeyHead). A key's rounding, keyCost(n) - n, includes its
// prefix: keyRound counts it for every key.
func keyCost(klen int) int {
	if klen == 0 {
		return 0
	}
	return keyAllocSize(keyHeadLen(klen))
}

// keyAllocSize is what a key's allocation of n bytes (prefix and key)
// costs the allocator. Allocations under 16 bytes are "tiny" (no pointers,
// under 16 bytes), which Go packs into 16-byte blocks at their alignment:
// the cost is the block's share when the keys around it are the same size
// (3 of 5 bytes share a block; 9 to 15 bytes take one each). From 16 bytes
// on, AllocSize.
func keyAllocSize(n int) int {
	if n == 0 || n >= 16 {
		return AllocSize(n)
	}
	align := 1
	switch {
	case n&7 == 0:
		align = 8
	case n&3 == 0:
		align = 4
	case n&1 == 0:
		align = 2
	}
	step := (n + align - 1) / align * align
	return 16 / (16 / step)
}

// sizeClasses are the Go runtime's small-object size classes
// (internal/runtime/gc.SizeClassToSize, Go 1.26; TestAllocSize checks them
// against the runtime's own rounding, so a Go release that changes them
// fails that test rather than skewing used_memory).
var sizeClasses = [...]int32{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// maxSmallAlloc is the largest allocation without pointers that gets a size
// class (the runtime's maxSmallSize less its 8-byte malloc header room).
const maxSmallAlloc = 32768 - 8

// AllocSize is the bytes Go's allocator hands out for an n-byte allocation
// with no pointers in it (a value's []byte): n rounded up to its size class
// for 16 <= n <= 32760, as append's capacity shows (TestAllocSize). Below
// 16 it is n: the tiny allocator packs such buffers into shared 16-byte
// blocks, so a value costs about its length (and a string's capacity stays
// what the tests of its growth policy count). Above 32760 it is n too: the
// runtime rounds large objects up to 8 KiB pages, under 2.5% of them, and
// a string's capacity there is already its growth policy's (StringCapFor)
// or a mapping's (bigstr.go).
func AllocSize(n int) int {
	if n < 16 || n > maxSmallAlloc {
		return n
	}
	lo, hi := 0, len(sizeClasses)-1 // the first class >= n
	for lo < hi {
		if m := (lo + hi) / 2; int(sizeClasses[m]) < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return int(sizeClasses[lo])
}

// TakeGrowth reports whether one of the store's key indexes (or slot
// chunks) grew by a step since the last call, and clears it. An index
// doubles inside the insert that fills it: a write admitted under
// maxmemory can leave used_memory over it by the new table (20 KiB at 2,000
// keys, 40 MB at 8M), which no key accounts for. The runtime evicts right
// after such a command rather than leave it to the next one (Redis 7.0
// avoids the case by refusing a dict expansion that would pass maxmemory,
// dictExpandAllowed; the key index grows whenever it must, as its probes
// need). REQUIRES: the caller holds the store's shard.
func (st *Store) TakeGrowth() bool {
	g := st.grew
	st.grew = false
	return g
}

// usageOf is MEMORY USAGE's figure for o, a live key of d: its per-key
// view plus an equal share of the structure's correction (adjust / Len,
// rounded down), the remainder going to the key in the lowest live slot, so
// that the figures of all of d's keys add up to Used() exactly, as Redis'
// MEMORY USAGE counts a key's dictEntry. Finding the lowest live slot walks
// the slots emptied before it: MEMORY USAGE is not a hot path.
func (d *DB) usageOf(o *Object) int64 {
	n := int64(d.index.Len())
	adj := d.adjust.Load()
	share := adj / n
	if share*n > adj {
		share-- // round toward minus infinity: the remainder is never negative
	}
	usage := int64(len(o.Key())+ObjectOverhead) + o.ValueMemory() + share
	for pos := range d.used {
		if first := d.Slot(pos); first.Kind != KindNone {
			if first == o {
				usage += adj - share*n
			}
			break
		}
	}
	return usage
}
