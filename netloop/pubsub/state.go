package pubsub

import (
	"slices"
	"sync/atomic"
)

// State is one client's subscriptions. Its zero value is a client with
// none; its sets are made on its first subscription.
type State struct {
	// On the client's loop: subscription → sequence number, which orders
	// UNSUBSCRIBE-all's confirmations by subscription.
	channels map[string]uint64
	patterns map[string]uint64
	shardChs map[string]uint64
	seq      uint64

	// Subscription counts for other goroutines (CLIENT LIST, KILL).
	nsub, npsub, nssub atomic.Int32
}

func (st *State) init() {
	if st.channels == nil {
		st.channels = make(map[string]uint64)
		st.patterns = make(map[string]uint64)
		st.shardChs = make(map[string]uint64)
	}
}

func (st *State) set(k Kind) map[string]uint64 {
	switch k {
	case Pattern:
		return st.patterns
	case Shard:
		return st.shardChs
	}
	return st.channels
}

// count is the number a confirmation of kind k reports: channels and
// patterns together, or shard channels alone (Redis' subscriptionCount).
func (st *State) count(k Kind) int64 {
	if k == Shard {
		return int64(len(st.shardChs))
	}
	return int64(len(st.channels) + len(st.patterns))
}

// Subscribed reports whether the client is in Pub/Sub mode (Redis'
// CLIENT_PUBSUB); on the client's loop.
func (st *State) Subscribed() bool {
	return len(st.channels)+len(st.patterns)+len(st.shardChs) > 0
}

func (st *State) storeCounts() {
	st.nsub.Store(int32(len(st.channels)))
	st.npsub.Store(int32(len(st.patterns)))
	st.nssub.Store(int32(len(st.shardChs)))
}

// Counts are the client's channel, pattern and shard channel
// subscriptions (CLIENT LIST's sub, psub and ssub). Any goroutine.
func (st *State) Counts() (sub, psub, ssub int32) {
	return st.nsub.Load(), st.npsub.Load(), st.nssub.Load()
}

// sorted lists the subscriptions of kind k in subscription order.
func (st *State) sorted(k Kind) [][]byte {
	type entry struct {
		name string
		seq  uint64
	}
	set := st.set(k)
	es := make([]entry, 0, len(set))
	for n, q := range set {
		es = append(es, entry{n, q})
	}
	slices.SortFunc(es, func(a, b entry) int { return int(a.seq) - int(b.seq) })
	out := make([][]byte, len(es))
	for i, e := range es {
		out[i] = []byte(e.name)
	}
	return out
}

// Revoked reports whether allowed refuses one of the subscriptions
// (patterns first, with pattern true), as Redis'
// ACLKillPubsubClientsIfNeeded checks them. On the client's loop.
func (st *State) Revoked(allowed func(name []byte, pattern bool) bool) bool {
	for p := range st.patterns {
		if !allowed([]byte(p), true) {
			return true
		}
	}
	for _, m := range []map[string]uint64{st.channels, st.shardChs} {
		for ch := range m {
			if !allowed([]byte(ch), false) {
				return true
			}
		}
	}
	return false
}
