package scripting

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/svcdb/svcdb/core/resp"
)

// maxReplyDepth is how deeply nested a table a script may return: Redis
// replies "-ERR reached lua stack limit" in place of the table nested this
// deep (its Lua stack, LUAI_MAXCSTACK 8000 slots, runs out there; measured
// on a fresh redis-server 7.0.15 with a table that contains itself: 7995
// arrays, then the error; netloop's TestScriptBadInput compares the two).
const maxReplyDepth = 7995

// appendErrorLine appends msg as an error reply exactly as Redis'
// addReplyErrorLength does for a script: "-ERR " is added when msg does not
// start with '-'... the callers here always give a message whose first word
// is its code, so "-" + msg, with CR/LF made spaces.
func appendErrorLine(dst []byte, msg string) []byte {
	return resp.AppendError(dst, msg)
}

// appendLuaReply converts a script's return value to a reply, as Redis 7.0's
// luaReplyToRedisReply: strings are bulk strings; numbers integers
// (truncated); booleans :1 and null under RESP2 scripts (redis.setresp(2),
// the default), RESP3 booleans (or :1/:0 to a RESP2 client) under RESP3
// scripts; tables with an err field errors, with ok status replies, with
// double, big_number, map or set their RESP3 types (as RESP2 types to a
// RESP2 client), and other tables arrays up to their first nil; anything
// else a null.
func appendLuaReply(dst []byte, ls *lua.LState, v lua.LValue, resp3, scriptResp3 bool, depth int) []byte {
	if depth >= maxReplyDepth {
		return append(dst, "-ERR reached lua stack limit\r\n"...)
	}
	switch x := v.(type) {
	case lua.LString:
		return resp.AppendBulkString(dst, string(x))
	case lua.LBool:
		if !scriptResp3 {
			if x {
				return append(dst, ":1\r\n"...)
			}
			return resp.AppendNull(dst, resp3)
		}
		return appendBool(dst, bool(x), resp3)
	case lua.LNumber:
		return resp.AppendInt(dst, luaToInt64(float64(x)))
	case *lua.LTable:
		if e, ok := x.RawGetString("err").(lua.LString); ok {
			// "-%s" of the message, with newlines made spaces
			dst = append(dst, '-')
			dst = appendNoNewlines(dst, strings.TrimRight(string(e), "\r\n"))
			return append(dst, '\r', '\n')
		}
		if ok, isStr := x.RawGetString("ok").(lua.LString); isStr {
			dst = append(dst, '+')
			dst = appendNoNewlines(dst, string(ok))
			return append(dst, '\r', '\n')
		}
		if d, ok := x.RawGetString("double").(lua.LNumber); ok {
			return resp.AppendDouble(dst, float64(d), resp3)
		}
		if b, ok := x.RawGetString("big_number").(lua.LString); ok {
			if !resp3 {
				return resp.AppendBulkString(dst, strings.Map(noNewline, string(b)))
			}
			dst = append(dst, '(')
			dst = appendNoNewlines(dst, string(b))
			return append(dst, '\r', '\n')
		}
		if m, ok := x.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(_, _ lua.LValue) { n++ })
			dst = resp.AppendMapHeader(dst, n, resp3)
			m.ForEach(func(k, val lua.LValue) {
				dst = appendLuaReply(dst, ls, k, resp3, scriptResp3, depth+1)
				dst = appendLuaReply(dst, ls, val, resp3, scriptResp3, depth+1)
			})
			return dst
		}
		if s, ok := x.RawGetString("set").(*lua.LTable); ok {
			n := 0
			s.ForEach(func(_, _ lua.LValue) { n++ })
			dst = resp.AppendSetHeader(dst, n, resp3)
			s.ForEach(func(k, _ lua.LValue) {
				dst = appendLuaReply(dst, ls, k, resp3, scriptResp3, depth+1)
			})
			return dst
		}
		n := 0
		for x.RawGetInt(n+1) != lua.LNil {
			n++
		}
		dst = resp.AppendArrayHeader(dst, n)
		for i := 1; i <= n; i++ {
			dst = appendLuaReply(dst, ls, x.RawGetInt(i), resp3, scriptResp3, depth+1)
		}
		return dst
	}
	return resp.AppendNull(dst, resp3)
}

func appendBool(dst []byte, b, resp3 bool) []byte {
	switch {
	case resp3 && b:
		return append(dst, "#t\r\n"...)
	case resp3:
		return append(dst, "#f\r\n"...)
	case b:
		return append(dst, ":1\r\n"...)
	}
	return append(dst, ":0\r\n"...)
}

func noNewline(r rune) rune {
	if r == '\r' || r == '\n' {
		return ' '
	}
	return r
}

func appendNoNewlines(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// luaToInt64 is C's (long long) cast of a double, as Redis converts Lua
// numbers; out-of-range values give what x86-64's cvttsd2si gives.
func luaToInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return math.MinInt64
	}
	return int64(f)
}

// errorTable is Redis' luaPushErrorBuff: "-CODE msg" keeps its code, a
// message without '-' gets "ERR"; trailing CR/LF go.
func errorTable(ls *lua.LState, text string) *lua.LTable {
	var code, msg string
	if strings.HasPrefix(text, "-") {
		if i := strings.IndexByte(text, ' '); i >= 0 {
			code, msg = text[1:i], text[i+1:]
		} else {
			code, msg = "ERR", text[1:]
		}
	} else {
		code, msg = "ERR", text
	}
	msg = strings.Trim(msg, "\r\n")
	t := ls.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}

// replyToLua converts one reply from buf (as a command wrote it) to a Lua
// value, as Redis 7.0's redisProtocolToLuaType: integers numbers, bulk
// strings strings, null bulks and null arrays false, status replies
// {ok=...}, errors {err=...}, arrays tables; RESP3: maps {map={...}}, sets
// {set={k=true...}}, nulls nil, booleans booleans, doubles {double=n}, big
// numbers {big_number=s}, verbatim strings {verbatim_string={format=...,
// string=...}}; attributes are skipped.
func replyToLua(ls *lua.LState, buf []byte) (v lua.LValue, next int) {
	if len(buf) == 0 {
		return lua.LNil, 0
	}
	typ := buf[0]
	end := 1
	for end < len(buf) && buf[end] != '\r' {
		end++
	}
	line := buf[1:end]
	next = end + 2
	if next > len(buf) {
		next = len(buf)
	}
	num := func() int64 { n, _ := strconv.ParseInt(string(line), 10, 64); return n }
	switch typ {
	case '+':
		t := ls.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(line))
		return t, next
	case '-':
		return errorTable(ls, "-"+string(line)), next
	case ':':
		return lua.LNumber(num()), next
	case '$', '!', '=':
		n := num()
		if n < 0 {
			return lua.LFalse, next
		}
		body := buf[next : next+int(n)]
		next += int(n) + 2
		switch typ {
		case '!':
			return errorTable(ls, "-"+string(body)), next
		case '=':
			t, inner := ls.CreateTable(0, 1), ls.CreateTable(0, 2)
			format, text := "txt", body
			if len(body) >= 4 && body[3] == ':' {
				format, text = string(body[:3]), body[4:]
			}
			inner.RawSetString("string", lua.LString(text))
			inner.RawSetString("format", lua.LString(format))
			t.RawSetString("verbatim_string", inner)
			return t, next
		}
		return lua.LString(body), next
	case '*', '>':
		n := num()
		if n < 0 {
			return lua.LFalse, next
		}
		t := ls.CreateTable(int(n), 0)
		for i := 1; i <= int(n); i++ {
			var e lua.LValue
			var used int
			e, used = replyToLua(ls, buf[next:])
			next += used
			t.RawSetInt(i, e)
		}
		return t, next
	case '%', '~':
		n := int(num())
		t, inner := ls.CreateTable(0, 1), ls.CreateTable(0, n)
		for range n {
			k, used := replyToLua(ls, buf[next:])
			next += used
			var val lua.LValue = lua.LTrue
			if typ == '%' {
				val, used = replyToLua(ls, buf[next:])
				next += used
			}
			if k != lua.LNil {
				inner.RawSet(k, val)
			}
		}
		if typ == '%' {
			t.RawSetString("map", inner)
		} else {
			t.RawSetString("set", inner)
		}
		return t, next
	case '_':
		return lua.LNil, next
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), next
	case ',':
		f, err := strconv.ParseFloat(string(line), 64)
		if err != nil {
			switch string(line) {
			case "inf":
				f = math.Inf(1)
			case "-inf":
				f = math.Inf(-1)
			default:
				f = math.NaN()
			}
		}
		t := ls.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t, next
	case '(':
		t := ls.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, next
	case '|':
		n := int(num())
		for range 2 * n {
			_, used := replyToLua(ls, buf[next:])
			next += used
		}
		v, used := replyToLua(ls, buf[next:])
		return v, next + used
	}
	return lua.LNil, len(buf)
}
