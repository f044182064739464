// Package clientmem is client eviction, Redis 7.0's maxmemory-clients
// (networking.c: updateClientMemUsageAndBucket, clientEvictionAllowed,
// evictClients; server.c: getClientEvictionLimit): the running total of
// every client's memory, the clients that may be evicted grouped by size,
// and the decision which of them to close when the total reaches the limit.
//
// # What it owns, and what it must never do
//
// It owns the Tracker (one per server) and the per-client Entry (a value
// the connection keeps). It knows a client only as an opaque owner handed
// to Track and given back to the evict function. It must never close a
// connection or touch a client's state itself: the evict function netloop
// supplies sends the client's own event loop a close request (the same as
// CLIENT KILL), so a client of another loop is never touched from here. It
// must never scan every client per command or per read: the figures move
// by deltas, and only a client whose usage crosses a power of two takes
// the lock. It imports nothing of ours.
//
// # Design
//
// A client's loop calls Update with its current usage (the figure CLIENT
// LIST shows as tot-mem) where its buffers change: after parsing a read,
// after a flush, and while it waits on output back-pressure. Update stores
// the usage in the Entry, adds the change to the server-wide total (one
// atomic add, skipped when nothing changed), and, when eviction is on and
// the client may be evicted, keeps the client in the bucket of its size:
// bucket 0 below 32 KiB, then one per power of two up to 8 GiB and over,
// as Redis' CLIENT_MEM_USAGE_BUCKET_MIN_LOG..MAX_LOG. The lock is taken
// only when the bucket changes.
//
// When an Update (or a change of the limit, or the 100 ms tick) finds the
// total at or over the limit, it wakes the evictor goroutine (Run). The
// evictor walks the buckets from the largest down and asks each client in
// turn to close until the total, less what clients already asked to close
// still hold, is under the limit; as in Redis, the order within a bucket
// is arbitrary, and a client marked to close is no longer updated, so its
// share stays counted as "pending" until it is gone (Forget). All clients
// count toward the total, NO-EVICT ones included, as Redis' per-type
// totals do; only those allowed by the caller's Update (evictable) sit in
// buckets. Replication links are not clients of the event loops and are
// never counted or evicted; monitors are, as Redis (a monitor is a normal
// client there).
//
// Eviction is asynchronous: Redis frees the client inside evictClients,
// here its loop closes it at its next turn, microseconds later, and the
// total drops then.
package clientmem
