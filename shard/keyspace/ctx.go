package keyspace

import (
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
	// TrackKeys, when not nil, are the keys Hooks.Read remembers for a
	// read-only command instead of the command's own: a script's declared
	// keys while it runs, as Redis 7.0 remembers the script caller's keys
	// for every read-only command the script calls. Borrowed, like Args;
	// the producer sets and clears it, the runtime only passes it on.
	TrackKeys [][]byte

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
	// rewrite, when a handler called LogAs, holds the RESP commands the
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

	env     *Env     // the keyspace (Bind)
	single  *Store   // the store of the shard held, when the command runs on exactly one
	ready   []byte   // serving a woken blocked client: the key that got data (park.go)
	Scratch [20]byte // scratch for formatting integer-encoded values
	// snapKeys and snapFlags are SnapBeforeCommand's key positions, kept
	// so a write during a snapshot allocates nothing (snapshot.go).
	snapKeys  []int
	snapFlags []command.KeyFlag
}

// Bind attaches c to the keyspace e (a producer calls Runtime.Bind, which
// calls this, once per context it keeps).
func (c *Ctx) Bind(e *Env) { c.env = e }

// db returns the database that owns key in the selected database number.
// REQUIRES: the caller holds the token of the shard that owns key.
func (c *Ctx) DBFor(key []byte) *DB {
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

// ---- reply helpers ---------------------------------------------------------

func (c *Ctx) OK() { c.Out = append(c.Out, resp.OK...) }

func (c *Ctx) Raw(b []byte) { c.Out = append(c.Out, b...) }

func (c *Ctx) Int(n int64) { c.Out = resp.AppendInt(c.Out, n) }

func (c *Ctx) Bulk(b []byte) { c.Out = resp.AppendBulk(c.Out, b) }

func (c *Ctx) Null() { c.Out = resp.AppendNull(c.Out, c.RESP3) }

func (c *Ctx) Array(n int) { c.Out = resp.AppendArrayHeader(c.Out, n) }

func (c *Ctx) Err(msg string) { c.Out = resp.AppendError(c.Out, msg) }

func (c *Ctx) Simple(s string) { c.Out = resp.AppendSimpleString(c.Out, s) }

func (c *Ctx) WrongType() { c.Out = append(c.Out, resp.ErrWrongType...) }

func (c *Ctx) SyntaxErr() { c.Out = append(c.Out, resp.ErrSyntax...) }

func (c *Ctx) NotInteger() { c.Out = append(c.Out, resp.ErrNotInteger...) }

func (c *Ctx) BulkString(s string) { c.Out = resp.AppendBulkString(c.Out, s) }

func (c *Ctx) Help(lines []string) { c.Out = resp.AppendHelp(c.Out, lines) }

// EachDB calls fn with the selected database of every shard the command holds.
func (c *Ctx) EachDB(fn func(d *DB)) {
	if c.single != nil {
		fn(c.single.dbs[c.DB])
		return
	}
	for _, st := range c.env.stores {
		fn(st.dbs[c.DB])
	}
}

// StoresHeld is the stores of the shards the command holds.
func (c *Ctx) StoresHeld() []*Store {
	if c.single != nil {
		return []*Store{c.single}
	}
	return c.env.stores
}

// NumShards is the number of shards (of stores) in c's keyspace.
func (c *Ctx) NumShards() int { return len(c.env.stores) }

// StoreAt is shard i's store, for a command the runtime routed to shard i
// (SCAN, by its cursor).
// REQUIRES: the caller holds shard i.
func (c *Ctx) StoreAt(i int) *Store { return c.env.stores[i] }

// ---- what the runtime's execute uses -----------------------------------------

// Enter gives c the store of the one shard its command runs on (nil: it runs
// on several, whose stores it reaches through the Env). Only the runtime
// calls it, holding that shard's token.
//
// The store takes the hash Route recorded for the command's first key
// (keyHint), when Route found the command runs on this store alone: its
// DBs' lookups of that key then hash nothing. Finished takes it back.
func (c *Ctx) Enter(st *Store) {
	c.single = st
	if st == nil {
		return
	}
	st.hint = keyHint{}
	if r := &c.route; r.hint.n != 0 && r.routedFor(c) && r.where == OneShard && r.one == st.id {
		st.hint = r.hint
	}
}

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

// Finished clears what one execution consumed: the resolved subcommand,
// RouteFor's finding and the key hash its store took from it (Enter).
func (c *Ctx) Finished() {
	c.Sub, c.route.cmd = nil, nil
	if c.single != nil {
		c.single.hint = keyHint{}
	}
}

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

// CommandKeys appends the keys of the running command to dst, as its key
// specification finds them (what a Changed hook reports as changed).
func (c *Ctx) CommandKeys(dst [][]byte) [][]byte {
	var buf [16]int
	for _, i := range c.Cmd.Keys(c.Args, buf[:0]) {
		dst = append(dst, c.Args[i])
	}
	return dst
}
