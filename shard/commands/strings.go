package commands

import (
	"math"
	"math/big"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

const errStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

// getString looks key up for reading: (nil, true) when missing, (nil, false)
// after replying WRONGTYPE.
func getString(c *keyspace.Ctx, d *keyspace.DB, key []byte) (*keyspace.Object, bool) {
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.Miss()
		c.Notify(keyspace.NotifyKeyMiss, "keymiss", key)
		return nil, true
	}
	d.Hit()
	if o.Kind != keyspace.KindString {
		c.WrongType()
		return nil, false
	}
	return o, true
}

func cmdGet(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := getString(c, c.DBFor(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(o.Value(&c.Scratch))
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
func parseExpireTime(c *keyspace.Ctx, arg []byte, opt expireOpt) (int64, bool) {
	seconds, absolute := opt.seconds(), opt.absolute()
	v, ok := resp.ParseInt(arg)
	if !ok {
		c.NotInteger()
		return 0, false
	}
	if v <= 0 || (seconds && v > math.MaxInt64/1000) {
		errInvalidExpire(c)
		return 0, false
	}
	if seconds {
		v *= 1000
	}
	if !absolute {
		if v > math.MaxInt64-c.Now {
			errInvalidExpire(c)
			return 0, false
		}
		v += c.Now
	}
	return v, true
}

func errInvalidExpire(c *keyspace.Ctx) {
	c.Out = append(c.Out, "-ERR invalid expire time in '"...)
	c.Out = append(c.Out, c.Cmd.FullName...)
	c.Out = append(c.Out, "' command\r\n"...)
}

// expireOpt is the EX/PX/EXAT/PXAT option given to SET or GETEX.
type expireOpt uint8

const (
	optNone expireOpt = iota
	optEX
	optPX
	optEXAT
	optPXAT
)

func (o expireOpt) seconds() bool  { return o == optEX || o == optEXAT }
func (o expireOpt) absolute() bool { return o == optEXAT || o == optPXAT }

// expireOption returns which of EX/PX/EXAT/PXAT a is, or optNone.
func expireOption(a []byte) expireOpt {
	switch {
	case resp.EqualFold(a, "ex"):
		return optEX
	case resp.EqualFold(a, "px"):
		return optPX
	case resp.EqualFold(a, "exat"):
		return optEXAT
	case resp.EqualFold(a, "pxat"):
		return optPXAT
	}
	return optNone
}

// parseSetOptions parses SET's (or, with getex, GETEX's) option words as
// Redis' parseExtendedStringArgumentsOrReply: a conflict or an unknown word is
// a syntax error. The same expire option may repeat (the last value counts);
// two different ones conflict. The expire value is not checked here: the
// caller passes expireArg to parseExpireTime when Redis does (SET at once,
// GETEX only once the key is found).
func parseSetOptions(c *keyspace.Ctx, args [][]byte, getex bool) (flags setFlags, opt expireOpt, expireArg []byte, persist bool, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch e := expireOption(a); {
		case !getex && resp.EqualFold(a, "nx") && flags&setXX == 0:
			flags |= setNX
		case !getex && resp.EqualFold(a, "xx") && flags&setNX == 0:
			flags |= setXX
		case !getex && resp.EqualFold(a, "get"):
			flags |= setGet
		case !getex && resp.EqualFold(a, "keepttl") && flags&setExpire == 0:
			flags |= setKeepTTL
		case getex && resp.EqualFold(a, "persist") && flags&setExpire == 0:
			persist = true
		case e != optNone && (opt == optNone || opt == e) &&
			flags&setKeepTTL == 0 && !persist && i+1 < len(args):
			flags |= setExpire
			opt = e
			i++
			expireArg = args[i]
		default:
			c.SyntaxErr()
			return 0, optNone, nil, false, false
		}
	}
	return flags, opt, expireArg, persist, true
}

func cmdSet(c *keyspace.Ctx) {
	flags, opt, expireArg, _, ok := parseSetOptions(c, c.Args[3:], false)
	if !ok {
		return
	}
	var at int64
	if flags&setExpire != 0 {
		if at, ok = parseExpireTime(c, expireArg, opt); !ok {
			return
		}
	}
	set(c, c.Args[1], c.Args[2], flags, at, resp.OK, nil)
}

// set is SET's core, shared with SETNX, SETEX, PSETEX and GETSET. done is the
// reply after a write, abort the reply when NX/XX stops it (nil: a null bulk);
// with setGet the old value is the reply instead.
func set(c *keyspace.Ctx, key, val []byte, flags setFlags, at int64, done, abort []byte) {
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if flags&setGet != 0 {
		if o != nil && o.Kind != keyspace.KindString {
			c.WrongType()
			return
		}
		if o == nil {
			c.Null()
		} else {
			c.Bulk(o.Value(&c.Scratch))
		}
	}
	if (flags&setNX != 0 && o != nil) || (flags&setXX != 0 && o == nil) {
		if flags&setGet == 0 {
			if abort != nil {
				c.Raw(abort)
			} else {
				c.Null()
			}
		}
		return
	}
	if o == nil {
		o = d.InsertString(key, val) // the key and its value in one allocation
	} else {
		if o.Kind != keyspace.KindString {
			d.DropValue(o)
		}
		d.SetString(o, val)
	}
	c.Notify(keyspace.NotifyString, "set", key)
	if flags&setExpire != 0 {
		c.Notify(keyspace.NotifyGeneric, "expire", key) // as Redis, before it is checked
		if at <= c.Now {                                // an EXAT/PXAT in the past: the key is gone at once
			d.Remove(o)
			d.CountExpired()
			// Redis keeps the key until expiry finds it, and then
			// publishes expired: so does this, at once.
			c.Notify(keyspace.NotifyExpired, "expired", key)
			c.LogAs(cmdDEL, key)
		} else {
			d.SetExpire(o, at)
			// As Redis' setGenericCommand: SET key value PXAT <unix ms>, the
			// options that already took effect (NX, XX, GET) dropped.
			c.LogAs(cmdSET, key, val, argPXAT, strconv.AppendInt(c.Scratch[:0], at, 10))
		}
	} else if flags&setKeepTTL == 0 {
		d.SetExpire(o, 0)
	}
	if flags&setGet == 0 {
		c.Raw(done)
	}
}

func cmdSetNX(c *keyspace.Ctx) { set(c, c.Args[1], c.Args[2], setNX, 0, resp.One, resp.Zero) }

func cmdSetEX(c *keyspace.Ctx)  { setex(c, true) }
func cmdPSetEX(c *keyspace.Ctx) { setex(c, false) }

func setex(c *keyspace.Ctx, seconds bool) {
	opt := optPX
	if seconds {
		opt = optEX
	}
	at, ok := parseExpireTime(c, c.Args[2], opt)
	if !ok {
		return
	}
	set(c, c.Args[1], c.Args[3], setExpire, at, resp.OK, nil)
}

func cmdGetSet(c *keyspace.Ctx) {
	set(c, c.Args[1], c.Args[2], setGet, 0, nil, nil)
	c.LogAs(cmdSET, c.Args[1], c.Args[2]) // as Redis' getsetCommand
}

func cmdGetDel(c *keyspace.Ctx) {
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := getString(c, d, key)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(o.Value(&c.Scratch))
	d.Remove(o)
	c.Notify(keyspace.NotifyGeneric, "del", key)
	c.LogAs(cmdDEL, key) // as Redis' getdelCommand
}

func cmdGetEx(c *keyspace.Ctx) {
	key := c.Args[1]
	flags, opt, expireArg, persist, ok := parseSetOptions(c, c.Args[2:], true)
	if !ok {
		return
	}
	d := c.DBFor(key)
	o, ok := getString(c, d, key)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	// As Redis, the expire value is checked only once the key is found.
	var at int64
	if flags&setExpire != 0 {
		if at, ok = parseExpireTime(c, expireArg, opt); !ok {
			return
		}
	}
	c.Bulk(o.Value(&c.Scratch))
	// Logged as Redis' getexCommand propagates it: DEL, PEXPIREAT with
	// the absolute time, or PERSIST (only when a time to live was removed:
	// otherwise nothing changed and nothing is logged).
	switch {
	case flags&setExpire != 0 && at <= c.Now:
		d.Remove(o)
		d.CountExpired()
		c.Notify(keyspace.NotifyGeneric, "del", key)
		c.LogAs(cmdDEL, key)
	case flags&setExpire != 0:
		d.SetExpire(o, at)
		c.Notify(keyspace.NotifyGeneric, "expire", key)
		c.LogAs(cmdPEXPIREAT, key, strconv.AppendInt(c.Scratch[:0], at, 10))
	case persist:
		hadTTL := o.HasExpire()
		d.SetExpire(o, 0)
		if hadTTL {
			c.Notify(keyspace.NotifyGeneric, "persist", key)
		}
		c.LogAs(cmdPERSIST, key)
	}
}

func cmdMGet(c *keyspace.Ctx) {
	keys := c.Args[1:]
	c.Array(len(keys))
	for _, key := range keys {
		d := c.DBFor(key)
		o := d.Lookup(key, c.Now)
		if o == nil || o.Kind != keyspace.KindString {
			if o == nil {
				d.Miss()
				c.Notify(keyspace.NotifyKeyMiss, "keymiss", key)
			} else {
				d.Hit()
			}
			c.Null()
			continue
		}
		d.Hit()
		c.Bulk(o.Value(&c.Scratch))
	}
}

func cmdMSet(c *keyspace.Ctx) {
	if len(c.Args)%2 == 0 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	msetAll(c)
	c.OK()
}

func msetAll(c *keyspace.Ctx) {
	for i := 1; i+1 < len(c.Args); i += 2 {
		key := c.Args[i]
		d := c.DBFor(key)
		o := d.Lookup(key, c.Now)
		if o == nil {
			o = d.InsertString(key, c.Args[i+1])
		} else {
			if o.Kind != keyspace.KindString {
				d.DropValue(o)
			}
			d.SetString(o, c.Args[i+1])
		}
		d.SetExpire(o, 0)
		c.Notify(keyspace.NotifyString, "set", key)
	}
}

func cmdMSetNX(c *keyspace.Ctx) {
	if len(c.Args)%2 == 0 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	for i := 1; i < len(c.Args); i += 2 {
		if c.DBFor(c.Args[i]).Lookup(c.Args[i], c.Now) != nil {
			c.Int(0)
			return
		}
	}
	msetAll(c)
	c.Int(1)
}

func cmdIncr(c *keyspace.Ctx) { incrBy(c, c.Args[1], 1) }
func cmdDecr(c *keyspace.Ctx) { incrBy(c, c.Args[1], -1) }

func cmdIncrBy(c *keyspace.Ctx) {
	n, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.NotInteger()
		return
	}
	incrBy(c, c.Args[1], n)
}

func cmdDecrBy(c *keyspace.Ctx) {
	n, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.NotInteger()
		return
	}
	if n == math.MinInt64 {
		c.Err("ERR decrement would overflow")
		return
	}
	incrBy(c, c.Args[1], -n)
}

func incrBy(c *keyspace.Ctx, key []byte, by int64) {
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	var cur int64
	if o != nil {
		if o.Kind != keyspace.KindString {
			c.WrongType()
			return
		}
		if o.Enc == keyspace.EncInt {
			cur = o.Int()
		} else {
			var ok bool
			if cur, ok = resp.ParseInt(o.Bytes()); !ok {
				c.NotInteger()
				return
			}
		}
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		c.Out = append(c.Out, resp.ErrOverflow...)
		return
	}
	cur += by
	if o == nil {
		o = d.Insert(key, keyspace.KindString)
	}
	d.SetInt(o, cur)
	c.Notify(keyspace.NotifyString, "incrby", key)
	c.Int(cur)
}

// cmdIncrByFloat computes as Redis does on x86-64: in C long double (80-bit
// extended precision, emulated with a 64-bit-mantissa big.Float), printing the
// sum with %.17Lf and trimming trailing zeros. A float64 would print
// 0.1+0.2 as 0.30000000000000004 where Redis prints 0.3, and overflow where a
// long double does not. Not a hot path: it allocates.
func cmdIncrByFloat(c *keyspace.Ctx) {
	key := c.Args[1]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	cur := new(big.Float).SetPrec(longDoublePrec)
	if o != nil {
		if o.Kind != keyspace.KindString {
			c.WrongType()
			return
		}
		// Redis parses the stored value first, then the increment.
		if !parseLongDouble(cur, o.Value(&c.Scratch)) {
			c.Out = append(c.Out, resp.ErrNotFloat...)
			return
		}
	}
	var by big.Float
	if !parseLongDouble(by.SetPrec(longDoublePrec), c.Args[2]) {
		c.Out = append(c.Out, resp.ErrNotFloat...)
		return
	}
	if cur.IsInf() || by.IsInf() { // inf, or inf-inf = NaN
		c.Err("ERR increment would produce NaN or Infinity")
		return
	}
	cur.Add(cur, &by)
	if longDoubleOverflows(cur) {
		c.Err("ERR increment would produce NaN or Infinity")
		return
	}
	if o == nil {
		o = d.Insert(key, keyspace.KindString)
	}
	if o.OffHeap() {
		d.FreeStr(o) // a number needs no mapping
	}
	d.Materialize(o)
	before := o.ValueMemory()
	o.SetBytes(appendLongDoubleHuman(o.Bytes()[:0], cur))
	d.AccountResize(o, before)
	d.Touched(o.Key()) // signals WATCH and counts the change, as Redis' signalModifiedKey
	c.Notify(keyspace.NotifyString, "incrbyfloat", key)
	c.Bulk(o.Value(&c.Scratch))
	// The result, not the increment: replaying the sum could round
	// differently (Redis' incrbyfloatCommand).
	c.LogAs(cmdSET, key, o.Bytes(), argKEEPTTL)
}

func cmdAppend(c *keyspace.Ctx) {
	key, val := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		o = d.Insert(key, keyspace.KindString)
		d.SetString(o, val)
		c.Notify(keyspace.NotifyString, "append", key)
		c.Int(int64(len(val)))
		return
	}
	if o.Kind != keyspace.KindString {
		c.WrongType()
		return
	}
	if len(o.Value(&c.Scratch))+len(val) > keyspace.MaxStringLen {
		c.Err(errStringTooLong)
		return
	}
	d.Materialize(o)
	n := len(o.Bytes())
	d.GrowString(o, n+len(val))
	d.WillWrite(o, n, len(o.Bytes()))
	keyspace.CopyLarge(o.Bytes()[n:], val)
	d.Edited(o)
	c.Notify(keyspace.NotifyString, "append", key)
	c.Int(int64(len(o.Bytes())))
}

func cmdStrlen(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := getString(c, c.DBFor(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(len(o.Value(&c.Scratch))))
}

func cmdGetRange(c *keyspace.Ctx) {
	start, ok1 := resp.ParseInt(c.Args[2])
	end, ok2 := resp.ParseInt(c.Args[3])
	if !ok1 || !ok2 {
		c.NotInteger()
		return
	}
	key := c.Args[1]
	o, ok := getString(c, c.DBFor(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.Bulk(nil)
		return
	}
	v := o.Value(&c.Scratch)
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		c.Bulk(nil)
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
		c.Bulk(nil)
		return
	}
	c.Bulk(v[start : end+1])
}

func cmdSetRange(c *keyspace.Ctx) {
	key, val := c.Args[1], c.Args[3]
	offset, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.NotInteger()
		return
	}
	if offset < 0 {
		c.Err("ERR offset is out of range")
		return
	}
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o != nil && o.Kind != keyspace.KindString {
		c.WrongType()
		return
	}
	if len(val) == 0 {
		if o == nil {
			c.Int(0)
		} else {
			c.Int(int64(len(o.Value(&c.Scratch))))
		}
		return
	}
	if offset > keyspace.MaxStringLen-int64(len(val)) { // no overflow: offset+len(val)
		c.Err(errStringTooLong)
		return
	}
	need := int(offset) + len(val)
	if o == nil {
		// As Redis (sdsnewlen): a new key gets exactly what it needs.
		o = d.Insert(key, keyspace.KindString)
		d.NewStringBuf(o, need, need, false) // untouched pages cost nothing
		d.AccountResize(o, 0)
	}
	d.Materialize(o)
	if need > len(o.Bytes()) {
		d.GrowString(o, need)
	}
	d.WillWrite(o, int(offset), need)
	keyspace.CopyLarge(o.Bytes()[offset:], val)
	d.Edited(o)
	c.Notify(keyspace.NotifyString, "setrange", key)
	c.Int(int64(len(o.Bytes())))
}
