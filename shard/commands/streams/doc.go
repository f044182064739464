// Package streams holds the stream command handlers (XADD, XRANGE, XREAD
// and XREADGROUP with their blocking forms, XGROUP, XACK, XCLAIM,
// XAUTOCLAIM, XPENDING, XINFO, XTRIM, XDEL, XSETID ...) and the parsing of
// stream IDs from arguments (id.go), registered in the handler table by
// Register (called from shard/commands.Handlers). The stream structure
// itself is the leaf package values' (values.Stream).
//
// It must never import package shard (the runtime) or another commands
// package, hold an object past the handler, or take a token or wait: a
// blocking XREAD parks its client through the keyspace's Ctx.Block.
package streams
