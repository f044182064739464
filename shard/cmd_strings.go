package shard

import (
	"math"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
)

// MaxStringLen is the largest string value (Redis' proto-max-bulk-len default).
const MaxStringLen = 512 << 20

const errStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

// getString looks key up for reading: (nil, true) when missing, (nil, false)
// after replying WRONGTYPE.
func (c *Ctx) getString(d *DB, key []byte) (*object, bool) {
	o := d.lookup(key, c.Now)
	if o == nil {
		d.misses.Add(1)
		return nil, true
	}
	d.hits.Add(1)
	if o.kind != KindString {
		c.wrongType()
		return nil, false
	}
	return o, true
}

func cmdGet(c *Ctx) {
	key := c.Args[1]
	o, ok := c.getString(c.db(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.null()
		return
	}
	c.bulk(o.str)
}

// setFlags are SET's options.
type setFlags uint8

const (
	setNX setFlags = 1 << iota
	setXX
	setGet
	setKeepTTL
	setExpire // an EX/PX/EXAT/PXAT was given
)

// parseExpireTime turns an EX/PX/EXAT/PXAT argument into unix milliseconds,
// replying with Redis' error when it is invalid.
func (c *Ctx) parseExpireTime(arg []byte, seconds, absolute bool) (int64, bool) {
	v, ok := parseInt(arg)
	if !ok {
		c.notInteger()
		return 0, false
	}
	if v <= 0 || (seconds && v > math.MaxInt64/1000) {
		c.errInvalidExpire()
		return 0, false
	}
	if seconds {
		v *= 1000
	}
	if !absolute {
		if v > math.MaxInt64-c.Now {
			c.errInvalidExpire()
			return 0, false
		}
		v += c.Now
	}
	return v, true
}

func (c *Ctx) errInvalidExpire() {
	c.Out = append(c.Out, "-ERR invalid expire time in '"...)
	c.Out = append(c.Out, c.Cmd.FullName...)
	c.Out = append(c.Out, "' command\r\n"...)
}

// parseSetOptions parses SET's (or, with getex, GETEX's) options as Redis'
// parseExtendedStringArgumentsOrReply: every option word first (a conflict or
// unknown word is a syntax error), then the expire value.
func (c *Ctx) parseSetOptions(args [][]byte, getex bool) (flags setFlags, at int64, persist bool, ok bool) {
	var expireArg []byte
	var seconds, absolute bool
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !getex && equalFold(a, "nx") && flags&setXX == 0:
			flags |= setNX
		case !getex && equalFold(a, "xx") && flags&setNX == 0:
			flags |= setXX
		case !getex && equalFold(a, "get"):
			flags |= setGet
		case !getex && equalFold(a, "keepttl") && flags&setExpire == 0:
			flags |= setKeepTTL
		case getex && equalFold(a, "persist") && flags&setExpire == 0:
			persist = true
		case (equalFold(a, "ex") || equalFold(a, "px") || equalFold(a, "exat") || equalFold(a, "pxat")) &&
			flags&(setKeepTTL|setExpire) == 0 && !persist && i+1 < len(args):
			flags |= setExpire
			seconds = a[0]|0x20 == 'e'
			absolute = len(a) == 4
			i++
			expireArg = args[i]
		default:
			c.syntaxErr()
			return 0, 0, false, false
		}
	}
	if expireArg != nil {
		if at, ok = c.parseExpireTime(expireArg, seconds, absolute); !ok {
			return 0, 0, false, false
		}
	}
	return flags, at, persist, true
}

func cmdSet(c *Ctx) {
	flags, at, _, ok := c.parseSetOptions(c.Args[3:], false)
	if !ok {
		return
	}
	c.set(c.Args[1], c.Args[2], flags, at, resp.OK, nil)
}

// set is SET's core, shared with SETNX, SETEX, PSETEX and GETSET. done is the
// reply after a write, abort the reply when NX/XX stops it (nil: a null bulk);
// with setGet the old value is the reply instead.
func (c *Ctx) set(key, val []byte, flags setFlags, at int64, done, abort []byte) {
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if flags&setGet != 0 {
		if o != nil && o.kind != KindString {
			c.wrongType()
			return
		}
		if o == nil {
			c.null()
		} else {
			c.bulk(o.str)
		}
	}
	if (flags&setNX != 0 && o != nil) || (flags&setXX != 0 && o == nil) {
		if flags&setGet == 0 {
			if abort != nil {
				c.raw(abort)
			} else {
				c.null()
			}
		}
		return
	}
	if o == nil {
		o = d.insert(key, KindString)
	} else if o.kind != KindString {
		d.dropValue(o)
	}
	d.setString(o, val)
	if flags&setExpire != 0 {
		if at <= c.Now { // an EXAT/PXAT in the past: the key is gone at once
			d.remove(o)
			d.expired.Add(1)
		} else {
			d.setExpire(o, at)
		}
	} else if flags&setKeepTTL == 0 {
		d.setExpire(o, 0)
	}
	if flags&setGet == 0 {
		c.raw(done)
	}
}

func cmdSetNX(c *Ctx) { c.set(c.Args[1], c.Args[2], setNX, 0, resp.One, resp.Zero) }

func cmdSetEX(c *Ctx)  { c.setex(true) }
func cmdPSetEX(c *Ctx) { c.setex(false) }

func (c *Ctx) setex(seconds bool) {
	at, ok := c.parseExpireTime(c.Args[2], seconds, false)
	if !ok {
		return
	}
	c.set(c.Args[1], c.Args[3], setExpire, at, resp.OK, nil)
}

func cmdGetSet(c *Ctx) {
	c.set(c.Args[1], c.Args[2], setGet, 0, nil, nil)
}

func cmdGetDel(c *Ctx) {
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.getString(d, key)
	if !ok {
		return
	}
	if o == nil {
		c.null()
		return
	}
	c.bulk(o.str)
	d.remove(o)
}

func cmdGetEx(c *Ctx) {
	key := c.Args[1]
	flags, at, persist, ok := c.parseSetOptions(c.Args[2:], true)
	if !ok {
		return
	}
	d := c.db(key)
	o, ok := c.getString(d, key)
	if !ok {
		return
	}
	if o == nil {
		c.null()
		return
	}
	c.bulk(o.str)
	switch {
	case flags&setExpire != 0 && at <= c.Now:
		d.remove(o)
		d.expired.Add(1)
	case flags&setExpire != 0:
		d.setExpire(o, at)
	case persist:
		d.setExpire(o, 0)
	}
}

func cmdMGet(c *Ctx) {
	keys := c.Args[1:]
	c.array(len(keys))
	for _, key := range keys {
		d := c.db(key)
		o := d.lookup(key, c.Now)
		if o == nil || o.kind != KindString {
			if o == nil {
				d.misses.Add(1)
			} else {
				d.hits.Add(1)
			}
			c.null()
			continue
		}
		d.hits.Add(1)
		c.bulk(o.str)
	}
}

func cmdMSet(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	c.msetAll()
	c.ok()
}

func (c *Ctx) msetAll() {
	for i := 1; i+1 < len(c.Args); i += 2 {
		key := c.Args[i]
		d := c.db(key)
		o := d.lookup(key, c.Now)
		if o == nil {
			o = d.insert(key, KindString)
		} else if o.kind != KindString {
			d.dropValue(o)
		}
		d.setString(o, c.Args[i+1])
		d.setExpire(o, 0)
	}
}

func cmdMSetNX(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	for i := 1; i < len(c.Args); i += 2 {
		if c.db(c.Args[i]).lookup(c.Args[i], c.Now) != nil {
			c.int(0)
			return
		}
	}
	c.msetAll()
	c.int(1)
}

func cmdIncr(c *Ctx) { c.incrBy(c.Args[1], 1) }
func cmdDecr(c *Ctx) { c.incrBy(c.Args[1], -1) }

func cmdIncrBy(c *Ctx) {
	n, ok := parseInt(c.Args[2])
	if !ok {
		c.notInteger()
		return
	}
	c.incrBy(c.Args[1], n)
}

func cmdDecrBy(c *Ctx) {
	n, ok := parseInt(c.Args[2])
	if !ok {
		c.notInteger()
		return
	}
	if n == math.MinInt64 {
		c.err("ERR decrement would overflow")
		return
	}
	c.incrBy(c.Args[1], -n)
}

func (c *Ctx) incrBy(key []byte, by int64) {
	d := c.db(key)
	o := d.lookup(key, c.Now)
	var cur int64
	if o != nil {
		if o.kind != KindString {
			c.wrongType()
			return
		}
		var ok bool
		if cur, ok = parseInt(o.str); !ok {
			c.notInteger()
			return
		}
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		c.Out = append(c.Out, resp.ErrOverflow...)
		return
	}
	cur += by
	if o == nil {
		o = d.insert(key, KindString)
	}
	old := cap(o.str)
	o.str = strconv.AppendInt(o.str[:0], cur, 10)
	d.accountResize(o, old)
	c.int(cur)
}

func cmdIncrByFloat(c *Ctx) {
	key := c.Args[1]
	by, ok := parseFloat(c.Args[2])
	if !ok {
		c.Out = append(c.Out, resp.ErrNotFloat...)
		return
	}
	d := c.db(key)
	o := d.lookup(key, c.Now)
	var cur float64
	if o != nil {
		if o.kind != KindString {
			c.wrongType()
			return
		}
		if cur, ok = parseFloat(o.str); !ok {
			c.Out = append(c.Out, resp.ErrNotFloat...)
			return
		}
	}
	cur += by
	if math.IsNaN(cur) || math.IsInf(cur, 0) {
		c.err("ERR increment would produce NaN or Infinity")
		return
	}
	if o == nil {
		o = d.insert(key, KindString)
	}
	old := cap(o.str)
	// Redis prints a long double with %.17Lf and trims zeros; with a float64
	// the shortest round-tripping decimal is what matches it for real inputs.
	o.str = strconv.AppendFloat(o.str[:0], cur, 'f', -1, 64)
	d.accountResize(o, old)
	c.bulk(o.str)
}

func cmdAppend(c *Ctx) {
	key, val := c.Args[1], c.Args[2]
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o == nil {
		o = d.insert(key, KindString)
		d.setString(o, val)
		c.int(int64(len(val)))
		return
	}
	if o.kind != KindString {
		c.wrongType()
		return
	}
	if len(o.str)+len(val) > MaxStringLen {
		c.err(errStringTooLong)
		return
	}
	old := cap(o.str)
	o.str = append(o.str, val...)
	d.accountResize(o, old)
	c.int(int64(len(o.str)))
}

func cmdStrlen(c *Ctx) {
	key := c.Args[1]
	o, ok := c.getString(c.db(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	c.int(int64(len(o.str)))
}

func cmdGetRange(c *Ctx) {
	start, ok1 := parseInt(c.Args[2])
	end, ok2 := parseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.notInteger()
		return
	}
	key := c.Args[1]
	o, ok := c.getString(c.db(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.bulk(nil)
		return
	}
	n := int64(len(o.str))
	if start < 0 && end < 0 && start > end {
		c.bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.bulk(nil)
		return
	}
	c.bulk(o.str[start : end+1])
}

func cmdSetRange(c *Ctx) {
	key, val := c.Args[1], c.Args[3]
	offset, ok := parseInt(c.Args[2])
	if !ok {
		c.notInteger()
		return
	}
	if offset < 0 {
		c.err("ERR offset is out of range")
		return
	}
	d := c.db(key)
	o := d.lookup(key, c.Now)
	if o != nil && o.kind != KindString {
		c.wrongType()
		return
	}
	if len(val) == 0 {
		if o == nil {
			c.int(0)
		} else {
			c.int(int64(len(o.str)))
		}
		return
	}
	if offset+int64(len(val)) > MaxStringLen {
		c.err(errStringTooLong)
		return
	}
	if o == nil {
		o = d.insert(key, KindString)
	}
	old := cap(o.str)
	need := int(offset) + len(val)
	if need > len(o.str) {
		o.str = append(o.str, make([]byte, need-len(o.str))...)
	}
	copy(o.str[offset:], val)
	d.accountResize(o, old)
	c.int(int64(len(o.str)))
}
