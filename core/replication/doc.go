// Package replication speaks Redis 7.0's replication protocol (PSYNC2).
//
// It owns, for the replica side, the link to a master: one goroutine with
// its own TCP connection (never an event loop: the master's stream is one
// long-lived input whose commands must run in order, and a full sync reads
// a file-sized payload), the handshake (PING, AUTH with masteruser and
// masterauth, REPLCONF listening-port, REPLCONF capa eof capa psync2, PSYNC),
// the full sync (the RDB payload framed as $<len> or, from a diskless
// master, $EOF:<40-byte mark> ... <mark>) handed to a Target that flushes and
// loads it, the partial resync (PSYNC with the cached master's replication
// ID and offset+1, answered +CONTINUE), the command stream parsed with
// core/resp and handed to the Target in order, REPLCONF ACK <offset> once a
// second and on REPLCONF GETACK, reconnection with back-off, and the state
// INFO replication and ROLE report. A master that becomes a replica caches
// itself as the master to continue (PSYNC <own ID> <own offset+1>), its
// role flipped and offset taken inside Target.Begin, where no command runs
// and no client's write runs after.
//
// Chained replicas: a replica serves replicas of its own the master's
// stream verbatim (its applied bytes, at the master's offsets, under its
// ID), and a full sync it serves marks its snapshot while the stream is
// paused between two commands (the gate), so +FULLRESYNC announces the
// offset the snapshot holds.
//
// For the master side it owns the replicas attached to this server
// (serve.go): the socket a SYNC or PSYNC handed over, the PSYNC decision
// (+FULLRESYNC or +CONTINUE, the secondary ID kept after a promotion), the
// disk-based full sync from a Source's point-in-time snapshot, the backlog
// (a ring buffer of repl-backlog-size bytes holding the newest part of the
// stream), the stream fed by the runtime (Replica.Append, which never
// blocks: per-replica buffers bounded by client-output-buffer-limit's
// replica class), the replicas' ACK offsets, and replication IDs.
//
// # Offsets
//
// The replication offset is Redis': the number of stream bytes since the
// replication ID began, counting every byte of every command the replica
// processed (PING and REPLCONF GETACK included) and nothing of the RDB
// payload. After +FULLRESYNC <id> <offset> the replica's offset is <offset>;
// it advances by the bytes of each command once that command ran, and
// inside MULTI only at EXEC (as Redis sets c->reploff after a command only
// outside a transaction), so a link that breaks mid-transaction resumes at
// its MULTI. GETACK is answered with the offset before the GETACK itself, as
// Redis answers it from inside the command.
//
// # What it must never do
//
// It imports no package of ours outside core: the keyspace is reached only
// through Target and Source, implemented by the runtime (shard.ReplicaTarget,
// shard.Runtime.WriteReplicaSnapshot), and the
// network side asks it through its exported methods. It never writes a reply
// to the master other than REPLCONF ACK, as Redis suppresses replies to its
// master client.
package replication
