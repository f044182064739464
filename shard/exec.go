package shard

import (
	"fmt"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// Ctx is one command's execution context. The producer fills DB, RESP3, Now,
// Cmd, Sub and Args (borrowed: valid only during the call) and Out (the reply
// is appended to it); handlers read keys through db. Runtime.execute (runtime.go)
// is the one place that runs it.
type Ctx struct {
	DB    int   // selected database, 0..NumDatabases-1
	RESP3 bool  // the connection speaks RESP3 (HELLO 3)
	Now   int64 // unix milliseconds, read once per batch
	Cmd   *command.Command
	// Sub is Cmd's subcommand (XGROUP CREATE for XGROUP) when the producer
	// resolved it already (netloop's process), so the runtime does not look
	// it up again; nil when Cmd has none or the producer did not resolve it
	// (the runtime then resolves it once, see effective). Cleared after the
	// command ran.
	Sub  *command.Command
	Args [][]byte
	Out  []byte

	// Tracking is the ID of the client the command runs for when that
	// client has CLIENT TRACKING on (0: it has not, the common case): the
	// tracking hooks read it (NOLOOP). TrackReads asks the runtime to hand
	// a read-only command to Hooks.Read after it ran, so the keys it named
	// are remembered for the client (default mode, after OPTIN/OPTOUT and
	// CLIENT CACHING); false costs execute one check. The producer sets
	// both; the runtime only reads them.
	Tracking   int64
	TrackReads bool

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
	// route is what Route found for the command about to run with this
	// context (its shard, or its keys' shards), so nothing hashes a key
	// twice; execute consumes it.
	route keyRoute
	// inTxn: the command runs inside EXEC (HoldAll holds every shard).
	inTxn bool

	env    *Env     // the keyspace (Bind)
	single *Store   // the store of the shard held, when the command runs on exactly one
	ready  []byte   // serving a woken blocked client: the key that got data (block.go)
	num    [20]byte // scratch for formatting integer-encoded values
}

// keyRoute is Route's finding for one command: the shard it runs on, or the
// shards of its keys (set) with each key's argument position and shard, in
// the order Route found them. It is valid for the next execution of the
// context it sits in only, and only for cmd with nargs arguments (a check
// against a producer that routed one command and ran another).
type keyRoute struct {
	cmd   *command.Command // nil: nothing routed
	nargs int
	where Where
	one   int      // the shard, when where == OneShard
	set   ShardSet // where == Coordinated: the shards of the keys (every shard for a keyspace-wide command)
	pos   []int32  // the keys' argument positions
	shard []uint8  // their shards (MaxShards fits in a byte)
	next  int      // db's cursor into pos: handlers mostly read keys in order
}

func (r *keyRoute) reset() {
	r.cmd, r.next = nil, 0
	r.pos, r.shard = r.pos[:0], r.shard[:0]
	r.set = ShardSet{}
}

// routedFor reports whether r was found for c's command.
func (r *keyRoute) routedFor(c *Ctx) bool {
	return r.cmd == c.Cmd && r.nargs == len(c.Args)
}

// Bind attaches c to the keyspace e (a producer calls Runtime.Bind, which
// calls this, once per context it keeps).
func (c *Ctx) Bind(e *Env) { c.env = e }

// db returns the database that owns key in the selected database number.
// REQUIRES: the caller holds the token of the shard that owns key.
func (c *Ctx) db(key []byte) *DB {
	if c.single != nil {
		return c.single.dbs[c.DB]
	}
	return c.env.stores[c.shardOf(key)].dbs[c.DB]
}

// shardOf is the shard of key for a command running on several shards: the
// one Route recorded when key is one of the command's key arguments (found
// by identity, starting where the last lookup ended), else its hash.
func (c *Ctx) shardOf(key []byte) int {
	r := &c.route
	if n := len(r.pos); n > 0 && len(key) > 0 && r.routedFor(c) {
		for j := range n {
			k := r.next + j
			if k >= n {
				k -= n
			}
			if a := c.Args[r.pos[k]]; len(a) == len(key) && &a[0] == &key[0] {
				r.next = k + 1
				return int(r.shard[k])
			}
		}
	}
	return c.env.shardOf(key)
}

// Effective is the command whose flags apply to c: its subcommand for a
// container (netloop runs XGROUP CREATE with Cmd set to the container
// XGROUP, which has no flags), else c.Cmd. It resolves the subcommand at
// most once per command (the producer usually did: Ctx.Sub).
func (c *Ctx) Effective() *command.Command {
	if c.Sub != nil {
		return c.Sub
	}
	cmd := c.Cmd
	if len(cmd.Subcommands) > 0 && len(c.Args) > 1 {
		if sub := c.env.table.LookupSub(cmd, c.Args[1]); sub != nil {
			c.Sub = sub
			return sub
		}
	}
	return cmd
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

// Route tells the producer where cmd with args runs (see Runtime.Route).
func (e *Env) Route(cmd *command.Command, args [][]byte) (shard int, where Where) {
	return e.route(nil, cmd, args)
}

// RouteFor is Route for the command about to run with c: it records in c
// what it found (the shard, or every key's shard and the set of them) for
// the execution of the same command that follows, which then hashes no key
// again; the execution consumes it.
//
// route is the one place that finds a command's keys for routing: the
// legacy key positions (first, last, step) or, for commands with movable
// keys, their key specs.
func (e *Env) RouteFor(c *Ctx, cmd *command.Command, args [][]byte) (shard int, where Where) {
	r := &c.route
	r.reset()
	r.cmd, r.nargs = cmd, len(args)
	shard, where = e.route(r, cmd, args)
	r.where, r.one = where, shard
	if where == NotShard {
		r.cmd = nil
	}
	return shard, where
}

// route finds where cmd runs and, when r is not nil, records the keys'
// shards in r.
func (e *Env) route(r *keyRoute, cmd *command.Command, args [][]byte) (int, Where) {
	rr := e.routes[cmd.ID]
	switch rr.kind {
	case routeKeys, routeKeySpecs:
		if rr.kind == routeKeySpecs || cmd.Flags&command.FlagMovableKeys != 0 {
			var buf [16]int
			var flags [16]command.KeyFlag
			keys, _, ok := cmd.KeysWithFlags(args, buf[:0], flags[:0])
			if !ok || len(keys) == 0 {
				// Its keys cannot be found (a bad numkeys): it runs on
				// shard 0, where its handler replies with the error.
				if r != nil {
					r.set.Add(0)
				}
				if rr.parks {
					return 0, Coordinated
				}
				return 0, OneShard
			}
			first := e.shardOf(args[keys[0]])
			i := 1
			for i < len(keys) && e.shardOf(args[keys[i]]) == first {
				i++
			}
			if i == len(keys) && !rr.parks {
				return first, OneShard
			}
			for j, k := range keys {
				if r == nil {
					break
				}
				e.recordKey(r, args, k, first, j < i)
			}
			return 0, Coordinated
		}
		// The legacy key positions, walked without building a list: the hot
		// path (GET, SET, MSET) allocates nothing whatever its key count.
		last := cmd.LastKey
		if last < 0 {
			last = len(args) + last
		}
		last = min(last, len(args)-1)
		step := max(cmd.Step, 1)
		first := e.shardOf(args[cmd.FirstKey])
		i := cmd.FirstKey + step
		for i <= last && e.shardOf(args[i]) == first {
			i += step
		}
		if i > last && !rr.parks {
			return first, OneShard
		}
		// Several shards (or a blocking command, which always runs
		// coordinated: only the producer's own call can park its client):
		// record every key's shard, hashing only those not hashed above.
		for k := cmd.FirstKey; r != nil && k <= last; k += step {
			e.recordKey(r, args, k, first, k < i)
		}
		return 0, Coordinated
	case routeAll:
		if r != nil {
			r.set.All(len(e.stores))
		}
		if len(e.stores) == 1 {
			return 0, OneShard
		}
		return 0, Coordinated
	case routeKeyedSub:
		if len(args) > 2 {
			return e.shardOf(args[2]), OneShard
		}
		return 0, NotShard
	case routeSubKey:
		if len(args) > 2 {
			return e.shardOf(args[2]), OneShard
		}
		return 0, OneShard
	case routeScan:
		shard, _, err := ParseScanCursor(args[1], len(e.stores))
		if err != nil {
			return 0, OneShard // the handler replies with the error
		}
		return shard, OneShard
	}
	return 0, NotShard
}

// recordKey records the key at args[k]: its shard is first when known is set
// (Route hashed it already), else its hash.
func (e *Env) recordKey(r *keyRoute, args [][]byte, k, first int, known bool) {
	sh := first
	if !known {
		sh = e.shardOf(args[k])
	}
	r.pos = append(r.pos, int32(k))
	r.shard = append(r.shard, uint8(sh))
	r.set.Add(sh)
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
	addBitmapCommands(add)
	return t
}

func (env *Env) register() error {
	env.handlers = make([]handler, env.table.Len())
	env.routes = make([]route, env.table.Len())
	for name, e := range handlerTable() {
		cmd := env.table.Lookup([]byte(name))
		if cmd == nil {
			return fmt.Errorf("shard: handler for %q has no command table entry", name)
		}
		if e.r == routeKeys && cmd.FirstKey <= 0 && cmd.Flags&command.FlagMovableKeys == 0 {
			return fmt.Errorf("shard: %q is routed by keys but the table gives it no key positions", name)
		}
		env.handlers[cmd.ID] = e.h
		env.routes[cmd.ID] = route{kind: e.r,
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

// ---- what the runtime's execute uses -----------------------------------------

// Enter gives c the store of the one shard its command runs on (nil: it runs
// on several, whose stores it reaches through the Env). Only the runtime
// calls it, holding that shard's token.
func (c *Ctx) Enter(st *Store) { c.single = st }

// Serving reports whether c runs a woken blocked client's command (the
// runtime serves ready keys after it, not during it).
func (c *Ctx) Serving() bool { return c.ready != nil }

// InTxn reports whether c's command runs inside EXEC (every shard held).
func (c *Ctx) InTxn() bool { return c.inTxn }

// SetInTxn marks c's next commands as run inside EXEC (or not).
func (c *Ctx) SetInTxn(on bool) { c.inTxn = on }

// Routed reports whether RouteFor's finding in c is for c's command.
func (c *Ctx) Routed() bool { return c.route.routedFor(c) }

// RoutedTo is where RouteFor found c's command runs, and its shard for
// OneShard.
func (c *Ctx) RoutedTo() (Where, int) { return c.route.where, c.route.one }

// RoutedSet is the shards of c's command's keys as RouteFor found them
// (every shard for a keyspace-wide command; empty for OneShard).
func (c *Ctx) RoutedSet() *ShardSet { return &c.route.set }

// ForgetRoute drops RouteFor's finding: the command will run with another
// Ctx (a Batch's).
func (c *Ctx) ForgetRoute() { c.route.cmd = nil }

// Finished clears what one execution consumed: the resolved subcommand and
// RouteFor's finding.
func (c *Ctx) Finished() { c.Sub, c.route.cmd = nil, nil }

// Changes sums the change counters of the stores c's command may touch: its
// one store, or the ones it holds (never one another goroutine holds).
func (c *Ctx) Changes() int64 {
	if c.single != nil {
		return c.single.dirty
	}
	var n int64
	for i, st := range c.env.stores {
		if c.inTxn || c.route.set.Has(i) {
			n += st.dirty
		}
	}
	return n
}

// Handle calls c's command's handler.
// REQUIRES: the caller holds the shards c's command runs on (Enter).
func (e *Env) Handle(c *Ctx) { e.handlers[c.Cmd.ID](c) }

// MayRouteLocal reports whether Route may answer NotShard for cmd, a
// top-level command (see Runtime.MayRouteLocal).
func (e *Env) MayRouteLocal(cmd *command.Command) bool {
	switch e.routes[cmd.ID].kind {
	case routeNone, routeKeyedSub:
		return true
	}
	return false
}

// CommandKeys appends the keys of the running command to dst, as its key
// specification finds them (what a Changed hook reports as changed).
func (c *Ctx) CommandKeys(dst [][]byte) [][]byte {
	var buf [16]int
	for _, i := range c.Cmd.Keys(c.Args, buf[:0]) {
		dst = append(dst, c.Args[i])
	}
	return dst
}
