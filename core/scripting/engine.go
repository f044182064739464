package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Caller runs the commands a script calls (redis.call, redis.pcall).
type Caller interface {
	// Call runs argv (argv[0] is the command's name) as the script's client
	// and appends the command's reply to dst, in RESP3 when resp3 is set
	// (the script called redis.setresp(3)), else in RESP2. repl is what
	// redis.set_repl last set (ReplAll unless the script changed it).
	//
	// When Redis would refuse the command before running it (unknown
	// command, wrong arity, not allowed from scripts, ACL, a write in a
	// read-only script, OOM), Call appends nothing and returns the refusal
	// as Redis' scriptCall words it: "-CODE message", or a message without
	// a code, which gets "ERR".
	//
	// argv and its elements are valid only during the call.
	Call(argv [][]byte, resp3 bool, repl int, dst []byte) (out []byte, refusal string)
	// CheckACL reports whether the script's user may run argv
	// (redis.acl_check_cmd); known is false for an unknown command.
	CheckACL(argv [][]byte) (allowed, known bool)
}

// Shebang flags (Redis' scripts_flags_def), and EvalCompat for a script
// without a shebang (Redis' SCRIPT_FLAG_EVAL_COMPAT_MODE).
const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
	FlagEvalCompat
)

// Flags are a script's flags.
type Flags uint8

// Has reports whether every flag of g is set in f.
func (f Flags) Has(g Flags) bool { return f&g == g }

var flagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites},
	{"allow-oom", FlagAllowOOM},
	{"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster},
	{"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// Replication targets for redis.set_repl (Redis' PROPAGATE_AOF and
// PROPAGATE_REPL).
const (
	ReplNone    = 0
	ReplAOF     = 1
	ReplReplica = 2
	ReplAll     = ReplAOF | ReplReplica
)

// Script is a compiled script in the cache, immutable once loaded but for
// its run statistics (stats.go). The VM makes its function at the script's
// first run (vm.fns).
type Script struct {
	SHA   string // 40 lower-case hex digits
	Body  string
	Flags Flags
	proto *lua.FunctionProto
	stats runStats
}

// Error is an error reply produced by the engine outside a script's run
// (a compile error, a bad shebang): Msg is Redis' text without the '-'.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Options configure an Engine.
type Options struct {
	// Log receives redis.log messages at or above Verbosity (Redis' log
	// levels: 0 debug, 1 verbose, 2 notice, 3 warning). May be nil.
	Log       func(level int, msg string)
	Verbosity func() int
	// Version is redis.REDIS_VERSION ("7.0.15"); VersionNum its number
	// (0x00070f0f style as Redis' REDIS_VERSION_NUM).
	Version    string
	VersionNum int
}

// Engine is the script cache and the VM that runs scripts.
type Engine struct {
	opts Options

	mu      sync.RWMutex
	scripts map[string]*Script
	bodies  int64 // bytes of the cached bodies (used_memory_scripts_eval)

	libs libraries // FUNCTION LOAD's libraries (functions.go)

	vm vm // the Lua state; one script runs at a time (vm.mu)

	stats engineStats // runs and kills since start (stats.go)
}

// New builds an engine with an empty cache.
func New(opts Options) *Engine {
	if opts.Version == "" {
		opts.Version = "7.0.15"
		opts.VersionNum = 0x07000f
	}
	e := &Engine{opts: opts, scripts: make(map[string]*Script)}
	e.vm.init(e)
	return e
}

// SHA1Hex is the lower-case hex SHA1 of b (the script cache's key).
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// Lookup returns the cached script whose SHA1 is sha (hex, any case), or
// nil. It does not allocate for a lower-case sha.
func (e *Engine) Lookup(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	var buf [40]byte
	for i, c := range sha {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	e.mu.RLock()
	s := e.scripts[string(buf[:])]
	e.mu.RUnlock()
	return s
}

// Exists reports whether sha is cached.
func (e *Engine) Exists(sha []byte) bool { return e.Lookup(sha) != nil }

// Len is the number of cached scripts; Bytes the size of their bodies.
func (e *Engine) Len() (n int, bytes int64) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.scripts), e.bodies
}

// Load compiles body (once: a cached body is not compiled again) and caches
// it. Errors are Redis' replies: a bad shebang, or "Error compiling script
// (new function): ...".
func (e *Engine) Load(body []byte) (*Script, error) {
	sha := SHA1Hex(body)
	e.mu.RLock()
	s := e.scripts[sha]
	e.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	flags, skip, err := ParseShebang(body)
	if err != nil {
		return nil, err
	}
	// Redis compiles what follows the shebang line from its '\n' on, so
	// line numbers stay those of the whole body.
	proto, err := compile(string(body[skip:]), scriptChunk)
	if err != nil {
		return nil, &Error{"ERR Error compiling script (new function): " + err.Error()}
	}
	s = &Script{SHA: sha, Body: string(body), Flags: flags, proto: proto}
	e.mu.Lock()
	if old := e.scripts[sha]; old != nil {
		s = old
	} else {
		e.scripts[sha] = s
		e.bodies += int64(len(body))
	}
	e.mu.Unlock()
	return s, nil
}

// Flush empties the cache (SCRIPT FLUSH). The VM drops its functions at
// its next run.
func (e *Engine) Flush() {
	e.mu.Lock()
	e.scripts = make(map[string]*Script)
	e.bodies = 0
	e.mu.Unlock()
}

// compile parses and compiles src as a chunk named name, with errors worded
// as Lua 5.1's "<name>:<line>: <message>" where gopher-lua gives the parts.
func compile(src, name string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) {
			line := pe.Pos.Line
			if line == parse.EOF {
				return nil, errors.New(name + ": '<eof>' " + pe.Message)
			}
			return nil, errors.New(name + ":" + itoa(line) + ": " + pe.Message + " near '" + pe.Token + "'")
		}
		return nil, err
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, err
	}
	// The chunk is a vararg function; gopher-lua would build Lua 5.0's
	// "arg" table at every call for it, which no code of the chunk can
	// reach (the main chunk has no "arg" local): measured, a third of an
	// EVALSHA's engine time.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, nil
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// ParseShebang reads a `#!lua flags=...` first line as Redis 7.0's
// evalExtractShebangFlags: it returns the flags (FlagEvalCompat without a
// shebang) and where the code after the shebang line starts (at its '\n').
func ParseShebang(body []byte) (flags Flags, skip int, err error) {
	if len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return FlagEvalCompat, 0, nil
	}
	end := -1
	for i, c := range body {
		if c == '\n' || c == 0 { // strchr stops at NUL too
			if c == '\n' {
				end = i
			}
			break
		}
	}
	if end < 0 {
		return 0, 0, &Error{"ERR Invalid script shebang"}
	}
	parts := strings.Fields(string(body[:end])) // sdssplitargs, without quotes (a shebang has none)
	if len(parts) == 0 {
		return 0, 0, &Error{"ERR Invalid engine in script shebang"}
	}
	if parts[0] != "#!lua" {
		return 0, 0, &Error{"ERR Unexpected engine in script shebang: " + parts[0]}
	}
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "flags=") {
			return 0, 0, &Error{"ERR Unknown lua shebang option: " + p}
		}
		list := p[len("flags="):]
		if list == "" {
			continue
		}
		for _, name := range strings.Split(list, ",") {
			found := false
			for _, f := range flagNames {
				if f.name == name {
					flags |= f.flag
					found = true
					break
				}
			}
			if !found {
				return 0, 0, &Error{"ERR Unexpected flag in script shebang: " + name}
			}
		}
	}
	return flags, end, nil
}
