// Package aof owns svcdb's append-only file in Redis 7.0's multi-part layout:
// the directory (appenddirname) holding one base file, the incremental files
// and the manifest that lists them, exactly as src/aof.c names, writes and
// reads them, so that redis-check-aof accepts our files and a real
// redis-server's appendonlydir loads into svcdb.
//
//	<data-dir>/appendonlydir/
//	    appendonly.aof.1.base.rdb    the snapshot of the last rewrite (an RDB)
//	    appendonly.aof.1.incr.aof    commands since then, RESP multibulk
//	    appendonly.aof.manifest      "file appendonly.aof.1.base.rdb seq 1 type b" ...
//
// # What it does
//
//   - Log appends RESP-encoded commands (the caller encodes them, SELECT
//     included) to the last incremental file. Append copies the bytes into
//     memory under a short mutex and never touches the disk; a flusher
//     goroutine writes them and fsyncs according to the appendfsync policy
//     (always: group commit, WaitDurable; everysec: a background fsync each
//     second; no: never). A failed write or fsync is recorded in Status, the
//     bytes stay buffered and are retried, so nothing appended is lost or
//     written twice.
//   - Log rewrites: StartRewrite switches appends to a new incremental file
//     and names the base file the caller must write; FinishRewrite installs
//     it through an atomic manifest update and deletes the history files.
//   - Load reads a manifest, hands the base file to the caller's RDB loader
//     and replays every incremental file's commands, handling a truncated
//     tail as Redis does with aof-load-truncated.
//
// # What it must never do
//
//   - Know about keys, values, shards or connections: it moves files and
//     bytes. It must not import package shard or netloop; the caller encodes
//     the commands, writes and reads the RDB base, and applies commands.
//   - Block Append on the disk, or hold its mutex during I/O.
//   - Lose or duplicate a byte that Append accepted: after a failed or short
//     write the file ends exactly after the last byte written, and the rest
//     is written again from the buffer.
//   - Panic on any file content: a corrupt file is an error naming the file
//     and the offset.
package aof
