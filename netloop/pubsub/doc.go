// Package pubsub is Pub/Sub's registry (SUBSCRIBE, PSUBSCRIBE,
// SSUBSCRIBE, their UNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB) as Redis
// 7.0.15 standalone has it (pubsub.c): the channel map, the pattern index,
// the shard channels, each client's subscriptions (State), the counts
// INFO, CLIENT LIST and PUBSUB NUMSUB/NUMPAT/CHANNELS/SHARDCHANNELS report,
// and the messages' encoding for RESP2 and RESP3 and their fan-out.
//
// # What it owns, and what it must never do
//
// It owns the Registry and the per-client State (a value the connection
// keeps). It knows a connection only through Subscriber: a mailbox to
// Deliver a message to. It must never write to a socket, block on a
// receiver (Deliver appends to the receiver's mailbox and wakes its loop),
// keep a channel, pattern or message slice past a call other than as the
// registry's own copy of a name, apply an output buffer limit or close a
// client (netloop does, behind Deliver), or reach the shards or the
// keyspace: it imports nothing of ours but core.
//
// # Design
//
// One server-wide Registry maps channels to their subscribers and keeps
// the patterns in first-subscription order; shard channels (SSUBSCRIBE)
// have their own map and lock. Subscribing and unsubscribing take the
// write lock; PUBLISH takes the read lock, so publishers on different
// loops run in parallel.
//
// PUBLISH runs on the publisher's loop and never waits on a subscriber:
// for each receiver it calls Deliver with a Message (a value holding the
// caller's slices), which netloop encodes straight into the receiver's
// mailbox (a byte buffer under the receiver's own mutex, held only for the
// append), waking the receiver's connection when its mailbox goes from
// empty to non-empty. Message.From says who published (the publishing
// client, or the command context that reported a keyspace event), so a
// receiver that is the publisher itself gets the message in its own reply
// at once, as Redis does. Nothing is allocated per subscriber beyond the
// message bytes themselves; a Message holds only slices the caller has on
// the heap already (an interface call makes its argument escape).
//
// Per client the order of messages is the order in which publishers
// appended them, so one publisher's messages arrive in publish order.
// UNSUBSCRIBE and RESET remove the subscriptions from the registry first
// (Leave, RemoveAll); netloop then drains the mailbox and appends the
// confirmations (Confirm), so every message published before the
// unsubscription precedes its confirmation and none follows it.
//
// # Threading
//
// Registry's methods may be called from any goroutine. A State's
// subscription sets are changed and read by its client's loop only
// (methods saying "on the client's loop"); its counts (Counts) are atomics
// any goroutine may read.
package pubsub
