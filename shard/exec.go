package shard

import (
	"fmt"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// Ctx is one command's execution context. The producer fills DB, RESP3, Now,
// Cmd and Args (borrowed: valid only during the call) and Out (the reply is
// appended to it); handlers read keys through db.
type Ctx struct {
	DB    int   // selected database, 0..NumDatabases-1
	RESP3 bool  // the connection speaks RESP3 (HELLO 3)
	Now   int64 // unix milliseconds, read once per batch
	Cmd   *command.Command
	Args  [][]byte
	Out   []byte

	// Blocker is the client a blocking command may park (nil: it cannot, as
	// inside MULTI; the command then replies as on timeout). Blocked is set
	// when the command parked it; the producer then waits for
	// Blocker.Unblocked. RetryDeadline carries a retried waiter's deadline.
	Blocker       Unblocker
	Blocked       *Waiter
	RetryDeadline int64

	// LogEnd is the append-only log's end offset after the changes of the
	// commands run with this context (0: none logged). Under appendfsync
	// always the producer holds their replies until the log is durable up
	// to it. The producer resets it.
	LogEnd int64
	// rewrite, when a handler called logAs, holds the RESP commands the
	// append-only log records instead of Args (absolute times, the members
	// SPOP chose, the non-blocking form of a served BLPOP ...); rewriteN
	// counts them (aoflog.go).
	rewrite  []byte
	rewriteN int
	// held is the set of shards ExecMulti holds for the command while
	// holding is set, so that dirtyOf never reads a shard another goroutine
	// holds (kept by value: a pointer to ExecMulti's set would escape).
	held    shardSet
	holding bool

	rt     *Runtime
	single *Shard   // the shard held, when the command runs on exactly one
	ready  []byte   // serving a woken blocked client: the key that got data (block.go)
	num    [20]byte // scratch for formatting integer-encoded values
}

// Bind attaches c to rt; a producer calls it once per context it keeps.
func (c *Ctx) Bind(rt *Runtime) { c.rt = rt }

// db returns the database that owns key in the selected database number.
// REQUIRES: the caller holds the token of the shard that owns key.
func (c *Ctx) db(key []byte) *DB {
	if c.single != nil {
		return c.single.dbs[c.DB]
	}
	return c.rt.shards[c.rt.ShardOf(key)].dbs[c.DB]
}

type handler func(c *Ctx)

// routeKind says which shards a command needs.
type routeKind uint8

const (
	routeNone     routeKind = iota // not executed by shards
	routeKeys                      // the shards of its keys (legacy key positions)
	routeAll                       // every shard (keyspace-wide commands)
	routeScan                      // one shard, chosen by the SCAN cursor
	routeSubKey                    // a container whose subcommands take one key at args[2], HELP included (OBJECT, XGROUP, XINFO)
	routeKeyedSub                  // a container whose subcommands with a key (args[2]) run in its shard; the others are the server's (MEMORY)
	routeKeySpecs                  // the shards of its keys as its Redis 7 key specs find them (numkeys: LMPOP, ZUNIONSTORE, SINTERCARD, ...)
)

type route struct {
	kind routeKind
	// parks: a blocking command routed by its keys; it always runs through
	// ExecMulti, since only the producer's own synchronous call can park its
	// client (blocking.go).
	parks bool
}

// Where says how a producer must run a command.
type Where uint8

const (
	NotShard    Where = iota // a connection or server command; not ours
	OneShard                 // TryExec, or queue a Batch for that shard
	Coordinated              // ExecMulti
)

// Route tells the producer where cmd with args runs. args must already have
// passed the arity check.
func (rt *Runtime) Route(cmd *command.Command, args [][]byte) (shard int, where Where) {
	r := rt.routes[cmd.ID]
	if r.parks {
		return 0, Coordinated
	}
	switch r.kind {
	case routeKeys:
		if cmd.Flags&command.FlagMovableKeys != 0 {
			return rt.routeMovable(cmd, args)
		}
		first := rt.ShardOf(args[cmd.FirstKey])
		last := cmd.LastKey
		if last < 0 {
			last = len(args) + last
		}
		for i := cmd.FirstKey + cmd.Step; i <= last && cmd.Step > 0; i += cmd.Step {
			if rt.ShardOf(args[i]) != first {
				return 0, Coordinated
			}
		}
		return first, OneShard
	case routeKeySpecs:
		return rt.routeMovable(cmd, args)
	case routeAll:
		if len(rt.shards) == 1 {
			return 0, OneShard
		}
		return 0, Coordinated
	case routeKeyedSub:
		if len(args) > 2 {
			return rt.ShardOf(args[2]), OneShard
		}
		return 0, NotShard
	case routeSubKey:
		if len(args) > 2 {
			return rt.ShardOf(args[2]), OneShard
		}
		return 0, OneShard
	case routeScan:
		shard, _, err := rt.parseScanCursor(args[1])
		if err != nil {
			return 0, OneShard // the handler replies with the error
		}
		return shard, OneShard
	}
	return 0, NotShard
}

// routeMovable routes a command whose keys are found by its key specs
// (numkeys, STREAMS keyword: ZUNIONSTORE, LMPOP, XREAD, ...). A command whose
// keys cannot be found (a bad numkeys) runs on shard 0, where its handler
// replies with the error.
func (rt *Runtime) routeMovable(cmd *command.Command, args [][]byte) (int, Where) {
	var buf [16]int
	var flags [16]command.KeyFlag
	keys, _, ok := cmd.KeysWithFlags(args, buf[:0], flags[:0])
	if !ok || len(keys) == 0 {
		return 0, OneShard
	}
	first := rt.ShardOf(args[keys[0]])
	for _, i := range keys[1:] {
		if rt.ShardOf(args[i]) != first {
			return 0, Coordinated
		}
	}
	return first, OneShard
}

func (rt *Runtime) keyShards(cmd *command.Command, args [][]byte, set *shardSet) {
	if cmd.Flags&command.FlagMovableKeys != 0 || rt.routes[cmd.ID].kind == routeKeySpecs {
		var buf [16]int
		var flags [16]command.KeyFlag
		keys, _, ok := cmd.KeysWithFlags(args, buf[:0], flags[:0])
		if !ok || len(keys) == 0 {
			set.add(0)
		}
		for _, i := range keys {
			set.add(rt.ShardOf(args[i]))
		}
		return
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	for i := cmd.FirstKey; i <= last && i < len(args); i += max(cmd.Step, 1) {
		set.add(rt.ShardOf(args[i]))
	}
}

// handlers maps command names (as in the command table) to their handler and
// route. The Runtime resolves them to command IDs once, at construction.
func handlerTable() map[string]struct {
	h handler
	r routeKind
} {
	type entry = struct {
		h handler
		r routeKind
	}
	t := map[string]entry{}
	add := func(name string, h handler, r routeKind) {
		if _, dup := t[name]; dup {
			panic("shard: two handlers for " + name)
		}
		t[name] = entry{h, r}
	}
	// strings
	add("get", cmdGet, routeKeys)
	add("set", cmdSet, routeKeys)
	add("setnx", cmdSetNX, routeKeys)
	add("setex", cmdSetEX, routeKeys)
	add("psetex", cmdPSetEX, routeKeys)
	add("getset", cmdGetSet, routeKeys)
	add("getdel", cmdGetDel, routeKeys)
	add("getex", cmdGetEx, routeKeys)
	add("mget", cmdMGet, routeKeys)
	add("mset", cmdMSet, routeKeys)
	add("msetnx", cmdMSetNX, routeKeys)
	add("incr", cmdIncr, routeKeys)
	add("decr", cmdDecr, routeKeys)
	add("incrby", cmdIncrBy, routeKeys)
	add("decrby", cmdDecrBy, routeKeys)
	add("incrbyfloat", cmdIncrByFloat, routeKeys)
	add("append", cmdAppend, routeKeys)
	add("strlen", cmdStrlen, routeKeys)
	add("getrange", cmdGetRange, routeKeys)
	add("substr", cmdGetRange, routeKeys)
	add("setrange", cmdSetRange, routeKeys)
	// generic
	add("del", cmdDel, routeKeys)
	add("unlink", cmdDel, routeKeys)
	add("exists", cmdExists, routeKeys)
	add("touch", cmdTouch, routeKeys) // evict.go
	add("type", cmdType, routeKeys)
	add("rename", cmdRename, routeKeys)
	add("renamenx", cmdRenameNX, routeKeys)
	add("copy", cmdCopy, routeKeys)
	add("expire", cmdExpire, routeKeys)
	add("pexpire", cmdPExpire, routeKeys)
	add("expireat", cmdExpireAt, routeKeys)
	add("pexpireat", cmdPExpireAt, routeKeys)
	add("ttl", cmdTTL, routeKeys)
	add("pttl", cmdPTTL, routeKeys)
	add("expiretime", cmdExpireTime, routeKeys)
	add("pexpiretime", cmdPExpireTime, routeKeys)
	add("persist", cmdPersist, routeKeys)
	add("keys", cmdKeys, routeAll)
	add("scan", cmdScan, routeScan)
	add("randomkey", cmdRandomKey, routeAll)
	add("dbsize", cmdDBSize, routeAll)
	add("flushdb", cmdFlushDB, routeAll)
	add("flushall", cmdFlushAll, routeAll)
	add("object", cmdObject, routeSubKey)
	add("memory", cmdMemory, routeKeyedSub)
	// data types (one file per type registers its commands)
	addHashCommands(add)
	addListCommands(add)
	addSetCommands(add)
	addZSetCommands(add)
	addStreamCommands(add)
	return t
}

func (rt *Runtime) register() error {
	rt.handlers = make([]handler, rt.table.Len())
	rt.routes = make([]route, rt.table.Len())
	for name, e := range handlerTable() {
		cmd := rt.table.Lookup([]byte(name))
		if cmd == nil {
			return fmt.Errorf("shard: handler for %q has no command table entry", name)
		}
		if e.r == routeKeys && cmd.FirstKey <= 0 && cmd.Flags&command.FlagMovableKeys == 0 {
			return fmt.Errorf("shard: %q is routed by keys but the table gives it no key positions", name)
		}
		rt.handlers[cmd.ID] = e.h
		rt.routes[cmd.ID] = route{kind: e.r,
			parks: cmd.Flags&command.FlagBlocking != 0 && (e.r == routeKeys || e.r == routeKeySpecs)}
	}
	return nil
}

// ---- reply helpers ---------------------------------------------------------

func (c *Ctx) ok()                 { c.Out = append(c.Out, resp.OK...) }
func (c *Ctx) raw(b []byte)        { c.Out = append(c.Out, b...) }
func (c *Ctx) int(n int64)         { c.Out = resp.AppendInt(c.Out, n) }
func (c *Ctx) bulk(b []byte)       { c.Out = resp.AppendBulk(c.Out, b) }
func (c *Ctx) null()               { c.Out = resp.AppendNull(c.Out, c.RESP3) }
func (c *Ctx) array(n int)         { c.Out = resp.AppendArrayHeader(c.Out, n) }
func (c *Ctx) err(msg string)      { c.Out = resp.AppendError(c.Out, msg) }
func (c *Ctx) simple(s string)     { c.Out = resp.AppendSimpleString(c.Out, s) }
func (c *Ctx) wrongType()          { c.Out = append(c.Out, resp.ErrWrongType...) }
func (c *Ctx) syntaxErr()          { c.Out = append(c.Out, resp.ErrSyntax...) }
func (c *Ctx) notInteger()         { c.Out = append(c.Out, resp.ErrNotInteger...) }
func (c *Ctx) bulkString(s string) { c.Out = resp.AppendBulkString(c.Out, s) }
func (c *Ctx) help(lines []string) { c.Out = resp.AppendHelp(c.Out, lines) }
