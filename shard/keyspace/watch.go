package keyspace

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

// Touched marks the Watches on key dirty. Called by every primitive that
// changes a key; one nil check when nothing is watched.
func (d *DB) Touched(key string) {
	d.CountChange()
	d.touchedWatches(key)
}

// CountChange counts one change to the shard's keys (Redis' server.dirty):
// the save rules read it, and Runtime.run logs a command that moved it.
// Consumer-group bookkeeping calls it alone: Redis counts it without
// signalling WATCH.
func (d *DB) CountChange() {
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
// REQUIRES: the caller holds the shards of keys.
func (e *Env) Watch(w *Watch, db int, keys [][]byte) {
	for _, k := range keys {
		d := e.stores[e.shardOf(k)].dbs[db]
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
}

// Shards is the set of the shards of w's keys, of n.
func (w *Watch) Shards(n int) ShardSet {
	var set ShardSet
	for _, wk := range w.keys {
		set.Add(ShardOf([]byte(wk.key), n))
	}
	return set
}

// Unwatch forgets all of w's keys and clears its dirty mark.
// REQUIRES: the caller holds w.Shards.
func (e *Env) Unwatch(w *Watch) {
	for _, wk := range w.keys {
		d := e.stores[e.shardOf([]byte(wk.key))].dbs[wk.db]
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
	w.keys = w.keys[:0]
	w.dirty.Store(false)
}

// WatchFailed reports whether EXEC must abort: a watched key changed, or
// expired since it was watched (now is unix ms).
// REQUIRES: the caller holds every shard (Runtime.HoldAll).
func (e *Env) WatchFailed(w *Watch, now int64) bool {
	if w.dirty.Load() {
		return true
	}
	for _, wk := range w.keys {
		d := e.stores[e.shardOf([]byte(wk.key))].dbs[wk.db]
		if o, pos := d.Find([]byte(wk.key)); o != nil && o.HasExpire() && d.ExpireAtSlot(pos) <= now {
			return true
		}
	}
	return false
}
