// Package commands holds the command handlers of the key, string, bitmap,
// hash, list and set families (keys.go, strings.go, bitmap.go, bitfield.go,
// hashes.go, lists.go, sets.go), DUMP, RESTORE and MIGRATE (dump.go,
// migrate.go) and assembles the handler table of every
// command the shards execute (Handlers, handlers.go), which the runtime
// hands to keyspace.NewEnv.
//
// A handler is a func(*keyspace.Ctx): it reads its arguments from the Ctx,
// reaches keys through c.DBFor(key) and the DB and Object API, and appends
// its reply to c.Out with the Ctx's reply helpers. Other families are
// packages of their own beside this one (shard/commands/zsets,
// shard/commands/streams) that register in Handlers; a new family
// (HyperLogLog, geo, SORT, scripting glue) lands the same way. What several
// families share about collections (random sampling, HSCAN-style cursors)
// is the keyspace's (sampling.go, collscan.go), so family packages never
// import one another.
//
// # What it must never do
//
// Import package shard (the runtime): a handler runs with its shards already
// held and never takes a token, waits or queues (one exception, as in
// Redis: MIGRATE waits on its target's socket, bounded by its timeout,
// holding its keys' shards; migrate.go says why); keep a *keyspace.DB or
// *keyspace.Object past the handler's return; allocate per command on the
// hot paths (GET, SET, INCR, HSET, HGET, SADD, LPUSH/RPOP, LRANGE ...).
package commands
