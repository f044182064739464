package hll

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
)

// Sizes and limits of Redis' representation (HLL_* in hyperloglog.c).
const (
	P                = 14             // register index bits
	Q                = 64 - P         // hash bits left for the zero run
	Registers        = 1 << P         // 16384
	regBits          = 6              // bits per dense register
	RegisterMax      = 1<<regBits - 1 // 63
	HeaderSize       = 16
	DenseSize        = HeaderSize + (Registers*regBits+7)/8 // 12304
	Dense            = 0                                    // the dense encoding byte
	Sparse           = 1                                    // the sparse encoding byte
	maxEncoding      = 1
	valMaxValue      = 32    // largest register a VAL opcode holds
	valMaxLen        = 4     // longest run a VAL opcode holds
	zeroMaxLen       = 64    // longest run a ZERO opcode holds
	xzeroMaxLen      = 16384 // longest run an XZERO opcode holds
	xzeroBit         = 0x40
	valBit           = 0x80
	alphaInf         = 0.721347520444481703680 // 0.5/ln(2)
	murmurSeed       = 0xadc83b19
	SparseEmpty      = HeaderSize + (Registers+xzeroMaxLen-1)/xzeroMaxLen*2 // a new HLL: XZERO:16384
	DefaultSparseMax = 3000                                                 // hll-sparse-max-bytes' default
)

// Errors, each with the text Redis replies (the error code first).
var (
	// ErrNotHLL: the string is no HLL (isHLLObjectOrReply).
	ErrNotHLL = errors.New("WRONGTYPE Key is not a valid HyperLogLog string value.")
	// ErrCorrupt: an HLL whose sparse opcodes do not cover the registers.
	ErrCorrupt = errors.New("INVALIDOBJ Corrupted HLL object detected")
)

// Check is isHLLObjectOrReply's test of a string value: at least a header,
// the magic, a known encoding, and exactly DenseSize bytes when dense. It
// returns the encoding. A sparse HLL's opcodes are checked only when read.
func Check(s []byte) (enc byte, err error) {
	if len(s) < HeaderSize || s[0] != 'H' || s[1] != 'Y' || s[2] != 'L' || s[3] != 'L' {
		return 0, ErrNotHLL
	}
	enc = s[4]
	if enc > maxEncoding || enc == Dense && len(s) != DenseSize {
		return 0, ErrNotHLL
	}
	return enc, nil
}

// NewSparse appends an empty HLL (sparse, one XZERO:16384 opcode, cached
// cardinality 0 and valid) to dst: Redis' createHLLObject.
func NewSparse(dst []byte) []byte {
	dst = append(dst, 'H', 'Y', 'L', 'L', Sparse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	l := Registers - 1
	return append(dst, byte(l>>8)|xzeroBit, byte(l))
}

// Murmur64A is Redis' MurmurHash64A (little-endian reads on every host).
func Murmur64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := uint64(key[0]) | uint64(key[1])<<8 | uint64(key[2])<<16 | uint64(key[3])<<24 |
			uint64(key[4])<<32 | uint64(key[5])<<40 | uint64(key[6])<<48 | uint64(key[7])<<56
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if n := len(key); n > 0 {
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// PatLen is hllPatLen: the register ele hashes to and the length of the
// 000..1 pattern in the remaining hash bits (1..Q+1).
func PatLen(ele []byte) (index int, count uint8) {
	hash := Murmur64A(ele, murmurSeed)
	index = int(hash & (Registers - 1))
	hash >>= P
	hash |= 1 << Q // the loop terminates and count <= Q+1
	return index, uint8(bits.TrailingZeros64(hash) + 1)
}

// denseGet returns dense register i of regs (the bytes after the header).
// Redis reads the byte after the last register (sds' terminator); here the
// second byte is read only when the register straddles two bytes.
func denseGet(regs []byte, i int) uint8 {
	b, fb := i*regBits/8, uint(i*regBits&7)
	v := uint(regs[b]) >> fb
	if fb > 8-regBits {
		v |= uint(regs[b+1]) << (8 - fb)
	}
	return uint8(v & RegisterMax)
}

// denseSet sets dense register i of regs to v.
func denseSet(regs []byte, i int, v uint8) {
	b, fb := i*regBits/8, uint(i*regBits&7)
	regs[b] = regs[b]&^byte(RegisterMax<<fb) | byte(uint(v)<<fb)
	if fb > 8-regBits {
		regs[b+1] = regs[b+1]&^byte(RegisterMax>>(8-fb)) | byte(uint(v)>>(8-fb))
	}
}

// Invalidate marks the cached cardinality stale (HLL_INVALIDATE_CACHE).
func Invalidate(s []byte) { s[15] |= 0x80 }

// Cached returns the cached cardinality and whether it is valid.
func Cached(s []byte) (uint64, bool) {
	if s[15]&0x80 != 0 {
		return 0, false
	}
	var c uint64
	for i := 7; i >= 0; i-- {
		c = c<<8 | uint64(s[8+i])
	}
	return c, true
}

// SetCached stores card as the valid cached cardinality.
func SetCached(s []byte, card uint64) {
	for i := 0; i < 8; i++ {
		s[8+i] = byte(card >> (8 * i))
	}
}

// Add is hllAdd: it adds ele to s, a checked HLL, and returns the HLL (s,
// or a longer or promoted copy when a sparse one had to grow) and whether a
// register changed. A sparse HLL that would grow past sparseMax bytes, or
// needs a register above 32, is promoted to dense. It does not touch the
// cached cardinality; the caller invalidates it once (as PFADD).
func Add(s, ele []byte, sparseMax int) ([]byte, bool, error) {
	index, count := PatLen(ele)
	if s[4] == Dense {
		regs := s[HeaderSize:]
		if denseGet(regs, index) >= count {
			return s, false, nil
		}
		denseSet(regs, index, count)
		return s, true, nil
	}
	return sparseSet(s, index, count, sparseMax)
}

// Set is hllDenseSet or hllSparseSet by s's encoding: register index
// becomes count if it is below it (PFMERGE's write of the union).
func Set(s []byte, index int, count uint8, sparseMax int) ([]byte, bool, error) {
	if s[4] == Dense {
		regs := s[HeaderSize:]
		if denseGet(regs, index) >= count {
			return s, false, nil
		}
		denseSet(regs, index, count)
		return s, true, nil
	}
	return sparseSet(s, index, count, sparseMax)
}

// sparse opcode accessors (HLL_SPARSE_* macros).
func isZero(b byte) bool  { return b&0xc0 == 0 }
func isXZero(b byte) bool { return b&0xc0 == xzeroBit }
func isVal(b byte) bool   { return b&valBit != 0 }
func zeroLen(b byte) int  { return int(b&0x3f) + 1 }
func xzeroLen(b0, b1 byte) int {
	return (int(b0&0x3f)<<8 | int(b1)) + 1
}
func valValue(b byte) int { return int(b>>2&0x1f) + 1 }
func valLen(b byte) int   { return int(b&3) + 1 }
func valOp(v, l int) byte { return byte((v-1)<<2|(l-1)) | valBit }

// byteAt is s[i], or 0 past the end: an XZERO opcode cut off at the end of a
// corrupt HLL reads sds' terminating zero in Redis, and reads it here too.
func byteAt(s []byte, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// appendZeros appends the ZERO or XZERO opcode for a run of n zeros, as
// Redis' split (XZERO only above ZERO's 64).
func appendZeros(dst []byte, n int) []byte {
	if n > zeroMaxLen {
		l := n - 1
		return append(dst, byte(l>>8)|xzeroBit, byte(l))
	}
	return append(dst, byte(n-1))
}

// sparseSet is hllSparseSet. The resulting bytes are Redis' exactly; only
// the capacity differs (Go's append growth instead of sdsMakeRoomFor).
func sparseSet(s []byte, index int, count uint8, sparseMax int) ([]byte, bool, error) {
	if count > valMaxValue {
		return promote(s, index, count)
	}
	// Step 1: find the opcode covering index.
	p, end := HeaderSize, len(s)
	first, span, prev := 0, 0, -1
	for p < end {
		oplen := 1
		switch b := s[p]; {
		case isZero(b):
			span = zeroLen(b)
		case isVal(b):
			span = valLen(b)
		default:
			if p+1 >= end {
				// Redis reads the terminator here; rewriting a cut-off
				// opcode is refused instead (see docs/compatibility.md).
				return s, false, ErrCorrupt
			}
			span = xzeroLen(b, s[p+1])
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return s, false, ErrCorrupt
	}
	b := s[p]
	var runlen int
	oldlen := 1
	switch {
	case isZero(b):
		runlen = zeroLen(b)
	case isXZero(b):
		runlen = xzeroLen(b, s[p+1])
		oldlen = 2
	default:
		runlen = valLen(b)
	}
	// Step 2: the trivial cases in place.
	switch {
	case isVal(b) && valValue(b) >= int(count):
		return s, false, nil // case A
	case isVal(b) && runlen == 1, isZero(b) && runlen == 1:
		s[p] = valOp(int(count), 1) // cases B and C
		return sparseMerge(s, prev), true, nil
	}
	// Case D: split the opcode into up to three (at most 5 bytes).
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + span - 1
	if !isVal(b) {
		if index != first {
			seq = appendZeros(seq, index-first)
		}
		seq = append(seq, valOp(int(count), 1))
		if index != last {
			seq = appendZeros(seq, last-index)
		}
	} else {
		cur := valValue(b)
		if index != first {
			seq = append(seq, valOp(cur, index-first))
		}
		seq = append(seq, valOp(int(count), 1))
		if index != last {
			seq = append(seq, valOp(cur, last-index))
		}
	}
	// Step 3: substitute the sequence, or promote when it would make the
	// HLL longer than sparseMax.
	delta := len(seq) - oldlen
	if delta > 0 && len(s)+delta > sparseMax {
		return promote(s, index, count)
	}
	if delta > 0 {
		s = append(s, seqBuf[:delta]...) // room; overwritten by the move
	}
	next := p + oldlen
	copy(s[next+delta:], s[next:end])
	if delta < 0 {
		s = s[:len(s)+delta]
	}
	copy(s[p:], seq)
	return sparseMerge(s, prev), true, nil
}

// sparseMerge is hllSparseSet's step 4: adjacent VAL opcodes of the same
// value merge when their runs fit one opcode, scanning up to 5 opcodes from
// prev (the opcode before the changed one, or the first).
func sparseMerge(s []byte, prev int) []byte {
	p := HeaderSize
	if prev >= 0 {
		p = prev
	}
	end := len(s)
	for scan := 5; p < end && scan > 0; scan-- {
		b := s[p]
		if isXZero(b) {
			p += 2
			continue
		}
		if isZero(b) {
			p++
			continue
		}
		if p+1 < end && isVal(s[p+1]) {
			v1, v2 := valValue(b), valValue(s[p+1])
			if v1 == v2 {
				if l := valLen(b) + valLen(s[p+1]); l <= valMaxLen {
					s[p+1] = valOp(v1, l)
					copy(s[p:], s[p+1:end])
					end--
					s = s[:end]
					continue // the merged opcode may merge with the next (counted as a step, as Redis)
				}
			}
		}
		p++
	}
	return s
}

// promote is hllSparseSet's promote label: the HLL becomes dense and then
// register index is set.
func promote(s []byte, index int, count uint8) ([]byte, bool, error) {
	d, err := ToDense(s)
	if err != nil {
		return s, false, err
	}
	denseSet(d[HeaderSize:], index, count)
	return d, true, nil
}

// ToDense is hllSparseToDense: a new dense HLL with s's registers and
// header (the cached cardinality included). A dense s is returned as is.
func ToDense(s []byte) ([]byte, error) {
	if s[4] == Dense {
		return s, nil
	}
	d := make([]byte, DenseSize)
	copy(d, s[:HeaderSize])
	d[4] = Dense
	regs := d[HeaderSize:]
	idx := 0
	for p := HeaderSize; p < len(s); {
		b := s[p]
		switch {
		case isZero(b):
			idx += zeroLen(b)
			p++
		case isXZero(b):
			idx += xzeroLen(b, byteAt(s, p+1))
			p += 2
		default:
			n, v := valLen(b), valValue(b)
			if idx+n > Registers {
				return nil, ErrCorrupt
			}
			for ; n > 0; n-- {
				denseSet(regs, idx, uint8(v))
				idx++
			}
			p++
		}
	}
	if idx != Registers {
		return nil, ErrCorrupt
	}
	return d, nil
}

// histogram counts the registers of s, a checked HLL, by value.
func histogram(s []byte, h *[64]int) error {
	if s[4] == Dense {
		regs := s[HeaderSize:DenseSize]
		for i := 0; i+3 <= len(regs); i += 3 {
			// Four 6-bit registers in three bytes.
			w := uint32(regs[i]) | uint32(regs[i+1])<<8 | uint32(regs[i+2])<<16
			h[w&63]++
			h[w>>6&63]++
			h[w>>12&63]++
			h[w>>18&63]++
		}
		return nil
	}
	idx := 0
	for p := HeaderSize; p < len(s); {
		b := s[p]
		switch {
		case isZero(b):
			n := zeroLen(b)
			idx += n
			h[0] += n
			p++
		case isXZero(b):
			n := xzeroLen(b, byteAt(s, p+1))
			idx += n
			h[0] += n
			p += 2
		default:
			n := valLen(b)
			idx += n
			h[valValue(b)] += n
			p++
		}
	}
	if idx != Registers {
		return ErrCorrupt
	}
	return nil
}

// Count is hllCount of s, a checked HLL, ignoring the cache.
func Count(s []byte) (uint64, error) {
	var h [64]int
	if err := histogram(s, &h); err != nil {
		return 0, err
	}
	return estimate(&h), nil
}

// estimate is Ertl's improved estimator over the register histogram, as
// hllCount computes it (same operations in the same order, so the same
// doubles).
func estimate(h *[64]int) uint64 {
	const m = float64(Registers)
	z := m * tau((m-float64(h[Q+1]))/m)
	for j := Q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += m * sigma(float64(h[0])/m)
	return uint64(math.Round(alphaInf * m * m / z))
}

// sigma is hllSigma (Ertl, arXiv:1702.01284).
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zPrime := z
		z += x * y
		y += y
		if zPrime == z {
			return z
		}
	}
}

// tau is hllTau (Ertl, arXiv:1702.01284).
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if zPrime == z {
			return z / 3
		}
	}
}

// Union is the raw registers of PFCOUNT's and PFMERGE's union (one byte per
// register, Redis' HLL_RAW).
type Union [Registers]uint8

// Merge is hllMerge: u[i] = max(u[i], register i of s), s a checked HLL.
func (u *Union) Merge(s []byte) error {
	if s[4] == Dense {
		regs := s[HeaderSize:DenseSize]
		for i, j := 0, 0; i+3 <= len(regs); i, j = i+3, j+4 {
			w := uint32(regs[i]) | uint32(regs[i+1])<<8 | uint32(regs[i+2])<<16
			u[j] = max(u[j], uint8(w&63))
			u[j+1] = max(u[j+1], uint8(w>>6&63))
			u[j+2] = max(u[j+2], uint8(w>>12&63))
			u[j+3] = max(u[j+3], uint8(w>>18&63))
		}
		return nil
	}
	i := 0
	for p := HeaderSize; p < len(s); {
		b := s[p]
		switch {
		case isZero(b):
			i += zeroLen(b)
			p++
		case isXZero(b):
			i += xzeroLen(b, byteAt(s, p+1))
			p += 2
		default:
			n, v := valLen(b), uint8(valValue(b))
			if i+n > Registers {
				return ErrCorrupt
			}
			for ; n > 0; n-- {
				u[i] = max(u[i], v)
				i++
			}
			p++
		}
	}
	if i != Registers {
		return ErrCorrupt
	}
	return nil
}

// Count is hllCount of the union (HLL_RAW).
func (u *Union) Count() uint64 {
	var h [64]int
	for _, v := range u {
		h[v&63]++
	}
	return estimate(&h)
}

// Register returns register i of a dense HLL (PFDEBUG GETREG).
func Register(s []byte, i int) uint8 { return denseGet(s[HeaderSize:], i) }

// Decode appends PFDEBUG DECODE's text for a sparse HLL to dst: its opcodes
// as "z:<len>", "Z:<len>" and "v:<value>,<len>", space separated.
func Decode(dst, s []byte) []byte {
	n := len(dst)
	for p := HeaderSize; p < len(s); {
		if len(dst) > n {
			dst = append(dst, ' ')
		}
		b := s[p]
		switch {
		case isZero(b):
			dst = append(dst, "z:"...)
			dst = strconv.AppendInt(dst, int64(zeroLen(b)), 10)
			p++
		case isXZero(b):
			dst = append(dst, "Z:"...)
			dst = strconv.AppendInt(dst, int64(xzeroLen(b, byteAt(s, p+1))), 10)
			p += 2
		default:
			dst = append(dst, "v:"...)
			dst = strconv.AppendInt(dst, int64(valValue(b)), 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(valLen(b)), 10)
			p++
		}
	}
	return dst
}
