// Package scripting is the Lua engine behind EVAL, EVALSHA, EVAL_RO,
// EVALSHA_RO and SCRIPT: one Lua 5.1 virtual machine (gopher-lua) sandboxed
// as Redis 7.0's, the script cache keyed by SHA1 (each script compiled once),
// the `#!lua flags=` shebang, the redis.* API and the libraries Redis ships
// (cjson, cmsgpack, bit, struct), and the conversion of replies between the
// Redis protocol and Lua values, in both directions, as Redis 7.0 does them.
//
// # What it owns
//
// The VM, the compiled scripts and the rules of the Lua side. A script runs
// with Engine.Run, which calls the script and, for every redis.call and
// redis.pcall, the Caller it was given: "run this argv, append its reply in
// RESP". How a command runs (the command table, the checks Redis does before
// a script's command, the shards, the statistics) is the Caller's business.
//
// # What it must never do
//
// Touch the keyspace or take a shard's token: the engine reaches data only
// through the Caller, whose implementation (netloop's) runs every command
// through the runtime's one execution entry point. It imports no package of
// ours but core/resp.
//
// # Concurrency
//
// The cache is safe for concurrent use (SCRIPT LOAD and EVALSHA lookups from
// every event loop). The VM runs one script at a time: Run takes the VM's
// mutex; callers hold every shard while a script runs anyway, so the mutex
// is never contended on the data path.
package scripting
