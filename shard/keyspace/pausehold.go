package keyspace

// CLIENT PAUSE and lazy expiry, as Redis 7.0's expireIfNeeded: while a
// pause lasts (Env.HoldExpiry) a key whose time has passed reads as missing
// but is not deleted (DB.Peek), so DBSIZE still counts it and no expired
// event, invalidation or DEL reaches the log or the replicas behind the
// paused clients' backs; the active expiry cycle deletes it once the pause
// ends, or the next lookup does.

// dropHeld deletes key if it is in the index: called by insert while expiry
// is held, when a write that still runs during a pause (a master's stream,
// AOF loading) is about to put a new value where lookups kept an expired
// one. Only then does a held key cost anything: one load of the held flag
// per insert otherwise.
// REQUIRES: the caller holds the store's shard.
func (d *DB) dropHeld(key string) {
	if o, pos := d.findString(key); o != nil {
		d.dropKey(o, pos, NotifyExpired, "expired")
		d.expired.Add(1)
	}
}
