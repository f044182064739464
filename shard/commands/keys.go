package commands

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

func cmdDel(c *keyspace.Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		d := c.DBFor(key)
		if o := d.Lookup(key, c.Now); o != nil {
			d.Remove(o)
			c.Notify(keyspace.NotifyGeneric, "del", key)
			n++
		}
	}
	c.Int(n)
}

// cmdExists serves EXISTS: it counts the keys that exist, a key named twice
// counting twice, without recording an access (TOUCH does: evict.go).
func cmdExists(c *keyspace.Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		if c.DBFor(key).Peek(key, c.Now) != nil {
			n++
		}
	}
	c.Int(n)
}

func cmdType(c *keyspace.Ctx) {
	key := c.Args[1]
	o := c.DBFor(key).Peek(key, c.Now) // not an access, as in Redis
	if o == nil {
		c.Simple("none")
		return
	}
	c.Simple(o.Kind.String())
}

func cmdRename(c *keyspace.Ctx)   { rename(c, false) }
func cmdRenameNX(c *keyspace.Ctx) { rename(c, true) }

func rename(c *keyspace.Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	sd, dd := c.DBFor(src), c.DBFor(dst)
	o := sd.Lookup(src, c.Now)
	if o == nil {
		c.Err("ERR no such key")
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.Int(0)
		} else {
			c.OK()
		}
		return
	}
	if old := dd.Lookup(dst, c.Now); old != nil {
		if nx {
			c.Int(0)
			return
		}
		dd.Remove(old)
	}
	var val keyspace.Object // the value moves: out of o, so that Remove does not account it twice
	kind, at, access := o.Kind, sd.ExpireAt(o), o.Access
	size := o.ValueMemory()
	offHeap := sd.DisownOffHeap(o) // the buffer moves with the value, unmapped by no one
	keyspace.MoveValue(&val, o)
	sd.AddMemory(-size)
	sd.Remove(o)
	n := dd.Insert(dst, kind)
	keyspace.MoveValue(n, &val)
	n.Access = access // Redis moves the object, its LRU/LFU data too
	if offHeap {
		dd.AdoptOffHeap(n, n.Bytes())
	}
	dd.AddMemory(n.ValueMemory()) // not size: a value that shared its key's allocation moved as a copy
	dd.SetExpire(n, at)
	c.Notify(keyspace.NotifyGeneric, "rename_from", src)
	c.Notify(keyspace.NotifyGeneric, "rename_to", dst)
	if nx {
		c.Int(1)
	} else {
		c.OK()
	}
}

func cmdCopy(c *keyspace.Ctx) {
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
				c.NotInteger()
				return
			}
			if n < math.MinInt32 || n > math.MaxInt32 { // Redis' getIntFromObjectOrReply
				c.Err("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if n < 0 || n >= keyspace.NumDatabases {
				c.Err("ERR DB index is out of range")
				return
			}
			dstDB = int(n)
		default:
			c.SyntaxErr()
			return
		}
	}
	if string(src) == string(dst) && dstDB == c.DB {
		c.Err("ERR source and destination objects are the same")
		return
	}
	sd := c.DBFor(src)
	saved := c.DB
	c.DB = dstDB
	dd := c.DBFor(dst)
	c.DB = saved
	o := sd.Lookup(src, c.Now)
	if o == nil {
		c.Int(0)
		return
	}
	if old := dd.Lookup(dst, c.Now); old != nil {
		if !replace {
			c.Int(0)
			return
		}
		dd.Remove(old)
	}
	n := dd.Insert(dst, o.Kind)
	switch {
	case o.Kind != keyspace.KindString:
		dd.CopyValue(n, o)
	case o.Enc == keyspace.EncInt:
		dd.SetInt(n, o.Int())
	default:
		dd.SetString(n, o.Bytes())
	}
	dd.SetExpire(n, sd.ExpireAt(o))
	c.NotifyIn(dstDB, keyspace.NotifyGeneric, "copy_to", dst)
	c.Int(1)
}

// expire flags, as Redis' parseExtendedExpireArgumentsOrReply.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

func cmdExpire(c *keyspace.Ctx)    { expire(c, 1000, false) }
func cmdPExpire(c *keyspace.Ctx)   { expire(c, 1, false) }
func cmdExpireAt(c *keyspace.Ctx)  { expire(c, 1000, true) }
func cmdPExpireAt(c *keyspace.Ctx) { expire(c, 1, true) }

func expire(c *keyspace.Ctx, unit int64, absolute bool) {
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
		c.Err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.Err("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.NotInteger()
		return
	}
	if unit == 1000 {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			errInvalidExpire(c)
			return
		}
		when *= 1000
	}
	base := int64(0)
	if !absolute {
		base = c.Now
	}
	if when > math.MaxInt64-base {
		errInvalidExpire(c)
		return
	}
	when += base
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		c.Int(0)
		return
	}
	if flags != 0 {
		cur := d.ExpireAt(o) // 0: no expiry, which GT/LT treat as infinite
		if (flags&expireNX != 0 && cur != 0) ||
			(flags&expireXX != 0 && cur == 0) ||
			(flags&expireGT != 0 && (cur == 0 || when <= cur)) ||
			(flags&expireLT != 0 && cur != 0 && when >= cur) {
			c.Int(0)
			return
		}
	}
	if when <= c.Now {
		d.Remove(o)
		d.CountExpired()
		c.LogAs(cmdDEL, key)
		c.Notify(keyspace.NotifyGeneric, "del", key)
		c.Int(1)
		return
	}
	d.SetExpire(o, when)
	logExpireAt(c, absolute && unit == 1, when)
	c.Int(1)
	c.Notify(keyspace.NotifyGeneric, "expire", key) // after the reply, as Redis' expireGenericCommand
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

// logExpireAt records an EXPIRE family command that set an expiry as Redis'
// expireGenericCommand propagates it: PEXPIREAT key <unix ms> with the
// command's flags (NX, XX, GT, LT) as given, so the log holds an absolute
// time; PEXPIREAT itself (asIs) is recorded unchanged.
func logExpireAt(c *keyspace.Ctx, asIs bool, when int64) {
	if asIs || !c.Logging() {
		return
	}
	var buf [8][]byte
	args := append(buf[:0], cmdPEXPIREAT, c.Args[1], strconv.AppendInt(c.Scratch[:0], when, 10))
	c.LogAs(append(args, c.Args[3:]...)...)
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

func cmdTTL(c *keyspace.Ctx)         { ttl(c, false, false) }
func cmdPTTL(c *keyspace.Ctx)        { ttl(c, true, false) }
func cmdExpireTime(c *keyspace.Ctx)  { ttl(c, false, true) }
func cmdPExpireTime(c *keyspace.Ctx) { ttl(c, true, true) }

func ttl(c *keyspace.Ctx, ms, absolute bool) {
	key := c.Args[1]
	d := c.DBFor(key)
	o := d.Peek(key, c.Now) // not an access, as in Redis
	switch {
	case o == nil:
		c.Int(-2)
	case !o.HasExpire():
		c.Int(-1)
	default:
		t := d.ExpireAt(o)
		if !absolute {
			t = max(t-c.Now, 0)
		}
		if !ms { // round to the nearest second; t+500 could overflow
			t = t/1000 + (t%1000+500)/1000
		}
		c.Int(t)
	}
}

func cmdPersist(c *keyspace.Ctx) {
	key := c.Args[1]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil || !o.HasExpire() {
		c.Int(0)
		return
	}
	d.SetExpire(o, 0)
	c.Notify(keyspace.NotifyGeneric, "persist", key)
	c.Int(1)
}

// ---- keyspace-wide commands (run holding every shard) ------------------------

func cmdDBSize(c *keyspace.Ctx) {
	var n int64
	c.EachDB(func(d *keyspace.DB) { n += int64(d.Len()) })
	c.Int(n)
}

func cmdKeys(c *keyspace.Ctx) {
	pattern := c.Args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	// The count is not known up front; reserve the header and patch it after.
	var keys [][]byte
	c.EachDB(func(d *keyspace.DB) {
		d.EachKey(func(k string, o *keyspace.Object) {
			if d.Expired(o, c.Now) {
				return
			}
			if all || glob.Match(pattern, []byte(k), false) {
				keys = append(keys, []byte(k))
			}
		})
	})
	c.Array(len(keys))
	for _, k := range keys {
		c.Bulk(k)
	}
}

func cmdRandomKey(c *keyspace.Ctx) {
	var total int64
	c.EachDB(func(d *keyspace.DB) { total += int64(d.Len()) })
	for total > 0 {
		// Pick a shard weighted by its key count, then a key within it.
		pick := rand.Int64N(total)
		var chosen *keyspace.DB
		c.EachDB(func(d *keyspace.DB) {
			if chosen == nil {
				if pick < int64(d.Len()) {
					chosen = d
				} else {
					pick -= int64(d.Len())
				}
			}
		})
		if chosen == nil {
			break
		}
		if o := chosen.RandomLive(c.Now); o != nil {
			c.BulkString(o.Key())
			return
		}
		total = 0
		c.EachDB(func(d *keyspace.DB) { total += int64(d.Len()) })
	}
	c.Null()
}

func cmdFlushDB(c *keyspace.Ctx) {
	if !flushArgs(c) {
		return
	}
	c.EachDB(func(d *keyspace.DB) { d.Flush() })
	c.OK()
}

func cmdFlushAll(c *keyspace.Ctx) {
	if !flushArgs(c) {
		return
	}
	for _, s := range c.StoresHeld() {
		for _, d := range s.DBs() {
			d.Flush()
		}
	}
	c.OK()
}

// flushArgs accepts FLUSHDB/FLUSHALL's optional ASYNC or SYNC (both flush at
// once here: freeing is the garbage collector's work either way).
func flushArgs(c *keyspace.Ctx) bool {
	if len(c.Args) == 1 {
		return true
	}
	if len(c.Args) == 2 && (resp.EqualFold(c.Args[1], "async") || resp.EqualFold(c.Args[1], "sync")) {
		return true
	}
	c.SyntaxErr()
	return false
}

// ---- SCAN -------------------------------------------------------------------

// The cursor's format is in store.go (ParseScanCursor).

func cmdScan(c *keyspace.Ctx) {
	shard, pos, err := keyspace.ParseScanCursor(c.Args[1], c.NumShards())
	if err != nil {
		c.Err("ERR invalid cursor")
		return
	}
	var pattern, typ []byte
	count := int64(10)
	for i := 2; i < len(c.Args); i += 2 {
		if i+1 >= len(c.Args) {
			c.SyntaxErr()
			return
		}
		a, v := c.Args[i], c.Args[i+1]
		switch {
		case resp.EqualFold(a, "count"):
			n, ok := resp.ParseInt(v)
			if !ok {
				c.NotInteger()
				return
			}
			if n < 1 {
				c.SyntaxErr()
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
			c.SyntaxErr()
			return
		}
	}
	d := c.StoreAt(shard).DBs()[c.DB]
	var keys []string
	visited := int64(0)
	for ; pos < uint64(d.Slots()) && visited < count; pos++ {
		o := d.Slot(uint32(pos))
		if o.Kind == keyspace.KindNone {
			continue
		}
		visited++
		if o.HasExpire() && d.ExpireAtSlot(uint32(pos)) <= c.Now {
			continue
		}
		if typ != nil && !resp.EqualFold(typ, o.Kind.String()) {
			continue
		}
		if pattern != nil && !glob.Match(pattern, []byte(o.Key()), false) {
			continue
		}
		keys = append(keys, o.Key())
	}
	next := pos<<keyspace.ScanShardBits | uint64(shard)
	if pos >= uint64(d.Slots()) {
		next = uint64(shard + 1)
		if shard+1 >= c.NumShards() {
			next = 0
		}
	}
	c.Array(2)
	c.Out = resp.AppendBulkString(c.Out, strconv.FormatUint(next, 10))
	c.Array(len(keys))
	for _, k := range keys {
		c.BulkString(k)
	}
}

// cmdTouch counts the keys that exist, as EXISTS, and records an access to
// each (EXISTS does not: Redis looks its keys up with LOOKUP_NOTOUCH).
func cmdTouch(c *keyspace.Ctx) {
	var n int64
	for _, key := range c.Args[1:] {
		if c.DBFor(key).Lookup(key, c.Now) != nil {
			n++
		}
	}
	c.Int(n)
}
