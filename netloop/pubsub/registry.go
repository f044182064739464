package pubsub

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
)

// Subscriber is what the registry needs of a connection. Deliver may be
// called from any goroutine, the subscriber's own loop included.
type Subscriber interface {
	// Deliver encodes m into the subscriber's mailbox (m.AppendTo) and
	// wakes its loop, without waiting for the subscriber, or, when the
	// subscriber is m.From, into the reply it is building; a client being
	// closed drops it. m's slices are valid for the call only.
	Deliver(m Message)
}

// Kind is a kind of subscription.
type Kind uint8

const (
	Channel Kind = iota // SUBSCRIBE
	Pattern             // PSUBSCRIBE
	Shard               // SSUBSCRIBE
)

// words are the confirmation words of each kind.
var words = [...]struct{ sub, unsub string }{
	Channel: {"subscribe", "unsubscribe"},
	Pattern: {"psubscribe", "punsubscribe"},
	Shard:   {"ssubscribe", "sunsubscribe"},
}

// Message is one message for a subscriber, as Deliver gets it.
type Message struct {
	// From is who published it, for the receiver to recognise itself:
	// the publishing client or the command context that reported a
	// keyspace event (opaque here); nil for nobody.
	From    any
	Kind    string // "message", "pmessage" or "smessage"
	Pattern []byte // the matching pattern (pmessage); else nil
	Channel []byte
	Payload []byte
}

// AppendTo encodes m after dst: a push in RESP3, an array in RESP2.
func (m *Message) AppendTo(dst []byte, resp3 bool) []byte {
	if m.Pattern != nil {
		dst = resp.AppendPushHeader(dst, 4, resp3)
		dst = resp.AppendBulkString(dst, m.Kind)
		dst = resp.AppendBulk(dst, m.Pattern)
	} else {
		dst = resp.AppendPushHeader(dst, 3, resp3)
		dst = resp.AppendBulkString(dst, m.Kind)
	}
	dst = resp.AppendBulk(dst, m.Channel)
	return resp.AppendBulk(dst, m.Payload)
}

// Registry is the server-wide subscription registry. Use it after Init.
type Registry struct {
	mu       sync.RWMutex
	channels map[string][]Subscriber // channel → subscribers, in subscription order
	patterns []*patternSubs          // unique patterns, in first-subscription order
	patIdx   map[string]*patternSubs // pattern → its entry in patterns
	// active is len(channels)+len(patterns), kept under mu's write lock,
	// for Active's lock-free read.
	active atomic.Int64

	shardMu sync.RWMutex
	shard   map[string][]Subscriber // shard channel → subscribers

	watches watches // the debug UI's keyspace event watches (events.go)
}

type patternSubs struct {
	pattern []byte
	subs    []Subscriber
}

// Init prepares the registry.
func (r *Registry) Init() {
	r.channels = make(map[string][]Subscriber)
	r.patIdx = make(map[string]*patternSubs)
	r.shard = make(map[string][]Subscriber)
}

func (r *Registry) lock(k Kind) {
	if k == Shard {
		r.shardMu.Lock()
	} else {
		r.mu.Lock()
	}
}

func (r *Registry) unlock(k Kind) {
	if k == Shard {
		r.shardMu.Unlock()
	} else {
		r.active.Store(int64(len(r.channels) + len(r.patterns)))
		r.mu.Unlock()
	}
}

// add registers sub for name; the caller holds the kind's write lock.
func (r *Registry) add(k Kind, name string, sub Subscriber) {
	switch k {
	case Channel:
		r.channels[name] = append(r.channels[name], sub)
	case Shard:
		r.shard[name] = append(r.shard[name], sub)
	case Pattern:
		p := r.patIdx[name]
		if p == nil {
			p = &patternSubs{pattern: []byte(name)}
			r.patIdx[name] = p
			r.patterns = append(r.patterns, p)
		}
		p.subs = append(p.subs, sub)
	}
}

// remove forgets sub for name (a no-op when it is not there); the caller
// holds the kind's write lock. Names without subscribers are dropped, so
// counts and PUBSUB CHANNELS see only active ones.
func (r *Registry) remove(k Kind, name []byte, sub Subscriber) {
	switch k {
	case Channel, Shard:
		m := r.channels
		if k == Shard {
			m = r.shard
		}
		subs, ok := m[string(name)]
		if !ok {
			return
		}
		if subs = without(subs, sub); len(subs) == 0 {
			delete(m, string(name))
		} else {
			m[string(name)] = subs
		}
	case Pattern:
		p := r.patIdx[string(name)]
		if p == nil {
			return
		}
		if p.subs = without(p.subs, sub); len(p.subs) == 0 {
			delete(r.patIdx, string(name))
			r.patterns = slices.DeleteFunc(r.patterns, func(q *patternSubs) bool { return q == p })
		}
	}
}

// without deletes sub from subs keeping the order.
func without(subs []Subscriber, sub Subscriber) []Subscriber {
	if i := slices.Index(subs, sub); i >= 0 {
		return slices.Delete(subs, i, i+1) // clears the freed slot
	}
	return subs
}

// Counts returns INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels.
func (r *Registry) Counts() (channels, patterns, shard int) {
	r.mu.RLock()
	channels, patterns = len(r.channels), len(r.patterns)
	r.mu.RUnlock()
	r.shardMu.RLock()
	shard = len(r.shard)
	r.shardMu.RUnlock()
	return channels, patterns, shard
}

// Active reports whether a channel or a pattern has a subscriber (shard
// channels aside): when not, a Publish of Channel kind reaches nobody.
// Lock-free.
func (r *Registry) Active() bool { return r.active.Load() != 0 }

// ---- publishing ----------------------------------------------------------------

// Publish delivers msg to channel's subscribers (and, for Channel kind, to
// the matching patterns' subscribers) and returns how many received it;
// from is Message.From. It holds only the registry's read lock and never
// waits on a subscriber.
func (r *Registry) Publish(from any, k Kind, channel, msg []byte) int64 {
	var n int64
	if k == Shard {
		r.shardMu.RLock()
		for _, to := range r.shard[string(channel)] {
			to.Deliver(Message{From: from, Kind: "smessage", Channel: channel, Payload: msg})
			n++
		}
		r.shardMu.RUnlock()
		return n
	}
	r.mu.RLock()
	for _, to := range r.channels[string(channel)] {
		to.Deliver(Message{From: from, Kind: "message", Channel: channel, Payload: msg})
		n++
	}
	for _, p := range r.patterns {
		if !glob.Match(p.pattern, channel, false) {
			continue
		}
		for _, to := range p.subs {
			to.Deliver(Message{From: from, Kind: "pmessage", Pattern: p.pattern, Channel: channel, Payload: msg})
			n++
		}
	}
	r.mu.RUnlock()
	return n
}

// ---- subscribing ---------------------------------------------------------------

func appendConfirm(dst []byte, resp3 bool, word string, name []byte, count int64) []byte {
	dst = resp.AppendPushHeader(dst, 3, resp3)
	dst = resp.AppendBulkString(dst, word)
	if name == nil {
		dst = resp.AppendNull(dst, resp3)
	} else {
		dst = resp.AppendBulk(dst, name)
	}
	return resp.AppendInt(dst, count)
}

// Subscribe is (P|S)SUBSCRIBE for sub, whose State is st: one confirmation
// per name appended to dst, with the count after it; subscribing again to
// the same name changes nothing but confirms. On the client's loop.
func (r *Registry) Subscribe(dst []byte, resp3 bool, st *State, sub Subscriber, k Kind, names [][]byte) []byte {
	st.init()
	set := st.set(k)
	r.lock(k)
	for _, n := range names {
		if _, ok := set[string(n)]; !ok {
			name := string(n)
			st.seq++
			set[name] = st.seq
			r.add(k, name, sub)
		}
		dst = appendConfirm(dst, resp3, words[k].sub, n, st.count(k))
	}
	r.unlock(k)
	st.storeCounts()
	return dst
}

// Leave is the registry's half of (P|S)UNSUBSCRIBE for sub, whose State is
// st: it removes names, or (none) all of the kind, from the registry and
// returns the names Confirm must confirm. Messages published before it
// returns are in sub's mailbox; none follows. On the client's loop.
func (r *Registry) Leave(st *State, sub Subscriber, k Kind, names [][]byte) [][]byte {
	set := st.set(k)
	if len(names) == 0 {
		if len(set) == 0 {
			return nil
		}
		names = st.sorted(k)
	}
	r.lock(k)
	for _, n := range names {
		if _, ok := set[string(n)]; ok {
			r.remove(k, n, sub)
		}
	}
	r.unlock(k)
	return names
}

// Confirm ends an unsubscription Leave started: it forgets names in st and
// appends their confirmations to dst (one with a null name when there are
// none). Called after the mailbox was drained; on the client's loop.
func (st *State) Confirm(dst []byte, resp3 bool, k Kind, names [][]byte) []byte {
	if len(names) == 0 {
		return appendConfirm(dst, resp3, words[k].unsub, nil, st.count(k))
	}
	set := st.set(k)
	for _, n := range names {
		delete(set, string(n))
		dst = appendConfirm(dst, resp3, words[k].unsub, n, st.count(k))
	}
	st.storeCounts()
	return dst
}

// RemoveAll forgets every subscription of sub (State st) without
// confirmations (RESET, the connection's close). On the client's loop.
func (r *Registry) RemoveAll(st *State, sub Subscriber) {
	for _, k := range []Kind{Channel, Pattern, Shard} {
		set := st.set(k)
		if len(set) == 0 {
			continue
		}
		r.lock(k)
		for n := range set {
			r.remove(k, []byte(n), sub)
		}
		r.unlock(k)
		clear(set)
	}
	st.storeCounts()
}
