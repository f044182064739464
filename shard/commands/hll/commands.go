package hll

import (
	"github.com/svcdb/svcdb/core/resp"
	hllrep "github.com/svcdb/svcdb/shard/hll"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Register adds the HyperLogLog commands' handlers to the table.
func Register(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("pfadd", cmdPFAdd, keyspace.RouteKeys)
	add("pfcount", cmdPFCount, keyspace.RouteKeys)
	add("pfmerge", cmdPFMerge, keyspace.RouteKeys)
	add("pfdebug", cmdPFDebug, keyspace.RouteKeys)
	// Keyless; it holds every shard while it runs, as Redis blocks the
	// server for it.
	add("pfselftest", cmdPFSelfTest, keyspace.RouteAll)
}

// hllSparseMax is hll-sparse-max-bytes, live (CONFIG SET).
func hllSparseMax(c *keyspace.Ctx) int { return int(min(c.Limits().HLLSparseMaxBytes, 1<<40)) }

// isHLL is Redis' isHLLObjectOrReply: o must be a string holding an HLL
// (integers never do); otherwise it replies and returns false.
func isHLL(c *keyspace.Ctx, o *keyspace.Object) bool {
	if o.Kind != keyspace.KindString {
		c.WrongType()
		return false
	}
	if o.Enc == keyspace.EncInt {
		c.Err(hllrep.ErrNotHLL.Error())
		return false
	}
	if _, err := hllrep.Check(o.Bytes()); err != nil {
		c.Err(err.Error())
		return false
	}
	return true
}

// newHLL creates key holding an empty (sparse) HLL: Redis' createHLLObject.
func newHLL(c *keyspace.Ctx, d *keyspace.DB, key []byte) *keyspace.Object {
	o := d.Insert(key, keyspace.KindString)
	o.SetBytes(hllrep.NewSparse(make([]byte, 0, hllrep.SparseEmpty+8)))
	o.Enc = keyspace.EncRawEdited
	d.AccountResize(o, 0)
	return o
}

// storeHLL makes s, what package hll returned for o's value, o's string:
// nothing to do when it is the same buffer; otherwise (the sparse HLL grew
// past its capacity or was promoted) the old buffer is released.
func storeHLL(d *keyspace.DB, o *keyspace.Object, s []byte) {
	if cap(s) == cap(o.Bytes()) && len(s) > 0 && len(o.Bytes()) > 0 && &s[:1][0] == &o.Bytes()[:1][0] {
		o.SetBytes(s)
		return
	}
	before := o.ValueMemory()
	if o.OffHeap() { // s is a heap copy: the mapped buffer goes
		d.FreeStr(o)
		before = 0
	}
	o.SetBytes(s)
	d.AccountResize(o, before)
}

func cmdPFAdd(c *keyspace.Ctx) {
	key := c.Args[1]
	d := c.DBFor(key)
	updated := 0
	o := d.Lookup(key, c.Now)
	if o == nil {
		o = newHLL(c, d, key)
		updated++
	} else if !isHLL(c, o) {
		return
	}
	o.Enc = keyspace.EncRawEdited // Redis' dbUnshareStringValue
	max := hllSparseMax(c)
	for _, ele := range c.Args[2:] {
		s, changed, err := hllrep.Add(o.Bytes(), ele, max)
		storeHLL(d, o, s)
		if err != nil {
			c.Err(err.Error())
			return
		}
		if changed {
			updated++
		}
	}
	if updated > 0 {
		hllrep.Invalidate(o.Bytes())
		d.Touched(o.Key())
		c.Notify(keyspace.NotifyString, "pfadd", c.Args[1]) // before the reply, as Redis
		c.Int(1)
		return
	}
	c.Int(0)
}

func cmdPFCount(c *keyspace.Ctx) {
	if len(c.Args) > 2 {
		// The cardinality of the union, written nowhere.
		var u hllrep.Union
		for _, key := range c.Args[1:] {
			o, ok := hllForRead(c, key)
			if !ok {
				return
			}
			if o == nil {
				continue
			}
			if err := u.Merge(o.Bytes()); err != nil {
				c.Err(err.Error())
				return
			}
		}
		c.Int(int64(u.Count()))
		return
	}
	key := c.Args[1]
	o, ok := hllForRead(c, key)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	o.Enc = keyspace.EncRawEdited
	card, valid := hllrep.Cached(o.Bytes())
	if !valid {
		var err error
		if card, err = hllrep.Count(o.Bytes()); err != nil {
			c.Err(err.Error())
			return
		}
		// The cache is part of the value: writing it is a change (WATCH,
		// the save rules), as Redis counts it.
		hllrep.SetCached(o.Bytes(), card)
		c.DBFor(key).Touched(o.Key())
	}
	c.Int(int64(card))
}

// hllForRead looks key up as Redis' lookupKeyRead (hits and misses) and
// checks it holds an HLL: (nil, true) when missing, (nil, false) after
// replying.
func hllForRead(c *keyspace.Ctx, key []byte) (*keyspace.Object, bool) {
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.Miss()
		return nil, true
	}
	d.Hit()
	if !isHLL(c, o) {
		return nil, false
	}
	return o, true
}

func cmdPFMerge(c *keyspace.Ctx) {
	// The union of every key, the destination included.
	var u hllrep.Union
	dense := false
	for _, key := range c.Args[1:] {
		o, ok := hllForRead(c, key)
		if !ok {
			return
		}
		if o == nil {
			continue
		}
		if o.Bytes()[4] == hllrep.Dense {
			dense = true
		}
		if err := u.Merge(o.Bytes()); err != nil {
			c.Err(err.Error())
			return
		}
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		o = newHLL(c, d, key)
	}
	o.Enc = keyspace.EncRawEdited
	if dense {
		s, err := hllrep.ToDense(o.Bytes())
		if err != nil {
			c.Err(err.Error())
			return
		}
		storeHLL(d, o, s)
	}
	max := hllSparseMax(c)
	for i, v := range u {
		if v == 0 {
			continue
		}
		// As Redis, a corrupt destination found here is not reported.
		s, _, _ := hllrep.Set(o.Bytes(), i, v, max)
		storeHLL(d, o, s)
	}
	hllrep.Invalidate(o.Bytes())
	d.Touched(o.Key())
	c.Notify(keyspace.NotifyString, "pfadd", c.Args[1]) // PFMERGE publishes pfadd, as Redis
	c.OK()
}

func cmdPFDebug(c *keyspace.Ctx) {
	sub, key := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		c.Err("ERR The specified key does not exist")
		return
	}
	if !isHLL(c, o) {
		return
	}
	o.Enc = keyspace.EncRawEdited
	known := resp.EqualFold(sub, "getreg") || resp.EqualFold(sub, "decode") ||
		resp.EqualFold(sub, "encoding") || resp.EqualFold(sub, "todense")
	if !known {
		c.Err("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
		return
	}
	if len(c.Args) != 3 {
		c.Err("ERR Wrong number of arguments for the '" + string(sub) + "' subcommand")
		return
	}
	switch {
	case resp.EqualFold(sub, "getreg"), resp.EqualFold(sub, "todense"):
		converted := false
		if o.Bytes()[4] == hllrep.Sparse {
			s, err := hllrep.ToDense(o.Bytes())
			if err != nil {
				c.Err(err.Error())
				return
			}
			storeHLL(d, o, s)
			d.Touched(o.Key()) // Redis counts the encoding change
			converted = true
		}
		if resp.EqualFold(sub, "todense") {
			if converted {
				c.Int(1)
			} else {
				c.Int(0)
			}
			return
		}
		c.Array(hllrep.Registers)
		for i := 0; i < hllrep.Registers; i++ {
			c.Int(int64(hllrep.Register(o.Bytes(), i)))
		}
	case resp.EqualFold(sub, "decode"):
		if o.Bytes()[4] != hllrep.Sparse {
			c.Err("ERR HLL encoding is not sparse")
			return
		}
		c.Bulk(hllrep.Decode(nil, o.Bytes()))
	default: // encoding
		if o.Bytes()[4] == hllrep.Dense {
			c.Simple("dense")
		} else {
			c.Simple("sparse")
		}
	}
}

func cmdPFSelfTest(c *keyspace.Ctx) {
	if err := hllrep.SelfTest(hllSparseMax(c)); err != nil {
		c.Err(err.Error())
		return
	}
	c.OK()
}
