package shard

import (
	"sync/atomic"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// Shard is one part of the keyspace with its queue and drain token.
type Shard struct {
	id    int
	token atomic.Int32 // 1 while someone executes this shard
	// tokenWaiters counts the goroutines parked in Runtime.acquire for
	// token; letGo wakes one through tokenFree (capacity 1) whenever it
	// lets the token go while any wait. See acquire for why no wake-up is
	// lost.
	tokenWaiters atomic.Int32
	tokenFree    chan struct{}
	queue        *queue
	wake         chan struct{} // Dedicated strategy: wakes the shard's goroutine

	// store is the shard's part of the keyspace. Only the holder of token
	// reaches it: execute hands it to the command's Ctx, maintenance
	// (expiry, eviction, snapshots, load, WATCH tables, inspection) takes
	// the token first or runs as a control message drained by the holder
	// (inspect.go). Nothing else in this package or outside reads it.
	store *keyspace.Store
	// runServed runs a woken blocked client's command through the runtime's
	// execute on this shard (Store.ServeReady); built once, in New.
	runServed func(c *keyspace.Ctx)

	stats shardStats
}

// shardStats are written by the token holder only and read atomically by
// anyone; padding keeps shards' counters off each other's cache lines.
type shardStats struct {
	_       [64]byte
	reads   atomic.Int64 // commands flagged readonly
	writes  atomic.Int64 // commands flagged write
	other   atomic.Int64 // commands that are neither (commands = reads + writes + other)
	batches atomic.Int64 // batches drained from the queue
	_       [32]byte
}

func newShard(id, queueCap int, st *keyspace.Store) *Shard {
	return &Shard{id: id, queue: newQueue(queueCap), wake: make(chan struct{}, 1), tokenFree: make(chan struct{}, 1), store: st}
}

// tryAcquire takes the token if it is free. The load first keeps waiters
// that poll a held token from stealing its cache line from the holder.
func (s *Shard) tryAcquire() bool { return s.token.Load() == 0 && s.token.CompareAndSwap(0, 1) }

// letGo releases the token and wakes one goroutine parked in acquire, if
// any. Every release of the token goes through here.
// REQUIRES: the caller holds the token.
func (s *Shard) letGo() {
	s.token.Store(0)
	if s.tokenWaiters.Load() > 0 {
		select {
		case s.tokenFree <- struct{}{}:
		default: // a wake-up is already pending: its waiter will retry
		}
	}
}

// Snapshot is what a reader outside the shard may see of it.
type Snapshot struct {
	ID      int
	Keys    [keyspace.NumDatabases]int64
	Expires [keyspace.NumDatabases]int64
	// AvgTTL is Redis' avg_ttl per database in milliseconds: a running
	// estimate from the keys the active expiry cycle samples (0 = none yet).
	AvgTTL     [keyspace.NumDatabases]int64
	Expired    int64
	Evicted    int64 // keys deleted to stay under maxmemory
	MemoryUsed int64
	Commands   int64
	Reads      int64 // commands flagged readonly
	Writes     int64 // commands flagged write
	Hits       int64
	Misses     int64
	QueueDepth int
	Batches    int64

	// MemoryOffHeap is the part of MemoryUsed held in strings off the Go
	// heap (bigstr.go).
	MemoryOffHeap int64
	// MemoryStructure is the part of MemoryUsed held by the slots, key
	// indexes and expiry lists; MemoryIndex the key indexes' part of it
	// (shard/keyspace/memory.go).
	MemoryStructure, MemoryIndex int64
	// MemoryHeapWaste is the shard's share of the Go heap's fragmentation
	// counted in MemoryUsed (heapwaste.go; 0 unless Config.CountHeapWaste).
	MemoryHeapWaste int64
}

// TotalKeys is the shard's key count across all databases.
func (sn *Snapshot) TotalKeys() int64 { return sumDBs(&sn.Keys) }

// TotalExpires is the shard's count of keys with a time to live, across all
// databases.
func (sn *Snapshot) TotalExpires() int64 { return sumDBs(&sn.Expires) }

func sumDBs(per *[keyspace.NumDatabases]int64) int64 {
	var n int64
	for _, v := range per {
		n += v
	}
	return n
}

// Snapshot reads the shard's published counters without taking its token.
func (s *Shard) Snapshot() Snapshot {
	c := s.store.Counters()
	sn := Snapshot{ID: s.id, QueueDepth: s.queue.depth(), Keys: c.Keys, Expires: c.Expires, AvgTTL: c.AvgTTL,
		Expired: c.Expired, Evicted: c.Evicted, MemoryUsed: c.MemoryUsed, MemoryOffHeap: c.OffHeap,
		Hits: c.Hits, Misses: c.Misses, MemoryStructure: c.MemoryStructure, MemoryIndex: c.MemoryIndex,
		MemoryHeapWaste: c.MemoryHeapWaste}
	sn.Reads = s.stats.reads.Load()
	sn.Writes = s.stats.writes.Load()
	sn.Commands = sn.Reads + sn.Writes + s.stats.other.Load()
	sn.Batches = s.stats.batches.Load()
	return sn
}
