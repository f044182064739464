package commands

import (
	"encoding/binary"
	"math/bits"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/bigbuf"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Bitmaps on strings: SETBIT GETBIT BITCOUNT BITPOS BITOP, as Redis 7.0's
// src/bitops.c. Bit 0 is the most significant bit of byte 0. Counting and
// searching go a 64-bit word at a time (math/bits); only the partial bytes
// at the edges of a range are looked at alone.

// addBitmapCommands registers the bitmap commands' handlers.
func addBitmapCommands(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("setbit", cmdSetBit, keyspace.RouteKeys)
	add("getbit", cmdGetBit, keyspace.RouteKeys)
	add("bitcount", cmdBitCount, keyspace.RouteKeys)
	add("bitpos", cmdBitPos, keyspace.RouteKeys)
	add("bitop", cmdBitOp, keyspace.RouteKeys)
	add("bitfield", cmdBitField, keyspace.RouteKeys) // bitfield.go
	add("bitfield_ro", cmdBitFieldRO, keyspace.RouteKeys)
}

const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
)

// parseBitOffset is Redis' getBitOffsetFromArgument: a non-negative integer
// whose byte (offset/8) is below proto-max-bulk-len. With hash set, "#n"
// means n*width (BITFIELD).
func parseBitOffset(arg []byte, hash bool, width int64) (int64, bool) {
	usehash := hash && width > 0 && len(arg) > 0 && arg[0] == '#'
	if usehash {
		arg = arg[1:]
	}
	off, ok := resp.ParseInt(arg)
	if !ok {
		return 0, false
	}
	if usehash {
		off *= width // as Redis: wraps for absurd n, then fails the checks below
	}
	if off < 0 || off>>3 >= keyspace.MaxStringLen {
		return 0, false
	}
	return off, true
}

// bitStringForWrite is Redis' lookupStringForBitCommand: key's string,
// created or zero-padded so that bit maxbit exists, in Redis' "raw"
// encoding (dbUnshareStringValue). grown reports that the key was created
// or lengthened: a change even if no bit moves. It replies WRONGTYPE and
// returns nil for another kind.
func bitStringForWrite(c *keyspace.Ctx, d *keyspace.DB, key []byte, maxbit int64) (o *keyspace.Object, grown bool) {
	need := int(maxbit>>3) + 1
	o = d.Lookup(key, c.Now)
	if o != nil && o.Kind != keyspace.KindString {
		c.WrongType()
		return nil, false
	}
	if o == nil {
		// As Redis (sdsnewlen): a new key gets exactly what it needs.
		o = d.Insert(key, keyspace.KindString)
		d.NewStringBuf(o, need, need, false)
		d.AccountResize(o, 0)
		grown = true
	}
	d.Materialize(o)
	if need > len(o.Bytes()) {
		d.GrowString(o, need)
		grown = true
	}
	o.Enc = keyspace.EncRawEdited
	return o, grown
}

func cmdSetBit(c *keyspace.Ctx) {
	off, ok := parseBitOffset(c.Args[2], false, 0)
	if !ok {
		c.Err(errBitOffset)
		return
	}
	on, ok := resp.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.Err(errBitValue)
		return
	}
	key := c.Args[1]
	d := c.DBFor(key)
	o, grown := bitStringForWrite(c, d, key, off)
	if o == nil {
		return
	}
	byteIdx, shift := off>>3, 7-uint(off&7)
	old := (o.Bytes()[byteIdx] >> shift) & 1
	if grown || int64(old) != on {
		// As Redis 7.0: a bit set to the value it had is no change (not
		// signalled, not logged) unless the string had to grow.
		o.Bytes()[byteIdx] = o.Bytes()[byteIdx]&^(1<<shift) | byte(on)<<shift
		d.Edited(o)
		c.Notify(keyspace.NotifyString, "setbit", key)
	}
	c.Int(int64(old))
}

func cmdGetBit(c *keyspace.Ctx) {
	off, ok := parseBitOffset(c.Args[2], false, 0)
	if !ok {
		c.Err(errBitOffset)
		return
	}
	key := c.Args[1]
	o, ok := getString(c, c.DBFor(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	v := o.Value(&c.Scratch)
	if off>>3 >= int64(len(v)) {
		c.Int(0)
		return
	}
	c.Int(int64(v[off>>3]>>(7-uint(off&7))) & 1)
}

// bitRange turns BITCOUNT/BITPOS's start and end (bytes, or bits when
// isBit) into an inclusive bit range of a string of n bytes, as Redis
// clamps them. empty reports a range with no bits.
func bitRange(start, end, n int64, isBit bool) (sb, eb int64, empty bool) {
	tot := n
	if isBit {
		tot <<= 3
	}
	if start < 0 {
		start += tot
	}
	if end < 0 {
		end += tot
	}
	start, end = max(start, 0), max(end, 0)
	if end >= tot {
		end = tot - 1
	}
	if start > end {
		return 0, 0, true
	}
	if isBit {
		return start, end, false
	}
	return start << 3, end<<3 + 7, false
}

// parseBitUnit parses BYTE or BIT.
func parseBitUnit(a []byte) (isBit, ok bool) {
	switch {
	case resp.EqualFold(a, "bit"):
		return true, true
	case resp.EqualFold(a, "byte"):
		return false, true
	}
	return false, false
}

func cmdBitCount(c *keyspace.Ctx) {
	key := c.Args[1]
	// Redis 7.0 looks the key up before it reads the arguments: a missing
	// key answers 0 whatever follows.
	o, ok := getString(c, c.DBFor(key), key)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	p := o.Value(&c.Scratch)
	n := int64(len(p))
	sb, eb, empty := int64(0), n<<3-1, n == 0
	switch len(c.Args) {
	case 2:
	case 4, 5:
		start, ok1 := resp.ParseInt(c.Args[2])
		if !ok1 {
			c.NotInteger()
			return
		}
		end, ok2 := resp.ParseInt(c.Args[3])
		if !ok2 {
			c.NotInteger()
			return
		}
		if start < 0 && end < 0 && start > end {
			c.Int(0)
			return
		}
		isBit := false
		if len(c.Args) == 5 {
			if isBit, ok = parseBitUnit(c.Args[4]); !ok {
				c.SyntaxErr()
				return
			}
		}
		sb, eb, empty = bitRange(start, end, n, isBit)
	default:
		c.SyntaxErr()
		return
	}
	if empty {
		c.Int(0)
		return
	}
	c.Int(countBits(p, sb, eb))
}

func cmdBitPos(c *keyspace.Ctx) {
	bit, ok := resp.ParseInt(c.Args[2])
	if !ok {
		c.NotInteger()
		return
	}
	if bit != 0 && bit != 1 {
		c.Err("ERR The bit argument must be 1 or 0.")
		return
	}
	key := c.Args[1]
	o, ok := getString(c, c.DBFor(key), key)
	if !ok {
		return
	}
	if o == nil {
		// A missing key is an endless run of zeros.
		c.Int(-bit) // the first 0 is bit 0; there is no 1
		return
	}
	p := o.Value(&c.Scratch)
	n := int64(len(p))
	sb, eb, empty := int64(0), n<<3-1, n == 0
	endGiven := false
	switch len(c.Args) {
	case 3:
	case 4, 5, 6:
		start, ok := resp.ParseInt(c.Args[3])
		if !ok {
			c.NotInteger()
			return
		}
		isBit := false
		if len(c.Args) == 6 {
			if isBit, ok = parseBitUnit(c.Args[5]); !ok {
				c.SyntaxErr()
				return
			}
		}
		end := n - 1
		if isBit {
			end = n<<3 + 7
		}
		if len(c.Args) >= 5 {
			if end, ok = resp.ParseInt(c.Args[4]); !ok {
				c.NotInteger()
				return
			}
			endGiven = true
		}
		sb, eb, empty = bitRange(start, end, n, isBit)
	default:
		c.SyntaxErr()
		return
	}
	if empty {
		c.Int(-1) // an empty range holds neither a 0 nor a 1
		return
	}
	if pos := findBit(p, sb, eb, byte(bit)); pos >= 0 {
		c.Int(pos)
		return
	}
	if bit == 1 || endGiven {
		c.Int(-1)
		return
	}
	// Looking for a 0 past an open end: the string is zero-padded on the
	// right, so the answer is the first bit after its last byte in range.
	c.Int((eb>>3 + 1) << 3)
}

// popcount counts the set bits of p, a word at a time.
func popcount(p []byte) int64 {
	var n int
	for len(p) >= 32 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p)) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[24:]))
		p = p[32:]
	}
	for len(p) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	for _, b := range p {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

// countBits counts the set bits of p from bit sb to bit eb, inclusive.
// REQUIRES: 0 <= sb <= eb < 8*len(p).
func countBits(p []byte, sb, eb int64) int64 {
	fb, lb := sb>>3, eb>>3
	n := popcount(p[fb : lb+1])
	n -= int64(bits.OnesCount8(p[fb] &^ (0xff >> uint(sb&7))))   // bits before sb
	n -= int64(bits.OnesCount8(p[lb] & (1<<(7-uint(eb&7)) - 1))) // bits after eb
	return n
}

// findBit returns the position of the first bit equal to bit (0 or 1) in p
// from bit sb to bit eb inclusive, or -1. Whole words in the middle are
// tested 64 bits at a time. REQUIRES: 0 <= sb <= eb < 8*len(p).
func findBit(p []byte, sb, eb int64, bit byte) int64 {
	flip := byte(0xff) // XORed in so that the bit looked for reads as 1
	if bit == 1 {
		flip = 0
	}
	fb, lb := sb>>3, eb>>3
	lastMask := byte(0xff) << (7 - uint(eb&7))
	v := (p[fb] ^ flip) & (0xff >> uint(sb&7))
	if fb == lb {
		v &= lastMask
	}
	if v != 0 {
		return fb<<3 + int64(bits.LeadingZeros8(v))
	}
	if fb == lb {
		return -1
	}
	i := fb + 1
	wflip := uint64(0)
	if bit == 0 {
		wflip = ^uint64(0)
	}
	// Skip 32 bytes at a time while they hold nothing but the other bit
	// (native-order loads: no byte swap until a block has a hit).
	for ; i+32 <= lb; i += 32 {
		q := p[i : i+32]
		var w uint64
		if bit == 1 {
			w = binary.LittleEndian.Uint64(q) | binary.LittleEndian.Uint64(q[8:]) |
				binary.LittleEndian.Uint64(q[16:]) | binary.LittleEndian.Uint64(q[24:])
		} else {
			w = ^(binary.LittleEndian.Uint64(q) & binary.LittleEndian.Uint64(q[8:]) &
				binary.LittleEndian.Uint64(q[16:]) & binary.LittleEndian.Uint64(q[24:]))
		}
		if w != 0 {
			break
		}
	}
	for ; i+8 <= lb; i += 8 {
		if w := binary.BigEndian.Uint64(p[i:]) ^ wflip; w != 0 {
			return i<<3 + int64(bits.LeadingZeros64(w))
		}
	}
	for ; i < lb; i++ {
		if v := p[i] ^ flip; v != 0 {
			return i<<3 + int64(bits.LeadingZeros8(v))
		}
	}
	if v := (p[lb] ^ flip) & lastMask; v != 0 {
		return lb<<3 + int64(bits.LeadingZeros8(v))
	}
	return -1
}

const (
	bitopAnd = iota
	bitopOr
	bitopXor
	bitopNot
)

// cmdBitOp is BITOP op destkey key [key ...]. The keys may live on several
// shards: the command is routed by its key specs, so it holds every shard
// its keys hash to and reaches each key's store through c.DBFor.
func cmdBitOp(c *keyspace.Ctx) {
	var op int
	switch name := c.Args[1]; {
	case resp.EqualFold(name, "and"):
		op = bitopAnd
	case resp.EqualFold(name, "or"):
		op = bitopOr
	case resp.EqualFold(name, "xor"):
		op = bitopXor
	case resp.EqualFold(name, "not"):
		op = bitopNot
	default:
		c.SyntaxErr()
		return
	}
	if op == bitopNot && len(c.Args) != 4 {
		c.Err("ERR BITOP NOT must be called with a single source key.")
		return
	}
	keys := c.Args[3:]
	srcs := make([][]byte, len(keys))
	nums := make([][20]byte, len(keys)) // integer-encoded sources' digits
	maxlen := 0
	for j, k := range keys {
		o, ok := getString(c, c.DBFor(k), k)
		if !ok {
			return
		}
		if o != nil {
			srcs[j] = o.Value(&nums[j])
			maxlen = max(maxlen, len(srcs[j]))
		}
	}
	dst := c.Args[2]
	d := c.DBFor(dst)
	if maxlen == 0 {
		if old := d.Lookup(dst, c.Now); old != nil {
			d.Remove(old)
			c.Notify(keyspace.NotifyGeneric, "del", dst)
		}
		c.Int(0)
		return
	}
	// The result is built in a buffer of its own (a source may be dst) that
	// then becomes dst's string as it is: off the Go heap from
	// bigbuf.Threshold on, as SET would put it.
	var res []byte
	offHeap := false
	if maxlen >= bigbuf.Threshold {
		if b, err := bigbuf.Alloc(maxlen, maxlen, true); err == nil {
			res, offHeap = b, true
		}
	}
	if res == nil {
		res = make([]byte, maxlen)
	}
	copy(res, srcs[0])
	if op == bitopNot {
		notWords(res)
	}
	for _, s := range srcs[1:] {
		switch op {
		case bitopAnd:
			andWords(res, s)
			clear(res[len(s):]) // a shorter source is zero-padded
		case bitopOr:
			orWords(res, s)
		case bitopXor:
			xorWords(res, s)
		}
	}
	var o *keyspace.Object
	if old := d.Lookup(dst, c.Now); old != nil {
		d.Remove(old)
		o = d.Reinsert(dst, keyspace.KindString)
	} else {
		o = d.Insert(dst, keyspace.KindString)
	}
	if offHeap {
		d.AdoptOffHeap(o, res)
	} else {
		o.SetBytes(res)
	}
	d.AccountResize(o, 0)
	d.Edited(o) // Redis creates a "raw" string, never embstr
	c.Notify(keyspace.NotifyString, "set", dst)
	c.Int(int64(maxlen))
}

// andWords sets dst[i] &= src[i] for i < len(src), a word at a time.
func andWords(dst, src []byte) {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(dst[i:])&binary.LittleEndian.Uint64(src[i:]))
	}
	for ; i < len(src); i++ {
		dst[i] &= src[i]
	}
}

// orWords sets dst[i] |= src[i] for i < len(src), a word at a time.
func orWords(dst, src []byte) {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(dst[i:])|binary.LittleEndian.Uint64(src[i:]))
	}
	for ; i < len(src); i++ {
		dst[i] |= src[i]
	}
}

// xorWords sets dst[i] ^= src[i] for i < len(src), a word at a time.
func xorWords(dst, src []byte) {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(dst[i:])^binary.LittleEndian.Uint64(src[i:]))
	}
	for ; i < len(src); i++ {
		dst[i] ^= src[i]
	}
}

// notWords inverts every bit of p, a word at a time.
func notWords(p []byte) {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], ^binary.LittleEndian.Uint64(p[i:]))
	}
	for ; i < len(p); i++ {
		p[i] = ^p[i]
	}
}
