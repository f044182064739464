package shard

import (
	"sync/atomic"
)

// WATCH and EXEC (MULTI/EXEC's optimistic lock).
//
// A Watch is one client's watched keys. Registering puts the Watch in the
// watched table of each key's database; every change to a watched key (a
// key created, deleted, expired, its value or its expiry changed: the DB
// primitives call touched) marks the Watches on it dirty. EXEC holds every
// shard (HoldAll), asks WatchFailed, runs the queued commands with ExecHeld
// and lets go (ReleaseAll), so nothing can change a watched key between the
// check and the commands.

// Watch is one client's watched keys. Its methods are called by the client's
// own goroutine; dirty is set by whichever shard holder changes a key.
type Watch struct {
	dirty atomic.Bool
	keys  []watchedKey
}

type watchedKey struct {
	db  int
	key string
}

// Watching reports whether any key is watched.
func (w *Watch) Watching() bool { return len(w.keys) > 0 }

// touched marks the Watches on key dirty. Called by every primitive that
// changes a key; one nil check when nothing is watched.
func (d *DB) touched(key string) {
	d.countChange()
	d.touchedWatches(key)
}

// countChange counts one change to the shard's keys (Redis' server.dirty):
// the save rules read it, and Runtime.run logs a command that moved it.
// Consumer-group bookkeeping calls it alone: Redis counts it without
// signalling WATCH.
func (d *DB) countChange() {
	if s := d.owner; s != nil {
		s.dirty++
		s.dirtyPub.Store(s.dirty)
	}
}

// touchedWatches marks the Watches on key dirty without counting a change:
// insert uses it, since the value a new key gets counts (a SET of a new key
// is one change, as in Redis).
func (d *DB) touchedWatches(key string) {
	if d.watched == nil {
		return
	}
	for _, w := range d.watched[key] {
		w.dirty.Store(true)
	}
}

// Watch adds keys of database db to w.
func (rt *Runtime) Watch(w *Watch, db int, keys [][]byte) {
	var set shardSet
	for _, k := range keys {
		set.add(rt.ShardOf(k))
	}
	rt.holdSet(&set)
	for _, k := range keys {
		d := rt.shards[rt.ShardOf(k)].store.dbs[db]
		dup := false
		for _, wk := range w.keys {
			if wk.db == db && wk.key == string(k) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		key := string(k)
		w.keys = append(w.keys, watchedKey{db, key})
		if d.watched == nil {
			d.watched = make(map[string][]*Watch)
		}
		d.watched[key] = append(d.watched[key], w)
	}
	rt.releaseSet(&set)
}

// Unwatch forgets all of w's keys and clears its dirty mark.
func (rt *Runtime) Unwatch(w *Watch) {
	if len(w.keys) == 0 {
		w.dirty.Store(false)
		return
	}
	var set shardSet
	for _, wk := range w.keys {
		set.add(rt.ShardOf([]byte(wk.key)))
	}
	rt.holdSet(&set)
	for _, wk := range w.keys {
		d := rt.shards[rt.ShardOf([]byte(wk.key))].store.dbs[wk.db]
		list := d.watched[wk.key]
		for i, x := range list {
			if x == w {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(d.watched, wk.key)
			if len(d.watched) == 0 {
				d.watched = nil
			}
		} else {
			d.watched[wk.key] = list
		}
	}
	rt.releaseSet(&set)
	w.keys = w.keys[:0]
	w.dirty.Store(false)
}

// WatchFailed reports whether EXEC must abort: a watched key changed, or
// expired since it was watched (now is unix ms).
// REQUIRES: HoldAll is in effect.
func (rt *Runtime) WatchFailed(w *Watch, now int64) bool {
	if w.dirty.Load() {
		return true
	}
	for _, wk := range w.keys {
		d := rt.shards[rt.ShardOf([]byte(wk.key))].store.dbs[wk.db]
		if o, _ := d.find([]byte(wk.key)); o != nil && o.expireAt != 0 && o.expireAt <= now {
			return true
		}
	}
	return false
}

// HoldAll takes every shard, in ascending order (EXEC). The commands run
// with ExecHeld until ReleaseAll are one transaction in the append-only log.
func (rt *Runtime) HoldAll() {
	var all shardSet
	all.all(len(rt.shards))
	rt.holdSet(&all)
	if p := rt.env.prop.Load(); p != nil {
		p.beginTxn()
	}
}

// ExecHeld runs c's command while HoldAll is in effect, through the one
// entry point (Runtime.execute) with the shards Route recorded in c (routed
// here when the producer did not): the command counts on the shards of its
// keys, and the clients it unblocks are served at ReleaseAll, after the
// transaction.
func (rt *Runtime) ExecHeld(c *Ctx) {
	r := &c.route
	if !r.routedFor(c) {
		rt.RouteFor(c, c.Cmd, c.Args)
	}
	var s *Shard
	if r.where == OneShard {
		s = rt.shards[r.one]
	}
	c.inTxn = true
	rt.execute(s, c)
	c.inTxn = false
}

// ReleaseAll serves the clients blocked on keys the held commands filled and
// lets every shard go.
// It returns the append-only log's end offset after the transaction's
// changes (0 when nothing was logged): under appendfsync always, EXEC's reply
// waits for it.
func (rt *Runtime) ReleaseAll() int64 {
	var end int64
	if p := rt.env.prop.Load(); p != nil {
		end = p.endTxn()
	}
	var all shardSet
	all.all(len(rt.shards))
	rt.releaseSet(&all)
	return end
}
