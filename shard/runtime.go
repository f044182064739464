package shard

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/shard/commands"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Strategy says who executes a shard's queued batches.
type Strategy uint8

const (
	// RunToCompletion: the event loop that produces a command takes the shard's
	// token and executes it inline; a loop that finds the token taken queues its
	// batch, and the holder drains the queue before letting go. No cross-thread
	// wake-up when shards are not contended.
	RunToCompletion Strategy = iota
	// Dedicated: every shard has its own goroutine that drains its queue;
	// producers always queue and wake it once per burst.
	Dedicated
)

func (s Strategy) String() string {
	if s == Dedicated {
		return "dedicated"
	}
	return "run-to-completion"
}

// ParseStrategy reads a strategy name as String writes it.
func ParseStrategy(name string) (Strategy, error) {
	switch name {
	case "run-to-completion", "rtc", "":
		return RunToCompletion, nil
	case "dedicated":
		return Dedicated, nil
	}
	return 0, fmt.Errorf("unknown drain strategy %q; want run-to-completion or dedicated", name)
}

// Config sizes a Runtime.
type Config struct {
	Shards   int      // number of shards, 1..MaxShards
	QueueCap int      // batches each shard queue holds; default 1024
	Strategy Strategy // who drains the queues
	// ActiveExpireEvery is the period of the active expiry cycle (Redis: 1/hz =
	// 100ms); 0 means 100ms.
	ActiveExpireEvery time.Duration
	// OnPanic is told about a command handler that panicked (the client gets an
	// error reply and the server stays up). May be nil.
	OnPanic func(cmd string, recovered any, stack []byte)
	// CountHeapWaste adds the Go heap's fragmentation to used_memory
	// (heapwaste.go): for the server's own process, not for a runtime
	// inside another program, whose heap is not the keyspace's.
	CountHeapWaste bool
}

// Runtime owns the shards and hides the drain strategy.
type Runtime struct {
	shards   []*Shard
	strategy Strategy
	table    *command.Table
	env      *keyspace.Env // the keyspace: every shard's Store, the handlers (store.go)
	onPanic  func(string, any, []byte)

	expireEvery time.Duration
	waste       heapWaste // the Go heap's fragmentation, when counted (heapwaste.go)
	hot         *hotRing  // per-second per-shard rates (hotshards.go)
	latency     atomic.Pointer[latency.Monitor]
	snapRunning atomic.Bool                // a WriteSnapshot is running (snapshot.go)
	logSinks    logSinks                   // the append-only file and the replication stream (replica.go)
	hooks       atomic.Pointer[Hooks]      // notifications, tracking, replication (execute); nil when none
	fence       atomic.Pointer[writeFence] // a replica's: only its master's stream writes (replica.go); nil on a master
	// CLIENT PAUSE's hold of expiry and eviction is the keyspace's
	// (HoldExpiry): lazy expiry reads the same flag.
	snapCompress atomic.Bool       // snapshots compress strings with LZF (rdbcompression)
	noLog        bool              // a script's redis.set_repl left out the AOF (txn.go); the holder of every shard alone touches it
	functions    FunctionLibraries // FUNCTION LOAD's libraries for snapshots, LoadRDB and replay (functions.go); nil when none
	stop         chan struct{}
	wg           sync.WaitGroup
}

// New builds the shards. Call Start to begin background work.
func New(cfg Config, table *command.Table) (*Runtime, error) {
	if cfg.Shards < 1 || cfg.Shards > keyspace.MaxShards {
		return nil, fmt.Errorf("shards: got %d; want 1..%d", cfg.Shards, keyspace.MaxShards)
	}
	if cfg.QueueCap <= 0 {
		cfg.QueueCap = 1024
	}
	if cfg.ActiveExpireEvery <= 0 {
		cfg.ActiveExpireEvery = 100 * time.Millisecond
	}
	rt := &Runtime{
		strategy:    cfg.Strategy,
		table:       table,
		onPanic:     cfg.OnPanic,
		expireEvery: cfg.ActiveExpireEvery,
		waste:       newHeapWaste(cfg.CountHeapWaste),
		stop:        make(chan struct{}),
	}
	env, stores, err := keyspace.NewEnv(cfg.Shards, table, commands.Handlers())
	if err != nil {
		return nil, err
	}
	rt.env = env
	for i, st := range stores {
		s := newShard(i, cfg.QueueCap, st)
		s.runServed = func(c *keyspace.Ctx) { rt.execute(s, c) }
		rt.shards = append(rt.shards, s)
	}
	rt.hot = newHotRing(cfg.Shards)
	return rt, nil
}

// Start launches the active expiry cycle, the hot-shard sampler and, for
// Dedicated, the shard goroutines.
func (rt *Runtime) Start() {
	if rt.strategy == Dedicated {
		for _, s := range rt.shards {
			rt.wg.Add(1)
			go rt.serve(s)
		}
	}
	rt.wg.Add(2)
	go rt.expireLoop()
	go rt.hotSampler()
}

// Close stops background work. Batches still queued are drained first.
func (rt *Runtime) Close() {
	close(rt.stop)
	rt.wg.Wait()
	for _, s := range rt.shards {
		rt.acquire(s)
		rt.drain(s)
		s.store.FreeOffHeap() // unmapped now, not at exit: the keys stay, empty
		s.letGo()
	}
}

// Bind attaches c to the runtime's keyspace; a producer calls it once per
// context it keeps. The keyspace's Env itself stays inside the runtime: its
// methods touch stores and must run with their tokens held.
func (rt *Runtime) Bind(c *keyspace.Ctx) { c.Bind(rt.env) }

// NumShards is the number of shards.
func (rt *Runtime) NumShards() int { return len(rt.shards) }

// Strategy reports the drain strategy in use.
func (rt *Runtime) Strategy() Strategy { return rt.strategy }

// ShardOf returns the shard that owns key: xxhash of the key, or of the part
// between the first '{' and the next '}' when that part is not empty (Redis
// Cluster's hash tag rule), so keys sharing a tag live on one shard.
func (rt *Runtime) ShardOf(key []byte) int { return keyspace.ShardOf(key, len(rt.shards)) }

// Snapshots reads every shard's published counters.
func (rt *Runtime) Snapshots() []Snapshot {
	out := make([]Snapshot, len(rt.shards))
	for i, s := range rt.shards {
		out[i] = s.Snapshot()
	}
	return out
}

// ---- token handling -------------------------------------------------------

// acquire takes s's token, waiting for the current holder. Holders never wait
// while holding a token except for higher-numbered ones (holdSet: ExecMulti,
// HoldAll, Watch), and queued batches never need a second token, so this
// cannot deadlock.
//
// The wait spins briefly (a command holds a token about a microsecond), then
// yields a few times (the holder may be a goroutine waiting for this P: the
// expiry cycle, a Dedicated shard), then parks until the holder lets go. It
// used to yield in a loop for as long as the holder held on: with two event
// loops running MSET across shards, a fifth of svcdb's CPU went to
// runtime.Gosched while the peer loop drained a queue, CPU the peer and the
// client on the same machine needed (docs/performance.md, issue 21).
//
// No wake-up is lost: a waiter counts itself in tokenWaiters before its last
// tryAcquire, and letGo stores 0 before it reads tokenWaiters, so a holder
// that lets go after that failed attempt sees the waiter and leaves a
// wake-up in tokenFree (buffered: it keeps until the waiter reads it). A
// woken waiter that loses the token to another taker parks again, and that
// taker's letGo wakes it.
func (rt *Runtime) acquire(s *Shard) {
	for i := range acquireSpins + acquireYields {
		if s.tryAcquire() {
			return
		}
		if i >= acquireSpins {
			runtime.Gosched()
		}
	}
	s.tokenWaiters.Add(1)
	for !s.tryAcquire() {
		<-s.tokenFree
	}
	s.tokenWaiters.Add(-1)
}

// How acquire waits before it parks: tries in a row, then tries each after
// a runtime.Gosched.
const (
	acquireSpins  = 30
	acquireYields = 4
)

// release lets go of s's token after draining what is queued. A producer that
// published a batch while the token was held relies on the re-check below.
func (rt *Runtime) release(s *Shard) {
	if rt.strategy == Dedicated {
		s.letGo()
		if s.queue.ready() {
			s.signal()
		}
		return
	}
	for {
		rt.drain(s)
		s.letGo()
		if !s.queue.ready() || !s.tryAcquire() {
			return
		}
	}
}

func (s *Shard) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// serve is a Dedicated shard's goroutine.
func (rt *Runtime) serve(s *Shard) {
	defer rt.wg.Done()
	for {
		select {
		case <-s.wake:
		case <-rt.stop:
			return
		}
		for {
			rt.acquire(s)
			rt.drain(s)
			s.letGo()
			if !s.queue.ready() {
				break
			}
		}
	}
}

// drain executes every published batch in s's queue.
// REQUIRES: the caller holds s's token.
func (rt *Runtime) drain(s *Shard) {
	for b := s.queue.pop(); b != nil; b = s.queue.pop() {
		if b.control != nil { // a control message (inspect.go), not commands
			b.control(s)
			continue
		}
		s.stats.batches.Add(1)
		rt.execBatch(s, b)
	}
}

func (rt *Runtime) execBatch(s *Shard, b *Batch) {
	c := &b.Ctx
	c.Now = time.Now().UnixMilli()
	c.Out = b.Out
	// One clock read per command: each is timed from the end of the one before.
	t := cmdstats.Now()
	for i := range b.cmds {
		q := &b.cmds[i]
		q.outStart = len(c.Out)
		c.Cmd, c.Sub = q.cmd, nil
		c.Args = b.argv[q.argStart:q.argEnd]
		rt.execute(s, c)
		now := cmdstats.Now()
		q.ns, t = now-t, now
	}
	b.Out = c.Out
	b.finished = t // the last command's end: when the replies were ready
	c.Args = nil
	owner := b.Owner
	b.done.Store(true) // from here on the owner may reuse b
	owner.BatchDone()
}

// ---- the producer's side --------------------------------------------------

// TryExec runs c's command on shard idx now if its token is free and the
// strategy allows it, appending the reply to c.Out. It reports false when the
// command must be queued instead: the producer adds it to its Batch (Reset,
// Target, Add) and hands the batch over with TrySubmit.
func (rt *Runtime) TryExec(idx int, c *keyspace.Ctx) bool {
	if rt.strategy == Dedicated {
		c.ForgetRoute()
		return false
	}
	s := rt.shards[idx]
	if !s.tryAcquire() {
		c.ForgetRoute() // the command goes into a Batch, with its own Ctx
		return false
	}
	rt.execute(s, c)
	rt.release(s)
	return true
}

// execHere runs c's command (c.Cmd, c.Args) in the calling goroutine,
// waiting for the tokens of the shard or shards it routes to, and appends the
// reply to c.Out. It reports false, running nothing, for a command that is
// not a shard command. AOF replay uses it. Connections use TryExec (never
// waits), TrySubmit (never waits: a full queue parks the connection) and
// ExecMulti (waits for the tokens of the shards it needs, in ascending order:
// bounded by the commands running on them now, see acquire).
func (rt *Runtime) execHere(c *keyspace.Ctx) bool {
	switch idx, where := rt.RouteFor(c, c.Cmd, c.Args); where {
	case keyspace.OneShard:
		s := rt.shards[idx]
		rt.acquire(s)
		rt.execute(s, c)
		rt.release(s)
	case keyspace.Coordinated:
		rt.ExecMulti(c)
	default:
		return false
	}
	return true
}

// TrySubmit queues b for its shard (set with Target) and reports true; the
// owner is told through b.Owner.BatchDone when b.Done. When the shard's queue
// is full it reports false and keeps nothing: b stays the caller's, and
// b.Owner.BatchDone is called once the shard has taken a batch out of the
// queue, when the caller may try again (it may find the queue full again).
// That is the back-pressure: the producer parks the connection (stops
// parsing it) instead of waiting or dropping. Under RunToCompletion a full
// queue whose token is free is drained by the caller first, as a producer
// would have done had it found the token free before queueing.
func (rt *Runtime) TrySubmit(b *Batch) bool {
	b.seal()
	s := rt.shards[b.shard]
	if !s.queue.push(b) {
		if rt.strategy == RunToCompletion && s.tryAcquire() {
			rt.release(s) // drains the queue
		}
		// Registered before the last attempt: a consumer popping after it
		// failed sees the registration and wakes us.
		s.queue.waitRoom(b)
		if !s.queue.push(b) {
			return false
		}
		// Queued after all; the wake-up that may still come is ignored by
		// an owner whose batch is not done.
	}
	if rt.strategy == Dedicated {
		s.signal()
		return true
	}
	if s.tryAcquire() {
		rt.release(s)
	}
	return true
}

// Target sets the shard b's commands go to. Call before the first Add.
func (b *Batch) Target(shard int) { b.shard = shard }

// TargetShard is the shard set with Target.
func (b *Batch) TargetShard() int { return b.shard }

// ExecMulti runs c's command holding every shard it involves (all shards for
// keyspace-wide commands, else the shards of its keys), taken in ascending
// order, so the command is atomic across shards. It waits for tokens (see
// acquire): holders never wait for a lower-numbered token, so the wait is
// bounded by the commands running on those shards now. The shards are the
// ones Route recorded in c (routed here when the producer did not route c).
func (rt *Runtime) ExecMulti(c *keyspace.Ctx) {
	if !c.Routed() {
		rt.RouteFor(c, c.Cmd, c.Args)
	}
	if where, one := c.RoutedTo(); where == keyspace.OneShard {
		c.RoutedSet().Add(one)
	}
	set := *c.RoutedSet()
	rt.holdSet(&set)
	rt.execute(nil, c)
	rt.releaseSet(&set)
}

// holdSet takes the shards in set in ascending order (see acquire).
func (rt *Runtime) holdSet(set *keyspace.ShardSet) {
	for i := range len(rt.shards) {
		if set.Has(i) {
			rt.acquire(rt.shards[i])
		}
	}
}

// releaseSet serves the clients blocked on keys the held commands filled and
// lets the shards in set go.
func (rt *Runtime) releaseSet(set *keyspace.ShardSet) {
	for i := len(rt.shards) - 1; i >= 0; i-- {
		if set.Has(i) {
			s := rt.shards[i]
			if s.store.HasReady() {
				rt.serveReady(s)
			}
			rt.release(s)
		}
	}
}

// ---- the one way a command runs ----------------------------------------------

// Hooks are where keyspace notifications, client tracking and replication
// plug into execution: "a command ran on database D and changed these keys".
// Every field is nil by default, and each costs one nil check per command.
// They are called by the token holder while the command's shards are still
// held, so they see the change and nothing after it; they must not block,
// take a token or keep c or its arguments past the call.
type Hooks struct {
	// Changed is called after a command that changed the dataset (the
	// change counter of a shard it held moved): c.DB is the database,
	// c.Cmd, c.Args and CommandKeys say what ran and which keys it names.
	// Commands that ran and changed nothing are not reported.
	Changed func(c *keyspace.Ctx)
	// Read is called after a read-only command (its subcommand's flags for
	// a container) ran for a context with TrackReads set, whatever its
	// reply, as Redis remembers a tracking client's keys in call(): c.Args
	// and CommandKeys name the keys it read (c.TrackKeys, when set, the
	// keys to remember instead: a script's declared keys). Client tracking
	// plugs in here.
	Read func(c *keyspace.Ctx)
	// Dropped is called for every key the keyspace removes on its own, not
	// as a command's change: lazy and active expiry, and eviction (Redis'
	// signalModifiedKey with no client). It gets the database number and
	// the key, valid for the call only, while the key's shard is held.
	Dropped func(db int, key string)
}

// SetHooks installs h (nil: none), at any time: a command running
// meanwhile sees the hooks before or after.
func (rt *Runtime) SetHooks(h *Hooks) {
	rt.hooks.Store(h)
	if h == nil {
		rt.env.SetKeyDropped(nil)
		return
	}
	rt.env.SetKeyDropped(h.Dropped)
}

// execute runs one command, and is the only function that does: a command
// on one shard (TryExec, queued batches, AOF replay), across shards
// (ExecMulti), inside EXEC (ExecHeld), and a woken blocked client's command
// (serveKey) all come here, so every per-command effect happens once, here,
// in this order:
//
//   - maxmemory admission (evict.go): not for a served waiter (admitted when
//     it first ran) nor inside EXEC (netloop refuses the EXEC as a whole);
//   - the running snapshot's before-command hook (snapshot.go);
//   - the handler, with panic recovery, and the append-only log's feed for
//     a command that changed the dataset (run, aoflog.go);
//   - the Hooks (Changed; Read for a client that tracks its reads);
//   - the hot-shard counters (count);
//   - serving the clients blocked on keys the command filled (keyspace/waiters.go):
//     here for one shard, at releaseSet for several, at ReleaseAll for EXEC.
//
// WATCH touches are not a step: the DB primitives mark watched keys as they
// change them (DB.touched, watch.go), so no path can skip them. Command
// statistics (INFO commandstats, latency, slow log) stay with the producer
// (netloop's account and executed), which times the whole command and
// knows the client; see docs/architecture.md.
//
// REQUIRES: the caller holds s's token when s is not nil (the command runs on
// s alone); else the shards of c.route.set (ExecMulti) or, with c.inTxn,
// every shard (HoldAll). Only the token holder touches a shard's data.
func (rt *Runtime) execute(s *Shard, c *keyspace.Ctx) {
	var st *keyspace.Store
	if s != nil {
		st = s.store
	}
	c.Enter(st)
	if f := rt.fence.Load(); f != nil && f.refuses(c) {
		c.Out = append(c.Out, errReadOnly...)
		c.Finished()
		return
	}
	if !c.Serving() && !c.InTxn() && rt.env.MemoryLimit() != 0 && !rt.admitCmd(s, c) {
		c.Finished()
		return
	}
	if st != nil && st.Snapshotting() || st == nil && rt.snapRunning.Load() {
		c.SnapBeforeCommand() // snapshot.go
	}
	rt.run(c)
	if s != nil && s.store.TakeGrowth() && rt.env.MemoryLimit() != 0 {
		rt.evictAfterGrowth(s) // admission.go
	}
	if c.TrackReads {
		rt.trackRead(c)
	}
	if c.Blocked == nil { // a command that parked counts when it is served (serveKey)
		rt.count(s, c)
	}
	if st != nil && !c.Serving() && !c.InTxn() && st.HasReady() {
		rt.serveReady(s) // keyspace/waiters.go; its waiters run through execute
	}
	c.Finished()
}

// trackRead hands a read-only command run for a tracking client to
// Hooks.Read, while its shards are still held: a write that follows it
// cannot come between the read and its record.
func (rt *Runtime) trackRead(c *keyspace.Ctx) {
	h := rt.hooks.Load()
	if h == nil || h.Read == nil || c.Effective().Flags&command.FlagReadonly == 0 {
		return
	}
	h.Read(c)
}

// admitCmd is maxmemory admission for the shard or shards c runs on.
func (rt *Runtime) admitCmd(s *Shard, c *keyspace.Ctx) bool {
	if s != nil {
		return rt.admit(s, c)
	}
	return rt.admitHeld(c.RoutedSet(), c)
}

// count adds the command to the hot-shard counters (hotshards.go) of every
// shard it touched: its one shard, or each shard of its keys when they span
// several, or every shard for a keyspace-wide command (KEYS, DBSIZE,
// FLUSHALL). So an MSET of keys on three shards counts once on each of the
// three: the counters measure each shard's load, and their sum is the number
// of (command, shard) pairs, not of commands. Inside EXEC the rule is the
// same (the shards HoldAll holds but the command does not touch do not count).
// A blocking command that parks its client is not counted then but when a
// shard serves it (once, on the serving shard); one that times out ran
// nothing and is not counted.
// One atomic add per shard; the total is derived (see Snapshot).
func (rt *Runtime) count(s *Shard, c *keyspace.Ctx) {
	f := c.Cmd.Flags
	if c.Sub != nil || len(c.Cmd.Subcommands) > 0 {
		f = c.Effective().Flags // a container counts as its subcommand
	}
	if s != nil {
		s.stats.count(f)
		return
	}
	set := c.RoutedSet()
	for i, sh := range rt.shards {
		if set.Has(i) {
			sh.stats.count(f)
		}
	}
}

func (st *shardStats) count(f command.Flag) {
	switch {
	case f&command.FlagWrite != 0:
		st.writes.Add(1)
	case f&command.FlagReadonly != 0:
		st.reads.Add(1)
	default:
		st.other.Add(1)
	}
}

// run calls the handler and, when the append-only log is on or a Changed
// hook is installed and the command changed the dataset, records it in the
// log (aoflog.go) and tells the hook.
func (rt *Runtime) run(c *keyspace.Ctx) {
	p, h := rt.env.LogFeed(), rt.hooks.Load()
	if p == nil && h == nil {
		rt.call(c)
		return
	}
	logged := p != nil && !rt.noLog && rt.logged(c)
	if !logged && (h == nil || h.Changed == nil) {
		rt.call(c)
		return
	}
	before := c.Changes()
	c.ResetLogRewrite()
	rt.call(c)
	if c.Changes() == before {
		return
	}
	if logged {
		p.Record(c)
	}
	if h != nil && h.Changed != nil {
		h.Changed(c)
	}
}

// call calls the handler; a panic becomes an error reply so one bad command
// cannot take the server down (OnPanic records it: a panic is always a bug).
// recover is called only when the handler did not return (a runtime call
// for every command otherwise, 0.7% of a GET's CPU).
func (rt *Runtime) call(c *keyspace.Ctx) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			buf := make([]byte, 16<<10)
			buf = buf[:runtime.Stack(buf, false)]
			c.Out = append(c.Out, "-ERR internal error while executing the command\r\n"...)
			if rt.onPanic != nil {
				rt.onPanic(c.Cmd.FullName, r, buf)
			}
		}
	}()
	rt.env.Handle(c)
	returned = true
}

// ---- active expiry ---------------------------------------------------------

// The active expiry cycle shares the CPU with the event loops: pinned to
// one CPU (GOMAXPROCS 1) it runs on the only P, and while it runs no loop
// does, so every connection waits for it. Redis' serverCron has the same
// property and keeps each piece short: its databasesCron rehashes one
// dictionary for a millisecond per call, its slow expire cycle stops at a
// quarter of the period. The cycle here keeps each piece as short:
//   - rehashStep gets one millisecond per cycle shared by the shards
//     (rehashBudget), not a millisecond for each shard and database: keys
//     spread evenly over 16 shards make all their indexes double at about
//     the same time, and a cycle that gave each a millisecond held the P
//     for 16 ms in one piece (a Go execution trace of memtier's 1:10 load
//     at pipeline 1, pinned, docs/performance.md "The pinned tail,
//     anatomy"); inserts and removes move entries themselves, so the
//     background share only finishes the rehash of an index nobody writes.
//   - runtime.Gosched between shards once the cycle has held the P for
//     yieldAfter: an event loop whose epoll_wait returned while the cycle
//     held the P waits in the run queue; it now runs a turn between two
//     shards instead of after all of them (or after sysmon's 10 ms
//     preemption). A cycle with nothing to rehash or expire (a few
//     microseconds a shard) still runs in one piece: a saturated loop gives
//     the P back only when it blocks or is preempted, and a yield after
//     every shard would stretch such a cycle over sixteen of those waits.
func (rt *Runtime) expireLoop() {
	defer rt.wg.Done()
	t := time.NewTicker(rt.expireEvery)
	defer t.Stop()
	for {
		select {
		case <-rt.stop:
			return
		case <-t.C:
		}
		rt.env.Tick(time.Now()) // the access clock (evict.go)
		rt.sampleHeapWaste()
		if rt.env.ExpiryHeld() {
			continue // CLIENT PAUSE: no key expires or is evicted behind the paused clients' backs
		}
		lat := rt.latency.Load()
		piece := time.Now() // since the cycle last gave the event loops the P
		for i, s := range rt.shards {
			if time.Since(piece) >= yieldAfter {
				runtime.Gosched() // let a waiting event loop run its turn (see above)
				piece = time.Now()
			}
			rt.acquire(s)
			// A quarter of the period, shared by the shards, as Redis' slow cycle
			// (ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC) bounds its own.
			now := time.Now()
			deadline := now.Add(rt.expireEvery / 4 / time.Duration(len(rt.shards))).UnixNano()
			rehashUntil := now.Add(rehashBudget / time.Duration(len(rt.shards))).UnixNano()
			s.store.ExpireCycle(now.UnixMilli(), deadline, rehashUntil)
			rt.keepUnderLimit(s, len(rt.shards)-i, rt.expireEvery/4/time.Duration(len(rt.shards))) // admission.go
			if s.store.HasReady() {
				rt.serveReady(s) // an expired stream's XREADGROUP waiters (blocking.go)
			}
			rt.release(s)
			if lat != nil {
				// How long the shard was held: what its clients waited.
				lat.AddIfNeeded("expire-cycle", time.Since(now))
			}
		}
	}
}

// rehashBudget is how long one expiry cycle spends moving rehashing key
// indexes' entries, shared by the shards: Redis' databasesCron spends a
// millisecond per call (incrementallyRehash) on one dictionary.
const rehashBudget = time.Millisecond

// yieldAfter is how long the expiry cycle holds the P before it lets the
// event loops run (expireLoop). With a shard's share of the rehash (62 us
// of 16) it yields after each rehashing shard, so the P is held for about
// 70-180 us at a time (100 us let two such shards run together: pieces of
// 140-200 us); a cycle with nothing to do (about 3 us a shard) still runs
// in one piece. Either is a small part of a pipeline-1 request's latency on
// a quiet machine (0.8-1.8 ms at memtier's 1:10 load, pinned).
const yieldAfter = 50 * time.Microsecond

// HoldExpiry stops (on) or restarts the active expiry cycle, the eviction
// it runs and lazy expiry's deletes, as Redis 7.0 holds them while clients
// are paused (CLIENT PAUSE), so the dataset does not change under a paused
// server: an expired key reads as missing and stays until the pause ends.
func (rt *Runtime) HoldExpiry(on bool) { rt.env.HoldExpiry(on) }

// ReportLatency makes the runtime record its latency events (expire-cycle)
// in m, as Redis' latency monitor does.
func (rt *Runtime) ReportLatency(m *latency.Monitor) { rt.latency.Store(m) }

// SetNotify sets the keyspace notification classes published (0: none)
// and the Notifier that publishes them (keyspace/notify.go).
func (rt *Runtime) SetNotify(classes keyspace.NotifyClass, fn keyspace.Notifier) {
	rt.env.SetNotify(classes, fn)
}
