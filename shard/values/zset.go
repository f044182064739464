package values

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/svcdb/svcdb/shard/listpack"

	"github.com/svcdb/svcdb/core/resp"
)

// ---- scores ------------------------------------------------------------------

// ZlScoreLen is the largest a score entry's value is in a sorted set's
// listpack: the 8 bytes of a float64.
//
// A score entry is one of two things, told apart by its length:
//   - 8 bytes: the float64's bits, little endian;
//   - 0 to 7 bytes: an integral score as a signed integer, little endian, in
//     the fewest bytes that hold it (0 bytes: the score 0), as Redis'
//     listpack keeps an integral score as an integer. Scores like 1, 2, 3
//     take 2 bytes with their length byte instead of 9: a sorted set of
//     three 10-byte members with integer scores is 43 bytes, not 64.
//
// Only integral scores of magnitude below 2^55 are stored as integers (7
// bytes hold them); every such float64 converts to int64 and back exactly.
const ZlScoreLen = 8

// zlIntScoreLimit bounds the integral scores stored as integers.
const zlIntScoreLimit = 1 << 55

// ZlScoreBytes encodes f as a score entry in buf, turning -0 into 0 as Redis'
// listpack does.
func ZlScoreBytes(buf *[ZlScoreLen]byte, f float64) []byte {
	if f == 0 {
		return buf[:0] // also -0: Redis keeps it as the integer 0 in a listpack
	}
	if f == math.Trunc(f) && f > -zlIntScoreLimit && f < zlIntScoreLimit {
		v := int64(f)
		n := 1
		for v < -(1<<(8*n-1)) || v >= 1<<(8*n-1) {
			n++
		}
		for i := range n {
			buf[i] = byte(v >> (8 * i))
		}
		return buf[:n]
	}
	binary.LittleEndian.PutUint64(buf[:], math.Float64bits(f))
	return buf[:]
}

// ZlScoreEntrySize is the bytes f takes as a score entry, its length byte
// included.
func ZlScoreEntrySize(f float64) int {
	var buf [ZlScoreLen]byte
	return 1 + len(ZlScoreBytes(&buf, f))
}

// zlScoreOf decodes a score entry's value (see ZlScoreLen).
func zlScoreOf(b []byte) float64 {
	if len(b) == ZlScoreLen {
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	var v int64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | int64(b[i])
	}
	shift := uint(64 - 8*len(b)) // sign-extend from the top byte stored
	return float64(v << shift >> shift)
}

// zlScoreAt reads the score entry at s and returns its score and the offset
// after it. A score entry's value is at most 8 bytes, so its length is one
// byte.
func zlScoreAt(lp []byte, s int) (float64, int) {
	end := s + 1 + int(lp[s])
	return zlScoreOf(lp[s+1 : end]), end
}

// MemberBytes views a member string as bytes. The bytes must never be written.
func MemberBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// MemberString views b as a string for a comparison or a map lookup; the string
// must not outlive the call.
func MemberString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// cStrtod parses s, which must be entirely a number, as C's strtod reads
// one: decimal or 0x hexadecimal (p exponent optional), inf, infinity, nan
// and nan(...), case-insensitive, with an optional sign. overflow reports a
// finite number too large (the result is ±Inf, strtod's HUGE_VAL with
// ERANGE), underflow one that rounds to zero (ERANGE with a zero result).
// It does not allocate unless the input overflows or is hexadecimal without
// an exponent.
func cStrtod(s []byte) (f float64, ok, overflow, underflow bool) {
	if len(s) == 0 {
		return 0, false, false, false
	}
	t := s
	neg := false
	if t[0] == '+' || t[0] == '-' {
		neg = t[0] == '-'
		t = t[1:]
	}
	if len(t) > 0 && (t[0]|0x20 == 'i' || t[0]|0x20 == 'n') {
		switch {
		case resp.EqualFold(t, "inf") || resp.EqualFold(t, "infinity"):
			if neg {
				return math.Inf(-1), true, false, false
			}
			return math.Inf(1), true, false, false
		case resp.EqualFold(t, "nan"):
			return math.NaN(), true, false, false
		case len(t) >= 5 && resp.EqualFold(t[:4], "nan(") && t[len(t)-1] == ')':
			for _, ch := range t[4 : len(t)-1] {
				if !(ch >= '0' && ch <= '9' || ch|0x20 >= 'a' && ch|0x20 <= 'z' || ch == '_') {
					return 0, false, false, false
				}
			}
			return math.NaN(), true, false, false
		}
		return 0, false, false, false
	}
	hex := len(t) > 2 && t[0] == '0' && t[1]|0x20 == 'x'
	body := t
	if hex {
		body = t[2:]
	}
	digits, nonzero := 0, false
	i := 0
	isDigit := func(ch byte) bool {
		return ch >= '0' && ch <= '9' || hex && ch|0x20 >= 'a' && ch|0x20 <= 'f'
	}
	for ; i < len(body) && isDigit(body[i]); i++ {
		digits++
		nonzero = nonzero || body[i] != '0'
	}
	if i < len(body) && body[i] == '.' {
		i++
		for ; i < len(body) && isDigit(body[i]); i++ {
			digits++
			nonzero = nonzero || body[i] != '0'
		}
	}
	if digits == 0 {
		return 0, false, false, false
	}
	sawExp := false
	if i < len(body) && (!hex && body[i]|0x20 == 'e' || hex && body[i]|0x20 == 'p') {
		j := i + 1
		if j < len(body) && (body[j] == '+' || body[j] == '-') {
			j++
		}
		if j == len(body) || body[j] < '0' || body[j] > '9' {
			return 0, false, false, false // strtod stops before the exponent
		}
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		i, sawExp = j, true
	}
	if i != len(body) {
		return 0, false, false, false
	}
	in := s
	if hex && !sawExp {
		in = append(append(make([]byte, 0, len(s)+2), s...), 'p', '0') // Go wants the exponent
	}
	f, err := strconv.ParseFloat(MemberString(in), 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false, false, false
		}
		if math.IsInf(f, 0) {
			return f, true, true, false
		}
	}
	if f == 0 && nonzero {
		return f, true, false, true
	}
	return f, true, false, false
}

// parseShortInteger reads b when it is an optional sign and 1 to 15
// decimal digits (leading zeros allowed, as in redis-benchmark's
// zero-padded __rand_int__ scores), the common score, without strtod:
// such a value is below 2^53, so its float64 is exact, as strtod's is, and
// "-0" is -0 as there. Anything else is left to cStrtod (ok false).
func parseShortInteger(b []byte) (float64, bool) {
	neg := false
	digits := b
	switch b[0] {
	case '-':
		neg, digits = true, b[1:]
	case '+':
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var v int64
	for _, ch := range digits {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int64(ch-'0')
	}
	f := float64(v)
	if neg {
		f = -f
	}
	return f, true
}

// ParseScore reads a score, increment or weight as Redis'
// getDoubleFromObject (string2d): the whole argument, no leading space, no
// NaN, and neither overflow nor underflow to zero.
func ParseScore(b []byte) (float64, bool) {
	if len(b) == 0 || IsCSpace(b[0]) {
		return 0, false
	}
	if f, ok := parseShortInteger(b); ok {
		return f, true
	}
	f, ok, over, under := cStrtod(b)
	if !ok || over || under || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// ScoreRange is a score interval (Redis' zrangespec).
type ScoreRange struct {
	Min, Max     float64
	Minex, maxex bool
}

// parseScoreBound reads a ZRANGEBYSCORE bound as zslParseRange does: "(" makes
// it exclusive, the rest goes to strtod, which skips leading space, stops at
// a NUL, reads an empty string as 0 and overflows to ±inf; NaN is refused.
func parseScoreBound(b []byte) (f float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		ex = true
		b = b[1:]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, ex, true
	}
	t := b
	for len(t) > 0 && IsCSpace(t[0]) {
		t = t[1:]
	}
	f, ok, _, _ = cStrtod(t)
	if !ok || math.IsNaN(f) {
		return 0, false, false
	}
	return f, ex, true
}

// ParseScoreRange parses ZRANGEBYSCORE's min and max ("(" for exclusive, -inf,
// +inf).
func ParseScoreRange(min, max []byte) (r ScoreRange, ok bool) {
	var ok1, ok2 bool
	r.Min, r.Minex, ok1 = parseScoreBound(min)
	r.Max, r.maxex, ok2 = parseScoreBound(max)
	return r, ok1 && ok2
}

// GteMin reports whether v is at or above the range's minimum.
func (r *ScoreRange) GteMin(v float64) bool {
	if r.Minex {
		return v > r.Min
	}
	return v >= r.Min
}

// LteMax reports whether v is at or below the range's maximum.
func (r *ScoreRange) LteMax(v float64) bool {
	if r.maxex {
		return v < r.Max
	}
	return v <= r.Max
}

// Empty reports a range that can hold nothing whatever the set.
func (r *ScoreRange) Empty() bool {
	return r.Min > r.Max || r.Min == r.Max && (r.Minex || r.maxex)
}

// zlexBound is one end of a lex interval: "-" (below every string), "+"
// (above every string) or a value, inclusive ("[") or exclusive ("(").
type zlexBound struct {
	v    []byte
	inf  int8 // -1 for "-", +1 for "+", 0 for v
	excl bool
}

// LexRange is a lex interval (Redis' zlexrangespec).
type LexRange struct{ min, max zlexBound }

func parseLexBound(b []byte) (zlexBound, bool) {
	if len(b) == 0 {
		return zlexBound{}, false
	}
	switch b[0] {
	case '+':
		return zlexBound{inf: 1, excl: true}, len(b) == 1
	case '-':
		return zlexBound{inf: -1, excl: true}, len(b) == 1
	case '(':
		return zlexBound{v: b[1:], excl: true}, true
	case '[':
		return zlexBound{v: b[1:]}, true
	}
	return zlexBound{}, false
}

// ParseLexRange parses ZRANGEBYLEX's min and max ("[" inclusive, "("
// exclusive, "-", "+").
func ParseLexRange(min, max []byte) (r LexRange, ok bool) {
	var ok1, ok2 bool
	r.min, ok1 = parseLexBound(min)
	r.max, ok2 = parseLexBound(max)
	return r, ok1 && ok2
}

// cmp compares v with the bound (Redis' sdscmplex).
func (b *zlexBound) cmp(v []byte) int {
	switch b.inf {
	case -1:
		return 1
	case 1:
		return -1
	}
	return bytes.Compare(v, b.v)
}

// GteMin reports whether v is at or above the range's minimum.
func (r *LexRange) GteMin(v []byte) bool {
	c := r.min.cmp(v)
	if r.min.excl {
		return c > 0
	}
	return c >= 0
}

// LteMax reports whether v is at or below the range's maximum.
func (r *LexRange) LteMax(v []byte) bool {
	c := r.max.cmp(v)
	if r.max.excl {
		return c < 0
	}
	return c <= 0
}

// empty reports a range that can hold nothing whatever the set.
func (r *LexRange) empty() bool {
	var c int
	switch {
	case r.min.inf != 0 && r.min.inf == r.max.inf:
		c = 0
	case r.min.inf == -1 || r.max.inf == 1:
		c = -1
	case r.min.inf == 1 || r.max.inf == -1:
		c = 1
	default:
		c = bytes.Compare(r.min.v, r.max.v)
	}
	return c > 0 || c == 0 && (r.min.excl || r.max.excl)
}

// AppendD2String formats f as Redis' d2string (ZSCAN's scores of a
// skiplist): integers up to 2^52 without a fraction, "-0" for negative zero,
// the rest as %.17g.
func AppendD2String(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f > -4503599627370495 && f < 4503599627370496 && f == float64(int64(f)):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// AppendListpackScore formats f as Redis keeps a score in a listpack (what
// ZSCAN of a listpack returns): an integer when f is integral and within
// LLONG_MAX/2 (double2ll), else d2string.
func AppendListpackScore(dst []byte, f float64) []byte {
	if f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == float64(int64(f)) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return AppendD2String(dst, f)
}

// ---- listpack sorted sets -------------------------------------------------------

// ZlLen is the number of members of a sorted set listpack.
func ZlLen(lp []byte) int { return listpack.Len(lp) / 2 }

// ZlScoreEntry is the most a score entry takes: its length byte and 8 bytes
// (an upper bound for sizing a listpack; ZlScoreEntrySize is exact).
const ZlScoreEntry = 1 + ZlScoreLen

// zlMember returns the member entry at off (a pair's start) and the offset
// of its score entry. Members shorter than 128 bytes have a one-byte length.
func zlMember(lp []byte, off int) (member []byte, scoreOff int) {
	if n := int(lp[off]); n < 0x80 {
		end := off + 1 + n
		return lp[off+1 : end : end], end
	}
	return listpack.Next(lp, off)
}

// ZlAt returns the pair at off and the offset of the next pair.
func ZlAt(lp []byte, off int) (member []byte, score float64, next int) {
	m, s := zlMember(lp, off)
	score, next = zlScoreAt(lp, s)
	return m, score, next
}

// ZlFind returns the offset of member's pair and its score, or -1.
func ZlFind(lp []byte, member []byte) (int, float64) {
	for off := listpack.First; off < len(lp); {
		m, s := zlMember(lp, off)
		if len(m) == len(member) && string(m) == string(member) {
			score, _ := zlScoreAt(lp, s)
			return off, score
		}
		off = s + 1 + int(lp[s])
	}
	return -1, 0
}

// ZlInsert adds a pair, keeping the order. REQUIRES: member is absent.
func ZlInsert(lp []byte, member []byte, score float64) []byte {
	off := listpack.First
	for off < len(lp) {
		m, s, next := ZlAt(lp, off)
		if s > score || s == score && bytes.Compare(m, member) > 0 {
			break
		}
		off = next
	}
	var sb [ZlScoreLen]byte
	lp = listpack.Insert(lp, off, member)
	_, after := listpack.Next(lp, off)
	return listpack.Insert(lp, after, ZlScoreBytes(&sb, score))
}

// ZlDelete removes the pair at off.
func ZlDelete(lp []byte, off int) []byte { return listpack.Delete(lp, off, 2) }

// ZlOffsets appends the offset of every pair to offs.
func ZlOffsets(lp []byte, offs []int) []int {
	for off := listpack.First; off < len(lp); {
		offs = append(offs, off)
		_, s := zlMember(lp, off)
		off = s + 1 + int(lp[s])
	}
	return offs
}

// ---- the skiplist ----------------------------------------------------------------

const (
	zslMaxLevel = 32 // Redis' ZSKIPLIST_MAXLEVEL
	// zslP is Redis' ZSKIPLIST_P (0.25) as a threshold on a uint32.
	zslP = 1 << 30
)

// skiplistLevel is one level of a node: the next node at this level (0: none),
// how many nodes the link skips (the rank distance), and the next node's
// score. With the score in the link a search compares without reading the
// next node, which lives elsewhere in memory: one cache miss per step instead
// of two (the next node is read only on a tie, for its member). Invariant:
// forward != 0 ⇒ fscore == nodes[forward].score.
type skiplistLevel struct {
	forward, span uint32
	fscore        float64
}

// skiplistUpLevel is a link at level 2 or above, kept in zskiplist.up: the link
// and where the node it leads to keeps its own levels 2.. (that node's
// upOff). A search that moves right at level i >= 2 goes straight to the
// next node's level-i link in the pool without reading the node, whose cache
// line it would otherwise miss on only to learn that offset: one miss per
// step at the upper levels instead of two. Invariant: forward != 0 ⇒
// fup == nodes[forward].upOff().
type skiplistUpLevel struct {
	skiplistLevel
	fup uint32
}

// skiplistNode is one member. Nodes live in zskiplist.nodes and are addressed by
// index; index 0 is the header, so 0 also means "none" in links.
type skiplistNode struct {
	member   string
	score    float64
	backward uint32 // previous node at level 0; 0 when first
	// lv is the node's level count (top 8 bits; 0 for a free slot) and, for
	// more than two levels, where levels 2.. start in zskiplist.up.
	lv     uint32
	l0, l1 skiplistLevel
}

// A node is 64 bytes, one cache line of the node array: a search step reads
// only the node it is on (the next node's score is in the link), and three
// nodes in four have one level, nearly all the rest two, so a step rarely
// reads the up pool, whose few entries stay in cache.

func (n *skiplistNode) levels() int { return int(n.lv >> 24) }
func (n *skiplistNode) upOff() int  { return int(n.lv & (1<<24 - 1)) }

// isLive reports whether the node is in use (not on the free list).
func (n *skiplistNode) isLive() bool { return n.lv != 0 }

// lnk returns node x's link at level i.
func (s *Skiplist) lnk(x uint32, i int) *skiplistLevel {
	n := &s.nodes[x]
	switch i {
	case 0:
		return &n.l0
	case 1:
		return &n.l1
	}
	return &s.up[n.upOff()+i-2].skiplistLevel
}

// upLnk returns node x's link at level i >= 2.
func (s *Skiplist) upLnk(x uint32, i int) *skiplistUpLevel {
	return &s.up[s.nodes[x].upOff()+i-2]
}

// Skiplist is a sorted set too large for a listpack: Redis' zset (a
// skiplist ordered by score then member, with spans, plus a dict member →
// node), with the nodes in one slice so the garbage collector sees one
// array rather than a pointer per node.
//
// It owns its nodes, the index and the member strings (held by the nodes
// alone). Invariants:
//   - dict.find(m) == i ⇔ nodes[i].live && nodes[i].member == m;
//     dict.used == length
//   - following l0 from the header visits every live node once, in (score,
//     member) order; level i's spans add up to the rank distance
//   - a node keeps its index while it lives, even when its score changes, so
//     ZSCAN's cursor (a slot index) returns every member present for the
//     whole scan
//   - mem is the bytes of the live members (memory() adds the arrays'
//     capacity)
type Skiplist struct {
	nodes  []skiplistNode
	up     []skiplistUpLevel     // levels 2.. of the nodes that have them, in blocks
	upFree [zslMaxLevel][]uint32 // free blocks of up by size (levels-2)
	// upFreeCap is the sum of the upFree slices' capacities, kept so that
	// memory(), which every write calls, does not walk the 32 slices.
	upFreeCap int
	free      []uint32
	dict      skiplistIndex
	level     int
	length    int
	tail      uint32
	mem       int64
}

const (
	zslNodeSize    = int64(unsafe.Sizeof(skiplistNode{}))
	zslLevelSize   = int64(unsafe.Sizeof(skiplistLevel{}))
	zslUpLevelSize = int64(unsafe.Sizeof(skiplistUpLevel{}))
	zslFixedMemory = int64(unsafe.Sizeof(Skiplist{})) + (zslMaxLevel-1)*zslUpLevelSize + 48
)

// NewSkiplist returns an empty skiplist with room for about hint members.
func NewSkiplist(hint int) *Skiplist {
	s := &Skiplist{
		nodes: make([]skiplistNode, 1, 1+hint),
		dict:  newZslIndex(hint),
		level: 1,
	}
	s.up = make([]skiplistUpLevel, zslMaxLevel-2, zslMaxLevel-2+hint/16)
	s.nodes[0].lv = zslMaxLevel << 24 // its levels 2.. are up[0:zslMaxLevel-2]
	return s
}

// Memory is the bytes the skiplist holds (see Collection).
func (s *Skiplist) Memory() int64 {
	return zslFixedMemory + s.mem + s.arrays()
}

// arrays is the bytes of the node array, the up pool, the index and the
// free lists.
func (s *Skiplist) arrays() int64 {
	return int64(cap(s.nodes))*zslNodeSize + int64(cap(s.up))*zslUpLevelSize + s.dict.bytes() +
		int64(cap(s.free)+s.upFreeCap)*4
}

// recount computes memory() from scratch (tests compare the two).
func (s *Skiplist) recount() int64 {
	var n int64
	for i := 1; i < len(s.nodes); i++ {
		nd := &s.nodes[i]
		if nd.isLive() {
			n += zslEntryMemory(nd.member)
		}
	}
	for _, f := range s.upFree { // upFreeCap, from scratch
		n += int64(cap(f)) * 4
	}
	return zslFixedMemory + n + s.arrays() - int64(s.upFreeCap)*4
}

// zslEntryMemory is what a member costs beyond its node's slot, its levels
// and its index entry (arrays counts those): its bytes, rounded up to the
// allocator's 8-byte steps.
func zslEntryMemory(member string) int64 {
	return (int64(len(member)) + 7) &^ 7
}

// Clone returns a deep copy (COPY).
func (s *Skiplist) Clone() Collection {
	n := &Skiplist{
		nodes:  make([]skiplistNode, len(s.nodes)),
		free:   append([]uint32(nil), s.free...),
		dict:   s.dict.clone(),
		level:  s.level,
		length: s.length,
		tail:   s.tail,
		mem:    s.mem,
	}
	copy(n.nodes, s.nodes)
	n.up = append(make([]skiplistUpLevel, 0, cap(s.up)), s.up...)
	for i, f := range s.upFree {
		if f != nil {
			n.upFree[i] = append([]uint32(nil), f...)
			n.upFreeCap += cap(n.upFree[i])
		}
	}
	return n
}

func zslRandomLevel() int {
	l := 1
	for l < zslMaxLevel && rand.Uint32() < zslP {
		l++
	}
	return l
}

// newNode takes a free slot (or a new one) for a node of lvl levels.
func (s *Skiplist) newNode(lvl int, score float64, member string) uint32 {
	var x uint32
	if n := len(s.free); n > 0 {
		x = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.nodes = append(s.nodes, skiplistNode{})
		x = uint32(len(s.nodes) - 1)
	}
	off := 0
	if lvl > 2 {
		off = s.allocUp(lvl - 2)
	}
	nd := &s.nodes[x]
	nd.member, nd.score, nd.lv = member, score, uint32(lvl)<<24|uint32(off)
	s.mem += zslEntryMemory(member)
	return x
}

// allocUp returns the offset of n free entries of up, reusing a freed block
// of that size before growing the pool.
func (s *Skiplist) allocUp(n int) int {
	if f := s.upFree[n]; len(f) > 0 {
		off := f[len(f)-1]
		s.upFree[n] = f[:len(f)-1]
		return int(off)
	}
	off := len(s.up)
	if off+n >= 1<<24 {
		panic("shard: skiplist level pool past 2^24 entries")
	}
	s.up = append(s.up, make([]skiplistUpLevel, n)...)
	return off
}

func (s *Skiplist) freeNode(x uint32) {
	nd := &s.nodes[x]
	s.mem -= zslEntryMemory(nd.member)
	if n := nd.levels() - 2; n > 0 {
		before := cap(s.upFree[n])
		s.upFree[n] = append(s.upFree[n], uint32(nd.upOff()))
		s.upFreeCap += cap(s.upFree[n]) - before
	}
	*nd = skiplistNode{}
	if int(x) == len(s.nodes)-1 {
		s.nodes = s.nodes[:x]
		return
	}
	s.free = append(s.free, x)
}

// zslSearch is a search under way for (score, member): the node p it is
// on, p's rank r, p's upOff pup (known without reading p when it was
// reached at level 2 or above), and the level i it compares at; it is done
// below level end (0 for a whole search).
type zslSearch struct {
	score     float64
	member    string
	p, r, pup uint32
	i, end    int
}

// step makes one comparison of search c: it moves right past a node that
// sorts before the key or, at the last such node of its level, records the
// node and its rank in update and rank and goes down a level. Above level 1
// it reads only the up pool, carried from link to link by
// skiplistUpLevel.fup.
//
// It is written out in the two loops that use it (descend, and search2
// for SetScore) rather than called: a call per comparison, with the
// search's state in memory behind a pointer, cost about 60 instructions a
// comparison (cachegrind); written out, descend keeps its state in
// registers and search2 spills only part of its two searches' (4,560 ->
// 3,792 instructions a re-score on 100k members). The level indexes are
// masked with zslMaxLevel-1 (they are below it) to drop a bounds check.
//
//	if c.i >= 2 { l, fup = &up[c.pup+c.i-2] } else { l = &nodes[c.p].l<c.i> }
//	if l.forward != 0 && (l.fscore < c.score ||
//		l.fscore == c.score && nodes[l.forward].member < c.member) {
//		c.r += l.span; c.p, c.pup = l.forward, fup
//	} else {
//		update[c.i], rank[c.i] = c.p, c.r; c.i--
//	}

// descend fills update with the last node before (score, member) at each
// level and rank with that node's rank (Redis' search in zslInsert), and
// returns the node after update[0] (0 if none).
func (s *Skiplist) descend(score float64, member string, update, rank *[zslMaxLevel]uint32) uint32 {
	nodes, up := s.nodes, s.up
	p, r, pup := uint32(0), uint32(0), uint32(0)
	for i := s.level - 1; i >= 0; i-- {
		for {
			var l *skiplistLevel
			var fup uint32
			switch i {
			case 0:
				l = &nodes[p].l0
			case 1:
				l = &nodes[p].l1
			default:
				u := &up[int(pup)+i-2]
				l, fup = &u.skiplistLevel, u.fup
			}
			if l.forward == 0 || !(l.fscore < score || l.fscore == score && nodes[l.forward].member < member) {
				break
			}
			r += l.span
			p, pup = l.forward, fup
		}
		update[i&(zslMaxLevel-1)], rank[i&(zslMaxLevel-1)] = p, r
	}
	return nodes[update[0]].l0.forward
}

// link inserts node x (score, member and levels set, not linked) at its
// place (Redis' zslInsert after the node is made).
func (s *Skiplist) link(x uint32) {
	var update, rank [zslMaxLevel]uint32
	s.descend(s.nodes[x].score, s.nodes[x].member, &update, &rank)
	s.linkAt(x, &update, &rank)
}

// linkAt links node x after update[i] at each of its levels i; rank holds
// the ranks of the update nodes.
func (s *Skiplist) linkAt(x uint32, update, rank *[zslMaxLevel]uint32) {
	score := s.nodes[x].score
	lvl := s.nodes[x].levels()
	if lvl > s.level {
		for i := s.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = 0
			s.lnk(0, i).span = uint32(s.length)
		}
		s.level = lvl
	}
	xn := &s.nodes[x]
	for i := 0; i < lvl; i++ {
		ul, xl := s.lnk(update[i], i), s.lnk(x, i)
		xl.forward, xl.fscore = ul.forward, ul.fscore
		ul.forward, ul.fscore = x, score
		xl.span = ul.span - (rank[0] - rank[i])
		ul.span = rank[0] - rank[i] + 1
		if i >= 2 { // up-pool links also say where their node's levels are
			uu, xu := s.upLnk(update[i], i), s.upLnk(x, i)
			xu.fup, uu.fup = uu.fup, uint32(xn.upOff())
		}
	}
	for i := lvl; i < s.level; i++ {
		s.lnk(update[i], i).span++
	}
	xn.backward = update[0]
	if xn.l0.forward != 0 {
		s.nodes[xn.l0.forward].backward = x
	} else {
		s.tail = x
	}
	s.length++
}

// path fills update with the last node before (score, member) at each
// level and returns the node after update[0] (0 if none).
func (s *Skiplist) path(score float64, member string, update *[zslMaxLevel]uint32) uint32 {
	var rank [zslMaxLevel]uint32
	return s.descend(score, member, update, &rank)
}

// unlink takes x out of the list (Redis' zslDeleteNode); update is its path.
func (s *Skiplist) unlink(x uint32, update *[zslMaxLevel]uint32) {
	xn := &s.nodes[x]
	for i := 0; i < s.level; i++ {
		ul := s.lnk(update[i], i)
		if ul.forward == x {
			xl := s.lnk(x, i)
			ul.span += xl.span - 1
			ul.forward, ul.fscore = xl.forward, xl.fscore
			if i >= 2 {
				s.upLnk(update[i], i).fup = s.upLnk(x, i).fup
			}
		} else {
			ul.span--
		}
	}
	if xn.l0.forward != 0 {
		s.nodes[xn.l0.forward].backward = xn.backward
	} else {
		s.tail = xn.backward
	}
	for s.level > 1 && s.lnk(0, s.level-1).forward == 0 {
		s.level--
	}
	s.length--
	xn.l0, xn.l1 = skiplistLevel{}, skiplistLevel{}
	for i := 2; i < xn.levels(); i++ {
		*s.upLnk(x, i) = skiplistUpLevel{}
	}
	xn.backward = 0
}

// Add inserts member, which must be absent.
func (s *Skiplist) Add(member []byte, score float64) uint32 {
	m := string(member)
	x := s.newNode(zslRandomLevel(), score, m)
	s.link(x)
	s.dict.insert(x, m)
	return x
}

// AddString is add for a member already held as a string (conversion).
func (s *Skiplist) AddString(m string, score float64) {
	x := s.newNode(zslRandomLevel(), score, m)
	s.link(x)
	s.dict.insert(x, m)
}

// Find returns member's node.
func (s *Skiplist) Find(member []byte) (uint32, bool) {
	x := s.dict.Find(s.nodes, member)
	return x, x != 0
}

// pathTo fills update with the last node before x at each level (x's path
// for unlink). The first node's path is the header at every level, known
// without a search: ZPOPMIN, and a range deletion from the lowest member,
// read no node but x (a search from the top cost a pop about 0.8 us of
// cache misses on a 100k-member set).
func (s *Skiplist) pathTo(x uint32, update *[zslMaxLevel]uint32) {
	if x == s.nodes[0].l0.forward {
		*update = [zslMaxLevel]uint32{}
		return
	}
	s.path(s.nodes[x].score, s.nodes[x].member, update)
}

// RemoveNode deletes node x.
func (s *Skiplist) RemoveNode(x uint32) {
	var update [zslMaxLevel]uint32
	n := &s.nodes[x]
	s.pathTo(x, &update)
	s.dict.remove(x, n.member)
	s.unlink(x, &update)
	s.freeNode(x)
}

// Remove deletes member and reports whether it was there.
func (s *Skiplist) Remove(member []byte) bool {
	x, ok := s.Find(member)
	if ok {
		s.RemoveNode(x)
	}
	return ok
}

// search2 runs searches a and b (see zslSearch.step) to the end, a
// comparison of each in turn: neither depends on the other, so the
// processor waits for their cache misses together instead of one after the
// other.
func (s *Skiplist) search2(a zslSearch, aUpdate, aRank *[zslMaxLevel]uint32, b zslSearch, bUpdate, bRank *[zslMaxLevel]uint32) {
	nodes, up := s.nodes, s.up
	for a.i >= a.end || b.i >= b.end {
		if a.i >= a.end {
			var l *skiplistLevel
			var fup uint32
			switch a.i {
			case 0:
				l = &nodes[a.p].l0
			case 1:
				l = &nodes[a.p].l1
			default:
				u := &up[int(a.pup)+a.i-2]
				l, fup = &u.skiplistLevel, u.fup
			}
			if l.forward != 0 && (l.fscore < a.score || l.fscore == a.score && nodes[l.forward].member < a.member) {
				a.r += l.span
				a.p, a.pup = l.forward, fup
			} else {
				aUpdate[a.i&(zslMaxLevel-1)], aRank[a.i&(zslMaxLevel-1)] = a.p, a.r
				a.i--
			}
		}
		if b.i >= b.end {
			var l *skiplistLevel
			var fup uint32
			switch b.i {
			case 0:
				l = &nodes[b.p].l0
			case 1:
				l = &nodes[b.p].l1
			default:
				u := &up[int(b.pup)+b.i-2]
				l, fup = &u.skiplistLevel, u.fup
			}
			if l.forward != 0 && (l.fscore < b.score || l.fscore == b.score && nodes[l.forward].member < b.member) {
				b.r += l.span
				b.p, b.pup = l.forward, fup
			} else {
				bUpdate[b.i&(zslMaxLevel-1)], bRank[b.i&(zslMaxLevel-1)] = b.p, b.r
				b.i--
			}
		}
	}
}

// SetScore changes node x's score, moving it when the order requires
// (Redis' zslUpdateScore); the node keeps its index.
//
// Redis searches for x's place, updates in place when the new score keeps
// x between its neighbours, else unlinks x and searches again for the new
// place. Here:
//   - the in-place test comes first: x's backward link and its level-0
//     link (which carries the next node's score) answer it, and a node of
//     one level (three in four) in place needs no search at all;
//   - otherwise the search for x's place and the search for the new one
//     run together (search2), the new place found with x still in the
//     list and corrected for its removal;
//   - the search for x's place stops at level 1: its level-0 predecessor is
//     x's backward link, so the last and coldest steps of that search (the
//     level-0 nodes, about three cache misses) are never made.
func (s *Skiplist) SetScore(x uint32, score float64) {
	n := &s.nodes[x]
	oldScore, member, prev := n.score, n.member, n.backward
	inPlace := (prev == 0 || s.nodes[prev].score < score) && (n.l0.forward == 0 || n.l0.fscore > score)
	var oldUpdate, oldRank, update, rank [zslMaxLevel]uint32
	if inPlace {
		// The links into x carry its score (skiplistLevel.fscore): at level
		// 0 its predecessor's, above that (a rare node) those its path finds.
		if n.levels() > 1 {
			s.descend(oldScore, member, &oldUpdate, &oldRank)
			for i := 1; i < n.levels(); i++ {
				s.lnk(oldUpdate[i], i).fscore = score
			}
		}
		s.nodes[prev].l0.fscore = score // the header's when x is first
		n.score = score
		return
	}
	s.search2(zslSearch{score: oldScore, member: member, i: s.level - 1, end: 1}, &oldUpdate, &oldRank,
		zslSearch{score: score, member: member, i: s.level - 1}, &update, &rank)
	oldUpdate[0] = prev
	// Without x, a new predecessor that was x becomes x's own predecessor,
	// and one that came after x moves up a rank. At level 1 and above the
	// old search gave the ranks of x's predecessors: a new predecessor after
	// x's is after x (nothing at that level lies between them but x). At
	// level 0, where the old search did not go, the keys tell.
	for i := 0; i < s.level; i++ {
		y := update[i]
		switch {
		case y == x && i == 0:
			update[0], rank[0] = prev, rank[0]-1
		case y == x:
			update[i], rank[i] = oldUpdate[i], oldRank[i]
		case i == 0:
			if y != 0 && (s.nodes[y].score > oldScore || s.nodes[y].score == oldScore && s.nodes[y].member > member) {
				rank[0]--
			}
		case rank[i] > oldRank[i]:
			rank[i]--
		}
	}
	s.unlink(x, &oldUpdate)
	s.nodes[x].score = score
	s.linkAt(x, &update, &rank)
}

// Rank is x's 1-based rank (Redis' zslGetRank).
func (s *Skiplist) Rank(x uint32) int {
	score, member := s.nodes[x].score, s.nodes[x].member
	rank := uint32(0)
	p := uint32(0)
	for i := s.level - 1; i >= 0; i-- {
		for {
			l := s.lnk(p, i)
			if l.forward == 0 {
				break
			}
			f := &s.nodes[l.forward]
			if !(f.score < score || f.score == score && f.member <= member) {
				break
			}
			rank += l.span
			p = l.forward
		}
		if p == x {
			return int(rank)
		}
	}
	return 0
}

// ByRank returns the node of 1-based rank r, or 0.
func (s *Skiplist) ByRank(r int) uint32 {
	traversed := uint32(0)
	p := uint32(0)
	for i := s.level - 1; i >= 0; i-- {
		for {
			l := s.lnk(p, i)
			if l.forward == 0 || traversed+l.span > uint32(r) {
				break
			}
			traversed += l.span
			p = l.forward
		}
		if traversed == uint32(r) {
			return p
		}
	}
	return 0
}

// First is the node of the lowest member, 0 when empty.
func (s *Skiplist) First() uint32 { return s.nodes[0].l0.forward }

// ---- ranges on the skiplist (Redis' zsl*InRange, zsl*InLexRange) ----

func (s *Skiplist) inRange(r *ScoreRange) bool {
	if r.Empty() || s.tail == 0 {
		return false
	}
	return r.GteMin(s.nodes[s.tail].score) && r.LteMax(s.nodes[s.First()].score)
}

// FirstInRange is the first node in r, 0 when none is.
func (s *Skiplist) FirstInRange(r *ScoreRange) uint32 {
	if !s.inRange(r) {
		return 0
	}
	return s.firstWhere(
		func(x uint32) bool { return r.GteMin(s.nodes[x].score) },
		func(x uint32) bool { return r.LteMax(s.nodes[x].score) })
}

// LastInRange is the last node in r, 0 when none is.
func (s *Skiplist) LastInRange(r *ScoreRange) uint32 {
	if !s.inRange(r) {
		return 0
	}
	return s.lastWhere(
		func(x uint32) bool { return r.GteMin(s.nodes[x].score) },
		func(x uint32) bool { return r.LteMax(s.nodes[x].score) })
}

func (s *Skiplist) inLexRange(r *LexRange) bool {
	if r.empty() || s.tail == 0 {
		return false
	}
	return r.GteMin(MemberBytes(s.nodes[s.tail].member)) && r.LteMax(MemberBytes(s.nodes[s.First()].member))
}

// FirstInLexRange is the first node in r, 0 when none is.
func (s *Skiplist) FirstInLexRange(r *LexRange) uint32 {
	if !s.inLexRange(r) {
		return 0
	}
	return s.firstWhere(
		func(x uint32) bool { return r.GteMin(MemberBytes(s.nodes[x].member)) },
		func(x uint32) bool { return r.LteMax(MemberBytes(s.nodes[x].member)) })
}

// LastInLexRange is the last node in r, 0 when none is.
func (s *Skiplist) LastInLexRange(r *LexRange) uint32 {
	if !s.inLexRange(r) {
		return 0
	}
	return s.lastWhere(
		func(x uint32) bool { return r.GteMin(MemberBytes(s.nodes[x].member)) },
		func(x uint32) bool { return r.LteMax(MemberBytes(s.nodes[x].member)) })
}

// firstWhere is the walk of firstInRange and firstInLexRange: the first node
// x for which gteMin(x) holds, or 0 when lteMax(x) does not.
func (s *Skiplist) firstWhere(gteMin, lteMax func(x uint32) bool) uint32 {
	p := uint32(0)
	for i := s.level - 1; i >= 0; i-- {
		for {
			f := s.lnk(p, i).forward
			if f == 0 || gteMin(f) {
				break
			}
			p = f
		}
	}
	x := s.nodes[p].l0.forward
	if x == 0 || !lteMax(x) {
		return 0
	}
	return x
}

// lastWhere is the walk of lastInRange and lastInLexRange: the last node x
// for which lteMax(x) holds, or 0 when gteMin(x) does not.
func (s *Skiplist) lastWhere(gteMin, lteMax func(x uint32) bool) uint32 {
	p := uint32(0)
	for i := s.level - 1; i >= 0; i-- {
		for {
			f := s.lnk(p, i).forward
			if f == 0 || !lteMax(f) {
				break
			}
			p = f
		}
	}
	if p == 0 || !gteMin(p) {
		return 0
	}
	return p
}

// deleteFrom removes nodes from x on while keep(x) holds and returns how
// many it removed (Redis' zslDeleteRangeBy*: one path, then walk).
func (s *Skiplist) DeleteWhile(x uint32, keep func(x uint32) bool) int {
	if x == 0 {
		return 0
	}
	var update [zslMaxLevel]uint32
	s.pathTo(x, &update)
	removed := 0
	for x != 0 && keep(x) {
		next := s.nodes[x].l0.forward
		s.dict.remove(x, s.nodes[x].member)
		s.unlink(x, &update)
		s.freeNode(x)
		removed++
		x = next
	}
	return removed
}

// ---- positions ---------------------------------------------------------------

// ZCursor is a position in a sorted set of either encoding, for walking it in
// order or backwards. A listpack is addressed through the offsets of its
// pairs (built once by zview), a skiplist by node. Member bytes it returns
// are read-only and valid until the set changes.
type ZCursor struct {
	Offs []int // listpack: pair offsets
	Lp   []byte
	I    int // listpack: pair index, -1 or len(offs) when off the ends
	Sl   *Skiplist
	x    uint32 // skiplist: node, 0 when off the ends
}

// Len is the number of members.
func (z *ZCursor) Len() int {
	if z.Sl != nil {
		return z.Sl.length
	}
	return len(z.Offs)
}

// Valid reports whether the cursor is on a member.
func (z *ZCursor) Valid() bool {
	if z.Sl != nil {
		return z.x != 0
	}
	return z.I >= 0 && z.I < len(z.Offs)
}

// Member is the member under the cursor.
func (z *ZCursor) Member() []byte {
	if z.Sl != nil {
		return MemberBytes(z.Sl.nodes[z.x].member)
	}
	m, _ := zlMember(z.Lp, z.Offs[z.I])
	return m
}

// Score is the score under the cursor.
func (z *ZCursor) Score() float64 {
	if z.Sl != nil {
		return z.Sl.nodes[z.x].score
	}
	_, s := zlMember(z.Lp, z.Offs[z.I])
	score, _ := zlScoreAt(z.Lp, s)
	return score
}

// Next steps towards higher scores.
func (z *ZCursor) Next() {
	if z.Sl != nil {
		z.x = z.Sl.nodes[z.x].l0.forward
		return
	}
	z.I++
}

func (z *ZCursor) prev() {
	if z.Sl != nil {
		z.x = z.Sl.nodes[z.x].backward
		return
	}
	z.I--
}

// Move steps forward, or backwards when rev.
func (z *ZCursor) Move(rev bool) {
	if rev {
		z.prev()
	} else {
		z.Next()
	}
}

// SeekRank places the cursor on the member of 0-based rank r (from the
// lowest score). REQUIRES: 0 <= r < len.
func (z *ZCursor) SeekRank(r int) {
	if z.Sl != nil {
		switch r {
		case 0:
			z.x = z.Sl.First()
		case z.Sl.length - 1:
			z.x = z.Sl.tail
		default:
			z.x = z.Sl.ByRank(r + 1)
		}
		return
	}
	z.I = r
}

// SeekScore places the cursor on the first member in r (the last, when
// last), or off the ends when none is (Redis' z*FirstInRange/LastInRange).
func (z *ZCursor) SeekScore(r *ScoreRange, last bool) {
	if z.Sl != nil {
		if last {
			z.x = z.Sl.LastInRange(r)
		} else {
			z.x = z.Sl.FirstInRange(r)
		}
		return
	}
	z.I = -1
	n := len(z.Offs)
	if r.Empty() || n == 0 {
		return
	}
	z.seekEntry(last, func() bool { return r.GteMin(z.Score()) }, func() bool { return r.LteMax(z.Score()) })
}

// SeekLex is seekScore for a lex range.
func (z *ZCursor) SeekLex(r *LexRange, last bool) {
	if z.Sl != nil {
		if last {
			z.x = z.Sl.LastInLexRange(r)
		} else {
			z.x = z.Sl.FirstInLexRange(r)
		}
		return
	}
	z.I = -1
	n := len(z.Offs)
	if r.empty() || n == 0 {
		return
	}
	// Redis' zzlIsInLexRange: the ends must be on the right sides first.
	z.I = n - 1
	if !r.GteMin(z.Member()) {
		z.I = -1
		return
	}
	z.I = 0
	if !r.LteMax(z.Member()) {
		z.I = -1
		return
	}
	z.seekEntry(last, func() bool { return r.GteMin(z.Member()) }, func() bool { return r.LteMax(z.Member()) })
}

// seekEntry is the listpack half of seekScore and seekLex: it places the
// cursor on the first entry for which gteMin holds (the last for which lteMax
// holds, when last), or at -1 when there is none or the other bound does not
// hold there. gteMin and lteMax test the entry under the cursor.
func (z *ZCursor) seekEntry(last bool, gteMin, lteMax func() bool) {
	n := len(z.Offs)
	if last {
		for z.I = n - 1; z.I >= 0; z.I-- {
			if lteMax() {
				if !gteMin() {
					z.I = -1
				}
				return
			}
		}
		return
	}
	for z.I = 0; z.I < n; z.I++ {
		if gteMin() {
			if !lteMax() {
				z.I = -1
			}
			return
		}
	}
}

// Len is the number of members.
func (s *Skiplist) Len() int { return s.length }

// Member is node x's member. REQUIRES: x is a live node.
func (s *Skiplist) Member(x uint32) string { return s.nodes[x].member }

// Score is node x's score. REQUIRES: x is a live node.
func (s *Skiplist) Score(x uint32) float64 { return s.nodes[x].score }

// Next is the node after x in order, 0 past the last.
func (s *Skiplist) Next(x uint32) uint32 { return s.nodes[x].l0.forward }

// Last is the node of the highest member, 0 when empty.
func (s *Skiplist) Last() uint32 { return s.tail }

// IsLive reports whether x is a node in use (not on the free list).
func (s *Skiplist) IsLive(x uint32) bool { return s.nodes[x].isLive() }

// Slots is the number of node slots, live or free: nodes are numbered
// 1..Slots()-1 and a member keeps its node while it lives, which is what
// lets ZSCAN walk them as a cursor.
func (s *Skiplist) Slots() int { return len(s.nodes) }
