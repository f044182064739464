package scripting

import (
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// Log levels of redis.log (Redis' LL_*).
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)

// redisAPI builds the redis table (script_lua.c luaRegisterRedisAPI and
// eval.c's additions).
func (v *vm) redisAPI(e *Engine) *lua.LTable {
	ls := v.ls
	t := ls.NewTable()
	fn := func(name string, f lua.LGFunction) { t.RawSetString(name, ls.NewFunction(f)) }
	num := func(name string, n int) { t.RawSetString(name, lua.LNumber(n)) }
	fn("call", func(ls *lua.LState) int { return v.command(ls, true) })
	fn("pcall", func(ls *lua.LState) int { return v.command(ls, false) })
	fn("log", func(ls *lua.LState) int { return e.log(ls) })
	num("LOG_DEBUG", LogDebug)
	num("LOG_VERBOSE", LogVerbose)
	num("LOG_NOTICE", LogNotice)
	num("LOG_WARNING", LogWarning)
	num("REDIS_VERSION_NUM", e.opts.VersionNum)
	t.RawSetString("REDIS_VERSION", lua.LString(e.opts.Version))
	fn("setresp", func(ls *lua.LState) int {
		rs := v.running(ls, "redis.setresp")
		if ls.GetTop() != 1 {
			raise(ls, "redis.setresp() requires one argument.")
		}
		n := int(lua.LVAsNumber(ls.Get(1)))
		if n != 2 && n != 3 {
			raise(ls, "RESP version must be 2 or 3.")
		}
		rs.resp = n
		return 0
	})
	fn("sha1hex", func(ls *lua.LState) int {
		if ls.GetTop() != 1 {
			raise(ls, "wrong number of arguments")
		}
		var s string
		if x := ls.Get(1); x.Type() == lua.LTString || x.Type() == lua.LTNumber {
			s = lua.LVAsString(x)
		}
		ls.Push(lua.LString(SHA1Hex([]byte(s))))
		return 1
	})
	fn("error_reply", func(ls *lua.LState) int {
		s, ok := ls.Get(1).(lua.LString)
		if ls.GetTop() != 1 || !ok {
			ls.Push(errorTable(ls, "wrong number or type of arguments"))
			return 1
		}
		text := string(s)
		if len(text) == 0 || text[0] != '-' {
			text = "-" + text
		}
		ls.Push(errorTable(ls, text))
		return 1
	})
	fn("status_reply", func(ls *lua.LState) int {
		s, ok := ls.Get(1).(lua.LString)
		if ls.GetTop() != 1 || !ok {
			ls.Push(errorTable(ls, "wrong number or type of arguments"))
			return 1
		}
		r := ls.CreateTable(0, 1)
		r.RawSetString("ok", s)
		ls.Push(r)
		return 1
	})
	fn("set_repl", func(ls *lua.LState) int {
		rs := v.running(ls, "redis.set_repl")
		if ls.GetTop() != 1 {
			raise(ls, "redis.set_repl() requires two arguments.")
		}
		flags := int(lua.LVAsNumber(ls.Get(1)))
		if flags&^ReplAll != 0 {
			raise(ls, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
		}
		rs.repl = flags
		return 0
	})
	num("REPL_NONE", ReplNone)
	num("REPL_AOF", ReplAOF)
	num("REPL_SLAVE", ReplReplica)
	num("REPL_REPLICA", ReplReplica)
	num("REPL_ALL", ReplAll)
	fn("replicate_commands", func(ls *lua.LState) int { ls.Push(lua.LTrue); return 1 })
	fn("breakpoint", func(ls *lua.LState) int { ls.Push(lua.LFalse); return 1 }) // no debugger session: false
	fn("debug", func(ls *lua.LState) int { return 0 })                           // a no-op outside the debugger
	fn("acl_check_cmd", func(ls *lua.LState) int {
		rs := v.running(ls, "redis.acl_check_cmd")
		argv, bad := v.argv(ls, rs)
		if bad != "" {
			throw(ls, errorTable(ls, bad))
		}
		allowed, known := rs.caller.CheckACL(argv)
		if !known {
			raise(ls, "Invalid command passed to redis.acl_check_cmd()")
		}
		ls.Push(lua.LBool(allowed))
		return 1
	})
	return t
}

// raise raises msg as Redis' luaPushError + luaError: a table {err="ERR msg"}.
func raise(ls *lua.LState, msg string) {
	throw(ls, errorTable(ls, msg))
}

// running returns the current run, or raises "<what> can only be called
// inside a script invocation".
func (v *vm) running(ls *lua.LState, what string) *runState {
	if v.run == nil {
		raise(ls, what+" can only be called inside a script invocation")
	}
	return v.run
}

// argv converts the call's arguments to a command's argv (Redis'
// luaArgsToRedisArgv): strings as they are, numbers as "%.17g". The
// arguments' bytes are copied into the run's arena, reused from call to
// call. bad is Redis' error for bad arguments.
func (v *vm) argv(ls *lua.LState, rs *runState) (argv [][]byte, bad string) {
	n := ls.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	arena := rs.arena[:0]
	ends := rs.argv[:0] // reused as offsets first: one slice for both
	var offs [16]int
	idx := offs[:0]
	for i := 1; i <= n; i++ {
		switch x := ls.Get(i).(type) {
		case lua.LString:
			arena = append(arena, x...)
		case lua.LNumber:
			arena = appendG17(arena, float64(x))
		default:
			ls.SetTop(0)
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		idx = append(idx, len(arena))
	}
	start := 0
	for _, end := range idx {
		ends = append(ends, arena[start:end:end])
		start = end
	}
	rs.arena, rs.argv = arena, ends
	return ends, ""
}

// appendG17 is C's "%.17g".
func appendG17(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// command is redis.call (raise set) and redis.pcall: Redis'
// luaRedisGenericCommand.
func (v *vm) command(ls *lua.LState, raiseErr bool) int {
	rs := v.running(ls, "redis.call/pcall")
	argv, bad := v.argv(ls, rs)
	if bad != "" {
		t := errorTable(ls, bad)
		if raiseErr {
			throw(ls, t)
		}
		ls.Push(t)
		return 1
	}
	out, refusal := rs.caller.Call(argv, rs.resp == 3, rs.repl, rs.reply[:0])
	rs.reply = out[:0]
	if refusal != "" {
		t := errorTable(ls, refusal)
		if raiseErr {
			throw(ls, t)
		}
		ls.Push(t)
		return 1
	}
	val, _ := replyToLua(ls, out)
	if raiseErr && len(out) > 0 && out[0] == '-' {
		throw(ls, val.(*lua.LTable))
	}
	ls.Push(val)
	return 1
}

// log is redis.log.
func (e *Engine) log(ls *lua.LState) int {
	n := ls.GetTop()
	if n < 2 {
		raise(ls, "redis.log() requires two arguments or more.")
	}
	if _, ok := ls.Get(1).(lua.LNumber); !ok {
		if s, isStr := ls.Get(1).(lua.LString); !isStr || !isNumeric(string(s)) {
			raise(ls, "First argument must be a number (log level).")
		}
	}
	level := int(lua.LVAsNumber(ls.Get(1)))
	if level < LogDebug || level > LogWarning {
		raise(ls, "Invalid debug level.")
	}
	if e.opts.Log == nil || (e.opts.Verbosity != nil && level < e.opts.Verbosity()) {
		return 0
	}
	var b []byte
	for i := 2; i <= n; i++ {
		x := ls.Get(i)
		if x.Type() != lua.LTString && x.Type() != lua.LTNumber {
			continue
		}
		if i != 2 {
			b = append(b, ' ')
		}
		b = append(b, lua.LVAsString(x)...)
	}
	e.opts.Log(level, string(b))
	return 0
}

func isNumeric(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// ---- math.random as Redis' (rand.c: the same sequence on every platform) ----

type rand48 struct{ x uint64 }

const mask48 = 1<<48 - 1

func (r *rand48) seed(s int32) { r.x = (uint64(uint32(s))<<16 | 0x330E) & mask48 }

// next is redisLrand48: a 31-bit value.
func (r *rand48) next() int32 {
	r.x = (r.x*0x5DEECE66D + 0xB) & mask48
	return int32(r.x >> 17)
}

const lrand48Max = math.MaxInt32

func (v *vm) mathRandom(ls *lua.LState) int {
	if v.run == nil {
		ls.RaiseError("math.random can only be called inside a script invocation")
	}
	r := float64(v.rand.next()%lrand48Max) / float64(lrand48Max)
	switch ls.GetTop() {
	case 0:
		ls.Push(lua.LNumber(r))
	case 1:
		u := ls.CheckInt(1)
		if u < 1 {
			ls.ArgError(1, "interval is empty")
		}
		ls.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := ls.CheckInt(1), ls.CheckInt(2)
		if l > u {
			ls.ArgError(2, "interval is empty")
		}
		ls.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		ls.RaiseError("wrong number of arguments")
	}
	return 1
}

func (v *vm) mathRandomSeed(ls *lua.LState) int {
	if v.run == nil {
		ls.RaiseError("math.randomseed can only be called inside a script invocation")
	}
	v.rand.seed(int32(ls.CheckInt(1)))
	return 0
}
