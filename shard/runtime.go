package shard

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/latency"
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

// MaxShards bounds the shard count so a multi-key command can name its shards
// in a fixed-size bit set.
const MaxShards = 256

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
}

// Runtime owns the shards and hides the drain strategy.
type Runtime struct {
	shards   []*Shard
	strategy Strategy
	table    *command.Table
	handlers []handler // by command ID; nil for commands not executed by shards
	routes   []route   // by command ID
	onPanic  func(string, any, []byte)
	panics   int64

	expireEvery  time.Duration
	hot          *hotRing // per-second per-shard rates (hotshards.go)
	limits       encodingLimits
	blocked      atomic.Int64 // parked clients
	latency      atomic.Pointer[latency.Monitor]
	snapRunning  atomic.Bool                // a WriteSnapshot is running (snapshot.go)
	prop         atomic.Pointer[propagator] // the append-only log's feed (aoflog.go); nil when off
	snapCompress atomic.Bool                // snapshots compress strings with LZF (rdbcompression)
	evict        evictor                    // maxmemory, eviction policy and access clock (evict.go)
	stop         chan struct{}
	wg           sync.WaitGroup
}

// New builds the shards. Call Start to begin background work.
func New(cfg Config, table *command.Table) (*Runtime, error) {
	if cfg.Shards < 1 || cfg.Shards > MaxShards {
		return nil, fmt.Errorf("shards: got %d; want 1..%d", cfg.Shards, MaxShards)
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
		stop:        make(chan struct{}),
	}
	for i := range cfg.Shards {
		rt.shards = append(rt.shards, newShard(i, cfg.QueueCap))
		rt.shards[i].prop = &rt.prop
	}
	rt.hot = newHotRing(cfg.Shards)
	rt.evict.attach(rt.shards)
	if err := rt.register(); err != nil {
		return nil, err
	}
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
		s.freeOffHeap() // unmapped now, not at exit: the keys stay, empty
		s.token.Store(0)
	}
}

// NumShards is the number of shards.
func (rt *Runtime) NumShards() int { return len(rt.shards) }

// Strategy reports the drain strategy in use.
func (rt *Runtime) Strategy() Strategy { return rt.strategy }

// ShardOf returns the shard that owns key: xxhash of the key, or of the part
// between the first '{' and the next '}' when that part is not empty (Redis
// Cluster's hash tag rule), so keys sharing a tag live on one shard.
func (rt *Runtime) ShardOf(key []byte) int {
	return int(xxhash.Sum64(hashTag(key)) % uint64(len(rt.shards)))
}

func hashTag(key []byte) []byte {
	for i, c := range key {
		if c == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						return key[i+1 : j]
					}
					return key
				}
			}
			return key
		}
	}
	return key
}

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
// while holding a token except for higher-numbered ones (ExecMulti), and queued
// batches never need a second token, so this cannot deadlock.
func (rt *Runtime) acquire(s *Shard) {
	for i := 0; !s.tryAcquire(); i++ {
		if i > 30 {
			runtime.Gosched()
		}
	}
}

// release lets go of s's token after draining what is queued. A producer that
// published a batch while the token was held relies on the re-check below.
func (rt *Runtime) release(s *Shard) {
	if rt.strategy == Dedicated {
		s.token.Store(0)
		if s.queue.ready() {
			s.signal()
		}
		return
	}
	for {
		rt.drain(s)
		s.token.Store(0)
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
			s.token.Store(0)
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
		c.Cmd = q.cmd
		c.Args = b.argv[q.argStart:q.argEnd]
		rt.exec(s, c)
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
// command must be queued instead (see Batch and TrySubmit).
func (rt *Runtime) TryExec(idx int, c *Ctx) bool {
	if rt.strategy == Dedicated {
		return false
	}
	s := rt.shards[idx]
	if !s.tryAcquire() {
		return false
	}
	rt.exec(s, c)
	rt.release(s)
	return true
}

// execHere runs c's command (c.Cmd, c.Args) in the calling goroutine,
// waiting for the tokens of the shard or shards it routes to, and appends the
// reply to c.Out. It reports false, running nothing, for a command that is
// not a shard command. Loading and replay use it; connections use TryExec,
// TrySubmit and ExecMulti, which never wait on a token inside an event loop.
func (rt *Runtime) execHere(c *Ctx) bool {
	switch idx, where := rt.Route(c.Cmd, c.Args); where {
	case OneShard:
		s := rt.shards[idx]
		rt.acquire(s)
		rt.exec(s, c)
		rt.release(s)
	case Coordinated:
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
// order, so the command is atomic across shards.
func (rt *Runtime) ExecMulti(c *Ctx) {
	var set shardSet
	if rt.routes[c.Cmd.ID].kind == routeAll {
		set.all(len(rt.shards))
	} else {
		rt.keyShards(c.Cmd, c.Args, &set)
	}
	rt.holdSet(&set)
	c.single = nil
	if rt.evict.limit.Load() != 0 && !rt.admitHeld(&set, c) { // maxmemory (evict.go)
		rt.releaseSet(&set)
		return
	}
	if rt.snapRunning.Load() {
		rt.snapBeforeCommand(c) // snapshot.go
	}
	c.held, c.holding = set, true
	rt.run(c)
	c.holding = false
	rt.releaseSet(&set)
}

// holdSet takes the shards in set in ascending order (see acquire).
func (rt *Runtime) holdSet(set *shardSet) {
	for i := range len(rt.shards) {
		if set.has(i) {
			rt.acquire(rt.shards[i])
		}
	}
}

// releaseSet serves the clients blocked on keys the held commands filled and
// lets the shards in set go.
func (rt *Runtime) releaseSet(set *shardSet) {
	for i := len(rt.shards) - 1; i >= 0; i-- {
		if set.has(i) {
			s := rt.shards[i]
			if len(s.ready) > 0 {
				rt.serveReady(s)
			}
			rt.release(s)
		}
	}
}

type shardSet [MaxShards / 64]uint64

func (s *shardSet) add(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s *shardSet) has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }
func (s *shardSet) all(n int) {
	for i := range n {
		s.add(i)
	}
}

// exec runs one command on shard s. REQUIRES: the caller holds s's token.
func (rt *Runtime) exec(s *Shard, c *Ctx) {
	c.single = s
	if rt.evict.limit.Load() != 0 && !rt.admit(s, c) { // maxmemory (evict.go)
		return
	}
	if s.snap != nil {
		rt.snapBeforeCommand(c) // snapshot.go
	}
	rt.run(c)
	if len(s.ready) > 0 {
		rt.serveReady(s)
	}
	// One atomic add per command: the total is derived (see Snapshot).
	switch f := c.Cmd.Flags; {
	case f&command.FlagWrite != 0:
		s.stats.writes.Add(1)
	case f&command.FlagReadonly != 0:
		s.stats.reads.Add(1)
	default:
		s.stats.other.Add(1)
	}
}

// run calls the handler and, when the append-only log is on and the command
// changed the dataset, records it there (aoflog.go).
func (rt *Runtime) run(c *Ctx) {
	p := rt.prop.Load()
	if p == nil || !rt.logged(c) {
		rt.call(c)
		return
	}
	before := rt.dirtyOf(c)
	c.rewrite, c.rewriteN = c.rewrite[:0], 0
	rt.call(c)
	if rt.dirtyOf(c) != before {
		p.propagate(c)
	}
}

// dirtyOf sums the change counters of the shards c's command may touch: its
// one shard, or every shard for commands that hold several (rare).
func (rt *Runtime) dirtyOf(c *Ctx) int64 {
	if c.single != nil {
		return c.single.dirty
	}
	var n int64
	for i, s := range rt.shards {
		if !c.holding || c.held.has(i) { // never a shard another goroutine holds
			n += s.dirty
		}
	}
	return n
}

// call calls the handler; a panic becomes an error reply so one bad command
// cannot take the server down (OnPanic records it: a panic is always a bug).
func (rt *Runtime) call(c *Ctx) {
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 16<<10)
			buf = buf[:runtime.Stack(buf, false)]
			c.Out = append(c.Out, "-ERR internal error while executing the command\r\n"...)
			if rt.onPanic != nil {
				rt.onPanic(c.Cmd.FullName, r, buf)
			}
		}
	}()
	rt.handlers[c.Cmd.ID](c)
}

// ---- active expiry ---------------------------------------------------------

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
		rt.evict.tick(time.Now()) // the access clock (evict.go)
		lat := rt.latency.Load()
		for _, s := range rt.shards {
			rt.acquire(s)
			// A quarter of the period, shared by the shards, as Redis' slow cycle
			// (ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC) bounds its own.
			now := time.Now()
			deadline := now.Add(rt.expireEvery / 4 / time.Duration(len(rt.shards))).UnixNano()
			for _, d := range s.dbs {
				if s.loading {
					break // the log being replayed decides what expired
				}
				d.expireCycle(now.UnixMilli(), deadline)
			}
			rt.keepUnderLimit(s, rt.expireEvery/4/time.Duration(len(rt.shards))) // evict.go
			rt.release(s)
			if lat != nil {
				// How long the shard was held: what its clients waited.
				lat.AddIfNeeded("expire-cycle", time.Since(now))
			}
		}
	}
}

// ReportLatency makes the runtime record its latency events (expire-cycle)
// in m, as Redis' latency monitor does.
func (rt *Runtime) ReportLatency(m *latency.Monitor) { rt.latency.Store(m) }
