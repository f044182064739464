package streams

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// addStreamCommands registers the stream commands' handlers.
func Register(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("xadd", cmdXAdd, keyspace.RouteKeys)
	add("xlen", cmdXLen, keyspace.RouteKeys)
	add("xrange", cmdXRange, keyspace.RouteKeys)
	add("xrevrange", cmdXRevRange, keyspace.RouteKeys)
	add("xdel", cmdXDel, keyspace.RouteKeys)
	add("xtrim", cmdXTrim, keyspace.RouteKeys)
	add("xread", cmdXRead, keyspace.RouteKeySpecs)
	add("xreadgroup", cmdXReadGroup, keyspace.RouteKeySpecs)
	add("xgroup", cmdXGroup, keyspace.RouteSubKey)
	add("xack", cmdXAck, keyspace.RouteKeys)
	add("xpending", cmdXPending, keyspace.RouteKeys)
	add("xinfo", cmdXInfo, keyspace.RouteSubKey)
	add("xsetid", cmdXSetID, keyspace.RouteKeys)
	add("xclaim", cmdXClaim, keyspace.RouteKeys)
	add("xautoclaim", cmdXAutoClaim, keyspace.RouteKeys)
}

func streamOf(o *keyspace.Object) *values.Stream { return o.Coll().(*values.Stream) }

// groupsChanged accounts for a change of o's memory made by consumer-group
// bookkeeping (XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XGROUP): the memory
// part of ValueChanged only, since Redis does not count these as modifying
// the key (WATCH stays clean), as it does XADD and an XDEL or XTRIM that
// deletes.
func groupsChanged(d *keyspace.DB, o *keyspace.Object, before int64) {
	if delta := o.ValueMemory() - before; delta != 0 {
		d.AddMemory(delta)
	}
}

// newStreamKey creates key holding an empty stream (accounted by the caller
// with d.ValueChanged(o, 0)).
func newStreamKey(d *keyspace.DB, key []byte) *keyspace.Object {
	o := d.Insert(key, keyspace.KindStream)
	o.Enc = keyspace.EncStream
	o.SetColl(values.NewStream())
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
func replyEntry(c *keyspace.Ctx, b *values.StreamBlock, e *values.StreamEntry) {
	c.Array(2)
	bulkID(c, e.Id)
	c.Array(int(e.Nf) * 2)
	for it := b.Fields(e); ; {
		f, v, ok := it.Next()
		if !ok {
			return
		}
		c.Bulk(f)
		c.Bulk(v)
	}
}

// replyRange is streamReplyWithRange: the live entries from start to end
// (inclusive), at most count (0 = all), as an array unless raw. With a
// group, entries delivered advance the group and (unless noack) become
// pending for cons. It returns how many entries it sent.
//
// For XREADGROUP, gl says where to log each new pending entry (an XCLAIM, as
// Redis' streamReplyWithRange propagates it); nil otherwise.
func replyRange(c *keyspace.Ctx, s *values.Stream, start, end values.StreamID, count int64, rev bool, g *values.StreamGroup, cons *values.StreamConsumer, noack, raw bool, gl *groupLog) int64 {
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
			replyEntry(c, b, e)
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
func replyEntryByID(c *keyspace.Ctx, s *values.Stream, id values.StreamID) bool {
	p, ok := s.Find(id)
	if ok {
		replyEntry(c, s.Blocks[p.B], s.Ent(p))
	}
	return ok
}

// errNoGroup replies Redis' -NOGROUP for a missing key or group.
func errNoGroup(c *keyspace.Ctx, key, group []byte) {
	c.Err("NOGROUP No such key '" + cString(key) + "' or consumer group '" + cString(group) + "'")
}

func noGroupForKey(c *keyspace.Ctx, group, key []byte) {
	c.Err("NOGROUP No such consumer group '" + cString(group) + "' for key name '" + cString(key) + "'")
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
	d          *keyspace.DB
	key, group []byte
	now        int64
}

func (gl *groupLog) changed() { gl.d.CountChange() }

// xclaim records the pending entry id (its NACK n) as Redis'
// streamPropagateXCLAIM: XCLAIM key group <n's consumer> 0 id TIME
// <delivery time> RETRYCOUNT <count> FORCE JUSTID LASTID <group's last ID>,
// which replays to the same NACK whatever the state (and, for an entry no
// longer in the stream, drops it as the command did).
func (gl *groupLog) xclaim(c *keyspace.Ctx, g *values.StreamGroup, id values.StreamID, n *values.StreamNACK) {
	gl.changed()
	if !c.Logging() {
		return
	}
	var idBuf, lastBuf [41]byte
	var timeBuf, countBuf [20]byte
	c.LogAs(cmdXCLAIM, gl.key, gl.group, []byte(n.Consumer.Name), argZero,
		values.AppendStreamID(idBuf[:0], id),
		argTIME, strconv.AppendInt(timeBuf[:0], n.DeliveryTime, 10),
		argRETRYCOUNT, strconv.AppendInt(countBuf[:0], n.DeliveryCount, 10),
		argFORCE, argJUSTID, argLASTID, values.AppendStreamID(lastBuf[:0], g.LastID))
}

// setID records g's last ID and entries-read counter as Redis'
// streamPropagateGroupID: XGROUP SETID key group <last ID> ENTRIESREAD <n>.
func (gl *groupLog) setID(c *keyspace.Ctx, g *values.StreamGroup) {
	gl.changed()
	if !c.Logging() {
		return
	}
	var lastBuf [41]byte
	var readBuf [20]byte
	c.LogAs(cmdXGROUP, argSETID, gl.key, gl.group, values.AppendStreamID(lastBuf[:0], g.LastID),
		argENTRIESREAD, strconv.AppendInt(readBuf[:0], g.EntriesRead, 10))
}

// createConsumer records the creation of consumer as Redis'
// streamPropagateConsumerCreation: XGROUP CREATECONSUMER key group consumer.
func (gl *groupLog) createConsumer(c *keyspace.Ctx, consumer []byte) {
	gl.changed()
	c.LogAs(cmdXGROUP, argCREATECONSUMER, gl.key, gl.group, consumer)
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
func parseAddTrim(c *keyspace.Ctx, a *xaddArgs, xadd bool) int {
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
				c.Err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
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
					c.NotInteger()
					return -1
				}
				if v < 0 {
					c.Err("ERR The MAXLEN argument must be >= 0.")
					return -1
				}
				a.MaxLen = v
				a.Strategy = values.TrimMaxLen
			} else {
				id, ok := parseID(c, args[i+1], 0, true)
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
				c.NotInteger()
				return -1
			}
			if v < 0 {
				c.Err("ERR The LIMIT argument must be >= 0.")
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
				c.Err(errInvalidStreamID)
				return -1
			}
			a.id, a.idGiven = id, true
			break loop
		default:
			c.SyntaxErr()
			return -1
		}
	}
	if a.Limit != 0 && a.Strategy == values.TrimNone {
		c.Err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if !xadd && a.Strategy == values.TrimNone {
		c.Err("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	switch {
	case loading(c, args[1]):
		// From the append-only file: trimming is exact there (the log
		// records "~" as "=" with the resulting threshold), so LIMIT, kept
		// in the record as Redis keeps it, must neither fail nor stop it.
		a.Limit = 0
	case limitGiven && !a.Approx:
		c.Err("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return -1
	case limitGiven:
	case a.Approx:
		// At most 100 nodes' worth of entries, capped both ways as Redis does.
		switch n := c.Limits().StreamNodeMaxEntries; {
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

func cmdXAdd(c *keyspace.Ctx) {
	var a xaddArgs
	idPos := parseAddTrim(c, &a, true)
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
		c.Err("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindStream)
	if !ok {
		return
	}
	existed := o != nil
	var before int64
	if o == nil {
		if a.noMkStream {
			c.Null()
			return
		}
		o = newStreamKey(d, key)
	} else {
		before = o.ValueMemory()
	}
	s := streamOf(o)
	if !existed {
		// Accounted now: an error below leaves the new, empty stream behind,
		// as in Redis.
		d.ValueChanged(o, 0)
		before = o.ValueMemory()
	}
	if s.LastID == values.MaxStreamID {
		c.Err("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	var id values.StreamID
	switch {
	case !a.idGiven:
		if ms := uint64(streamNow(c, d)); ms > s.LastID.Ms {
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
		c.Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	fv := args[fieldPos:]
	if values.FieldsLen(fv) > values.StreamListpackMaxSize {
		c.Err("ERR Elements are too large to be stored")
		return
	}
	s.Append(id, fv, c.Limits().StreamNodeMaxEntries)
	bulkID(c, id)
	c.Notify(keyspace.NotifyStream, "xadd", key) // after the reply, as Redis' xaddCommand
	if s.Trim(&a.TrimArgs) > 0 {
		c.Notify(keyspace.NotifyStream, "xtrim", key)
	}
	d.ValueChanged(o, before)
	if existed {
		d.SignalReady(key)
	}
	if c.Logging() && (!a.idGiven || !a.seqGiven || a.Approx) {
		// As Redis' xaddCommand: the ID it generated, and an approximate
		// trim as the exact one that removes the same entries.
		args := slices.Clone(c.Args)
		args[idPos] = values.AppendStreamID(nil, id)
		rewriteTrim(c, args, s, &a.TrimArgs)
		c.LogAs(args...)
	}
}

// rewriteTrim replaces, in a copy of XADD's or XTRIM's arguments, an
// approximate trim ("~" threshold) by the exact one that leaves the stream
// as it is now, as Redis' streamRewriteApproxSpecifier and
// streamRewriteTrimArgument do: MAXLEN = the stream's length, MINID = its
// first entry's ID (a deleted one included; the largest ID when empty).
func rewriteTrim(c *keyspace.Ctx, args [][]byte, s *values.Stream, a *values.TrimArgs) {
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
func loading(c *keyspace.Ctx, key []byte) bool {
	return c.DBFor(key).Loading()
}

// streamNow is the clock stream bookkeeping records (the ID XADD generates,
// delivery and seen times): c.Now, except while an append-only file is
// replayed, where c.Now is 0 so that nothing expires and Redis' loader reads
// the wall clock (mstime) for these.
func streamNow(c *keyspace.Ctx, d *keyspace.DB) int64 {
	if d.Loading() {
		return time.Now().UnixMilli()
	}
	return c.Now
}

func cmdXTrim(c *keyspace.Ctx) {
	var a xaddArgs
	if parseAddTrim(c, &a, false) < 0 {
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	before := o.ValueMemory()
	s := streamOf(o)
	n := s.Trim(&a.TrimArgs)
	if n > 0 {
		d.ValueChanged(o, before)
		c.Notify(keyspace.NotifyStream, "xtrim", key)
		if c.Logging() && a.Approx {
			args := slices.Clone(c.Args)
			rewriteTrim(c, args, s, &a.TrimArgs)
			c.LogAs(args...)
		}
	}
	c.Int(n)
}

// ---- XLEN XRANGE XREVRANGE XDEL ---------------------------------------------

func cmdXLen(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(streamOf(o).Length)
}

func cmdXRange(c *keyspace.Ctx)    { xrange(c, false) }
func cmdXRevRange(c *keyspace.Ctx) { xrange(c, true) }

// parseRange parses an interval's start and end as XRANGE and XPENDING do.
func parseRange(c *keyspace.Ctx, startArg, endArg []byte) (start, end values.StreamID, ok bool) {
	start, ex, ok := parseIntervalID(c, startArg, 0)
	if !ok {
		return start, end, false
	}
	if ex && !start.Incr() {
		c.Err("ERR invalid start ID for the interval")
		return start, end, false
	}
	end, ex, ok = parseIntervalID(c, endArg, math.MaxUint64)
	if !ok {
		return start, end, false
	}
	if ex && !end.Decr() {
		c.Err("ERR invalid end ID for the interval")
		return start, end, false
	}
	return start, end, true
}

func xrange(c *keyspace.Ctx, rev bool) {
	args := c.Args
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, end, ok := parseRange(c, startArg, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if !resp.EqualFold(args[j], "count") || j+1 == len(args) {
			c.SyntaxErr()
			return
		}
		v, ok := resp.ParseInt(args[j+1])
		if !ok {
			c.NotInteger()
			return
		}
		count = max(v, 0)
		j++
	}
	key := args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindStream)
	if !ok {
		return
	}
	switch {
	case o == nil:
		c.Raw(resp.EmptyArray)
	case count == 0:
		c.Out = resp.AppendNullArray(c.Out, c.RESP3)
	default:
		replyRange(c, streamOf(o), start, end, max(count, 0), rev, nil, nil, false, false, nil)
	}
}

func cmdXDel(c *keyspace.Ctx) {
	args := c.Args
	key := args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	for _, a := range args[2:] {
		if _, ok := parseID(c, a, 0, true); !ok {
			return
		}
	}
	s := streamOf(o)
	before := o.ValueMemory()
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
		d.ValueChanged(o, before)
		c.Notify(keyspace.NotifyStream, "xdel", key)
	}
	c.Int(deleted)
}

// ---- XREAD XREADGROUP --------------------------------------------------------

func cmdXRead(c *keyspace.Ctx)      { xread(c, false) }
func cmdXReadGroup(c *keyspace.Ctx) { xread(c, true) }

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
func xread(c *keyspace.Ctx, group bool) {
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
			dl, ok := c.ParseTimeout(args[i], false)
			if !ok {
				return
			}
			blocking, deadline = true, dl
		case more > 0 && resp.EqualFold(o, "count"):
			i++
			v, ok := resp.ParseInt(args[i])
			if !ok {
				c.NotInteger()
				return
			}
			count = max(v, 0)
		case more > 0 && resp.EqualFold(o, "streams"):
			streamsArg = i + 1
			n = len(args) - streamsArg
			if n%2 != 0 {
				c.Err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			n /= 2
			break loop
		case more >= 2 && resp.EqualFold(o, "group"):
			if !group {
				c.Err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			groupName, consumerName = args[i+1], args[i+2]
			i += 2
		case resp.EqualFold(o, "noack"):
			if !group {
				c.Err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.SyntaxErr()
			return
		}
	}
	if streamsArg == 0 {
		c.SyntaxErr()
		return
	}
	if group && groupName == nil {
		c.Err("ERR Missing GROUP option for XREADGROUP")
		return
	}
	if !c.Serving() && c.NumShards() > 1 && !xreadKeysHeld(c.Cmd, args, streamsArg, n) {
		c.Err("ERR svcdb cannot route this " + c.Cmd.FullName + ": a group or consumer named STREAMS must come right after GROUP")
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
		if !c.Servable(key) {
			ids = append(ids, values.StreamID{})
			continue
		}
		d := c.DBFor(key)
		o := d.Lookup(key, c.Now)
		if c.Serving() && group && (o == nil || o.Kind != keyspace.KindStream) {
			// As Redis 7.0: a woken XREADGROUP whose stream went (deleted,
			// overwritten, renamed away, flushed, expired) is told so.
			c.Err("UNBLOCKED the stream key no longer exists")
			return
		}
		if o == nil {
			d.Miss()
			c.Notify(keyspace.NotifyKeyMiss, "keymiss", key)
		} else {
			d.Hit()
			if o.Kind != keyspace.KindStream {
				if !c.Serving() {
					c.WrongType()
				}
				return // a woken XREAD whose key changed type keeps waiting
			}
		}
		if group && (o == nil || streamOf(o).Group(groupName) == nil) {
			switch {
			case !c.Serving():
				c.Err("NOGROUP No such key '" + cString(key) + "' or consumer group '" + cString(groupName) + "' in XREADGROUP with GROUP option")
			case o != nil:
				c.Err("NOGROUP the consumer group this client was blocked on no longer exists")
			}
			return
		}
		a := idArgs[i]
		switch {
		case len(a) == 1 && a[0] == '$':
			if group {
				c.Err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			var last values.StreamID
			if o != nil {
				last = streamOf(o).LastID
			}
			ids = append(ids, last)
		case len(a) == 1 && a[0] == '>':
			if !group {
				c.Err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids = append(ids, values.MaxStreamID)
		default:
			id, ok := parseID(c, a, 0, true)
			if !ok {
				return
			}
			ids = append(ids, id)
		}
	}

	// Serve what can be served now, each stream in order.
	served, pos := 0, 0
	for i, key := range keys {
		if !c.Servable(key) {
			continue
		}
		d := c.DBFor(key)
		o := d.Lookup(key, c.Now)
		if o == nil {
			continue
		}
		s := streamOf(o)
		before := o.ValueMemory()
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
				gl = &groupLog{d: d, key: key, group: groupName, now: streamNow(c, d)}
				if cons = g.Consumer(consumerName); cons == nil {
					cons = s.CreateConsumer(g, consumerName, gl.now)
					c.Notify(keyspace.NotifyStream, "xgroup-createconsumer", key)
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
				c.Array(2)
			}
			c.Bulk(key)
			if history {
				replyConsumerPEL(c, s, start, count, g, cons, gl)
			} else if g == nil {
				replyRange(c, s, start, values.MaxStreamID, count, false, nil, nil, false, false, nil)
			} else {
				last := g.LastID
				replyRange(c, s, start, values.MaxStreamID, count, false, g, cons, noack, false, gl)
				if g.LastID != last {
					// Redis logs the group's new last ID for NOACK only; svcdb
					// logs it always, since the XCLAIMs above do not carry
					// the group's entries-read counter (XINFO's lag).
					gl.setID(c, g)
				}
			}
		}
		groupsChanged(d, o, before)
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
	if !c.Serving() {
		for i, a := range idArgs {
			if len(a) == 1 && a[0] == '$' {
				idArgs[i] = values.AppendStreamID(nil, ids[i])
			}
		}
	}
	c.Block(keys, deadline, keyspace.TimeoutNullArray)
}

// replyConsumerPEL is streamReplyWithRangeFromConsumerPEL: the consumer's
// pending entries from start on, a deleted one as [id, null]; each one still
// in the stream counts as delivered again.
//
// Unlike Redis, svcdb logs each entry delivered again (an XCLAIM with its
// new delivery time and count), so that a restart keeps them.
func replyConsumerPEL(c *keyspace.Ctx, s *values.Stream, start values.StreamID, count int64, g *values.StreamGroup, cons *values.StreamConsumer, gl *groupLog) {
	pos, n := len(c.Out), int64(0)
	for cur, _ := cons.Pel.Seek(start); cur.Valid(&cons.Pel) && (count == 0 || n < count); cur = cons.Pel.Next(cur) {
		it := cons.Pel.At(cur)
		if replyEntryByID(c, s, it.Id) {
			it.N.DeliveryTime = gl.now
			it.N.DeliveryCount++
			gl.xclaim(c, g, it.Id, it.N)
		} else {
			c.Array(2)
			bulkID(c, it.Id)
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

func cmdXGroup(c *keyspace.Ctx) {
	args := c.Args
	sub := args[1]
	var (
		d           *keyspace.DB
		o           *keyspace.Object
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
					c.NotInteger()
					return
				}
				if v < 0 && v != -1 {
					c.Err("ERR value for ENTRIESREAD must be positive or -1")
					return
				}
				entriesRead = v
				i += 2
			default:
				c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xgroup")
				return
			}
		}
		d = c.DBFor(args[2])
		var ok bool
		if o, ok = c.WriteKind(d, args[2], keyspace.KindStream); !ok {
			return
		}
		if o != nil {
			s = streamOf(o)
		}
		if !mkstream {
			if s == nil {
				c.Err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
				return
			}
			g = s.Group(args[3])
			if g == nil && (setid || resp.EqualFold(sub, "createconsumer") || resp.EqualFold(sub, "delconsumer")) {
				noGroupForKey(c, args[3], args[2])
				return
			}
		}
	}
	switch {
	case len(args) == 2 && resp.EqualFold(sub, "help"):
		c.Help(xgroupHelp)
	case create && len(args) >= 5 && len(args) <= 8:
		var id values.StreamID
		if a := args[4]; len(a) == 1 && a[0] == '$' {
			if s != nil {
				id = s.LastID
			}
		} else {
			var ok bool
			if id, ok = parseID(c, a, 0, true); !ok {
				return
			}
		}
		if s == nil {
			o = newStreamKey(d, args[2])
			s = streamOf(o)
			d.ValueChanged(o, 0)
		}
		before := o.ValueMemory()
		if s.CreateGroup(args[3], id, entriesRead) != nil {
			d.CountChange()
			c.OK()
			c.Notify(keyspace.NotifyStream, "xgroup-create", args[2])
		} else {
			c.Err("BUSYGROUP Consumer Group name already exists")
		}
		groupsChanged(d, o, before)
	case setid && (len(args) == 5 || len(args) == 7):
		var id values.StreamID
		if a := args[4]; len(a) == 1 && a[0] == '$' {
			id = s.LastID
		} else {
			var ok bool
			if id, ok = parseID(c, a, 0, false); !ok {
				return
			}
		}
		g.LastID = id
		g.EntriesRead = entriesRead
		d.CountChange()
		c.OK()
		c.Notify(keyspace.NotifyStream, "xgroup-setid", args[2])
	case resp.EqualFold(sub, "destroy") && len(args) == 4:
		if g == nil {
			c.Int(0)
			return
		}
		before := o.ValueMemory()
		s.DestroyGroup(g)
		groupsChanged(d, o, before)
		d.CountChange()
		c.Int(1)
		c.Notify(keyspace.NotifyStream, "xgroup-destroy", args[2])
		d.SignalReady(args[2]) // blocked XREADGROUP clients get -NOGROUP
	case resp.EqualFold(sub, "createconsumer") && len(args) == 5:
		before := o.ValueMemory()
		created := s.CreateConsumer(g, args[4], streamNow(c, d)) != nil
		groupsChanged(d, o, before)
		if created {
			d.CountChange()
			c.Notify(keyspace.NotifyStream, "xgroup-createconsumer", args[2])
			c.Int(1)
		} else {
			c.Int(0)
		}
	case resp.EqualFold(sub, "delconsumer") && len(args) == 5:
		var pending int64
		if cons := g.Consumer(args[4]); cons != nil {
			pending = int64(cons.Pel.N)
			before := o.ValueMemory()
			s.DeleteConsumer(g, cons)
			groupsChanged(d, o, before)
			d.CountChange()
			c.Notify(keyspace.NotifyStream, "xgroup-delconsumer", args[2])
		}
		c.Int(pending)
	default:
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xgroup")
	}
}

// ---- XSETID XACK XPENDING ----------------------------------------------------

func cmdXSetID(c *keyspace.Ctx) {
	args := c.Args
	id, ok := parseID(c, args[2], 0, true)
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
				c.NotInteger()
				return
			}
			if v < 0 {
				c.Err("ERR entries_added must be positive")
				return
			}
			entriesAdded = v
		case more > 0 && resp.EqualFold(opt, "maxdeletedid"):
			if maxDel, ok = parseID(c, args[i+1], 0, true); !ok {
				return
			}
			if id.Less(maxDel) {
				c.Err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			c.SyntaxErr()
			return
		}
	}
	key := args[1]
	o, ok := c.WriteKind(c.DBFor(key), key, keyspace.KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.Err("ERR no such key")
		return
	}
	s := streamOf(o)
	if s.Length > 0 {
		if id.Less(s.LastValidID()) {
			c.Err("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.Length > entriesAdded {
			c.Err("ERR The entries_added specified in XSETID is smaller than the target stream length")
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
	c.DBFor(key).CountChange() // as Redis 7.0's xsetidCommand: server.dirty++, WATCH not signalled
	c.OK()
	c.Notify(keyspace.NotifyStream, "xsetid", key)
}

// groupOf looks key's group up for XACK, XPENDING, XCLAIM, XAUTOCLAIM:
// (nil, nil, true) when the key or group is missing, ok false after
// replying WRONGTYPE.
func groupOf(c *keyspace.Ctx, d *keyspace.DB, key, name []byte) (*keyspace.Object, *values.StreamGroup, bool) {
	o, ok := c.ReadKind(d, key, keyspace.KindStream)
	if !ok || o == nil {
		return nil, nil, ok
	}
	return o, streamOf(o).Group(name), true
}

func cmdXAck(c *keyspace.Ctx) {
	args := c.Args
	d := c.DBFor(args[1])
	o, g, ok := groupOf(c, d, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		c.Int(0)
		return
	}
	for _, a := range args[3:] {
		if _, ok := parseID(c, a, 0, true); !ok {
			return
		}
	}
	s := streamOf(o)
	before := o.ValueMemory()
	var acked int64
	for _, a := range args[3:] {
		id, _ := values.ParseStreamID(a, 0, true, nil)
		if s.Ack(g, id) {
			acked++
		}
	}
	if acked > 0 {
		d.CountChange()
	}
	groupsChanged(d, o, before)
	c.Int(acked)
}

func cmdXPending(c *keyspace.Ctx) {
	args := c.Args
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.SyntaxErr()
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
				c.NotInteger()
				return
			}
			minIdle = v
			if len(args) < 8 {
				c.SyntaxErr()
				return
			}
			si += 2
		}
		v, ok := resp.ParseInt(args[si+2])
		if !ok {
			c.NotInteger()
			return
		}
		count = max(v, 0)
		if start, end, ok = parseRange(c, args[si], args[si+1]); !ok {
			return
		}
		if si+3 < len(args) {
			consumerName = args[si+3]
		}
	}
	_, g, ok := groupOf(c, c.DBFor(args[1]), args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		errNoGroup(c, args[1], args[2])
		return
	}
	if len(args) == 3 {
		c.Array(4)
		c.Int(int64(g.Pel.N))
		if g.Pel.N == 0 {
			c.Null()
			c.Null()
			c.Out = resp.AppendNullArray(c.Out, c.RESP3)
			return
		}
		bulkID(c, g.Pel.At(g.Pel.First()).Id)
		bulkID(c, g.Pel.At(g.Pel.Last()).Id)
		pos, n := len(c.Out), 0
		for _, cons := range g.Consumers {
			if cons.Pel.N == 0 {
				continue
			}
			c.Array(2)
			c.BulkString(cons.Name)
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
			c.Raw(resp.EmptyArray)
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
		c.Array(4)
		bulkID(c, it.Id)
		c.BulkString(it.N.Consumer.Name)
		c.Int(max(c.Now-it.N.DeliveryTime, 0))
		c.Int(it.N.DeliveryCount)
	}
	c.Out = insertArrayHeader(c.Out, pos, '*', n)
}

// ---- XCLAIM XAUTOCLAIM -------------------------------------------------------

// claimer returns the claiming consumer, created and marked seen on first use
// (Redis 7.0 creates it only once something is claimed).
func claimer(c *keyspace.Ctx, s *values.Stream, g *values.StreamGroup, cons **values.StreamConsumer, now int64) *values.StreamConsumer {
	if *cons == nil {
		name := c.Args[3]
		if *cons = g.Consumer(name); *cons == nil {
			*cons = s.CreateConsumer(g, name, now)
			c.Notify(keyspace.NotifyStream, "xgroup-createconsumer", c.Args[1])
		}
		(*cons).SeenTime = now
	}
	return *cons
}

func cmdXClaim(c *keyspace.Ctx) {
	args := c.Args
	d := c.DBFor(args[1])
	o, g, ok := groupOf(c, d, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		errNoGroup(c, args[1], args[2])
		return
	}
	minIdle, ok := resp.ParseInt(args[4])
	if !ok {
		c.Err("ERR Invalid min-idle-time argument for XCLAIM")
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
	gl := &groupLog{d: d, key: args[1], group: args[2], now: streamNow(c, d)}
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
				c.Err("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = now - v
		case more > 0 && resp.EqualFold(opt, "time"):
			j++
			v, ok := resp.ParseInt(args[j])
			if !ok {
				c.Err("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			deliveryTime = v
		case more > 0 && resp.EqualFold(opt, "retrycount"):
			j++
			v, ok := resp.ParseInt(args[j])
			if !ok {
				c.Err("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retryCount = v
		case more > 0 && resp.EqualFold(opt, "lastid"):
			j++
			if lastID, ok = parseID(c, args[j], 0, true); !ok {
				return
			}
		default:
			c.Err("ERR Unrecognized XCLAIM option '" + cString(opt) + "'")
			return
		}
	}
	s := streamOf(o)
	before := o.ValueMemory()
	defer groupsChanged(d, o, before)
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
		cl := claimer(c, s, g, &cons, now)
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
			bulkID(c, id)
		} else {
			replyEntryByID(c, s, id)
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

func cmdXAutoClaim(c *keyspace.Ctx) {
	args := c.Args
	minIdle, ok := resp.ParseInt(args[4])
	if !ok {
		c.Err("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, ok := parseIntervalID(c, args[5], 0)
	if !ok {
		return
	}
	if ex && !start.Incr() {
		c.Err("ERR invalid start ID for the interval")
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
				c.Err("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case resp.EqualFold(opt, "justid"):
			justID = true
		default:
			c.SyntaxErr()
			return
		}
	}
	d := c.DBFor(args[1])
	o, g, ok := groupOf(c, d, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		errNoGroup(c, args[1], args[2])
		return
	}
	if count > xautoclaimMaxCount {
		c.Err("ERR Insufficient memory, failed allocating transient memory, COUNT too high.")
		return
	}
	s := streamOf(o)
	before := o.ValueMemory()
	defer groupsChanged(d, o, before)
	gl := &groupLog{d: d, key: args[1], group: args[2], now: streamNow(c, d)}
	now := gl.now
	attempts := count * 10
	var cons *values.StreamConsumer
	var deleted []values.StreamID
	c.Array(3)
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
		s.ClaimFor(nack, id, claimer(c, s, g, &cons, now))
		gl.xclaim(c, g, id, nack)
		if justID {
			bulkID(c, id)
		} else {
			replyEntryByID(c, s, id)
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
	c.Array(len(deleted))
	for _, id := range deleted {
		bulkID(c, id)
	}
}

// ---- XINFO -------------------------------------------------------------------

func cmdXInfo(c *keyspace.Ctx) {
	args := c.Args
	sub := args[1]
	if resp.EqualFold(sub, "help") {
		c.Help(xinfoHelp)
		return
	}
	if len(args) < 3 {
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xinfo")
		return
	}
	key := args[2]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindStream)
	if !ok {
		return
	}
	if o == nil {
		c.Err("ERR no such key")
		return
	}
	s := streamOf(o)
	switch {
	case resp.EqualFold(sub, "consumers") && len(args) == 4:
		g := s.Group(args[3])
		if g == nil {
			noGroupForKey(c, args[3], key)
			return
		}
		c.Array(len(g.Consumers))
		for _, cons := range g.Consumers {
			c.Out = resp.AppendMapHeader(c.Out, 3, c.RESP3)
			c.BulkString("name")
			c.BulkString(cons.Name)
			c.BulkString("pending")
			c.Int(int64(cons.Pel.N))
			c.BulkString("idle")
			c.Int(max(c.Now-cons.SeenTime, 0))
		}
	case resp.EqualFold(sub, "groups") && len(args) == 3:
		c.Array(len(s.Groups))
		for _, g := range s.Groups {
			c.Out = resp.AppendMapHeader(c.Out, 6, c.RESP3)
			c.BulkString("name")
			c.BulkString(g.Name)
			c.BulkString("consumers")
			c.Int(int64(len(g.Consumers)))
			c.BulkString("pending")
			c.Int(int64(g.Pel.N))
			c.BulkString("last-delivered-id")
			bulkID(c, g.LastID)
			replyGroupCounters(c, s, g)
		}
	case resp.EqualFold(sub, "stream"):
		xinfoStream(c, s)
	default:
		c.Out = resp.AppendErrSubcommandSyntax(c.Out, sub, "xinfo")
	}
}

// replyGroupCounters replies a group's entries-read and lag fields.
func replyGroupCounters(c *keyspace.Ctx, s *values.Stream, g *values.StreamGroup) {
	c.BulkString("entries-read")
	if g.EntriesRead != -1 {
		c.Int(g.EntriesRead)
	} else {
		c.Null()
	}
	c.BulkString("lag")
	if lag, ok := s.Lag(g); ok {
		c.Int(lag)
	} else {
		c.Null()
	}
}

func xinfoStream(c *keyspace.Ctx, s *values.Stream) {
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
				c.NotInteger()
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
	c.BulkString("length")
	c.Int(s.Length)
	c.BulkString("radix-tree-keys")
	c.Int(int64(len(s.Blocks)))
	c.BulkString("radix-tree-nodes")
	c.Int(s.RaxNodes())
	c.BulkString("last-generated-id")
	bulkID(c, s.LastID)
	c.BulkString("max-deleted-entry-id")
	bulkID(c, s.MaxDeleted)
	c.BulkString("entries-added")
	c.Int(s.EntriesAdded)
	c.BulkString("recorded-first-entry-id")
	bulkID(c, s.FirstID)
	if !full {
		c.BulkString("groups")
		c.Int(int64(len(s.Groups)))
		c.BulkString("first-entry")
		if replyRange(c, s, values.StreamID{}, values.MaxStreamID, 1, false, nil, nil, false, true, nil) == 0 {
			c.Null()
		}
		c.BulkString("last-entry")
		if replyRange(c, s, values.StreamID{}, values.MaxStreamID, 1, true, nil, nil, false, true, nil) == 0 {
			c.Null()
		}
		return
	}
	c.BulkString("entries")
	replyRange(c, s, values.StreamID{}, values.MaxStreamID, count, false, nil, nil, false, false, nil)
	c.BulkString("groups")
	c.Array(len(s.Groups))
	for _, g := range s.Groups {
		c.Out = resp.AppendMapHeader(c.Out, 7, c.RESP3)
		c.BulkString("name")
		c.BulkString(g.Name)
		c.BulkString("last-delivered-id")
		bulkID(c, g.LastID)
		replyGroupCounters(c, s, g)
		c.BulkString("pel-count")
		c.Int(int64(g.Pel.N))
		c.BulkString("pending")
		pos, n := len(c.Out), int64(0)
		for cur := g.Pel.First(); cur.Valid(&g.Pel) && (count == 0 || n < count); cur = g.Pel.Next(cur) {
			it := g.Pel.At(cur)
			c.Array(4)
			bulkID(c, it.Id)
			c.BulkString(it.N.Consumer.Name)
			c.Int(it.N.DeliveryTime)
			c.Int(it.N.DeliveryCount)
			n++
		}
		c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
		c.BulkString("consumers")
		c.Array(len(g.Consumers))
		for _, cons := range g.Consumers {
			c.Out = resp.AppendMapHeader(c.Out, 4, c.RESP3)
			c.BulkString("name")
			c.BulkString(cons.Name)
			c.BulkString("seen-time")
			c.Int(cons.SeenTime)
			c.BulkString("pel-count")
			c.Int(int64(cons.Pel.N))
			c.BulkString("pending")
			pos, n := len(c.Out), int64(0)
			for cur := cons.Pel.First(); cur.Valid(&cons.Pel) && (count == 0 || n < count); cur = cons.Pel.Next(cur) {
				it := cons.Pel.At(cur)
				c.Array(3)
				bulkID(c, it.Id)
				c.Int(it.N.DeliveryTime)
				c.Int(it.N.DeliveryCount)
				n++
			}
			c.Out = insertArrayHeader(c.Out, pos, '*', int(n))
		}
	}
}
