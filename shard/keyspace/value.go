package keyspace

import (
	"sync/atomic"

	"github.com/svcdb/svcdb/core/resp"
)

// valueMemory is the bytes o's value holds beyond the object itself.
func (o *Object) ValueMemory() int64 {
	n := int64(cap(o.Str))
	if o.Coll != nil {
		n += o.Coll.Memory()
	}
	return n
}

// valueChanged accounts for a change of o's value size; before is what
// o.valueMemory() returned before the change. Every command that changes a
// collection calls it once, at the end:
//
//	before := o.valueMemory()
//	... change o ...
//	d.valueChanged(o, before)
func (d *DB) ValueChanged(o *Object, before int64) {
	d.Touched(o.Key)
	if delta := o.ValueMemory() - before; delta != 0 {
		d.memory.Add(delta)
	}
}

// copyValue gives dst (a fresh object of src's kind) a deep copy of src's
// collection value.
func (d *DB) CopyValue(dst, src *Object) {
	dst.Enc = src.Enc
	if src.Str != nil {
		dst.Str = append(make([]byte, 0, len(src.Str)), src.Str...)
	}
	if src.Coll != nil {
		dst.Coll = src.Coll.Clone()
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
		if _, ok := resp.ParseInt(o.Str); ok {
			return "int" // Redis' tryObjectEncoding would have made it one
		}
		if len(o.Str) <= 44 {
			return "embstr"
		}
		return "raw"
	case EncRawEdited:
		return "raw"
	case EncListpack:
		if o.Kind == KindList {
			return "quicklist" // Redis 7.0 lists are always quicklists; ours has one node
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

// edited records that a string was changed in place (APPEND, SETRANGE).
func (d *DB) Edited(o *Object) {
	o.Enc = EncRawEdited
	d.Touched(o.Key)
}

// readKind looks key up for a read command: (nil, true) when missing, (nil,
// false) after replying WRONGTYPE. It counts keyspace hits and misses.
func (c *Ctx) ReadKind(d *DB, key []byte, kind Kind) (*Object, bool) {
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.misses.Add(1)
		return nil, true
	}
	d.hits.Add(1)
	if o.Kind != kind {
		c.WrongType()
		return nil, false
	}
	return o, true
}

// writeKind looks key up for a write command: (nil, true) when missing, (nil,
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

// removeMembers is HDEL, SREM and ZREM: del removes each of c.Args[2:] from
// the key's kind value, stopping once it is empty, and the reply is how many
// it removed. As in Redis, a no-op leaves WATCH alone and an emptied key is
// deleted.
func (c *Ctx) RemoveMembers(kind Kind, del func(*Object, []byte) bool, size func(*Object) int) {
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
		if size(o) == 0 {
			d.Remove(o)
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
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64
	ListMaxListpackSize    int64 // > 0: entries per node; < 0: -1..-5 = 4..64 KiB per node
	StreamNodeMaxEntries   int64
}

// DefaultEncodingLimits are Redis 7.0's defaults.
var DefaultEncodingLimits = EncodingLimits{
	HashMaxListpackEntries: 512,
	HashMaxListpackValue:   64,
	SetMaxIntsetEntries:    512,
	ZSetMaxListpackEntries: 128,
	ZSetMaxListpackValue:   64,
	ListMaxListpackSize:    -2,
	StreamNodeMaxEntries:   100,
}

// encodingLimits is read by command handlers on any shard and replaced whole
// by SetEncodingLimits (CONFIG SET).
type encodingLimits struct {
	p atomic.Pointer[EncodingLimits]
}

// limits returns the current thresholds.
func (c *Ctx) Limits() *EncodingLimits {
	if l := c.env.limits.p.Load(); l != nil {
		return l
	}
	return &DefaultEncodingLimits
}

// ---- OBJECT -----------------------------------------------------------------

func cmdObject(c *Ctx) {
	sub := c.Args[1]
	if resp.EqualFold(sub, "help") {
		c.Help(objectHelp)
		return
	}
	if len(c.Args) != 3 {
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "object")
		return
	}
	key := c.Args[2]
	d := c.DBFor(key)
	o := d.Peek(key, c.Now) // Redis' LOOKUP_NOTOUCH: OBJECT is not an access
	if o == nil {
		c.Null()
		return
	}
	switch {
	case resp.EqualFold(sub, "encoding"):
		c.BulkString(o.encodingName())
	case resp.EqualFold(sub, "refcount"):
		// Redis shares the integers 0..9999 (OBJ_SHARED_REFCOUNT) and reports
		// them so; svcdb holds them inline, which is the same observable fact.
		n, isInt := o.IntVal, o.Enc == EncInt
		if o.Enc == EncRaw {
			n, isInt = resp.ParseInt(o.Str)
		}
		if isInt && n >= 0 && n < 10000 {
			c.Int(2147483647)
		} else {
			c.Int(1)
		}
	case resp.EqualFold(sub, "idletime"):
		if d.evict.loadPolicy()&policyLFU != 0 {
			c.Err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.Int(int64(d.evict.idleMillis(o.Access) / 1000))
	case resp.EqualFold(sub, "freq"):
		if d.evict.loadPolicy()&policyLFU == 0 {
			c.Err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.Int(int64(d.evict.lfuDecr(o.Access)))
	default:
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "object")
	}
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// ---- MEMORY USAGE --------------------------------------------------------------

// cmdMemory serves MEMORY USAGE key [SAMPLES n], the one MEMORY subcommand
// with a key (the others are the server's). The figure is the key's share of
// the shard's memory accounting: key bytes, per-key overhead and the value's
// bytes, exact rather than sampled, so SAMPLES is checked and ignored.
func cmdMemory(c *Ctx) {
	for i := 3; i < len(c.Args); i++ {
		if resp.EqualFold(c.Args[i], "samples") && i+1 < len(c.Args) {
			if _, ok := resp.ParseInt(c.Args[i+1]); !ok {
				c.NotInteger()
				return
			}
			i++
			continue
		}
		c.SyntaxErr()
		return
	}
	key := c.Args[2]
	o := c.DBFor(key).Peek(key, c.Now) // not an access, as in Redis
	if o == nil {
		c.Null()
		return
	}
	c.Int(int64(len(o.Key)+ObjectOverhead) + o.ValueMemory())
}
