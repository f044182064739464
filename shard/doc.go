// Package shard is the runtime that executes commands on the keyspace: N
// shards, each owning its part of the keys (xxhash of the key, or of its
// {hash tag}, picks the shard), the tokens, queues and batches through which
// producers reach them, and the one execution path every command takes.
//
// # The packages
//
// The shard tree is four rooms with one-way imports (docs/architecture.md,
// "The rooms"):
//
//	shard (this package: the runtime)
//	  -> shard/commands (keys, strings, bitmaps, hashes, lists, sets; the handler table)
//	       -> shard/commands/zsets, shard/commands/streams
//	  -> shard/keyspace (Store, Env, DB, objects, Ctx and routing, expiry, eviction,
//	                     WATCH and blocked tables, snapshot step, load, log records)
//	       -> shard/values (the encodings) -> shard/listpack
//
// Every commands package imports the keyspace and never this package; the
// keyspace imports neither this package nor any commands package (it runs
// handlers through the table in its Env); shard/values/imports_test.go
// checks these arrows with go list.
//
// This package owns tokens and the order in which shards are held: Runtime,
// Shard, queues, batches, the drain strategies, execute and its per-command
// effects, the transaction and WATCH holds, maxmemory admission across
// shards, the snapshot driver, AOF replay, control messages and the
// hot-shard counters. It builds the keyspace once (keyspace.NewEnv, with
// commands.Handlers()) and must never read or write a key, a DB or an
// object itself: it calls the exported methods of keyspace's Store, Env and
// Ctx, with the tokens held.
//
// # Ownership
//
// Only the token holder touches data: whoever currently holds a shard's drain
// token, and nobody else, reads or writes that shard's databases, its expiry
// index, its WATCH and blocked tables, its ready keys and its plain counters
// (all of it is the shard's keyspace.Store). Everything else sends a Batch
// through the shard's bounded queue or takes the token through the Runtime.
// No mutex guards keyspace data, and a *DB or *Object pointer never leaves a
// command handler.
//
// Token ownership is a type boundary: keyspace.NewEnv returns the stores
// once, this package keeps each in an unexported field of its Shard
// (Shard.store) and hands it out only with the token held: execute gives it
// to the command's Ctx (Ctx.Enter); maintenance calls its methods after
// acquire (ExpireCycle, Evict, Load, MarkSnapshot); a control message gets
// it from the drainer (SnapshotPart.Step). Nothing outside this package can
// obtain a *keyspace.Store: the Env offers no way back to the stores and
// stays inside the runtime (producers bind their contexts with
// Runtime.Bind), since its methods touch stores and must run with their
// tokens held.
//
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
// # What it must never do
//
// Know about sockets, connections or HTTP; block while holding a token; read
// or write keyspace data other than through keyspace's exported methods;
// allocate per command on the hot paths (GET, SET, INCR, HSET, HGET, SADD,
// ZADD, LPUSH/RPOP, LRANGE ...) in steady state.
package shard
