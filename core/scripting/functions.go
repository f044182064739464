package scripting

import (
	"sort"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Functions (FUNCTION LOAD and FCALL, Redis 7.0's functions.c and
// function_lua.c): libraries of named Lua functions, loaded from code that
// starts with a `#!lua name=<library>` shebang and calls
// redis.register_function for each function it offers.
//
// The libraries run in the engine's one VM, as EVAL's scripts do (Redis
// keeps a second Lua state for them; one VM is enough here since a script
// and a function never run at once: both hold every shard). The code of a
// library runs once, at load, in the load-time sandbox: its globals are
// only `redis` with register_function, log, the LOG_* levels and the
// version (Redis' LIBRARY_API), any other global is "nonexistent". The
// functions it registers are closures over an environment (fenv) whose
// lookups go to that sandbox while the library loads and to the full
// globals after, the way Redis swaps the __index of its globals' metatable.

// Function is one registered function, immutable once its library is in
// but for its run statistics (stats.go).
type Function struct {
	Name  string
	Desc  string // "" with HasDesc false: no description (FUNCTION LIST's null)
	Flags Flags  // no-writes, allow-oom, ... (never FlagEvalCompat)
	// HasDesc tells an empty description from none.
	HasDesc bool
	Lib     *Library
	fn      *lua.LFunction
	stats   runStats
}

// Library is a loaded library: its name, its code (as given to FUNCTION
// LOAD, shebang included) and its functions in registration order.
type Library struct {
	Name      string
	Code      string
	Functions []*Function
}

// libraries is the engine's set of libraries; every access holds mu.
type libraries struct {
	mu    sync.RWMutex
	libs  map[string]*Library
	funcs map[string]*Function
	bytes int64 // the libraries' code bytes
}

// loadState is the library being loaded (register_function adds to it).
type loadState struct {
	lib   *Library
	names map[string]bool
}

// loadTimeout is Redis' LOAD_TIMEOUT_MS: the code of a library that runs
// longer at load is stopped ("FUNCTION LOAD timeout").
const loadTimeout = 500 * time.Millisecond

// FunctionExtractMeta reads the `#!lua name=<lib>` first line of a
// library's code as functionExtractLibMetaData: the engine and library
// names and where the code after the shebang line starts (at its '\n').
func FunctionExtractMeta(code []byte) (engine, name string, skip int, err error) {
	if len(code) < 2 || code[0] != '#' || code[1] != '!' {
		return "", "", 0, &Error{"ERR Missing library metadata"}
	}
	end := -1
	for i, c := range code {
		if c == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		return "", "", 0, &Error{"ERR Invalid library metadata"}
	}
	parts := strings.Fields(string(code[:end]))
	if len(parts) == 0 {
		return "", "", 0, &Error{"ERR Invalid library metadata"}
	}
	engine = parts[0][2:]
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "name=") {
			return "", "", 0, &Error{"ERR Invalid metadata value given: " + p}
		}
		name = p[len("name="):]
	}
	if name == "" && !hasNamePart(parts[1:]) {
		return "", "", 0, &Error{"ERR Library name was not given"}
	}
	return engine, name, end, nil
}

func hasNamePart(parts []string) bool {
	for _, p := range parts {
		if strings.HasPrefix(p, "name=") {
			return true
		}
	}
	return false
}

// validName is functionsVerifyName: letters, digits and '_', at least one.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const badNameErr = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// LoadLibrary is FUNCTION LOAD [REPLACE]: it compiles and runs code in the
// load-time sandbox and installs the library it registers (replacing one
// of the same name when replace is set). It returns the library's name;
// errors are Redis' replies.
func (e *Engine) LoadLibrary(code []byte, replace bool) (string, error) {
	lib, err := e.compileLibrary(code)
	if err != nil {
		return "", err
	}
	if err := e.install([]*Library{lib}, replace); err != nil {
		return "", err
	}
	return lib.Name, nil
}

// compileLibrary makes a library from code without installing it.
func (e *Engine) compileLibrary(code []byte) (*Library, error) {
	engine, name, skip, err := FunctionExtractMeta(code)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, &Error{"ERR Engine '" + engine + "' not found"}
	}
	if !validName(name) {
		return nil, &Error{badNameErr}
	}
	proto, err := compile(string(code[skip:]), functionChunk)
	if err != nil {
		return nil, &Error{"ERR Error compiling function: " + err.Error()}
	}
	lib := &Library{Name: name, Code: string(code)}
	if err := e.vm.runLoad(proto, lib); err != nil {
		return nil, err
	}
	if len(lib.Functions) == 0 {
		return nil, &Error{"ERR No functions registered"}
	}
	return lib, nil
}

// install adds libs (each already compiled) at once, or none of them:
// libraryJoin's checks, a library of the same name is an error unless
// replace, and a function name owned by another library always is.
func (e *Engine) install(libs []*Library, replace bool) error {
	l := &e.libs
	l.mu.Lock()
	defer l.mu.Unlock()
	replaced := map[string]bool{}
	for _, lib := range libs {
		if l.libs[lib.Name] != nil {
			if !replace {
				return &Error{"ERR Library '" + lib.Name + "' already exists"}
			}
			replaced[lib.Name] = true
		}
	}
	for _, lib := range libs {
		for _, f := range lib.Functions {
			if old := l.funcs[strings.ToLower(f.Name)]; old != nil && !replaced[old.Lib.Name] {
				return &Error{"ERR Function " + f.Name + " already exists"}
			}
		}
	}
	for name := range replaced {
		l.unlink(l.libs[name])
	}
	for _, lib := range libs {
		l.link(lib)
	}
	return nil
}

func (l *libraries) link(lib *Library) {
	if l.libs == nil {
		l.libs = make(map[string]*Library)
		l.funcs = make(map[string]*Function)
	}
	l.libs[lib.Name] = lib
	for _, f := range lib.Functions {
		l.funcs[strings.ToLower(f.Name)] = f
	}
	l.bytes += int64(len(lib.Code))
}

func (l *libraries) unlink(lib *Library) {
	delete(l.libs, lib.Name)
	for _, f := range lib.Functions {
		delete(l.funcs, strings.ToLower(f.Name))
	}
	l.bytes -= int64(len(lib.Code))
}

// DeleteLibrary is FUNCTION DELETE.
func (e *Engine) DeleteLibrary(name string) error {
	l := &e.libs
	l.mu.Lock()
	defer l.mu.Unlock()
	lib := l.libs[name]
	if lib == nil {
		return &Error{"ERR Library not found"}
	}
	l.unlink(lib)
	return nil
}

// FlushFunctions is FUNCTION FLUSH: every library goes.
func (e *Engine) FlushFunctions() {
	l := &e.libs
	l.mu.Lock()
	l.libs, l.funcs, l.bytes = nil, nil, 0
	l.mu.Unlock()
}

// LookupFunction returns the function named name, or nil.
func (e *Engine) LookupFunction(name []byte) *Function {
	l := &e.libs
	l.mu.RLock()
	f := l.funcs[strings.ToLower(string(name))] // Redis' functions dictionary ignores case
	l.mu.RUnlock()
	return f
}

// Libraries returns the loaded libraries sorted by name.
func (e *Engine) Libraries() []*Library {
	l := &e.libs
	l.mu.RLock()
	out := make([]*Library, 0, len(l.libs))
	for _, lib := range l.libs {
		out = append(out, lib)
	}
	l.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FunctionCounts is how many libraries and functions are loaded and the
// bytes of their code.
func (e *Engine) FunctionCounts() (libs, funcs int, bytes int64) {
	l := &e.libs
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.libs), len(l.funcs), l.bytes
}

// FunctionFlagNames are the names of f's flags in Redis' order
// (scripts_flags_def), as FUNCTION LIST shows them.
func FunctionFlagNames(f Flags) []string {
	var out []string
	for _, fl := range flagNames {
		if f.Has(fl.flag) {
			out = append(out, fl.name)
		}
	}
	return out
}

// Call runs f (FCALL, FCALL_RO) with keys and args as its two arguments
// and appends its reply to dst, as Run does for a script.
func (e *Engine) Call(f *Function, keys, args [][]byte, caller Caller, resp3 bool, dst []byte) []byte {
	v := &e.vm
	v.mu.Lock()
	defer v.mu.Unlock()
	ls := v.ls
	// KEYS and ARGV are the function's two arguments; as globals they are
	// EVAL's only (Redis runs functions in a Lua state of their own, where
	// they never exist), so the last EVAL's must not show through.
	v.globals.RawSetString("KEYS", lua.LNil)
	v.globals.RawSetString("ARGV", lua.LNil)
	ls.Push(stringArray(ls, keys))
	ls.Push(stringArray(ls, args))
	start := time.Now()
	out := v.call(f.fn, 2, functionChunk, f.Name, caller, resp3, dst)
	e.recordRun(&f.stats, &e.stats.fnRuns, &e.stats.fnFailed, start, out[len(dst):])
	return out
}

// initFunctions builds the load-time API and the functions' environment.
func (v *vm) initFunctions(e *Engine) {
	ls := v.ls
	api := ls.NewTable()
	api.RawSetString("register_function", ls.NewFunction(v.registerFunction))
	api.RawSetString("log", ls.NewFunction(func(ls *lua.LState) int { return e.log(ls) }))
	for _, k := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(k, v.redisTable.RawGetString(k))
	}
	lib := ls.NewTable()
	lib.RawSetString("redis", v.readonly(api, true)) // strict, as Redis protects it: redis.call is "nonexistent" at load
	v.readonly(lib, true)                            // makes lib strict: a missing global raises
	v.loadAPI = lib
	v.fenv = ls.NewTable()
	v.fenvMeta = ls.NewTable()
	v.fenvMeta.RawSetString("__index", v.globals)
	v.fenvMeta.RawSetString("__newindex", ls.NewFunction(func(ls *lua.LState) int {
		ls.RaiseError("%s", readonlyErr)
		return 0
	}))
	v.fenvMeta.RawSetString("__metatable", lua.LFalse)
	ls.SetMetatable(v.fenv, v.fenvMeta)
	v.proxies[v.fenv] = true
}

// runLoad runs a library's main chunk in the load-time sandbox, with
// Redis' 500 ms limit.
func (v *vm) runLoad(proto *lua.FunctionProto, lib *Library) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	ls := v.ls
	fn := ls.NewFunctionFromProto(proto)
	fn.Env = v.fenv
	v.fenvMeta.RawSetString("__index", v.loadAPI)
	v.loading = &loadState{lib: lib, names: map[string]bool{}}
	v.kill.rearm()
	var timedOut bool
	var tmu sync.Mutex
	timer := time.AfterFunc(loadTimeout, func() {
		tmu.Lock()
		timedOut = true
		tmu.Unlock()
		v.kill.kill()
	})
	defer func() {
		timer.Stop()
		v.fenvMeta.RawSetString("__index", v.globals)
		v.loading = nil
	}()
	base := ls.GetTop()
	ls.Push(fn)
	v.errLine = -1
	err := ls.PCall(0, 0, nil)
	ls.SetTop(base)
	if err == nil {
		return nil
	}
	tmu.Lock()
	to := timedOut
	tmu.Unlock()
	if to {
		v.kill.rearm()
		return &Error{"ERR Error registering functions: ERR FUNCTION LOAD timeout"}
	}
	obj := v.errorObject(err, functionChunk)
	msg := "execution failure"
	if t, ok := obj.(*lua.LTable); ok {
		msg = lua.LVAsString(t.RawGetString("err"))
	}
	return &Error{"ERR Error registering functions: " + msg}
}

// registerFunction is redis.register_function (luaRegisterFunction), in
// its positional form (name, callback) and its table form (function_name,
// callback, description, flags).
func (v *vm) registerFunction(ls *lua.LState) int {
	ld := v.loading
	if ld == nil {
		raise(ls, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &Function{Lib: ld.lib}
	switch ls.GetTop() {
	case 1:
		t, ok := ls.Get(1).(*lua.LTable)
		if !ok {
			raise(ls, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		hasName := false
		var bad string
		t.ForEach(func(k, val lua.LValue) {
			if bad != "" {
				return
			}
			if k.Type() != lua.LTString && k.Type() != lua.LTNumber {
				bad = "named argument key given to redis.register_function is not a string"
				return
			}
			switch strings.ToLower(lua.LVAsString(k)) {
			case "function_name":
				if val.Type() != lua.LTString && val.Type() != lua.LTNumber {
					bad = "function_name argument given to redis.register_function must be a string"
					return
				}
				f.Name, hasName = lua.LVAsString(val), true
			case "description":
				if val.Type() != lua.LTString && val.Type() != lua.LTNumber {
					bad = "description argument given to redis.register_function must be a string"
					return
				}
				f.Desc, f.HasDesc = lua.LVAsString(val), true
			case "callback":
				fn, ok := val.(*lua.LFunction)
				if !ok {
					bad = "callback argument given to redis.register_function must be a function"
					return
				}
				f.fn = fn
			case "flags":
				ft, ok := val.(*lua.LTable)
				if !ok {
					bad = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				flags, ok := readFunctionFlags(ft)
				if !ok {
					bad = "unknown flag given"
					return
				}
				f.Flags = flags
			default:
				bad = "unknown argument given to redis.register_function"
			}
		})
		switch {
		case bad != "":
			raise(ls, bad)
		case !hasName:
			raise(ls, "redis.register_function must get a function name argument")
		case f.fn == nil:
			raise(ls, "redis.register_function must get a callback argument")
		}
	case 2:
		name := ls.Get(1)
		if name.Type() != lua.LTString && name.Type() != lua.LTNumber {
			raise(ls, "first argument to redis.register_function must be a string")
		}
		fn, ok := ls.Get(2).(*lua.LFunction)
		if !ok {
			raise(ls, "second argument to redis.register_function must be a function")
		}
		f.Name, f.fn = lua.LVAsString(name), fn
	default:
		raise(ls, "wrong number of arguments to redis.register_function")
	}
	// functionLibCreateFunction (7.0 words a bad function name as a bad
	// library name)
	if !validName(f.Name) {
		raise(ls, badNameErr[len("ERR "):])
	}
	if ld.names[strings.ToLower(f.Name)] {
		raise(ls, "Function already exists in the library")
	}
	ld.names[strings.ToLower(f.Name)] = true
	ld.lib.Functions = append(ld.lib.Functions, f)
	return 0
}

// readFunctionFlags reads a flags table (luaRegisterFunctionReadFlags):
// strings at 1, 2, ... until nil, matched case-insensitively.
func readFunctionFlags(t *lua.LTable) (Flags, bool) {
	var flags Flags
	for i := 1; ; i++ {
		val := t.RawGetInt(i)
		if val == lua.LNil {
			return flags, true
		}
		if val.Type() != lua.LTString && val.Type() != lua.LTNumber {
			return 0, false
		}
		name := lua.LVAsString(val)
		found := false
		for _, fl := range flagNames {
			if strings.EqualFold(fl.name, name) {
				flags |= fl.flag
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
}

// Restore policies of FUNCTION RESTORE.
const (
	RestoreAppend = iota
	RestoreReplace
	RestoreFlush
)

// RestoreLibraries is FUNCTION RESTORE's second half: codes (from a DUMP
// payload) are compiled as one new set of libraries (a name twice in it is
// "already exists", as functionsCreateWithLibraryCtx says it), which then
// replaces every library (RestoreFlush) or joins them (libraryJoin: a
// library of the same name is an error under RestoreAppend and replaced
// under RestoreReplace; a function name of another library always is an
// error). Nothing changes on an error.
func (e *Engine) RestoreLibraries(codes [][]byte, policy int) error {
	var set libraries
	for _, code := range codes {
		lib, err := e.compileLibrary(code)
		if err != nil {
			return err
		}
		if set.libs[lib.Name] != nil {
			return &Error{"ERR Library '" + lib.Name + "' already exists"}
		}
		for _, f := range lib.Functions {
			if set.funcs[strings.ToLower(f.Name)] != nil {
				return &Error{"ERR Function " + f.Name + " already exists"}
			}
		}
		set.link(lib)
	}
	l := &e.libs
	l.mu.Lock()
	defer l.mu.Unlock()
	if policy == RestoreFlush {
		l.libs, l.funcs, l.bytes = set.libs, set.funcs, set.bytes
		return nil
	}
	names := make([]string, 0, len(set.libs))
	for name := range set.libs {
		names = append(names, name)
	}
	sort.Strings(names)
	replaced := map[string]bool{}
	for _, name := range names {
		if l.libs[name] != nil {
			if policy != RestoreReplace {
				return &Error{"ERR Library " + name + " already exists"}
			}
			replaced[name] = true
		}
	}
	for _, name := range names {
		for _, f := range set.libs[name].Functions {
			if old := l.funcs[strings.ToLower(f.Name)]; old != nil && !replaced[old.Lib.Name] {
				return &Error{"ERR Function " + f.Name + " already exists"}
			}
		}
	}
	for name := range replaced {
		l.unlink(l.libs[name])
	}
	for _, name := range names {
		l.link(set.libs[name])
	}
	return nil
}
