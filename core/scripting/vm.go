package scripting

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// vm is the Lua state and what a running script needs from it.
//
// The sandbox, as Redis 7.0's (script_lua.c): the globals are the Lua 5.1
// base functions Redis allows (no dofile, loadfile, print, require, module),
// the libraries string, table, math, coroutine, cjson, cmsgpack, bit and
// struct, and redis. Reading a global that does not exist raises "Script
// attempted to access nonexistent global variable 'x'"; assigning a global
// or a field of a library raises "Attempt to modify a readonly table".
// Redis makes the tables read-only in its patched Lua; gopher-lua has no
// such flag, so the script sees read-only proxies: empty tables whose
// __index is the real table and whose __newindex raises. rawset and
// setmetatable refuse the proxies. KEYS and ARGV are fresh tables each run,
// set on the real globals, as Redis does.
type vm struct {
	mu      sync.Mutex
	ls      *lua.LState
	globals *lua.LTable // the real globals, behind the proxy the scripts see
	proxies map[*lua.LTable]bool
	// errLine is the line of an error() raised with a message and level 0
	// (no position in the message); -1 when none. See Run.
	errLine int
	fns     map[string]*lua.LFunction // each script's function, by SHA

	// the current run (set by Run, cleared after); runs reuses its
	// buffers from run to run
	run  *runState
	runs runState
	kill killSwitch // SCRIPT KILL (kill.go)
	mem  vmMemory   // the last measured sizes (memory.go)
	// math.random's generator. As in Redis 7.0 it is not reseeded per
	// script: the sequence starts from rand48's default state when the
	// server starts and goes on from script to script (math.randomseed
	// sets it), the same on every platform.
	rand rand48

	// functions (functions.go): the real redis table, the load-time
	// globals, the libraries' environment and its metatable, and the
	// library being loaded (nil outside FUNCTION LOAD)
	redisTable *lua.LTable
	loadAPI    *lua.LTable
	fenv       *lua.LTable
	fenvMeta   *lua.LTable
	loading    *loadState
}

type runState struct {
	caller Caller
	resp   int // 2 or 3: redis.setresp
	repl   int // redis.set_repl
	argv   [][]byte
	arena  []byte
	reply  []byte
}

const (
	// callStackSize bounds Lua call depth. Lua 5.1 allows 20000 (LUAI_MAXCALLS);
	// gopher-lua builds a traceback of the whole stack on an error, in time
	// quadratic in the depth (2.4 s at 20000, every shard held meanwhile), so
	// the bound is lower: deeper recursion is "stack overflow" sooner.
	callStackSize   = 4000
	registryInitial = 1024    // value stack slots at start
	registryMax     = 1 << 18 // value stack slots, grown on demand
	registryGrow    = 1 << 14
)

func (v *vm) init(e *Engine) {
	ls := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    callStackSize,
		RegistrySize:     registryInitial,
		RegistryMaxSize:  registryMax,
		RegistryGrowStep: registryGrow,
	})
	v.ls = ls
	v.kill.init()
	ls.SetContext(&v.kill)
	v.rand.x = 0x1234ABCD330E // rand48's initial state (X2 X1 X0)
	v.fns = make(map[string]*lua.LFunction)
	v.proxies = make(map[*lua.LTable]bool)
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		ls.Push(ls.NewFunction(lib.open))
		ls.Push(lua.LString(lib.name))
		ls.Call(1, 0)
	}
	g := ls.G.Global
	v.globals = g
	// What Redis' allow lists keep of the base library.
	keep := map[string]bool{}
	for _, n := range []string{"xpcall", "tostring", "getfenv", "setmetatable", "next", "assert", "tonumber",
		"rawequal", "collectgarbage", "getmetatable", "rawset", "pcall", "coroutine", "type", "_G", "select",
		"unpack", "gcinfo", "pairs", "rawget", "loadstring", "ipairs", "_VERSION", "setfenv", "load", "error",
		"newproxy", "string", "math", "table"} {
		keep[n] = true
	}
	var drop []lua.LValue
	g.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); !ok || !keep[string(s)] {
			drop = append(drop, k)
		}
	})
	for _, k := range drop {
		g.RawSet(k, lua.LNil)
	}
	// loaded by gopher-lua's string library for require; not a global in Redis
	ls.SetField(ls.Get(lua.RegistryIndex), "_LOADED", lua.LNil)
	g.RawSetString("gcinfo", ls.NewFunction(func(ls *lua.LState) int { ls.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("pcall", ls.NewFunction(v.pcall))
	g.RawSetString("rawset", ls.NewFunction(v.rawset))
	setmeta := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", ls.NewFunction(func(ls *lua.LState) int {
		if t, ok := ls.Get(1).(*lua.LTable); ok && v.proxies[t] {
			v.errLine = currentLine(ls)
			ls.Error(lua.LString(readonlyErr), 0) // raised by the VM in Redis: no position
		}
		ls.Push(setmeta)
		ls.Push(ls.Get(1))
		ls.Push(ls.Get(2))
		ls.Call(2, 1)
		return 1
	}))
	tostring := g.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", ls.NewFunction(func(ls *lua.LState) int {
		// Lua 5.1 prints numbers with "%.14g" (gopher-lua: the shortest
		// exact form); metamethods and other types as before.
		if n, ok := ls.Get(1).(lua.LNumber); ok {
			ls.Push(lua.LString(formatNumber(float64(n))))
			return 1
		}
		ls.Push(tostring)
		ls.Push(ls.Get(1))
		ls.Call(1, 1)
		return 1
	}))
	math := g.RawGetString("math").(*lua.LTable)
	math.RawSetString("random", ls.NewFunction(v.mathRandom))
	math.RawSetString("randomseed", ls.NewFunction(v.mathRandomSeed))

	v.redisTable = v.redisAPI(e)
	g.RawSetString("redis", v.redisTable)
	openBit(ls, g)
	openCJSON(ls, g)
	openStruct(ls, g)
	openCMsgpack(ls, g)

	g.RawSetString("error", ls.NewFunction(func(ls *lua.LState) int {
		// Lua's error. Redis' error handler adds the source and line of
		// the innermost Lua function to a table error; messages carry
		// them already (gopher-lua prefixes "user_script:N:" as Lua
		// does), except at level 0.
		obj, level := ls.Get(1), ls.OptInt(2, 1)
		switch x := obj.(type) {
		case *lua.LTable:
			markPosition(ls, x)
		case lua.LNumber:
			obj = lua.LString(formatNumber(float64(x)))
		}
		if level == 0 {
			v.errLine = currentLine(ls)
		}
		ls.Error(obj, level)
		return 0
	}))

	// Read-only from here on: every library table and the globals are
	// seen through proxies; _G is the globals' proxy.
	libs := []string{"string", "math", "table", "coroutine", "redis", "bit", "cjson", "struct", "cmsgpack"}
	for _, name := range libs {
		if t, ok := g.RawGetString(name).(*lua.LTable); ok {
			g.RawSetString(name, v.readonly(t, false))
		}
	}
	gp := v.readonly(g, true)
	g.RawSetString("_G", gp)
	ls.SetGlobal("_G", gp)
	ls.Env = gp
	ls.G.Global = gp
	v.initFunctions(e)
}

var readonlyErr = "Attempt to modify a readonly table"

// readonly returns a proxy of t that refuses writes; strict proxies (the
// globals) also refuse reading a missing name.
func (v *vm) readonly(t *lua.LTable, strict bool) *lua.LTable {
	ls := v.ls
	p := ls.NewTable()
	meta := ls.NewTable()
	meta.RawSetString("__index", t)
	meta.RawSetString("__newindex", ls.NewFunction(func(ls *lua.LState) int {
		ls.RaiseError("%s", readonlyErr)
		return 0
	}))
	meta.RawSetString("__metatable", lua.LFalse)
	ls.SetMetatable(p, meta)
	if strict {
		tm := ls.NewTable()
		tm.RawSetString("__index", ls.NewFunction(func(ls *lua.LState) int {
			name := ls.Get(2)
			if name.Type() != lua.LTString && name.Type() != lua.LTNumber {
				ls.RaiseError("Second argument to luaProtectedTableError must be a string or number")
			}
			ls.RaiseError("Script attempted to access nonexistent global variable '%s'", name.String())
			return 0
		}))
		ls.SetMetatable(t, tm)
	}
	v.proxies[p] = true
	return p
}

// rawset refuses the read-only proxies, as Redis' read-only tables do.
func (v *vm) rawset(ls *lua.LState) int {
	t := ls.CheckTable(1)
	if v.proxies[t] {
		v.errLine = currentLine(ls)
		ls.Error(lua.LString(readonlyErr), 0) // raised by the VM in Redis: no position
	}
	k := ls.CheckAny(2)
	ls.RawSet(t, k, ls.CheckAny(3))
	ls.Push(t)
	return 1
}

// pcall is Redis' luaRedisPcall: Lua's pcall, except that an error raised
// as a table with an err field (redis.call's errors) is returned as that
// string, as Lua scripts written for Redis 6 expect.
func (v *vm) pcall(ls *lua.LState) int {
	n := ls.GetTop()
	if n == 0 {
		ls.ArgError(1, "value expected")
	}
	top := ls.GetTop()
	err := ls.PCall(n-1, lua.MultRet, nil)
	if err != nil {
		obj := lua.LValue(lua.LString(err.Error()))
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		ls.Push(lua.LFalse)
		ls.Push(obj)
		return 2
	}
	ls.Insert(lua.LTrue, top-n+1)
	return ls.GetTop() - (top - n)
}

// currentLine is the current line of the innermost Lua function (Redis'
// error handler asks debug.getinfo for it), or -1.
func currentLine(ls *lua.LState) int {
	line, _ := currentPosition(ls)
	return line
}

// currentPosition is the current line and the chunk name ("user_script"
// for EVAL, "user_function" for a library) of the innermost Lua function;
// line is -1 when there is none.
func currentPosition(ls *lua.LState) (line int, source string) {
	for lvl := 0; ; lvl++ {
		d, ok := ls.GetStack(lvl)
		if !ok {
			return -1, ""
		}
		if _, err := ls.GetInfo("Sl", d, nil); err != nil || d.What == "G" {
			continue
		}
		return d.CurrentLine, d.Source
	}
}

// markPosition adds source and line to an error table about to be raised,
// as Redis' __redis__err__handler does.
func markPosition(ls *lua.LState, t *lua.LTable) {
	if line, src := currentPosition(ls); line >= 0 {
		if src == "" {
			src = scriptChunk
		}
		t.RawSetString("source", lua.LString("@"+src))
		t.RawSetString("line", lua.LNumber(line))
	}
}

// The chunk names of EVAL's scripts and of libraries (Redis' "@user_script"
// and "@user_function" sources).
const (
	scriptChunk   = "user_script"
	functionChunk = "user_function"
)

// throw raises t, an error table, from a Go function called by the script.
func throw(ls *lua.LState, t *lua.LTable) {
	markPosition(ls, t)
	ls.Error(t, 1)
}

// positionOf finds "<chunk>:N:" at the start of a runtime error message
// and returns N, or -1.
func positionOf(msg, chunk string) int {
	p := chunk + ":"
	if !strings.HasPrefix(msg, p) {
		return -1
	}
	n, i := 0, len(p)
	for i < len(msg) && msg[i] >= '0' && msg[i] <= '9' {
		n = n*10 + int(msg[i]-'0')
		i++
	}
	if i == len(p) || i >= len(msg) || msg[i] != ':' {
		return -1
	}
	return n
}

// luaToString is Lua's tostring for an error value.
func luaToString(ls *lua.LState, v lua.LValue) lua.LValue {
	if s, ok := v.(lua.LString); ok {
		return s
	}
	return lua.LString(ls.ToStringMeta(v).String())
}

// Run runs s with keys and args (KEYS and ARGV) and appends its reply to
// dst, in RESP3 when resp3 is set (the caller's protocol). Every command the
// script calls goes through caller. Run holds the VM for the script's
// duration.
func (e *Engine) Run(s *Script, keys, args [][]byte, caller Caller, resp3 bool, dst []byte) []byte {
	v := &e.vm
	v.mu.Lock()
	defer v.mu.Unlock()
	ls := v.ls
	fn := v.fns[s.SHA]
	if fn == nil {
		fn = ls.NewFunctionFromProto(s.proto)
		fn.Env = ls.Env
		if len(v.fns) > 10000 { // bounded: a flushed cache's functions go
			clear(v.fns)
		}
		v.fns[s.SHA] = fn
	}
	v.globals.RawSetString("KEYS", stringArray(ls, keys))
	v.globals.RawSetString("ARGV", stringArray(ls, args))
	start := time.Now()
	out := v.call(fn, 0, scriptChunk, s.SHA, caller, resp3, dst)
	e.recordRun(&s.stats, &e.stats.evalRuns, &e.stats.evalFailed, start, out[len(dst):])
	return out
}

// recordRun counts a run that started at start and replied reply: in the
// script's or function's statistics and the engine's totals.
// REQUIRES: v.mu held.
func (e *Engine) recordRun(r *runStats, runs, failed *atomic.Int64, start time.Time, reply []byte) {
	now := time.Now()
	bad := len(reply) > 0 && reply[0] == '-'
	r.record(int64(now.Sub(start)), now.UnixNano(), bad)
	runs.Add(1)
	if bad {
		failed.Add(1)
	}
	if e.vm.kill.killed.Load() {
		e.stats.killed.Add(1)
	}
}

// call runs fn, whose nargs arguments are pushed already, as a script
// (name is the SHA or the function's name in error replies; chunk the
// source its errors are "on"). REQUIRES: v.mu held.
func (v *vm) call(fn *lua.LFunction, nargs int, chunk, name string, caller Caller, resp3 bool, dst []byte) []byte {
	ls := v.ls
	v.kill.rearm()
	rs := &v.runs
	rs.caller, rs.resp, rs.repl = caller, 2, ReplAll
	v.run = rs
	defer func() { v.run, rs.caller = nil, nil }()
	base := ls.GetTop() - nargs
	ls.Insert(fn, base+1)
	v.errLine = -1
	// No Lua error handler (Redis runs __redis__err__handler): gopher-lua
	// calls one with a new frame, which a full call stack cannot take, and
	// what it adds is known without it (see throw, markPosition).
	err := ls.PCall(nargs, 1, nil)
	if err != nil {
		obj := v.errorObject(err, chunk)
		dst = appendRunError(dst, obj, name)
	} else {
		dst = appendLuaReply(dst, ls, ls.Get(-1), resp3, rs.resp == 3, 0)
	}
	ls.SetTop(base)
	return dst
}

// errorObject is the error table of a failed call: raised tables as they
// are, other values as Redis' error handler makes them ({err="ERR msg",
// source=, line=}).
func (v *vm) errorObject(err error, chunk string) lua.LValue {
	ls := v.ls
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	if _, ok := obj.(*lua.LTable); !ok || v.kill.killed.Load() {
		msg := lua51Message(lua.LVAsString(luaToString(ls, obj)))
		t := ls.NewTable()
		t.RawSetString("err", lua.LString("ERR "+msg))
		if v.kill.killed.Load() {
			// luaMaskCountHook's error, where the script was
			t.RawSetString("err", lua.LString("ERR Script killed by user with SCRIPT KILL..."))
		}
		line := positionOf(msg, chunk)
		if line < 0 {
			line = v.errLine
		}
		if line >= 0 {
			t.RawSetString("source", lua.LString("@"+chunk))
			t.RawSetString("line", lua.LNumber(line))
		}
		obj = t
	}
	return obj
}

// Forget drops the VM's functions of scripts no longer cached (SCRIPT
// FLUSH); the next run of a script makes its function again.
func (e *Engine) Forget() {
	e.vm.mu.Lock()
	clear(e.vm.fns)
	e.vm.mu.Unlock()
}

func stringArray(ls *lua.LState, elems [][]byte) *lua.LTable {
	t := ls.CreateTable(len(elems), 0)
	for i, b := range elems {
		t.RawSetInt(i+1, lua.LString(b))
	}
	return t
}

// appendRunError is the error reply of a script that raised obj (Redis'
// luaCallFunction): "-<err> script: <sha>, on <source>:<line>.".
func appendRunError(dst []byte, obj lua.LValue, sha string) []byte {
	t, ok := obj.(*lua.LTable)
	if !ok {
		msg := "execution failure"
		if s, ok := obj.(lua.LString); ok {
			msg = string(s)
		}
		if len(msg) > 100 {
			msg = msg[:100]
		}
		return appendErrorLine(dst, "ERR Error running script "+sha+", "+msg)
	}
	var b strings.Builder
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		b.WriteString(string(s))
	} else if n, ok := t.RawGetString("err").(lua.LNumber); ok {
		b.WriteString(n.String())
	}
	src, line := t.RawGetString("source"), t.RawGetString("line")
	if src.Type() == lua.LTString && (line.Type() == lua.LTNumber || line.Type() == lua.LTString) {
		b.WriteString(" script: ")
		b.WriteString(sha)
		b.WriteString(", on ")
		b.WriteString(src.String())
		b.WriteString(":")
		b.WriteString(line.String())
		b.WriteString(".")
	}
	return appendErrorLine(dst, b.String())
}

// formatNumber is Lua 5.1's number to string: "%.14g".
func formatNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

var (
	arithMsg = regexp.MustCompile(`cannot perform (\w+) operation between (\w+) and (\w+)`)
	indexMsg = regexp.MustCompile(`attempt to index a non-table object\((\w+)\) with key '[^']*'`)
)

// lua51Message words gopher-lua's most common runtime errors as Lua 5.1
// does (Lua 5.1 may add the variable's name, "local 'x'", which gopher-lua
// does not know; docs/scripting.md lists the difference).
func lua51Message(msg string) string {
	msg = arithMsg.ReplaceAllStringFunc(msg, func(m string) string {
		p := arithMsg.FindStringSubmatch(m)
		op, a, b := p[1], p[2], p[3]
		if op == "concat" {
			bad := a
			if a == "string" || a == "number" {
				bad = b
			}
			return "attempt to concatenate a " + bad + " value"
		}
		bad := a
		if a == "number" {
			bad = b
		}
		return "attempt to perform arithmetic on a " + bad + " value"
	})
	return indexMsg.ReplaceAllString(msg, "attempt to index a $1 value")
}
