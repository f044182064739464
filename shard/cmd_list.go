package shard

import (
	"math"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// addListCommands registers the list commands' handlers.
func addListCommands(add func(name string, h handler, r routeKind)) {
	add("lpush", cmdLPush, routeKeys)
	add("rpush", cmdRPush, routeKeys)
	add("lpushx", cmdLPushX, routeKeys)
	add("rpushx", cmdRPushX, routeKeys)
	add("lpop", cmdLPop, routeKeys)
	add("rpop", cmdRPop, routeKeys)
	add("llen", cmdLLen, routeKeys)
	add("lrange", cmdLRange, routeKeys)
	add("lindex", cmdLIndex, routeKeys)
	add("lset", cmdLSet, routeKeys)
	add("linsert", cmdLInsert, routeKeys)
	add("lrem", cmdLRem, routeKeys)
	add("ltrim", cmdLTrim, routeKeys)
	add("lpos", cmdLPos, routeKeys)
	add("lmove", cmdLMove, routeKeys)
	add("rpoplpush", cmdRPopLPush, routeKeys)
	add("lmpop", cmdLMPop, routeKeySpecs)
	add("blpop", cmdBLPop, routeKeys)
	add("brpop", cmdBRPop, routeKeys)
	add("blmove", cmdBLMove, routeKeys)
	add("brpoplpush", cmdBRPopLPush, routeKeys)
	add("blmpop", cmdBLMPop, routeKeySpecs)
}

// fill is list-max-listpack-size.
func (c *Ctx) fill() int64 { return c.limits().ListMaxListpackSize }

// newList adds key as an empty list in its listpack encoding.
func newList(d *DB, key []byte) *object {
	o := d.insert(key, KindList)
	o.enc = encListpack
	return o
}

// listDone accounts for o's change and deletes it when it became empty, as
// Redis deletes empty lists.
func listDone(d *DB, o *object, before int64) {
	d.valueChanged(o, before)
	if listLen(o) == 0 {
		d.remove(o)
	}
}

// listWhere reads LEFT or RIGHT (front true for LEFT), replying a syntax
// error otherwise, as Redis' getListPositionFromObjectOrReply.
func (c *Ctx) listWhere(a []byte) (front, ok bool) {
	switch {
	case resp.EqualFold(a, "left"):
		return true, true
	case resp.EqualFold(a, "right"):
		return false, true
	}
	c.syntaxErr()
	return false, false
}

// parseLong reads an integer argument, replying Redis' generic error.
func (c *Ctx) parseLong(a []byte) (int64, bool) {
	n, ok := resp.ParseInt(a)
	if !ok {
		c.notInteger()
	}
	return n, ok
}

// ---- push and pop -------------------------------------------------------------

func cmdLPush(c *Ctx)  { c.listPushCmd(true, false) }
func cmdRPush(c *Ctx)  { c.listPushCmd(false, false) }
func cmdLPushX(c *Ctx) { c.listPushCmd(true, true) }
func cmdRPushX(c *Ctx) { c.listPushCmd(false, true) }

func (c *Ctx) listPushCmd(front, xx bool) {
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindList)
	if !ok {
		return
	}
	var before int64
	if o == nil {
		if xx {
			c.raw(resp.Zero)
			return
		}
		o = newList(d, key)
	} else {
		before = o.valueMemory()
	}
	fill := c.fill()
	for _, v := range c.Args[2:] {
		listPush(o, v, front, fill)
	}
	d.valueChanged(o, before)
	c.int(int64(listLen(o)))
}

func cmdLPop(c *Ctx) { c.listPopCmd(true) }
func cmdRPop(c *Ctx) { c.listPopCmd(false) }

func (c *Ctx) listPopCmd(front bool) {
	if len(c.Args) > 3 {
		c.Out = resp.AppendErrWrongArity(c.Out, c.Args[0])
		return
	}
	hasCount := len(c.Args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = resp.ParseInt(c.Args[2]); !ok || count < 0 {
			c.err("ERR value is out of range, must be positive")
			return
		}
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindList)
	if !ok {
		return
	}
	if o == nil {
		if hasCount {
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
		} else {
			c.null()
		}
		return
	}
	if !hasCount {
		before := o.valueMemory()
		c.replyPop(o, front)
		listDone(d, o, before)
		return
	}
	if count == 0 {
		c.raw(resp.EmptyArray)
		return
	}
	c.listPopRange(d, o, front, count)
}

// replyPop pops o's first (front) or last element and replies it.
func (c *Ctx) replyPop(o *object, front bool) {
	if o.enc == encQuicklist {
		c.bulk(o.coll.(*values.Quicklist).Pop(front)) // the bytes stay put until the next change
		return
	}
	if front {
		c.bulk(listEnd(o, true)) // reply first: deleting moves the listpack's bytes
		o.str = listpack.Delete(o.str, listpack.First, 1)
		return
	}
	off := values.ListpackLastOffset(o.str)
	v, _ := listpack.Next(o.str, off)
	c.bulk(v)
	o.str = listpack.Delete(o.str, off, 1)
}

// listPopRange pops up to count elements from one end of o and replies them
// as an array, in the order they were popped.
func (c *Ctx) listPopRange(d *DB, o *object, front bool, count int64) {
	n := listLen(o)
	k := int(min(count, int64(n)))
	before := o.valueMemory()
	c.array(k)
	start := 0
	if !front {
		start = n - 1
	}
	it := listIterAt(o, start, !front)
	for range k {
		c.bulk(it.Next())
	}
	listDelEnds(o, k, front)
	listDone(d, o, before)
}

// ---- reads --------------------------------------------------------------------

func cmdLLen(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.raw(resp.Zero)
		return
	}
	c.int(int64(listLen(o)))
}

func cmdLIndex(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.null()
		return
	}
	i, ok := c.parseLong(c.Args[2])
	if !ok {
		return
	}
	n := int64(listLen(o))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		c.null()
		return
	}
	c.bulk(listIndex(o, int(i)))
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

func cmdLRange(c *Ctx) {
	start, ok := c.parseLong(c.Args[2])
	if !ok {
		return
	}
	end, ok := c.parseLong(c.Args[3])
	if !ok {
		return
	}
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.raw(resp.EmptyArray)
		return
	}
	s, e, empty := listRange(start, end, int64(listLen(o)))
	if empty {
		c.raw(resp.EmptyArray)
		return
	}
	k := int(e - s + 1)
	c.array(k)
	it := listIterAt(o, int(s), false)
	for range k {
		c.bulk(it.Next())
	}
}

func cmdLPos(c *Ctx) {
	elem := c.Args[2]
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(c.Args); j++ {
		more := j+1 < len(c.Args)
		var ok bool
		switch a := c.Args[j]; {
		case resp.EqualFold(a, "rank") && more:
			j++
			if rank, ok = c.parseLong(c.Args[j]); !ok {
				return
			}
			if rank == 0 {
				c.err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
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
				c.err("ERR COUNT can't be negative")
				return
			}
		case resp.EqualFold(a, "maxlen") && more:
			j++
			if maxlen, ok = resp.ParseInt(c.Args[j]); !ok || maxlen < 0 {
				c.err("ERR MAXLEN can't be negative")
				return
			}
		default:
			c.syntaxErr()
			return
		}
	}
	back := rank < 0
	if back {
		rank = -rank
	}
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindList)
	if !ok {
		return
	}
	if o == nil {
		if count != -1 {
			c.raw(resp.EmptyArray)
		} else {
			c.null()
		}
		return
	}
	n := int64(listLen(o))
	scan := n
	if maxlen > 0 && maxlen < n {
		scan = maxlen
	}
	start := int64(0)
	if back {
		start = n - 1
	}
	it := listIterAt(o, int(start), back)
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
			c.int(idx)
			return
		}
		c.int(idx)
		found++
		if count != 0 && found >= count {
			break
		}
	}
	if count == -1 {
		c.null()
		return
	}
	var hb [24]byte
	c.Out = slices.Insert(c.Out, mark, resp.AppendArrayHeader(hb[:0], int(found))...)
}

// ---- writes in place ------------------------------------------------------------

func cmdLSet(c *Ctx) {
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.err("ERR no such key")
		return
	}
	i, ok := c.parseLong(c.Args[2])
	if !ok {
		return
	}
	n := int64(listLen(o))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		c.err("ERR index out of range")
		return
	}
	before := o.valueMemory()
	listSet(o, int(i), c.Args[3], c.fill())
	d.valueChanged(o, before)
	c.ok()
}

func cmdLInsert(c *Ctx) {
	var after bool
	switch w := c.Args[2]; {
	case resp.EqualFold(w, "after"):
		after = true
	case resp.EqualFold(w, "before"):
	default:
		c.syntaxErr()
		return
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.raw(resp.Zero)
		return
	}
	before := o.valueMemory()
	if !listInsert(o, c.Args[3], c.Args[4], after, c.fill()) {
		c.int(-1)
		return
	}
	d.valueChanged(o, before)
	c.int(int64(listLen(o)))
}

func cmdLRem(c *Ctx) {
	count, ok := c.parseLong(c.Args[2])
	if !ok {
		return
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.raw(resp.Zero)
		return
	}
	before := o.valueMemory()
	var removed int
	switch {
	case count == math.MinInt64: // Redis negates it and gets itself: no limit
		removed = listRemove(o, c.Args[3], 0, true)
	case count < 0:
		removed = listRemove(o, c.Args[3], int(-count), true)
	default:
		removed = listRemove(o, c.Args[3], int(count), false)
	}
	listDone(d, o, before)
	c.int(int64(removed))
}

func cmdLTrim(c *Ctx) {
	start, ok := c.parseLong(c.Args[2])
	if !ok {
		return
	}
	end, ok := c.parseLong(c.Args[3])
	if !ok {
		return
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindList)
	if !ok {
		return
	}
	if o == nil {
		c.ok()
		return
	}
	n := int64(listLen(o))
	ltrim, rtrim := n, int64(0)
	if s, e, empty := listRange(start, end, n); !empty {
		ltrim, rtrim = s, n-e-1
	}
	before := o.valueMemory()
	listDelEnds(o, int(ltrim), true)
	listDelEnds(o, int(rtrim), false)
	listDone(d, o, before)
	c.ok()
}

// ---- moves ----------------------------------------------------------------------

func cmdLMove(c *Ctx) {
	from, ok := c.listWhere(c.Args[3])
	if !ok {
		return
	}
	to, ok := c.listWhere(c.Args[4])
	if !ok {
		return
	}
	c.lmove(from, to)
}

func cmdRPopLPush(c *Ctx) { c.lmove(false, true) }

// lmove pops from args[1]'s front (from) or back and pushes the element at
// args[2]'s front (to) or back, replying with it, as Redis'
// lmoveGenericCommand.
func (c *Ctx) lmove(from, to bool) {
	src, dst := c.Args[1], c.Args[2]
	sd := c.db(src)
	so, ok := c.writeKind(sd, src, KindList)
	if !ok {
		return
	}
	if so == nil {
		c.null()
		return
	}
	dd := c.db(dst)
	do, ok := c.writeKind(dd, dst, KindList)
	if !ok {
		return
	}
	fill := c.fill()
	// The element is copied out: popping may move the bytes it lives in.
	var buf [64]byte
	v := append(buf[:0], listEnd(so, from)...)
	before := so.valueMemory()
	listDelEnds(so, 1, from)
	if so == do {
		listPush(so, v, to, fill)
		sd.valueChanged(so, before)
		c.bulk(v)
		return
	}
	listDone(sd, so, before)
	before = 0
	if do == nil {
		do = newList(dd, dst)
	} else {
		before = do.valueMemory()
	}
	listPush(do, v, to, fill)
	dd.valueChanged(do, before)
	c.bulk(v)
}

func cmdLMPop(c *Ctx) {
	keys, front, count, ok := c.parseMPop(1)
	if !ok {
		return
	}
	for _, key := range keys {
		d := c.db(key)
		o, ok := c.writeKind(d, key, KindList)
		if !ok {
			return
		}
		if o != nil {
			c.array(2)
			c.bulk(key)
			c.logPop(key, front, min(count, int64(listLen(o))))
			c.listPopRange(d, o, front, count)
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
func (c *Ctx) logPop(key []byte, front bool, n int64) {
	if !c.logging() {
		return
	}
	name := cmdRPOP
	if front {
		name = cmdLPOP
	}
	if n < 0 {
		c.logAs(name, key)
		return
	}
	c.logAs(name, key, strconv.AppendInt(c.num[:0], n, 10))
}

// parseMPop parses [B]LMPOP's arguments from numkeys (at args[numIdx]) on,
// as Redis' lmpopGenericCommand.
func (c *Ctx) parseMPop(numIdx int) (keys [][]byte, front bool, count int64, ok bool) {
	numkeys, ok := resp.ParseInt(c.Args[numIdx])
	if !ok || numkeys < 1 {
		c.err("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if numkeys >= int64(len(c.Args)-numIdx-1) {
		c.syntaxErr()
		return nil, false, 0, false
	}
	whereIdx := numIdx + int(numkeys) + 1
	if front, ok = c.listWhere(c.Args[whereIdx]); !ok {
		return nil, false, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && resp.EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			j++
			if count, ok = resp.ParseInt(c.Args[j]); !ok || count < 1 {
				c.err("ERR count should be greater than 0")
				return nil, false, 0, false
			}
			continue
		}
		c.syntaxErr()
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
func (c *Ctx) blockingListLookup(d *DB, key []byte) (o *object, ok bool) {
	o = d.lookup(key, c.Now)
	if o != nil && o.kind != KindList {
		if c.ready == nil {
			c.wrongType()
		}
		return nil, false
	}
	return o, true
}

func cmdBLPop(c *Ctx) { c.blockingPop(true) }
func cmdBRPop(c *Ctx) { c.blockingPop(false) }

func (c *Ctx) blockingPop(front bool) {
	deadline, ok := c.parseTimeout(c.Args[len(c.Args)-1], true)
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	for _, key := range keys {
		if !c.servable(key) {
			continue
		}
		d := c.db(key)
		o, ok := c.blockingListLookup(d, key)
		if !ok {
			return
		}
		if o == nil {
			continue
		}
		before := o.valueMemory()
		c.array(2)
		c.bulk(key)
		c.replyPop(o, front)
		listDone(d, o, before)
		c.logPop(key, front, -1)
		return
	}
	c.block(keys, deadline, timeoutNullArray)
}

func cmdBLMove(c *Ctx) {
	from, ok := c.listWhere(c.Args[3])
	if !ok {
		return
	}
	to, ok := c.listWhere(c.Args[4])
	if !ok {
		return
	}
	c.blmove(c.Args[5], from, to)
}

func cmdBRPopLPush(c *Ctx) { c.blmove(c.Args[3], false, true) }

func (c *Ctx) blmove(timeout []byte, from, to bool) {
	deadline, ok := c.parseTimeout(timeout, true)
	if !ok {
		return
	}
	src := c.Args[1]
	if c.servable(src) {
		o, ok := c.blockingListLookup(c.db(src), src)
		if !ok {
			return
		}
		if o != nil {
			c.lmove(from, to)
			// As Redis: the non-blocking form, the directions as given, or
			// as serveClientBlockedOnList writes them for a woken client.
			switch {
			case len(c.Args) == 6 && c.ready == nil:
				c.logAs(cmdLMOVE, c.Args[1], c.Args[2], c.Args[3], c.Args[4])
			case len(c.Args) == 6:
				c.logAs(cmdLMOVE, c.Args[1], c.Args[2], listDirection(from), listDirection(to))
			default:
				c.logAs(cmdRPOPLPUSH, c.Args[1], c.Args[2])
			}
			return
		}
	}
	c.block(c.Args[1:2], deadline, timeoutNullBulk)
}

func cmdBLMPop(c *Ctx) {
	keys, front, count, ok := c.parseMPop(2)
	if !ok {
		return
	}
	deadline, ok := c.parseTimeout(c.Args[1], true)
	if !ok {
		return
	}
	for _, key := range keys {
		if !c.servable(key) {
			continue
		}
		d := c.db(key)
		o, ok := c.blockingListLookup(d, key)
		if !ok {
			return
		}
		if o != nil {
			c.array(2)
			c.bulk(key)
			c.logPop(key, front, min(count, int64(listLen(o))))
			c.listPopRange(d, o, front, count)
			return
		}
	}
	c.block(keys, deadline, timeoutNullArray)
}
