package shard

import (
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/hll"
)

// HyperLogLog on strings: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST, as Redis
// 7.0's src/hyperloglog.c. The representation and the algorithms are
// package hll's; what is here is the keyspace's side: looking keys up as
// Redis does (read or write lookups, hits and misses), Redis' type checks,
// storing a value that grew or was promoted, and counting changes.

// addHLLCommands registers the HyperLogLog commands' handlers.
func addHLLCommands(add func(name string, h handler, r routeKind)) {
	add("pfadd", cmdPFAdd, routeKeys)
	add("pfcount", cmdPFCount, routeKeys)
	add("pfmerge", cmdPFMerge, routeKeys)
	add("pfdebug", cmdPFDebug, routeKeys)
	// Keyless; it holds every shard while it runs, as Redis blocks the
	// server for it.
	add("pfselftest", cmdPFSelfTest, routeAll)
}

// hllSparseMax is hll-sparse-max-bytes, live (CONFIG SET).
func (c *Ctx) hllSparseMax() int { return int(min(c.limits().HLLSparseMaxBytes, 1<<40)) }

// isHLL is Redis' isHLLObjectOrReply: o must be a string holding an HLL
// (integers never do); otherwise it replies and returns false.
func (c *Ctx) isHLL(o *object) bool {
	if o.kind != KindString {
		c.wrongType()
		return false
	}
	if o.enc == encInt {
		c.err(hll.ErrNotHLL.Error())
		return false
	}
	if _, err := hll.Check(o.str); err != nil {
		c.err(err.Error())
		return false
	}
	return true
}

// newHLL creates key holding an empty (sparse) HLL: Redis' createHLLObject.
func (c *Ctx) newHLL(d *DB, key []byte) *object {
	o := d.insert(key, KindString)
	o.str = hll.NewSparse(make([]byte, 0, hll.SparseEmpty+8))
	o.enc = encRawEdited
	d.accountResize(o, 0)
	return o
}

// storeHLL makes s, what package hll returned for o's value, o's string:
// nothing to do when it is the same buffer; otherwise (the sparse HLL grew
// past its capacity or was promoted) the old buffer is released.
func (d *DB) storeHLL(o *object, s []byte) {
	if cap(s) == cap(o.str) && len(s) > 0 && len(o.str) > 0 && &s[:1][0] == &o.str[:1][0] {
		o.str = s
		return
	}
	old := cap(o.str)
	d.unmapStr(o) // an off-heap value: s is a heap copy
	o.str = s
	d.accountResize(o, old)
}

func cmdPFAdd(c *Ctx) {
	key := c.Args[1]
	d := c.db(key)
	updated := 0
	o := d.lookup(key, c.Now)
	if o == nil {
		o = c.newHLL(d, key)
		updated++
	} else if !c.isHLL(o) {
		return
	}
	o.enc = encRawEdited // Redis' dbUnshareStringValue
	max := c.hllSparseMax()
	for _, ele := range c.Args[2:] {
		s, changed, err := hll.Add(o.str, ele, max)
		d.storeHLL(o, s)
		if err != nil {
			c.err(err.Error())
			return
		}
		if changed {
			updated++
		}
	}
	if updated > 0 {
		hll.Invalidate(o.str)
		d.touched(o.key)
		c.int(1)
		return
	}
	c.int(0)
}

func cmdPFCount(c *Ctx) {
	if len(c.Args) > 2 {
		// The cardinality of the union, written nowhere.
		var u hll.Union
		for _, key := range c.Args[1:] {
			o, ok := c.hllForRead(key)
			if !ok {
				return
			}
			if o == nil {
				continue
			}
			if err := u.Merge(o.str); err != nil {
				c.err(err.Error())
				return
			}
		}
		c.int(int64(u.Count()))
		return
	}
	key := c.Args[1]
	o, ok := c.hllForRead(key)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	o.enc = encRawEdited
	card, valid := hll.Cached(o.str)
	if !valid {
		var err error
		if card, err = hll.Count(o.str); err != nil {
			c.err(err.Error())
			return
		}
		// The cache is part of the value: writing it is a change (WATCH,
		// the save rules), as Redis counts it.
		hll.SetCached(o.str, card)
		c.db(key).touched(o.key)
	}
	c.int(int64(card))
}

// hllForRead looks key up as Redis' lookupKeyRead (hits and misses) and
// checks it holds an HLL: (nil, true) when missing, (nil, false) after
// replying.
func (c *Ctx) hllForRead(key []byte) (*object, bool) {
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o == nil {
		d.misses.Add(1)
		return nil, true
	}
	d.hits.Add(1)
	if !c.isHLL(o) {
		return nil, false
	}
	return o, true
}

func cmdPFMerge(c *Ctx) {
	// The union of every key, the destination included.
	var u hll.Union
	dense := false
	for _, key := range c.Args[1:] {
		o, ok := c.hllForRead(key)
		if !ok {
			return
		}
		if o == nil {
			continue
		}
		if o.str[4] == hll.Dense {
			dense = true
		}
		if err := u.Merge(o.str); err != nil {
			c.err(err.Error())
			return
		}
	}
	key := c.Args[1]
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o == nil {
		o = c.newHLL(d, key)
	}
	o.enc = encRawEdited
	if dense {
		s, err := hll.ToDense(o.str)
		if err != nil {
			c.err(err.Error())
			return
		}
		d.storeHLL(o, s)
	}
	max := c.hllSparseMax()
	for i, v := range u {
		if v == 0 {
			continue
		}
		// As Redis, a corrupt destination found here is not reported.
		s, _, _ := hll.Set(o.str, i, v, max)
		d.storeHLL(o, s)
	}
	hll.Invalidate(o.str)
	d.touched(o.key)
	c.ok()
}

func cmdPFDebug(c *Ctx) {
	sub, key := c.Args[1], c.Args[2]
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o == nil {
		c.err("ERR The specified key does not exist")
		return
	}
	if !c.isHLL(o) {
		return
	}
	o.enc = encRawEdited
	known := resp.EqualFold(sub, "getreg") || resp.EqualFold(sub, "decode") ||
		resp.EqualFold(sub, "encoding") || resp.EqualFold(sub, "todense")
	if !known {
		c.err("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
		return
	}
	if len(c.Args) != 3 {
		c.err("ERR Wrong number of arguments for the '" + string(sub) + "' subcommand")
		return
	}
	switch {
	case resp.EqualFold(sub, "getreg"), resp.EqualFold(sub, "todense"):
		converted := false
		if o.str[4] == hll.Sparse {
			s, err := hll.ToDense(o.str)
			if err != nil {
				c.err(err.Error())
				return
			}
			d.storeHLL(o, s)
			d.touched(o.key) // Redis counts the encoding change
			converted = true
		}
		if resp.EqualFold(sub, "todense") {
			if converted {
				c.int(1)
			} else {
				c.int(0)
			}
			return
		}
		c.array(hll.Registers)
		for i := 0; i < hll.Registers; i++ {
			c.int(int64(hll.Register(o.str, i)))
		}
	case resp.EqualFold(sub, "decode"):
		if o.str[4] != hll.Sparse {
			c.err("ERR HLL encoding is not sparse")
			return
		}
		c.bulk(hll.Decode(nil, o.str))
	default: // encoding
		if o.str[4] == hll.Dense {
			c.simple("dense")
		} else {
			c.simple("sparse")
		}
	}
}

func cmdPFSelfTest(c *Ctx) {
	if err := hll.SelfTest(c.hllSparseMax()); err != nil {
		c.err(err.Error())
		return
	}
	c.ok()
}
