package netloop

import (
	"github.com/svcdb/svcdb/core/replication"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/scripting"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// FUNCTION and FCALL, FCALL_RO (issue 16 part 2). The libraries live in the
// script engine (core/scripting/functions.go); a function runs exactly as
// an EVAL script does (runScript: every shard held, every redis.call
// through the runtime's one execution entry point), with its registered
// flags in place of a shebang's.

// cmdFcall is FCALL and FCALL_RO (fcallCommandGeneric).
func (s *Server) cmdFcall(c *client, cmd *command.Command, args [][]byte) {
	ro := cmd.Name == "fcall_ro"
	f := s.scripts.LookupFunction(args[1])
	if f == nil {
		c.out = resp.AppendError(c.out, "ERR Function not found")
		return
	}
	numkeys, ok := resp.ParseInt(args[2])
	if !ok {
		c.out = resp.AppendError(c.out, "ERR Bad number of keys provided")
		return
	}
	if numkeys > int64(len(args)-3) {
		c.out = resp.AppendError(c.out, "ERR Number of keys can't be greater than number of args")
		return
	}
	if numkeys < 0 {
		c.out = resp.AppendError(c.out, "ERR Number of keys can't be negative")
		return
	}
	// scriptPrepareForRun, as for a script with a shebang
	run := scriptRun{s: s, c: c, readOnly: ro}
	run.allowOOM = f.Flags.Has(scripting.FlagAllowOOM)
	if !f.Flags.Has(scripting.FlagNoWrites) {
		if ro {
			c.out = resp.AppendError(c.out, "ERR Can not execute a script with write flag using *_ro command.")
			return
		}
		if s.tooFewReplicas() { // scriptPrepareForRun
			c.out = append(c.out, replication.ErrNoReplicas...)
			return
		}
		if !run.allowOOM && s.rt.OutOfMemory() {
			c.out = append(c.out, keyspace.OOMReply...)
			return
		}
	} else {
		run.readOnly = true
	}
	run.oom = !run.allowOOM && s.rt.OutOfMemory()
	s.runFunction(c, &run, f, args, args[3:3+numkeys], args[3+numkeys:])
}

// runFunction is runScript for a function: f runs holding every shard (or
// inside the EXEC that holds them) and its reply goes to c.out.
func (s *Server) runFunction(c *client, run *scriptRun, f *scripting.Function, fcall, keys, argv [][]byte) {
	inExec := c.multi.inExec
	if !inExec {
		s.rt.HoldAll()
	}
	s.scriptClock.wrote.Store(false)
	rf := &runningFunction{name: f.Name, argv: make([][]byte, len(fcall))}
	for i, a := range fcall {
		rf.argv[i] = append([]byte(nil), a...) // read by FUNCTION STATS on other loops
	}
	now := time.Now().UnixNano()
	rf.start = now
	s.scriptClock.fn.Store(rf)
	s.scriptClock.start.Store(now)
	db, blocker, resp3 := c.ctx.DB, c.ctx.Blocker, c.ctx.RESP3
	c.ctx.Blocker = nil
	c.multi.inExec = true
	out := c.out
	c.out = nil
	c.trackScript(keys)
	out = s.scripts.Call(f, keys, argv, run, resp3, out)
	c.trackScriptEnd()
	s.scriptClock.start.Store(0)
	s.scriptClock.fn.Store(nil)
	c.out = out
	c.multi.inExec = inExec
	c.ctx.DB, c.ctx.Blocker, c.ctx.RESP3 = db, blocker, resp3
	c.db.Store(int32(db))
	s.rt.SetLogSuppressed(false)
	if !inExec {
		c.ctx.LogEnd = max(c.ctx.LogEnd, s.rt.ReleaseAll())
	}
}

// cmdFunction is FUNCTION and its subcommands.
func (s *Server) cmdFunction(c *client, cmd *command.Command, args [][]byte) {
	sub := s.subcommand(c, cmd, args)
	switch sub.Name {
	case "load":
		replace := false
		pos := 2
		for pos < len(args)-1 {
			a := args[pos]
			pos++
			if resp.EqualFold(a, "replace") {
				replace = true
				continue
			}
			c.out = resp.AppendError(c.out, "ERR Unknown option given: "+string(a))
			return
		}
		code := args[pos]
		var name string
		err := s.changeFunctions(c, args, func() (err error) {
			name, err = s.scripts.LoadLibrary(code, replace)
			return err
		})
		if err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
		c.out = resp.AppendBulkString(c.out, name)
	case "delete":
		if err := s.changeFunctions(c, args, func() error { return s.scripts.DeleteLibrary(string(args[2])) }); err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
		c.out = append(c.out, resp.OK...)
	case "flush":
		if len(args) > 3 {
			c.out = resp.AppendError(c.out, "ERR unknown subcommand or wrong number of arguments for '"+string(args[1])+"'. Try FUNCTION HELP.")
			return
		}
		if len(args) == 3 && !resp.EqualFold(args[2], "sync") && !resp.EqualFold(args[2], "async") {
			c.out = resp.AppendError(c.out, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
		// ASYNC and SYNC alike: the libraries are Go memory the
		// collector frees off the loop.
		_ = s.changeFunctions(c, args, func() error { s.scripts.FlushFunctions(); return nil })
		c.out = append(c.out, resp.OK...)
	case "list":
		s.functionList(c, args)
	case "dump":
		s.functionDump(c) // functions_persist.go
	case "restore":
		s.functionRestore(c, args)
	case "stats":
		s.functionStats(c)
	case "kill":
		switch {
		case s.scriptClock.start.Load() == 0:
			c.out = resp.AppendError(c.out, "NOTBUSY No scripts in execution right now.")
		case s.scriptClock.fn.Load() == nil: // an EVAL script: SCRIPT KILL's (scriptKill)
			c.out = append(c.out, busyReply...)
		case s.scriptClock.wrote.Load():
			c.out = resp.AppendError(c.out, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
		default:
			s.scripts.Kill()
			c.out = append(c.out, resp.OK...)
		}
	case "help":
		c.out = resp.AppendHelp(c.out, functionHelp)
	default:
		c.out = resp.AppendErrUnknownSubcommand(c.out, args[1], cmd.Name)
	}
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]. The
// libraries come sorted by name (Redis: its dictionary's order).
func (s *Server) functionList(c *client, args [][]byte) {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 2; i < len(args); i++ {
		a := args[i]
		if !withCode && resp.EqualFold(a, "withcode") {
			withCode = true
			continue
		}
		if !hasPattern && resp.EqualFold(a, "libraryname") {
			if i >= len(args)-1 {
				c.out = resp.AppendError(c.out, "ERR library name argument was not given")
				return
			}
			i++
			pattern, hasPattern = args[i], true
			continue
		}
		c.out = resp.AppendError(c.out, "ERR Unknown argument "+string(a))
		return
	}
	resp3 := c.ctx.RESP3
	libs := s.scripts.Libraries()
	if hasPattern {
		kept := libs[:0]
		for _, lib := range libs {
			if glob.Match(pattern, []byte(lib.Name), false) {
				kept = append(kept, lib)
			}
		}
		libs = kept
	}
	c.out = resp.AppendArrayHeader(c.out, len(libs))
	for _, lib := range libs {
		n := 3
		if withCode {
			n = 4
		}
		c.out = resp.AppendMapHeader(c.out, n, resp3)
		c.out = resp.AppendBulkString(c.out, "library_name")
		c.out = resp.AppendBulkString(c.out, lib.Name)
		c.out = resp.AppendBulkString(c.out, "engine")
		c.out = resp.AppendBulkString(c.out, "LUA")
		c.out = resp.AppendBulkString(c.out, "functions")
		c.out = resp.AppendArrayHeader(c.out, len(lib.Functions))
		for _, f := range lib.Functions {
			c.out = resp.AppendMapHeader(c.out, 3, resp3)
			c.out = resp.AppendBulkString(c.out, "name")
			c.out = resp.AppendBulkString(c.out, f.Name)
			c.out = resp.AppendBulkString(c.out, "description")
			if f.HasDesc {
				c.out = resp.AppendBulkString(c.out, f.Desc)
			} else {
				c.out = resp.AppendNull(c.out, resp3)
			}
			c.out = resp.AppendBulkString(c.out, "flags")
			names := scripting.FunctionFlagNames(f.Flags)
			c.out = resp.AppendSetHeader(c.out, len(names), resp3)
			for _, fl := range names {
				c.out = resp.AppendSimpleString(c.out, fl)
			}
		}
		if withCode {
			c.out = resp.AppendBulkString(c.out, "library_code")
			c.out = resp.AppendBulkString(c.out, lib.Code)
		}
	}
}

// runningFunction is what FUNCTION STATS shows of the FCALL running
// (scriptClock.fn): immutable once published.
type runningFunction struct {
	name  string
	argv  [][]byte // the FCALL's arguments, copied
	start int64    // unix ns
}

// busyFunctionReply is Redis' shared.slowscripterr: the -BUSY of a
// function past busy-reply-threshold.
const busyFunctionReply = "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"

// functionStats is FUNCTION STATS: the running function (name, command,
// duration_ms: seen from another loop while a function runs) and the
// engine's counts; -BUSY while an EVAL script runs, as Redis.
func (s *Server) functionStats(c *client) {
	resp3 := c.ctx.RESP3
	rf := s.scriptClock.fn.Load()
	if rf == nil && s.scriptBusy() && !c.multi.inExec {
		c.out = append(c.out, busyReply...)
		return
	}
	libs, funcs, _ := s.scripts.FunctionCounts()
	c.out = resp.AppendMapHeader(c.out, 2, resp3)
	c.out = resp.AppendBulkString(c.out, "running_script")
	if rf == nil || c.multi.inExec {
		c.out = resp.AppendNull(c.out, resp3)
	} else {
		c.out = resp.AppendMapHeader(c.out, 3, resp3)
		c.out = resp.AppendBulkString(c.out, "name")
		c.out = resp.AppendBulkString(c.out, rf.name)
		c.out = resp.AppendBulkString(c.out, "command")
		c.out = resp.AppendArrayHeader(c.out, len(rf.argv))
		for _, a := range rf.argv {
			c.out = resp.AppendBulk(c.out, a)
		}
		c.out = resp.AppendBulkString(c.out, "duration_ms")
		c.out = resp.AppendInt(c.out, (time.Now().UnixNano()-rf.start)/int64(time.Millisecond))
	}
	c.out = resp.AppendBulkString(c.out, "engines")
	c.out = resp.AppendMapHeader(c.out, 1, resp3)
	c.out = resp.AppendBulkString(c.out, "LUA")
	c.out = resp.AppendMapHeader(c.out, 2, resp3)
	c.out = resp.AppendBulkString(c.out, "libraries_count")
	c.out = resp.AppendInt(c.out, int64(libs))
	c.out = resp.AppendBulkString(c.out, "functions_count")
	c.out = resp.AppendInt(c.out, int64(funcs))
}

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}
