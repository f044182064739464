package shard

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
)

func cmdDel(c *Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		d := c.db(key)
		if o := d.lookup(key, c.Now); o != nil {
			d.remove(o)
			n++
		}
	}
	c.int(n)
}

// cmdExists serves EXISTS: it counts the keys that exist, a key named twice
// counting twice, without recording an access (TOUCH does: evict.go).
func cmdExists(c *Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		if c.db(key).peek(key, c.Now) != nil {
			n++
		}
	}
	c.int(n)
}

func cmdType(c *Ctx) {
	key := c.Args[1]
	o := c.db(key).peek(key, c.Now) // not an access, as in Redis
	if o == nil {
		c.simple("none")
		return
	}
	c.simple(o.kind.String())
}

func cmdRename(c *Ctx)   { c.rename(false) }
func cmdRenameNX(c *Ctx) { c.rename(true) }

func (c *Ctx) rename(nx bool) {
	src, dst := c.Args[1], c.Args[2]
	sd, dd := c.db(src), c.db(dst)
	o := sd.lookup(src, c.Now)
	if o == nil {
		c.err("ERR no such key")
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.int(0)
		} else {
			c.ok()
		}
		return
	}
	if old := dd.lookup(dst, c.Now); old != nil {
		if nx {
			c.int(0)
			return
		}
		dd.remove(old)
	}
	val, coll, ival, enc, kind, at, access := o.str, o.coll, o.ival, o.enc, o.kind, o.expireAt, o.access
	size := o.valueMemory()
	offHeap := sd.disownOffHeap(o) // the buffer moves with the value, unmapped by no one
	o.str, o.coll = nil, nil       // the value moves; keep remove from accounting it twice
	sd.memory.Add(-size)
	sd.remove(o)
	n := dd.insert(dst, kind)
	n.str, n.coll, n.ival, n.enc, n.access = val, coll, ival, enc, access // Redis moves the object, its LRU/LFU data too
	if offHeap {
		dd.adoptOffHeap(n, val)
	}
	dd.memory.Add(size)
	dd.setExpire(n, at)
	if nx {
		c.int(1)
	} else {
		c.ok()
	}
}

func cmdCopy(c *Ctx) {
	src, dst := c.Args[1], c.Args[2]
	dstDB := c.DB
	replace := false
	for i := 3; i < len(c.Args); i++ {
		switch {
		case resp.EqualFold(c.Args[i], "replace"):
			replace = true
		case resp.EqualFold(c.Args[i], "db") && i+1 < len(c.Args):
			i++
			n, ok := resp.ParseInt(c.Args[i])
			if !ok {
				c.notInteger()
				return
			}
			if n < math.MinInt32 || n > math.MaxInt32 { // Redis' getIntFromObjectOrReply
				c.err("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if n < 0 || n >= NumDatabases {
				c.err("ERR DB index is out of range")
				return
			}
			dstDB = int(n)
		default:
			c.syntaxErr()
			return
		}
	}
	if string(src) == string(dst) && dstDB == c.DB {
		c.err("ERR source and destination objects are the same")
		return
	}
	sd := c.db(src)
	saved := c.DB
	c.DB = dstDB
	dd := c.db(dst)
	c.DB = saved
	o := sd.lookup(src, c.Now)
	if o == nil {
		c.int(0)
		return
	}
	if old := dd.lookup(dst, c.Now); old != nil {
		if !replace {
			c.int(0)
			return
		}
		dd.remove(old)
	}
	n := dd.insert(dst, o.kind)
	switch {
	case o.kind != KindString:
		dd.copyValue(n, o)
	case o.enc == encInt:
		dd.setInt(n, o.ival)
	default:
		dd.setString(n, o.str)
	}
	dd.setExpire(n, o.expireAt)
	c.int(1)
}

// expire flags, as Redis' parseExtendedExpireArgumentsOrReply.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

func cmdExpire(c *Ctx)    { c.expire(1000, false) }
func cmdPExpire(c *Ctx)   { c.expire(1, false) }
func cmdExpireAt(c *Ctx)  { c.expire(1000, true) }
func cmdPExpireAt(c *Ctx) { c.expire(1, true) }

func (c *Ctx) expire(unit int64, absolute bool) {
	key := c.Args[1]
	flags := 0
	for _, a := range c.Args[3:] {
		switch {
		case resp.EqualFold(a, "nx"):
			flags |= expireNX
		case resp.EqualFold(a, "xx"):
			flags |= expireXX
		case resp.EqualFold(a, "gt"):
			flags |= expireGT
		case resp.EqualFold(a, "lt"):
			flags |= expireLT
		default:
			c.Out = append(c.Out, "-ERR Unsupported option "...)
			c.Out = appendSanitized(c.Out, a)
			c.Out = append(c.Out, "\r\n"...)
			return
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.err("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.notInteger()
		return
	}
	if unit == 1000 {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.errInvalidExpire()
			return
		}
		when *= 1000
	}
	base := int64(0)
	if !absolute {
		base = c.Now
	}
	if when > math.MaxInt64-base {
		c.errInvalidExpire()
		return
	}
	when += base
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o == nil {
		c.int(0)
		return
	}
	if flags != 0 {
		cur := o.expireAt // 0: no expiry, which GT/LT treat as infinite
		if (flags&expireNX != 0 && cur != 0) ||
			(flags&expireXX != 0 && cur == 0) ||
			(flags&expireGT != 0 && (cur == 0 || when <= cur)) ||
			(flags&expireLT != 0 && cur != 0 && when >= cur) {
			c.int(0)
			return
		}
	}
	if when <= c.Now {
		d.remove(o)
		d.expired.Add(1)
		c.logAs(cmdDEL, key)
	} else {
		d.setExpire(o, when)
		c.logExpireAt(absolute && unit == 1, when)
	}
	c.int(1)
}

// Command names the append-only log records in place of the command run.
var (
	cmdDEL       = []byte("DEL")
	cmdSET       = []byte("SET")
	cmdPEXPIREAT = []byte("PEXPIREAT")
	cmdPERSIST   = []byte("PERSIST")
	argPXAT      = []byte("PXAT")
	argKEEPTTL   = []byte("KEEPTTL")
)

// logging reports whether the append-only log is on, for handlers that
// must build the arguments they pass to logAs.
func (c *Ctx) logging() bool { return c.env != nil && c.env.prop.Load() != nil }

// logExpireAt records an EXPIRE family command that set an expiry as Redis'
// expireGenericCommand propagates it: PEXPIREAT key <unix ms> with the
// command's flags (NX, XX, GT, LT) as given, so the log holds an absolute
// time; PEXPIREAT itself (asIs) is recorded unchanged.
func (c *Ctx) logExpireAt(asIs bool, when int64) {
	if asIs || !c.logging() {
		return
	}
	var buf [8][]byte
	args := append(buf[:0], cmdPEXPIREAT, c.Args[1], strconv.AppendInt(c.num[:0], when, 10))
	c.logAs(append(args, c.Args[3:]...)...)
}

// appendSanitized appends client bytes to an error line as Redis'
// addReplyErrorFormat("%s") does: the C string ends at a NUL, and CR and LF
// become spaces so the reply stays one line.
func appendSanitized(dst, b []byte) []byte {
	for _, ch := range b {
		if ch == 0 {
			break
		}
		if ch == '\r' || ch == '\n' {
			ch = ' '
		}
		dst = append(dst, ch)
	}
	return dst
}

func cmdTTL(c *Ctx)         { c.ttl(false, false) }
func cmdPTTL(c *Ctx)        { c.ttl(true, false) }
func cmdExpireTime(c *Ctx)  { c.ttl(false, true) }
func cmdPExpireTime(c *Ctx) { c.ttl(true, true) }

func (c *Ctx) ttl(ms, absolute bool) {
	key := c.Args[1]
	o := c.db(key).peek(key, c.Now) // not an access, as in Redis
	switch {
	case o == nil:
		c.int(-2)
	case o.expireAt == 0:
		c.int(-1)
	default:
		t := o.expireAt
		if !absolute {
			t = max(t-c.Now, 0)
		}
		if !ms { // round to the nearest second; t+500 could overflow
			t = t/1000 + (t%1000+500)/1000
		}
		c.int(t)
	}
}

func cmdPersist(c *Ctx) {
	key := c.Args[1]
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o == nil || o.expireAt == 0 {
		c.int(0)
		return
	}
	d.setExpire(o, 0)
	c.int(1)
}

// ---- keyspace-wide commands (run holding every shard) ------------------------

// eachDB calls fn with the selected database of every shard the command holds.
func (c *Ctx) eachDB(fn func(d *DB)) {
	if c.single != nil {
		fn(c.single.dbs[c.DB])
		return
	}
	for _, st := range c.env.stores {
		fn(st.dbs[c.DB])
	}
}

func cmdDBSize(c *Ctx) {
	var n int64
	c.eachDB(func(d *DB) { n += int64(len(d.index)) })
	c.int(n)
}

func cmdKeys(c *Ctx) {
	pattern := c.Args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	// The count is not known up front; reserve the header and patch it after.
	var keys [][]byte
	c.eachDB(func(d *DB) {
		for k, pos := range d.index {
			o := d.slot(pos)
			if o.expireAt != 0 && o.expireAt <= c.Now {
				continue
			}
			if all || glob.Match(pattern, []byte(k), false) {
				keys = append(keys, []byte(k))
			}
		}
	})
	c.array(len(keys))
	for _, k := range keys {
		c.bulk(k)
	}
}

func cmdRandomKey(c *Ctx) {
	var total int64
	c.eachDB(func(d *DB) { total += int64(len(d.index)) })
	for total > 0 {
		// Pick a shard weighted by its key count, then a key within it.
		pick := rand.Int64N(total)
		var chosen *DB
		c.eachDB(func(d *DB) {
			if chosen == nil {
				if pick < int64(len(d.index)) {
					chosen = d
				} else {
					pick -= int64(len(d.index))
				}
			}
		})
		if chosen == nil {
			break
		}
		if o := chosen.randomLive(c.Now); o != nil {
			c.bulkString(o.key)
			return
		}
		total = 0
		c.eachDB(func(d *DB) { total += int64(len(d.index)) })
	}
	c.null()
}

func cmdFlushDB(c *Ctx) {
	if !c.flushArgs() {
		return
	}
	c.eachDB(func(d *DB) { d.flush() })
	c.ok()
}

func cmdFlushAll(c *Ctx) {
	if !c.flushArgs() {
		return
	}
	for _, s := range c.storesHeld() {
		for _, d := range s.dbs {
			d.flush()
		}
	}
	c.ok()
}

// storesHeld is the stores of the shards the command holds.
func (c *Ctx) storesHeld() []*Store {
	if c.single != nil {
		return []*Store{c.single}
	}
	return c.env.stores
}

// flushArgs accepts FLUSHDB/FLUSHALL's optional ASYNC or SYNC (both flush at
// once here: freeing is the garbage collector's work either way).
func (c *Ctx) flushArgs() bool {
	if len(c.Args) == 1 {
		return true
	}
	if len(c.Args) == 2 && (resp.EqualFold(c.Args[1], "async") || resp.EqualFold(c.Args[1], "sync")) {
		return true
	}
	c.syntaxErr()
	return false
}

// ---- SCAN -------------------------------------------------------------------

// The cursor's format is in store.go (ParseScanCursor).

func cmdScan(c *Ctx) {
	shard, pos, err := ParseScanCursor(c.Args[1], len(c.env.stores))
	if err != nil {
		c.err("ERR invalid cursor")
		return
	}
	var pattern, typ []byte
	count := int64(10)
	for i := 2; i < len(c.Args); i += 2 {
		if i+1 >= len(c.Args) {
			c.syntaxErr()
			return
		}
		a, v := c.Args[i], c.Args[i+1]
		switch {
		case resp.EqualFold(a, "count"):
			n, ok := resp.ParseInt(v)
			if !ok {
				c.notInteger()
				return
			}
			if n < 1 {
				c.syntaxErr()
				return
			}
			count = n
		case resp.EqualFold(a, "match"):
			pattern = v
			if len(v) == 1 && v[0] == '*' {
				pattern = nil
			}
		case resp.EqualFold(a, "type"):
			typ = v
		default:
			c.syntaxErr()
			return
		}
	}
	d := c.env.stores[shard].dbs[c.DB]
	var keys []string
	visited := int64(0)
	for ; pos < uint64(d.used) && visited < count; pos++ {
		o := d.slot(uint32(pos))
		if o.kind == kindNone {
			continue
		}
		visited++
		if o.expireAt != 0 && o.expireAt <= c.Now {
			continue
		}
		if typ != nil && !resp.EqualFold(typ, o.kind.String()) {
			continue
		}
		if pattern != nil && !glob.Match(pattern, []byte(o.key), false) {
			continue
		}
		keys = append(keys, o.key)
	}
	next := pos<<scanShardBits | uint64(shard)
	if pos >= uint64(d.used) {
		next = uint64(shard + 1)
		if shard+1 >= len(c.env.stores) {
			next = 0
		}
	}
	c.array(2)
	c.Out = resp.AppendBulkString(c.Out, strconv.FormatUint(next, 10))
	c.array(len(keys))
	for _, k := range keys {
		c.bulkString(k)
	}
}
