// Package hll holds the HyperLogLog command handlers (PFADD PFCOUNT PFMERGE
// PFDEBUG PFSELFTEST, as Redis 7.0's src/hyperloglog.c), registered in the
// handler table by Register (called from shard/commands.Handlers). The
// representation and the algorithms are the leaf package shard/hll's
// (imported here as hllrep); what is here is the keyspace's side: looking
// keys up as Redis does (read or write lookups, hits and misses), Redis'
// type checks, storing a value that grew or was promoted, and counting
// changes.
//
// It must never import package shard (the runtime), the table package or
// another commands family, hold an object past the handler, or allocate per
// command on PFADD and PFCOUNT of a dense HLL.
package hll
