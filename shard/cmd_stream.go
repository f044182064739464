package shard

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
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

func streamOf(o *object) *stream { return o.coll.(*stream) }

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
	o.coll = newStream()
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
func (c *Ctx) replyEntry(b *streamBlock, e *streamEnt) {
	c.array(2)
	c.bulkID(e.id)
	c.array(int(e.nf) * 2)
	for it := b.fields(e); ; {
		f, v, ok := it.next()
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
func (c *Ctx) replyRange(s *stream, start, end streamID, count int64, rev bool, g *streamGroup, cons *streamConsumer, noack, raw bool, gl *groupLog) int64 {
	pos := len(c.Out)
	var n int64
	p := s.seekGE(start)
	if rev {
		p = s.seekLE(end)
	}
	for s.valid(p) {
		b := s.blocks[p.b]
		e := &b.ents[p.e]
		if !rev && end.less(e.id) || rev && e.id.less(start) {
			break
		}
		if e.flags&entDeleted == 0 {
			if g != nil {
				s.delivered(g, e.id)
			}
			c.replyEntry(b, e)
			if g != nil && !noack {
				s.addNACK(g, cons, e.id, gl.now)
				gl.xclaim(c, g, e.id, g.pel.get(e.id))
			}
			n++
			if n == count {
				break
			}
		}
		if rev {
			p = s.prev(p)
		} else {
			p = s.next(p)
		}
	}
	if !raw {
		c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
	}
	return n
}

// replyEntryByID replies the live entry id raw and reports whether it exists.
func (c *Ctx) replyEntryByID(s *stream, id streamID) bool {
	p, ok := s.find(id)
	if ok {
		c.replyEntry(s.blocks[p.b], s.ent(p))
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
func (gl *groupLog) xclaim(c *Ctx, g *streamGroup, id streamID, n *streamNACK) {
	gl.changed()
	if !c.logging() {
		return
	}
	var idBuf, lastBuf [41]byte
	var timeBuf, countBuf [20]byte
	c.logAs(cmdXCLAIM, gl.key, gl.group, []byte(n.consumer.name), argZero,
		appendStreamID(idBuf[:0], id),
		argTIME, strconv.AppendInt(timeBuf[:0], n.deliveryTime, 10),
		argRETRYCOUNT, strconv.AppendInt(countBuf[:0], n.deliveryCount, 10),
		argFORCE, argJUSTID, argLASTID, appendStreamID(lastBuf[:0], g.lastID))
}

// setID records g's last ID and entries-read counter as Redis'
// streamPropagateGroupID: XGROUP SETID key group <last ID> ENTRIESREAD <n>.
func (gl *groupLog) setID(c *Ctx, g *streamGroup) {
	gl.changed()
	if !c.logging() {
		return
	}
	var lastBuf [41]byte
	var readBuf [20]byte
	c.logAs(cmdXGROUP, argSETID, gl.key, gl.group, appendStreamID(lastBuf[:0], g.lastID),
		argENTRIESREAD, strconv.AppendInt(readBuf[:0], g.entriesRead, 10))
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
	trimArgs
	id         streamID
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
			if a.strategy != trimNone {
				c.err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return -1
			}
			a.approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.approx = next[0] == '~'
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
				a.maxLen = v
				a.strategy = trimMaxLen
			} else {
				id, ok := c.parseID(args[i+1], 0, true)
				if !ok {
					return -1
				}
				a.minID = id
				a.strategy = trimMinID
			}
			i++
			a.argIdx = i
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
			a.limit = v
			limitGiven = true
			i++
		case xadd && resp.EqualFold(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, ok := parseStreamID(opt, 0, true, &a.seqGiven)
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
	if a.limit != 0 && a.strategy == trimNone {
		c.err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if !xadd && a.strategy == trimNone {
		c.err("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	switch {
	case c.loading(args[1]):
		// From the append-only file: trimming is exact there (the log
		// records "~" as "=" with the resulting threshold), so LIMIT, kept
		// in the record as Redis keeps it, must neither fail nor stop it.
		a.limit = 0
	case limitGiven && !a.approx:
		c.err("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return -1
	case limitGiven:
	case a.approx:
		// At most 100 nodes' worth of entries, capped both ways as Redis does.
		switch n := c.limits().StreamNodeMaxEntries; {
		case n <= 0:
			a.limit = 10000
		case n > 10000:
			a.limit = 1000000
		default:
			a.limit = 100 * n
		}
	default:
		a.limit = 0
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
	if a.idGiven && a.seqGiven && a.id.isZero() {
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
	if s.lastID == maxStreamID {
		c.err("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	var id streamID
	switch {
	case !a.idGiven:
		if ms := uint64(c.streamNow(d)); ms > s.lastID.ms {
			id = streamID{ms, 0}
		} else {
			id = s.lastID
			id.incr()
		}
	case a.seqGiven || s.lastID.ms != a.id.ms:
		id = a.id
	case s.lastID.seq == math.MaxUint64:
		id = s.lastID // fails the check below
	default:
		id = s.lastID
		id.seq++
	}
	if !s.lastID.less(id) {
		c.err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	fv := args[fieldPos:]
	if fieldsLen(fv) > streamListpackMaxSize {
		c.err("ERR Elements are too large to be stored")
		return
	}
	s.append(id, fv, c.limits().StreamNodeMaxEntries)
	c.bulkID(id)
	s.trim(&a.trimArgs)
	d.valueChanged(o, before)
	if existed {
		d.signalReady(key)
	}
	if c.logging() && (!a.idGiven || !a.seqGiven || a.approx) {
		// As Redis' xaddCommand: the ID it generated, and an approximate
		// trim as the exact one that removes the same entries.
		args := slices.Clone(c.Args)
		args[idPos] = appendStreamID(nil, id)
		c.rewriteTrim(args, s, &a.trimArgs)
		c.logAs(args...)
	}
}

// rewriteTrim replaces, in a copy of XADD's or XTRIM's arguments, an
// approximate trim ("~" threshold) by the exact one that leaves the stream
// as it is now, as Redis' streamRewriteApproxSpecifier and
// streamRewriteTrimArgument do: MAXLEN = the stream's length, MINID = its
// first entry's ID (a deleted one included; the largest ID when empty).
func (c *Ctx) rewriteTrim(args [][]byte, s *stream, a *trimArgs) {
	if !a.approx {
		return
	}
	args[a.argIdx-1] = []byte("=")
	if a.strategy == trimMaxLen {
		args[a.argIdx] = strconv.AppendInt(nil, s.length, 10)
		return
	}
	first := maxStreamID
	if len(s.blocks) > 0 {
		first = s.blocks[0].ents[0].id
	}
	args[a.argIdx] = appendStreamID(nil, first)
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
	n := s.trim(&a.trimArgs)
	if n > 0 {
		d.valueChanged(o, before)
		if c.logging() && a.approx {
			args := slices.Clone(c.Args)
			c.rewriteTrim(args, s, &a.trimArgs)
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
	c.int(streamOf(o).length)
}

func cmdXRange(c *Ctx)    { c.xrange(false) }
func cmdXRevRange(c *Ctx) { c.xrange(true) }

// parseRange parses an interval's start and end as XRANGE and XPENDING do.
func (c *Ctx) parseRange(startArg, endArg []byte) (start, end streamID, ok bool) {
	start, ex, ok := c.parseIntervalID(startArg, 0)
	if !ok {
		return start, end, false
	}
	if ex && !start.incr() {
		c.err("ERR invalid start ID for the interval")
		return start, end, false
	}
	end, ex, ok = c.parseIntervalID(endArg, math.MaxUint64)
	if !ok {
		return start, end, false
	}
	if ex && !end.decr() {
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
		id, _ := parseStreamID(a, 0, true, nil)
		if !s.deleteID(id) {
			continue
		}
		if id == s.firstID {
			firstEntry = true
		}
		if s.maxDeleted.less(id) {
			s.maxDeleted = id
		}
		deleted++
	}
	if deleted > 0 {
		if s.length == 0 {
			s.firstID = streamID{}
		} else if firstEntry {
			s.refreshFirstID()
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
	if c.ready == nil && len(c.rt.shards) > 1 && !xreadKeysHeld(c.Cmd, args, streamsArg, n) {
		c.err("ERR svcdb cannot route this " + c.Cmd.FullName + ": a group or consumer named STREAMS must come right after GROUP")
		return
	}
	keys := args[streamsArg : streamsArg+n]
	idArgs := args[streamsArg+n:]

	// Resolve the IDs; maxStreamID stands for ">".
	var idBuf [8]streamID
	ids := idBuf[:0]
	if n > len(idBuf) {
		ids = make([]streamID, 0, n)
	}
	for i, key := range keys {
		if !c.servable(key) {
			ids = append(ids, streamID{})
			continue
		}
		d := c.db(key)
		o := d.lookup(key, c.Now)
		if o == nil {
			d.misses.Add(1)
		} else {
			d.hits.Add(1)
			if o.kind != KindStream {
				if c.ready == nil {
					c.wrongType()
				}
				return // a woken client whose key changed type keeps waiting
			}
		}
		if group && (o == nil || streamOf(o).group(groupName) == nil) {
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
			var last streamID
			if o != nil {
				last = streamOf(o).lastID
			}
			ids = append(ids, last)
		case len(a) == 1 && a[0] == '>':
			if !group {
				c.err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids = append(ids, maxStreamID)
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
		var g *streamGroup
		var cons *streamConsumer
		if group {
			g = s.group(groupName)
			if gt != maxStreamID {
				serve, history = true, true
			} else if s.length > 0 && g.lastID.less(s.lastValidID()) {
				serve = true
				gt = g.lastID
			}
		} else if s.length > 0 && gt.less(s.lastValidID()) {
			serve = true
		}
		if serve {
			var gl *groupLog
			if group { // Redis 7.0 creates the consumer only when it serves it
				gl = &groupLog{d: d, key: key, group: groupName, now: c.streamNow(d)}
				if cons = g.consumer(consumerName); cons == nil {
					cons = s.createConsumer(g, consumerName, gl.now)
					// XCLAIM creates it when replayed; otherwise (NOACK as
					// Redis, a history read as svcdb adds) the log must.
					if noack || history {
						gl.createConsumer(c, consumerName)
					}
				}
				cons.seenTime = gl.now
			}
			served++
			if served == 1 {
				pos = len(c.Out)
			}
			start := gt
			start.incr()
			if !c.RESP3 {
				c.array(2)
			}
			c.bulk(key)
			if history {
				c.replyConsumerPEL(s, start, count, g, cons, gl)
			} else if g == nil {
				c.replyRange(s, start, maxStreamID, count, false, nil, nil, false, false, nil)
			} else {
				last := g.lastID
				c.replyRange(s, start, maxStreamID, count, false, g, cons, noack, false, gl)
				if g.lastID != last {
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
				idArgs[i] = appendStreamID(nil, ids[i])
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
func (c *Ctx) replyConsumerPEL(s *stream, start streamID, count int64, g *streamGroup, cons *streamConsumer, gl *groupLog) {
	pos, n := len(c.Out), int64(0)
	for cur, _ := cons.pel.seek(start); cur.valid(&cons.pel) && (count == 0 || n < count); cur = cons.pel.next(cur) {
		it := cons.pel.at(cur)
		if c.replyEntryByID(s, it.id) {
			it.n.deliveryTime = gl.now
			it.n.deliveryCount++
			gl.xclaim(c, g, it.id, it.n)
		} else {
			c.array(2)
			c.bulkID(it.id)
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
		s           *stream
		g           *streamGroup
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
			g = s.group(args[3])
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
		var id streamID
		if a := args[4]; len(a) == 1 && a[0] == '$' {
			if s != nil {
				id = s.lastID
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
		if s.createGroup(args[3], id, entriesRead) != nil {
			d.countChange()
			c.ok()
		} else {
			c.err("BUSYGROUP Consumer Group name already exists")
		}
		d.groupsChanged(o, before)
	case setid && (len(args) == 5 || len(args) == 7):
		var id streamID
		if a := args[4]; len(a) == 1 && a[0] == '$' {
			id = s.lastID
		} else {
			var ok bool
			if id, ok = c.parseID(a, 0, false); !ok {
				return
			}
		}
		g.lastID = id
		g.entriesRead = entriesRead
		d.countChange()
		c.ok()
	case resp.EqualFold(sub, "destroy") && len(args) == 4:
		if g == nil {
			c.int(0)
			return
		}
		before := o.valueMemory()
		s.destroyGroup(g)
		d.groupsChanged(o, before)
		d.countChange()
		c.int(1)
		d.signalReady(args[2]) // blocked XREADGROUP clients get -NOGROUP
	case resp.EqualFold(sub, "createconsumer") && len(args) == 5:
		before := o.valueMemory()
		created := s.createConsumer(g, args[4], c.streamNow(d)) != nil
		d.groupsChanged(o, before)
		if created {
			d.countChange()
			c.int(1)
		} else {
			c.int(0)
		}
	case resp.EqualFold(sub, "delconsumer") && len(args) == 5:
		var pending int64
		if cons := g.consumer(args[4]); cons != nil {
			pending = int64(cons.pel.n)
			before := o.valueMemory()
			s.deleteConsumer(g, cons)
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
	var maxDel streamID
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
			if id.less(maxDel) {
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
	if s.length > 0 {
		if id.less(s.lastValidID()) {
			c.err("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.length > entriesAdded {
			c.err("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.lastID = id
	if entriesAdded != -1 {
		s.entriesAdded = entriesAdded
	}
	if !maxDel.isZero() {
		s.maxDeleted = maxDel
	}
	c.db(key).countChange() // as Redis 7.0's xsetidCommand: server.dirty++, WATCH not signalled
	c.ok()
}

// groupOf looks key's group up for XACK, XPENDING, XCLAIM, XAUTOCLAIM:
// (nil, nil, true) when the key or group is missing, ok false after
// replying WRONGTYPE.
func (c *Ctx) groupOf(d *DB, key, name []byte) (*object, *streamGroup, bool) {
	o, ok := c.readKind(d, key, KindStream)
	if !ok || o == nil {
		return nil, nil, ok
	}
	return o, streamOf(o).group(name), true
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
		id, _ := parseStreamID(a, 0, true, nil)
		if s.ack(g, id) {
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
	var start, end streamID
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
		c.int(int64(g.pel.n))
		if g.pel.n == 0 {
			c.null()
			c.null()
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
			return
		}
		c.bulkID(g.pel.at(g.pel.first()).id)
		c.bulkID(g.pel.at(g.pel.last()).id)
		pos, n := len(c.Out), 0
		for _, cons := range g.consumers {
			if cons.pel.n == 0 {
				continue
			}
			c.array(2)
			c.bulkString(cons.name)
			c.Out = resp.AppendBulkInt(c.Out, int64(cons.pel.n))
			n++
		}
		c.Out = insertArrayHeader(c.Out, pos, '*', n)
		return
	}
	pel := &g.pel
	if consumerName != nil {
		cons := g.consumer(consumerName)
		if cons == nil {
			c.raw(resp.EmptyArray)
			return
		}
		pel = &cons.pel
	}
	pos, n := len(c.Out), 0
	for cur, _ := pel.seek(start); count > 0 && cur.valid(pel); cur = pel.next(cur) {
		it := pel.at(cur)
		if end.less(it.id) {
			break
		}
		if minIdle != 0 && c.Now-it.n.deliveryTime < minIdle {
			continue
		}
		n++
		count--
		c.array(4)
		c.bulkID(it.id)
		c.bulkString(it.n.consumer.name)
		c.int(max(c.Now-it.n.deliveryTime, 0))
		c.int(it.n.deliveryCount)
	}
	c.Out = insertArrayHeader(c.Out, pos, '*', n)
}

// ---- XCLAIM XAUTOCLAIM -------------------------------------------------------

// claimFor gives the pending entry id (its NACK n) to cons, as XCLAIM and
// XAUTOCLAIM do once they decided to claim it.
func (s *stream) claimFor(n *streamNACK, id streamID, cons *streamConsumer) {
	if n.consumer == cons {
		return
	}
	if n.consumer != nil {
		n.consumer.pel.delete(id, &s.mem)
	}
	cons.pel.insert(id, n, &s.mem)
	n.consumer = cons
}

// claimer returns the claiming consumer, created and marked seen on first use
// (Redis 7.0 creates it only once something is claimed).
func (c *Ctx) claimer(s *stream, g *streamGroup, cons **streamConsumer, now int64) *streamConsumer {
	if *cons == nil {
		name := c.Args[3]
		if *cons = g.consumer(name); *cons == nil {
			*cons = s.createConsumer(g, name, now)
		}
		(*cons).seenTime = now
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
		if _, ok := parseStreamID(args[j], 0, true, nil); !ok {
			break
		}
	}
	idArgs := args[5:j]
	gl := &groupLog{d: d, key: args[1], group: args[2], now: c.streamNow(d)}
	now := gl.now
	retryCount, deliveryTime := int64(-1), int64(-1)
	force, justID := false, false
	var lastID streamID
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
	if g.lastID.less(lastID) {
		g.lastID = lastID
		logLastID = true
	}
	if deliveryTime == -1 || deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	var cons *streamConsumer
	pos, n := len(c.Out), 0
	for _, a := range idArgs {
		id, _ := parseStreamID(a, 0, true, nil)
		nack := g.pel.get(id)
		if _, exists := s.find(id); !exists {
			if nack != nil { // pending, but gone from the stream: forget it
				gl.xclaim(c, g, id, nack)
				logLastID = false
				s.ack(g, id)
			}
			continue
		}
		if force && nack == nil {
			nack = &streamNACK{deliveryTime: now, deliveryCount: 1}
			g.pel.insert(id, nack, &s.mem)
			s.mem += streamNACKSize
		}
		if nack == nil || nack.consumer != nil && minIdle != 0 && now-nack.deliveryTime < minIdle {
			continue
		}
		cl := c.claimer(s, g, &cons, now)
		nack.deliveryTime = deliveryTime
		if retryCount >= 0 {
			nack.deliveryCount = retryCount
		} else if !justID {
			nack.deliveryCount++
		}
		s.claimFor(nack, id, cl)
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
	if ex && !start.incr() {
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
	var cons *streamConsumer
	var deleted []streamID
	c.array(3)
	cursorPos := len(c.Out)
	n := 0
	cur, _ := g.pel.seek(start)
	for ; attempts > 0 && count > 0 && cur.valid(&g.pel); attempts-- {
		it := g.pel.at(cur)
		id, nack := it.id, it.n
		if _, exists := s.find(id); !exists {
			gl.xclaim(c, g, id, nack) // as Redis: logged, then forgotten
			s.ack(g, id)
			deleted = append(deleted, id)
			cur, _ = g.pel.seek(id)
			count--
			continue
		}
		cur = g.pel.next(cur)
		if minIdle != 0 && now-nack.deliveryTime < minIdle {
			continue
		}
		nack.deliveryTime = now
		if !justID {
			nack.deliveryCount++
		}
		s.claimFor(nack, id, c.claimer(s, g, &cons, now))
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
	var next streamID
	if cur.valid(&g.pel) {
		next = g.pel.at(cur).id
	}
	// The cursor comes first: put it in front of the claimed entries.
	var idBuf [48]byte
	h := append(idBuf[:0], '$')
	h = strconv.AppendInt(h, int64(uintLen(next.ms)+1+uintLen(next.seq)), 10)
	h = append(h, '\r', '\n')
	h = appendStreamID(h, next)
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
		g := s.group(args[3])
		if g == nil {
			c.noGroupForKey(args[3], key)
			return
		}
		c.array(len(g.consumers))
		for _, cons := range g.consumers {
			c.Out = resp.AppendMapHeader(c.Out, 3, c.RESP3)
			c.bulkString("name")
			c.bulkString(cons.name)
			c.bulkString("pending")
			c.int(int64(cons.pel.n))
			c.bulkString("idle")
			c.int(max(c.Now-cons.seenTime, 0))
		}
	case resp.EqualFold(sub, "groups") && len(args) == 3:
		c.array(len(s.groups))
		for _, g := range s.groups {
			c.Out = resp.AppendMapHeader(c.Out, 6, c.RESP3)
			c.bulkString("name")
			c.bulkString(g.name)
			c.bulkString("consumers")
			c.int(int64(len(g.consumers)))
			c.bulkString("pending")
			c.int(int64(g.pel.n))
			c.bulkString("last-delivered-id")
			c.bulkID(g.lastID)
			c.replyGroupCounters(s, g)
		}
	case resp.EqualFold(sub, "stream"):
		c.xinfoStream(s)
	default:
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xinfo")
	}
}

// replyGroupCounters replies a group's entries-read and lag fields.
func (c *Ctx) replyGroupCounters(s *stream, g *streamGroup) {
	c.bulkString("entries-read")
	if g.entriesRead != -1 {
		c.int(g.entriesRead)
	} else {
		c.null()
	}
	c.bulkString("lag")
	if lag, ok := s.lag(g); ok {
		c.int(lag)
	} else {
		c.null()
	}
}

func (c *Ctx) xinfoStream(s *stream) {
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
	c.int(s.length)
	c.bulkString("radix-tree-keys")
	c.int(int64(len(s.blocks)))
	c.bulkString("radix-tree-nodes")
	c.int(s.raxNodes())
	c.bulkString("last-generated-id")
	c.bulkID(s.lastID)
	c.bulkString("max-deleted-entry-id")
	c.bulkID(s.maxDeleted)
	c.bulkString("entries-added")
	c.int(s.entriesAdded)
	c.bulkString("recorded-first-entry-id")
	c.bulkID(s.firstID)
	if !full {
		c.bulkString("groups")
		c.int(int64(len(s.groups)))
		c.bulkString("first-entry")
		if c.replyRange(s, streamID{}, maxStreamID, 1, false, nil, nil, false, true, nil) == 0 {
			c.null()
		}
		c.bulkString("last-entry")
		if c.replyRange(s, streamID{}, maxStreamID, 1, true, nil, nil, false, true, nil) == 0 {
			c.null()
		}
		return
	}
	c.bulkString("entries")
	c.replyRange(s, streamID{}, maxStreamID, count, false, nil, nil, false, false, nil)
	c.bulkString("groups")
	c.array(len(s.groups))
	for _, g := range s.groups {
		c.Out = resp.AppendMapHeader(c.Out, 7, c.RESP3)
		c.bulkString("name")
		c.bulkString(g.name)
		c.bulkString("last-delivered-id")
		c.bulkID(g.lastID)
		c.replyGroupCounters(s, g)
		c.bulkString("pel-count")
		c.int(int64(g.pel.n))
		c.bulkString("pending")
		pos, n := len(c.Out), int64(0)
		for cur := g.pel.first(); cur.valid(&g.pel) && (count == 0 || n < count); cur = g.pel.next(cur) {
			it := g.pel.at(cur)
			c.array(4)
			c.bulkID(it.id)
			c.bulkString(it.n.consumer.name)
			c.int(it.n.deliveryTime)
			c.int(it.n.deliveryCount)
			n++
		}
		c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
		c.bulkString("consumers")
		c.array(len(g.consumers))
		for _, cons := range g.consumers {
			c.Out = resp.AppendMapHeader(c.Out, 4, c.RESP3)
			c.bulkString("name")
			c.bulkString(cons.name)
			c.bulkString("seen-time")
			c.int(cons.seenTime)
			c.bulkString("pel-count")
			c.int(int64(cons.pel.n))
			c.bulkString("pending")
			pos, n := len(c.Out), int64(0)
			for cur := cons.pel.first(); cur.valid(&cons.pel) && (count == 0 || n < count); cur = cons.pel.next(cur) {
				it := cons.pel.at(cur)
				c.array(3)
				c.bulkID(it.id)
				c.int(it.n.deliveryTime)
				c.int(it.n.deliveryCount)
				n++
			}
			c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
		}
	}
}
