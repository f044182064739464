package scripting

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library Redis ships (LuaBitOp 1.0.2), written here: it is a dozen
// one-line functions over 32-bit integers, and no Go package offers Lua's
// number-to-int32 conversion (round to nearest even, then wrap modulo 2^32)
// that makes its results match.

// tobit converts a Lua number as LuaBitOp's barg does: the double is
// rounded to an integer (ties to even, as adding 2^52+2^51 does) and its
// low 32 bits taken.
func tobit(f float64) int32 {
	r := math.RoundToEven(f)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return 0
	}
	if r >= -9.2e18 && r <= 9.2e18 {
		return int32(uint32(int64(r)))
	}
	return int32(uint32(uint64(math.Mod(r, 4294967296))))
}

func openBit(ls *lua.LState, g *lua.LTable) {
	arg := func(ls *lua.LState, i int) int32 { return tobit(float64(ls.CheckNumber(i))) }
	ret := func(ls *lua.LState, v int32) int { ls.Push(lua.LNumber(v)); return 1 }
	fold := func(op func(a, b int32) int32) lua.LGFunction {
		return func(ls *lua.LState) int {
			v := arg(ls, 1)
			for i := 2; i <= ls.GetTop(); i++ {
				v = op(v, arg(ls, i))
			}
			return ret(ls, v)
		}
	}
	shift := func(op func(a int32, n uint) int32) lua.LGFunction {
		return func(ls *lua.LState) int { return ret(ls, op(arg(ls, 1), uint(arg(ls, 2))&31)) }
	}
	t := ls.NewTable()
	for name, f := range map[string]lua.LGFunction{
		"tobit":   func(ls *lua.LState) int { return ret(ls, arg(ls, 1)) },
		"bnot":    func(ls *lua.LState) int { return ret(ls, ^arg(ls, 1)) },
		"band":    fold(func(a, b int32) int32 { return a & b }),
		"bor":     fold(func(a, b int32) int32 { return a | b }),
		"bxor":    fold(func(a, b int32) int32 { return a ^ b }),
		"lshift":  shift(func(a int32, n uint) int32 { return int32(uint32(a) << n) }),
		"rshift":  shift(func(a int32, n uint) int32 { return int32(uint32(a) >> n) }),
		"arshift": shift(func(a int32, n uint) int32 { return a >> n }),
		"rol": shift(func(a int32, n uint) int32 {
			return int32(uint32(a)<<n | uint32(a)>>((32-n)&31))
		}),
		"ror": shift(func(a int32, n uint) int32 {
			return int32(uint32(a)>>n | uint32(a)<<((32-n)&31))
		}),
		"bswap": func(ls *lua.LState) int {
			b := uint32(arg(ls, 1))
			return ret(ls, int32(b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24))
		},
		"tohex": func(ls *lua.LState) int {
			b := uint32(arg(ls, 1))
			n := int32(8)
			if ls.GetTop() >= 2 && ls.Get(2) != lua.LNil {
				n = arg(ls, 2)
			}
			digits := "0123456789abcdef"
			if n < 0 {
				n = -n
				digits = "0123456789ABCDEF"
			}
			if n > 8 {
				n = 8
			}
			buf := make([]byte, n)
			for i := int(n) - 1; i >= 0; i-- {
				buf[i] = digits[b&15]
				b >>= 4
			}
			ls.Push(lua.LString(buf))
			return 1
		},
	} {
		t.RawSetString(name, ls.NewFunction(f))
	}
	g.RawSetString("bit", t)
}
