package keyspace

import (
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/command"
)

// Parking blocked clients (the API handlers use is in park.go).
//
// A blocking command runs holding the shards of all its keys (Route sends
// every blocking command through ExecMulti). When it finds nothing to serve,
// c.block registers a Waiter in the blocked table of each key's database, in
// arrival order, and hands it to the producer through Ctx.Blocked; the
// producer parks the client until Unblocked.
//
// When a key someone waits on is created as a list, sorted set or stream
// (DB.insert), a stream grows or loses a group (SignalReady), or the key
// goes or changes type (DB.detach, setString, flush: an XREADGROUP waiting
// on it must hear that its stream is gone), the key goes on its shard's
// ready queue. After each command, the shard holder serves ready keys before
// it lets go of the shard: for each waiter, oldest first, it runs the waiter's
// command again with c.ready set to that key (so the handler touches no other
// key), and a run that replies delivers the reply and ends the wait. So a
// pushed element goes to the client that blocked first, before any later
// command can take it, as in Redis.
//
// A waiter's state moves waitWaiting → waitServing → waitWaiting (nothing to
// serve after all) or → waitDone; the timeout timer and Cancel move it
// waitWaiting → waitDone. Whoever makes it waitDone delivers (or, for Cancel,
// drops) the one reply; a shard that finds a waiter being served by another
// shard skips it. Waiters that are done stay in other keys' lists until those
// lists are next walked or grown (pruned then).

const (
	waitWaiting int32 = iota
	waitServing
	waitDone
)

// Unblocker is the producer's side of a parked client.
type Unblocker interface {
	// Unblocked is called once, from any goroutine, with the reply that ends
	// the wait. retry means there is no reply: the command must be run again
	// (through ExecMulti, with Ctx.RetryDeadline set to the waiter's Deadline)
	// because serving it needs a shard the server did not hold.
	Unblocked(reply []byte, retry bool)
}

// Waiter is one parked client.
type Waiter struct {
	state    atomic.Int32
	owner    Unblocker
	env      *Env
	db       int
	resp3    bool
	cmd      *command.Command
	args     [][]byte // owned copies of the command's arguments
	local    [][]byte // keys that must live on the serving shard (BLMOVE's destination)
	deadline int64    // unix ms; 0 = never
	timeout  TimeoutReply
	kind     Kind // the type of key the command pops from (list, zset, stream)
	// group: an XREADGROUP, which, as Redis 7.0, is woken with an error
	// when its stream goes (deleted, overwritten by another type, renamed
	// away, flushed, expired) instead of waiting for a new one.
	group  bool
	timer  *time.Timer
	logEnd int64 // the append-only log's end after the serving command's change (aoflog.go)
}

// LogEnd is the append-only log's end offset after the change that served
// the waiter (0: none logged). Read it after the reply arrived (Unblocked):
// under appendfsync always the reply waits until the log is durable there.
func (w *Waiter) LogEnd() int64 { return w.logEnd }

// Command is the blocked command and its arguments (owned by the waiter).
func (w *Waiter) Command() (*command.Command, [][]byte) { return w.cmd, w.args }

// Deadline is the unix-ms time the wait ends; 0 = never.
func (w *Waiter) Deadline() int64 { return w.deadline }

// Cancel ends the wait without a reply (the client closed or was reset). It
// returns once no shard is serving the waiter.
func (w *Waiter) Cancel() bool { return w.finish(nil) }

// finish moves the waiter to done unless a shard got there first, waiting out
// a serve in progress, and delivers reply when it is not nil.
func (w *Waiter) finish(reply []byte) bool {
	for i := 0; ; i++ {
		if w.state.CompareAndSwap(waitWaiting, waitDone) {
			w.ended()
			if reply != nil {
				w.owner.Unblocked(reply, false)
			}
			return true
		}
		if w.state.Load() == waitDone {
			return false
		}
		if i > 30 {
			runtime.Gosched()
		}
	}
}

// ended is the bookkeeping of a wait that just became waitDone.
func (w *Waiter) ended() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.env.blocked.Add(-1)
}

// Unblock ends the wait from any goroutine as CLIENT UNBLOCK does: with
// the command's timeout reply when errReply is nil, else with errReply. It
// reports false when the wait had ended already (served, timed out,
// cancelled).
func (w *Waiter) Unblock(errReply []byte) bool {
	if errReply == nil {
		return w.finish(appendTimeoutReply(nil, w.timeout, w.resp3))
	}
	return w.finish(errReply)
}

func (w *Waiter) fire() { w.finish(appendTimeoutReply(nil, w.timeout, w.resp3)) }

// readyKey is a key that may serve waiters.
type readyKey struct {
	db  int
	key string
}

// park registers a waiter for the running command (see Ctx.block).
// REQUIRES: the caller holds the shards of all keys (ExecMulti).
func (c *Ctx) park(keys [][]byte, deadline int64, reply TimeoutReply) {
	if c.RetryDeadline != 0 && (deadline == 0 || c.RetryDeadline < deadline) {
		deadline = c.RetryDeadline
	}
	w := &Waiter{owner: c.Blocker, env: c.env, db: c.DB, resp3: c.RESP3, cmd: c.Cmd, deadline: deadline, timeout: reply}
	switch c.Cmd.Group {
	case "list":
		w.kind = KindList
	case "sorted-set":
		w.kind = KindZSet
	case "stream":
		w.kind = KindStream
		w.group = c.Cmd.Name == "xreadgroup"
	}
	w.args = make([][]byte, len(c.Args))
	for i, a := range c.Args {
		w.args[i] = append([]byte(nil), a...)
	}
	// Keys of the command that it does not wait on (a destination) must be on
	// the serving shard, else the client retries.
	for _, i := range c.Cmd.Keys(c.Args, nil) {
		if !slices.ContainsFunc(keys, func(k []byte) bool { return string(k) == string(c.Args[i]) }) {
			w.local = append(w.local, w.args[i])
		}
	}
	for _, key := range keys {
		d := c.DBFor(key)
		if d.blocked == nil {
			d.blocked = make(map[string][]*Waiter)
		}
		list := pruneDone(d.blocked[string(key)])
		d.blocked[string(key)] = append(list, w)
	}
	c.env.blocked.Add(1)
	c.Blocked = w
	if deadline != 0 {
		// Set w.timer before the timer can fire: Reset orders this write
		// before w.fire (which reads w.timer) for the race detector too.
		w.timer = time.AfterFunc(time.Duration(math.MaxInt64), w.fire)
		w.timer.Reset(time.Duration(max(deadline-time.Now().UnixMilli(), 0)) * time.Millisecond)
	}
}

func pruneDone(list []*Waiter) []*Waiter {
	out := list[:0]
	for _, w := range list {
		if w.state.Load() != waitDone {
			out = append(out, w)
		}
	}
	clear(list[len(out):])
	return out
}

// markReady queues key on its shard's ready list when clients wait on it.
func (d *DB) markReady(key string) {
	if _, ok := d.blocked[key]; !ok {
		return
	}
	for _, rk := range d.owner.ready {
		if rk.db == d.num && rk.key == key {
			return
		}
	}
	d.owner.ready = append(d.owner.ready, readyKey{d.num, key})
}

// ServeReady serves the waiters of the store's ready keys, oldest first:
// each waiter's command runs again through run (the runtime's execute on
// this store's shard) with the key that got data.
// REQUIRES: the caller holds the store's shard.
func (st *Store) ServeReady(run func(c *Ctx)) {
	for len(st.ready) > 0 {
		rk := st.ready[0]
		st.ready = st.ready[1:]
		if len(st.ready) == 0 {
			st.ready = st.ready[:0:0]
		}
		st.serveKey(rk, run)
	}
}

func (st *Store) serveKey(rk readyKey, run func(c *Ctx)) {
	d := st.dbs[rk.db]
	list := d.blocked[rk.key]
	key := []byte(rk.key)
	c := &st.serveCtx
	o, _ := d.Find(key)
	for i := 0; i < len(list); {
		w := list[i]
		if (o == nil || o.Kind != w.kind) && !w.group {
			// As Redis 7.0: a client waits for a key of its command's type;
			// a key of another type, or none, does not wake it. An
			// XREADGROUP runs again and replies that its stream is gone.
			i++
			continue
		}
		if !w.state.CompareAndSwap(waitWaiting, waitServing) {
			if w.state.Load() == waitDone {
				list = append(list[:i], list[i+1:]...)
				continue
			}
			i++ // another shard is serving it
			continue
		}
		if !st.servableHere(w) {
			w.state.Store(waitDone)
			w.ended()
			list = append(list[:i], list[i+1:]...)
			w.owner.Unblocked(nil, true)
			continue
		}
		*c = Ctx{DB: w.db, RESP3: w.resp3, Now: time.Now().UnixMilli(), Cmd: w.cmd, Args: w.args, env: st.env, ready: key}
		run(c)             // counted on the shard; execute does not serve ready keys while c.ready is set
		o, _ = d.Find(key) // the command may have emptied (deleted) the key
		if len(c.Out) == 0 {
			w.state.Store(waitWaiting)
			if w.kind == KindStream {
				i++ // stream readers wait for different IDs and groups: a later one may be served
				continue
			}
			break // the key has nothing more to give
		}
		reply := c.Out
		c.Out, c.Args = nil, nil
		w.logEnd, c.LogEnd = c.LogEnd, 0
		w.state.Store(waitDone)
		w.ended()
		list = append(list[:i], list[i+1:]...)
		w.owner.Unblocked(reply, false)
	}
	if len(list) == 0 {
		delete(d.blocked, rk.key)
		if len(d.blocked) == 0 {
			d.blocked = nil
		}
	} else {
		d.blocked[rk.key] = list
	}
}

// servableHere reports whether every key w's command writes besides the one it
// waits on lives in st.
func (st *Store) servableHere(w *Waiter) bool {
	for _, k := range w.local {
		if st.env.shardOf(k) != st.id {
			return false
		}
	}
	return true
}

// Aborter is an Unblocker the server can end a wait for without data or a
// timeout: it gets the reply and must then close the connection (Redis'
// disconnectAllBlockedClients sets CLIENT_CLOSE_AFTER_REPLY). An owner that
// is no Aborter gets the reply through Unblocked.
type Aborter interface {
	Aborted(reply []byte)
}

// AbortWaiters ends the wait of every client blocked on a key of this store
// with reply (REPLICAOF on a master: the clients' commands were meant for a
// master's data). A waiter parked on keys of several stores is ended once,
// by whichever store gets to it first. It returns how many it ended.
// REQUIRES: the caller holds the store's shard.
func (st *Store) AbortWaiters(reply []byte) int {
	n := 0
	for _, d := range st.dbs {
		for key, list := range d.blocked {
			for _, w := range list {
				if w.abort(reply) {
					n++
				}
			}
			delete(d.blocked, key)
		}
		d.blocked = nil
	}
	// Keys queued for serving have no waiters left.
	st.ready = st.ready[:0:0]
	return n
}

// abort is finish for AbortWaiters: it tells an Aborter owner so.
func (w *Waiter) abort(reply []byte) bool {
	a, ok := w.owner.(Aborter)
	if !ok {
		return w.finish(reply)
	}
	for i := 0; ; i++ {
		if w.state.CompareAndSwap(waitWaiting, waitDone) {
			w.ended()
			a.Aborted(reply)
			return true
		}
		if w.state.Load() == waitDone {
			return false
		}
		if i > 30 {
			runtime.Gosched()
		}
	}
}
