package scripting

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library Redis ships (Roberto Ierusalimschy's struct 0.2),
// written here: Go's encoding/binary does the byte order, and the format
// language (its options, defaults, alignment rule and errors) is struct.c's,
// which no Go package implements.

const structMaxIntSize = 32

type structHeader struct {
	little bool
	align  int
}

type structReader struct {
	ls  *lua.LState
	fn  string // pack, unpack or size: for argument errors
	fmt string
	i   int
}

func (r *structReader) num(df int) int {
	if r.i >= len(r.fmt) || r.fmt[r.i] < '0' || r.fmt[r.i] > '9' {
		return df
	}
	a := 0
	for r.i < len(r.fmt) && r.fmt[r.i] >= '0' && r.fmt[r.i] <= '9' {
		if a > (math.MaxInt32-int(r.fmt[r.i]-'0'))/10 {
			r.ls.RaiseError("integral size overflow")
		}
		a = a*10 + int(r.fmt[r.i]-'0')
		r.i++
	}
	return a
}

// next reads one option: its letter and size. Control options
// (' ', '<', '>', '!') change h and report size 0.
func (r *structReader) next(h *structHeader) (opt byte, size int) {
	opt = r.fmt[r.i]
	r.i++
	switch opt {
	case 'x', 'b', 'B':
		return opt, 1
	case 'h', 'H':
		return opt, 2
	case 'l', 'L', 'T', 'd':
		return opt, 8
	case 'f':
		return opt, 4
	case 'c':
		return opt, r.num(1)
	case 'i', 'I':
		sz := r.num(4)
		if sz > structMaxIntSize {
			r.ls.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return opt, sz
	case 's':
		return opt, 0
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := r.num(8)
		if a&(a-1) != 0 {
			r.ls.RaiseError("alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(r.ls, 1, r.fn, "invalid format option '"+string(opt)+"'")
	}
	return 0, 0
}

func (h *structHeader) toAlign(n int, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

func openStruct(ls *lua.LState, g *lua.LTable) {
	t := ls.NewTable()
	t.RawSetString("pack", ls.NewFunction(structPack))
	t.RawSetString("unpack", ls.NewFunction(structUnpack))
	t.RawSetString("size", ls.NewFunction(structSize))
	g.RawSetString("struct", t)
}

func putInt(b []byte, v uint64, little bool, size int) []byte {
	buf := make([]byte, size)
	for i := 0; i < size && i < 8; i++ {
		buf[i] = byte(v >> (8 * i))
	}
	if !little {
		for i, j := 0, size-1; i < j; i, j = i+1, j-1 {
			buf[i], buf[j] = buf[j], buf[i]
		}
	}
	return append(b, buf...)
}

func structPack(ls *lua.LState) int {
	r := &structReader{ls: ls, fn: "pack", fmt: ls.CheckString(1)}
	h := structHeader{little: true, align: 1}
	arg := 2
	var b []byte
	for r.i < len(r.fmt) {
		opt, size := r.next(&h)
		if opt == 0 {
			continue
		}
		for range h.toAlign(len(b), opt, size) {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := float64(ls.CheckNumber(arg))
			arg++
			var v uint64
			if n < 0 {
				v = uint64(int64(n))
			} else {
				v = uint64(n)
			}
			b = putInt(b, v, h.little, size)
		case 'x':
			b = append(b, 0)
		case 'f':
			v := math.Float32bits(float32(ls.CheckNumber(arg)))
			arg++
			b = putInt(b, uint64(v), h.little, 4)
		case 'd':
			v := math.Float64bits(float64(ls.CheckNumber(arg)))
			arg++
			b = putInt(b, v, h.little, 8)
		case 'c', 's':
			s := ls.CheckString(arg)
			l := len(s)
			if size == 0 {
				size = l
			}
			if l < size {
				argError(ls, arg, "pack", "string too short")
			}
			arg++
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		}
	}
	ls.Push(lua.LString(b))
	return 1
}

func getInt(s string, little, signed bool, size int) float64 {
	var v uint64
	if little {
		for i := size - 1; i >= 0; i-- {
			v = v<<8 | uint64(s[i])
		}
	} else {
		for i := 0; i < size; i++ {
			v = v<<8 | uint64(s[i])
		}
	}
	if signed {
		if size < 8 {
			mask := ^uint64(0) << (uint(size)*8 - 1)
			if v&mask != 0 {
				v |= mask
			}
		}
		return float64(int64(v))
	}
	return float64(v)
}

func structUnpack(ls *lua.LState) int {
	r := &structReader{ls: ls, fn: "unpack", fmt: ls.CheckString(1)}
	data := ls.CheckString(2)
	pos := ls.OptInt(3, 1) - 1
	if pos < 0 || pos > len(data) {
		argError(ls, 3, "unpack", "offset must be 1 or greater")
	}
	h := structHeader{little: true, align: 1}
	base := ls.GetTop()
	for r.i < len(r.fmt) {
		opt, size := r.next(&h)
		if opt == 0 {
			continue
		}
		pos += h.toAlign(pos, opt, size)
		if pos+size > len(data) {
			argError(ls, 2, "unpack", "data string too short")
		}
		switch opt {
		case 'b', 'h', 'l', 'i':
			ls.Push(lua.LNumber(getInt(data[pos:], h.little, true, size)))
		case 'B', 'H', 'L', 'T', 'I':
			ls.Push(lua.LNumber(getInt(data[pos:], h.little, false, size)))
		case 'x':
		case 'f':
			ls.Push(lua.LNumber(math.Float32frombits(uint32(getInt(data[pos:], h.little, false, 4)))))
		case 'd':
			var u uint64
			if h.little {
				u = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				u = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			ls.Push(lua.LNumber(math.Float64frombits(u)))
		case 'c':
			if size == 0 {
				if ls.GetTop() == base {
					ls.RaiseError("format 'c0' needs a previous size")
				}
				n, ok := ls.Get(-1).(lua.LNumber)
				if !ok {
					ls.RaiseError("format 'c0' needs a previous size")
				}
				ls.Pop(1)
				size = int(n)
				if pos+size > len(data) {
					argError(ls, 2, "unpack", "data string too short")
				}
			}
			ls.Push(lua.LString(data[pos : pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				ls.RaiseError("unfinished string in data")
			}
			ls.Push(lua.LString(data[pos : pos+e]))
			size = e + 1
		}
		pos += size
	}
	ls.Push(lua.LNumber(pos + 1))
	return ls.GetTop() - base
}

func structSize(ls *lua.LState) int {
	r := &structReader{ls: ls, fn: "size", fmt: ls.CheckString(1)}
	h := structHeader{little: true, align: 1}
	pos := 0
	for r.i < len(r.fmt) {
		opt, size := r.next(&h)
		if opt == 0 {
			continue
		}
		if opt == 's' || (opt == 'c' && size == 0) {
			argError(ls, 1, "size", "options 'c0' - 's' have undefined sizes")
		}
		pos += h.toAlign(pos, opt, size) + size
	}
	ls.Push(lua.LNumber(pos))
	return 1
}

// argError is luaL_argerror's text, "bad argument #n to 'fn' (msg)"
// (gopher-lua's ArgError leaves out the quotes).
func argError(ls *lua.LState, n int, fn, msg string) {
	ls.RaiseError("bad argument #%d to '%s' (%s)", n, fn, msg)
}
