package rdb

import (
	"encoding/binary"
	"math"
)

// Redis listpack encoding bytes (src/listpack.c).
const (
	lpHeaderSize = 6 // total bytes (uint32 LE) + element count (uint16 LE)
	lpEOF        = 0xFF
	lpCountMax   = 65535 // element count field value meaning "unknown, count them"
)

// lpStart begins a Redis listpack at the end of dst and returns dst and the
// offset where the listpack begins; lpFinish completes its header.
func lpStart(dst []byte) ([]byte, int) {
	start := len(dst)
	return append(dst, 0, 0, 0, 0, 0, 0), start
}

// lpFinish appends the terminator and fills in the header of the listpack
// that begins at start and holds count elements.
func lpFinish(dst []byte, start int, count int) []byte {
	dst = append(dst, lpEOF)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	binary.LittleEndian.PutUint16(dst[start+4:], uint16(min(count, lpCountMax)))
	return dst
}

// lpAppendString appends s as one listpack element, as lpAppend does: an
// integer element when s is the canonical decimal form of an int64, else a
// string element.
func lpAppendString(dst, s []byte) []byte {
	if v, ok := parseCanonicalInt(s); ok {
		return lpAppendInt(dst, v)
	}
	n := len(s)
	var enclen int
	switch {
	case n < 64:
		dst = append(dst, byte(0x80|n))
		enclen = 1 + n
	case n < 4096:
		dst = append(dst, byte(0xE0|n>>8), byte(n))
		enclen = 2 + n
	default:
		dst = append(dst, 0xF0, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
		enclen = 5 + n
	}
	dst = append(dst, s...)
	return lpAppendBacklen(dst, uint64(enclen))
}

// lpAppendInt appends v as one integer listpack element in the smallest
// encoding (lpEncodeIntegerGetType).
func lpAppendInt(dst []byte, v int64) []byte {
	start := len(dst)
	switch {
	case v >= 0 && v <= 127:
		dst = append(dst, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v)
		if v < 0 {
			u = uint64(1<<13 + v)
		}
		dst = append(dst, byte(u>>8)|0xC0, byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		dst = append(dst, 0xF1, byte(v), byte(v>>8))
	case v >= -1<<23 && v <= 1<<23-1:
		dst = append(dst, 0xF2, byte(v), byte(v>>8), byte(v>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		dst = append(dst, 0xF3, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	default:
		dst = append(dst, 0xF4)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	return lpAppendBacklen(dst, uint64(len(dst)-start))
}

// lpAppendBacklen appends the back-length of an element of l bytes
// (encoding + data), as lpEncodeBacklen.
func lpAppendBacklen(dst []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(dst, byte(l))
	case l < 16383:
		return append(dst, byte(l>>7), byte(l&127|128))
	case l < 2097151:
		return append(dst, byte(l>>14), byte(l>>7&127|128), byte(l&127|128))
	case l < 268435455:
		return append(dst, byte(l>>21), byte(l>>14&127|128), byte(l>>7&127|128), byte(l&127|128))
	default:
		return append(dst, byte(l>>28), byte(l>>21&127|128), byte(l>>14&127|128), byte(l>>7&127|128), byte(l&127|128))
	}
}
