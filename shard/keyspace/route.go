package keyspace

import (
	"fmt"

	"github.com/svcdb/svcdb/core/command"
)

// Routing: where a command runs (one shard, or several, coordinated), found
// once from its keys and kept in its Ctx for the execution that follows;
// and the handler table, resolved to command IDs once (register).

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
	// hint is the first key's whole hash, for its lookup when the command
	// runs on that key's shard alone (Ctx.Enter); zero when the key has a
	// hash tag.
	hint keyHint
}

func (r *keyRoute) reset() {
	r.cmd, r.next = nil, 0
	r.pos, r.shard = r.pos[:0], r.shard[:0]
	r.set = ShardSet{}
	r.hint = keyHint{}
}

// routedFor reports whether r was found for c's command.
func (r *keyRoute) routedFor(c *Ctx) bool {
	return r.cmd == c.Cmd && r.nargs == len(c.Args)
}

type Handler func(c *Ctx)

// RouteKind says which shards a command needs.
type RouteKind uint8

const (
	RouteNone     RouteKind = iota // not executed by shards
	RouteKeys                      // the shards of its keys (legacy key positions)
	RouteAll                       // every shard (keyspace-wide commands)
	RouteScan                      // one shard, chosen by the SCAN cursor
	RouteSubKey                    // a container whose subcommands take one key at args[2], HELP included (OBJECT, XGROUP, XINFO)
	RouteKeyedSub                  // a container whose subcommands with a key (args[2]) run in its shard; the others are the server's (MEMORY)
	RouteKeySpecs                  // the shards of its keys as its Redis 7 key specs find them (numkeys: LMPOP, ZUNIONSTORE, SINTERCARD, ...)
)

type route struct {
	kind RouteKind
	// parks: a blocking command routed by its keys; it always runs through
	// ExecMulti, since only the producer's own synchronous call can park its
	// client (waiters.go).
	parks bool
	// oneKey: routed by its legacy key positions, which name one key
	// (FirstKey == LastKey > 0: GET, SET, INCR, ZPOPMIN and most others),
	// and not parking: route goes straight to that key's shard.
	oneKey bool
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
	if rr.oneKey { // the walk below, for one key: about 20 instructions less
		return e.firstShard(r, args[cmd.FirstKey]), OneShard
	}
	switch rr.kind {
	case RouteKeys, RouteKeySpecs:
		if rr.kind == RouteKeySpecs || cmd.Flags&command.FlagMovableKeys != 0 {
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
			first := e.firstShard(r, args[keys[0]])
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
		first := e.firstShard(r, args[cmd.FirstKey])
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
	case RouteAll:
		if r != nil {
			r.set.All(len(e.stores))
		}
		if len(e.stores) == 1 {
			return 0, OneShard
		}
		return 0, Coordinated
	case RouteKeyedSub:
		if len(args) > 2 {
			return e.shardOf(args[2]), OneShard
		}
		return 0, NotShard
	case RouteSubKey:
		if len(args) > 2 {
			return e.shardOf(args[2]), OneShard
		}
		return 0, OneShard
	case RouteScan:
		shard, _, err := ParseScanCursor(args[1], len(e.stores))
		if err != nil {
			return 0, OneShard // the handler replies with the error
		}
		return shard, OneShard
	}
	return 0, NotShard
}

// firstShard is the shard of a command's first key; when r is not nil and
// the key has no hash tag it records the key's hash in r (keyRoute.hint),
// so that its lookup does not hash it again.
func (e *Env) firstShard(r *keyRoute, key []byte) int {
	if r == nil {
		return e.shardOf(key)
	}
	shard, h, whole := e.shardAndHash(key)
	if whole && len(key) > 0 {
		r.hint = keyHint{p: &key[0], n: len(key), h: h}
	}
	return shard
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

// Handlers is the command handlers by command name (as in the command
// table), each with how it routes. The commands packages fill it
// (shard/commands.Handlers); NewEnv resolves it to command IDs once.
type Handlers map[string]HandlerSpec

// HandlerSpec is one command's handler and route.
type HandlerSpec struct {
	Handle Handler
	Route  RouteKind
}

// Add registers h, routed by r, for the command name; two handlers for one
// name is a programming error.
func (hs Handlers) Add(name string, h Handler, r RouteKind) {
	if _, dup := hs[name]; dup {
		panic("keyspace: two handlers for " + name)
	}
	hs[name] = HandlerSpec{h, r}
}

func (env *Env) register(hs Handlers) error {
	env.handlers = make([]Handler, env.table.Len())
	env.routes = make([]route, env.table.Len())
	for name, e := range hs {
		cmd := env.table.Lookup([]byte(name))
		if cmd == nil {
			return fmt.Errorf("keyspace: handler for %q has no command table entry", name)
		}
		if e.Route == RouteKeys && cmd.FirstKey <= 0 && cmd.Flags&command.FlagMovableKeys == 0 {
			return fmt.Errorf("keyspace: %q is routed by keys but the table gives it no key positions", name)
		}
		env.handlers[cmd.ID] = e.Handle
		parks := cmd.Flags&command.FlagBlocking != 0 && (e.Route == RouteKeys || e.Route == RouteKeySpecs)
		env.routes[cmd.ID] = route{kind: e.Route, parks: parks,
			oneKey: e.Route == RouteKeys && cmd.Flags&command.FlagMovableKeys == 0 && !parks &&
				cmd.FirstKey > 0 && cmd.LastKey == cmd.FirstKey}
	}
	return nil
}

// Handle calls c's command's handler.
// REQUIRES: the caller holds the shards c's command runs on (Enter).
func (e *Env) Handle(c *Ctx) { e.handlers[c.Cmd.ID](c) }

// MayRouteLocal reports whether Route may answer NotShard for cmd, a
// top-level command (see Runtime.MayRouteLocal).
func (e *Env) MayRouteLocal(cmd *command.Command) bool {
	switch e.routes[cmd.ID].kind {
	case RouteNone, RouteKeyedSub:
		return true
	}
	return false
}
