package commands

import (
	"encoding/binary"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// BITFIELD and BITFIELD_RO, as Redis 7.0's bitfieldGeneric (src/bitops.c):
// every operation is parsed (and every argument error reported) before the
// key is looked at; then the string is grown once to the highest bit any
// SET or INCRBY writes, and the operations run in order.

const (
	bfGet = iota
	bfSet
	bfIncrBy
)

const (
	bfWrap = iota
	bfSat
	bfFail
)

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// bitfieldOp is one GET, SET or INCRBY with the OVERFLOW mode in force.
type bitfieldOp struct {
	offset   int64
	value    int64 // SET's value or INCRBY's increment
	op       int8
	overflow int8
	signed   bool
	bits     uint8
}

func cmdBitField(c *keyspace.Ctx)   { bitfield(c, false) }
func cmdBitFieldRO(c *keyspace.Ctx) { bitfield(c, true) }

// parseBitfieldType parses i1..i64 or u1..u63.
func parseBitfieldType(a []byte) (signed bool, width int64, ok bool) {
	if len(a) == 0 || (a[0] != 'i' && a[0] != 'u') {
		return false, 0, false
	}
	signed = a[0] == 'i'
	width, ok = resp.ParseInt(a[1:])
	if !ok || width < 1 || (signed && width > 64) || (!signed && width > 63) {
		return false, 0, false
	}
	return signed, width, true
}

func bitfield(c *keyspace.Ctx, readonly bool) {
	var buf [8]bitfieldOp
	ops := buf[:0]
	overflow := int8(bfWrap)
	writes := false
	highest := int64(0)
	args := c.Args
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1
		var op int8
		switch sub := args[j]; {
		case resp.EqualFold(sub, "get") && rem >= 2:
			op = bfGet
		case resp.EqualFold(sub, "set") && rem >= 3:
			op = bfSet
		case resp.EqualFold(sub, "incrby") && rem >= 3:
			op = bfIncrBy
		case resp.EqualFold(sub, "overflow") && rem >= 1:
			j++
			switch t := args[j]; {
			case resp.EqualFold(t, "wrap"):
				overflow = bfWrap
			case resp.EqualFold(t, "sat"):
				overflow = bfSat
			case resp.EqualFold(t, "fail"):
				overflow = bfFail
			default:
				c.Err("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.SyntaxErr()
			return
		}
		signed, width, ok := parseBitfieldType(args[j+1])
		if !ok {
			c.Err(errBitfieldType)
			return
		}
		off, ok := parseBitOffset(args[j+2], true, width)
		if !ok {
			c.Err(errBitOffset)
			return
		}
		var v int64
		if op != bfGet {
			writes = true
			highest = max(highest, off+width-1)
			if v, ok = resp.ParseInt(args[j+3]); !ok {
				c.NotInteger()
				return
			}
			j++
		}
		ops = append(ops, bitfieldOp{offset: off, value: v, op: op, overflow: overflow, signed: signed, bits: uint8(width)})
		j += 2
	}

	key := args[1]
	d := c.DBFor(key)
	var o *keyspace.Object
	grown := false
	if !writes {
		var ok bool
		if o, ok = getString(c, d, key); !ok {
			return
		}
	} else {
		if readonly {
			c.Err("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		if o, grown = bitStringForWrite(c, d, key, highest); o == nil {
			return
		}
	}

	c.Array(len(ops))
	changes := 0
	for i := range ops {
		op := &ops[i]
		if op.op == bfGet {
			var p []byte
			if o != nil {
				p = o.Value(&c.Scratch)
			}
			raw := getBitfield(p, op.offset, op.bits)
			if op.signed {
				c.Int(signExtend(raw, op.bits))
			} else {
				c.Int(int64(raw))
			}
			continue
		}
		raw := getBitfield(o.Bytes(), op.offset, op.bits)
		var newval, ret int64
		var over bool
		if op.signed {
			old := signExtend(raw, op.bits)
			if op.op == bfIncrBy {
				wrapped, of := signedOverflow(old, op.value, op.bits, op.overflow)
				newval, over = old+op.value, of != 0
				if over {
					newval = wrapped
				}
				ret = newval
			} else {
				wrapped, of := signedOverflow(op.value, 0, op.bits, op.overflow)
				newval, over = op.value, of != 0
				if over {
					newval = wrapped
				}
				ret = old
			}
		} else {
			if op.op == bfIncrBy {
				wrapped, of := unsignedOverflow(raw, op.value, op.bits, op.overflow)
				newval, over = int64(raw)+op.value, of != 0
				if over {
					newval = int64(wrapped)
				}
				ret = newval
			} else {
				wrapped, of := unsignedOverflow(uint64(op.value), 0, op.bits, op.overflow)
				newval, over = op.value, of != 0
				if over {
					newval = int64(wrapped)
				}
				ret = int64(raw)
			}
		}
		if over && op.overflow == bfFail {
			c.Null()
			continue
		}
		c.Int(ret)
		setBitfield(o.Bytes(), op.offset, op.bits, uint64(newval))
		// As Redis 7.0: a write is a change if the string grew or the
		// field's bits moved; a write refused by OVERFLOW FAIL is none
		// (even when the key was just created for it).
		if grown || getBitfield(o.Bytes(), op.offset, op.bits) != raw {
			changes++
		}
	}
	if changes > 0 {
		d.Edited(o) // signals WATCH and counts one change
		for range changes - 1 {
			d.CountChange() // Redis counts one per changing SET or INCRBY
		}
		c.Notify(keyspace.NotifyString, "setbit", key)
	}
}

// getBitfield reads the width-bit unsigned field at bit off of p (bit 0 the
// most significant of byte 0); bits past the end of p read as zeros.
func getBitfield(p []byte, off int64, width uint8) uint64 {
	var w [9]byte
	if b := off >> 3; b < int64(len(p)) {
		copy(w[:], p[b:])
	}
	s := uint(off & 7)
	v := binary.BigEndian.Uint64(w[:8])<<s | uint64(w[8])>>(8-s)
	return v >> (64 - uint(width))
}

// setBitfield writes the low width bits of v at bit off of p.
// REQUIRES: p holds bit off+width-1.
func setBitfield(p []byte, off int64, width uint8, v uint64) {
	b := off >> 3
	var w [9]byte
	copy(w[:], p[b:])
	s := uint(off & 7)
	top := 64 - uint(width)
	mask, val := ^uint64(0)>>top<<top, v<<top // the field in the top bits
	hi := binary.BigEndian.Uint64(w[:8])
	hi = hi&^(mask>>s) | val>>s
	lo := w[8]&^byte(mask<<(64-s)>>56) | byte(val<<(64-s)>>56) // what spills into the ninth byte
	binary.BigEndian.PutUint64(w[:8], hi)
	w[8] = lo
	copy(p[b:], w[:])
}

// signExtend reads a width-bit field as a two's complement integer.
func signExtend(raw uint64, width uint8) int64 {
	top := 64 - uint(width)
	return int64(raw<<top) >> top
}

// unsignedOverflow is Redis' checkUnsignedBitfieldOverflow: whether value+
// incr leaves a width-bit unsigned field (1 above, -1 below), and the value
// to store instead under WRAP or SAT.
func unsignedOverflow(value uint64, incr int64, width uint8, mode int8) (uint64, int) {
	maxv := uint64(1)<<width - 1
	maxincr := int64(maxv - value)
	minincr := -int64(value)
	dir := 0
	var limit uint64
	switch {
	case value > maxv || (incr > 0 && incr > maxincr):
		dir, limit = 1, maxv
	case incr < 0 && incr < minincr:
		dir, limit = -1, 0
	default:
		return 0, 0
	}
	if mode == bfWrap {
		limit = (value + uint64(incr)) &^ (^uint64(0) << width)
	}
	return limit, dir
}

// signedOverflow is Redis' checkSignedBitfieldOverflow for a width-bit
// signed field, the same way round as unsignedOverflow.
func signedOverflow(value, incr int64, width uint8, mode int8) (int64, int) {
	maxv := int64(1<<63 - 1)
	if width < 64 {
		maxv = int64(1)<<(width-1) - 1
	}
	minv := -maxv - 1
	maxincr := int64(uint64(maxv) - uint64(value)) // may wrap; used only once value is in range
	minincr := minv - value
	dir := 0
	var limit int64
	switch {
	case value > maxv || (width != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr):
		dir, limit = 1, maxv
	case value < minv || (width != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr):
		dir, limit = -1, minv
	default:
		return 0, 0
	}
	if mode == bfWrap {
		c := uint64(value) + uint64(incr)
		if width < 64 {
			m := ^uint64(0) << width
			if c&(uint64(1)<<(width-1)) != 0 {
				c |= m
			} else {
				c &^= m
			}
		}
		limit = int64(c)
	}
	return limit, dir
}
