package commands

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// addSetCommands registers the set commands' handlers.
func addSetCommands(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("sadd", cmdSAdd, keyspace.RouteKeys)
	add("srem", cmdSRem, keyspace.RouteKeys)
	add("smove", cmdSMove, keyspace.RouteKeys)
	add("sismember", cmdSIsMember, keyspace.RouteKeys)
	add("smismember", cmdSMIsMember, keyspace.RouteKeys)
	add("scard", cmdSCard, keyspace.RouteKeys)
	add("smembers", cmdSMembers, keyspace.RouteKeys)
	add("spop", cmdSPop, keyspace.RouteKeys)
	add("srandmember", cmdSRandMember, keyspace.RouteKeys)
	add("sinter", cmdSInter, keyspace.RouteKeys)
	add("sintercard", cmdSInterCard, keyspace.RouteKeySpecs)
	add("sinterstore", cmdSInterStore, keyspace.RouteKeys)
	add("sunion", cmdSUnion, keyspace.RouteKeys)
	add("sunionstore", cmdSUnionStore, keyspace.RouteKeys)
	add("sdiff", cmdSDiff, keyspace.RouteKeys)
	add("sdiffstore", cmdSDiffStore, keyspace.RouteKeys)
	add("sscan", cmdSScan, keyspace.RouteKeys)
}

func cmdSAdd(c *keyspace.Ctx) {
	key, members := c.Args[1], c.Args[2:]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindSet)
	if !ok {
		return
	}
	lim := c.Limits()
	var before int64
	if o == nil {
		o = d.Insert(key, keyspace.KindSet)
		keyspace.NewSetValue(o, members, lim)
	} else {
		before = o.ValueMemory()
	}
	var added int64
	for _, m := range members {
		if keyspace.SetAdd(o, m, lim) {
			added++
		}
	}
	if added > 0 { // as Redis, a no-op leaves WATCH alone
		d.ValueChanged(o, before)
		c.Notify(keyspace.NotifySet, "sadd", key)
	}
	c.Int(added)
}

func cmdSRem(c *keyspace.Ctx) {
	c.RemoveMembers(keyspace.KindSet, keyspace.SetRemove, keyspace.SetLen, keyspace.NotifySet, "srem")
}

// cmdSMove follows Redis' smoveCommand: a missing source is 0 before the
// destination's type is looked at, and moving to the same set is a
// membership test.
func cmdSMove(c *keyspace.Ctx) {
	src, dst, member := c.Args[1], c.Args[2], c.Args[3]
	sd, dd := c.DBFor(src), c.DBFor(dst)
	so, do := sd.Lookup(src, c.Now), dd.Lookup(dst, c.Now)
	if so == nil {
		c.Int(0)
		return
	}
	if so.Kind != keyspace.KindSet || (do != nil && do.Kind != keyspace.KindSet) {
		c.WrongType()
		return
	}
	if so == do {
		isMemberReply(c, so, member)
		return
	}
	before := so.ValueMemory()
	if !keyspace.SetRemove(so, member) {
		c.Int(0)
		return
	}
	sd.ValueChanged(so, before)
	c.Notify(keyspace.NotifySet, "srem", src)
	if keyspace.SetLen(so) == 0 {
		sd.Remove(so)
		c.Notify(keyspace.NotifyGeneric, "del", src)
	}
	before = 0
	if do == nil {
		do = dd.Insert(dst, keyspace.KindSet)
		keyspace.NewSetValue(do, c.Args[3:4], c.Limits())
	} else {
		before = do.ValueMemory()
	}
	if keyspace.SetAdd(do, member, c.Limits()) { // Redis signals the destination only if it changed
		dd.ValueChanged(do, before)
		c.Notify(keyspace.NotifySet, "sadd", dst)
	}
	c.Int(1)
}

func cmdSIsMember(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindSet)
	if !ok {
		return
	}
	isMemberReply(c, o, c.Args[2])
}

func cmdSMIsMember(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindSet)
	if !ok {
		return
	}
	members := c.Args[2:]
	c.Array(len(members))
	for _, m := range members {
		isMemberReply(c, o, m)
	}
}

// isMemberReply appends 1 when set o (nil for a missing key) has m, else 0.
func isMemberReply(c *keyspace.Ctx, o *keyspace.Object, m []byte) {
	if o != nil && keyspace.SetHas(o, m) {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

func cmdSCard(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(keyspace.SetLen(o)))
}

// setHeader appends a set reply's header: a set in RESP3, an array in RESP2.
func setHeader(c *keyspace.Ctx, n int) { c.Out = resp.AppendSetHeader(c.Out, n, c.RESP3) }

// replySet appends all of o's members as a set reply.
func replySet(c *keyspace.Ctx, o *keyspace.Object) {
	setHeader(c, keyspace.SetLen(o))
	eachMember(o, func(m keyspace.SetMember) { c.SetMemberReply(m) })
}

// eachMember calls fn with every member of o, in position order.
func eachMember(o *keyspace.Object, fn func(m keyspace.SetMember)) {
	for it := keyspace.NewSetIter(o); ; {
		m, ok := it.Next()
		if !ok {
			return
		}
		fn(m)
	}
}

// cmdSMembers is SINTER of one key, as in Redis 7.0.
func cmdSMembers(c *keyspace.Ctx) {
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindSet)
	if !ok {
		return
	}
	if o == nil {
		setHeader(c, 0)
		return
	}
	replySet(c, o)
}

// SPopMoveStrategyMul is Redis' SPOP_MOVE_STRATEGY_MUL: when fewer than
// count/5 members would remain, SPOP builds a new set of the survivors
// instead of removing count members one by one.
const SPopMoveStrategyMul = 5

func cmdSPop(c *keyspace.Ctx) {
	if len(c.Args) == 3 {
		spopCount(c)
		return
	}
	if len(c.Args) > 3 {
		c.SyntaxErr()
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	before := o.ValueMemory()
	c.Notify(keyspace.NotifySet, "spop", key) // before the reply, as Redis' spopCommand
	i := rand.IntN(keyspace.SetLen(o))
	c.SetMemberReply(keyspace.SetAt(o, i))
	logSRem(c, key, keyspace.SetAt(o, i))
	keyspace.SetRemoveAt(o, i)
	d.ValueChanged(o, before)
	if keyspace.SetLen(o) == 0 {
		d.Remove(o)
		c.Notify(keyspace.NotifyGeneric, "del", key)
	}
}

// spopCount is Redis' spopWithCountCommand.
func spopCount(c *keyspace.Ctx) {
	// Redis' getPositiveLongFromObjectOrReply: one message for both.
	l, ok := resp.ParseInt(c.Args[2])
	if !ok || l < 0 {
		c.Err("ERR value is out of range, must be positive")
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, ok := c.WriteKind(d, key, keyspace.KindSet)
	if !ok {
		return
	}
	if o == nil || l == 0 {
		setHeader(c, 0)
		return
	}
	size := keyspace.SetLen(o)
	c.Notify(keyspace.NotifySet, "spop", key) // before the reply, as Redis' spopWithCountCommand
	if l >= int64(size) {
		replySet(c, o)
		d.Remove(o)
		c.Notify(keyspace.NotifyGeneric, "del", key)
		c.LogAs(cmdDEL, key) // as Redis: the whole set went
		return
	}
	count := int(l)
	before := o.ValueMemory()
	setHeader(c, count)
	for range count {
		i := rand.IntN(keyspace.SetLen(o))
		c.SetMemberReply(keyspace.SetAt(o, i))
		logSRem(c, key, keyspace.SetAt(o, i))
		keyspace.SetRemoveAt(o, i)
	}
	if remaining := size - count; remaining*SPopMoveStrategyMul <= count && o.Enc != keyspace.EncIntset {
		// Redis moves the few survivors into a new set, whose encoding
		// follows from them (setTypeCreate, setTypeAdd): all integers and
		// few enough make it an intset again. Removing from the table and
		// converting gives the same result and keeps a running SSCAN's
		// guarantee (a new table would move the survivors around).
		keyspace.SetShrinkToIntset(o, c.Limits())
	}
	d.ValueChanged(o, before)
}

var cmdSREM = []byte("SREM")

// logSRem records the removal of a member SPOP chose at random as Redis
// 7.0 propagates it: one SREM key member per member (several are wrapped in
// MULTI/EXEC by the log).
func logSRem(c *keyspace.Ctx, key []byte, m keyspace.SetMember) {
	if c.Logging() {
		var buf [20]byte
		c.LogAs(cmdSREM, key, m.Bytes(&buf))
	}
}

func cmdSRandMember(c *keyspace.Ctx) {
	if len(c.Args) == 3 {
		srandmemberCount(c)
		return
	}
	if len(c.Args) > 3 {
		c.SyntaxErr()
		return
	}
	key := c.Args[1]
	o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	c.SetMemberReply(keyspace.SetAt(o, rand.IntN(keyspace.SetLen(o))))
}

// srandmemberCount is Redis' srandmemberWithCountCommand: a negative count
// allows repeats, a positive one returns distinct members (all of them when
// the set has no more than count). Always an array, also in RESP3.
func srandmemberCount(c *keyspace.Ctx) {
	l, ok := c.ParseRandomCount(c.Args[2])
	if !ok {
		return
	}
	key := c.Args[1]
	o, count, unique := c.RandomCountTarget(key, keyspace.KindSet, l)
	if o == nil {
		return
	}
	size := keyspace.SetLen(o)
	if !unique || count == 1 {
		at := keyspace.SetRandomAccess(o)
		start := len(c.Out)
		c.Out = resp.AppendArrayHeader(c.Out, int(count))
		for ; count > 0; count-- {
			c.SetMemberReply(at(rand.IntN(size)))
			if c.RandomReplyTooLarge(start) {
				return
			}
		}
		return
	}
	if count >= uint64(size) {
		c.Array(size)
		eachMember(o, func(m keyspace.SetMember) { c.SetMemberReply(m) })
		return
	}
	c.Array(int(count))
	at := keyspace.SetRandomAccess(o)
	keyspace.SampleDistinct(size, int(count), func(i int) { c.SetMemberReply(at(i)) })
}

// ---- multi-key set operations ---------------------------------------------------

// lookupSets looks up keys as sets for SINTER/SUNION/SDIFF and their STORE
// and CARD forms: a missing key is nil (an empty set). After a WRONGTYPE
// reply it returns ok false, as Redis does at the first such key.
func lookupSets(c *keyspace.Ctx, keys [][]byte) (sets []*keyspace.Object, ok bool) {
	sets = make([]*keyspace.Object, len(keys))
	for i, key := range keys {
		o, ok := c.ReadKind(c.DBFor(key), key, keyspace.KindSet)
		if !ok {
			return nil, false
		}
		sets[i] = o
	}
	return sets, true
}

// newResultSet returns an empty set value to collect a result in, as Redis'
// createIntsetObject: an intset that converts as members are added.
func newResultSet() *keyspace.Object {
	r := &keyspace.Object{Kind: keyspace.KindSet, Enc: keyspace.EncIntset}
	r.SetBytes(values.NewIntset(2, 0))
	return r
}

// addMember adds m (read from another set) to the result set r.
func addMember(r *keyspace.Object, m keyspace.SetMember, lim *keyspace.EncodingLimits) bool {
	if m.IsInt {
		return keyspace.SetAddInt(r, m.Int, lim)
	}
	return keyspace.SetAdd(r, m.Str, lim)
}

// hasMember reports whether m (read from another set) is in o.
func hasMember(o *keyspace.Object, m keyspace.SetMember, buf *[20]byte) bool {
	if m.IsInt {
		return keyspace.SetHasInt(o, m.Int, buf)
	}
	return keyspace.SetHas(o, m.Str)
}

// storeSet makes the set r (nil or empty: nothing) the value of dst,
// replacing whatever dst held, and replies with its size (Redis' setKey or
// dbDelete at the end of the STORE commands).
//
// The events are Redis': event (sinterstore, sunionstore, sdiffstore) after
// the reply, or del for a destination that went, after the reply, or,
// when SINTERSTORE found a source missing (r nil), before it.
func storeSet(c *keyspace.Ctx, dst []byte, r *keyspace.Object, event string) {
	d := c.DBFor(dst)
	old := d.Lookup(dst, c.Now)
	if old != nil {
		d.Remove(old)
	}
	if r == nil || keyspace.SetLen(r) == 0 {
		if old != nil && r == nil {
			c.Notify(keyspace.NotifyGeneric, "del", dst)
		}
		c.Int(0)
		if old != nil && r != nil {
			c.Notify(keyspace.NotifyGeneric, "del", dst)
		}
		return
	}
	var o *keyspace.Object
	if old != nil {
		o = d.Reinsert(dst, keyspace.KindSet)
	} else {
		o = d.Insert(dst, keyspace.KindSet)
	}
	keyspace.MoveValue(o, r)
	d.ValueChanged(o, 0)
	c.Int(int64(keyspace.SetLen(o)))
	c.Notify(keyspace.NotifySet, event, dst)
}

func cmdSInter(c *keyspace.Ctx)      { sinter(c, c.Args[1:], nil, false, 0) }
func cmdSInterStore(c *keyspace.Ctx) { sinter(c, c.Args[2:], c.Args[1], false, 0) }

func cmdSInterCard(c *keyspace.Ctx) {
	numkeys, ok := resp.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.Err("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.Err("ERR Number of keys can't be greater than number of args")
		return
	}
	var limit int64
	for j := 2 + int(numkeys); j < len(c.Args); j++ {
		if resp.EqualFold(c.Args[j], "limit") && j+1 < len(c.Args) {
			j++
			n, ok := resp.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.Err("ERR LIMIT can't be negative")
				return
			}
			limit = n
		} else {
			c.SyntaxErr()
			return
		}
	}
	sinter(c, c.Args[2:2+numkeys], nil, true, limit)
}

// sinter is Redis' sinterGenericCommand: SINTER (reply the members),
// SINTERSTORE (dst != nil) and SINTERCARD (cardOnly, stopping at limit when
// it is not 0). It walks the smallest set and keeps the members every other
// set has.
func sinter(c *keyspace.Ctx, keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	sets, ok := lookupSets(c, keys)
	if !ok {
		return
	}
	if slices.Contains(sets, nil) {
		switch {
		case dst != nil:
			storeSet(c, dst, nil, "sinterstore")
		case cardOnly:
			c.Int(0)
		default:
			setHeader(c, 0)
		}
		return
	}
	slices.SortStableFunc(sets, func(a, b *keyspace.Object) int { return keyspace.SetLen(a) - keyspace.SetLen(b) })
	var res *keyspace.Object
	var lim *keyspace.EncodingLimits
	start := len(c.Out)
	if dst != nil {
		res, lim = newResultSet(), c.Limits()
	}
	var card int64
	var buf [20]byte
	first := sets[0]
	for it := keyspace.NewSetIter(first); ; {
		m, more := it.Next()
		if !more {
			break
		}
		all := true
		for _, o := range sets[1:] {
			if o != first && !hasMember(o, m, &buf) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		card++
		switch {
		case cardOnly:
			if limit != 0 && card >= limit {
				c.Int(card)
				return
			}
		case dst != nil:
			addMember(res, m, lim)
		default:
			c.SetMemberReply(m)
		}
	}
	switch {
	case cardOnly:
		c.Int(card)
	case dst != nil:
		storeSet(c, dst, res, "sinterstore")
	default:
		prefix := byte('*')
		if c.RESP3 {
			prefix = '~'
		}
		c.SpliceHeader(start, prefix, int(card))
	}
}

func cmdSUnion(c *keyspace.Ctx)      { sunionDiff(c, c.Args[1:], nil, false) }
func cmdSUnionStore(c *keyspace.Ctx) { sunionDiff(c, c.Args[2:], c.Args[1], false) }
func cmdSDiff(c *keyspace.Ctx)       { sunionDiff(c, c.Args[1:], nil, true) }
func cmdSDiffStore(c *keyspace.Ctx)  { sunionDiff(c, c.Args[2:], c.Args[1], true) }

// sunionDiff is Redis' sunionDiffGenericCommand. The result is collected in
// a set built as Redis builds it (an intset converting as it goes), so a
// stored result has Redis' encoding; that is also why SDIFF picks between
// Redis' two algorithms the same way (the second adds the whole first set
// before removing, which can convert the result where the first would not).
func sunionDiff(c *keyspace.Ctx, keys [][]byte, dst []byte, diff bool) {
	sets, ok := lookupSets(c, keys)
	if !ok {
		return
	}
	sameSet := false
	for _, o := range sets[1:] {
		if o == sets[0] {
			sameSet = true
		}
	}
	lim := c.Limits()
	res := newResultSet()
	var buf [20]byte
	switch {
	case !diff:
		for _, o := range sets {
			if o == nil {
				continue
			}
			eachMember(o, func(m keyspace.SetMember) { addMember(res, m, lim) })
		}
	case sets[0] == nil || sameSet:
		// The difference is empty.
	case diffAlgorithm(sets) == 1:
		eachMember(sets[0], func(m keyspace.SetMember) {
			found := false
			for _, o := range sets[1:] {
				if o != nil && hasMember(o, m, &buf) {
					found = true
					break
				}
			}
			if !found {
				addMember(res, m, lim)
			}
		})
	default:
		for j, o := range sets {
			if o == nil {
				continue
			}
			eachMember(o, func(m keyspace.SetMember) {
				if j == 0 {
					addMember(res, m, lim)
				} else {
					keyspace.SetRemove(res, m.Bytes(&buf))
				}
			})
			if keyspace.SetLen(res) == 0 {
				break
			}
		}
	}
	if dst != nil {
		event := "sunionstore"
		if diff {
			event = "sdiffstore"
		}
		storeSet(c, dst, res, event)
		return
	}
	replySet(c, res)
}

// diffAlgorithm is the choice Redis' SDIFF makes: 1 walks the first set and
// probes the others, 2 copies the first set and removes the others' members.
func diffAlgorithm(sets []*keyspace.Object) int {
	var one, two int64
	for _, o := range sets {
		if o == nil {
			continue
		}
		one += int64(keyspace.SetLen(sets[0]))
		two += int64(keyspace.SetLen(o))
	}
	if one/2 <= two {
		return 1
	}
	return 2
}

func cmdSScan(c *keyspace.Ctx) {
	o, cursor, pattern, count, ok := c.CollScanStart(keyspace.KindSet)
	if !ok {
		return
	}
	start, n := 0, 0
	var buf [20]byte
	reply := func(m keyspace.SetMember) {
		if pattern != nil && !glob.Match(pattern, m.Bytes(&buf), false) {
			return
		}
		c.SetMemberReply(m)
		n++
	}
	if o.Enc != keyspace.EncHashtable {
		// An intset (ascending) or a listpack (insertion order) is returned
		// whole, with cursor 0, as Redis 7.2 does for both.
		c.Out = resp.AppendBulkString(c.Out, "0")
		start = len(c.Out)
		eachMember(o, reply)
		c.SpliceHeader(start, '*', n)
		return
	}
	hi, lo, next := keyspace.ScanPositions(keyspace.SetLen(o), cursor, count)
	c.Out = resp.AppendBulkString(c.Out, strconv.FormatUint(next, 10))
	start = len(c.Out)
	for i := hi; i >= lo; i-- {
		reply(keyspace.SetAt(o, i))
	}
	c.SpliceHeader(start, '*', n)
}
