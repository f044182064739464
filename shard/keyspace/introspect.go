package keyspace

import "github.com/svcdb/svcdb/core/resp"

// The introspection commands the command packages register but the keyspace
// serves, since they read what only it knows of an object (its encoding
// name, its access clock, its memory accounting).

// ---- OBJECT -----------------------------------------------------------------

// ObjectCommand serves OBJECT ENCODING, REFCOUNT, IDLETIME, FREQ and HELP:
// what the keyspace alone knows of a key's object (its encoding, its
// access clock under the eviction policy).
func ObjectCommand(c *Ctx) {
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
		n, isInt := o.Int(), o.Enc == EncInt
		if o.Enc == EncRaw {
			n, isInt = resp.ParseInt(o.Bytes())
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

// MemoryUsageCommand serves MEMORY USAGE key [SAMPLES n], the one MEMORY subcommand
// with a key (the others are the server's). The figure is the key's share of
// the shard's memory accounting: key bytes, per-key overhead, the value's
// bytes and the key's share of its database's structure (DB.usageOf), exact
// rather than sampled, so SAMPLES is checked and ignored.
func MemoryUsageCommand(c *Ctx) {
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
	c.Int(c.DBFor(key).usageOf(o))
}
