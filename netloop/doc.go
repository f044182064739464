// Package netloop is svcdb's network side: gnet event loops (one per CPU the
// process may use less one, see DefaultEventLoops; reuse-port on Linux) that
// read RESP, keep per-connection state, run connection and server commands,
// route keyed commands to their shards, and write replies in request order.
//
// # Threading
//
// Each connection belongs to one event loop. Everything on a client that is not
// an atomic (parser, reply buffer, batch, argument slices) is touched only by
// that loop: in OnOpen, OnTraffic and OnClose. Other goroutines (another loop
// running CLIENT LIST or KILL, a shard completing a batch) only read atomics,
// call the goroutine-safe gnet.Conn.Wake or Close, or set atomic flags.
//
// # Connection state
//
// What a loop does with a connection is one value, connState (state.go):
// reading, filling a batch, waiting for room in a shard's queue, waiting for
// a queued batch, an off-loop reply or a parked blocking command, paused by
// output back-pressure, holding replies for the append-only log, closing.
// Every change goes through client.to and a transition table; OnTraffic
// starts each turn with resume, one switch over the state. Nothing on a loop
// sleeps or spins: a connection that must wait stops parsing, and whoever
// ends the wait wakes its loop (gnet.Conn.Wake).
//
// # Dispatch
//
// Commands the shards run are routed by shard.Runtime.Route; connection and
// server commands run on the loop through a table by command ID
// (connection.go), checked at start-up: a command in the command table that
// neither the shards nor the loop can run fails New/Start.
//
// # Ordering
//
// A connection has at most one batch in flight. A keyed command runs inline on
// the loop when its shard's token is free (the common case); otherwise it and
// the following commands for the same shard are copied into the connection's
// batch and queued, and the connection stops parsing until the shard hands the
// batch back. So one client's commands execute in the order sent, as in Redis,
// and replies go out in that order: every client's replies of a turn are
// written together at the end of the loop's turn, as Redis writes in
// beforeSleep, through the end-of-turn hook of the patched gnet in
// third_party/gnet (writeback.go).
//
// # Back-pressure
//
// The in-flight cap is the batch size. A shard queue that is full refuses the
// batch (shard.Runtime.TrySubmit): the connection stops parsing, its input
// stays buffered (bounded by the query buffer limit), and the shard wakes it
// when it takes a batch out of the queue. The output cap stops parsing while
// more than OutputSoftLimit bytes wait in the socket's outbound buffer, and
// the resumer goroutine wakes the connection every millisecond to check
// whether it has drained (gnet has no drained callback). Nothing is dropped.
//
// # Access control
//
// Every client has an ACL user (core/acl owns the rules; acl.go the wiring).
// process checks authentication, then, only for a user with restrictions,
// the command, its keys and its channels; the default user's path is one
// atomic load and a bool. Users change under connected clients: a client
// reads its user's current rules at each command.
//
// # What it must never do
//
// Execute keyspace commands outside a shard's ownership, write to a socket
// from a goroutine other than its loop, or allocate per command on the
// GET/SET/INCR path in steady state.
package netloop
