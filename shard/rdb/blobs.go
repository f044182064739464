package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/svcdb/svcdb/shard/values"
)

// This file validates and walks the flat encodings Redis embeds in RDB
// strings: listpack (src/listpack.c), ziplist (ziplist.c), intset
// (intset.c) and zipmap (zipmap.c), and decompresses LZF (lzf_d.c). Each
// validate function checks the whole blob (header, every element's bounds,
// back-lengths or prev-lengths, element count, terminator) so that the
// matching next function can walk it without further checks.

// ---- listpack ----

// validateListpack checks b is one well-formed listpack and returns its
// element count.
func validateListpack(b []byte) (int, error) {
	if len(b) < lpHeaderSize+1 {
		return 0, fmt.Errorf("listpack of %d bytes is shorter than its header", len(b))
	}
	if tot := binary.LittleEndian.Uint32(b); uint64(tot) != uint64(len(b)) {
		return 0, fmt.Errorf("listpack header says %d bytes, blob has %d", tot, len(b))
	}
	if b[len(b)-1] != lpEOF {
		return 0, errors.New("listpack does not end with its terminator")
	}
	want := int(binary.LittleEndian.Uint16(b[4:]))
	count := 0
	p := lpHeaderSize
	for b[p] != lpEOF {
		encLen, err := lpEntrySize(b, p)
		if err != nil {
			return 0, err
		}
		var bl [5]byte
		back := lpAppendBacklen(bl[:0], uint64(encLen))
		end := p + encLen + len(back)
		if end > len(b)-1 {
			return 0, fmt.Errorf("listpack element at %d runs past the end", p)
		}
		if string(b[p+encLen:end]) != string(back) {
			return 0, fmt.Errorf("listpack element at %d has a wrong back-length", p)
		}
		p = end
		count++
	}
	if p != len(b)-1 {
		return 0, errors.New("listpack terminator before the end of the blob")
	}
	if want != lpCountMax && want != count {
		return 0, fmt.Errorf("listpack header says %d elements, found %d", want, count)
	}
	return count, nil
}

// lpEntrySize is the size of the element at p (encoding and data, without
// the back-length), checked against the bounds of b.
func lpEntrySize(b []byte, p int) (int, error) {
	c := b[p]
	var n int
	switch {
	case c&0x80 == 0: // 7-bit uint
		n = 1
	case c&0xC0 == 0x80: // 6-bit string length
		n = 1 + int(c&0x3F)
	case c&0xE0 == 0xC0: // 13-bit int
		n = 2
	case c&0xF0 == 0xE0: // 12-bit string length
		if p+1 >= len(b) {
			return 0, fmt.Errorf("listpack element at %d is truncated", p)
		}
		n = 2 + (int(c&0x0F)<<8 | int(b[p+1]))
	case c == 0xF0: // 32-bit string length
		if p+5 > len(b) {
			return 0, fmt.Errorf("listpack element at %d is truncated", p)
		}
		l := binary.LittleEndian.Uint32(b[p+1:])
		if uint64(l) > uint64(len(b)) {
			return 0, fmt.Errorf("listpack element at %d runs past the end", p)
		}
		n = 5 + int(l)
	case c == 0xF1:
		n = 3
	case c == 0xF2:
		n = 4
	case c == 0xF3:
		n = 5
	case c == 0xF4:
		n = 9
	default:
		return 0, fmt.Errorf("listpack element at %d has invalid encoding 0x%02x", p, c)
	}
	if p+n > len(b)-1 {
		return 0, fmt.Errorf("listpack element at %d runs past the end", p)
	}
	return n, nil
}

// lpNext returns the element at p of a validated listpack (a string, or an
// integer when isInt) and the offset of the next one. p == len(lp)-1 is the
// end.
func lpNext(lp []byte, p int) (s []byte, v int64, isInt bool, next int) {
	c := lp[p]
	var n int
	switch {
	case c&0x80 == 0:
		v, isInt, n = int64(c), true, 1
	case c&0xC0 == 0x80:
		l := int(c & 0x3F)
		s, n = lp[p+1:p+1+l:p+1+l], 1+l
	case c&0xE0 == 0xC0:
		u := int64(c&0x1F)<<8 | int64(lp[p+1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		v, isInt, n = u, true, 2
	case c&0xF0 == 0xE0:
		l := int(c&0x0F)<<8 | int(lp[p+1])
		s, n = lp[p+2:p+2+l:p+2+l], 2+l
	case c == 0xF0:
		l := int(binary.LittleEndian.Uint32(lp[p+1:]))
		s, n = lp[p+5:p+5+l:p+5+l], 5+l
	case c == 0xF1:
		v, isInt, n = int64(int16(binary.LittleEndian.Uint16(lp[p+1:]))), true, 3
	case c == 0xF2:
		u := int32(uint32(lp[p+1])<<8|uint32(lp[p+2])<<16|uint32(lp[p+3])<<24) >> 8
		v, isInt, n = int64(u), true, 4
	case c == 0xF3:
		v, isInt, n = int64(int32(binary.LittleEndian.Uint32(lp[p+1:]))), true, 5
	default: // 0xF4
		v, isInt, n = int64(binary.LittleEndian.Uint64(lp[p+1:])), true, 9
	}
	return s, v, isInt, p + n + values.ListpackBacklenSize(n)
}

// ---- ziplist ----

const (
	zlHeaderSize = 10 // zlbytes, zltail (uint32 LE), zllen (uint16 LE)
	zlEnd        = 0xFF
	zlBigPrevLen = 254
)

// validateZiplist checks b is one well-formed ziplist and returns its
// entry count.
func validateZiplist(b []byte) (int, error) {
	if len(b) < zlHeaderSize+1 {
		return 0, fmt.Errorf("ziplist of %d bytes is shorter than its header", len(b))
	}
	if tot := binary.LittleEndian.Uint32(b); uint64(tot) != uint64(len(b)) {
		return 0, fmt.Errorf("ziplist header says %d bytes, blob has %d", tot, len(b))
	}
	if b[len(b)-1] != zlEnd {
		return 0, errors.New("ziplist does not end with its terminator")
	}
	tail := int(binary.LittleEndian.Uint32(b[4:]))
	want := int(binary.LittleEndian.Uint16(b[8:]))
	count, prevSize, last := 0, 0, zlHeaderSize
	p := zlHeaderSize
	for b[p] != zlEnd {
		start := p
		prevLen, h, err := zlPrevLen(b, p)
		if err != nil {
			return 0, err
		}
		if prevLen != prevSize {
			return 0, fmt.Errorf("ziplist entry at %d has prevlen %d, previous entry has %d bytes", p, prevLen, prevSize)
		}
		p += h
		hdr, dataLen, err := zlEncoding(b, p)
		if err != nil {
			return 0, err
		}
		p += hdr + dataLen
		if p > len(b)-1 {
			return 0, fmt.Errorf("ziplist entry at %d runs past the end", start)
		}
		prevSize, last = p-start, start
		count++
	}
	if p != len(b)-1 {
		return 0, errors.New("ziplist terminator before the end of the blob")
	}
	if tail != last {
		return 0, fmt.Errorf("ziplist tail offset %d, last entry at %d", tail, last)
	}
	if want != 0xFFFF && want != count {
		return 0, fmt.Errorf("ziplist header says %d entries, found %d", want, count)
	}
	return count, nil
}

// zlPrevLen reads the prevlen field at p: its value and its size.
func zlPrevLen(b []byte, p int) (int, int, error) {
	if b[p] < zlBigPrevLen {
		return int(b[p]), 1, nil
	}
	if p+5 > len(b)-1 {
		return 0, 0, fmt.Errorf("ziplist entry at %d is truncated", p)
	}
	return int(binary.LittleEndian.Uint32(b[p+1:])), 5, nil
}

// zlEncoding reads the encoding at p: the header size and the data size.
func zlEncoding(b []byte, p int) (int, int, error) {
	c := b[p]
	switch c >> 6 {
	case 0:
		return 1, int(c & 0x3F), nil
	case 1:
		if p+2 > len(b)-1 {
			return 0, 0, fmt.Errorf("ziplist entry at %d is truncated", p)
		}
		return 2, int(c&0x3F)<<8 | int(b[p+1]), nil
	case 2:
		if c != 0x80 {
			return 0, 0, fmt.Errorf("ziplist entry at %d has invalid encoding 0x%02x", p, c)
		}
		if p+5 > len(b)-1 {
			return 0, 0, fmt.Errorf("ziplist entry at %d is truncated", p)
		}
		l := binary.BigEndian.Uint32(b[p+1:])
		if uint64(l) > uint64(len(b)) {
			return 0, 0, fmt.Errorf("ziplist entry at %d runs past the end", p)
		}
		return 5, int(l), nil
	}
	switch c {
	case 0xC0:
		return 1, 2, nil
	case 0xD0:
		return 1, 4, nil
	case 0xE0:
		return 1, 8, nil
	case 0xF0:
		return 1, 3, nil
	case 0xFE:
		return 1, 1, nil
	}
	if c >= 0xF1 && c <= 0xFD {
		return 1, 0, nil
	}
	return 0, 0, fmt.Errorf("ziplist entry at %d has invalid encoding 0x%02x", p, c)
}

// zlNext returns the entry at p of a validated ziplist and the offset of
// the next one. lp[p] == 0xFF is the end.
func zlNext(zl []byte, p int) (s []byte, v int64, isInt bool, next int) {
	_, h, _ := zlPrevLen(zl, p)
	p += h
	hdr, n, _ := zlEncoding(zl, p)
	data := zl[p+hdr : p+hdr+n : p+hdr+n]
	next = p + hdr + n
	switch c := zl[p]; {
	case c>>6 != 3:
		return data, 0, false, next
	case c == 0xC0:
		return nil, int64(int16(binary.LittleEndian.Uint16(data))), true, next
	case c == 0xD0:
		return nil, int64(int32(binary.LittleEndian.Uint32(data))), true, next
	case c == 0xE0:
		return nil, int64(binary.LittleEndian.Uint64(data)), true, next
	case c == 0xF0:
		u := int32(uint32(data[0])<<8|uint32(data[1])<<16|uint32(data[2])<<24) >> 8
		return nil, int64(u), true, next
	case c == 0xFE:
		return nil, int64(int8(data[0])), true, next
	default: // 0xF1..0xFD: 4-bit immediate, 1..13 meaning 0..12
		return nil, int64(c&0x0F) - 1, true, next
	}
}

// ---- intset ----

// validateIntset checks b is a well-formed intset (strictly ascending, so
// without duplicates) and returns its width in bytes and its length.
func validateIntset(b []byte) (width, n int, err error) {
	if len(b) < 8 {
		return 0, 0, fmt.Errorf("intset of %d bytes is shorter than its header", len(b))
	}
	w := binary.LittleEndian.Uint32(b)
	if w != 2 && w != 4 && w != 8 {
		return 0, 0, fmt.Errorf("intset has invalid encoding %d", w)
	}
	l := binary.LittleEndian.Uint32(b[4:])
	if uint64(l)*uint64(w)+8 != uint64(len(b)) {
		return 0, 0, fmt.Errorf("intset of %d %d-byte integers does not fit %d bytes", l, w, len(b))
	}
	width, n = int(w), int(l)
	for i := 1; i < n; i++ {
		if intsetGet(b, width, i-1) >= intsetGet(b, width, i) {
			return 0, 0, errors.New("intset is not strictly ascending")
		}
	}
	return width, n, nil
}

// intsetGet returns the i-th integer of a validated intset.
func intsetGet(b []byte, width, i int) int64 {
	p := 8 + i*width
	switch width {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b[p:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b[p:])))
	}
	return int64(binary.LittleEndian.Uint64(b[p:]))
}

// ---- zipmap ----

// zipmapPairs parses a zipmap (the pre-2.6 small-hash encoding) into
// field, value, field, value ...
func zipmapPairs(b []byte) ([][]byte, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("zipmap of %d bytes is too short", len(b))
	}
	want := int(b[0])
	var pairs [][]byte
	p := 1
	readLen := func() (int, error) {
		if p >= len(b) {
			return 0, errors.New("zipmap is truncated")
		}
		c := b[p]
		switch {
		case c < 254:
			p++
			return int(c), nil
		case c == 254:
			if p+5 > len(b) {
				return 0, errors.New("zipmap is truncated")
			}
			l := binary.LittleEndian.Uint32(b[p+1:])
			p += 5
			if uint64(l) > uint64(len(b)) {
				return 0, fmt.Errorf("zipmap length %d runs past the end", l)
			}
			return int(l), nil
		}
		return 0, fmt.Errorf("zipmap has an unexpected end marker at %d", p)
	}
	for {
		if p >= len(b) {
			return nil, errors.New("zipmap does not end with its terminator")
		}
		if b[p] == 0xFF {
			break
		}
		kl, err := readLen()
		if err != nil {
			return nil, err
		}
		if p+kl > len(b) {
			return nil, errors.New("zipmap field runs past the end")
		}
		field := b[p : p+kl : p+kl]
		p += kl
		vl, err := readLen()
		if err != nil {
			return nil, err
		}
		if p >= len(b) {
			return nil, errors.New("zipmap is truncated")
		}
		free := int(b[p])
		p++
		if p+vl+free > len(b) {
			return nil, errors.New("zipmap value runs past the end")
		}
		pairs = append(pairs, field, b[p:p+vl:p+vl])
		p += vl + free
	}
	if p != len(b)-1 {
		return nil, errors.New("zipmap terminator before the end of the blob")
	}
	if want < 254 && want != len(pairs)/2 {
		return nil, fmt.Errorf("zipmap header says %d pairs, found %d", want, len(pairs)/2)
	}
	return pairs, nil
}

// ---- LZF ----
