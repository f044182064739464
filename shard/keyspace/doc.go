// Package keyspace owns one shard's data and what commands do to it: the
// Store (a shard's 16 databases, ready keys, a snapshot's part, change
// counter, loading flag, eviction pool), the Env shared by the stores of one
// keyspace, DB and Object, the command context Ctx with its reply helpers
// and the routing of a command to its shards by its keys, expiry, eviction
// by policy within one store, the WATCH and blocked tables and serving a
// ready key, the snapshot step and entry encoding, RDB entry load, the log
// records a command makes, the value adapters over package values, and
// keyspace notifications' classes and the Notify call handlers make
// (notify.go; publishing is the Notifier's, netloop's).
//
// The command handlers are not here: they are in shard/commands and its
// family packages (shard/commands/zsets, shard/commands/streams), which
// call this package's exported API (c.Int, c.Err, c.DBFor(key),
// d.Lookup(key, now), o.Kind, HashGet, ListLen, ...). Their table
// (Handlers) comes in through NewEnv, from the runtime; a served blocked
// client's command is run again through it (waiters.go). The keyspace
// serves only the commands that read what it alone knows of an object:
// OBJECT and MEMORY USAGE (introspect.go).
//
// # Ownership
//
// Only the holder of a shard's token touches its Store (package shard's
// doc, "Ownership"): every method that touches data says "REQUIRES: the
// caller holds the store's shard". What the keyspace needs from the runtime
// (the stores a command holds, the handlers and routes, the encoding
// thresholds, the log feed, the parked clients' count) is in the Env the
// runtime builds once (NewEnv), and a key's shard is ShardOf(key, n).
// NewEnv returns the stores once and nothing here gives them out again.
//
// # Keys
//
// A DB keeps its keys' Objects in chunks of slots that never move, and finds
// them through package keyindex, an open-addressing index of slot positions
// that holds no key (db.go compares the slot's Key(), and gives the index a
// slot's hash when it rehashes). SCAN, snapshots and sampling walk slot
// positions, never the index.
//
// # Values
//
// A key's value is an Object (object.go): a string, or a list, set, sorted set,
// hash or stream, held in the object's one set of value words (bytes, an
// integer or a collection's pointer, never two: the 32-byte slot, its
// expiry time kept beside it in expiry.go, its key behind one pointer to a
// length-prefixed allocation, object.go) and
// reached only through its accessors (Bytes, Int, Coll and their setters).
// A string SET makes shares one allocation with its key (the Object doc's
// "Key and value in one allocation": the key's bytes are never written
// after it is made). Small collections live in one flat buffer (package listpack,
// or an intset), larger ones in a structure behind a values.Collection; the
// encodings themselves (quicklist, skiplist, hash table, intset, stream) are
// the leaf package values, which knows nothing of this one. What an object's
// value is, and the switch between its flat and full encodings at Redis'
// *-max-listpack-* thresholds, stay here: listvalue.go, zsetvalue.go,
// hashvalue.go, setvalue.go (and value.go for what they share). Strings of
// 1 MiB and more live off the Go heap in package bigbuf's mappings, each
// owned by exactly one object and unmapped on every path that drops it
// (bigstr.go). Every change to a value ends with DB.ValueChanged, which
// keeps the shard's memory figure and WATCH (watch.go) current; blocking
// commands park through the API in park.go (Block, ParseTimeout,
// Servable) and are served from the blocked tables in waiters.go.
//
// # What it must never do
//
// Import package shard (the runtime) or any commands package; take a token,
// wait, or reach the Runtime or a Shard; know about queues or strategies;
// allocate per command on the hot paths in steady state; walk a value to
// learn its size.
package keyspace
