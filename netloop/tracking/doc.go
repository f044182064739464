// Package tracking is client-side caching's server side (CLIENT TRACKING,
// CACHING, GETREDIR, TRACKINGINFO) as Redis 7.0.15 has it (tracking.c,
// networking.c): the tracking table (key → IDs of the clients that read
// it), the BCAST prefix table, each client's tracking state, and the
// invalidation messages, RESP3 pushes or RESP2 Pub/Sub messages on
// __redis__:invalidate to a redirect target.
//
// # What it owns, and what it must never do
//
// It owns the tables and the per-client State (a value the connection
// embeds). It knows a connection only through Client: an ID, the protocol
// it speaks, whether it is subscribed, and a mailbox to Post a message to.
// It must never write to a socket, block on a receiver (a message is
// appended to the receiver's mailbox, the Pub/Sub mailbox, and its loop
// woken), keep a key or argument slice past a call, or reach the shards
// or the keyspace: netloop turns the runtime's hooks (shard.Hooks: Read,
// Changed, Dropped) into calls of Remember, Invalidate and Flush, so this
// package imports nothing of ours but core.
//
// # Design
//
// The tracking table is server-wide and keyed by the key's name only, as
// Redis' (a key of any database invalidates the name in all), in 64
// stripes, each a map under its own mutex: every access is by the
// goroutine that holds the key's shard (the runtime's hooks), so a
// stripe's lock is contended only by shards hashing keys into the same
// stripe, and held for one map operation.
//
// What it costs a client that does not track: shard's Ctx.TrackReads is
// false, one check in the runtime's execute. netloop installs the hooks on
// the first CLIENT TRACKING ON (Table.Init's install), so a server where
// nobody ever tracked runs without them; after that a write costs Active
// (two atomic loads when nothing is tracked any more, else a stripe lock
// and a map lookup per key). Nothing on GET/SET's path allocates.
// docs/performance.md has the numbers.
//
// Reads are remembered (Remember) by the runtime's Read hook, called while
// the command's shards are still held, so no write can come between a read
// and its record (a write that follows finds the record and invalidates
// it). Changes come from the Changed hook (every command that changed the
// dataset, however it ran: one shard, several, EXEC, a served blocked
// client, a script's redis.call), and removals that are not a command's
// from the Dropped hook (lazy and active expiry, eviction); FLUSHDB and
// FLUSHALL send the null invalidation to every tracking client and empty
// the table (Flush), as Redis' trackingInvalidateKeysOnFlush.
//
// An invalidation never waits on its receiver: it is encoded into the
// receiver's mailbox (Client.Post) and the receiver's loop is woken, as
// PUBLISH does. A client's own invalidation (a tracking client writing a
// key it read) goes the same way, so it follows the command's reply, as
// Redis 7.0's pending invalidations do. A loop takes a completed batch's
// replies before its mailbox, so an invalidation never overtakes the reply
// of a read that ran before the write: a client that caches what it read
// and drops what is invalidated never keeps a stale value.
//
// BCAST: a changed key that matches prefixes is remembered per prefix
// (with the tracking client that changed it first, for NOLOOP) and sent by
// Broadcast, which netloop calls at the end of the event loop turn that
// ran the change (and from its ticker, for what expiry removed), one
// message per prefix with the keys in lexicographic order, as Redis'
// trackingBroadcastInvalidationMessages in beforeSleep.
//
// tracking-table-max-keys: after a read is remembered, while the table
// holds more keys than the limit, random keys are forgotten (and
// invalidated, as if changed) with Redis' effort rule: 100 tries, 100 more
// for every consecutive time the limit could not be reached. Redis checks
// before each command; here the check follows each remembered read, so the
// table never stays above the limit after a command.
//
// # Threading
//
// Table's methods may be called from any goroutine, except where a
// method's comment says "on the client's loop": those change a State, and
// only its connection's loop does that.
package tracking
