package rdb

import (
	"encoding/binary"
	"math"
	"strconv"
)

// AppendKey starts an entry: the EXPIRETIME_MS opcode and time when
// expireAtMs != 0, then the type byte, then the key as an RDB string.
func AppendKey(dst []byte, typ byte, key []byte, expireAtMs int64) []byte {
	if expireAtMs != 0 {
		dst = append(dst, opExpireTimeMs)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(expireAtMs))
	}
	dst = append(dst, typ)
	return AppendString(dst, key)
}

// AppendString appends s as an RDB string: integer-encoded (RDB_ENC_INT8/16/32)
// exactly when Redis' rdbTryIntegerEncoding would (at most 11 bytes, the
// canonical decimal form of a number that fits 32 bits), else
// length-prefixed raw bytes (no LZF).
func AppendString(dst, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := parseCanonicalInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			return appendIntEncoded(dst, v)
		}
	}
	dst = AppendLen(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendInt appends n as an RDB string holding its decimal form
// (int-encoded when it fits 32 bits), for intset members and
// integer-encoded strings, as Redis' rdbSaveLongLongAsStringObject.
func AppendInt(dst []byte, n int64) []byte {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return appendIntEncoded(dst, n)
	}
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	dst = AppendLen(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendIntEncoded writes v (within int32) in the smallest RDB_ENC_INT*
// form, as rdbEncodeInteger.
func appendIntEncoded(dst []byte, v int64) []byte {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(dst, lenEnc<<6|encInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return append(dst, lenEnc<<6|encInt16, byte(v), byte(v>>8))
	default:
		return append(dst, lenEnc<<6|encInt32, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
}

// AppendLen appends an RDB length (rdbSaveLen).
func AppendLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, len14Bit<<6|byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		dst = append(dst, len32)
		return binary.BigEndian.AppendUint32(dst, uint32(n))
	default:
		dst = append(dst, len64)
		return binary.BigEndian.AppendUint64(dst, n)
	}
}

// AppendBinaryDouble appends f as 8 little-endian bytes (TypeZSet2 scores).
func AppendBinaryDouble(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// appendMillis appends t as rdbSaveMillisecondTime does: 8 bytes, little endian.
func appendMillis(dst []byte, t int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(t))
}

// appendRawID appends id as Redis' streamEncodeID: ms then seq, 8 bytes
// each, big endian (so that byte order is ID order in a rax).
func appendRawID(dst []byte, id StreamID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, id.Ms)
	return binary.BigEndian.AppendUint64(dst, id.Seq)
}

// parseCanonicalInt parses s as Redis' string2ll does: an optional '-',
// then digits with no leading zero (or exactly "0"), fitting int64. It
// accepts exactly the strings that are the canonical decimal form of their
// value, so the value prints back to the same bytes.
func parseCanonicalInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	p := s
	if neg {
		p = s[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to itself: MinInt64
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
