package shard

import "github.com/svcdb/svcdb/shard/keyspace"

// Watch adds keys of database db to w.
func (rt *Runtime) Watch(w *keyspace.Watch, db int, keys [][]byte) {
	var set keyspace.ShardSet
	for _, k := range keys {
		set.Add(rt.ShardOf(k))
	}
	rt.holdSet(&set)
	rt.env.Watch(w, db, keys)
	rt.releaseSet(&set)
}

// Unwatch forgets all of w's keys and clears its dirty mark.
func (rt *Runtime) Unwatch(w *keyspace.Watch) {
	if !w.Watching() {
		rt.env.Unwatch(w) // clears the dirty mark
		return
	}
	set := w.Shards(len(rt.shards))
	rt.holdSet(&set)
	rt.env.Unwatch(w)
	rt.releaseSet(&set)
}

// WatchFailed reports whether EXEC must abort: a watched key changed, or
// expired since it was watched (now is unix ms).
// REQUIRES: HoldAll is in effect.
func (rt *Runtime) WatchFailed(w *keyspace.Watch, now int64) bool {
	return rt.env.WatchFailed(w, now)
}

// HoldAll takes every shard, in ascending order (EXEC). The commands run
// with ExecHeld until ReleaseAll are one transaction in the append-only log.
func (rt *Runtime) HoldAll() {
	var all keyspace.ShardSet
	all.All(len(rt.shards))
	rt.holdSet(&all)
	if p := rt.env.LogFeed(); p != nil {
		p.BeginTxn()
	}
}

// ExecHeld runs c's command while HoldAll is in effect, through the one
// entry point (Runtime.execute) with the shards Route recorded in c (routed
// here when the producer did not): the command counts on the shards of its
// keys, and the clients it unblocks are served at ReleaseAll, after the
// transaction.
func (rt *Runtime) ExecHeld(c *keyspace.Ctx) {
	if !c.Routed() {
		rt.RouteFor(c, c.Cmd, c.Args)
	}
	var s *Shard
	if where, one := c.RoutedTo(); where == keyspace.OneShard {
		s = rt.shards[one]
	}
	c.SetInTxn(true)
	rt.execute(s, c)
	c.SetInTxn(false)
}

// ReleaseAll serves the clients blocked on keys the held commands filled and
// lets every shard go.
// It returns the append-only log's end offset after the transaction's
// changes (0 when nothing was logged): under appendfsync always, EXEC's reply
// waits for it.
func (rt *Runtime) ReleaseAll() int64 {
	var end int64
	if p := rt.env.LogFeed(); p != nil {
		end = p.EndTxn()
	}
	var all keyspace.ShardSet
	all.All(len(rt.shards))
	rt.releaseSet(&all)
	return end
}
