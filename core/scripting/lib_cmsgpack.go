package scripting

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library Redis ships (lua-cmsgpack 0.4.0), written here. A Go
// MessagePack package (vmihailenco/msgpack/v5 is available) encodes Go
// values, not Lua's: the byte-exact choices scripts and their tests see are
// lua-cmsgpack's own (a Lua number is an integer when it has no fraction,
// in the smallest form; a float32 when that is exact, else a float64; a
// table is an array when its keys are 1..n; nesting past 16 levels packs
// nil), so the encoder would be this file's code whichever package wrote
// the bytes, and the decoder must build Lua tables anyway.

const cmsgpackMaxNesting = 16

func openCMsgpack(ls *lua.LState, g *lua.LTable) {
	t := ls.NewTable()
	t.RawSetString("pack", ls.NewFunction(mpPack))
	t.RawSetString("unpack", ls.NewFunction(func(ls *lua.LState) int { return mpUnpack(ls, 0, 0, false) }))
	t.RawSetString("unpack_one", ls.NewFunction(func(ls *lua.LState) int {
		return mpUnpack(ls, 1, ls.OptInt(2, 0), true)
	}))
	t.RawSetString("unpack_limit", ls.NewFunction(func(ls *lua.LState) int {
		return mpUnpack(ls, ls.CheckInt(2), ls.OptInt(3, 0), true)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	g.RawSetString("cmsgpack", t)
}

func mpPack(ls *lua.LState) int {
	n := ls.GetTop()
	if n == 0 {
		argError(ls, 0, "pack", "MessagePack pack needs input.")
	}
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = mpEncode(buf, ls.Get(i), 0)
	}
	ls.Push(lua.LString(buf))
	return 1
}

func mpEncode(b []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return mpBytes(b, string(x))
	case lua.LBool:
		if x {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if !math.IsInf(f, 0) && f == math.Floor(f) && f >= -9.2e18 && f <= 9.2e18 {
			return mpInt(b, int64(f))
		}
		if float64(float32(f)) == f || math.IsNaN(f) {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f)))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case *lua.LTable:
		if level >= cmsgpackMaxNesting {
			return append(b, 0xc0)
		}
		if n, ok := mpArrayLen(x); ok {
			switch {
			case n <= 15:
				b = append(b, 0x90|byte(n))
			case n <= 0xffff:
				b = binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
			}
			for i := 1; i <= n; i++ {
				b = mpEncode(b, x.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		x.ForEach(func(_, _ lua.LValue) { n++ })
		switch {
		case n <= 15:
			b = append(b, 0x80|byte(n))
		case n <= 0xffff:
			b = binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
		default:
			b = binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
		}
		x.ForEach(func(k, val lua.LValue) {
			b = mpEncode(b, k, level+1)
			b = mpEncode(b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

// mpArrayLen is lua-cmsgpack's table_is_an_array: every key a positive
// integer and the largest equal to the count.
func mpArrayLen(t *lua.LTable) (int, bool) {
	count, max, ok := 0, 0, true
	t.ForEach(func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		if !isNum || float64(n) < 1 || float64(n) != math.Floor(float64(n)) {
			ok = false
			return
		}
		count++
		if int(n) > max {
			max = int(n)
		}
	})
	return max, ok && max == count
}

func mpBytes(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

func mpInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

type mpDecoder struct {
	ls  *lua.LState
	s   string
	pos int
	err string
}

// mpUnpack decodes up to limit values (0: all) from offset; withOffset
// puts the next offset (-1 at the end) before the values, as unpack_one
// and unpack_limit return.
func mpUnpack(ls *lua.LState, limit, offset int, withOffset bool) int {
	s := ls.CheckString(1)
	if offset < 0 || limit < 0 {
		ls.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, limit)
	}
	if offset > len(s) {
		ls.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
	}
	d := &mpDecoder{ls: ls, s: s, pos: offset}
	var vals []lua.LValue
	for d.pos < len(d.s) && (limit == 0 || len(vals) < limit) {
		v := d.value()
		if d.err != "" {
			ls.RaiseError("%s", d.err)
		}
		vals = append(vals, v)
	}
	n := 0
	if withOffset {
		next := d.pos
		if next >= len(d.s) {
			next = -1
		}
		ls.Push(lua.LNumber(next))
		n++
	}
	for _, v := range vals {
		ls.Push(v)
	}
	return n + len(vals)
}

func (d *mpDecoder) take(n int) string {
	if d.err != "" || d.pos+n > len(d.s) || n < 0 {
		d.err = "Missing bytes in input."
		return ""
	}
	s := d.s[d.pos : d.pos+n]
	d.pos += n
	return s
}

func (d *mpDecoder) u8() uint64  { s := d.take(1); return sliceUint(s) }
func (d *mpDecoder) u16() uint64 { return sliceUint(d.take(2)) }
func (d *mpDecoder) u32() uint64 { return sliceUint(d.take(4)) }
func (d *mpDecoder) u64() uint64 { return sliceUint(d.take(8)) }

func sliceUint(s string) uint64 {
	var n uint64
	for i := 0; i < len(s); i++ {
		n = n<<8 | uint64(s[i])
	}
	return n
}

func (d *mpDecoder) value() lua.LValue {
	c := byte(d.u8())
	if d.err != "" {
		return lua.LNil
	}
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		return lua.LString(d.take(int(c & 0x1f)))
	case c&0xf0 == 0x90:
		return d.array(int(c & 0x0f))
	case c&0xf0 == 0x80:
		return d.mapOf(int(c & 0x0f))
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.u32())))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.u64()))
	case 0xcc:
		return lua.LNumber(d.u8())
	case 0xcd:
		return lua.LNumber(d.u16())
	case 0xce:
		return lua.LNumber(d.u32())
	case 0xcf:
		return lua.LNumber(d.u64())
	case 0xd0:
		return lua.LNumber(int8(d.u8()))
	case 0xd1:
		return lua.LNumber(int16(d.u16()))
	case 0xd2:
		return lua.LNumber(int32(d.u32()))
	case 0xd3:
		return lua.LNumber(int64(d.u64()))
	case 0xc4, 0xd9:
		return lua.LString(d.take(int(d.u8())))
	case 0xc5, 0xda:
		return lua.LString(d.take(int(d.u16())))
	case 0xc6, 0xdb:
		return lua.LString(d.take(int(d.u32())))
	case 0xdc:
		return d.array(int(d.u16()))
	case 0xdd:
		return d.array(int(d.u32()))
	case 0xde:
		return d.mapOf(int(d.u16()))
	case 0xdf:
		return d.mapOf(int(d.u32()))
	}
	d.err = "Bad data format in input."
	return lua.LNil
}

func (d *mpDecoder) array(n int) lua.LValue {
	if n > len(d.s)-d.pos { // each element takes a byte at least
		d.err = "Missing bytes in input."
		return lua.LNil
	}
	t := d.ls.CreateTable(n, 0)
	for i := 1; i <= n && d.err == ""; i++ {
		t.RawSetInt(i, d.value())
	}
	return t
}

func (d *mpDecoder) mapOf(n int) lua.LValue {
	if 2*n > len(d.s)-d.pos {
		d.err = "Missing bytes in input."
		return lua.LNil
	}
	t := d.ls.CreateTable(0, n)
	for i := 0; i < n && d.err == ""; i++ {
		k := d.value()
		v := d.value()
		if k != lua.LNil && d.err == "" {
			t.RawSet(k, v)
		}
	}
	return t
}
