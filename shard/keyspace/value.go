package keyspace

import (
	"sync/atomic"

	"github.com/svcdb/svcdb/core/resp"
)

// ValueMemory is the bytes o's value holds beyond the object itself: its
// buffer as the allocator rounds it (AllocSize; an off-heap string's
// mapping is over 32 KiB, so its capacity) and its collection's own count.
// A value in its key's allocation (see Object) counts what that allocation
// costs beyond what the key alone would (keyCost, which memory.go counts
// for every key): AllocSize(keyHeadLen(len(Key()))+c) -
// keyCost(len(Key())), never negative since colocates asks for at least
// 16 bytes.
func (o *Object) ValueMemory() int64 {
	if o.words == wordsKeyBytes {
		k := len(o.Key())
		return int64(AllocSize(keyHeadLen(k)+int(o.c)) - keyCost(k))
	}
	n := int64(AllocSize(cap(o.Bytes())))
	if c := o.Coll(); c != nil {
		n += c.Memory()
	}
	return n
}

// ValueChanged accounts for a change of o's value size; before is what
// o.ValueMemory() returned before the change. Every command that changes a
// collection calls it once, at the end:
//
//	before := o.ValueMemory()
//	... change o ...
//	d.ValueChanged(o, before)
func (d *DB) ValueChanged(o *Object, before int64) {
	d.Touched(o.Key())
	if delta := o.ValueMemory() - before; delta != 0 {
		d.memory.Add(delta)
	}
}

// CopyValue gives dst (a fresh object of src's kind) a deep copy of src's
// collection value.
func (d *DB) CopyValue(dst, src *Object) {
	dst.Enc = src.Enc
	if src.Bytes() != nil {
		dst.SetBytes(append(make([]byte, 0, len(src.Bytes())), src.Bytes()...))
	}
	if src.Coll() != nil {
		dst.SetColl(src.Coll().Clone())
	}
	d.ValueChanged(dst, 0)
}

// encodingName is what OBJECT ENCODING reports, from what the value really
// is. Strings follow Redis: "int" for integers held as numbers, "embstr" for
// strings up to 44 bytes (Redis' embedded-string limit), "raw" above.
func (o *Object) encodingName() string {
	switch o.Enc {
	case EncInt:
		return "int"
	case EncRaw:
		if _, ok := resp.ParseInt(o.Bytes()); ok {
			return "int" // Redis' tryObjectEncoding would have made it one
		}
		if len(o.Bytes()) <= 44 {
			return "embstr"
		}
		return "raw"
	case EncRawEdited:
		return "raw"
	case EncListpack:
		switch o.Kind {
		case KindList:
			return "quicklist" // Redis 7.0 lists are always quicklists; ours has one node
		case KindSet:
			return "hashtable" // what Redis 7.0 has for a set a listpack holds here (setvalue.go)
		}
		return "listpack"
	case EncIntset:
		return "intset"
	case EncHashtable:
		return "hashtable"
	case EncSkiplist:
		return "skiplist"
	case EncQuicklist:
		return "quicklist"
	case EncStream:
		return "stream"
	}
	return "unknown"
}

// Edited records that a string was changed in place (APPEND, SETRANGE).
func (d *DB) Edited(o *Object) {
	o.Enc = EncRawEdited
	d.Touched(o.Key())
}

// ReadKind looks key up for a read command: (nil, true) when missing, (nil,
// false) after replying WRONGTYPE. It counts keyspace hits and misses.
func (c *Ctx) ReadKind(d *DB, key []byte, kind Kind) (*Object, bool) {
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.misses.Add(1)
		c.Notify(NotifyKeyMiss, "keymiss", key) // Redis' lookupKeyReadWithFlags
		return nil, true
	}
	d.hits.Add(1)
	if o.Kind != kind {
		c.WrongType()
		return nil, false
	}
	return o, true
}

// WriteKind looks key up for a write command: (nil, true) when missing, (nil,
// false) after replying WRONGTYPE. Writes do not count as hits or misses, as
// in Redis (lookupKeyWrite).
func (c *Ctx) WriteKind(d *DB, key []byte, kind Kind) (*Object, bool) {
	o := d.Lookup(key, c.Now)
	if o == nil {
		return nil, true
	}
	if o.Kind != kind {
		c.WrongType()
		return nil, false
	}
	return o, true
}

// RemoveMembers is HDEL, SREM and ZREM: del removes each of c.Args[2:] from
// the key's kind value, stopping once it is empty, and the reply is how many
// it removed. As in Redis, a no-op leaves WATCH alone and an emptied key is
// deleted.
func (c *Ctx) RemoveMembers(kind Kind, del func(*Object, []byte) bool, size func(*Object) int, class NotifyClass, event string) {
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, kind)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	before := o.ValueMemory()
	var removed int64
	for _, m := range c.Args[2:] {
		if del(o, m) {
			removed++
			if size(o) == 0 {
				break
			}
		}
	}
	if removed > 0 {
		d.ValueChanged(o, before)
		c.Notify(class, event, key)
		if size(o) == 0 {
			d.Remove(o)
			c.Notify(NotifyGeneric, "del", key)
		}
	}
	c.Int(removed)
}

// ---- encoding thresholds ------------------------------------------------------

// EncodingLimits are the thresholds past which a compact value converts to
// its full structure (Redis' *-max-listpack-* and set-max-intset-entries).
type EncodingLimits struct {
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int64
	SetMaxListpackEntries  int64 // Redis 7.2's: small sets of strings in a listpack (setvalue.go)
	SetMaxListpackValue    int64
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64
	ListMaxListpackSize    int64 // > 0: entries per node; < 0: -1..-5 = 4..64 KiB per node
	ListCompressDepth      int64 // list-compress-depth: plain quicklist nodes at each end, the rest LZF-compressed; 0 = none
	StreamNodeMaxEntries   int64
	HLLSparseMaxBytes      int64 // a sparse HyperLogLog longer than this is promoted to dense (shard/commands/hll)
}

// DefaultEncodingLimits are Redis 7.0's defaults, and Redis 7.2's for the
// set listpack thresholds 7.0 does not have.
var DefaultEncodingLimits = EncodingLimits{
	HashMaxListpackEntries: 512,
	HashMaxListpackValue:   64,
	SetMaxIntsetEntries:    512,
	SetMaxListpackEntries:  128,
	SetMaxListpackValue:    64,
	ZSetMaxListpackEntries: 128,
	ZSetMaxListpackValue:   64,
	ListMaxListpackSize:    -2,
	StreamNodeMaxEntries:   100,
	HLLSparseMaxBytes:      3000,
}

// encodingLimits is read by command handlers on any shard and replaced whole
// by SetEncodingLimits (CONFIG SET).
type encodingLimits struct {
	p atomic.Pointer[EncodingLimits]
}

// Limits returns the current thresholds.
func (c *Ctx) Limits() *EncodingLimits {
	if l := c.env.limits.p.Load(); l != nil {
		return l
	}
	return &DefaultEncodingLimits
}
