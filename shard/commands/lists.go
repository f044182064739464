package commands

import (
	"math"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// addListCommands registers the list commands' handlers.
func addListCommands(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("lpush", cmdLPush, keyspace.RouteKeys)
	add("rpush", cmdRPush, keyspace.RouteKeys)
	add("lpushx", cmdLPushX, keyspace.RouteKeys)
	add("rpushx", cmdRPushX, keyspace.RouteKeys)
	add("lpop", cmdLPop, keyspace.RouteKeys)
	add("rpop", cmdRPop, keyspace.RouteKeys)
	add("llen", cmdLLen, keyspace.RouteKeys)
	add("lrange", cmdLRange, keyspace.RouteKeys)
	add("lindex", cmdLIndex, keyspace.RouteKeys)
	add("lset", cmdLSet, keyspace.RouteKeys)
	add("linsert", cmdLInsert, keyspace.RouteKeys)
	add("lrem", cmdLRem, keyspace.RouteKeys)
	add("ltrim", cmdLTrim, keyspace.RouteKeys)
	add("lpos", cmdLPos, keyspace.RouteKeys)
	add("lmove", cmdLMove, keyspace.RouteKeys)
	add("rpoplpush", cmdRPopLPush, keyspace.RouteKeys)
	add("lmpop", cmdLMPop, keyspace.RouteKeySpecs)
	add("blpop", cmdBLPop, keyspace.RouteKeys)
	add("brpop", cmdBRPop, keyspace.RouteKeys)
	add("blmove", cmdBLMove, keyspace.RouteKeys)
	add("brpoplpush", cmdBRPopLPush, keyspace.RouteKeys)
	add("blmpop", cmdBLMPop, keyspace.RouteKeySpecs)
}

// fill is the list layout thresholds in effect (list-max-listpack-size,
// list-compress-depth).
func fill(c *keyspace.Ctx) *keyspace.EncodingLimits { return c.Limits() }

// newList adds key as an empty list in its listpack encoding.
func newList(d *keyspace.DB, key []byte) *keyspace.Object {
	o := d.Insert(key, keyspace.KindList)
	o.Enc = keyspace.EncListpack
	return o
}

// listDone accounts for o's change, publishes event (none when "") for
// key, and deletes the list when it became empty, as Redis deletes empty
// lists (with the del event), as Redis' listElementsRemoved.
func listDone(c *keyspace.Ctx, d *keyspace.DB, o *keyspace.Object, before int64, key []byte, event string) {
	d.ValueChanged(o, before)
	if event != "" {
		c.Notify(keyspace.NotifyList, event, key)
	}
	if keyspace.ListLen(o) == 0 {
		d.Remove(o)
		c.Notify(keyspace.NotifyGeneric, "del", key)
	}
}

// popEvent is the event of a pop from the front or the back.
func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

// pushEvent is the event of a push at the front or the back.
func pushEvent(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}

// listWhere reads LEFT or RIGHT (front true for LEFT), replying a syntax
// error otherwise, as Redis' getListPositionFromObjectOrReply.
func listWhere(c *keyspace.Ctx, a []byte) (front, ok bool) {
	switch {
	case resp.EqualFold(a, "left"):
		return true, true
	case resp.EqualFold(a, "right"):
		return false, true
	}
	c.SyntaxErr()
	return false, false
}

// parseLong reads an integer argument, replying Redis' generic error.
func parseLong(c *keyspace.Ctx, a []byte) (int64, bool) {
	n, ok := resp.ParseInt(a)
	if !ok {
		c.NotInteger()
	}
	return n, ok
}

// ---- push and pop -------------------------------------------------------------

func cmdLPush(c *keyspace.Ctx)  { listPushCmd(c, true, false) }
func cmdRPush(c *keyspace.Ctx)  { listPushCmd(c, false, false) }
func cmdLPushX(c *keyspace.Ctx) { listPushCmd(c, true, true) }
func cmdRPushX(c *keyspace.Ctx) { listPushCmd(c, false, true) }

func listPushCmd(c *keyspace.Ctx, front, xx bool) {
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindList)
	if !ok {
		return
	}
	var before int64
	if o == nil {
		if xx {
			c.Raw(resp.Zero)
			return
		}
		o = newList(d, key)
	} else {
		before = o.ValueMemory()
	}
	fill := fill(c)
	keyspace.ListPushMany(o, c.Args[2:], front, fill)
	d.ValueChanged(o, before)
	c.Int(int64(keyspace.ListLen(o)))
	c.Notify(keyspace.NotifyList, pushEvent(front), key) // after the reply, as Redis' pushGenericCommand
}

func cmdLPop(c *keyspace.Ctx) { listPopCmd(c, true) }
func cmdRPop(c *keyspace.Ctx) { listPopCmd(c, false) }

func listPopCmd(c *keyspace.Ctx, front bool) {
	if len(c.Args) > 3 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	hasCount := len(c.Args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = resp.ParseInt(c.Args[2]); !ok || count < 0 {
			c.Err("ERR value is out of range, must be positive")
			return
		}
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		if hasCount {
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
		} else {
			c.Null()
		}
		return
	}
	if !hasCount {
		before := o.ValueMemory()
		replyPop(c, o, front)
		listDone(c, d, o, before, key, popEvent(front))
		return
	}
	if count == 0 {
		c.Raw(resp.EmptyArray)
		return
	}
	listPopRange(c, d, key, o, front, count)
}

// replyPop pops o's first (front) or last element and replies it.
func replyPop(c *keyspace.Ctx, o *keyspace.Object, front bool) {
	if o.Enc == keyspace.EncQuicklist {
		c.Bulk(o.Coll().(*values.Quicklist).Pop(front)) // the bytes stay put until the next change
		return
	}
	if front {
		c.Bulk(keyspace.ListEnd(o, true)) // reply first: deleting moves the listpack's bytes
		o.SetBytes(listpack.Delete(o.Bytes(), listpack.First, 1))
		return
	}
	off := values.ListpackLastOffset(o.Bytes())
	v, _ := listpack.Next(o.Bytes(), off)
	c.Bulk(v)
	o.SetBytes(listpack.Delete(o.Bytes(), off, 1))
}

// listPopRange pops up to count elements from one end of o and replies them
// as an array, in the order they were popped.
func listPopRange(c *keyspace.Ctx, d *keyspace.DB, key []byte, o *keyspace.Object, front bool, count int64) {
	n := keyspace.ListLen(o)
	k := int(min(count, int64(n)))
	before := o.ValueMemory()
	c.Array(k)
	start := 0
	if !front {
		start = n - 1
	}
	it := keyspace.ListIterAt(o, start, !front)
	for range k {
		c.Bulk(it.Next())
	}
	keyspace.ListDelEnds(o, k, front)
	listDone(c, d, o, before, key, popEvent(front))
}

// ---- reads --------------------------------------------------------------------

func cmdLLen(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Raw(resp.Zero)
		return
	}
	c.Int(int64(keyspace.ListLen(o)))
}

func cmdLIndex(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	i, ok := parseLong(c, c.Args[2])
	if !ok {
		return
	}
	n := int64(keyspace.ListLen(o))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		c.Null()
		return
	}
	c.Bulk(keyspace.ListIndex(o, int(i)))
}

// listRange clamps start and end (inclusive, negative from the end) to a
// list of n elements as Redis' LRANGE and LTRIM do; empty is true when no
// element is in range.
func listRange(start, end, n int64) (s, e int64, empty bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= n {
		return 0, 0, true
	}
	if end >= n {
		end = n - 1
	}
	return start, end, false
}

func cmdLRange(c *keyspace.Ctx) {
	start, ok := parseLong(c, c.Args[2])
	if !ok {
		return
	}
	end, ok := parseLong(c, c.Args[3])
	if !ok {
		return
	}
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Raw(resp.EmptyArray)
		return
	}
	s, e, empty := listRange(start, end, int64(keyspace.ListLen(o)))
	if empty {
		c.Raw(resp.EmptyArray)
		return
	}
	k := int(e - s + 1)
	c.Array(k)
	it := keyspace.ListIterAt(o, int(s), false)
	for range k {
		c.Bulk(it.Next())
	}
}

func cmdLPos(c *keyspace.Ctx) {
	elem := c.Args[2]
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(c.Args); j++ {
		more := j+1 < len(c.Args)
		var ok bool
		switch a := c.Args[j]; {
		case resp.EqualFold(a, "rank") && more:
			j++
			if rank, ok = parseLong(c, c.Args[j]); !ok {
				return
			}
			if rank == 0 {
				c.Err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			if rank == math.MinInt64 {
				// Redis 7.0 negates it and gets it back: searching from the
				// tail, every match reaches that rank, so the first one counts.
				rank = -1
			}
		case resp.EqualFold(a, "count") && more:
			j++
			if count, ok = resp.ParseInt(c.Args[j]); !ok || count < 0 {
				c.Err("ERR COUNT can't be negative")
				return
			}
		case resp.EqualFold(a, "maxlen") && more:
			j++
			if maxlen, ok = resp.ParseInt(c.Args[j]); !ok || maxlen < 0 {
				c.Err("ERR MAXLEN can't be negative")
				return
			}
		default:
			c.SyntaxErr()
			return
		}
	}
	back := rank < 0
	if back {
		rank = -rank
	}
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		if count != -1 {
			c.Raw(resp.EmptyArray)
		} else {
			c.Null()
		}
		return
	}
	n := int64(keyspace.ListLen(o))
	scan := n
	if maxlen > 0 && maxlen < n {
		scan = maxlen
	}
	start := int64(0)
	if back {
		start = n - 1
	}
	it := keyspace.ListIterAt(o, int(start), back)
	var matches, found int64
	mark := len(c.Out)
	for i := int64(0); i < scan; i++ {
		if string(it.Next()) != string(elem) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		idx := i
		if back {
			idx = n - 1 - i
		}
		if count == -1 {
			c.Int(idx)
			return
		}
		c.Int(idx)
		found++
		if count != 0 && found >= count {
			break
		}
	}
	if count == -1 {
		c.Null()
		return
	}
	var hb [24]byte
	c.Out = slices.Insert(c.Out, mark, resp.AppendArrayHeader(hb[:0], int(found))...)
}

// ---- writes in place ------------------------------------------------------------

func cmdLSet(c *keyspace.Ctx) {
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Err("ERR no such key")
		return
	}
	i, ok := parseLong(c, c.Args[2])
	if !ok {
		return
	}
	n := int64(keyspace.ListLen(o))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		c.Err("ERR index out of range")
		return
	}
	before := o.ValueMemory()
	keyspace.ListSet(o, int(i), c.Args[3], fill(c))
	d.ValueChanged(o, before)
	c.OK()
	c.Notify(keyspace.NotifyList, "lset", key) // after the reply, as Redis
}

func cmdLInsert(c *keyspace.Ctx) {
	var after bool
	switch w := c.Args[2]; {
	case resp.EqualFold(w, "after"):
		after = true
	case resp.EqualFold(w, "before"):
	default:
		c.SyntaxErr()
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Raw(resp.Zero)
		return
	}
	before := o.ValueMemory()
	if !keyspace.ListInsert(o, c.Args[3], c.Args[4], after, fill(c)) {
		c.Int(-1)
		return
	}
	d.ValueChanged(o, before)
	c.Notify(keyspace.NotifyList, "linsert", key)
	c.Int(int64(keyspace.ListLen(o)))
}

func cmdLRem(c *keyspace.Ctx) {
	count, ok := parseLong(c, c.Args[2])
	if !ok {
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Raw(resp.Zero)
		return
	}
	before := o.ValueMemory()
	var removed int
	switch {
	case count == math.MinInt64: // Redis negates it and gets itself: no limit
		removed = keyspace.ListRemove(o, c.Args[3], 0, true)
	case count < 0:
		removed = keyspace.ListRemove(o, c.Args[3], int(-count), true)
	default:
		removed = keyspace.ListRemove(o, c.Args[3], int(count), false)
	}
	event := "lrem"
	if removed == 0 {
		event = ""
	}
	listDone(c, d, o, before, key, event)
	c.Int(int64(removed))
}

func cmdLTrim(c *keyspace.Ctx) {
	start, ok := parseLong(c, c.Args[2])
	if !ok {
		return
	}
	end, ok := parseLong(c, c.Args[3])
	if !ok {
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.OK()
		return
	}
	n := int64(keyspace.ListLen(o))
	ltrim, rtrim := n, int64(0)
	if s, e, empty := listRange(start, end, n); !empty {
		ltrim, rtrim = s, n-e-1
	}
	before := o.ValueMemory()
	keyspace.ListDelEnds(o, int(ltrim), true)
	keyspace.ListDelEnds(o, int(rtrim), false)
	listDone(c, d, o, before, key, "ltrim")
	c.OK()
}

// ---- moves ----------------------------------------------------------------------

func cmdLMove(c *keyspace.Ctx) {
	from, ok := listWhere(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listWhere(c, c.Args[4])
	if !ok {
		return
	}
	lmove(c, from, to)
}

func cmdRPopLPush(c *keyspace.Ctx) { lmove(c, false, true) }

// lmove pops from args[1]'s front (from) or back and pushes the element at
// args[2]'s front (to) or back, replying with it, as Redis'
// lmoveGenericCommand.
func lmove(c *keyspace.Ctx, from, to bool) {
	src, dst := c.Args[1], c.Args[2]
	sd := c.DBFor(src)
	so, ok := c.WriteKind(sd, src, keyspace.KindList)
	if !ok {
		return
	}
	if so == nil {
		c.Null()
		return
	}
	dd := c.DBFor(dst)
	do, ok := c.WriteKind(dd, dst, keyspace.KindList)
	if !ok {
		return
	}
	fill := fill(c)
	// The element is copied out: popping may move the bytes it lives in.
	var buf [64]byte
	v := append(buf[:0], keyspace.ListEnd(so, from)...)
	before := so.ValueMemory()
	keyspace.ListDelEnds(so, 1, from)
	if so == do {
		keyspace.ListPush(so, v, to, fill)
		sd.ValueChanged(so, before)
		c.Notify(keyspace.NotifyList, pushEvent(to), dst)
		c.Bulk(v)
		c.Notify(keyspace.NotifyList, popEvent(from), src)
		return
	}
	// As Redis' lmoveGenericCommand: the push (and its event) first, the
	// reply, then the pop's event and the source's deletion.
	dstBefore := int64(0)
	if do == nil {
		do = newList(dd, dst)
	} else {
		dstBefore = do.ValueMemory()
	}
	keyspace.ListPush(do, v, to, fill)
	dd.ValueChanged(do, dstBefore)
	c.Notify(keyspace.NotifyList, pushEvent(to), dst)
	c.Bulk(v)
	listDone(c, sd, so, before, src, popEvent(from))
}

func cmdLMPop(c *keyspace.Ctx) {
	keys, front, count, ok := parseMPop(c, 1)
	if !ok {
		return
	}
	for _, key := range keys {
		d := c.DBFor(key)
		o, ok := c.WriteKind(d, key, keyspace.KindList)
		if !ok {
			return
		}
		if o != nil {
			c.Array(2)
			c.Bulk(key)
			logPop(c, key, front, min(count, int64(keyspace.ListLen(o))))
			listPopRange(c, d, key, o, front, count)
			return
		}
	}
	c.Out = resp.AppendNullArray(c.Out, c.RESP3)
}

// listDirection is LEFT or RIGHT as Redis writes them in the records of
// served blocking commands.
func listDirection(front bool) []byte {
	if front {
		return []byte("left")
	}
	return []byte("right")
}

var (
	cmdLPOP      = []byte("LPOP")
	cmdRPOP      = []byte("RPOP")
	cmdLMOVE     = []byte("LMOVE")
	cmdRPOPLPUSH = []byte("RPOPLPUSH")
)

// logPop records a pop from a served blocking command or an [B]LMPOP as
// Redis propagates it: LPOP or RPOP key, with the number popped when n >= 0.
func logPop(c *keyspace.Ctx, key []byte, front bool, n int64) {
	if !c.Logging() {
		return
	}
	name := cmdRPOP
	if front {
		name = cmdLPOP
	}
	if n < 0 {
		c.LogAs(name, key)
		return
	}
	c.LogAs(name, key, strconv.AppendInt(c.Scratch[:0], n, 10))
}

// parseMPop parses [B]LMPOP's arguments from numkeys (at args[numIdx]) on,
// as Redis' lmpopGenericCommand.
func parseMPop(c *keyspace.Ctx, numIdx int) (keys [][]byte, front bool, count int64, ok bool) {
	numkeys, ok := resp.ParseInt(c.Args[numIdx])
	if !ok || numkeys < 1 {
		c.Err("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if numkeys >= int64(len(c.Args)-numIdx-1) {
		c.SyntaxErr()
		return nil, false, 0, false
	}
	whereIdx := numIdx + int(numkeys) + 1
	if front, ok = listWhere(c, c.Args[whereIdx]); !ok {
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && resp.EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			j++
			if count, ok = resp.ParseInt(c.Args[j]); !ok || count < 1 {
				c.Err("ERR count should be greater than 0")
				return nil, false, 0, false
			}
			continue
		}
		c.SyntaxErr()
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return c.Args[numIdx+1 : whereIdx], front, count, true
}

// ---- blocking -------------------------------------------------------------------

// blockingListLookup looks key up for a blocking command: nil when it holds
// nothing to pop. ok is false when the handler must stop: after replying
// WRONGTYPE, or, while a woken client is served, silently (Redis serves a
// woken client only from a list, and leaves it waiting otherwise).
func blockingListLookup(c *keyspace.Ctx, d *keyspace.DB, key []byte) (o *keyspace.Object, ok bool) {
	o = d.Lookup(key, c.Now)
	if o != nil && o.Kind != keyspace.KindList {
		if !c.Serving() {
			c.WrongType()
		}
		return nil, false
	}
	return o, true
}

func cmdBLPop(c *keyspace.Ctx) { blockingPop(c, true) }
func cmdBRPop(c *keyspace.Ctx) { blockingPop(c, false) }

func blockingPop(c *keyspace.Ctx, front bool) {
	deadline, ok := c.ParseTimeout(c.Args[len(c.Args)-1], true)
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	for _, key := range keys {
		if !c.Servable(key) {
			continue
		}
		d := c.DBFor(key)
		o, ok := blockingListLookup(c, d, key)
		if !ok {
			return
		}
		if o == nil {
			continue
		}
		before := o.ValueMemory()
		c.Array(2)
		c.Bulk(key)
		replyPop(c, o, front)
		listDone(c, d, o, before, key, popEvent(front))
		logPop(c, key, front, -1)
		return
	}
	c.Block(keys, deadline, keyspace.TimeoutNullArray)
}

func cmdBLMove(c *keyspace.Ctx) {
	from, ok := listWhere(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listWhere(c, c.Args[4])
	if !ok {
		return
	}
	blmove(c, c.Args[5], from, to)
}

func cmdBRPopLPush(c *keyspace.Ctx) { blmove(c, c.Args[3], false, true) }

func blmove(c *keyspace.Ctx, timeout []byte, from, to bool) {
	deadline, ok := c.ParseTimeout(timeout, true)
	if !ok {
		return
	}
	src := c.Args[1]
	if c.Servable(src) {
		o, ok := blockingListLookup(c, c.DBFor(src), src)
		if !ok {
			return
		}
		if o != nil {
			lmove(c, from, to)
			// As Redis: the non-blocking form, the directions as given, or
			// as serveClientBlockedOnList writes them for a woken client.
			switch {
			case len(c.Args) == 6 && !c.Serving():
				c.LogAs(cmdLMOVE, c.Args[1], c.Args[2], c.Args[3], c.Args[4])
			case len(c.Args) == 6:
				c.LogAs(cmdLMOVE, c.Args[1], c.Args[2], listDirection(from), listDirection(to))
			default:
				c.LogAs(cmdRPOPLPUSH, c.Args[1], c.Args[2])
			}
			return
		}
	}
	c.Block(c.Args[1:2], deadline, keyspace.TimeoutNullBulk)
}

func cmdBLMPop(c *keyspace.Ctx) {
	keys, front, count, ok := parseMPop(c, 2)
	if !ok {
		return
	}
	deadline, ok := c.ParseTimeout(c.Args[1], true)
	if !ok {
		return
	}
	for _, key := range keys {
		if !c.Servable(key) {
			continue
		}
		d := c.DBFor(key)
		o, ok := blockingListLookup(c, d, key)
		if !ok {
			return
		}
		if o != nil {
			c.Array(2)
			c.Bulk(key)
			logPop(c, key, front, min(count, int64(keyspace.ListLen(o))))
			listPopRange(c, d, key, o, front, count)
			return
		}
	}
	c.Block(keys, deadline, keyspace.TimeoutNullArray)
}
