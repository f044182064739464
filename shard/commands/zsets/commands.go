package zsets

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// addZSetCommands registers the zset commands' handlers.
func Register(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("zadd", cmdZAdd, keyspace.RouteKeys)
	add("zincrby", cmdZIncrBy, keyspace.RouteKeys)
	add("zrem", cmdZRem, keyspace.RouteKeys)
	add("zcard", cmdZCard, keyspace.RouteKeys)
	add("zcount", cmdZCount, keyspace.RouteKeys)
	add("zlexcount", cmdZLexCount, keyspace.RouteKeys)
	add("zscore", cmdZScore, keyspace.RouteKeys)
	add("zmscore", cmdZMScore, keyspace.RouteKeys)
	add("zrank", cmdZRank, keyspace.RouteKeys)
	add("zrevrank", cmdZRevRank, keyspace.RouteKeys)
	add("zrange", cmdZRange, keyspace.RouteKeys)
	add("zrangestore", cmdZRangeStore, keyspace.RouteKeys)
	add("zrevrange", cmdZRevRange, keyspace.RouteKeys)
	add("zrangebyscore", cmdZRangeByScore, keyspace.RouteKeys)
	add("zrevrangebyscore", cmdZRevRangeByScore, keyspace.RouteKeys)
	add("zrangebylex", cmdZRangeByLex, keyspace.RouteKeys)
	add("zrevrangebylex", cmdZRevRangeByLex, keyspace.RouteKeys)
	add("zpopmin", cmdZPopMin, keyspace.RouteKeys)
	add("zpopmax", cmdZPopMax, keyspace.RouteKeys)
	add("bzpopmin", cmdBZPopMin, keyspace.RouteKeys)
	add("bzpopmax", cmdBZPopMax, keyspace.RouteKeys)
	add("zmpop", cmdZMPop, keyspace.RouteKeySpecs)
	add("bzmpop", cmdBZMPop, keyspace.RouteKeySpecs)
	add("zremrangebyrank", cmdZRemRangeByRank, keyspace.RouteKeys)
	add("zremrangebyscore", cmdZRemRangeByScore, keyspace.RouteKeys)
	add("zremrangebylex", cmdZRemRangeByLex, keyspace.RouteKeys)
	add("zunionstore", cmdZUnionStore, keyspace.RouteKeySpecs)
	add("zinterstore", cmdZInterStore, keyspace.RouteKeySpecs)
	add("zdiffstore", cmdZDiffStore, keyspace.RouteKeySpecs)
	add("zunion", cmdZUnion, keyspace.RouteKeySpecs)
	add("zinter", cmdZInter, keyspace.RouteKeySpecs)
	add("zdiff", cmdZDiff, keyspace.RouteKeySpecs)
	add("zintercard", cmdZInterCard, keyspace.RouteKeySpecs)
	add("zrandmember", cmdZRandMember, keyspace.RouteKeys)
	add("zscan", cmdZScan, keyspace.RouteKeys)
	registerGeo(add) // geo.go: geo sets are sorted sets
}

const (
	errZNaN           = "ERR resulting score is not a number (NaN)"
	errZMinMaxFloat   = "ERR min or max is not a float"
	errZMinMaxLex     = "ERR min or max not valid string range item"
	errPositiveNeeded = "ERR value is out of range, must be positive"
)

// zOffsBuf is how many listpack pairs a handler indexes without allocating
// (zset-max-listpack-entries' default is 128).
const zOffsBuf = 128

// zscoreReply appends a score reply: a RESP3 double or, in RESP2, a bulk string
// formatted %.17g (Redis 7.0's addReplyDouble).
func zscoreReply(c *keyspace.Ctx, f float64) { c.Out = resp.AppendDouble(c.Out, f, c.RESP3) }

// zsetDone accounts for a change of o's value, publishes event for key
// (none when ""), and deletes o once it is empty, with the del event.
func zsetDone(c *keyspace.Ctx, d *keyspace.DB, o *keyspace.Object, before int64, key []byte, event string) {
	d.ValueChanged(o, before)
	if event != "" {
		c.Notify(keyspace.NotifyZSet, event, key)
	}
	if keyspace.ZSetLen(o) == 0 {
		d.Remove(o)
		c.Notify(keyspace.NotifyGeneric, "del", key)
	}
}

// ---- ZADD, ZINCRBY, ZREM ------------------------------------------------------

func cmdZAdd(c *keyspace.Ctx)    { zadd(c, 0) }
func cmdZIncrBy(c *keyspace.Ctx) { zadd(c, keyspace.ZAddIncr) }

// zadd is Redis' zaddGenericCommand: ZADD, and ZINCRBY (flags ZAddIncr),
// which goes through the same option parsing.
func zadd(c *keyspace.Ctx, flags int) {
	key := c.Args[1]
	ch := false
	i := 2
	for ; i < len(c.Args); i++ {
		f, isCh := zaddOption(c.Args[i])
		if f == 0 && !isCh {
			break // the first score
		}
		flags |= f
		ch = ch || isCh
	}
	pairs := c.Args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		c.SyntaxErr()
		return
	}
	nx, xx, gt, lt, incr := flags&keyspace.ZAddNX != 0, flags&keyspace.ZAddXX != 0, flags&keyspace.ZAddGT != 0, flags&keyspace.ZAddLT != 0, flags&keyspace.ZAddIncr != 0
	if nx && xx {
		c.Err("ERR XX and NX options at the same time are not compatible")
		return
	}
	if gt && nx || lt && nx || gt && lt {
		c.Err("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	if incr && len(pairs) > 2 {
		c.Err("ERR INCR option supports a single increment-element pair")
		return
	}
	// Every score is checked before anything changes; the first is kept,
	// so the common single-pair ZADD reads its score once.
	var firstScore float64
	for j := 0; j < len(pairs); j += 2 {
		f, ok := values.ParseScore(pairs[j])
		if !ok {
			c.Out = append(c.Out, resp.ErrNotFloat...)
			return
		}
		if j == 0 {
			firstScore = f
		}
	}
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindZSet)
	if !ok {
		return
	}
	var added, updated, processed int64
	var score float64
	if o != nil || !xx {
		lim := c.Limits()
		var before int64
		created := o == nil
		if created {
			o = d.Insert(key, keyspace.KindZSet)
			keyspace.NewZSetValue(o, pairs, lim)
		} else {
			before = o.ValueMemory()
		}
		for j := 0; j < len(pairs); j += 2 {
			s := firstScore
			if j > 0 {
				s, _ = values.ParseScore(pairs[j])
			}
			out, ns := keyspace.ZSetAdd(o, s, pairs[j+1], flags, lim)
			if out&keyspace.ZAddOutNaN != 0 {
				// Only INCR (one pair) meets NaN, so nothing has changed.
				if created {
					zsetDone(c, d, o, before, key, "")
				}
				c.Err(errZNaN)
				return
			}
			if out&keyspace.ZAddOutAdded != 0 {
				added++
			}
			if out&keyspace.ZAddOutUpdated != 0 {
				updated++
			}
			if out&keyspace.ZAddOutNop == 0 {
				processed++
			}
			score = ns
		}
		if added+updated > 0 || created {
			zsetDone(c, d, o, before, key, "")
		}
	}
	switch {
	case incr && processed > 0:
		zscoreReply(c, score)
	case incr:
		c.Null()
	case ch:
		c.Int(added + updated)
	default:
		c.Int(added)
	}
	if added+updated > 0 { // after the reply, as Redis' zaddGenericCommand
		if incr {
			c.Notify(keyspace.NotifyZSet, "zincr", key)
		} else {
			c.Notify(keyspace.NotifyZSet, "zadd", key)
		}
	}
}

func cmdZRem(c *keyspace.Ctx) {
	c.RemoveMembers(keyspace.KindZSet, keyspace.ZSetDel, keyspace.ZSetLen, keyspace.NotifyZSet, "zrem")
}

// zaddOption reads one ZADD option word: its flag, or ch for CH; neither
// for the first score.
func zaddOption(a []byte) (flag int, ch bool) {
	switch {
	case resp.EqualFold(a, "nx"):
		return keyspace.ZAddNX, false
	case resp.EqualFold(a, "xx"):
		return keyspace.ZAddXX, false
	case resp.EqualFold(a, "ch"):
		return 0, true
	case resp.EqualFold(a, "incr"):
		return keyspace.ZAddIncr, false
	case resp.EqualFold(a, "gt"):
		return keyspace.ZAddGT, false
	case resp.EqualFold(a, "lt"):
		return keyspace.ZAddLT, false
	}
	return 0, false
}

// ---- reads of single members -------------------------------------------------

func cmdZCard(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(keyspace.ZSetLen(o)))
}

func cmdZScore(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	if s, found := keyspace.ZSetScore(o, c.Args[2]); found {
		zscoreReply(c, s)
	} else {
		c.Null()
	}
}

func cmdZMScore(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	c.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if o == nil {
			c.Null()
			continue
		}
		if s, found := keyspace.ZSetScore(o, m); found {
			zscoreReply(c, s)
		} else {
			c.Null()
		}
	}
}

func cmdZRank(c *keyspace.Ctx)    { zrank(c, false) }
func cmdZRevRank(c *keyspace.Ctx) { zrank(c, true) }

func zrank(c *keyspace.Ctx, rev bool) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	r, found := keyspace.ZSetRank(o, c.Args[2])
	if !found {
		c.Null()
		return
	}
	if rev {
		r = keyspace.ZSetLen(o) - 1 - r
	}
	c.Int(int64(r))
}

// ---- ZCOUNT, ZLEXCOUNT --------------------------------------------------------

func cmdZCount(c *keyspace.Ctx) {
	r, ok := values.ParseScoreRange(c.Args[2], c.Args[3])
	if !ok {
		c.Err(errZMinMaxFloat)
		return
	}
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	if o.Enc == keyspace.EncSkiplist {
		s := o.Coll().(*values.Skiplist)
		c.Int(int64(zslCount(s, s.FirstInRange(&r), s.LastInRange(&r))))
		return
	}
	count := 0
	for off := zlFirstInRange(o.Bytes(), &r); off >= 0 && off < len(o.Bytes()); count++ {
		_, sc, next := values.ZlAt(o.Bytes(), off)
		if !r.LteMax(sc) {
			break
		}
		off = next
	}
	c.Int(int64(count))
}

func cmdZLexCount(c *keyspace.Ctx) {
	r, ok := values.ParseLexRange(c.Args[2], c.Args[3])
	if !ok {
		c.Err(errZMinMaxLex)
		return
	}
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	if o.Enc == keyspace.EncSkiplist {
		s := o.Coll().(*values.Skiplist)
		c.Int(int64(zslCount(s, s.FirstInLexRange(&r), s.LastInLexRange(&r))))
		return
	}
	var buf [zOffsBuf]int
	z := keyspace.ZView(o, buf[:])
	z.SeekLex(&r, false)
	count := 0
	for ; z.Valid() && r.LteMax(z.Member()); z.Next() {
		count++
	}
	c.Int(int64(count))
}

// zslCount is Redis' count from the ranks of the first and last members in
// a range (ZCOUNT, ZLEXCOUNT on a skiplist).
func zslCount(s *values.Skiplist, first, last uint32) int {
	if first == 0 {
		return 0
	}
	count := s.Len() - (s.Rank(first) - 1)
	if last != 0 {
		count -= s.Len() - s.Rank(last)
	}
	return count
}

// zlFirstInRange is the offset of the first pair of a listpack whose score
// is in r, or -1 (Redis' zzlFirstInRange).
func zlFirstInRange(lp []byte, r *values.ScoreRange) int {
	if r.Empty() {
		return -1
	}
	for off := listpack.First; off < len(lp); {
		_, sc, next := values.ZlAt(lp, off)
		if r.GteMin(sc) {
			if r.LteMax(sc) {
				return off
			}
			return -1
		}
		off = next
	}
	return -1
}

// ---- ZRANGE and friends -------------------------------------------------------

// zrange range types and directions (Redis' zrange_type, zrange_direction).
const (
	zrAuto = iota
	zrRank
	zrScore
	zrLex
)

// zremEvents are ZREMRANGEBY*'s keyspace events, by range type.
var zremEvents = [...]string{zrRank: "zremrangebyrank", zrScore: "zremrangebyscore", zrLex: "zremrangebylex"}

const (
	zdAuto = iota
	zdForward
	zdReverse
)

func cmdZRange(c *keyspace.Ctx)           { zrange(c, 1, false, zrAuto, zdAuto) }
func cmdZRangeStore(c *keyspace.Ctx)      { zrange(c, 2, true, zrAuto, zdAuto) }
func cmdZRevRange(c *keyspace.Ctx)        { zrange(c, 1, false, zrRank, zdReverse) }
func cmdZRangeByScore(c *keyspace.Ctx)    { zrange(c, 1, false, zrScore, zdForward) }
func cmdZRevRangeByScore(c *keyspace.Ctx) { zrange(c, 1, false, zrScore, zdReverse) }
func cmdZRangeByLex(c *keyspace.Ctx)      { zrange(c, 1, false, zrLex, zdForward) }
func cmdZRevRangeByLex(c *keyspace.Ctx)   { zrange(c, 1, false, zrLex, zdReverse) }

// zlong reads an integer argument, replying Redis' generic error.
func zlong(c *keyspace.Ctx, b []byte) (int64, bool) {
	n, ok := resp.ParseInt(b)
	if !ok {
		c.NotInteger()
	}
	return n, ok
}

// zpair is one member and its score collected for a result.
type zpair struct {
	member []byte
	score  float64
}

func zpairCmp(a, b zpair) int {
	switch {
	case a.score < b.score:
		return -1
	case a.score > b.score:
		return 1
	}
	return bytes.Compare(a.member, b.member)
}

// zemit receives a range's members in reply order: it replies them, or
// collects copies of them for ZRANGESTORE (copies: the source may be the
// destination, and a reference would let the caller's scratch escape).
type zemit struct {
	c          *keyspace.Ctx
	withScores bool
	store      bool
	n          int
	arena      []byte
	ends       []int
	scores     []float64
}

func (e *zemit) add(m []byte, s float64) {
	e.n++
	if e.store {
		e.arena = append(e.arena, m...)
		e.ends = append(e.ends, len(e.arena))
		e.scores = append(e.scores, s)
		return
	}
	c := e.c
	if e.withScores && c.RESP3 {
		c.Array(2)
	}
	c.Bulk(m)
	if e.withScores {
		zscoreReply(c, s)
	}
}

// pairs returns what add collected.
func (e *zemit) pairs() []zpair {
	out := make([]zpair, len(e.ends))
	start := 0
	for i, end := range e.ends {
		out[i] = zpair{e.arena[start:end:end], e.scores[i]}
		start = end
	}
	return out
}

// zrange is Redis' zrangeGenericCommand: ZRANGE, ZRANGESTORE and the older
// ZREVRANGE, Z[REV]RANGEBYSCORE and Z[REV]RANGEBYLEX, which fix the range
// type and direction. argStart is the source key's position.
func zrange(c *keyspace.Ctx, argStart int, store bool, rangeType, dir int) {
	key := c.Args[argStart]
	minIdx, maxIdx := argStart+1, argStart+2
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := argStart + 3; j < len(c.Args); j++ {
		a, left := c.Args[j], len(c.Args)-j-1
		switch {
		case !store && resp.EqualFold(a, "withscores"):
			withScores = true
		case resp.EqualFold(a, "limit") && left >= 2:
			var ok bool
			if offset, ok = zlong(c, c.Args[j+1]); !ok {
				return
			}
			if limit, ok = zlong(c, c.Args[j+2]); !ok {
				return
			}
			j += 2
		case dir == zdAuto && resp.EqualFold(a, "rev"):
			dir = zdReverse
		case rangeType == zrAuto && resp.EqualFold(a, "bylex"):
			rangeType = zrLex
		case rangeType == zrAuto && resp.EqualFold(a, "byscore"):
			rangeType = zrScore
		default:
			c.SyntaxErr()
			return
		}
	}
	if dir == zdAuto {
		dir = zdForward
	}
	if rangeType == zrAuto {
		rangeType = zrRank
	}
	if limit != -1 && rangeType == zrRank {
		c.Err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && rangeType == zrLex {
		c.Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	rev := dir == zdReverse
	if rev && rangeType != zrRank {
		minIdx, maxIdx = maxIdx, minIdx // given as max, min
	}
	var start, end int64
	var sr values.ScoreRange
	var lr values.LexRange
	switch rangeType {
	case zrRank:
		var ok bool
		if start, ok = zlong(c, c.Args[minIdx]); !ok {
			return
		}
		if end, ok = zlong(c, c.Args[maxIdx]); !ok {
			return
		}
	case zrScore:
		var ok bool
		if sr, ok = values.ParseScoreRange(c.Args[minIdx], c.Args[maxIdx]); !ok {
			c.Err(errZMinMaxFloat)
			return
		}
	case zrLex:
		var ok bool
		if lr, ok = values.ParseLexRange(c.Args[minIdx], c.Args[maxIdx]); !ok {
			c.Err(errZMinMaxLex)
			return
		}
	}
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	e := zemit{c: c, withScores: withScores, store: store}
	if o == nil {
		if store {
			zstore(c, c.Args[1], nil, "zrangestore")
		} else {
			c.Out = append(c.Out, resp.EmptyArray...)
		}
		return
	}
	var buf [zOffsBuf]int
	z := keyspace.ZView(o, buf[:])
	if rangeType == zrRank {
		llen := int64(z.Len())
		if start < 0 {
			start += llen
		}
		if end < 0 {
			end += llen
		}
		start = max(start, 0)
		if start > end || start >= llen {
			if store {
				zstore(c, c.Args[1], nil, "zrangestore")
			} else {
				c.Out = append(c.Out, resp.EmptyArray...)
			}
			return
		}
		end = min(end, llen-1)
		n := int(end - start + 1)
		if !store {
			if withScores && !c.RESP3 {
				c.Array(2 * n)
			} else {
				c.Array(n)
			}
		}
		if rev {
			z.SeekRank(int(llen - 1 - start))
		} else {
			z.SeekRank(int(start))
		}
		for ; n > 0; n-- {
			e.add(z.Member(), z.Score())
			z.Move(rev)
		}
		if store {
			zstore(c, c.Args[1], e.pairs(), "zrangestore")
		}
		return
	}
	startOut := len(c.Out)
	if rangeType == zrScore {
		if !(offset > 0 && offset >= int64(z.Len())) {
			z.SeekScore(&sr, rev)
			for ; z.Valid() && offset != 0; offset-- {
				z.Move(rev)
			}
			for ; z.Valid() && limit != 0; limit-- {
				s := z.Score()
				if rev && !sr.GteMin(s) || !rev && !sr.LteMax(s) {
					break
				}
				e.add(z.Member(), s)
				z.Move(rev)
			}
		}
	} else {
		z.SeekLex(&lr, rev)
		for ; z.Valid() && offset != 0; offset-- {
			z.Move(rev)
		}
		for ; z.Valid() && limit != 0; limit-- {
			m := z.Member()
			if rev && !lr.GteMin(m) || !rev && !lr.LteMax(m) {
				break
			}
			e.add(m, z.Score())
			z.Move(rev)
		}
	}
	if store {
		zstore(c, c.Args[1], e.pairs(), "zrangestore")
		return
	}
	n := e.n
	if withScores && !c.RESP3 {
		n *= 2
	}
	c.SpliceHeader(startOut, '*', n)
}

// zstore writes pairs (distinct members) as the sorted set dst, replacing
// whatever dst held, or deletes dst when there are none, and replies the
// count (Redis' setKey / dbDelete at the end of ZRANGESTORE, ZUNIONSTORE,
// ...). The encoding is the one ZSetAdd would have reached adding them one
// by one.
//
// The events are Redis': event (zrangestore, zunionstore, ...) after the
// reply, or del after it for a destination that went; a destination that
// existed is replaced without the new event (setKey).
func zstore(c *keyspace.Ctx, dst []byte, pairs []zpair, event string) {
	existed := zput(c, dst, pairs)
	c.Int(int64(len(pairs)))
	zstoreNotify(c, dst, len(pairs), existed, event)
}

// zstoreNotifyFirst is zstore with the event before the reply, where Redis'
// command notifies first (GEOSEARCHSTORE and GEORADIUS ... STORE, geo.c).
func zstoreNotifyFirst(c *keyspace.Ctx, dst []byte, pairs []zpair, event string) {
	existed := zput(c, dst, pairs)
	zstoreNotify(c, dst, len(pairs), existed, event)
	c.Int(int64(len(pairs)))
}

// zstoreNotify publishes what a store of n members made of dst: event, or
// del for a destination that existed and went.
func zstoreNotify(c *keyspace.Ctx, dst []byte, n int, existed bool, event string) {
	if n == 0 {
		if existed {
			c.Notify(keyspace.NotifyGeneric, "del", dst)
		}
		return
	}
	c.Notify(keyspace.NotifyZSet, event, dst)
}

// zput stores pairs as dst (deleting dst when there are none) and reports
// whether dst existed before.
func zput(c *keyspace.Ctx, dst []byte, pairs []zpair) (existed bool) {
	d := c.DBFor(dst)
	old := d.Lookup(dst, c.Now)
	if old != nil {
		d.Remove(old)
	}
	if len(pairs) == 0 {
		return old != nil
	}
	lim := c.Limits()
	maxLen := 0
	for _, p := range pairs {
		maxLen = max(maxLen, len(p.member))
	}
	var o *keyspace.Object
	if old != nil {
		o = d.Reinsert(dst, keyspace.KindZSet)
	} else {
		o = d.Insert(dst, keyspace.KindZSet)
	}
	if int64(len(pairs)) <= lim.ZSetMaxListpackEntries && int64(maxLen) <= lim.ZSetMaxListpackValue {
		slices.SortFunc(pairs, zpairCmp)
		size := 0
		for _, p := range pairs {
			size += listpack.EntrySize(p.member) + values.ZlScoreEntrySize(p.score)
		}
		lp := listpack.New(size)
		var sb [values.ZlScoreLen]byte
		for _, p := range pairs {
			lp = listpack.Append(lp, p.member)
			lp = listpack.Append(lp, values.ZlScoreBytes(&sb, p.score))
		}
		o.Enc = keyspace.EncListpack
		o.SetBytes(lp)
	} else {
		s := values.NewSkiplist(len(pairs))
		for i := len(pairs) - 1; i >= 0; i-- {
			s.Add(pairs[i].member, pairs[i].score)
		}
		o.Enc = keyspace.EncSkiplist
		o.SetColl(s)
	}
	d.ValueChanged(o, 0)
	return old != nil
}

// ---- ZREMRANGEBY* ---------------------------------------------------------------

func cmdZRemRangeByRank(c *keyspace.Ctx)  { zremrange(c, zrRank) }
func cmdZRemRangeByScore(c *keyspace.Ctx) { zremrange(c, zrScore) }
func cmdZRemRangeByLex(c *keyspace.Ctx)   { zremrange(c, zrLex) }

func zremrange(c *keyspace.Ctx, rangeType int) {
	var start, end int64
	var sr values.ScoreRange
	var lr values.LexRange
	var ok bool
	switch rangeType {
	case zrRank:
		if start, ok = zlong(c, c.Args[2]); !ok {
			return
		}
		if end, ok = zlong(c, c.Args[3]); !ok {
			return
		}
	case zrScore:
		if sr, ok = values.ParseScoreRange(c.Args[2], c.Args[3]); !ok {
			c.Err(errZMinMaxFloat)
			return
		}
	case zrLex:
		if lr, ok = values.ParseLexRange(c.Args[2], c.Args[3]); !ok {
			c.Err(errZMinMaxLex)
			return
		}
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	llen := int64(keyspace.ZSetLen(o))
	if rangeType == zrRank {
		if start < 0 {
			start += llen
		}
		if end < 0 {
			end += llen
		}
		start = max(start, 0)
		if start > end || start >= llen {
			c.Int(0)
			return
		}
		end = min(end, llen-1)
	}
	before := o.ValueMemory()
	deleted := 0
	if o.Enc == keyspace.EncListpack {
		var buf [zOffsBuf]int
		z := keyspace.ZView(o, buf[:])
		var from int // first pair index
		switch rangeType {
		case zrRank:
			from, deleted = int(start), int(end-start+1)
		case zrScore:
			z.SeekScore(&sr, false)
			for from = z.I; z.Valid() && sr.LteMax(z.Score()); z.Next() {
				deleted++
			}
		case zrLex:
			z.SeekLex(&lr, false)
			for from = z.I; z.Valid() && lr.LteMax(z.Member()); z.Next() {
				deleted++
			}
		}
		if deleted > 0 {
			o.SetBytes(listpack.Delete(o.Bytes(), z.Offs[from], 2*deleted))
		}
	} else {
		s := o.Coll().(*values.Skiplist)
		switch rangeType {
		case zrRank:
			n := int(end - start + 1)
			deleted = s.DeleteWhile(s.ByRank(int(start)+1), func(uint32) bool { n--; return n >= 0 })
		case zrScore:
			deleted = s.DeleteWhile(s.FirstInRange(&sr), func(x uint32) bool { return sr.LteMax(s.Score(x)) })
		case zrLex:
			deleted = s.DeleteWhile(s.FirstInLexRange(&lr), func(x uint32) bool { return lr.LteMax(values.MemberBytes(s.Member(x))) })
		}
	}
	if deleted > 0 {
		zsetDone(c, d, o, before, key, zremEvents[rangeType])
	}
	c.Int(int64(deleted))
}

// ---- pops -----------------------------------------------------------------------

func cmdZPopMin(c *keyspace.Ctx) { zpopMinMax(c, false) }
func cmdZPopMax(c *keyspace.Ctx) { zpopMinMax(c, true) }

func zpopMinMax(c *keyspace.Ctx, fromMax bool) {
	if len(c.Args) > 3 {
		c.SyntaxErr()
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		var ok bool
		if count, ok = zpositive(c, c.Args[2]); !ok {
			return
		}
	}
	zpop(c, c.Args[1:2], fromMax, false, count, c.RESP3 && count != -1, false)
}

// zpositive is Redis' getPositiveLongFromObjectOrReply without a message:
// a malformed number gets the same error as a negative one.
func zpositive(c *keyspace.Ctx, b []byte) (int64, bool) {
	n, ok := resp.ParseInt(b)
	if !ok || n < 0 {
		c.Err(errPositiveNeeded)
		return 0, false
	}
	return n, true
}

// zpop is Redis' genericZpopCommand: it pops up to count members (-1: one,
// the single-pop form) from the lowest (or, when fromMax, highest) end of the
// first existing key of keys. emitKey names the key in the reply; nested
// makes the pairs [member, score] arrays; nilWhenEmpty replies a null
// rather than an empty array when no key exists.
func zpop(c *keyspace.Ctx, keys [][]byte, fromMax, emitKey bool, count int64, nested, nilWhenEmpty bool) {
	var key []byte
	var o *keyspace.Object
	var d *keyspace.DB
	for _, k := range keys {
		d = c.DBFor(k)
		if o = d.Lookup(k, c.Now); o == nil {
			continue
		}
		if o.Kind != keyspace.KindZSet {
			c.WrongType()
			return
		}
		key = k
		break
	}
	if o == nil {
		if nilWhenEmpty {
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
		} else {
			c.Out = append(c.Out, resp.EmptyArray...)
		}
		return
	}
	if count == 0 {
		c.Out = append(c.Out, resp.EmptyArray...)
		return
	}
	single := count == -1
	if single {
		count = 1
	}
	llen := keyspace.ZSetLen(o)
	n := int(min(count, int64(llen)))
	switch {
	case !nested && !emitKey:
		c.Array(2 * n)
	case nested && !emitKey:
		c.Array(n)
	case !nested && emitKey:
		c.Array(2*n + 1)
		c.Bulk(key)
	default:
		c.Array(2)
		c.Bulk(key)
		c.Array(n)
	}
	if emitKey { // BZPOPMIN, BZPOPMAX, [B]ZMPOP: logged as Redis propagates them
		logZPop(c, key, fromMax, single, n)
	}
	before := o.ValueMemory()
	event := "zpopmin"
	if fromMax {
		event = "zpopmax"
	}
	first := true
	emit := func(m []byte, s float64) {
		if first {
			// As Redis' genericZpopCommand: the event goes before the
			// first member's reply, inside the reply's array.
			first = false
			c.Notify(keyspace.NotifyZSet, event, key)
		}
		if nested {
			c.Array(2)
		}
		c.Bulk(m)
		zscoreReply(c, s)
	}
	if o.Enc == keyspace.EncListpack {
		var buf [zOffsBuf]int
		z := keyspace.ZView(o, buf[:])
		if fromMax {
			for z.I = llen - 1; z.I >= llen-n; z.I-- {
				emit(z.Member(), z.Score())
			}
			o.SetBytes(listpack.Delete(o.Bytes(), z.Offs[llen-n], 2*n))
		} else {
			for z.I = 0; z.I < n; z.I++ {
				emit(z.Member(), z.Score())
			}
			o.SetBytes(listpack.Delete(o.Bytes(), listpack.First, 2*n))
		}
	} else {
		s := o.Coll().(*values.Skiplist)
		for range n {
			x := s.First()
			if fromMax {
				x = s.Last()
			}
			emit(values.MemberBytes(s.Member(x)), s.Score(x))
			s.RemoveNode(x)
		}
	}
	zsetDone(c, d, o, before, key, "")
}

var (
	cmdZPOPMIN = []byte("ZPOPMIN")
	cmdZPOPMAX = []byte("ZPOPMAX")
)

// logZPop records a pop of n members by BZPOPMIN/BZPOPMAX (single: ZPOPMIN
// key) or [B]ZMPOP (ZPOPMIN key n), as Redis' genericZpopCommand rewrites
// them.
func logZPop(c *keyspace.Ctx, key []byte, fromMax, single bool, n int) {
	if !c.Logging() {
		return
	}
	name := cmdZPOPMIN
	if fromMax {
		name = cmdZPOPMAX
	}
	if single {
		c.LogAs(name, key)
		return
	}
	c.LogAs(name, key, strconv.AppendInt(c.Scratch[:0], int64(n), 10))
}

func cmdBZPopMin(c *keyspace.Ctx) { bzpop(c, false) }
func cmdBZPopMax(c *keyspace.Ctx) { bzpop(c, true) }

func bzpop(c *keyspace.Ctx, fromMax bool) {
	keys := c.Args[1 : len(c.Args)-1]
	deadline, ok := c.ParseTimeout(c.Args[len(c.Args)-1], true)
	if !ok {
		return
	}
	blockingZpop(c, keys, fromMax, -1, false, deadline)
}

// blockingZpop is Redis' blockingGenericZpopCommand: pop from the first key
// that has members, else block on all of them.
func blockingZpop(c *keyspace.Ctx, keys [][]byte, fromMax bool, count int64, nested bool, deadline int64) {
	for i, key := range keys {
		if !c.Servable(key) {
			continue
		}
		o := c.DBFor(key).Lookup(key, c.Now)
		if o == nil {
			continue
		}
		if o.Kind != keyspace.KindZSet {
			c.WrongType()
			return
		}
		if keyspace.ZSetLen(o) == 0 {
			continue
		}
		zpop(c, keys[i:i+1], fromMax, true, count, nested, nested)
		return
	}
	c.Block(keys, deadline, keyspace.TimeoutNullArray)
}

func cmdZMPop(c *keyspace.Ctx)  { zmpop(c, 1, false) }
func cmdBZMPop(c *keyspace.Ctx) { zmpop(c, 2, true) }

// zmpop is Redis' zmpopGenericCommand (ZMPOP, BZMPOP).
func zmpop(c *keyspace.Ctx, numkeysIdx int, blocking bool) {
	const errNumkeys = "ERR numkeys should be greater than 0"
	numkeys, ok := resp.ParseInt(c.Args[numkeysIdx])
	if !ok || numkeys < 1 {
		c.Err(errNumkeys)
		return
	}
	if numkeys >= int64(len(c.Args)-numkeysIdx-1) {
		c.SyntaxErr()
		return
	}
	whereIdx := numkeysIdx + int(numkeys) + 1
	var fromMax bool
	switch w := c.Args[whereIdx]; {
	case resp.EqualFold(w, "min"):
	case resp.EqualFold(w, "max"):
		fromMax = true
	default:
		c.SyntaxErr()
		return
	}
	count := int64(-1)
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && resp.EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			j++
			n, ok := resp.ParseInt(c.Args[j])
			if !ok || n < 1 {
				c.Err("ERR count should be greater than 0")
				return
			}
			count = n
			continue
		}
		c.SyntaxErr()
		return
	}
	if count == -1 {
		count = 1
	}
	keys := c.Args[numkeysIdx+1 : whereIdx]
	if !blocking {
		zpop(c, keys, fromMax, true, count, true, true)
		return
	}
	deadline, ok := c.ParseTimeout(c.Args[1], true)
	if !ok {
		return
	}
	blockingZpop(c, keys, fromMax, count, true, deadline)
}

// ---- ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD ------------------

const (
	zopUnion = iota
	zopInter
	zopDiff
)

// zstoreEvents are the STORE commands' keyspace events, by operation.
var zstoreEvents = [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}

const (
	zaggSum = iota
	zaggMin
	zaggMax
)

func cmdZUnionStore(c *keyspace.Ctx) { zsetop(c, c.Args[1], 2, zopUnion, false) }
func cmdZInterStore(c *keyspace.Ctx) { zsetop(c, c.Args[1], 2, zopInter, false) }
func cmdZDiffStore(c *keyspace.Ctx)  { zsetop(c, c.Args[1], 2, zopDiff, false) }
func cmdZUnion(c *keyspace.Ctx)      { zsetop(c, nil, 1, zopUnion, false) }
func cmdZInter(c *keyspace.Ctx)      { zsetop(c, nil, 1, zopInter, false) }
func cmdZDiff(c *keyspace.Ctx)       { zsetop(c, nil, 1, zopDiff, false) }
func cmdZInterCard(c *keyspace.Ctx)  { zsetop(c, nil, 1, zopInter, true) }

// zsrc is one input of a set operation: a sorted set, a plain set (every
// member scoring 1, as in Redis) or a missing key (o == nil).
type zsrc struct {
	o      *keyspace.Object
	weight float64
}

func (s *zsrc) len() int {
	switch {
	case s.o == nil:
		return 0
	case s.o.Kind == keyspace.KindSet:
		return keyspace.SetLen(s.o)
	}
	return keyspace.ZSetLen(s.o)
}

func (s *zsrc) find(m []byte) (float64, bool) {
	switch {
	case s.o == nil:
		return 0, false
	case s.o.Kind == keyspace.KindSet:
		return 1, keyspace.SetHas(s.o, m)
	}
	return keyspace.ZSetScore(s.o, m)
}

// each calls fn with every member and its score until fn returns false.
// The member bytes are valid only during the call.
func (s *zsrc) each(fn func(m []byte, score float64) bool) {
	if s.o == nil {
		return
	}
	if s.o.Kind == keyspace.KindSet {
		var buf [20]byte
		for it := keyspace.NewSetIter(s.o); ; {
			m, ok := it.Next()
			if !ok || !fn(m.Bytes(&buf), 1) {
				return
			}
		}
	}
	if s.o.Enc == keyspace.EncListpack {
		lp := s.o.Bytes()
		for off := listpack.First; off < len(lp); {
			m, sc, next := values.ZlAt(lp, off)
			if !fn(m, sc) {
				return
			}
			off = next
		}
		return
	}
	sl := s.o.Coll().(*values.Skiplist)
	for x := sl.First(); x != 0; x = sl.Next(x) {
		if !fn(values.MemberBytes(sl.Member(x)), sl.Score(x)) {
			return
		}
	}
}

func zaggregate(target *float64, v float64, agg int) {
	switch agg {
	case zaggSum:
		*target += v
		if math.IsNaN(*target) { // inf + -inf: Redis' convention is 0
			*target = 0
		}
	case zaggMin:
		if v < *target {
			*target = v
		}
	case zaggMax:
		if v > *target {
			*target = v
		}
	}
}

// zsetop is Redis' zunionInterDiffGenericCommand. dst is the destination
// (nil: reply the result), numkeysIdx the position of numkeys; cardOnly is
// ZINTERCARD.
func zsetop(c *keyspace.Ctx, dst []byte, numkeysIdx int, op int, cardOnly bool) {
	setnum, ok := zlong(c, c.Args[numkeysIdx])
	if !ok {
		return
	}
	if setnum < 1 {
		c.Out = append(c.Out, "-ERR at least 1 input key is needed for '"...)
		c.Out = append(c.Out, c.Cmd.FullName...)
		c.Out = append(c.Out, "' command\r\n"...)
		return
	}
	if setnum > int64(len(c.Args)-(numkeysIdx+1)) {
		c.SyntaxErr()
		return
	}
	n := int(setnum)
	var one [4]zsrc
	src := one[:0]
	if n > len(one) {
		src = make([]zsrc, 0, n)
	}
	j := numkeysIdx + 1
	for _, key := range c.Args[j : j+n] {
		d := c.DBFor(key)
		o := d.Lookup(key, c.Now)
		if o == nil {
			d.Miss()
			c.Notify(keyspace.NotifyKeyMiss, "keymiss", key)
		} else {
			d.Hit()
			if o.Kind != keyspace.KindZSet && o.Kind != keyspace.KindSet {
				c.WrongType()
				return
			}
		}
		src = append(src, zsrc{o: o, weight: 1})
	}
	j += n
	agg := zaggSum
	withScores := false
	var limit int64
	for j < len(c.Args) {
		a, remaining := c.Args[j], len(c.Args)-j
		switch {
		case op != zopDiff && !cardOnly && remaining >= n+1 && resp.EqualFold(a, "weights"):
			j++
			for i := range n {
				w, ok := values.ParseScore(c.Args[j])
				if !ok {
					c.Err("ERR weight value is not a float")
					return
				}
				src[i].weight = w
				j++
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && resp.EqualFold(a, "aggregate"):
			switch v := c.Args[j+1]; {
			case resp.EqualFold(v, "sum"):
				agg = zaggSum
			case resp.EqualFold(v, "min"):
				agg = zaggMin
			case resp.EqualFold(v, "max"):
				agg = zaggMax
			default:
				c.SyntaxErr()
				return
			}
			j += 2
		case remaining >= 1 && dst == nil && !cardOnly && resp.EqualFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && resp.EqualFold(a, "limit"):
			l, ok := resp.ParseInt(c.Args[j+1])
			if !ok || l < 0 {
				c.Err("ERR LIMIT can't be negative")
				return
			}
			limit = l
			j += 2
		default:
			c.SyntaxErr()
			return
		}
	}
	if op != zopDiff {
		// Smallest first, as Redis' qsort by cardinality (glibc's is stable
		// here), which fixes the order scores are added in.
		slices.SortStableFunc(src, func(a, b zsrc) int { return a.len() - b.len() })
	}

	var arena []byte // result members, copied
	var res []zpair
	type span struct{ off, n int }
	var spans []span
	keep := func(m []byte, score float64) {
		spans = append(spans, span{len(arena), len(m)})
		arena = append(arena, m...)
		res = append(res, zpair{score: score})
	}
	card := int64(0)
	switch op {
	case zopInter:
		if src[0].len() == 0 {
			break
		}
		src[0].each(func(m []byte, sc float64) bool {
			score := src[0].weight * sc
			if math.IsNaN(score) {
				score = 0
			}
			k := 1
			for ; k < n; k++ {
				if src[k].o == src[0].o {
					zaggregate(&score, sc*src[k].weight, agg)
				} else if v, found := src[k].find(m); found {
					zaggregate(&score, v*src[k].weight, agg)
				} else {
					break
				}
			}
			if k < n {
				return true
			}
			if cardOnly {
				card++
				return limit == 0 || card < limit
			}
			keep(m, score)
			return true
		})
	case zopUnion:
		acc := make(map[string]int)
		for i := range src {
			if src[i].len() == 0 {
				continue
			}
			w := src[i].weight
			src[i].each(func(m []byte, sc float64) bool {
				score := w * sc
				if math.IsNaN(score) {
					score = 0
				}
				if k, found := acc[values.MemberString(m)]; found {
					zaggregate(&res[k].score, score, agg)
					return true
				}
				acc[string(m)] = len(res)
				keep(m, score)
				return true
			})
		}
	case zopDiff:
		if src[0].len() == 0 {
			break
		}
		for k := 1; k < n; k++ {
			if src[k].o == src[0].o {
				goto done // every member would be removed
			}
		}
		src[0].each(func(m []byte, sc float64) bool {
			for k := 1; k < n; k++ {
				if _, found := src[k].find(m); found {
					return true
				}
			}
			keep(m, sc)
			return true
		})
	}
done:
	if cardOnly {
		c.Int(card)
		return
	}
	for i := range res {
		res[i].member = arena[spans[i].off : spans[i].off+spans[i].n]
	}
	if dst != nil {
		zstore(c, dst, res, zstoreEvents[op])
		return
	}
	slices.SortFunc(res, zpairCmp)
	if withScores && !c.RESP3 {
		c.Array(2 * len(res))
	} else {
		c.Array(len(res))
	}
	for _, p := range res {
		if withScores && c.RESP3 {
			c.Array(2)
		}
		c.Bulk(p.member)
		if withScores {
			zscoreReply(c, p.score)
		}
	}
}

// ---- ZRANDMEMBER -------------------------------------------------------------------

func cmdZRandMember(c *keyspace.Ctx) {
	key := c.Args[1]
	if len(c.Args) >= 3 {
		l, ok := c.ParseRandomCount(c.Args[2])
		if !ok {
			return
		}
		if len(c.Args) > 4 || len(c.Args) == 4 && !resp.EqualFold(c.Args[3], "withscores") {
			c.SyntaxErr()
			return
		}
		withScores := len(c.Args) == 4
		if withScores && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
			c.Err("ERR value is out of range")
			return
		}
		zrandmemberCount(c, key, l, withScores)
		return
	}
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	var buf [zOffsBuf]int
	z := keyspace.ZView(o, buf[:])
	z.SeekRank(rand.IntN(z.Len()))
	c.Bulk(z.Member())
}

// zrandmemberCount is Redis' zrandmemberWithCountCommand: a negative count
// allows repeats, a positive one returns distinct members (the whole set,
// from the highest score down, when it has no more than count).
func zrandmemberCount(c *keyspace.Ctx, key []byte, l int64, withScores bool) {
	o, count, unique := c.RandomCountTarget(key, keyspace.KindZSet, l)
	if o == nil {
		return
	}
	var buf [zOffsBuf]int
	z := keyspace.ZView(o, buf[:])
	size := z.Len()
	emit := func(r int) {
		z.SeekRank(r)
		if withScores && c.RESP3 {
			c.Array(2)
		}
		c.Bulk(z.Member())
		if withScores {
			zscoreReply(c, z.Score())
		}
	}
	header := func(n uint64) {
		if withScores && !c.RESP3 {
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
		for r := size - 1; r >= 0; r-- { // Redis walks the set from its tail
			emit(r)
		}
		return
	}
	header(count)
	keyspace.SampleDistinct(size, int(count), emit)
}

// ---- ZSCAN -----------------------------------------------------------------------------

func cmdZScan(c *keyspace.Ctx) {
	o, cursor, pattern, count, ok := c.CollScanStart(keyspace.KindZSet)
	if !ok {
		return
	}
	var num [32]byte
	if o.Enc == keyspace.EncListpack {
		// A listpack is returned whole, with cursor 0, as Redis does.
		c.Out = resp.AppendBulkString(c.Out, "0")
		start, n := len(c.Out), 0
		lp := o.Bytes()
		for off := listpack.First; off < len(lp); {
			m, sc, next := values.ZlAt(lp, off)
			off = next
			if pattern != nil && !glob.Match(pattern, m, false) {
				continue
			}
			c.Bulk(m)
			c.Bulk(values.AppendListpackScore(num[:0], sc))
			n += 2
		}
		c.SpliceHeader(start, '*', n)
		return
	}
	// The cursor is a slot index: a member keeps its slot while it lives,
	// so one present for the whole scan is returned exactly once.
	s := o.Coll().(*values.Skiplist)
	from, end := max(cursor, 1), uint64(s.Slots())
	p, visited := from, int64(0)
	for ; p < end && visited < count && p-from < uint64(10*count); p++ {
		if s.IsLive(uint32(p)) {
			visited++
		}
	}
	next := uint64(0)
	if p < end {
		next = p
	}
	c.Out = resp.AppendBulkString(c.Out, strconv.FormatUint(next, 10))
	start, n := len(c.Out), 0
	for q := from; q < p; q++ {
		x := uint32(q)
		if !s.IsLive(x) {
			continue
		}
		m := values.MemberBytes(s.Member(x))
		if pattern != nil && !glob.Match(pattern, m, false) {
			continue
		}
		c.Bulk(m)
		c.Bulk(values.AppendD2String(num[:0], s.Score(x)))
		n += 2
	}
	c.SpliceHeader(start, '*', n)
}
