package tracking

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/core/resp"
)

// Client is what the table needs of a connection. Every method may be
// called from any goroutine.
type Client interface {
	// ID is the client's CLIENT ID (never 0).
	ID() int64
	// RESP3 reports whether the client speaks RESP3 now (HELLO 3): it
	// receives invalidations as push messages.
	RESP3() bool
	// Subscribed reports whether the client has a Pub/Sub subscription: a
	// RESP2 redirect target receives invalidations only then.
	Subscribed() bool
	// Post appends m to the client's mailbox (m.AppendTo) and wakes its
	// loop, without waiting for the client. m's bytes are valid for the
	// call only: Post encodes it before it returns, or drops it (a client
	// being closed). A value, not a func: an interface call makes its
	// argument escape, and a Message holds only slices the caller has on
	// the heap already, so a send allocates nothing.
	Post(m Message)
}

// Flags of one client's tracking (State), Redis' CLIENT_TRACKING_*.
const (
	On          uint32 = 1 << iota // CLIENT_TRACKING
	Bcast                          // CLIENT_TRACKING_BCAST
	Optin                          // CLIENT_TRACKING_OPTIN
	Optout                         // CLIENT_TRACKING_OPTOUT
	Noloop                         // CLIENT_TRACKING_NOLOOP
	Caching                        // CLIENT_TRACKING_CACHING: CLIENT CACHING for the next command
	BrokenRedir                    // CLIENT_TRACKING_BROKEN_REDIR
)

// Channel is where RESP2 clients redirected to receive invalidations.
const Channel = "__redis__:invalidate"

// State is one client's tracking state; its zero value is tracking off. A
// connection embeds it and never copies it. flags and redirect are read by
// other goroutines (the senders of invalidations, CLIENT LIST); prefixes
// is owned by the client's loop, and client is set once, by the first
// Enable, before the table can reach the State.
type State struct {
	flags    atomic.Uint32
	redirect atomic.Int64
	prefixes []string // BCAST prefixes, sorted
	client   Client
}

const stripes = 64

// Table is the server's tracking table and prefix table. Call Init before
// anything else; a Table is never copied.
type Table struct {
	clients atomic.Int64 // tracking_clients
	keys    atomic.Int64 // tracking_total_keys
	items   atomic.Int64 // tracking_total_items
	maxKeys atomic.Int64 // tracking-table-max-keys (0: no limit)
	// overLimit is Redis' timeout_counter: consecutive limit checks that
	// could not get under the limit (each tries 100 more keys).
	overLimit atomic.Int64

	stripes [stripes]stripe

	// byID is the clients with tracking on: the receivers of a key's
	// invalidation (the table keeps IDs, as Redis) and of FLUSHALL's null
	// one.
	setMu sync.Mutex
	byID  map[int64]*State

	// The prefix table (BCAST); bmu also guards every bcastState.
	bmu      sync.Mutex
	prefixes map[string]*bcastState
	nprefix  atomic.Int64 // tracking_total_prefixes
	pending  atomic.Bool  // some prefix has changed keys to send

	// flushes counts the flushes Flush(true) saw (see Flushes).
	flushes atomic.Uint64

	find        func(id int64) Client // a connected client by ID, for redirects
	install     func()                // plugs the hooks in, on the first Enable
	installOnce sync.Once
}

type stripe struct {
	mu    sync.Mutex
	keys  map[string]map[int64]struct{}
	items int // IDs in keys
	_     [32]byte
}

// bcastState is one prefix's: the keys changed since the last broadcast,
// each with the ID of the tracking client that changed it first (0: none,
// or expiry), and the clients subscribed to the prefix.
type bcastState struct {
	keys    map[string]int64
	clients map[*State]struct{}
}

// Init prepares the tables. find returns the connected client with an ID
// (nil when none has it): the target of a REDIRECT. install is called
// once, by the first Enable, before it turns tracking on: netloop installs
// the runtime's hooks then, so that until a client tracks, commands run
// without them, as before client-side caching existed. A command running
// on another loop meanwhile sees the hooks or not; nothing is tracked
// before the enabling client's next command, which runs after the hooks
// are in (and any write after that read finds them: the shard's token
// orders the two).
func (t *Table) Init(find func(id int64) Client, install func()) {
	for i := range t.stripes {
		t.stripes[i].keys = make(map[string]map[int64]struct{})
	}
	t.byID = make(map[int64]*State)
	t.prefixes = make(map[string]*bcastState)
	t.find, t.install = find, install
}

// SetMaxKeys sets tracking-table-max-keys (0: no limit).
func (t *Table) SetMaxKeys(n int64) { t.maxKeys.Store(n) }

// Active reports whether anything is tracked: two atomic loads, the whole
// cost of a write while nobody tracks.
func (t *Table) Active() bool { return t.clients.Load() != 0 || t.keys.Load() != 0 }

// Clients is INFO's tracking_clients.
func (t *Table) Clients() int64 { return t.clients.Load() }

// Keys is INFO's tracking_total_keys.
func (t *Table) Keys() int64 { return t.keys.Load() }

// Stats are INFO's tracking_total_keys, _items and _prefixes.
func (t *Table) Stats() (keys, items, prefixes int64) {
	return t.keys.Load(), t.items.Load(), t.nprefix.Load()
}

// Pending reports whether Broadcast has keys to send: one atomic load.
func (t *Table) Pending() bool { return t.pending.Load() }

// Flushes counts the flushes Flush(true) saw, so a FLUSHDB or FLUSHALL
// that removed nothing (no change, so no Changed hook) is still told: see
// FlushUnseen.
func (t *Table) Flushes() uint64 { return t.flushes.Load() }

func (t *Table) stripe(key []byte) *stripe {
	return &t.stripes[xxhash.Sum64(key)%stripes]
}

// ---- what the runtime's hooks call (the shard's token holder) --------------

// Remember records that client id read keys (Redis' trackingRememberKeys),
// then applies tracking-table-max-keys. It keeps none of keys; it
// allocates only for a key or a reader new to the table.
func (t *Table) Remember(id int64, keys [][]byte) {
	if len(keys) == 0 {
		return
	}
	for _, k := range keys {
		t.remember(k, id)
	}
	if max := t.maxKeys.Load(); max > 0 && t.keys.Load() > max {
		t.limit(max)
	}
}

func (t *Table) remember(key []byte, id int64) {
	st := t.stripe(key)
	st.mu.Lock()
	ids := st.keys[string(key)]
	if ids == nil {
		ids = make(map[int64]struct{}, 1)
		st.keys[string(key)] = ids
		t.keys.Add(1)
	}
	if _, ok := ids[id]; !ok {
		ids[id] = struct{}{}
		st.items++
		t.items.Add(1)
	}
	st.mu.Unlock()
}

// Dropped invalidates a key expiry or eviction removed.
func (t *Table) Dropped(key string) {
	if t.Active() {
		// Read only, for the call: the key's bytes without a copy.
		t.Invalidate(0, unsafe.Slice(unsafe.StringData(key), len(key)), true)
	}
}

// Invalidate is Redis' trackingInvalidateKey: key changed (by the tracking
// client writer, 0 for none); the clients that read it are told and
// forgotten, and, with bcast, the key is remembered for the prefixes it
// matches. key is valid for the call only; a key nobody tracks costs a
// stripe lock and a map lookup, and allocates nothing.
func (t *Table) Invalidate(writer int64, key []byte, bcast bool) {
	if bcast && t.nprefix.Load() > 0 {
		t.rememberBroadcast(writer, key)
	}
	if t.keys.Load() == 0 {
		return
	}
	st := t.stripe(key)
	st.mu.Lock()
	ids, ok := st.keys[string(key)]
	if ok {
		delete(st.keys, string(key))
		st.items -= len(ids)
	}
	st.mu.Unlock()
	if !ok {
		return
	}
	t.keys.Add(-1)
	t.items.Add(-int64(len(ids)))
	for id := range ids {
		t.setMu.Lock()
		target := t.byID[id]
		t.setMu.Unlock()
		if target == nil {
			continue // turned tracking off, or gone: dropped lazily, as Redis
		}
		f := target.flags.Load()
		// A client that switched to BCAST since gets nothing (Redis checks
		// the flags the same way).
		if f&On == 0 || f&Bcast != 0 || f&Noloop != 0 && id == writer {
			continue
		}
		t.send(target, message{key: key})
	}
}

// Flush is Redis' trackingInvalidateKeysOnFlush: the null invalidation to
// every tracking client and, with clear, an empty table.
func (t *Table) Flush(clear bool) {
	if clear {
		t.flushes.Add(1)
	}
	if t.clients.Load() > 0 {
		t.setMu.Lock()
		targets := make([]*State, 0, len(t.byID))
		for _, st := range t.byID {
			targets = append(targets, st)
		}
		t.setMu.Unlock()
		for _, st := range targets {
			if st.flags.Load()&On != 0 {
				t.send(st, message{null: true})
			}
		}
	}
	if !clear {
		return
	}
	for i := range t.stripes {
		st := &t.stripes[i]
		st.mu.Lock()
		n, items := len(st.keys), st.items
		if n > 0 {
			st.keys = make(map[string]map[int64]struct{})
			st.items = 0
		}
		st.mu.Unlock()
		t.keys.Add(-int64(n))
		t.items.Add(-int64(items))
	}
}

// FlushUnseen sends the null invalidation for a FLUSHDB or FLUSHALL that
// removed nothing (it changed nothing, so the Changed hook did not run,
// and no flush did since seen, the Flushes count when it was processed),
// as Redis sends it for every flush. The table is left alone: nothing in
// it became stale, and clearing it outside the shards could drop a read
// remembered in between.
func (t *Table) FlushUnseen(seen uint64) {
	if t.clients.Load() == 0 || t.flushes.Load() != seen {
		return
	}
	t.Flush(false)
}

// limit is Redis' trackingLimitUsedSlots: forget random keys, telling
// their readers, until the table is within max or the effort is spent.
func (t *Table) limit(max int64) {
	effort := 100 * (t.overLimit.Load() + 1)
	for ; effort > 0; effort-- {
		key, ok := t.randomKey()
		if !ok {
			break
		}
		// Not a change: no broadcast. The key's bytes without a copy, read
		// only, for the call.
		t.Invalidate(0, unsafe.Slice(unsafe.StringData(key), len(key)), false)
		if t.keys.Load() <= max {
			t.overLimit.Store(0)
			return
		}
	}
	t.overLimit.Add(1)
}

// randomKey picks a key of a random non-empty stripe (the map's random
// iteration start within it).
func (t *Table) randomKey() (string, bool) {
	start := rand.IntN(stripes)
	for i := range stripes {
		st := &t.stripes[(start+i)%stripes]
		st.mu.Lock()
		for k := range st.keys {
			st.mu.Unlock()
			return k, true
		}
		st.mu.Unlock()
	}
	return "", false
}

// ---- BCAST ----------------------------------------------------------------------

// rememberBroadcast is Redis' trackingRememberKeyToBroadcast.
func (t *Table) rememberBroadcast(writer int64, key []byte) {
	t.bmu.Lock()
	for p, bs := range t.prefixes {
		if len(key) < len(p) || string(key[:len(p)]) != p {
			continue
		}
		if _, ok := bs.keys[string(key)]; !ok {
			bs.keys[string(key)] = writer
		}
		t.pending.Store(true)
	}
	t.bmu.Unlock()
}

// Broadcast sends the keys changed since the last call to the BCAST
// clients of each prefix, as Redis' trackingBroadcastInvalidationMessages;
// netloop calls it at the end of a loop turn and from its ticker.
func (t *Table) Broadcast() {
	if !t.pending.Swap(false) {
		return
	}
	t.bmu.Lock()
	defer t.bmu.Unlock()
	prefixes := make([]string, 0, len(t.prefixes))
	for p, bs := range t.prefixes {
		if len(bs.keys) > 0 {
			prefixes = append(prefixes, p)
		}
	}
	slices.Sort(prefixes) // Redis walks its prefix radix tree in order
	for _, p := range prefixes {
		bs := t.prefixes[p]
		keys := make([]string, 0, len(bs.keys))
		for k := range bs.keys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		all := appendKeyArray(nil, keys, bs.keys, 0)
		for st := range bs.clients {
			proto := all
			if st.flags.Load()&Noloop != 0 {
				if proto = appendKeyArray(nil, keys, bs.keys, st.client.ID()); proto == nil {
					continue // every key was its own change
				}
			}
			t.send(st, message{proto: proto})
		}
		clear(bs.keys)
	}
}

// appendKeyArray encodes keys as a RESP array, leaving out those whose
// changer is skip (not 0); nil when nothing is left.
func appendKeyArray(dst []byte, keys []string, changer map[string]int64, skip int64) []byte {
	n := len(keys)
	if skip != 0 {
		n = 0
		for _, k := range keys {
			if changer[k] != skip {
				n++
			}
		}
		if n == 0 {
			return nil
		}
	}
	dst = resp.AppendArrayHeader(dst, n)
	for _, k := range keys {
		if skip == 0 || changer[k] != skip {
			dst = resp.AppendBulkString(dst, k)
		}
	}
	return dst
}

// ---- sending ---------------------------------------------------------------------

// message is what one invalidation says: one key (valid for the send
// only), a pre-encoded array of keys (BCAST), or everything (null, after a
// flush).
type message struct {
	key   []byte
	proto []byte
	null  bool
}

// Message is one message for a client's mailbox, as Client.Post gets it:
// an invalidation (a RESP3 push, or a RESP2 Pub/Sub message on Channel)
// or the tracking-redir-broken push.
type Message struct {
	m         message
	push      bool  // RESP3 push; else a message on Channel
	nullRESP3 bool  // the tracking client's null, as Redis
	broken    int64 // not 0: tracking-redir-broken for this redirect ID
}

// AppendTo encodes m after dst.
func (m *Message) AppendTo(dst []byte) []byte {
	if m.broken != 0 {
		dst = resp.AppendPushHeader(dst, 2, true)
		dst = resp.AppendBulkString(dst, "tracking-redir-broken")
		return resp.AppendInt(dst, m.broken)
	}
	if m.push {
		dst = resp.AppendPushHeader(dst, 2, true)
		dst = resp.AppendBulkString(dst, "invalidate")
	} else {
		dst = resp.AppendArrayHeader(dst, 3)
		dst = resp.AppendBulkString(dst, "message")
		dst = resp.AppendBulkString(dst, Channel)
	}
	switch {
	case m.m.null:
		return resp.AppendNull(dst, m.nullRESP3)
	case m.m.proto != nil:
		return append(dst, m.m.proto...)
	}
	dst = resp.AppendArrayHeader(dst, 1)
	return resp.AppendBulk(dst, m.m.key)
}

// send is Redis' sendTrackingMessage: to st's client, or to the client it
// redirects to (Pub/Sub form on __redis__:invalidate for a RESP2 receiver
// that is subscribed), through the receiver's mailbox. Any goroutine.
func (t *Table) send(st *State, m message) {
	c := st.client
	dest, redirected := c, false
	if r := st.redirect.Load(); r != 0 {
		d := t.find(r)
		if d == nil {
			st.flags.Or(BrokenRedir)
			if c.RESP3() {
				c.Post(Message{broken: r})
			}
			return
		}
		dest, redirected = d, true
	}
	push := dest.RESP3()
	if !push && !(redirected && dest.Subscribed()) {
		return // RESP2 without a subscribed redirect: nowhere to say it
	}
	dest.Post(Message{m: m, push: push, nullRESP3: c.RESP3()})
}
