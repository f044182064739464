package shard

import (
	"sync/atomic"

	"github.com/svcdb/svcdb/core/resp"
)

// valueMemory is the bytes o's value holds beyond the object itself.
func (o *object) valueMemory() int64 {
	n := int64(cap(o.str))
	if o.coll != nil {
		n += o.coll.Memory()
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
func (d *DB) valueChanged(o *object, before int64) {
	d.touched(o.key)
	if delta := o.valueMemory() - before; delta != 0 {
		d.memory.Add(delta)
	}
}

// copyValue gives dst (a fresh object of src's kind) a deep copy of src's
// collection value.
func (d *DB) copyValue(dst, src *object) {
	dst.enc = src.enc
	if src.str != nil {
		dst.str = append(make([]byte, 0, len(src.str)), src.str...)
	}
	if src.coll != nil {
		dst.coll = src.coll.Clone()
	}
	d.valueChanged(dst, 0)
}

// encodingName is what OBJECT ENCODING reports, from what the value really
// is. Strings follow Redis: "int" for integers held as numbers, "embstr" for
// strings up to 44 bytes (Redis' embedded-string limit), "raw" above.
func (o *object) encodingName() string {
	switch o.enc {
	case encInt:
		return "int"
	case encRaw:
		if _, ok := resp.ParseInt(o.str); ok {
			return "int" // Redis' tryObjectEncoding would have made it one
		}
		if len(o.str) <= 44 {
			return "embstr"
		}
		return "raw"
	case encRawEdited:
		return "raw"
	case encListpack:
		if o.kind == KindList {
			return "quicklist" // Redis 7.0 lists are always quicklists; ours has one node
		}
		return "listpack"
	case encIntset:
		return "intset"
	case encHashtable:
		return "hashtable"
	case encSkiplist:
		return "skiplist"
	case encQuicklist:
		return "quicklist"
	case encStream:
		return "stream"
	}
	return "unknown"
}

// edited records that a string was changed in place (APPEND, SETRANGE).
func (d *DB) edited(o *object) {
	o.enc = encRawEdited
	d.touched(o.key)
}

// readKind looks key up for a read command: (nil, true) when missing, (nil,
// false) after replying WRONGTYPE. It counts keyspace hits and misses.
func (c *Ctx) readKind(d *DB, key []byte, kind Kind) (*object, bool) {
	o := d.lookup(key, c.Now)
	if o == nil {
		d.misses.Add(1)
		return nil, true
	}
	d.hits.Add(1)
	if o.kind != kind {
		c.wrongType()
		return nil, false
	}
	return o, true
}

// writeKind looks key up for a write command: (nil, true) when missing, (nil,
// false) after replying WRONGTYPE. Writes do not count as hits or misses, as
// in Redis (lookupKeyWrite).
func (c *Ctx) writeKind(d *DB, key []byte, kind Kind) (*object, bool) {
	o := d.lookup(key, c.Now)
	if o == nil {
		return nil, true
	}
	if o.kind != kind {
		c.wrongType()
		return nil, false
	}
	return o, true
}

// removeMembers is HDEL, SREM and ZREM: del removes each of c.Args[2:] from
// the key's kind value, stopping once it is empty, and the reply is how many
// it removed. As in Redis, a no-op leaves WATCH alone and an emptied key is
// deleted.
func (c *Ctx) removeMembers(kind Kind, del func(*object, []byte) bool, size func(*object) int) {
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, kind)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	before := o.valueMemory()
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
		d.valueChanged(o, before)
		if size(o) == 0 {
			d.remove(o)
		}
	}
	c.int(removed)
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
	HLLSparseMaxBytes      int64 // a sparse HyperLogLog longer than this is promoted to dense (cmd_hll.go)
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
	HLLSparseMaxBytes:      3000,
}

// encodingLimits is read by command handlers on any shard and replaced whole
// by SetEncodingLimits (CONFIG SET).
type encodingLimits struct {
	p atomic.Pointer[EncodingLimits]
}

// limits returns the current thresholds.
func (c *Ctx) limits() *EncodingLimits {
	if l := c.env.limits.p.Load(); l != nil {
		return l
	}
	return &DefaultEncodingLimits
}

// ---- OBJECT -----------------------------------------------------------------

func cmdObject(c *Ctx) {
	sub := c.Args[1]
	if resp.EqualFold(sub, "help") {
		c.help(objectHelp)
		return
	}
	if len(c.Args) != 3 {
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "object")
		return
	}
	key := c.Args[2]
	d := c.db(key)
	o := d.peek(key, c.Now) // Redis' LOOKUP_NOTOUCH: OBJECT is not an access
	if o == nil {
		c.null()
		return
	}
	switch {
	case resp.EqualFold(sub, "encoding"):
		c.bulkString(o.encodingName())
	case resp.EqualFold(sub, "refcount"):
		// Redis shares the integers 0..9999 (OBJ_SHARED_REFCOUNT) and reports
		// them so; svcdb holds them inline, which is the same observable fact.
		n, isInt := o.ival, o.enc == encInt
		if o.enc == encRaw {
			n, isInt = resp.ParseInt(o.str)
		}
		if isInt && n >= 0 && n < 10000 {
			c.int(2147483647)
		} else {
			c.int(1)
		}
	case resp.EqualFold(sub, "idletime"):
		if d.evict.loadPolicy()&policyLFU != 0 {
			c.err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.int(int64(d.evict.idleMillis(o.access) / 1000))
	case resp.EqualFold(sub, "freq"):
		if d.evict.loadPolicy()&policyLFU == 0 {
			c.err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.int(int64(d.evict.lfuDecr(o.access)))
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
				c.notInteger()
				return
			}
			i++
			continue
		}
		c.syntaxErr()
		return
	}
	key := c.Args[2]
	o := c.db(key).peek(key, c.Now) // not an access, as in Redis
	if o == nil {
		c.null()
		return
	}
	c.int(int64(len(o.key)+objectOverhead) + o.valueMemory())
}
