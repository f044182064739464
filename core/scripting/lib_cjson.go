package scripting

import (
	"math"
	"strconv"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library Redis ships (lua-cjson 2.1.0), written here rather than
// on a Go JSON package: what scripts see is lua-cjson's exact text (numbers
// with "%.14g", '/' escaped, its sparse-array rule, empty tables as {}) and
// its errors, none of which a Go encoder produces, and the decoder builds
// Lua tables directly. Object members come out in gopher-lua's table
// order, which may differ from Redis' for tables with several string keys
// (docs/scripting.md).

const (
	cjsonMaxDepth    = 1000 // encode_max_depth and decode_max_depth
	cjsonSparseRatio = 2
	cjsonSparseSafe  = 10
)

type cjsonLib struct {
	null *lua.LUserData
}

func openCJSON(ls *lua.LState, g *lua.LTable) {
	lib := &cjsonLib{null: ls.NewUserData()}
	t := ls.NewTable()
	t.RawSetString("encode", ls.NewFunction(lib.encode))
	t.RawSetString("decode", ls.NewFunction(lib.decode))
	t.RawSetString("null", lib.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	// The configuration functions return the settings, which svcdb does
	// not let scripts change (Redis' sandbox makes cjson read-only too,
	// and the settings are process-wide there).
	cfg := func(vals ...lua.LValue) lua.LGFunction {
		return func(ls *lua.LState) int {
			if ls.GetTop() > 0 {
				ls.RaiseError("cjson settings cannot be changed from scripts")
			}
			for _, v := range vals {
				ls.Push(v)
			}
			return len(vals)
		}
	}
	t.RawSetString("encode_max_depth", ls.NewFunction(cfg(lua.LNumber(cjsonMaxDepth))))
	t.RawSetString("decode_max_depth", ls.NewFunction(cfg(lua.LNumber(cjsonMaxDepth))))
	t.RawSetString("encode_number_precision", ls.NewFunction(cfg(lua.LNumber(14))))
	t.RawSetString("encode_keep_buffer", ls.NewFunction(cfg(lua.LTrue)))
	t.RawSetString("encode_invalid_numbers", ls.NewFunction(cfg(lua.LFalse)))
	t.RawSetString("decode_invalid_numbers", ls.NewFunction(cfg(lua.LTrue)))
	t.RawSetString("encode_sparse_array", ls.NewFunction(cfg(lua.LFalse, lua.LNumber(cjsonSparseRatio), lua.LNumber(cjsonSparseSafe))))
	g.RawSetString("cjson", t)
}

func (j *cjsonLib) encode(ls *lua.LState) int {
	if ls.GetTop() != 1 {
		ls.ArgError(1, "expected 1 argument")
	}
	buf := j.appendValue(ls, nil, ls.Get(1), 0)
	ls.Push(lua.LString(buf))
	return 1
}

// jsonNumber is lua-cjson's number format, "%.14g".
func jsonNumber(dst []byte, f float64) []byte {
	return strconv.AppendFloat(dst, f, 'g', 14, 64)
}

func (j *cjsonLib) appendValue(ls *lua.LState, dst []byte, v lua.LValue, depth int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return appendJSONString(dst, string(x))
	case lua.LNumber:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			ls.RaiseError("Cannot serialise number: must not be NaN or Inf")
		}
		return jsonNumber(dst, f)
	case lua.LBool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case *lua.LNilType:
		return append(dst, "null"...)
	case *lua.LUserData:
		if x == j.null {
			return append(dst, "null"...)
		}
	case *lua.LTable:
		depth++
		if depth > cjsonMaxDepth {
			ls.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		n := j.arrayLength(ls, x)
		if n > 0 {
			dst = append(dst, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					dst = append(dst, ',')
				}
				dst = j.appendValue(ls, dst, x.RawGetInt(i), depth)
			}
			return append(dst, ']')
		}
		dst = append(dst, '{')
		first := true
		x.ForEach(func(k, val lua.LValue) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			switch kk := k.(type) {
			case lua.LString:
				dst = appendJSONString(dst, string(kk))
			case lua.LNumber:
				dst = append(dst, '"')
				dst = jsonNumber(dst, float64(kk))
				dst = append(dst, '"')
			default:
				ls.RaiseError("Cannot serialise %s: table key must be a number or string", k.Type().String())
			}
			dst = append(dst, ':')
			dst = j.appendValue(ls, dst, val, depth)
		})
		return append(dst, '}')
	}
	ls.RaiseError("Cannot serialise %s: type not supported", v.Type().String())
	return dst
}

// arrayLength is lua-cjson's lua_array_length: the largest key when every
// key is a positive integer (0 for an empty table or any other key), or an
// error for an excessively sparse array.
func (j *cjsonLib) arrayLength(ls *lua.LState, t *lua.LTable) int {
	max, items, isArray := 0, 0, true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || float64(n) != math.Floor(float64(n)) {
			isArray = false
			return
		}
		if int(n) > max {
			max = int(n)
		}
		items++
	})
	if !isArray {
		return 0
	}
	if max > cjsonSparseSafe && max > items*cjsonSparseRatio {
		ls.RaiseError("Cannot serialise table: excessively sparse array")
	}
	return max
}

func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '/':
			dst = append(dst, '\\', '/')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 || c == 0x7f {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// ---- decode ---------------------------------------------------------------

type jsonDecoder struct {
	ls    *lua.LState
	lib   *cjsonLib
	s     string
	pos   int
	depth int
}

func (j *cjsonLib) decode(ls *lua.LState) int {
	if ls.GetTop() != 1 {
		ls.ArgError(1, "expected 1 argument")
	}
	s := ls.CheckString(1)
	d := &jsonDecoder{ls: ls, lib: j, s: s}
	v := d.value()
	d.skipSpace()
	if d.pos < len(d.s) {
		d.fail("the end", d.tokenName())
	}
	ls.Push(v)
	return 1
}

func (d *jsonDecoder) fail(expected, found string) {
	d.ls.RaiseError("Expected %s but found %s at character %d", expected, found, d.pos+1)
}

func (d *jsonDecoder) skipSpace() {
	for d.pos < len(d.s) {
		switch d.s[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) tokenName() string {
	if d.pos >= len(d.s) {
		return "T_END"
	}
	switch d.s[d.pos] {
	case '{':
		return "T_OBJ_BEGIN"
	case '}':
		return "T_OBJ_END"
	case '[':
		return "T_ARR_BEGIN"
	case ']':
		return "T_ARR_END"
	case ',':
		return "T_COMMA"
	case ':':
		return "T_COLON"
	case '"':
		return "T_STRING"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "T_NUMBER"
	}
	switch {
	case hasPrefixAt(d.s, d.pos, "true"), hasPrefixAt(d.s, d.pos, "false"):
		return "T_BOOLEAN"
	case hasPrefixAt(d.s, d.pos, "null"):
		return "T_NULL"
	}
	return "invalid token"
}

func (d *jsonDecoder) value() lua.LValue {
	d.skipSpace()
	if d.pos >= len(d.s) {
		d.fail("value", "T_END")
	}
	switch c := d.s[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return lua.LString(d.str())
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case hasPrefixAt(d.s, d.pos, "true"):
		d.pos += 4
		return lua.LTrue
	case hasPrefixAt(d.s, d.pos, "false"):
		d.pos += 5
		return lua.LFalse
	case hasPrefixAt(d.s, d.pos, "null"):
		d.pos += 4
		return d.lib.null
	}
	d.fail("value", d.tokenName())
	return lua.LNil
}

func hasPrefixAt(s string, i int, p string) bool { return len(s)-i >= len(p) && s[i:i+len(p)] == p }

func (d *jsonDecoder) nest() {
	d.depth++
	if d.depth > cjsonMaxDepth {
		d.ls.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos+1)
	}
}

func (d *jsonDecoder) object() lua.LValue {
	d.nest()
	d.pos++ // {
	t := d.ls.NewTable()
	d.skipSpace()
	if d.pos < len(d.s) && d.s[d.pos] == '}' {
		d.pos++
		d.depth--
		return t
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.s) || d.s[d.pos] != '"' {
			d.fail("object key string", d.tokenName())
		}
		k := d.str()
		d.skipSpace()
		if d.pos >= len(d.s) || d.s[d.pos] != ':' {
			d.fail("colon", d.tokenName())
		}
		d.pos++
		t.RawSetString(k, d.value())
		d.skipSpace()
		if d.pos < len(d.s) && d.s[d.pos] == '}' {
			d.pos++
			d.depth--
			return t
		}
		if d.pos >= len(d.s) || d.s[d.pos] != ',' {
			d.fail("comma or object end", d.tokenName())
		}
		d.pos++
	}
}

func (d *jsonDecoder) array() lua.LValue {
	d.nest()
	d.pos++ // [
	t := d.ls.NewTable()
	d.skipSpace()
	if d.pos < len(d.s) && d.s[d.pos] == ']' {
		d.pos++
		d.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, d.value())
		d.skipSpace()
		if d.pos < len(d.s) && d.s[d.pos] == ']' {
			d.pos++
			d.depth--
			return t
		}
		if d.pos >= len(d.s) || d.s[d.pos] != ',' {
			d.fail("comma or array end", d.tokenName())
		}
		d.pos++
	}
}

func (d *jsonDecoder) number() lua.LValue {
	start := d.pos
	for d.pos < len(d.s) {
		c := d.s[d.pos]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			d.pos++
			continue
		}
		break
	}
	f, err := strconv.ParseFloat(d.s[start:d.pos], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			d.pos = start
			d.fail("value", "invalid number")
		}
	}
	return lua.LNumber(f)
}

func (d *jsonDecoder) str() string {
	d.pos++ // opening quote
	var b []byte
	for {
		if d.pos >= len(d.s) {
			d.fail("value", "invalid token")
		}
		switch c := d.s[d.pos]; c {
		case '"':
			d.pos++
			return string(b)
		case '\\':
			if d.pos+1 >= len(d.s) {
				d.fail("value", "invalid token")
			}
			e := d.s[d.pos+1]
			d.pos += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					d.fail("value", "invalid token")
				}
				if r >= 0xD800 && r < 0xDC00 && hasPrefixAt(d.s, d.pos, "\\u") {
					d.pos += 2
					lo, ok := d.hex4()
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						d.fail("value", "invalid token")
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				b = utf8.AppendRune(b, rune(r))
			default:
				d.fail("value", "invalid token")
			}
		default:
			b = append(b, c)
			d.pos++
		}
	}
}

func (d *jsonDecoder) hex4() (int, bool) {
	if d.pos+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.pos:d.pos+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.pos += 4
	return int(n), true
}
