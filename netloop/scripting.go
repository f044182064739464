package netloop

import (
	"context"
	"github.com/svcdb/svcdb/core/replication"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/scripting"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (issue 16): the Lua engine
// is core/scripting; this file runs a script as one unit and is the engine's
// Caller, through which every redis.call reaches the runtime.
//
// Atomicity: a script holds every shard for its whole run
// (shard.Runtime.HoldAll, as EXEC does), so no other client's command runs
// between its commands, whatever keys it touches, declared or not. Inside
// EXEC the shards are held already and the script runs in the transaction.
// Every command the script calls runs through shard.Runtime.ExecHeld, the
// runtime's one execution entry point (or the loop's local handler for a
// server command such as PING or TIME), so the statistics, the AOF feed, WATCH
// and the hot-shard counters see each call once. docs/scripting.md and
// docs/architecture.md say why all shards, with the numbers.

// scriptClock is what other loops know of the running script (part 5 of
// issue 16): when it started (unix ns, 0 when none runs) and whether it
// wrote, for -BUSY and SCRIPT KILL; the threshold is busy-reply-threshold
// in milliseconds (0: never busy).
type scriptClock struct {
	start     atomic.Int64
	wrote     atomic.Bool
	threshold atomic.Int64
	fn        atomic.Pointer[runningFunction] // the FCALL running, nil for EVAL or none (functions.go)
}

// busyReply is Redis' shared.slowevalerr.
const busyReply = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"

// scriptBusy reports whether a script has run past busy-reply-threshold:
// commands without the allow-busy flag then get -BUSY instead of waiting
// for the shards it holds. One atomic load when no script runs.
func (s *Server) scriptBusy() bool {
	start := s.scriptClock.start.Load()
	if start == 0 {
		return false
	}
	th := s.scriptClock.threshold.Load()
	return th > 0 && time.Now().UnixNano()-start >= th*int64(time.Millisecond)
}

// refuseBusy replies -BUSY to a command that would wait for a busy
// script's shards, and reports whether it did.
func (s *Server) refuseBusy(c *client, checked *command.Command, mark int) bool {
	if checked.Flags&command.FlagAllowBusy != 0 || !s.scriptBusy() {
		return false
	}
	if s.scriptClock.fn.Load() != nil {
		c.out = append(c.out, busyFunctionReply...) // functions.go
	} else {
		c.out = append(c.out, busyReply...)
	}
	s.rejected(c, checked, c.out[mark:])
	return true
}

// scriptRun is one running script's state for its Caller: the client, the
// flags that decide which commands it may call, and whether it wrote.
type scriptRun struct {
	s        *Server
	c        *client
	readOnly bool // EVAL_RO, EVALSHA_RO or a no-writes script: writes refused
	allowOOM bool // the allow-oom shebang flag
	oom      bool // used memory was over maxmemory when the script started
	dirty    bool // the script ran a write command (Redis' SCRIPT_WRITE_DIRTY)
}

func newScriptEngine(s *Server) *scripting.Engine {
	return scripting.New(scripting.Options{
		Version: RedisVersion,
		VersionNum: func() int {
			parts := [3]int{}
			i := 0
			for _, c := range RedisVersion {
				if c == '.' {
					i++
					if i > 2 {
						break
					}
					continue
				}
				if c >= '0' && c <= '9' {
					parts[i] = parts[i]*10 + int(c-'0')
				}
			}
			return parts[0]<<16 | parts[1]<<8 | parts[2]
		}(),
		Log: func(level int, msg string) {
			if s.log == nil {
				return
			}
			lv := slog.LevelInfo
			switch level {
			case scripting.LogDebug, scripting.LogVerbose:
				lv = slog.LevelDebug
			case scripting.LogWarning:
				lv = slog.LevelWarn
			}
			s.log.Log(context.Background(), lv, msg, "source", "lua")
		},
	})
}

// SlowScripts lists up to n cached scripts and loaded functions that ran,
// the slowest single run first (the debug UI's slow scripts). Safe from
// any goroutine; it never waits for a running script.
func (s *Server) SlowScripts(n int) []scripting.RunStat { return s.scripts.SlowScripts(n) }

// cmdEval is EVAL, EVALSHA, EVAL_RO and EVALSHA_RO (Redis' evalGenericCommand).
func (s *Server) cmdEval(c *client, cmd *command.Command, args [][]byte) {
	bySHA := cmd.Name == "evalsha" || cmd.Name == "evalsha_ro"
	ro := cmd.Name == "eval_ro" || cmd.Name == "evalsha_ro"
	numkeys, ok := resp.ParseInt(args[2])
	if !ok {
		c.out = append(c.out, resp.ErrNotInteger...)
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
	var sc *scripting.Script
	if bySHA {
		if sc = s.scripts.Lookup(args[1]); sc == nil {
			c.out = append(c.out, "-NOSCRIPT No matching script. Please use EVAL.\r\n"...)
			return
		}
	} else {
		var err error
		if sc, err = s.scripts.Load(args[1]); err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
	}
	run := scriptRun{s: s, c: c, readOnly: ro}
	if !sc.Flags.Has(scripting.FlagEvalCompat) {
		// scriptPrepareForRun's checks for a script with a shebang
		// (no-cluster and allow-stale do not apply: svcdb is standalone
		// and replicas of svcdb are not stale-served).
		run.allowOOM = sc.Flags.Has(scripting.FlagAllowOOM)
		if !sc.Flags.Has(scripting.FlagNoWrites) {
			if ro {
				c.out = resp.AppendError(c.out, "ERR Can not execute a script with write flag using *_ro command.")
				return
			}
			if s.tooFewReplicas() { // scriptPrepareForRun
				c.out = append(c.out, replication.ErrNoReplicas...)
				return
			}
			if !run.allowOOM && s.rt.OutOfMemory() {
				// processCommand refuses it: a script that may write is deny-oom
				c.out = append(c.out, keyspace.OOMReply...)
				return
			}
		} else {
			run.readOnly = true
		}
	}
	run.oom = !run.allowOOM && s.rt.OutOfMemory()
	s.runScript(c, &run, sc, args[3:3+numkeys], args[3+numkeys:])
}

// runScript runs sc holding every shard (or inside the EXEC that holds
// them) and appends its reply to c.out.
func (s *Server) runScript(c *client, run *scriptRun, sc *scripting.Script, keys, argv [][]byte) {
	inExec := c.multi.inExec
	if !inExec {
		s.rt.HoldAll()
	}
	s.scriptClock.wrote.Store(false)
	s.scriptClock.start.Store(time.Now().UnixNano())
	db, blocker, resp3 := c.ctx.DB, c.ctx.Blocker, c.ctx.RESP3
	c.ctx.Blocker = nil // blocking commands reply at once in a script, as in Redis
	c.multi.inExec = true
	out := c.out
	c.out = nil // a local command called by the script appends here (Call swaps it)
	c.trackScript(keys)
	out = s.scripts.Run(sc, keys, argv, run, resp3, out)
	c.trackScriptEnd()
	s.scriptClock.start.Store(0)
	c.out = out
	c.multi.inExec = inExec
	c.ctx.DB, c.ctx.Blocker, c.ctx.RESP3 = db, blocker, resp3 // SELECT in a script is the script's own
	c.db.Store(int32(db))
	if !inExec {
		s.rt.SetLogSuppressed(false)
		c.ctx.LogEnd = max(c.ctx.LogEnd, s.rt.ReleaseAll())
	} else {
		s.rt.SetLogSuppressed(false)
	}
}

// Call is scripting.Caller: Redis' scriptCall checks, then the command runs
// through the runtime's execution entry point (or the loop's handler for a
// server command).
func (r *scriptRun) Call(argv [][]byte, resp3 bool, repl int, dst []byte) ([]byte, string) {
	s, c := r.s, r.c
	cmd := s.table.Lookup(argv[0])
	if cmd == nil {
		return dst, "Unknown Redis command called from script"
	}
	checked := cmd
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if checked = s.table.LookupSub(cmd, argv[1]); checked == nil {
			return dst, "Unknown Redis command called from script"
		}
	}
	if !checked.CheckArity(len(argv)) {
		return dst, "Wrong number of args calling Redis command from script"
	}
	if checked.Flags&command.FlagNoScript != 0 {
		return dst, "This Redis command is not allowed from script"
	}
	if !c.user.AllowsAll() {
		if res, idx := c.user.Check(checked, argv); res != acl.OK {
			object := checked.FullName
			if res == acl.DeniedKey || res == acl.DeniedChannel {
				object = string(argv[idx])
			}
			s.aclLog(c, res, object, c.user.Name()) // as Redis: ACL LOG, context lua
			return dst, scriptACLError(res)
		}
	}
	if checked.Flags&command.FlagWrite != 0 {
		if r.readOnly {
			return dst, "Write commands are not allowed from read-only scripts."
		}
	}
	if checked.Flags&command.FlagWrite != 0 && !r.dirty && s.tooFewReplicas() {
		// scriptVerifyWriteCommandAllow (reached by EVAL without a shebang;
		// a script that already wrote is not failed half-way)
		return dst, replication.ErrNoReplicas[:len(replication.ErrNoReplicas)-2]
	}
	if !r.allowOOM && r.oom && !r.dirty && checked.Flags&command.FlagDenyOOM != 0 {
		return dst, "-" + keyspace.OOMMessage
	}
	if checked.Flags&command.FlagWrite != 0 {
		r.dirty = true
		s.scriptClock.wrote.Store(true) // SCRIPT KILL may no longer stop it
	}
	if (cmd.Name == "xread" || cmd.Name == "xreadgroup") && hasBlockOption(argv) {
		mark0 := len(dst)
		// xreadCommand's own refusal (the other blocking commands are
		// flagged noscript): an error reply of the command, not a check.
		dst = resp.AppendError(dst, "ERR "+string(argv[0])+" command is not allowed with BLOCK option from scripts") // the name as called
		s.accountCall(c, checked, argv, dst[mark0:], 0, 0, true)
		return dst, ""
	}
	s.rt.SetLogSuppressed(repl&scripting.ReplAOF == 0) // redis.set_repl
	c.ctx.RESP3 = resp3
	start := cmdstats.Now()
	mark := len(dst)
	if _, where := s.rt.RouteFor(&c.ctx, cmd, argv); where == keyspace.NotShard {
		saved := c.out
		c.out = dst
		s.local(c, cmd, subOf(cmd, checked), argv)
		dst = c.out
		c.out = saved
	} else {
		c.ctx.Cmd, c.ctx.Sub, c.ctx.Args, c.ctx.Out = cmd, subOf(cmd, checked), argv, dst
		s.rt.ExecHeld(&c.ctx)
		dst, c.ctx.Out, c.ctx.Args = c.ctx.Out, nil, nil
	}
	ns := cmdstats.Now() - start
	s.accountCall(c, checked, argv, dst[mark:], ns, ns, true)
	return dst, ""
}

// hasBlockOption reports whether an XREAD or XREADGROUP has BLOCK among
// its options (before STREAMS).
func hasBlockOption(argv [][]byte) bool {
	for _, a := range argv[1:] {
		if resp.EqualFold(a, "streams") {
			return false
		}
		if resp.EqualFold(a, "block") {
			return true
		}
	}
	return false
}

// CheckACL is redis.acl_check_cmd.
func (r *scriptRun) CheckACL(argv [][]byte) (allowed, known bool) {
	s, c := r.s, r.c
	cmd := s.table.Lookup(argv[0])
	if cmd == nil {
		return false, false
	}
	checked := cmd
	if len(cmd.Subcommands) > 0 && len(argv) > 1 {
		if checked = s.table.LookupSub(cmd, argv[1]); checked == nil {
			return false, false
		}
	}
	if !checked.CheckArity(len(argv)) {
		return false, false
	}
	if c.user.AllowsAll() {
		return true, true
	}
	res, _ := c.user.Check(checked, argv)
	return res == acl.OK, true
}

// cmdScript is SCRIPT LOAD, EXISTS, FLUSH, KILL and HELP.
func (s *Server) cmdScript(c *client, cmd *command.Command, args [][]byte) {
	sub := s.subcommand(c, cmd, args)
	switch sub.Name {
	case "load":
		sc, err := s.scripts.Load(args[2])
		if err != nil {
			c.out = resp.AppendError(c.out, err.Error())
			return
		}
		c.out = resp.AppendBulkString(c.out, sc.SHA)
	case "exists":
		c.out = resp.AppendArrayHeader(c.out, len(args)-2)
		for _, sha := range args[2:] {
			n := int64(0)
			if s.scripts.Exists(sha) {
				n = 1
			}
			c.out = resp.AppendInt(c.out, n)
		}
	case "flush":
		if len(args) > 3 {
			c.out = resp.AppendError(c.out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option")
			return
		}
		if len(args) == 3 && !resp.EqualFold(args[2], "sync") && !resp.EqualFold(args[2], "async") {
			c.out = resp.AppendError(c.out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option")
			return
		}
		// ASYNC and SYNC both drop the cache at once: the bodies are Go
		// memory the collector frees, off the loop either way.
		s.scripts.Flush()
		s.scripts.Forget()
		c.out = append(c.out, resp.OK...)
	case "kill":
		// Runs on another loop than the script's (whose loop is busy
		// running it): a script that has not written stops at its next
		// Lua instruction.
		switch {
		case s.scriptClock.start.Load() == 0:
			c.out = resp.AppendError(c.out, "NOTBUSY No scripts in execution right now.")
		case s.scriptClock.fn.Load() != nil: // a function: FUNCTION KILL's (scriptKill)
			c.out = append(c.out, busyFunctionReply...)
		case s.scriptClock.wrote.Load():
			c.out = resp.AppendError(c.out, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
		default:
			s.scripts.Kill()
			c.out = append(c.out, resp.OK...)
		}
	case "debug":
		// The Lua debugger (LDB) is not implemented: NO (its off state)
		// is accepted, YES and SYNC are refused rather than ignored.
		switch {
		case resp.EqualFold(args[2], "no"):
			c.out = append(c.out, resp.OK...)
		case resp.EqualFold(args[2], "yes"), resp.EqualFold(args[2], "sync"):
			c.out = resp.AppendError(c.out, "ERR SCRIPT DEBUG is not supported by svcdb (no Lua debugger)")
		default:
			c.out = resp.AppendError(c.out, "ERR Use SCRIPT DEBUG YES/SYNC/NO")
		}
	case "help":
		c.out = resp.AppendHelp(c.out, scriptHelp)
	default:
		c.out = resp.AppendErrUnknownSubcommand(c.out, args[1], cmd.Name)
	}
}

var scriptHelp = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

// scriptACLError is scriptVerifyACL's text for a refusal.
func scriptACLError(r acl.Reason) string {
	switch r {
	case acl.DeniedCommand:
		return "The user executing the script can't run this command or subcommand"
	case acl.DeniedKey:
		return "The user executing the script can't access at least one of the keys mentioned in the command arguments"
	case acl.DeniedChannel:
		return "The user executing the script can't publish to the channel mentioned in the command"
	}
	return "The user executing the script is lacking the permissions for the command"
}
