// Package lzf owns LZF compression as Redis uses it (liblzf's stream format,
// src/lzf_c.c and src/lzf_d.c): strings in RDB files and DUMP payloads
// (package rdb) and compressed quicklist nodes (package values,
// list-compress-depth). It is a leaf: it imports nothing of ours.
//
// Decompress must never panic or write past its output on corrupt input;
// Compressor keeps its hash table between calls so that compressing
// allocates nothing in steady state.
package lzf

import (
	"errors"
	"fmt"
)

const (
	lzfHashLog = 14
	lzfMaxLit  = 1 << 5          // literal run length limit
	lzfMaxOff  = 1 << 13         // back-reference distance limit
	lzfMaxRef  = (1 << 8) + 1<<3 // longest back reference (264 bytes)
)

// Compressor compresses with a hash table it keeps between calls. Not safe
// for concurrent use.
type Compressor struct {
	// table holds, per hash of 3 bytes, base+position+1 of their last
	// occurrence; entries at or below base are from earlier calls and
	// ignored, so the table is never cleared between strings.
	table [1 << lzfHashLog]int32
	base  int
	out   []byte
}

// Compress returns the LZF stream of in, or nil when it would be longer
// than limit bytes. The result is valid until the next call.
func (c *Compressor) Compress(in []byte, limit int) []byte {
	n := c.compress(in, limit)
	if n == 0 {
		return nil
	}
	return c.out[:n]
}

func lzfHash(a, b, c byte) uint32 {
	v := uint32(a)<<16 | uint32(b)<<8 | uint32(c)
	return (v * 2654435761) >> (32 - lzfHashLog)
}

// compress writes the LZF stream of in to c.out and returns its length, or
// 0 when it would exceed limit bytes.
func (c *Compressor) compress(in []byte, limit int) int {
	if cap(c.out) < limit+lzfMaxLit+4 {
		c.out = make([]byte, limit+lzfMaxLit+4)
	}
	out := c.out[:cap(c.out)]
	if c.base > 1<<30 { // keep base+position within int32
		clear(c.table[:])
		c.base = 0
	}
	base := c.base
	c.base += len(in) + 1
	op := 1 // out[0] is the first literal run's control byte
	lit := 0
	ip := 0
	n := len(in)
	for ip < n {
		if l, off := c.match(in, ip, base); l > 0 {
			// Close the literal run (or drop its empty control byte).
			if lit > 0 {
				out[op-lit-1] = byte(lit - 1)
			} else {
				op--
			}
			if op+3+1 > limit {
				return 0
			}
			enc := l - 2
			if enc < 7 {
				out[op] = byte(enc<<5 | off>>8)
				op++
			} else {
				out[op] = byte(7<<5 | off>>8)
				out[op+1] = byte(enc - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			// Index the positions inside the match, as liblzf does at its
			// end, so later repeats find them.
			for k := ip + 1; k < ip+l && k+2 < n; k++ {
				c.table[lzfHash(in[k], in[k+1], in[k+2])] = int32(base + k + 1)
			}
			ip += l
			lit = 0
			op++ // the next literal run's control byte
			if op >= limit {
				return 0
			}
			continue
		}
		if op+1 >= limit {
			return 0
		}
		out[op] = in[ip]
		op++
		ip++
		if lit++; lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if lit > 0 {
		out[op-lit-1] = byte(lit - 1)
	} else {
		op-- // no trailing literal: drop the unused control byte
	}
	if op > limit || op <= 0 {
		return 0
	}
	return op
}

// match indexes the 3 bytes at ip and returns the longest back reference
// there (its length, at least 3, and its distance - 1), or 0 when there is
// none or too few bytes are left.
func (c *Compressor) match(in []byte, ip, base int) (l, off int) {
	n := len(in)
	if ip+2 >= n {
		return 0, 0
	}
	h := lzfHash(in[ip], in[ip+1], in[ip+2])
	ref := int(c.table[h]) - base - 1
	c.table[h] = int32(base + ip + 1)
	if ref < 0 || ip-ref-1 >= lzfMaxOff ||
		in[ref] != in[ip] || in[ref+1] != in[ip+1] || in[ref+2] != in[ip+2] {
		return 0, 0
	}
	maxLen := min(n-ip, lzfMaxRef)
	l = 3
	for l < maxLen && in[ref+l] == in[ip+l] {
		l++
	}
	return l, ip - ref - 1
}

// MaxRatio bounds how much LZF can expand: the longest back-reference
// (3 bytes) produces 264 bytes, so no valid stream expands more than 88x.
const MaxRatio = 88

// Decompress decompresses in into out, which must be exactly the
// uncompressed size, as liblzf's lzf_decompress with Redis' check that the
// result has the announced length.
func Decompress(in, out []byte) error {
	ip, op := 0, 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 { // literal run of ctrl+1 bytes
			ctrl++
			if op+ctrl > len(out) {
				return errors.New("LZF output longer than announced")
			}
			if ip+ctrl > len(in) {
				return errors.New("LZF literal runs past the input")
			}
			copy(out[op:], in[ip:ip+ctrl])
			op += ctrl
			ip += ctrl
			continue
		}
		l := ctrl >> 5
		ref := op - (ctrl&0x1f)<<8 - 1
		if ip >= len(in) {
			return errors.New("LZF back-reference runs past the input")
		}
		if l == 7 {
			l += int(in[ip])
			ip++
			if ip >= len(in) {
				return errors.New("LZF back-reference runs past the input")
			}
		}
		ref -= int(in[ip])
		ip++
		l += 2
		if op+l > len(out) {
			return errors.New("LZF output longer than announced")
		}
		if ref < 0 {
			return errors.New("LZF back-reference before the start of the output")
		}
		for i := range l { // may overlap: byte by byte
			out[op+i] = out[ref+i]
		}
		op += l
	}
	if op != len(out) {
		return fmt.Errorf("LZF output is %d bytes, announced %d", op, len(out))
	}
	return nil
}
