package scripting

import (
	"sync/atomic"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Memory is what INFO memory shows of scripting, in Redis 7.0's terms.
//
// Redis asks Lua's allocator (lua_gc LUA_GCCOUNT) for its VMs' sizes.
// gopher-lua allocates on the Go heap and keeps no such count, so the VM
// figures here are measured by walking what the VM holds (see vmSizer):
// the fixed stacks it allocates up front, then every table, string,
// function and compiled prototype reachable from its globals, its registry,
// the cached scripts' functions and the libraries' functions. They are
// estimates of the Go memory those objects take (Go's object headers and
// map buckets are approximated), not allocator counts.
type Memory struct {
	Scripts      int   // number_of_cached_scripts
	ScriptsBytes int64 // used_memory_scripts_eval: the cached bodies' bytes
	Libraries    int   // number_of_libraries
	Functions    int   // number_of_functions
	// FunctionsBytes is used_memory_functions: the libraries' code and
	// their functions' names and descriptions.
	FunctionsBytes int64
	// VMEval is used_memory_vm_eval (used_memory_lua): the VM's fixed
	// stacks, its globals and libraries, and the cached scripts' compiled
	// functions. VMFunctions is used_memory_vm_functions: what only the
	// libraries' functions reach (their prototypes, upvalues and
	// environment). svcdb runs both in one VM (docs/scripting.md), so the
	// split is by what reaches what, the globals counted under eval.
	VMEval, VMFunctions int64
}

// vmMemory is the VM's last measured sizes: Memory measures again when the
// VM is free, and returns these while a script runs (INFO on another loop
// must not wait for a long script).
type vmMemory struct {
	eval, functions atomic.Int64
}

// Memory measures the scripting memory for INFO. It never waits for a
// running script: the VM figures are then those of the last measure.
func (e *Engine) Memory() Memory {
	var m Memory
	m.Scripts, m.ScriptsBytes = e.Len()
	l := &e.libs
	l.mu.RLock()
	m.Libraries, m.Functions = len(l.libs), len(l.funcs)
	m.FunctionsBytes = l.bytes
	var fns []*lua.LFunction
	for _, f := range l.funcs {
		m.FunctionsBytes += int64(len(f.Name) + len(f.Desc))
		fns = append(fns, f.fn)
	}
	l.mu.RUnlock()

	v := &e.vm
	if v.mu.TryLock() {
		sz := vmSizer{seen: make(map[unsafe.Pointer]bool)}
		// what gopher-lua allocates at NewState: the call frames (ten
		// words each) and the value stack (two-word interfaces)
		sz.n = callStackSize*10*8 + registryInitial*16
		sz.table(v.globals)
		sz.value(v.ls.Get(lua.RegistryIndex))
		for _, fn := range v.fns {
			sz.function(fn)
		}
		eval := sz.n
		sz.n = 0
		sz.table(v.fenv)
		sz.table(v.fenvMeta)
		sz.table(v.loadAPI)
		for _, fn := range fns {
			if fn != nil {
				sz.function(fn)
			}
		}
		v.mu.Unlock()
		v.mem.eval.Store(eval)
		v.mem.functions.Store(sz.n)
	}
	m.VMEval, m.VMFunctions = v.mem.eval.Load(), v.mem.functions.Load()
	return m
}

// vmSizerLimit bounds one measure's walk (objects visited): a script's
// huge table makes INFO's figure a lower bound rather than a long walk
// with the VM held.
const vmSizerLimit = 1 << 20

// vmSizer adds up the approximate Go memory of Lua values, each object
// once. REQUIRES: the VM's mutex held.
type vmSizer struct {
	seen map[unsafe.Pointer]bool
	n    int64
}

func (z *vmSizer) first(p unsafe.Pointer) bool {
	if p == nil || z.seen[p] || len(z.seen) >= vmSizerLimit {
		return false
	}
	z.seen[p] = true
	return true
}

func (z *vmSizer) value(v lua.LValue) {
	switch x := v.(type) {
	case lua.LString:
		z.n += 16 + int64(len(x)) // header and bytes (shared strings counted at each use)
	case lua.LNumber:
		z.n += 8 // boxed in the interface
	case *lua.LTable:
		z.table(x)
	case *lua.LFunction:
		z.function(x)
	case *lua.LUserData:
		if z.first(unsafe.Pointer(x)) {
			z.n += int64(unsafe.Sizeof(*x))
			z.table(x.Env)
			z.value(x.Metatable)
		}
	case *lua.LState: // a coroutine: its own frames and stack
		if z.first(unsafe.Pointer(x)) {
			z.n += 4096
		}
	}
}

// table: the struct, about 48 bytes an entry (array slots are 16, map
// entries with their bucket share more), then keys and values.
func (z *vmSizer) table(t *lua.LTable) {
	if t == nil || !z.first(unsafe.Pointer(t)) {
		return
	}
	z.n += int64(unsafe.Sizeof(*t))
	t.ForEach(func(k, v lua.LValue) {
		z.n += 48
		z.value(k)
		z.value(v)
	})
	z.value(t.Metatable)
}

func (z *vmSizer) function(fn *lua.LFunction) {
	if fn == nil || !z.first(unsafe.Pointer(fn)) {
		return
	}
	z.n += int64(unsafe.Sizeof(*fn))
	z.table(fn.Env)
	for _, uv := range fn.Upvalues {
		z.n += 64 // the Upvalue struct
		z.value(uv.Value())
	}
	z.proto(fn.Proto)
}

func (z *vmSizer) proto(p *lua.FunctionProto) {
	if p == nil || !z.first(unsafe.Pointer(p)) {
		return
	}
	z.n += int64(unsafe.Sizeof(*p)) + int64(len(p.SourceName))
	z.n += int64(len(p.Code))*4 + int64(len(p.DbgSourcePositions))*8
	z.n += int64(len(p.DbgCalls)) * int64(unsafe.Sizeof(lua.DbgCall{}))
	for _, c := range p.Constants {
		z.n += 16
		z.value(c)
	}
	for _, l := range p.DbgLocals {
		z.n += int64(unsafe.Sizeof(*l)) + int64(len(l.Name))
	}
	for _, u := range p.DbgUpvalues {
		z.n += 16 + int64(len(u))
	}
	for _, q := range p.FunctionPrototypes {
		z.proto(q)
	}
}
