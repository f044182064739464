package keyspace

// SwapDBs exchanges the data of databases a and b of this store, as Redis
// 7.0's dbSwapDatabases: the keys, their expiries and every figure about
// them (key and expiry counts, memory, avg_ttl, off-heap strings) change
// places, while what belongs to the clients of a database number stays:
// its WATCHed keys, its blocked clients, its number, its hit and miss
// counters. SWAPDB holds every shard and calls this on each store, so the
// swap is one atomic step for every client.
//
// As Redis: a WATCHed key of a that exists in a or in b before the swap
// fails its transaction (touchAllWatchedKeysInDb, both ways), and a key
// that now exists where clients block on it is marked ready, so they are
// served when the command releases the store (scanDatabaseForReadyKeys),
// and so is a key whose stream the swap took away, so its XREADGROUP
// waiters are told (scanDatabaseForDeletedStreams).
// A running snapshot first encodes every key still pending in either
// database, so it keeps the point in time of each database number.
// REQUIRES: the caller holds the store's shard; 0 <= a, b < NumDatabases.
func (st *Store) SwapDBs(a, b int) {
	if a == b {
		return
	}
	da, db := st.dbs[a], st.dbs[b]
	touchSwapped(da, db)
	touchSwapped(db, da)
	goneA, goneB := streamsGone(da, db), streamsGone(db, da)
	for _, d := range [2]*DB{da, db} {
		if d.snap != nil {
			d.snapFlush()
		}
	}
	da.index, db.index = db.index, da.index
	da.view, db.view = nil, nil
	da.chunks, db.chunks = db.chunks, da.chunks
	da.used, db.used = db.used, da.used
	da.free, db.free = db.free, da.free
	da.volatile, db.volatile = db.volatile, da.volatile
	da.expiry, db.expiry = db.expiry, da.expiry
	da.big, db.big = db.big, da.big
	swapAtomic := func(x, y interface {
		Load() int64
		Store(int64)
	}) {
		vx, vy := x.Load(), y.Load()
		x.Store(vy)
		y.Store(vx)
	}
	swapAtomic(&da.keys, &db.keys)
	swapAtomic(&da.expires, &db.expires)
	swapAtomic(&da.memory, &db.memory)
	swapAtomic(&da.adjust, &db.adjust)
	swapAtomic(&da.structure, &db.structure)
	swapAtomic(&da.indexPub, &db.indexPub)
	da.keyRound, db.keyRound = db.keyRound, da.keyRound
	da.expChunks, db.expChunks = db.expChunks, da.expChunks
	swapAtomic(&da.avgTTL, &db.avgTTL)
	swapAtomic(&da.offHeap, &db.offHeap)
	for _, d := range [2]*DB{da, db} {
		for key := range d.blocked {
			if d.has(key) {
				d.markReady(key)
			}
		}
	}
	// XREADGROUP waiters whose stream went are told so when served
	// (UNBLOCKED the stream key no longer exists), as Redis 7.0's
	// scanDatabaseForDeletedStreams in dbSwapDatabases.
	for _, key := range goneA {
		da.markReady(key)
	}
	for _, key := range goneB {
		db.markReady(key)
	}
}

// streamsGone lists the keys clients block on in emptied that hold a
// stream there and no stream in replacedWith: the streams a swap takes
// from under their XREADGROUP waiters.
func streamsGone(emptied, replacedWith *DB) []string {
	var gone []string
	for key := range emptied.blocked {
		if o, _ := emptied.Find([]byte(key)); o == nil || o.Kind != KindStream {
			continue
		}
		if o, _ := replacedWith.Find([]byte(key)); o == nil || o.Kind != KindStream {
			gone = append(gone, key)
		}
	}
	return gone
}

// touchSwapped marks dirty the Watches on keys of emptied that exist in
// emptied or in replacedWith: Redis' touchAllWatchedKeysInDb. It counts no
// change (SWAPDB counts one).
func touchSwapped(emptied, replacedWith *DB) {
	for key := range emptied.watched {
		if emptied.has(key) || replacedWith.has(key) {
			emptied.touchedWatches(key)
		}
	}
}
