package shard

import (
	"strconv"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard/values"
)

// Store is one shard's part of the keyspace: its databases, the keys that
// may serve blocked clients, a running snapshot's part, its change counter
// and its eviction pool.
//
// Only the holder of the shard's token reads or writes a Store: the runtime
// keeps each Store in an unexported field of its Shard and hands it to
// keyspace code only while it holds that shard's token (a command through
// execute, maintenance after acquire, a control message run by the drainer).
// No mutex guards it. What a reader outside the holder may see is published
// through atomics (the DB counters, dirtyPub).
type Store struct {
	id  int
	env *Env
	dbs [NumDatabases]*DB
	// ready lists keys that may serve blocked clients (blocking.go).
	ready    []readyKey
	serveCtx Ctx        // scratch for serving them
	snap     *shardSnap // a running snapshot's part in this store (snapshot.go); nil when none
	// dirty counts changes to the store's keys (Redis' server.dirty), one
	// per touched key; published to readers through dirtyPub.
	dirty    int64
	dirtyPub atomic.Int64
	loading  bool         // an append-only file is being replayed: no active expiry (replay.go)
	pool     evictionPool // the best eviction candidates seen (evict.go)
}

// Env is what every Store of one keyspace shares: the stores themselves
// (a command holding several shards reaches their stores through its Ctx),
// the command handlers and how each routes, the encoding thresholds, the
// append-only log's feed, the eviction policy and clocks, and the count of
// parked clients. The runtime builds one and keeps it unexported; its
// stores are touched only under their tokens (see Store).
type Env struct {
	stores   []*Store
	table    *command.Table
	handlers []handler // by command ID; nil for commands not executed by shards
	routes   []route   // by command ID
	limits   encodingLimits
	prop     atomic.Pointer[propagator] // the append-only log's feed (aoflog.go); nil when off
	blocked  atomic.Int64               // parked clients (blocking.go)
	evict    evictor                    // maxmemory, eviction policy and access clock (evict.go)
}

// NewEnv builds the stores of a keyspace of n shards for table's commands.
func NewEnv(n int, table *command.Table) (*Env, error) {
	e := &Env{table: table}
	for i := range n {
		st := &Store{id: i, env: e}
		for j := range st.dbs {
			st.dbs[j] = newDB()
			st.dbs[j].owner, st.dbs[j].num = st, j
		}
		e.stores = append(e.stores, st)
	}
	e.evict.attach(e.stores)
	if err := e.register(); err != nil {
		return nil, err
	}
	return e, nil
}

// Store is shard i's store.
// REQUIRES: the caller holds shard i's token, or only keeps the pointer to
// hand it to code that will (the runtime's Shard).
func (e *Env) Store(i int) *Store { return e.stores[i] }

// ShardOf returns the shard that owns key among n: xxhash of the key, or of
// the part between the first '{' and the next '}' when that part is not
// empty (Redis Cluster's hash tag rule), so keys sharing a tag live on one
// shard.
func ShardOf(key []byte, n int) int {
	return int(xxhash.Sum64(hashTag(key)) % uint64(n))
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

// shardOf is the shard of key in this keyspace.
func (e *Env) shardOf(key []byte) int { return ShardOf(key, len(e.stores)) }

// A SCAN cursor names a shard and a slot position within it:
// cursor = position<<8 | shard. Cursor 0 starts at shard 0; when a shard is
// done the cursor moves to the next shard's position 0, and after the last
// shard it is 0 again. Slot positions never move while a key lives, so a key
// present for the whole iteration is returned (at least once), as in Redis.
const scanShardBits = 8

// ParseScanCursor reads a SCAN cursor of a keyspace of n shards.
func ParseScanCursor(b []byte, n int) (shard int, pos uint64, err error) {
	v, ok := values.ParseStrtoul(b)
	if !ok {
		return 0, 0, strconv.ErrSyntax
	}
	shard = int(v & (1<<scanShardBits - 1))
	if shard >= n {
		return 0, 0, strconv.ErrRange
	}
	return shard, v >> scanShardBits, nil
}

// Dirty is the store's change counter as last published; anyone may read it.
func (st *Store) Dirty() int64 { return st.dirtyPub.Load() }

// SetLoading turns active expiry off (on) while an append-only file is
// replayed. REQUIRES: the caller holds the store's shard.
func (st *Store) SetLoading(on bool) { st.loading = on }

// Loading reports whether an append-only file is being replayed.
// REQUIRES: the caller holds the store's shard.
func (st *Store) Loading() bool { return st.loading }

// Snapshotting reports whether a snapshot has keys pending in this store.
// REQUIRES: the caller holds the store's shard.
func (st *Store) Snapshotting() bool { return st.snap != nil }

// HasReady reports whether keys wait to serve blocked clients.
// REQUIRES: the caller holds the store's shard.
func (st *Store) HasReady() bool { return len(st.ready) > 0 }
