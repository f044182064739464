package keyspace

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// addHashCommands registers the hash commands' handlers.
func addHashCommands(add func(name string, h Handler, r RouteKind)) {
	add("hset", cmdHSet, RouteKeys)
	add("hmset", cmdHMSet, RouteKeys)
	add("hsetnx", cmdHSetNX, RouteKeys)
	add("hget", cmdHGet, RouteKeys)
	add("hmget", cmdHMGet, RouteKeys)
	add("hdel", cmdHDel, RouteKeys)
	add("hlen", cmdHLen, RouteKeys)
	add("hstrlen", cmdHStrlen, RouteKeys)
	add("hexists", cmdHExists, RouteKeys)
	add("hkeys", cmdHKeys, RouteKeys)
	add("hvals", cmdHVals, RouteKeys)
	add("hgetall", cmdHGetAll, RouteKeys)
	add("hincrby", cmdHIncrBy, RouteKeys)
	add("hincrbyfloat", cmdHIncrByFloat, RouteKeys)
	add("hrandfield", cmdHRandField, RouteKeys)
	add("hscan", cmdHScan, RouteKeys)
}

func cmdHSet(c *Ctx)  { c.hset(false) }
func cmdHMSet(c *Ctx) { c.hset(true) }

func (c *Ctx) hset(hmset bool) {
	if len(c.Args)%2 == 1 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	key, pairs := c.Args[1], c.Args[2:]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, KindHash)
	if !ok {
		return
	}
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, KindHash)
		NewHashValue(o, pairs, lim)
	} else {
		before = o.ValueMemory()
		HashTryConversion(o, pairs, lim)
	}
	var created int64
	for i := 0; i+1 < len(pairs); i += 2 {
		if HashSet(o, pairs[i], pairs[i+1], lim) {
			created++
		}
	}
	d.ValueChanged(o, before)
	if hmset {
		c.OK()
	} else {
		c.Int(created)
	}
}

func cmdHSetNX(c *Ctx) {
	key, field := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, KindHash)
	if !ok {
		return
	}
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, KindHash)
		NewHashValue(o, c.Args[2:4], lim)
	} else {
		if _, exists := HashGet(o, field); exists {
			c.Int(0)
			return
		}
		before = o.ValueMemory()
		HashTryConversion(o, c.Args[2:4], lim)
	}
	HashSet(o, field, c.Args[3], lim)
	d.ValueChanged(o, before)
	c.Int(1)
}

func cmdHGet(c *Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	if v, found := HashGet(o, c.Args[2]); found {
		c.Bulk(v)
	} else {
		c.Null()
	}
}

func cmdHMGet(c *Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	fields := c.Args[2:]
	c.Array(len(fields))
	for _, f := range fields {
		if o != nil {
			if v, found := HashGet(o, f); found {
				c.Bulk(v)
				continue
			}
		}
		c.Null()
	}
}

func cmdHDel(c *Ctx) { c.RemoveMembers(KindHash, HashDelete, HashLen) }

func cmdHLen(c *Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(HashLen(o)))
}

func cmdHStrlen(c *Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	var n int
	if o != nil {
		v, _ := HashGet(o, c.Args[2])
		n = len(v)
	}
	c.Int(int64(n))
}

func cmdHExists(c *Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	if o != nil {
		if _, found := HashGet(o, c.Args[2]); found {
			c.Int(1)
			return
		}
	}
	c.Int(0)
}

func cmdHKeys(c *Ctx)   { c.hgetall(true, false) }
func cmdHVals(c *Ctx)   { c.hgetall(false, true) }
func cmdHGetAll(c *Ctx) { c.hgetall(true, true) }

// hgetall serves HKEYS, HVALS and HGETALL (Redis' genericHgetallCommand):
// HGETALL is a map in RESP3, the others arrays.
func (c *Ctx) hgetall(fields, vals bool) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	n := 0
	if o != nil {
		n = HashLen(o)
	}
	if fields && vals {
		c.Out = resp.AppendMapHeader(c.Out, n, c.RESP3)
	} else {
		c.Array(n)
	}
	if o == nil {
		return
	}
	it := NewHashIter(o)
	for f, v, more := it.Next(); more; f, v, more = it.Next() {
		if fields {
			c.Bulk(f)
		}
		if vals {
			c.Bulk(v)
		}
	}
}

func cmdHIncrBy(c *Ctx) {
	incr, ok := resp.ParseInt(c.Args[3])
	if !ok {
		c.NotInteger()
		return
	}
	key, field := c.Args[1], c.Args[2]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, KindHash)
	if !ok {
		return
	}
	var cur int64
	if o != nil {
		if v, found := HashGet(o, field); found {
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
	c.hashStore(d, o, key, field, val)
	c.Int(cur)
}

// hashStore sets field to val in the hash o at key (creating it when o is
// nil), for HINCRBY and HINCRBYFLOAT.
func (c *Ctx) hashStore(d *DB, o *Object, key, field, val []byte) {
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, KindHash)
		NewHashValue(o, [][]byte{field, val}, lim)
	} else {
		before = o.ValueMemory()
	}
	HashSet(o, field, val, lim)
	d.ValueChanged(o, before)
}

// cmdHIncrByFloat computes in long double precision and formats the result
// as Redis does (see cmdIncrByFloat). Not a hot path: it allocates.
func cmdHIncrByFloat(c *Ctx) {
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
	o, ok := c.WriteKind(d, key, KindHash)
	if !ok {
		return
	}
	cur := new(big.Float).SetPrec(longDoublePrec)
	if o != nil {
		if v, found := HashGet(o, field); found {
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
	c.hashStore(d, o, key, field, val)
	c.Bulk(val)
	c.LogAs(cmdHSET, key, field, val) // the result, as Redis' hincrbyfloatCommand
}

var cmdHSET = []byte("HSET")

// errRandomCountRange is Redis 7.0.15's reply when HRANDFIELD's or
// SRANDMEMBER's count is outside getRangeLongFromObjectOrReply(-LONG_MAX,
// LONG_MAX).
const errRandomCountRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

// parseRandomCount reads HRANDFIELD's or SRANDMEMBER's count.
func (c *Ctx) parseRandomCount(arg []byte) (int64, bool) {
	l, ok := resp.ParseInt(arg)
	if !ok {
		c.NotInteger()
		return 0, false
	}
	if l == math.MinInt64 {
		c.Err(errRandomCountRange)
		return 0, false
	}
	return l, true
}

// maxRandomReply bounds the reply of a random-sampling command with a
// negative count (repeats allowed, so the count alone sets its size). Redis
// builds a reply of any size (and is killed by the OOM killer); svcdb
// replies an error instead once the reply passes proto-max-bulk-len. A
// variable so that a test can lower it.
var MaxRandomReply = MaxStringLen

const ErrRandomReplyTooLarge = "ERR reply too large: the count asks for more than proto-max-bulk-len bytes"

// randomReplyTooLarge reports whether the reply begun at start has grown
// past maxRandomReply, after replacing it with an error.
func (c *Ctx) randomReplyTooLarge(start int) bool {
	if len(c.Out)-start <= MaxRandomReply {
		return false
	}
	c.Out = c.Out[:start]
	c.Err(ErrRandomReplyTooLarge)
	return true
}

func cmdHRandField(c *Ctx) {
	key := c.Args[1]
	if len(c.Args) >= 3 {
		l, ok := c.parseRandomCount(c.Args[2])
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
		c.hrandfieldCount(key, l, withValues)
		return
	}
	o, ok := c.ReadKind(c.DBFor(key), key, KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	i := rand.IntN(HashLen(o))
	if o.Enc == EncListpack {
		f, _ := listpack.Next(o.Str, listpack.Skip(o.Str, listpack.First, 2*i))
		c.Bulk(f)
		return
	}
	f, _ := HashPair(o, nil, i)
	c.Bulk(f)
}

// hrandfieldCount is Redis' hrandfieldWithCountCommand: a negative count
// allows repeats, a positive one returns distinct fields (the whole hash when
// it has no more than count). WITHVALUES is a flat array in RESP2 and an
// array of [field, value] pairs in RESP3.
func (c *Ctx) hrandfieldCount(key []byte, l int64, withValues bool) {
	o, count, unique := c.randomCountTarget(key, KindHash, l)
	if o == nil {
		return
	}
	size := HashLen(o)
	var offs []int
	if o.Enc == EncListpack {
		offs = HashPairOffsets(o.Str)
	}
	emit := func(i int) {
		f, v := HashPair(o, offs, i)
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
			if c.randomReplyTooLarge(start) {
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
	sampleDistinct(size, int(count), emit)
}

// sampleDistinct calls fn with k distinct positions out of n, in random
// order. REQUIRES: 0 < k < n.
func sampleDistinct(n, k int, fn func(i int)) {
	if k*3 > n {
		// Many of them: a partial Fisher-Yates shuffle of all positions.
		perm := make([]int32, n)
		for i := range perm {
			perm[i] = int32(i)
		}
		for i := range k {
			j := i + rand.IntN(n-i)
			perm[i], perm[j] = perm[j], perm[i]
			fn(int(perm[i]))
		}
		return
	}
	// Few of them: draw until k distinct ones came up.
	seen := make(map[int]struct{}, k)
	for len(seen) < k {
		i := rand.IntN(n)
		if _, dup := seen[i]; dup {
			continue
		}
		seen[i] = struct{}{}
		fn(i)
	}
}

// ---- HSCAN / SSCAN / ZSCAN ---------------------------------------------------

// emptyScan is Redis' shared.emptyscan: cursor 0 and no elements.
var emptyScan = []byte("*2\r\n$1\r\n0\r\n*0\r\n")

// parseCollScanCursor reads an HSCAN/SSCAN cursor (checked before the key, as
// in Redis).
func (c *Ctx) parseCollScanCursor(arg []byte) (uint64, bool) {
	v, ok := values.ParseStrtoul(arg)
	if !ok {
		c.Err("ERR invalid cursor")
	}
	return v, ok
}

// parseCollScanOptions reads HSCAN/SSCAN's MATCH and COUNT (Redis'
// scanGenericCommand: TYPE is SCAN's alone, a COUNT below 1 is a syntax
// error). A "*" pattern is returned as nil: it matches everything.
func (c *Ctx) parseCollScanOptions(args [][]byte) (pattern []byte, count int64, ok bool) {
	count = 10
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.SyntaxErr()
			return nil, 0, false
		}
		a, v := args[i], args[i+1]
		switch {
		case resp.EqualFold(a, "count"):
			n, ok := resp.ParseInt(v)
			if !ok {
				c.NotInteger()
				return nil, 0, false
			}
			if n < 1 {
				c.SyntaxErr()
				return nil, 0, false
			}
			count = n
		case resp.EqualFold(a, "match"):
			pattern = v
			if len(v) == 1 && v[0] == '*' {
				pattern = nil
			}
		default:
			c.SyntaxErr()
			return nil, 0, false
		}
	}
	return pattern, count, true
}

// collScanStart begins HSCAN, SSCAN and ZSCAN of a kind key: it reads the
// cursor, looks the key up (a missing key is an empty scan), then reads the
// options, in Redis' order, and opens the two-element reply. ok is false once
// it has replied.
func (c *Ctx) collScanStart(kind Kind) (o *Object, cursor uint64, pattern []byte, count int64, ok bool) {
	if cursor, ok = c.parseCollScanCursor(c.Args[2]); !ok {
		return nil, 0, nil, 0, false
	}
	key := c.Args[1]
	if o, ok = c.ReadKind(c.DBFor(key), key, kind); !ok {
		return nil, 0, nil, 0, false
	}
	if o == nil {
		c.Raw(emptyScan)
		return nil, 0, nil, 0, false
	}
	if pattern, count, ok = c.parseCollScanOptions(c.Args[3:]); !ok {
		return nil, 0, nil, 0, false
	}
	c.Array(2)
	return o, cursor, pattern, count, true
}

// scanPositions is the cursor arithmetic of HSCAN/SSCAN over an htable of n
// entries: cursor 0 starts at the top position, cursor p > 0 at position p-1
// (or the top, if the table shrank below it). A call visits count positions
// downwards, hi to lo inclusive, and the next cursor is lo, which is 0 once
// position 0 is visited. Removals only move entries down (htable.removeAt),
// so an entry present for the whole scan is at or below the cursor whenever
// the scan resumes, and is returned at least once.
func scanPositions(n int, cursor uint64, count int64) (hi, lo int, next uint64) {
	hi = n - 1
	if cursor > 0 && cursor-1 < uint64(n) {
		hi = int(cursor - 1)
	}
	if int64(hi)+1 > count {
		lo = hi + 1 - int(count)
	}
	return hi, lo, uint64(lo)
}

// spliceHeader inserts a "<prefix><n>\r\n" header at c.Out[start:], in front
// of the n elements already appended (for replies whose length is known only
// once written).
func (c *Ctx) spliceHeader(start int, prefix byte, n int) {
	var buf [24]byte
	h := append(buf[:0], prefix)
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	end := len(c.Out)
	c.Out = append(c.Out, h...)
	copy(c.Out[start+len(h):], c.Out[start:end])
	copy(c.Out[start:], h)
}

func cmdHScan(c *Ctx) {
	o, cursor, pattern, count, ok := c.collScanStart(KindHash)
	if !ok {
		return
	}
	if o.Enc == EncHashtable {
		t := o.Coll.(*values.HTable)
		hi, lo, next := scanPositions(t.Len(), cursor, count)
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
		c.spliceHeader(start, '*', n)
		return
	}
	// A listpack is returned whole, with cursor 0, as Redis does.
	c.Out = resp.AppendBulkString(c.Out, "0")
	start, n := len(c.Out), 0
	it := NewHashIter(o)
	for f, v, more := it.Next(); more; f, v, more = it.Next() {
		if pattern != nil && !glob.Match(pattern, f, false) {
			continue
		}
		c.Bulk(f)
		c.Bulk(v)
		n += 2
	}
	c.spliceHeader(start, '*', n)
}
