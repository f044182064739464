// Package shard owns the keyspace and the runtime that executes commands on
// it: N shards, each holding its part of the keys (xxhash of the key, or of
// its {hash tag}, picks the shard), the commands that read and write them,
// and key expiry.
//
// # Ownership
//
// Only the token holder touches data: whoever currently holds a shard's drain
// token, and nobody else, reads or writes that shard's databases, its expiry
// index, its WATCH and blocked tables, its ready keys and its plain counters
// (all of it is the shard's Store, store.go; the Shard keeps it in an
// unexported field and hands it to a command's Ctx only inside execute, with
// the token held). Everything else sends a Batch through the shard's bounded
// queue or takes the token through the Runtime. No mutex guards keyspace
// data, and a *DB or *object pointer never leaves a command handler.
//
// # Two rooms in one package
//
// The package holds the runtime and the keyspace, kept apart so that the
// keyspace can move to a package of its own (shard/keyspace) that does not
// import this one; rooms_test.go (runtimeFiles) lists the runtime's files and
// fails when either room reaches across the line; docs/architecture.md ("The
// rooms") says what each owns.
//
// The runtime (Runtime, Shard, queues, batches, strategies, execute, the
// transaction and WATCH holds, maxmemory admission across shards, the
// snapshot driver, replay, control messages, hot-shard counters) owns tokens
// and the order in which shards are held. It must never read or write a key,
// a DB or an object itself: it calls the exported methods of Store, Env and
// Ctx, with the tokens held.
//
// The keyspace (Store, Env, DB, objects, Ctx and the command handlers,
// expiry, eviction within one store, the WATCH and blocked tables, the
// snapshot step and entry encoding, RDB entry load, the log records) owns one
// shard's data and what commands do to it. It must never take a token, wait,
// or reach the Runtime or a Shard: what it needs from the runtime (the stores
// a command holds, the handlers and routes, the encoding thresholds, the log
// feed, the parked clients' count) is in the Env the runtime builds once
// (NewEnv), and a key's shard is ShardOf(key, n).
//
// Token ownership is a type boundary: NewEnv returns the stores once, the
// runtime keeps each in an unexported field of its Shard (Shard.store) and
// hands it out only with the token held: execute gives it to the command's
// Ctx (Ctx.Enter); maintenance calls its methods after acquire (ExpireCycle,
// Evict, Load, MarkSnapshot); a control message gets it from the drainer
// (SnapshotPart.Step). Nothing outside this package can obtain a *Store:
// Env offers no way back to the stores and stays inside the runtime
// (producers bind their contexts with Runtime.Bind), since its methods touch
// stores and must run with their tokens held.

// # One way a command runs
//
// Every command, however it arrives (one shard: TryExec or a queued Batch;
// several: ExecMulti; inside EXEC: ExecHeld; a served blocked client:
// serveKey; AOF replay: execHere), runs through Runtime.execute (runtime.go),
// the one place for the per-command effects: maxmemory admission, the
// snapshot hook, panic recovery, the append-only log's feed, the Hooks where
// notifications, tracking and replication plug in, the hot-shard counters
// and serving blocked clients. RouteFor finds the command's keys and hashes
// each once; the Ctx carries what it found (and the resolved subcommand,
// Ctx.Sub) to execute.
//
// # Who drains a shard
//
// The Runtime hides the drain strategy (see Strategy): either the event loop that
// produced a command takes the token and executes it inline (run-to-completion),
// or each shard has its own goroutine that drains its queue (dedicated). Either
// way the queue is the contract: a producer that cannot take the token pushes a
// Batch, and whoever holds the token drains the queue before letting go.
//
// # Multi-shard commands
//
// A command whose keys live on several shards takes the tokens of all of them in
// ascending shard order, runs, then releases them, so it is atomic as in Redis
// and cannot deadlock: a token holder never waits for a lower-numbered token, and
// queued batches never need a second token.
//
// # Values
//
// A key's value is an object (db.go): a string, or a list, set, sorted set,
// hash or stream. Small collections live in one flat buffer (package listpack,
// or an intset), larger ones in a structure behind a values.Collection; the
// encodings themselves (quicklist, skiplist, hash table, intset, stream) are
// the leaf package values, which knows nothing of this one. What an object's
// value is, and the switch between its flat and full encodings at Redis'
// *-max-listpack-* thresholds, stay here: listvalue.go, zsetvalue.go,
// hashvalue.go, setvalue.go (and value.go for what they share). Strings of
// 1 MiB and more live off the Go heap in package bigbuf's mappings, each
// owned by exactly one object and unmapped on every path that drops it
// (bigstr.go). Every change to a value
// ends with DB.valueChanged, which keeps the shard's memory figure and WATCH
// (watch.go) current; blocking commands park and are served through the API
// in block.go and blocking.go.
//
// # What it must never do
//
// Know about sockets, connections or HTTP; block while holding a token; allocate
// per command on the hot paths (GET, SET, INCR, HSET, HGET, SADD, ZADD,
// LPUSH/RPOP, LRANGE ...) in steady state; walk a value to learn its size.
package shard
