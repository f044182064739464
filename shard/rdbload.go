package shard

import (
	"fmt"
	"io"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/rdb"
)

// LoadStats describes one LoadRDB.
type LoadStats struct {
	Keys    int64 // keys inserted
	Expired int64 // keys skipped because their time to live had passed
}

// LoadRDB reads an RDB file into the keyspace, each key on its shard, with
// the encodings Redis would choose under the thresholds in effect, TTLs
// kept and keys already expired skipped (as a Redis master does). Call it
// before clients are served; keys already present are an error, as Redis'
// "duplicated key". On an error the keys inserted so far stay.
// REQUIRES: the caller holds no shard token.
func (rt *Runtime) LoadRDB(r io.Reader) (LoadStats, error) {
	var st LoadStats
	lim := rt.env.Limits()
	now := time.Now().UnixMilli() // read once, as rdbLoadRio does
	pending := make([][]rdb.Entry, len(rt.shards))
	flush := func(i int) error {
		n, err := rt.loadBatch(rt.shards[i], pending[i], lim)
		st.Keys += int64(n)
		clear(pending[i]) // let the inserted values' source bytes go
		pending[i] = pending[i][:0]
		return err
	}
	_, err := rdb.Load(r, func(e *rdb.Entry) error {
		if e.DB < 0 || e.DB >= keyspace.NumDatabases {
			return fmt.Errorf("FATAL: Data file was created with a Redis server configured to handle more than %d databases. Exiting", keyspace.NumDatabases)
		}
		if e.ExpireAt != 0 && e.ExpireAt < now {
			st.Expired++
			return nil
		}
		i := rt.ShardOf(e.Key)
		pending[i] = append(pending[i], *e) // Load reuses *e; its slices are ours
		if len(pending[i]) >= keyspace.LoadBatchKeys {
			return flush(i)
		}
		return nil
	})
	for i := range pending {
		if err != nil {
			break
		}
		if len(pending[i]) > 0 {
			err = flush(i)
		}
	}
	return st, err
}

// loadBatch inserts entries into shard s, holding it, and returns how many
// it inserted before an error.
func (rt *Runtime) loadBatch(s *Shard, entries []rdb.Entry, lim *keyspace.EncodingLimits) (int, error) {
	rt.acquire(s)
	n, err := s.store.Load(entries, lim)
	rt.release(s)
	return n, err
}
