package shard

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
)

// addStreamCommands registers the stream commands' handlers.
func addStreamCommands(add func(name string, h handler, r routeKind)) {
	add("xadd", cmdXAdd, routeKeys)
	add("xlen", cmdXLen, routeKeys)
	add("xrange", cmdXRange, routeKeys)
	add("xrevrange", cmdXRevRange, routeKeys)
	add("xdel", cmdXDel, routeKeys)
	add("xtrim", cmdXTrim, routeKeys)
	add("xread", cmdXRead, routeKeySpecs)
	add("xreadgroup", cmdXReadGroup, routeKeySpecs)
	add("xgroup", cmdXGroup, routeSubKey)
	add("xack", cmdXAck, routeKeys)
	add("xpending", cmdXPending, routeKeys)
	add("xinfo", cmdXInfo, routeSubKey)
	add("xsetid", cmdXSetID, routeKeys)
	add("xclaim", cmdXClaim, routeKeys)
	add("xautoclaim", cmdXAutoClaim, routeKeys)
}

func streamOf(o *object) *values.Stream { return o.coll.(*values.Stream) }

// groupsChanged accounts for a change of o's memory made by consumer-group
// bookkeeping (XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XGROUP): the memory
// part of valueChanged only, since Redis does not count these as modifying
// the key (WATCH stays clean), as it does XADD and an XDEL or XTRIM that
// deletes.
func (d *DB) groupsChanged(o *object, before int64) {
	if delta := o.valueMemory() - before; delta != 0 {
		d.memory.Add(delta)
	}
}

// newStreamKey creates key holding an empty stream (accounted by the caller
// with d.valueChanged(o, 0)).
func newStreamKey(d *DB, key []byte) *object {
	o := d.insert(key, KindStream)
	o.enc = encStream
	o.coll = values.NewStream()
	return o
}

// insertArrayHeader puts an aggregate header ('*' array, '%' map) for n
// elements at dst[pos:], in front of what was appended from pos on: for
// replies whose length is known only once written.
func insertArrayHeader(dst []byte, pos int, typ byte, n int) []byte {
	var hdr [24]byte
	h := append(hdr[:0], typ)
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	return insertBytes(dst, pos, h)
}

// insertBytes inserts b at dst[pos:].
func insertBytes(dst []byte, pos int, b []byte) []byte {
	end := len(dst)
	dst = append(dst, b...)
	copy(dst[pos+len(b):], dst[pos:end])
	copy(dst[pos:], b)
	return dst
}

// replyEntry replies [id, [field, value, ...]] for entry e of block b.
func (c *Ctx) replyEntry(b *values.StreamBlock, e *values.StreamEntry) {
	c.array(2)
	c.bulkID(e.Id)
	c.array(int(e.Nf) * 2)
	for it := b.Fields(e); ; {
		f, v, ok := it.Next()
		if !ok {
			return
		}
		c.bulk(f)
		c.bulk(v)
	}
}

// replyRange is streamReplyWithRange: the live entries from start to end
// (inclusive), at most count (0 = all), as an array unless raw. With a
// group, entries delivered advance the group and (unless noack) become
// pending for cons. It returns how many entries it sent.
//
// For XREADGROUP, gl says where to log each new pending entry (an XCLAIM, as
// Redis' streamReplyWithRange propagates it); nil otherwise.
func (c *Ctx) replyRange(s *values.Stream, start, end values.StreamID, count int64, rev bool, g *values.StreamGroup, cons *values.StreamConsumer, noack, raw bool, gl *groupLog) int64 {
	pos := len(c.Out)
	var n int64
	p := s.SeekGE(start)
	if rev {
		p = s.SeekLE(end)
	}
	for s.Valid(p) {
		b := s.Blocks[p.B]
		e := &b.Ents[p.E]
		if !rev && end.Less(e.Id) || rev && e.Id.Less(start) {
			break
		}
		if e.Flags&values.EntryDeleted == 0 {
			if g != nil {
				s.Delivered(g, e.Id)
			}
			c.replyEntry(b, e)
			if g != nil && !noack {
				s.AddNACK(g, cons, e.Id, gl.now)
				gl.xclaim(c, g, e.Id, g.Pel.Get(e.Id))
			}
			n++
			if n == count {
				break
			}
		}
		if rev {
			p = s.Prev(p)
		} else {
			p = s.Next(p)
		}
	}
	if !raw {
		c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
	}
	return n
}

// replyEntryByID replies the live entry id raw and reports whether it exists.
func (c *Ctx) replyEntryByID(s *values.Stream, id values.StreamID) bool {
	p, ok := s.Find(id)
	if ok {
		c.replyEntry(s.Blocks[p.B], s.Ent(p))
	}
	return ok
}

// errNoGroup replies Redis' -NOGROUP for a missing key or group.
func (c *Ctx) errNoGroup(key, group []byte) {
	c.err("NOGROUP No such key '" + cString(key) + "' or consumer group '" + cString(group) + "'")
}

func (c *Ctx) noGroupForKey(group, key []byte) {
	c.err("NOGROUP No such consumer group '" + cString(group) + "' for key name '" + cString(key) + "'")
}

// cString is b up to its first NUL, as C's %s prints it.
func cString(b []byte) string {
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ---- what the append-only log records for consumer groups -------------------

var (
	cmdXCLAIM         = []byte("XCLAIM")
	cmdXGROUP         = []byte("XGROUP")
	argSETID          = []byte("SETID")
	argCREATECONSUMER = []byte("CREATECONSUMER")
	argENTRIESREAD    = []byte("ENTRIESREAD")
	argTIME           = []byte("TIME")
	argRETRYCOUNT     = []byte("RETRYCOUNT")
	argFORCE          = []byte("FORCE")
	argJUSTID         = []byte("JUSTID")
	argLASTID         = []byte("LASTID")
	argZero           = []byte("0")
)

// groupLog is what a command that changes a consumer group (XREADGROUP,
// XCLAIM, XAUTOCLAIM) logs through: the group's database, key and name as
// given, and the time it records. Consumer-group changes do not signal the
// key (WATCH stays clean, as in Redis) but count as changes of the dataset
// (Redis' server.dirty), so that the log records them.
type groupLog struct {
	d          *DB
	key, group []byte
	now        int64
}

func (gl *groupLog) changed() { gl.d.countChange() }

// xclaim records the pending entry id (its NACK n) as Redis'
// streamPropagateXCLAIM: XCLAIM key group <n's consumer> 0 id TIME
// <delivery time> RETRYCOUNT <count> FORCE JUSTID LASTID <group's last ID>,
// which replays to the same NACK whatever the state (and, for an entry no
// longer in the stream, drops it as the command did).
func (gl *groupLog) xclaim(c *Ctx, g *values.StreamGroup, id values.StreamID, n *values.StreamNACK) {
	gl.changed()
	if !c.logging() {
		return
	}
	var idBuf, lastBuf [41]byte
	var timeBuf, countBuf [20]byte
	c.logAs(cmdXCLAIM, gl.key, gl.group, []byte(n.Consumer.Name), argZero,
		values.AppendStreamID(idBuf[:0], id),
		argTIME, strconv.AppendInt(timeBuf[:0], n.DeliveryTime, 10),
		argRETRYCOUNT, strconv.AppendInt(countBuf[:0], n.DeliveryCount, 10),
		argFORCE, argJUSTID, argLASTID, values.AppendStreamID(lastBuf[:0], g.LastID))
}

// setID records g's last ID and entries-read counter as Redis'
// streamPropagateGroupID: XGROUP SETID key group <last ID> ENTRIESREAD <n>.
func (gl *groupLog) setID(c *Ctx, g *values.StreamGroup) {
	gl.changed()
	if !c.logging() {
		return
	}
	var lastBuf [41]byte
	var readBuf [20]byte
	c.logAs(cmdXGROUP, argSETID, gl.key, gl.group, values.AppendStreamID(lastBuf[:0], g.LastID),
		argENTRIESREAD, strconv.AppendInt(readBuf[:0], g.EntriesRead, 10))
}

// createConsumer records the creation of consumer as Redis'
// streamPropagateConsumerCreation: XGROUP CREATECONSUMER key group consumer.
func (gl *groupLog) createConsumer(c *Ctx, consumer []byte) {
	gl.changed()
	c.logAs(cmdXGROUP, argCREATECONSUMER, gl.key, gl.group, consumer)
}

// ---- XADD XTRIM --------------------------------------------------------------

// xaddArgs are XADD's options; XTRIM uses the trimming part.
type xaddArgs struct {
	values.TrimArgs
	id         values.StreamID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
}

// parseAddTrim is streamParseAddOrTrimArgsOrReply: it returns the index of
// XADD's ID argument (len(args) when there is none), or -1 after replying.
func (c *Ctx) parseAddTrim(a *xaddArgs, xadd bool) int {
	args := c.Args
	limitGiven := false
	i := 2
loop:
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			break loop
		case more > 0 && (resp.EqualFold(opt, "maxlen") || resp.EqualFold(opt, "minid")):
			if a.Strategy != values.TrimNone {
				c.err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return -1
			}
			a.Approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.Approx = next[0] == '~'
				i++
			}
			if opt[1]|0x20 == 'a' { // MAXLEN
				v, ok := resp.ParseInt(args[i+1])
				if !ok {
					c.notInteger()
					return -1
				}
				if v < 0 {
					c.err("ERR The MAXLEN argument must be >= 0.")
					return -1
				}
				a.MaxLen = v
				a.Strategy = values.TrimMaxLen
			} else {
				id, ok := c.parseID(args[i+1], 0, true)
				if !ok {
					return -1
				}
				a.MinID = id
				a.Strategy = values.TrimMinID
			}
			i++
			a.ArgIdx = i
		case more > 0 && resp.EqualFold(opt, "limit"):
			v, ok := resp.ParseInt(args[i+1])
			if !ok {
				c.notInteger()
				return -1
			}
			if v < 0 {
				c.err("ERR The LIMIT argument must be >= 0.")
				return -1
			}
			a.Limit = v
			limitGiven = true
			i++
		case xadd && resp.EqualFold(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, ok := values.ParseStreamID(opt, 0, true, &a.seqGiven)
			if !ok {
				c.err(errInvalidStreamID)
				return -1
			}
			a.id, a.idGiven = id, true
			break loop
		default:
			c.syntaxErr()
			return -1
		}
	}
	if a.Limit != 0 && a.Strategy == values.TrimNone {
		c.err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if !xadd && a.Strategy == values.TrimNone {
		c.err("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	switch {
	case c.loading(args[1]):
		// From the append-only file: trimming is exact there (the log
		// records "~" as "=" with the resulting threshold), so LIMIT, kept
		// in the record as Redis keeps it, must neither fail nor stop it.
		a.Limit = 0
	case limitGiven && !a.Approx:
		c.err("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return -1
	case limitGiven:
	case a.Approx:
		// At most 100 nodes' worth of entries, capped both ways as Redis does.
		switch n := c.limits().StreamNodeMaxEntries; {
		case n <= 0:
			a.Limit = 10000
		case n > 10000:
			a.Limit = 1000000
		default:
			a.Limit = 100 * n
		}
	default:
		a.Limit = 0
	}
	return i
}

func cmdXAdd(c *Ctx) {
	var a xaddArgs
	idPos := c.parseAddTrim(&a, true)
	if idPos < 0 {
		return
	}
	args := c.Args
	fieldPos := idPos + 1
	if nf := len(args) - fieldPos; nf < 2 || nf%2 == 1 {
		c.Out = resp.AppendErrWrongArity(c.Out, []byte(c.Cmd.FullName))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.err("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindStream)
	if !ok {
		return
	}
	existed := o != nil
	var before int64
	if o == nil {
		if a.noMkStream {
			c.null()
			return
		}
		o = newStreamKey(d, key)
	} else {
		before = o.valueMemory()
	}
	s := streamOf(o)
	if !existed {
		// Accounted now: an error below leaves the new, empty stream behind,
		// as in Redis.
		d.valueChanged(o, 0)
		before = o.valueMemory()
	}
	if s.LastID == values.MaxStreamID {
		c.err("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	var id values.StreamID
	switch {
	case !a.idGiven:
		if ms := uint64(c.streamNow(d)); ms > s.LastID.Ms {
			id = values.StreamID{Ms: ms, Seq: 0}
		} else {
			id = s.LastID
			id.Incr()
		}
	case a.seqGiven || s.LastID.Ms != a.id.Ms:
		id = a.id
	case s.LastID.Seq == math.MaxUint64:
		id = s.LastID // fails the check below
	default:
		id = s.LastID
		id.Seq++
	}
	if !s.LastID.Less(id) {
		c.err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	fv := args[fieldPos:]
	if values.FieldsLen(fv) > values.StreamListpackMaxSize {
		c.err("ERR Elements are too large to be stored")
		return
	}
	s.Append(id, fv, c.limits().StreamNodeMaxEntries)
	c.bulkID(id)
	s.Trim(&a.TrimArgs)
	d.valueChanged(o, before)
	if existed {
		d.signalReady(key)
	}
	if c.logging() && (!a.idGiven || !a.seqGiven || a.Approx) {
		// As Redis' xaddCommand: the ID it generated, and an approximate
		// trim as the exact one that removes the same entries.
		args := slices.Clone(c.Args)
		args[idPos] = values.AppendStreamID(nil, id)
		c.rewriteTrim(args, s, &a.TrimArgs)
		c.logAs(args...)
	}
}

// rewriteTrim replaces, in a copy of XADD's or XTRIM's arguments, an
// approximate trim ("~" threshold) by the exact one that leaves the stream
// as it is now, as Redis' streamRewriteApproxSpecifier and
// streamRewriteTrimArgument do: MAXLEN = the stream's length, MINID = its
// first entry's ID (a deleted one included; the largest ID when empty).
func (c *Ctx) rewriteTrim(args [][]byte, s *values.Stream, a *values.TrimArgs) {
	if !a.Approx {
		return
	}
	args[a.ArgIdx-1] = []byte("=")
	if a.Strategy == values.TrimMaxLen {
		args[a.ArgIdx] = strconv.AppendInt(nil, s.Length, 10)
		return
	}
	first := values.MaxStreamID
	if len(s.Blocks) > 0 {
		first = s.Blocks[0].Ents[0].Id
	}
	args[a.ArgIdx] = values.AppendStreamID(nil, first)
}

// loading reports whether an append-only file is being replayed into the
// shard that owns key (Redis' "the client is the AOF loader").
func (c *Ctx) loading(key []byte) bool {
	s := c.db(key).owner
	return s != nil && s.loading
}

// streamNow is the clock stream bookkeeping records (the ID XADD generates,
// delivery and seen times): c.Now, except while an append-only file is
// replayed, where c.Now is 0 so that nothing expires and Redis' loader reads
// the wall clock (mstime) for these.
func (c *Ctx) streamNow(d *DB) int64 {
	if d.owner != nil && d.owner.loading {
		return time.Now().UnixMilli()
	}
	return c.Now
}

func cmdXTrim(c *Ctx) {
	var a xaddArgs
	if c.parseAddTrim(&a, false) < 0 {
		return
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	before := o.valueMemory()
	s := streamOf(o)
	n := s.Trim(&a.TrimArgs)
	if n > 0 {
		d.valueChanged(o, before)
		if c.logging() && a.Approx {
			args := slices.Clone(c.Args)
			c.rewriteTrim(args, s, &a.TrimArgs)
			c.logAs(args...)
		}
	}
	c.int(n)
}

// ---- XLEN XRANGE XREVRANGE XDEL ---------------------------------------------

func cmdXLen(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	c.int(streamOf(o).Length)
}

func cmdXRange(c *Ctx)    { c.xrange(false) }
func cmdXRevRange(c *Ctx) { c.xrange(true) }

// parseRange parses an interval's start and end as XRANGE and XPENDING do.
func (c *Ctx) parseRange(startArg, endArg []byte) (start, end values.StreamID, ok bool) {
	start, ex, ok := c.parseIntervalID(startArg, 0)
	if !ok {
		return start, end, false
	}
	if ex && !start.Incr() {
		c.err("ERR invalid start ID for the interval")
		return start, end, false
	}
	end, ex, ok = c.parseIntervalID(endArg, math.MaxUint64)
	if !ok {
		return start, end, false
	}
	if ex && !end.Decr() {
		c.err("ERR invalid end ID for the interval")
		return start, end, false
	}
	return start, end, true
}

func (c *Ctx) xrange(rev bool) {
	args := c.Args
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, end, ok := c.parseRange(startArg, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if !resp.EqualFold(args[j], "count") || j+1 == len(args) {
			c.syntaxErr()
			return
		}
		v, ok := resp.ParseInt(args[j+1])
		if !ok {
			c.notInteger()
			return
		}
		count = max(v, 0)
		j++
	}
	key := args[1]
	o, ok := c.readKind(c.db(key), key, KindStream)
	if !ok {
		return
	}
	switch {
	case o == nil:
		c.raw(resp.EmptyArray)
	case count == 0:
		c.Out = resp.AppendNullArray(c.Out, c.RESP3)
	default:
		c.replyRange(streamOf(o), start, end, max(count, 0), rev, nil, nil, false, false, nil)
	}
}

func cmdXDel(c *Ctx) {
	args := c.Args
	key := args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	for _, a := range args[2:] {
		if _, ok := c.parseID(a, 0, true); !ok {
			return
		}
	}
	s := streamOf(o)
	before := o.valueMemory()
	var deleted int64
	firstEntry := false
	for _, a := range args[2:] {
		id, _ := values.ParseStreamID(a, 0, true, nil)
		if !s.DeleteID(id) {
			continue
		}
		if id == s.FirstID {
			firstEntry = true
		}
		if s.MaxDeleted.Less(id) {
			s.MaxDeleted = id
		}
		deleted++
	}
	if deleted > 0 {
		if s.Length == 0 {
			s.FirstID = values.StreamID{}
		} else if firstEntry {
			s.RefreshFirstID()
		}
		d.valueChanged(o, before)
	}
	c.int(deleted)
}

// ---- XREAD XREADGROUP --------------------------------------------------------

func cmdXRead(c *Ctx)      { c.xread(false) }
func cmdXReadGroup(c *Ctx) { c.xread(true) }

// xreadKeysHeld reports whether the keys the handler found, args[first:
// first+n], are the ones the key specs give, so the shards held (ExecMulti
// takes the key specs' keys) are those of the keys served. Redis finds them
// by parsing the options (xreadGetKeys); the key specs by the first STREAMS
// after where GROUP g c would be. They differ only when a group or consumer
// named STREAMS follows other options.
func xreadKeysHeld(cmd *command.Command, args [][]byte, first, n int) bool {
	var buf [16]int
	var flags [16]command.KeyFlag
	keys, _, ok := cmd.KeysWithFlags(args, buf[:0], flags[:0])
	if !ok || len(keys) != n {
		return false
	}
	for i, k := range keys {
		if k != first+i {
			return false
		}
	}
	return true
}

// xread serves XREAD and XREADGROUP as Redis' xreadCommand. Before it
// blocks, every "$" ID is rewritten in c.Args to that stream's last ID (the
// runtime parks a copy of c.Args), so the runs that follow when a key gets
// data read what came after the moment the command first blocked.
func (c *Ctx) xread(group bool) {
	args := c.Args
	blocking := false
	var deadline, count int64
	streamsArg, n := 0, 0
	noack := false
	var groupName, consumerName []byte
loop:
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case more > 0 && resp.EqualFold(o, "block"):
			i++
			dl, ok := c.parseTimeout(args[i], false)
			if !ok {
				return
			}
			blocking, deadline = true, dl
		case more > 0 && resp.EqualFold(o, "count"):
			i++
			v, ok := resp.ParseInt(args[i])
			if !ok {
				c.notInteger()
				return
			}
			count = max(v, 0)
		case more > 0 && resp.EqualFold(o, "streams"):
			streamsArg = i + 1
			n = len(args) - streamsArg
			if n%2 != 0 {
				c.err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			n /= 2
			break loop
		case more >= 2 && resp.EqualFold(o, "group"):
			if !group {
				c.err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			groupName, consumerName = args[i+1], args[i+2]
			i += 2
		case resp.EqualFold(o, "noack"):
			if !group {
				c.err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.syntaxErr()
			return
		}
	}
	if streamsArg == 0 {
		c.syntaxErr()
		return
	}
	if group && groupName == nil {
		c.err("ERR Missing GROUP option for XREADGROUP")
		return
	}
	if c.ready == nil && len(c.env.stores) > 1 && !xreadKeysHeld(c.Cmd, args, streamsArg, n) {
		c.err("ERR svcdb cannot route this " + c.Cmd.FullName + ": a group or consumer named STREAMS must come right after GROUP")
		return
	}
	keys := args[streamsArg : streamsArg+n]
	idArgs := args[streamsArg+n:]

	// Resolve the IDs; maxStreamID stands for ">".
	var idBuf [8]values.StreamID
	ids := idBuf[:0]
	if n > len(idBuf) {
		ids = make([]values.StreamID, 0, n)
	}
	for i, key := range keys {
		if !c.servable(key) {
			ids = append(ids, values.StreamID{})
			continue
		}
		d := c.db(key)
		o := d.lookup(key, c.Now)
		if c.ready != nil && group && (o == nil || o.kind != KindStream) {
			// As Redis 7.0: a woken XREADGROUP whose stream went (deleted,
			// overwritten, renamed away, flushed, expired) is told so.
			c.err("UNBLOCKED the stream key no longer exists")
			return
		}
		if o == nil {
			d.misses.Add(1)
		} else {
			d.hits.Add(1)
			if o.kind != KindStream {
				if c.ready == nil {
					c.wrongType()
				}
				return // a woken XREAD whose key changed type keeps waiting
			}
		}
		if group && (o == nil || streamOf(o).Group(groupName) == nil) {
			switch {
			case c.ready == nil:
				c.err("NOGROUP No such key '" + cString(key) + "' or consumer group '" + cString(groupName) + "' in XREADGROUP with GROUP option")
			case o != nil:
				c.err("NOGROUP the consumer group this client was blocked on no longer exists")
			}
			return
		}
		a := idArgs[i]
		switch {
		case len(a) == 1 && a[0] == '$':
			if group {
				c.err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			var last values.StreamID
			if o != nil {
				last = streamOf(o).LastID
			}
			ids = append(ids, last)
		case len(a) == 1 && a[0] == '>':
			if !group {
				c.err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids = append(ids, values.MaxStreamID)
		default:
			id, ok := c.parseID(a, 0, true)
			if !ok {
				return
			}
			ids = append(ids, id)
		}
	}

	// Serve what can be served now, each stream in order.
	served, pos := 0, 0
	for i, key := range keys {
		if !c.servable(key) {
			continue
		}
		d := c.db(key)
		o := d.lookup(key, c.Now)
		if o == nil {
			continue
		}
		s := streamOf(o)
		before := o.valueMemory()
		gt := ids[i]
		serve, history := false, false
		var g *values.StreamGroup
		var cons *values.StreamConsumer
		if group {
			g = s.Group(groupName)
			if gt != values.MaxStreamID {
				serve, history = true, true
			} else if s.Length > 0 && g.LastID.Less(s.LastValidID()) {
				serve = true
				gt = g.LastID
			}
		} else if s.Length > 0 && gt.Less(s.LastValidID()) {
			serve = true
		}
		if serve {
			var gl *groupLog
			if group { // Redis 7.0 creates the consumer only when it serves it
				gl = &groupLog{d: d, key: key, group: groupName, now: c.streamNow(d)}
				if cons = g.Consumer(consumerName); cons == nil {
					cons = s.CreateConsumer(g, consumerName, gl.now)
					// XCLAIM creates it when replayed; otherwise (NOACK as
					// Redis, a history read as svcdb adds) the log must.
					if noack || history {
						gl.createConsumer(c, consumerName)
					}
				}
				cons.SeenTime = gl.now
			}
			served++
			if served == 1 {
				pos = len(c.Out)
			}
			start := gt
			start.Incr()
			if !c.RESP3 {
				c.array(2)
			}
			c.bulk(key)
			if history {
				c.replyConsumerPEL(s, start, count, g, cons, gl)
			} else if g == nil {
				c.replyRange(s, start, values.MaxStreamID, count, false, nil, nil, false, false, nil)
			} else {
				last := g.LastID
				c.replyRange(s, start, values.MaxStreamID, count, false, g, cons, noack, false, gl)
				if g.LastID != last {
					// Redis logs the group's new last ID for NOACK only; svcdb
					// logs it always, since the XCLAIMs above do not carry
					// the group's entries-read counter (XINFO's lag).
					gl.setID(c, g)
				}
			}
		}
		d.groupsChanged(o, before)
	}
	if served > 0 {
		typ := byte('*')
		if c.RESP3 {
			typ = '%'
		}
		c.Out = insertArrayHeader(c.Out, pos, typ, served)
		return
	}
	if !blocking {
		c.Out = resp.AppendNullArray(c.Out, c.RESP3)
		return
	}
	if c.ready == nil {
		for i, a := range idArgs {
			if len(a) == 1 && a[0] == '$' {
				idArgs[i] = values.AppendStreamID(nil, ids[i])
			}
		}
	}
	c.block(keys, deadline, timeoutNullArray)
}

// replyConsumerPEL is streamReplyWithRangeFromConsumerPEL: the consumer's
// pending entries from start on, a deleted one as [id, null]; each one still
// in the stream counts as delivered again.
//
// Unlike Redis, svcdb logs each entry delivered again (an XCLAIM with its
// new delivery time and count), so that a restart keeps them.
func (c *Ctx) replyConsumerPEL(s *values.Stream, start values.StreamID, count int64, g *values.StreamGroup, cons *values.StreamConsumer, gl *groupLog) {
	pos, n := len(c.Out), int64(0)
	for cur, _ := cons.Pel.Seek(start); cur.Valid(&cons.Pel) && (count == 0 || n < count); cur = cons.Pel.Next(cur) {
		it := cons.Pel.At(cur)
		if c.replyEntryByID(s, it.Id) {
			it.N.DeliveryTime = gl.now
			it.N.DeliveryCount++
			gl.xclaim(c, g, it.Id, it.N)
		} else {
			c.array(2)
			c.bulkID(it.Id)
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
		}
		n++
	}
	c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
}

// ---- XGROUP ------------------------------------------------------------------

var xgroupHelp = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

var xinfoHelp = []string{
	"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
	"HELP",
	"    Prints this help.",
}

func cmdXGroup(c *Ctx) {
	args := c.Args
	sub := args[1]
	var (
		d           *DB
		o           *object
		s           *values.Stream
		g           *values.StreamGroup
		mkstream    bool
		entriesRead = int64(-1)
	)
	create, setid := resp.EqualFold(sub, "create"), resp.EqualFold(sub, "setid")
	if len(args) >= 4 {
		for i := 5; i < len(args); {
			switch {
			case create && resp.EqualFold(args[i], "mkstream"):
				mkstream = true
				i++
			case (create || setid) && i+1 < len(args) && resp.EqualFold(args[i], "entriesread"):
				v, ok := resp.ParseInt(args[i+1])
				if !ok {
					c.notInteger()
					return
				}
				if v < 0 && v != -1 {
					c.err("ERR value for ENTRIESREAD must be positive or -1")
					return
				}
				entriesRead = v
				i += 2
			default:
				c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xgroup")
				return
			}
		}
		d = c.db(args[2])
		var ok bool
		if o, ok = c.writeKind(d, args[2], KindStream); !ok {
			return
		}
		if o != nil {
			s = streamOf(o)
		}
		if !mkstream {
			if s == nil {
				c.err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
				return
			}
			g = s.Group(args[3])
			if g == nil && (setid || resp.EqualFold(sub, "createconsumer") || resp.EqualFold(sub, "delconsumer")) {
				c.noGroupForKey(args[3], args[2])
				return
			}
		}
	}
	switch {
	case len(args) == 2 && resp.EqualFold(sub, "help"):
		c.help(xgroupHelp)
	case create && len(args) >= 5 && len(args) <= 8:
		var id values.StreamID
		if a := args[4]; len(a) == 1 && a[0] == '$' {
			if s != nil {
				id = s.LastID
			}
		} else {
			var ok bool
			if id, ok = c.parseID(a, 0, true); !ok {
				return
			}
		}
		if s == nil {
			o = newStreamKey(d, args[2])
			s = streamOf(o)
			d.valueChanged(o, 0)
		}
		before := o.valueMemory()
		if s.CreateGroup(args[3], id, entriesRead) != nil {
			d.countChange()
			c.ok()
		} else {
			c.err("BUSYGROUP Consumer Group name already exists")
		}
		d.groupsChanged(o, before)
	case setid && (len(args) == 5 || len(args) == 7):
		var id values.StreamID
		if a := args[4]; len(a) == 1 && a[0] == '$' {
			id = s.LastID
		} else {
			var ok bool
			if id, ok = c.parseID(a, 0, false); !ok {
				return
			}
		}
		g.LastID = id
		g.EntriesRead = entriesRead
		d.countChange()
		c.ok()
	case resp.EqualFold(sub, "destroy") && len(args) == 4:
		if g == nil {
			c.int(0)
			return
		}
		before := o.valueMemory()
		s.DestroyGroup(g)
		d.groupsChanged(o, before)
		d.countChange()
		c.int(1)
		d.signalReady(args[2]) // blocked XREADGROUP clients get -NOGROUP
	case resp.EqualFold(sub, "createconsumer") && len(args) == 5:
		before := o.valueMemory()
		created := s.CreateConsumer(g, args[4], c.streamNow(d)) != nil
		d.groupsChanged(o, before)
		if created {
			d.countChange()
			c.int(1)
		} else {
			c.int(0)
		}
	case resp.EqualFold(sub, "delconsumer") && len(args) == 5:
		var pending int64
		if cons := g.Consumer(args[4]); cons != nil {
			pending = int64(cons.Pel.N)
			before := o.valueMemory()
			s.DeleteConsumer(g, cons)
			d.groupsChanged(o, before)
			d.countChange()
		}
		c.int(pending)
	default:
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xgroup")
	}
}

// ---- XSETID XACK XPENDING ----------------------------------------------------

func cmdXSetID(c *Ctx) {
	args := c.Args
	id, ok := c.parseID(args[2], 0, true)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDel values.StreamID
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch opt := args[i]; {
		case more > 0 && resp.EqualFold(opt, "entriesadded"):
			v, ok := resp.ParseInt(args[i+1])
			if !ok {
				c.notInteger()
				return
			}
			if v < 0 {
				c.err("ERR entries_added must be positive")
				return
			}
			entriesAdded = v
		case more > 0 && resp.EqualFold(opt, "maxdeletedid"):
			if maxDel, ok = c.parseID(args[i+1], 0, true); !ok {
				return
			}
			if id.Less(maxDel) {
				c.err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			c.syntaxErr()
			return
		}
	}
	key := args[1]
	o, ok := c.writeKind(c.db(key), key, KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.err("ERR no such key")
		return
	}
	s := streamOf(o)
	if s.Length > 0 {
		if id.Less(s.LastValidID()) {
			c.err("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.Length > entriesAdded {
			c.err("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if entriesAdded != -1 {
		s.EntriesAdded = entriesAdded
	}
	if !maxDel.IsZero() {
		s.MaxDeleted = maxDel
	}
	c.db(key).countChange() // as Redis 7.0's xsetidCommand: server.dirty++, WATCH not signalled
	c.ok()
}

// groupOf looks key's group up for XACK, XPENDING, XCLAIM, XAUTOCLAIM:
// (nil, nil, true) when the key or group is missing, ok false after
// replying WRONGTYPE.
func (c *Ctx) groupOf(d *DB, key, name []byte) (*object, *values.StreamGroup, bool) {
	o, ok := c.readKind(d, key, KindStream)
	if !ok || o == nil {
		return nil, nil, ok
	}
	return o, streamOf(o).Group(name), true
}

func cmdXAck(c *Ctx) {
	args := c.Args
	d := c.db(args[1])
	o, g, ok := c.groupOf(d, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		c.int(0)
		return
	}
	for _, a := range args[3:] {
		if _, ok := c.parseID(a, 0, true); !ok {
			return
		}
	}
	s := streamOf(o)
	before := o.valueMemory()
	var acked int64
	for _, a := range args[3:] {
		id, _ := values.ParseStreamID(a, 0, true, nil)
		if s.Ack(g, id) {
			acked++
		}
	}
	if acked > 0 {
		d.countChange()
	}
	d.groupsChanged(o, before)
	c.int(acked)
}

func cmdXPending(c *Ctx) {
	args := c.Args
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.syntaxErr()
		return
	}
	var start, end values.StreamID
	var count, minIdle int64
	var consumerName []byte
	if len(args) >= 6 {
		si := 3
		if resp.EqualFold(args[3], "idle") {
			v, ok := resp.ParseInt(args[4])
			if !ok {
				c.notInteger()
				return
			}
			minIdle = v
			if len(args) < 8 {
				c.syntaxErr()
				return
			}
			si += 2
		}
		v, ok := resp.ParseInt(args[si+2])
		if !ok {
			c.notInteger()
			return
		}
		count = max(v, 0)
		if start, end, ok = c.parseRange(args[si], args[si+1]); !ok {
			return
		}
		if si+3 < len(args) {
			consumerName = args[si+3]
		}
	}
	_, g, ok := c.groupOf(c.db(args[1]), args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		c.errNoGroup(args[1], args[2])
		return
	}
	if len(args) == 3 {
		c.array(4)
		c.int(int64(g.Pel.N))
		if g.Pel.N == 0 {
			c.null()
			c.null()
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
			return
		}
		c.bulkID(g.Pel.At(g.Pel.First()).Id)
		c.bulkID(g.Pel.At(g.Pel.Last()).Id)
		pos, n := len(c.Out), 0
		for _, cons := range g.Consumers {
			if cons.Pel.N == 0 {
				continue
			}
			c.array(2)
			c.bulkString(cons.Name)
			c.Out = resp.AppendBulkInt(c.Out, int64(cons.Pel.N))
			n++
		}
		c.Out = insertArrayHeader(c.Out, pos, '*', n)
		return
	}
	pel := &g.Pel
	if consumerName != nil {
		cons := g.Consumer(consumerName)
		if cons == nil {
			c.raw(resp.EmptyArray)
			return
		}
		pel = &cons.Pel
	}
	pos, n := len(c.Out), 0
	for cur, _ := pel.Seek(start); count > 0 && cur.Valid(pel); cur = pel.Next(cur) {
		it := pel.At(cur)
		if end.Less(it.Id) {
			break
		}
		if minIdle != 0 && c.Now-it.N.DeliveryTime < minIdle {
			continue
		}
		n++
		count--
		c.array(4)
		c.bulkID(it.Id)
		c.bulkString(it.N.Consumer.Name)
		c.int(max(c.Now-it.N.DeliveryTime, 0))
		c.int(it.N.DeliveryCount)
	}
	c.Out = insertArrayHeader(c.Out, pos, '*', n)
}

// ---- XCLAIM XAUTOCLAIM -------------------------------------------------------

// claimer returns the claiming consumer, created and marked seen on first use
// (Redis 7.0 creates it only once something is claimed).
func (c *Ctx) claimer(s *values.Stream, g *values.StreamGroup, cons **values.StreamConsumer, now int64) *values.StreamConsumer {
	if *cons == nil {
		name := c.Args[3]
		if *cons = g.Consumer(name); *cons == nil {
			*cons = s.CreateConsumer(g, name, now)
		}
		(*cons).SeenTime = now
	}
	return *cons
}

func cmdXClaim(c *Ctx) {
	args := c.Args
	d := c.db(args[1])
	o, g, ok := c.groupOf(d, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		c.errNoGroup(args[1], args[2])
		return
	}
	minIdle, ok := resp.ParseInt(args[4])
	if !ok {
		c.err("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	for ; j < len(args); j++ {
		if _, ok := values.ParseStreamID(args[j], 0, true, nil); !ok {
			break
		}
	}
	idArgs := args[5:j]
	gl := &groupLog{d: d, key: args[1], group: args[2], now: c.streamNow(d)}
	now := gl.now
	retryCount, deliveryTime := int64(-1), int64(-1)
	force, justID := false, false
	var lastID values.StreamID
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		switch {
		case resp.EqualFold(opt, "force"):
			force = true
		case resp.EqualFold(opt, "justid"):
			justID = true
		case more > 0 && resp.EqualFold(opt, "idle"):
			j++
			v, ok := resp.ParseInt(args[j])
			if !ok {
				c.err("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = now - v
		case more > 0 && resp.EqualFold(opt, "time"):
			j++
			v, ok := resp.ParseInt(args[j])
			if !ok {
				c.err("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			deliveryTime = v
		case more > 0 && resp.EqualFold(opt, "retrycount"):
			j++
			v, ok := resp.ParseInt(args[j])
			if !ok {
				c.err("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retryCount = v
		case more > 0 && resp.EqualFold(opt, "lastid"):
			j++
			if lastID, ok = c.parseID(args[j], 0, true); !ok {
				return
			}
		default:
			c.err("ERR Unrecognized XCLAIM option '" + cString(opt) + "'")
			return
		}
	}
	s := streamOf(o)
	before := o.valueMemory()
	defer d.groupsChanged(o, before)
	// As Redis' xclaimCommand, a new last ID is logged by the XCLAIMs that
	// carry it, or by XGROUP SETID when none is logged.
	logLastID := false
	if g.LastID.Less(lastID) {
		g.LastID = lastID
		logLastID = true
	}
	if deliveryTime == -1 || deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	var cons *values.StreamConsumer
	pos, n := len(c.Out), 0
	for _, a := range idArgs {
		id, _ := values.ParseStreamID(a, 0, true, nil)
		nack := g.Pel.Get(id)
		if _, exists := s.Find(id); !exists {
			if nack != nil { // pending, but gone from the stream: forget it
				gl.xclaim(c, g, id, nack)
				logLastID = false
				s.Ack(g, id)
			}
			continue
		}
		if force && nack == nil {
			nack = &values.StreamNACK{DeliveryTime: now, DeliveryCount: 1}
			g.Pel.Insert(id, nack, &s.Mem)
			s.Mem += values.StreamNACKSize
		}
		if nack == nil || nack.Consumer != nil && minIdle != 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		cl := c.claimer(s, g, &cons, now)
		nack.DeliveryTime = deliveryTime
		if retryCount >= 0 {
			nack.DeliveryCount = retryCount
		} else if !justID {
			nack.DeliveryCount++
		}
		s.ClaimFor(nack, id, cl)
		gl.xclaim(c, g, id, nack)
		logLastID = false
		if justID {
			c.bulkID(id)
		} else {
			c.replyEntryByID(s, id)
		}
		n++
	}
	if logLastID {
		gl.setID(c, g)
	}
	c.Out = insertArrayHeader(c.Out, pos, '*', n)
}

// xautoclaimMaxCount is the largest COUNT before Redis' allocation of COUNT
// stream IDs fails (ztrymalloc) on a machine with 64 GiB: svcdb allocates
// nothing by COUNT but answers as Redis there.
const xautoclaimMaxCount = (64 << 30) / 16

func cmdXAutoClaim(c *Ctx) {
	args := c.Args
	minIdle, ok := resp.ParseInt(args[4])
	if !ok {
		c.err("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, ok := c.parseIntervalID(args[5], 0)
	if !ok {
		return
	}
	if ex && !start.Incr() {
		c.err("ERR invalid start ID for the interval")
		return
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch opt := args[j]; {
		case more > 0 && resp.EqualFold(opt, "count"):
			v, ok := resp.ParseInt(args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.err("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case resp.EqualFold(opt, "justid"):
			justID = true
		default:
			c.syntaxErr()
			return
		}
	}
	d := c.db(args[1])
	o, g, ok := c.groupOf(d, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		c.errNoGroup(args[1], args[2])
		return
	}
	if count > xautoclaimMaxCount {
		c.err("ERR Insufficient memory, failed allocating transient memory, COUNT too high.")
		return
	}
	s := streamOf(o)
	before := o.valueMemory()
	defer d.groupsChanged(o, before)
	gl := &groupLog{d: d, key: args[1], group: args[2], now: c.streamNow(d)}
	now := gl.now
	attempts := count * 10
	var cons *values.StreamConsumer
	var deleted []values.StreamID
	c.array(3)
	cursorPos := len(c.Out)
	n := 0
	cur, _ := g.Pel.Seek(start)
	for ; attempts > 0 && count > 0 && cur.Valid(&g.Pel); attempts-- {
		it := g.Pel.At(cur)
		id, nack := it.Id, it.N
		if _, exists := s.Find(id); !exists {
			gl.xclaim(c, g, id, nack) // as Redis: logged, then forgotten
			s.Ack(g, id)
			deleted = append(deleted, id)
			cur, _ = g.Pel.Seek(id)
			count--
			continue
		}
		cur = g.Pel.Next(cur)
		if minIdle != 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		nack.DeliveryTime = now
		if !justID {
			nack.DeliveryCount++
		}
		s.ClaimFor(nack, id, c.claimer(s, g, &cons, now))
		gl.xclaim(c, g, id, nack)
		if justID {
			c.bulkID(id)
		} else {
			c.replyEntryByID(s, id)
		}
		n++
		count--
	}
	c.Out = insertArrayHeader(c.Out, cursorPos, '*', n)
	var next values.StreamID
	if cur.Valid(&g.Pel) {
		next = g.Pel.At(cur).Id
	}
	// The cursor comes first: put it in front of the claimed entries.
	var idBuf [48]byte
	h := append(idBuf[:0], '$')
	h = strconv.AppendInt(h, int64(values.UintLen(next.Ms)+1+values.UintLen(next.Seq)), 10)
	h = append(h, '\r', '\n')
	h = values.AppendStreamID(h, next)
	h = append(h, '\r', '\n')
	c.Out = insertBytes(c.Out, cursorPos, h)
	c.array(len(deleted))
	for _, id := range deleted {
		c.bulkID(id)
	}
}

// ---- XINFO -------------------------------------------------------------------

func cmdXInfo(c *Ctx) {
	args := c.Args
	sub := args[1]
	if resp.EqualFold(sub, "help") {
		c.help(xinfoHelp)
		return
	}
	if len(args) < 3 {
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xinfo")
		return
	}
	key := args[2]
	o, ok := c.readKind(c.db(key), key, KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.err("ERR no such key")
		return
	}
	s := streamOf(o)
	switch {
	case resp.EqualFold(sub, "consumers") && len(args) == 4:
		g := s.Group(args[3])
		if g == nil {
			c.noGroupForKey(args[3], key)
			return
		}
		c.array(len(g.Consumers))
		for _, cons := range g.Consumers {
			c.Out = resp.AppendMapHeader(c.Out, 3, c.RESP3)
			c.bulkString("name")
			c.bulkString(cons.Name)
			c.bulkString("pending")
			c.int(int64(cons.Pel.N))
			c.bulkString("idle")
			c.int(max(c.Now-cons.SeenTime, 0))
		}
	case resp.EqualFold(sub, "groups") && len(args) == 3:
		c.array(len(s.Groups))
		for _, g := range s.Groups {
			c.Out = resp.AppendMapHeader(c.Out, 6, c.RESP3)
			c.bulkString("name")
			c.bulkString(g.Name)
			c.bulkString("consumers")
			c.int(int64(len(g.Consumers)))
			c.bulkString("pending")
			c.int(int64(g.Pel.N))
			c.bulkString("last-delivered-id")
			c.bulkID(g.LastID)
			c.replyGroupCounters(s, g)
		}
	case resp.EqualFold(sub, "stream"):
		c.xinfoStream(s)
	default:
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xinfo")
	}
}

// replyGroupCounters replies a group's entries-read and lag fields.
func (c *Ctx) replyGroupCounters(s *values.Stream, g *values.StreamGroup) {
	c.bulkString("entries-read")
	if g.EntriesRead != -1 {
		c.int(g.EntriesRead)
	} else {
		c.null()
	}
	c.bulkString("lag")
	if lag, ok := s.Lag(g); ok {
		c.int(lag)
	} else {
		c.null()
	}
}

func (c *Ctx) xinfoStream(s *values.Stream) {
	opts := c.Args[3:]
	full := len(opts) > 0
	count := int64(10)
	if full {
		if len(opts) != 1 && len(opts) != 3 || !resp.EqualFold(opts[0], "full") ||
			len(opts) == 3 && !resp.EqualFold(opts[1], "count") {
			c.Out = resp.AppendErrSubcommandSyntax(c.Out, c.Args[1], "xinfo")
			return
		}
		if len(opts) == 3 {
			v, ok := resp.ParseInt(opts[2])
			if !ok {
				c.notInteger()
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
		c.Out = resp.AppendMapHeader(c.Out, 9, c.RESP3)
	} else {
		c.Out = resp.AppendMapHeader(c.Out, 10, c.RESP3)
	}
	c.bulkString("length")
	c.int(s.Length)
	c.bulkString("radix-tree-keys")
	c.int(int64(len(s.Blocks)))
	c.bulkString("radix-tree-nodes")
	c.int(s.RaxNodes())
	c.bulkString("last-generated-id")
	c.bulkID(s.LastID)
	c.bulkString("max-deleted-entry-id")
	c.bulkID(s.MaxDeleted)
	c.bulkString("entries-added")
	c.int(s.EntriesAdded)
	c.bulkString("recorded-first-entry-id")
	c.bulkID(s.FirstID)
	if !full {
		c.bulkString("groups")
		c.int(int64(len(s.Groups)))
		c.bulkString("first-entry")
		if c.replyRange(s, values.StreamID{}, values.MaxStreamID, 1, false, nil, nil, false, true, nil) == 0 {
			c.null()
		}
		c.bulkString("last-entry")
		if c.replyRange(s, values.StreamID{}, values.MaxStreamID, 1, true, nil, nil, false, true, nil) == 0 {
			c.null()
		}
		return
	}
	c.bulkString("entries")
	c.replyRange(s, values.StreamID{}, values.MaxStreamID, count, false, nil, nil, false, false, nil)
	c.bulkString("groups")
	c.array(len(s.Groups))
	for _, g := range s.Groups {
		c.Out = resp.AppendMapHeader(c.Out, 7, c.RESP3)
		c.bulkString("name")
		c.bulkString(g.Name)
		c.bulkString("last-delivered-id")
		c.bulkID(g.LastID)
		c.replyGroupCounters(s, g)
		c.bulkString("pel-count")
		c.int(int64(g.Pel.N))
		c.bulkString("pending")
		pos, n := len(c.Out), int64(0)
		for cur := g.Pel.First(); cur.Valid(&g.Pel) && (count == 0 || n < count); cur = g.Pel.Next(cur) {
			it := g.Pel.At(cur)
			c.array(4)
			c.bulkID(it.Id)
			c.bulkString(it.N.Consumer.Name)
			c.int(it.N.DeliveryTime)
			c.int(it.N.DeliveryCount)
			n++
		}
		c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
		c.bulkString("consumers")
		c.array(len(g.Consumers))
		for _, cons := range g.Consumers {
			c.Out = resp.AppendMapHeader(c.Out, 4, c.RESP3)
			c.bulkString("name")
			c.bulkString(cons.Name)
			c.bulkString("seen-time")
			c.int(cons.SeenTime)
			c.bulkString("pel-count")
			c.int(int64(cons.Pel.N))
			c.bulkString("pending")
			pos, n := len(c.Out), int64(0)
			for cur := cons.Pel.First(); cur.Valid(&cons.Pel) && (count == 0 || n < count); cur = cons.Pel.Next(cur) {
				it := cons.Pel.At(cur)
				c.array(3)
				c.bulkID(it.Id)
				c.int(it.N.DeliveryTime)
				c.int(it.N.DeliveryCount)
				n++
			}
			c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
		}
	}
}
