package commands

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// addHashCommands registers the hash commands' handlers.
func addHashCommands(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("hset", cmdHSet, keyspace.RouteKeys)
	add("hmset", cmdHMSet, keyspace.RouteKeys)
	add("hsetnx", cmdHSetNX, keyspace.RouteKeys)
	add("hget", cmdHGet, keyspace.RouteKeys)
	add("hmget", cmdHMGet, keyspace.RouteKeys)
	add("hdel", cmdHDel, keyspace.RouteKeys)
	add("hlen", cmdHLen, keyspace.RouteKeys)
	add("hstrlen", cmdHStrlen, keyspace.RouteKeys)
	add("hexists", cmdHExists, keyspace.RouteKeys)
	add("hkeys", cmdHKeys, keyspace.RouteKeys)
	add("hvals", cmdHVals, keyspace.RouteKeys)
	add("hgetall", cmdHGetAll, keyspace.RouteKeys)
	add("hincrby", cmdHIncrBy, keyspace.RouteKeys)
	add("hincrbyfloat", cmdHIncrByFloat, keyspace.RouteKeys)
	add("hrandfield", cmdHRandField, keyspace.RouteKeys)
	add("hscan", cmdHScan, keyspace.RouteKeys)
}

func cmdHSet(c *keyspace.Ctx)  { hset(c, false) }
func cmdHMSet(c *keyspace.Ctx) { hset(c, true) }

func hset(c *keyspace.Ctx, hmset bool) {
	if len(c.Args)%2 == 1 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	key, pairs := c.Args[1], c.Args[2:]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindHash)
	if !ok {
		return
	}
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, keyspace.KindHash)
		keyspace.NewHashValue(o, pairs, lim)
	} else {
		before = o.ValueMemory()
		keyspace.HashTryConversion(o, pairs, lim)
	}
	var created int64
	// Room for every new field at once once the hash is a table (it may
	// become one part way through: a listpack converts after
	// hash-max-listpack-entries fields).
	reserved := o.Enc == keyspace.EncHashtable
	if reserved {
		keyspace.HashReserve(o, len(pairs)/2)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if keyspace.HashSet(o, pairs[i], pairs[i+1], lim) {
			created++
		}
		if !reserved && o.Enc == keyspace.EncHashtable {
			keyspace.HashReserve(o, (len(pairs)-i-2)/2)
			reserved = true
		}
	}
	d.ValueChanged(o, before)
	if hmset {
		c.OK()
	} else {
		c.Int(created)
	}
	c.Notify(keyspace.NotifyHash, "hset", key) // after the reply, as Redis' hsetCommand
}

func cmdHSetNX(c *keyspace.Ctx) {
	key, field := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindHash)
	if !ok {
		return
	}
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, keyspace.KindHash)
		keyspace.NewHashValue(o, c.Args[2:4], lim)
	} else {
		if _, exists := keyspace.HashGet(o, field); exists {
			c.Int(0)
			return
		}
		before = o.ValueMemory()
		keyspace.HashTryConversion(o, c.Args[2:4], lim)
	}
	keyspace.HashSet(o, field, c.Args[3], lim)
	d.ValueChanged(o, before)
	c.Int(1)
	c.Notify(keyspace.NotifyHash, "hset", key)
}

func cmdHGet(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	if v, found := keyspace.HashGet(o, c.Args[2]); found {
		c.Bulk(v)
	} else {
		c.Null()
	}
}

func cmdHMGet(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	fields := c.Args[2:]
	c.Array(len(fields))
	for _, f := range fields {
		if o != nil {
			if v, found := keyspace.HashGet(o, f); found {
				c.Bulk(v)
				continue
			}
		}
		c.Null()
	}
}

func cmdHDel(c *keyspace.Ctx) {
	c.RemoveMembers(keyspace.KindHash, keyspace.HashDelete, keyspace.HashLen, keyspace.NotifyHash, "hdel")
}

func cmdHLen(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(keyspace.HashLen(o)))
}

func cmdHStrlen(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	var n int
	if o != nil {
		v, _ := keyspace.HashGet(o, c.Args[2])
		n = len(v)
	}
	c.Int(int64(n))
}

func cmdHExists(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	if o != nil {
		if _, found := keyspace.HashGet(o, c.Args[2]); found {
			c.Int(1)
			return
		}
	}
	c.Int(0)
}

func cmdHKeys(c *keyspace.Ctx)   { hgetall(c, true, false) }
func cmdHVals(c *keyspace.Ctx)   { hgetall(c, false, true) }
func cmdHGetAll(c *keyspace.Ctx) { hgetall(c, true, true) }

// hgetall serves HKEYS, HVALS and HGETALL (Redis' genericHgetallCommand):
// HGETALL is a map in RESP3, the others arrays.
func hgetall(c *keyspace.Ctx, fields, vals bool) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	n := 0
	if o != nil {
		n = keyspace.HashLen(o)
	}
	if fields && vals {
		c.Out = resp.AppendMapHeader(c.Out, n, c.RESP3)
	} else {
		c.Array(n)
	}
	if o == nil {
		return
	}
	it := keyspace.NewHashIter(o)
	for f, v, more := it.Next(); more; f, v, more = it.Next() {
		if fields {
			c.Bulk(f)
		}
		if vals {
			c.Bulk(v)
		}
	}
}

func cmdHIncrBy(c *keyspace.Ctx) {
	incr, ok := resp.ParseInt(c.Args[3])
	if !ok {
		c.NotInteger()
		return
	}
	key, field := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindHash)
	if !ok {
		return
	}
	var cur int64
	if o != nil {
		if v, found := keyspace.HashGet(o, field); found {
			if cur, ok = resp.ParseInt(v); !ok {
				c.Err("ERR hash value is not an integer")
				return
			}
		}
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		c.Out = append(c.Out, resp.ErrOverflow...)
		return
	}
	cur += incr
	val := strconv.AppendInt(c.Scratch[:0], cur, 10)
	hashStore(c, d, o, key, field, val)
	c.Int(cur)
	c.Notify(keyspace.NotifyHash, "hincrby", key)
}

// hashStore sets field to val in the hash o at key (creating it when o is
// nil), for HINCRBY and HINCRBYFLOAT.
func hashStore(c *keyspace.Ctx, d *keyspace.DB, o *keyspace.Object, key, field, val []byte) {
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, keyspace.KindHash)
		keyspace.NewHashValue(o, [][]byte{field, val}, lim)
	} else {
		before = o.ValueMemory()
	}
	keyspace.HashSet(o, field, val, lim)
	d.ValueChanged(o, before)
}

// cmdHIncrByFloat computes in long double precision and formats the result
// as Redis does (see cmdIncrByFloat). Not a hot path: it allocates.
func cmdHIncrByFloat(c *keyspace.Ctx) {
	var incr big.Float
	if !parseLongDouble(incr.SetPrec(longDoublePrec), c.Args[3]) {
		c.Out = append(c.Out, resp.ErrNotFloat...)
		return
	}
	if incr.IsInf() {
		c.Err("ERR value is NaN or Infinity")
		return
	}
	key, field := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindHash)
	if !ok {
		return
	}
	cur := new(big.Float).SetPrec(longDoublePrec)
	if o != nil {
		if v, found := keyspace.HashGet(o, field); found {
			if !parseLongDouble(cur, v) {
				c.Err("ERR hash value is not a float")
				return
			}
		}
	}
	if cur.IsInf() {
		c.Err("ERR increment would produce NaN or Infinity")
		return
	}
	cur.Add(cur, &incr)
	if longDoubleOverflows(cur) {
		c.Err("ERR increment would produce NaN or Infinity")
		return
	}
	val := appendLongDoubleHuman(nil, cur)
	hashStore(c, d, o, key, field, val)
	c.Bulk(val)
	c.Notify(keyspace.NotifyHash, "hincrbyfloat", key)
	c.LogAs(cmdHSET, key, field, val) // the result, as Redis' hincrbyfloatCommand
}

var cmdHSET = []byte("HSET")

func cmdHRandField(c *keyspace.Ctx) {
	key := c.Args[1]
	if len(c.Args) >= 3 {
		l, ok := c.ParseRandomCount(c.Args[2])
		if !ok {
			return
		}
		if len(c.Args) > 4 || (len(c.Args) == 4 && !resp.EqualFold(c.Args[3], "withvalues")) {
			c.SyntaxErr()
			return
		}
		withValues := len(c.Args) == 4
		if withValues && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
			c.Err("ERR value is out of range")
			return
		}
		hrandfieldCount(c, key, l, withValues)
		return
	}
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	i := rand.IntN(keyspace.HashLen(o))
	if o.Enc == keyspace.EncListpack {
		f, _ := listpack.Next(o.Bytes(), listpack.Skip(o.Bytes(), listpack.First, 2*i))
		c.Bulk(f)
		return
	}
	f, _ := keyspace.HashPair(o, nil, i)
	c.Bulk(f)
}

// hrandfieldCount is Redis' hrandfieldWithCountCommand: a negative count
// allows repeats, a positive one returns distinct fields (the whole hash when
// it has no more than count). WITHVALUES is a flat array in RESP2 and an
// array of [field, value] pairs in RESP3.
func hrandfieldCount(c *keyspace.Ctx, key []byte, l int64, withValues bool) {
	o, count, unique := c.RandomCountTarget(key, keyspace.KindHash, l)
	if o == nil {
		return
	}
	size := keyspace.HashLen(o)
	var offs []int
	if o.Enc == keyspace.EncListpack {
		offs = keyspace.HashPairOffsets(o.Bytes())
	}
	emit := func(i int) {
		f, v := keyspace.HashPair(o, offs, i)
		if withValues && c.RESP3 {
			c.Array(2)
		}
		c.Bulk(f)
		if withValues {
			c.Bulk(v)
		}
	}
	header := func(n uint64) {
		if withValues && !c.RESP3 {
			n *= 2
		}
		c.Out = resp.AppendArrayHeader(c.Out, int(n))
	}
	if !unique || count == 1 {
		start := len(c.Out)
		header(count)
		for ; count > 0; count-- {
			emit(rand.IntN(size))
			if c.RandomReplyTooLarge(start) {
				return
			}
		}
		return
	}
	if count >= uint64(size) {
		header(uint64(size))
		for i := range size {
			emit(i)
		}
		return
	}
	header(count)
	keyspace.SampleDistinct(size, int(count), emit)
}

func cmdHScan(c *keyspace.Ctx) {
	o, cursor, pattern, count, ok := c.CollScanStart(keyspace.KindHash)
	if !ok {
		return
	}
	if o.Enc == keyspace.EncHashtable {
		t := o.Coll().(*values.HTable)
		hi, lo, next := keyspace.ScanPositions(t.Len(), cursor, count)
		c.Out = resp.AppendBulkString(c.Out, strconv.FormatUint(next, 10))
		start, n := len(c.Out), 0
		for i := hi; i >= lo; i-- {
			f := t.Key(i)
			if pattern != nil && !glob.Match(pattern, f, false) {
				continue
			}
			c.Bulk(f)
			c.Bulk(t.Value(i))
			n += 2
		}
		c.SpliceHeader(start, '*', n)
		return
	}
	// A listpack is returned whole, with cursor 0, as Redis does.
	c.Out = resp.AppendBulkString(c.Out, "0")
	start, n := len(c.Out), 0
	it := keyspace.NewHashIter(o)
	for f, v, more := it.Next(); more; f, v, more = it.Next() {
		if pattern != nil && !glob.Match(pattern, f, false) {
			continue
		}
		c.Bulk(f)
		c.Bulk(v)
		n += 2
	}
	c.SpliceHeader(start, '*', n)
}
