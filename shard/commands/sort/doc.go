// Package sort holds SORT and SORT_RO (BY with nosort and hash fields,
// LIMIT, GET with # and patterns, ASC/DESC, ALPHA, STORE), as Redis 7.0's
// src/sort.c, registered in the handler table by Register (called from
// shard/commands.Handlers).
//
// # Keys named by patterns
//
// BY and GET patterns name keys that can live on any shard. SORT therefore
// routes to every shard (keyspace.RouteAll) and runs holding them all, as
// EXEC holds every shard its commands touch: each key a pattern names is
// read from its own shard's store (Ctx.DBFor hashes it), nothing changes
// under the command, and a STORE destination on yet another shard is
// written in the same step. The cost is that a SORT coordinates every shard
// even when it names no other key.
//
// It must never import package shard (the runtime), the table package or
// another commands family, or hold an object past the handler.
package sort
