package shard

import (
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// SetMaxMemory applies maxmemory (bytes, 0 = unlimited) and maxmemory-policy;
// commands see them from their next check on. Keys keep their access words:
// after a switch between LRU and LFU policies they take a while to mean the
// new thing again, as in Redis.
func (rt *Runtime) SetMaxMemory(limit int64, p keyspace.Policy) {
	rt.env.SetMaxMemory(limit, p)
}

// MaxMemory reports the limit and policy in force.
func (rt *Runtime) MaxMemory() (limit int64, p keyspace.Policy) {
	return rt.env.MaxMemory()
}

// MemoryUsed is the bytes the keyspace holds by the shards' accounting (INFO
// used_memory), summed from every shard's published counters.
func (rt *Runtime) MemoryUsed() int64 {
	var n int64
	for _, s := range rt.shards {
		n += s.store.MemoryUsed()
	}
	return n
}

// Rehashing reports whether any shard's key index is rehashing (holding
// its old table until the shard's cron or its writes drain it), from the
// shards' published flags: core/memdecay waits for it to end.
func (rt *Runtime) Rehashing() bool {
	for _, s := range rt.shards {
		if s.store.Rehashing() {
			return true
		}
	}
	return false
}

// overLimit sums every shard's memory and returns how far it is over limit
// (<= 0: under), publishing whether it is over for the shards' quick check.
func (rt *Runtime) overLimit(limit int64) int64 {
	over := rt.MemoryUsed() - limit
	rt.env.SetOverLimit(over > 0)
	return over
}

// ---- admission -----------------------------------------------------------------

// admit runs before a command on shard s while maxmemory is set (the caller
// checked): Redis' performEvictions for a command that may grow memory,
// evicting from s's keys only. It reports false, having replied -OOM, when
// the command must not run. REQUIRES: the caller holds s's token.
func (rt *Runtime) admit(s *Shard, c *keyspace.Ctx) bool {
	limit := rt.env.MemoryLimit()
	if limit == 0 || s.store.Loading() || !rt.denyOOM(c) {
		return true
	}
	// Quick check, own counters only: well under the fair share while the
	// last full sum was under the limit. The expiry loop re-sums 10 times a
	// second, so a shard far over its share (hash tags) is noticed.
	// Measured (BenchmarkMaxMemoryCheck): about 10 ns per SET.
	share := limit / int64(len(rt.shards))
	if !rt.env.OverLimit() && s.store.UsedDBsMemory(c.DB) < share-share/8 {
		return true
	}
	over := rt.overLimit(limit)
	if over <= 0 {
		return true
	}
	freed, timedOut := rt.evictFrom(s, over, keyspace.EvictionTimeLimit)
	if freed >= over || timedOut {
		if freed >= over {
			rt.overLimit(limit) // publish that it is under again
		}
		return true
	}
	c.Out = append(c.Out, keyspace.OOMReply...)
	return false
}

// growthEvictionBudget bounds evictAfterGrowth's time when the excess is
// larger than growthEvictWhole; an excess up to that is evicted whole,
// whatever it takes: 1 MiB is at most some thousands of keys, and under
// the race detector on a loaded machine even 50 ms did not always evict
// the 120 keys of a 13 KiB table.
const (
	growthEvictionBudget = 50 * time.Millisecond
	growthEvictWhole     = 1 << 20
)

// evictAfterGrowth evicts from s what a command's index or slot growth
// took over maxmemory (keyspace's TakeGrowth), under the policy, as the
// next write's admission would have. A table is many keys' worth (13 KiB
// at 1,800 keys: about 120 keys of 100-byte values), more than a command's
// eviction budget (500 us) allows on a loaded machine under the race
// detector, so it gets a budget of its own (above); what is left, the next
// writes and the expiry loop evict. Once per doubling of an index at the
// limit.
// REQUIRES: the caller holds s's token.
func (rt *Runtime) evictAfterGrowth(s *Shard) {
	limit := rt.env.MemoryLimit()
	if over := rt.overLimit(limit); over > 0 && !s.store.Loading() {
		budget := growthEvictionBudget
		if over <= growthEvictWhole {
			budget = time.Hour // in effect none: Evict stops when it freed over
		}
		if freed, _ := rt.evictFrom(s, over, budget); freed >= over {
			rt.overLimit(limit)
		}
	}
}

// admitHeld is admit for a command holding the shards in set (ExecMulti): it
// evicts from those shards, in ascending order.
func (rt *Runtime) admitHeld(set *keyspace.ShardSet, c *keyspace.Ctx) bool {
	limit := rt.env.MemoryLimit()
	if limit == 0 || !rt.denyOOM(c) {
		return true
	}
	over := rt.overLimit(limit)
	for i := 0; i < len(rt.shards) && over > 0; i++ {
		if !set.Has(i) || rt.shards[i].store.Loading() {
			continue
		}
		freed, timedOut := rt.evictFrom(rt.shards[i], over, keyspace.EvictionTimeLimit)
		if timedOut {
			return true
		}
		over -= freed
	}
	if over > 0 {
		c.Out = append(c.Out, keyspace.OOMReply...)
		return false
	}
	rt.overLimit(limit)
	return true
}

// OutOfMemory is Redis' "performEvictions() == EVICT_FAIL" for a command not
// executed by a shard now (one queued inside MULTI, or EXEC with queued
// commands that may grow memory): it evicts by the policy, taking each shard
// in turn, and reports whether used memory is still over maxmemory.
// It must not be called while holding a shard's token.
func (rt *Runtime) OutOfMemory() bool {
	limit := rt.env.MemoryLimit()
	if limit == 0 {
		return false
	}
	over := rt.overLimit(limit)
	if over <= 0 {
		return false
	}
	if _, p := rt.env.MaxMemory(); p == keyspace.NoEviction {
		return true
	}
	for _, s := range rt.shards {
		rt.acquire(s)
		var freed int64
		timedOut := false
		if !s.store.Loading() {
			freed, timedOut = rt.evictFrom(s, over, keyspace.EvictionTimeLimit)
		}
		rt.release(s)
		if timedOut {
			return false
		}
		if over -= freed; over <= 0 {
			rt.overLimit(limit)
			return false
		}
	}
	return true
}

// denyOOM reports whether c's command may grow memory (Redis' CMD_DENYOOM),
// looking at the subcommand for containers (XGROUP CREATE, ...).
func (rt *Runtime) denyOOM(c *keyspace.Ctx) bool {
	return c.Effective().Flags&command.FlagDenyOOM != 0
}

// keepUnderLimit is the expiry loop's eviction for shard s, with left
// shards (s included) still to visit this round: when the keyspace is over
// maxmemory it evicts from s its part of the excess, 1/left of it, or until
// budget is spent. Evicting all of it from the first shard visited emptied
// shard 0 when the excess came from outside the keys (the heap's
// fragmentation, heapwaste.go, which grows between ticks).
// REQUIRES: the caller holds s's token.
func (rt *Runtime) keepUnderLimit(s *Shard, left int, budget time.Duration) {
	limit := rt.env.MemoryLimit()
	if limit == 0 || s.store.Loading() {
		return
	}
	if over := rt.overLimit(limit); over > 0 {
		need := (over + int64(left) - 1) / int64(left)
		if freed, _ := rt.evictFrom(s, need, budget); freed >= over {
			rt.overLimit(limit)
		}
	}
}

// ---- eviction ---------------------------------------------------------------------

// evictFrom deletes keys of shard s chosen by the policy until need bytes are
// freed, nothing in s can be evicted, or budget is spent (checked every 16
// keys, as Redis does). It returns the bytes freed and whether it stopped on
// the budget. REQUIRES: the caller holds s's token.
func (rt *Runtime) evictFrom(s *Shard, need int64, budget time.Duration) (freed int64, timedOut bool) {
	start := time.Now()
	freed, keys, timedOut := s.store.Evict(need, budget)
	if lat := rt.latency.Load(); lat != nil && keys > 0 {
		lat.AddIfNeeded("eviction-cycle", time.Since(start))
	}
	return freed, timedOut
}
