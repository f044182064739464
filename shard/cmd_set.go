package shard

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
)

// addSetCommands registers the set commands' handlers.
func addSetCommands(add func(name string, h handler, r routeKind)) {
	add("sadd", cmdSAdd, routeKeys)
	add("srem", cmdSRem, routeKeys)
	add("smove", cmdSMove, routeKeys)
	add("sismember", cmdSIsMember, routeKeys)
	add("smismember", cmdSMIsMember, routeKeys)
	add("scard", cmdSCard, routeKeys)
	add("smembers", cmdSMembers, routeKeys)
	add("spop", cmdSPop, routeKeys)
	add("srandmember", cmdSRandMember, routeKeys)
	add("sinter", cmdSInter, routeKeys)
	add("sintercard", cmdSInterCard, routeKeySpecs)
	add("sinterstore", cmdSInterStore, routeKeys)
	add("sunion", cmdSUnion, routeKeys)
	add("sunionstore", cmdSUnionStore, routeKeys)
	add("sdiff", cmdSDiff, routeKeys)
	add("sdiffstore", cmdSDiffStore, routeKeys)
	add("sscan", cmdSScan, routeKeys)
}

func cmdSAdd(c *Ctx) {
	key, members := c.Args[1], c.Args[2:]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindSet)
	if !ok {
		return
	}
	lim := c.limits()
	var before int64
	if o == nil {
		o = d.insert(key, KindSet)
		newSetValue(o, members[0], int(min(int64(len(members)), lim.SetMaxIntsetEntries)))
	} else {
		before = o.valueMemory()
	}
	var added int64
	for _, m := range members {
		if setAdd(o, m, lim) {
			added++
		}
	}
	if added > 0 { // as Redis, a no-op leaves WATCH alone
		d.valueChanged(o, before)
	}
	c.int(added)
}

func cmdSRem(c *Ctx) { c.removeMembers(KindSet, setRemove, setLen) }

// cmdSMove follows Redis' smoveCommand: a missing source is 0 before the
// destination's type is looked at, and moving to the same set is a
// membership test.
func cmdSMove(c *Ctx) {
	src, dst, member := c.Args[1], c.Args[2], c.Args[3]
	sd, dd := c.db(src), c.db(dst)
	so, do := sd.lookup(src, c.Now), dd.lookup(dst, c.Now)
	if so == nil {
		c.int(0)
		return
	}
	if so.kind != KindSet || (do != nil && do.kind != KindSet) {
		c.wrongType()
		return
	}
	if so == do {
		c.isMemberReply(so, member)
		return
	}
	before := so.valueMemory()
	if !setRemove(so, member) {
		c.int(0)
		return
	}
	sd.valueChanged(so, before)
	if setLen(so) == 0 {
		sd.remove(so)
	}
	before = 0
	if do == nil {
		do = dd.insert(dst, KindSet)
		newSetValue(do, member, 1)
	} else {
		before = do.valueMemory()
	}
	if setAdd(do, member, c.limits()) { // Redis signals the destination only if it changed
		dd.valueChanged(do, before)
	}
	c.int(1)
}

func cmdSIsMember(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindSet)
	if !ok {
		return
	}
	c.isMemberReply(o, c.Args[2])
}

func cmdSMIsMember(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindSet)
	if !ok {
		return
	}
	members := c.Args[2:]
	c.array(len(members))
	for _, m := range members {
		c.isMemberReply(o, m)
	}
}

// isMemberReply appends 1 when set o (nil for a missing key) has m, else 0.
func (c *Ctx) isMemberReply(o *object, m []byte) {
	if o != nil && setHas(o, m) {
		c.int(1)
	} else {
		c.int(0)
	}
}

func cmdSCard(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.int(0)
		return
	}
	c.int(int64(setLen(o)))
}

// setHeader appends a set reply's header: a set in RESP3, an array in RESP2.
func (c *Ctx) setHeader(n int) { c.Out = resp.AppendSetHeader(c.Out, n, c.RESP3) }

// replySet appends all of o's members as a set reply.
func (c *Ctx) replySet(o *object) {
	n := setLen(o)
	c.setHeader(n)
	for i := range n {
		c.setMemberReply(setAt(o, i))
	}
}

// cmdSMembers is SINTER of one key, as in Redis 7.0.
func cmdSMembers(c *Ctx) {
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.setHeader(0)
		return
	}
	c.replySet(o)
}

// spopMoveStrategyMul is Redis' SPOP_MOVE_STRATEGY_MUL: when fewer than
// count/5 members would remain, SPOP builds a new set of the survivors
// instead of removing count members one by one.
const spopMoveStrategyMul = 5

func cmdSPop(c *Ctx) {
	if len(c.Args) == 3 {
		c.spopCount()
		return
	}
	if len(c.Args) > 3 {
		c.syntaxErr()
		return
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.null()
		return
	}
	before := o.valueMemory()
	i := rand.IntN(setLen(o))
	c.setMemberReply(setAt(o, i))
	c.logSRem(key, setAt(o, i))
	setRemoveAt(o, i)
	d.valueChanged(o, before)
	if setLen(o) == 0 {
		d.remove(o)
	}
}

// spopCount is Redis' spopWithCountCommand.
func (c *Ctx) spopCount() {
	// Redis' getPositiveLongFromObjectOrReply: one message for both.
	l, ok := resp.ParseInt(c.Args[2])
	if !ok || l < 0 {
		c.err("ERR value is out of range, must be positive")
		return
	}
	key := c.Args[1]
	d := c.db(key)
	o, ok := c.writeKind(d, key, KindSet)
	if !ok {
		return
	}
	if o == nil || l == 0 {
		c.setHeader(0)
		return
	}
	size := setLen(o)
	if l >= int64(size) {
		c.replySet(o)
		d.remove(o)
		c.logAs(cmdDEL, key) // as Redis: the whole set went
		return
	}
	count := int(l)
	before := o.valueMemory()
	c.setHeader(count)
	for range count {
		i := rand.IntN(setLen(o))
		c.setMemberReply(setAt(o, i))
		c.logSRem(key, setAt(o, i))
		setRemoveAt(o, i)
	}
	if remaining := size - count; remaining*spopMoveStrategyMul <= count && o.enc == encHashtable {
		// Redis moves the few survivors into a new set, whose encoding
		// follows from them (setTypeCreate, setTypeAdd): all integers and
		// few enough make it an intset again. Removing from the table and
		// converting gives the same result and keeps a running SSCAN's
		// guarantee (a new table would move the survivors around).
		setShrinkToIntset(o, c.limits())
	}
	d.valueChanged(o, before)
}

var cmdSREM = []byte("SREM")

// logSRem records the removal of a member SPOP chose at random as Redis
// 7.0 propagates it: one SREM key member per member (several are wrapped in
// MULTI/EXEC by the log).
func (c *Ctx) logSRem(key []byte, m setMember) {
	if c.logging() {
		var buf [20]byte
		c.logAs(cmdSREM, key, m.bytes(&buf))
	}
}

func cmdSRandMember(c *Ctx) {
	if len(c.Args) == 3 {
		c.srandmemberCount()
		return
	}
	if len(c.Args) > 3 {
		c.syntaxErr()
		return
	}
	key := c.Args[1]
	o, ok := c.readKind(c.db(key), key, KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.null()
		return
	}
	c.setMemberReply(setAt(o, rand.IntN(setLen(o))))
}

// srandmemberCount is Redis' srandmemberWithCountCommand: a negative count
// allows repeats, a positive one returns distinct members (all of them when
// the set has no more than count). Always an array, also in RESP3.
func (c *Ctx) srandmemberCount() {
	l, ok := c.parseRandomCount(c.Args[2])
	if !ok {
		return
	}
	key := c.Args[1]
	o, count, unique := c.randomCountTarget(key, KindSet, l)
	if o == nil {
		return
	}
	size := setLen(o)
	if !unique || count == 1 {
		start := len(c.Out)
		c.Out = resp.AppendArrayHeader(c.Out, int(count))
		for ; count > 0; count-- {
			c.setMemberReply(setAt(o, rand.IntN(size)))
			if c.randomReplyTooLarge(start) {
				return
			}
		}
		return
	}
	if count >= uint64(size) {
		c.array(size)
		for i := range size {
			c.setMemberReply(setAt(o, i))
		}
		return
	}
	c.array(int(count))
	sampleDistinct(size, int(count), func(i int) { c.setMemberReply(setAt(o, i)) })
}

// ---- multi-key set operations ---------------------------------------------------

// lookupSets looks up keys as sets for SINTER/SUNION/SDIFF and their STORE
// and CARD forms: a missing key is nil (an empty set). After a WRONGTYPE
// reply it returns ok false, as Redis does at the first such key.
func (c *Ctx) lookupSets(keys [][]byte) (sets []*object, ok bool) {
	sets = make([]*object, len(keys))
	for i, key := range keys {
		o, ok := c.readKind(c.db(key), key, KindSet)
		if !ok {
			return nil, false
		}
		sets[i] = o
	}
	return sets, true
}

// newResultSet returns an empty set value to collect a result in, as Redis'
// createIntsetObject: an intset that converts as members are added.
func newResultSet() *object {
	return &object{kind: KindSet, enc: encIntset, str: values.NewIntset(2, 0)}
}

// addMember adds m (read from another set) to the result set r.
func addMember(r *object, m setMember, lim *EncodingLimits) bool {
	if m.isInt {
		return setAddInt(r, m.v, lim)
	}
	return setAdd(r, m.b, lim)
}

// hasMember reports whether m (read from another set) is in o.
func hasMember(o *object, m setMember, buf *[20]byte) bool {
	if m.isInt {
		return setHasInt(o, m.v, buf)
	}
	return setHas(o, m.b)
}

// storeSet makes the set r (nil or empty: nothing) the value of dst,
// replacing whatever dst held, and replies with its size (Redis' setKey or
// dbDelete at the end of the STORE commands).
func (c *Ctx) storeSet(dst []byte, r *object) {
	d := c.db(dst)
	if old := d.lookup(dst, c.Now); old != nil {
		d.remove(old)
	}
	if r == nil || setLen(r) == 0 {
		c.int(0)
		return
	}
	o := d.insert(dst, KindSet)
	o.str, o.coll, o.enc = r.str, r.coll, r.enc
	d.valueChanged(o, 0)
	c.int(int64(setLen(o)))
}

func cmdSInter(c *Ctx)      { c.sinter(c.Args[1:], nil, false, 0) }
func cmdSInterStore(c *Ctx) { c.sinter(c.Args[2:], c.Args[1], false, 0) }

func cmdSInterCard(c *Ctx) {
	numkeys, ok := resp.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.err("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.err("ERR Number of keys can't be greater than number of args")
		return
	}
	var limit int64
	for j := 2 + int(numkeys); j < len(c.Args); j++ {
		if resp.EqualFold(c.Args[j], "limit") && j+1 < len(c.Args) {
			j++
			n, ok := resp.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.err("ERR LIMIT can't be negative")
				return
			}
			limit = n
		} else {
			c.syntaxErr()
			return
		}
	}
	c.sinter(c.Args[2:2+numkeys], nil, true, limit)
}

// sinter is Redis' sinterGenericCommand: SINTER (reply the members),
// SINTERSTORE (dst != nil) and SINTERCARD (cardOnly, stopping at limit when
// it is not 0). It walks the smallest set and keeps the members every other
// set has.
func (c *Ctx) sinter(keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	sets, ok := c.lookupSets(keys)
	if !ok {
		return
	}
	if slices.Contains(sets, nil) {
		switch {
		case dst != nil:
			c.storeSet(dst, nil)
		case cardOnly:
			c.int(0)
		default:
			c.setHeader(0)
		}
		return
	}
	slices.SortStableFunc(sets, func(a, b *object) int { return setLen(a) - setLen(b) })
	var res *object
	var lim *EncodingLimits
	start := len(c.Out)
	if dst != nil {
		res, lim = newResultSet(), c.limits()
	}
	var card int64
	var buf [20]byte
	first := sets[0]
	for i, n := 0, setLen(first); i < n; i++ {
		m := setAt(first, i)
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
				c.int(card)
				return
			}
		case dst != nil:
			addMember(res, m, lim)
		default:
			c.setMemberReply(m)
		}
	}
	switch {
	case cardOnly:
		c.int(card)
	case dst != nil:
		c.storeSet(dst, res)
	default:
		prefix := byte('*')
		if c.RESP3 {
			prefix = '~'
		}
		c.spliceHeader(start, prefix, int(card))
	}
}

func cmdSUnion(c *Ctx)      { c.sunionDiff(c.Args[1:], nil, false) }
func cmdSUnionStore(c *Ctx) { c.sunionDiff(c.Args[2:], c.Args[1], false) }
func cmdSDiff(c *Ctx)       { c.sunionDiff(c.Args[1:], nil, true) }
func cmdSDiffStore(c *Ctx)  { c.sunionDiff(c.Args[2:], c.Args[1], true) }

// sunionDiff is Redis' sunionDiffGenericCommand. The result is collected in
// a set built as Redis builds it (an intset converting as it goes), so a
// stored result has Redis' encoding; that is also why SDIFF picks between
// Redis' two algorithms the same way (the second adds the whole first set
// before removing, which can convert the result where the first would not).
func (c *Ctx) sunionDiff(keys [][]byte, dst []byte, diff bool) {
	sets, ok := c.lookupSets(keys)
	if !ok {
		return
	}
	sameSet := false
	for _, o := range sets[1:] {
		if o == sets[0] {
			sameSet = true
		}
	}
	lim := c.limits()
	res := newResultSet()
	var buf [20]byte
	switch {
	case !diff:
		for _, o := range sets {
			if o == nil {
				continue
			}
			for i, n := 0, setLen(o); i < n; i++ {
				addMember(res, setAt(o, i), lim)
			}
		}
	case sets[0] == nil || sameSet:
		// The difference is empty.
	case diffAlgorithm(sets) == 1:
		first := sets[0]
		for i, n := 0, setLen(first); i < n; i++ {
			m := setAt(first, i)
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
		}
	default:
		for j, o := range sets {
			if o == nil {
				continue
			}
			for i, n := 0, setLen(o); i < n; i++ {
				m := setAt(o, i)
				if j == 0 {
					addMember(res, m, lim)
				} else {
					setRemove(res, m.bytes(&buf))
				}
			}
			if setLen(res) == 0 {
				break
			}
		}
	}
	if dst != nil {
		c.storeSet(dst, res)
		return
	}
	c.replySet(res)
}

// diffAlgorithm is the choice Redis' SDIFF makes: 1 walks the first set and
// probes the others, 2 copies the first set and removes the others' members.
func diffAlgorithm(sets []*object) int {
	var one, two int64
	for _, o := range sets {
		if o == nil {
			continue
		}
		one += int64(setLen(sets[0]))
		two += int64(setLen(o))
	}
	if one/2 <= two {
		return 1
	}
	return 2
}

func cmdSScan(c *Ctx) {
	o, cursor, pattern, count, ok := c.collScanStart(KindSet)
	if !ok {
		return
	}
	// An intset is returned whole, with cursor 0, as Redis does.
	hi, lo, next := setLen(o)-1, 0, uint64(0)
	if o.enc == encHashtable {
		hi, lo, next = scanPositions(setLen(o), cursor, count)
	}
	c.Out = resp.AppendBulkString(c.Out, strconv.FormatUint(next, 10))
	start, n := len(c.Out), 0
	var buf [20]byte
	for i := hi; i >= lo; i-- {
		// An intset is walked from position 0 up, so it comes out ascending.
		pos := i
		if o.enc == encIntset {
			pos = hi - i
		}
		m := setAt(o, pos)
		if pattern != nil && !glob.Match(pattern, m.bytes(&buf), false) {
			continue
		}
		c.setMemberReply(m)
		n++
	}
	c.spliceHeader(start, '*', n)
}

// randomCountTarget starts SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a
// count as Redis does: it reads key as kind and replies for a missing key or
// a count of 0 (an empty array) or the wrong type; o is nil when it replied.
// A negative count l allows repeats (unique false) of -l elements.
func (c *Ctx) randomCountTarget(key []byte, kind Kind, l int64) (o *object, count uint64, unique bool) {
	o, ok := c.readKind(c.db(key), key, kind)
	if !ok {
		return nil, 0, false
	}
	if o == nil || l == 0 {
		c.Out = append(c.Out, resp.EmptyArray...)
		return nil, 0, false
	}
	if l < 0 {
		return o, uint64(-l), false
	}
	return o, uint64(l), true
}
