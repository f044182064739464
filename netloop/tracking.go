package netloop

// Client-side caching (CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO) as
// Redis 7.0.15 has it (tracking.c, networking.c).
//
// # Design
//
// The tracking table (key → IDs of the clients that read it) is server-wide
// and keyed by the key's name only, as Redis' (a key of any database
// invalidates the name in all). It lives here, beside the client registry
// and the mailboxes the invalidations travel through, in 64 stripes, each a
// map under its own mutex: every access is by the goroutine that holds the
// key's shard (the runtime's hooks), so a stripe's lock is contended only by
// shards hashing keys into the same stripe, and held for one map operation.
//
// What it costs a client that does not track: shard.Ctx.TrackReads is
// false, one check in the runtime's execute. The hooks are installed by the
// first CLIENT TRACKING ON, so a server where nobody ever tracked runs
// without them; after that a write costs the Changed hook (two atomic loads
// when nothing is tracked any more, else a stripe lock and a map lookup per
// key). Nothing on GET/SET's path allocates. docs/performance.md has the
// numbers.
//
// Reads are remembered by the runtime's Read hook, called while the
// command's shards are still held, so no write can come between a read and
// its record (a write that follows finds the record and invalidates it).
// Changes come from the Changed hook (every command that changed the
// dataset, however it ran: one shard, several, EXEC, a served blocked
// client), and removals that are not a command's from the Dropped hook
// (lazy and active expiry, eviction); FLUSHDB and FLUSHALL send the null
// invalidation to every tracking client and empty the table, as Redis'
// trackingInvalidateKeysOnFlush.
//
// An invalidation never waits on its receiver: it is encoded into the
// receiver's mailbox (the Pub/Sub mailbox, pubsub.go) and the receiver's
// loop is woken, as PUBLISH does. A client's own invalidation (a tracking
// client writing a key it read) goes the same way, so it follows the
// command's reply, as Redis 7.0's pending invalidations do. A loop takes a
// completed batch's replies before its mailbox (OnTraffic), so an
// invalidation never overtakes the reply of a read that ran before the
// write: a client that caches what it read and drops what is invalidated
// never keeps a stale value.
//
// BCAST: a changed key that matches prefixes is remembered per prefix (with
// the tracking client that changed it first, for NOLOOP) and sent at the
// end of the event loop turn that ran the change (OnTraffic; the ticker
// sends what expiry removed), one message per prefix with the keys in
// lexicographic order, as Redis' trackingBroadcastInvalidationMessages in
// beforeSleep.
//
// tracking-table-max-keys: after a read is remembered, while the table
// holds more keys than the limit, random keys are forgotten (and
// invalidated, as if changed) with Redis' effort rule: 100 tries, 100 more
// for every consecutive time the limit could not be reached. Redis checks
// before each command; here the check follows each remembered read, so the
// table never stays above the limit after a command.

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Tracking flags of one client (trackState.flags), Redis' CLIENT_TRACKING_*.
const (
	trkOn          uint32 = 1 << iota // CLIENT_TRACKING
	trkBcast                          // CLIENT_TRACKING_BCAST
	trkOptin                          // CLIENT_TRACKING_OPTIN
	trkOptout                         // CLIENT_TRACKING_OPTOUT
	trkNoloop                         // CLIENT_TRACKING_NOLOOP
	trkCaching                        // CLIENT_TRACKING_CACHING: CLIENT CACHING for the next command
	trkBrokenRedir                    // CLIENT_TRACKING_BROKEN_REDIR
)

// trackingChannel is where RESP2 clients redirected to receive invalidations.
const trackingChannel = "__redis__:invalidate"

// trackState is one client's tracking state, made on its first CLIENT
// TRACKING ON. flags and redirect are read by other goroutines (the senders
// of invalidations, CLIENT LIST); prefixes is owned by the client's loop.
type trackState struct {
	flags    atomic.Uint32
	redirect atomic.Int64
	prefixes []string // BCAST prefixes, sorted
}

const trackStripes = 64

// tracker is the server's tracking table and prefix table.
type tracker struct {
	clients atomic.Int64 // tracking_clients
	keys    atomic.Int64 // tracking_total_keys
	items   atomic.Int64 // tracking_total_items
	maxKeys atomic.Int64 // tracking-table-max-keys (0: no limit)
	// overLimit is Redis' timeout_counter: consecutive limit checks that
	// could not get under the limit (each tries 100 more keys).
	overLimit atomic.Int64

	stripes [trackStripes]trackStripe

	// set is the clients with tracking on (FLUSHALL's null invalidation).
	setMu sync.Mutex
	set   map[*client]struct{}

	// The prefix table (BCAST); bmu also guards every bcastState.
	bmu      sync.Mutex
	prefixes map[string]*bcastState
	nprefix  atomic.Int64 // tracking_total_prefixes
	pending  atomic.Bool  // some prefix has changed keys to send

	// flushes counts the flushes the Changed hook saw, so a FLUSHDB or
	// FLUSHALL that removed nothing (no change, no hook) is still told
	// (process notes it in client.flushSeen, accountWaited checks it:
	// trackEmptyFlush).
	flushes           atomic.Uint64
	flushall, flushdb *command.Command
	hooksOnce         sync.Once        // installTrackingHooks
	client            *command.Command // CLIENT keeps CACHING's flag (Redis' resetClient)
}

type trackStripe struct {
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
	clients map[*client]struct{}
}

// initTracking prepares the tables and installs the runtime's hooks. New
// calls it once s.params is set.
func (s *Server) initTracking() {
	t := &s.track
	for i := range t.stripes {
		t.stripes[i].keys = make(map[string]map[int64]struct{})
	}
	t.set = make(map[*client]struct{})
	t.prefixes = make(map[string]*bcastState)
	t.flushall = s.table.Lookup([]byte("flushall"))
	t.flushdb = s.table.Lookup([]byte("flushdb"))
	t.client = s.table.Lookup([]byte("client"))
	t.maxKeys.Store(s.params.Int("tracking-table-max-keys"))
	s.params.OnChange("tracking-table-max-keys", func(string) error {
		t.maxKeys.Store(s.params.Int("tracking-table-max-keys"))
		return nil
	})
}

// installTrackingHooks plugs the tracker into the runtime, on the first
// CLIENT TRACKING ON (as Redis makes its tables then): until a client
// tracks, commands run without hooks, as before client-side caching
// existed. A command running on another loop meanwhile sees the hooks or
// not; nothing is tracked before the enabling client's next command, which
// runs after the hooks are in (and any write after that read finds them:
// the shard's token orders the two).
func (s *Server) installTrackingHooks() {
	s.track.hooksOnce.Do(func() {
		s.rt.SetHooks(&shard.Hooks{
			Changed: s.trackChanged,
			Read:    s.trackRead,
			Dropped: s.trackDropped,
		})
	})
}

// active reports whether anything is tracked: two atomic loads, the whole
// cost of a write while nobody tracks.
func (t *tracker) active() bool { return t.clients.Load() != 0 || t.keys.Load() != 0 }

func (t *tracker) stripe(key []byte) *trackStripe {
	return &t.stripes[xxhash.Sum64(key)%trackStripes]
}

// ---- the runtime's hooks (called by a shard's token holder) -----------------

// trackRead remembers the keys a read-only command named for the client
// that ran it (Redis' trackingRememberKeys).
func (s *Server) trackRead(c *keyspace.Ctx) {
	var buf [8][]byte
	keys := c.CommandKeys(buf[:0])
	if len(keys) == 0 {
		return
	}
	t := &s.track
	for _, k := range keys {
		t.remember(k, c.Tracking)
	}
	if max := t.maxKeys.Load(); max > 0 && t.keys.Load() > max {
		s.trackLimit(max)
	}
}

// remember records that client id read key; it allocates only for a key
// or a reader new to the table.
func (t *tracker) remember(key []byte, id int64) {
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

// trackChanged invalidates the keys of a command that changed the dataset;
// FLUSHDB and FLUSHALL invalidate everything.
func (s *Server) trackChanged(c *keyspace.Ctx) {
	t := &s.track
	if !t.active() {
		return
	}
	if c.Cmd == t.flushall || c.Cmd == t.flushdb {
		s.trackFlush(true)
		return
	}
	var buf [8][]byte
	for _, k := range c.CommandKeys(buf[:0]) {
		s.trackInvalidate(c.Tracking, k, true)
	}
}

// trackDropped invalidates a key expiry or eviction removed.
func (s *Server) trackDropped(_ int, key string) {
	if s.track.active() {
		// Read only, for the call: the key's bytes without a copy.
		s.trackInvalidate(0, unsafe.Slice(unsafe.StringData(key), len(key)), true)
	}
}

// trackInvalidate is Redis' trackingInvalidateKey: key changed (by the
// tracking client writer, 0 for none); the clients that read it are told
// and forgotten, and, with bcast, the key is remembered for the prefixes it
// matches. key is valid for the call only; a key nobody tracks costs a
// stripe lock and a map lookup, and allocates nothing.
func (s *Server) trackInvalidate(writer int64, key []byte, bcast bool) {
	t := &s.track
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
		target := s.clientByID(id)
		if target == nil {
			continue
		}
		ts := target.trk.Load()
		if ts == nil {
			continue
		}
		f := ts.flags.Load()
		// A client that switched to BCAST since, or turned tracking off,
		// gets nothing (Redis checks the flags the same way).
		if f&trkOn == 0 || f&trkBcast != 0 || f&trkNoloop != 0 && id == writer {
			continue
		}
		s.sendInvalidation(target, ts, invalidation{key: string(key)})
	}
}

// trackFlush is Redis' trackingInvalidateKeysOnFlush: the null invalidation
// to every tracking client and, with clear, an empty table.
func (s *Server) trackFlush(clear bool) {
	t := &s.track
	if clear {
		t.flushes.Add(1)
	}
	if t.clients.Load() > 0 {
		t.setMu.Lock()
		targets := make([]*client, 0, len(t.set))
		for c := range t.set {
			targets = append(targets, c)
		}
		t.setMu.Unlock()
		for _, c := range targets {
			if ts := c.trk.Load(); ts != nil && ts.flags.Load()&trkOn != 0 {
				s.sendInvalidation(c, ts, invalidation{null: true})
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

// trackLimit is Redis' trackingLimitUsedSlots: forget random keys, telling
// their readers, until the table is within max or the effort is spent.
func (s *Server) trackLimit(max int64) {
	t := &s.track
	effort := 100 * (t.overLimit.Load() + 1)
	for ; effort > 0; effort-- {
		key, ok := t.randomKey()
		if !ok {
			break
		}
		s.trackInvalidate(0, []byte(key), false) // not a change: no broadcast
		if t.keys.Load() <= max {
			t.overLimit.Store(0)
			return
		}
	}
	t.overLimit.Add(1)
}

// randomKey picks a key of a random non-empty stripe (the map's random
// iteration start within it).
func (t *tracker) randomKey() (string, bool) {
	start := rand.IntN(trackStripes)
	for i := range trackStripes {
		st := &t.stripes[(start+i)%trackStripes]
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
func (t *tracker) rememberBroadcast(writer int64, key []byte) {
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

// trackBroadcast sends the keys changed since the last call to the BCAST
// clients of each prefix, as Redis' trackingBroadcastInvalidationMessages;
// called at the end of a loop turn (OnTraffic) and by the ticker.
func (s *Server) trackBroadcast() {
	t := &s.track
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
		for c := range bs.clients {
			ts := c.trk.Load()
			if ts == nil {
				continue
			}
			proto := all
			if ts.flags.Load()&trkNoloop != 0 {
				if proto = appendKeyArray(nil, keys, bs.keys, c.id); proto == nil {
					continue // every key was its own change
				}
			}
			s.sendInvalidation(c, ts, invalidation{proto: proto})
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

// invalidation is what one message says: one key, a pre-encoded array of
// keys (BCAST), or everything (null, after a flush).
type invalidation struct {
	key   string
	proto []byte
	null  bool
}

// sendInvalidation is Redis' sendTrackingMessage: to c, or to the client c
// redirects to (Pub/Sub form on __redis__:invalidate for a RESP2 receiver
// that is subscribed), through the receiver's mailbox. Any goroutine.
func (s *Server) sendInvalidation(c *client, ts *trackState, m invalidation) {
	dest, redirected := c, false
	if r := ts.redirect.Load(); r != 0 {
		d := s.clientByID(r)
		if d == nil {
			ts.flags.Or(trkBrokenRedir)
			if c.resp3.Load() {
				s.post(c, func(dst []byte) []byte {
					dst = resp.AppendPushHeader(dst, 2, true)
					dst = resp.AppendBulkString(dst, "tracking-redir-broken")
					return resp.AppendInt(dst, r)
				})
			}
			return
		}
		dest, redirected = d, true
	}
	push := dest.resp3.Load()
	if !push && !(redirected && dest.inPubSub()) {
		return // RESP2 without a subscribed redirect: nowhere to say it
	}
	nullRESP3 := c.resp3.Load() // the tracking client's null, as Redis
	s.post(dest, func(dst []byte) []byte {
		if push {
			dst = resp.AppendPushHeader(dst, 2, true)
			dst = resp.AppendBulkString(dst, "invalidate")
		} else {
			dst = resp.AppendArrayHeader(dst, 3)
			dst = resp.AppendBulkString(dst, "message")
			dst = resp.AppendBulkString(dst, trackingChannel)
		}
		switch {
		case m.null:
			return resp.AppendNull(dst, nullRESP3)
		case m.proto != nil:
			return append(dst, m.proto...)
		}
		dst = resp.AppendArrayHeader(dst, 1)
		return resp.AppendBulkString(dst, m.key)
	})
}

// post appends a message encoded by enc to to's mailbox and wakes it, as
// deliver does for PUBLISH. Any goroutine, to's own loop included: the
// message then follows the replies of the turn running now.
func (s *Server) post(to *client, enc func([]byte) []byte) {
	if to.killed.Load() {
		return
	}
	ps := to.pubsubOf()
	ps.mu.Lock()
	wasEmpty := len(ps.box) == 0
	ps.box = enc(ps.box)
	size := int64(len(ps.box))
	ps.size.Store(size)
	ps.mu.Unlock()
	if to.inPubSub() && s.pubsubOverLimit(ps, pubsubUsed(to, size)) {
		s.pubsubOverflow(to)
		return
	}
	if wasEmpty {
		_ = to.conn.Wake(nil)
	}
}

// clientByID finds a connected client; nil when none has id.
func (s *Server) clientByID(id int64) *client {
	s.registryMu.Lock()
	c := s.registry[id]
	s.registryMu.Unlock()
	return c
}

// ---- per client (on its loop) ------------------------------------------------

// syncTracking sets what the runtime reads from c's context: the client's
// ID while it tracks, and whether its next command's reads are remembered
// (Redis' trackingRememberKeys conditions).
func (c *client) syncTracking() {
	ts := c.trk.Load()
	if ts == nil || ts.flags.Load()&trkOn == 0 {
		c.ctx.Tracking, c.ctx.TrackReads = 0, false
		return
	}
	f := ts.flags.Load()
	c.ctx.Tracking = c.id
	switch {
	case f&trkBcast != 0:
		c.ctx.TrackReads = false
	case f&trkOptin != 0:
		c.ctx.TrackReads = f&trkCaching != 0
	case f&trkOptout != 0:
		c.ctx.TrackReads = f&trkCaching == 0
	default:
		c.ctx.TrackReads = true
	}
}

// trackAfterCommand ends CLIENT CACHING's effect after the command it was
// for, as Redis' resetClient: not after CLIENT itself, nor while a
// transaction is being queued (it lasts until EXEC). c tracks.
func (s *Server) trackAfterCommand(c *client, cmd *command.Command) {
	ts := c.trk.Load()
	if ts == nil || ts.flags.Load()&trkCaching == 0 || cmd == s.track.client || c.multi.active {
		return
	}
	ts.flags.And(^trkCaching)
	c.syncTracking()
}

// enableTracking is Redis' enableTracking; on c's loop.
func (s *Server) enableTracking(c *client, redirect int64, opts uint32, prefixes [][]byte) {
	s.installTrackingHooks()
	t := &s.track
	ts := c.trk.Load()
	if ts == nil {
		ts = &trackState{}
		c.trk.Store(ts)
	}
	f := ts.flags.Load()
	if f&trkOn == 0 {
		t.clients.Add(1)
		t.setMu.Lock()
		t.set[c] = struct{}{}
		t.setMu.Unlock()
	}
	f = f&^(trkBrokenRedir|trkBcast|trkOptin|trkOptout|trkNoloop) | trkOn
	ts.redirect.Store(redirect)
	if opts&trkBcast != 0 {
		f |= trkBcast
		t.bmu.Lock()
		if len(prefixes) == 0 {
			t.addPrefix(c, ts, "")
		}
		for _, p := range prefixes {
			t.addPrefix(c, ts, string(p))
		}
		t.bmu.Unlock()
	}
	f |= opts & (trkOptin | trkOptout | trkNoloop)
	ts.flags.Store(f)
	c.pubsubOf() // its mailbox, made on its own loop
	c.syncTracking()
}

// addPrefix is Redis' enableBcastTrackingForPrefix; the caller holds bmu.
func (t *tracker) addPrefix(c *client, ts *trackState, p string) {
	bs := t.prefixes[p]
	if bs == nil {
		bs = &bcastState{keys: make(map[string]int64), clients: make(map[*client]struct{})}
		t.prefixes[p] = bs
		t.nprefix.Add(1)
	}
	if _, ok := bs.clients[c]; !ok {
		bs.clients[c] = struct{}{}
		if i, found := slices.BinarySearch(ts.prefixes, p); !found {
			ts.prefixes = slices.Insert(ts.prefixes, i, p)
		}
	}
}

// disableTracking is Redis' disableTracking: the table keeps c's ID, to be
// skipped and dropped lazily; its prefixes go now. On c's loop (CLIENT
// TRACKING OFF, RESET, OnClose).
func (s *Server) disableTracking(c *client) {
	ts := c.trk.Load()
	if ts == nil {
		return
	}
	t := &s.track
	f := ts.flags.Load()
	if f&trkBcast != 0 {
		t.bmu.Lock()
		for _, p := range ts.prefixes {
			bs := t.prefixes[p]
			delete(bs.clients, c)
			if len(bs.clients) == 0 {
				delete(t.prefixes, p)
				t.nprefix.Add(-1)
			}
		}
		t.bmu.Unlock()
		ts.prefixes = nil
	}
	if f&trkOn != 0 {
		t.clients.Add(-1)
		t.setMu.Lock()
		delete(t.set, c)
		t.setMu.Unlock()
		ts.flags.Store(0)
	}
	c.syncTracking()
}

// ---- commands ------------------------------------------------------------------

// cmdTracking is CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...]
// [OPTIN] [OPTOUT] [NOLOOP], with Redis' checks in Redis' order.
func (s *Server) cmdTracking(c *client, args [][]byte) {
	var (
		redirect int64
		opts     uint32
		prefixes [][]byte
	)
	for j := 3; j < len(args); j++ {
		more := len(args) - 1 - j
		a := args[j]
		switch {
		case resp.EqualFold(a, "redirect") && more > 0:
			j++
			if redirect != 0 {
				c.out = resp.AppendError(c.out, "ERR A client can only redirect to a single other client")
				return
			}
			id, ok := resp.ParseInt(args[j])
			if !ok {
				c.out = append(c.out, resp.ErrNotInteger...)
				return
			}
			// The client must exist now, even if it may go later (Redis'
			// sanity check).
			if s.clientByID(id) == nil {
				c.out = resp.AppendError(c.out, "ERR The client ID you want redirect to does not exist")
				return
			}
			redirect = id
		case resp.EqualFold(a, "bcast"):
			opts |= trkBcast
		case resp.EqualFold(a, "optin"):
			opts |= trkOptin
		case resp.EqualFold(a, "optout"):
			opts |= trkOptout
		case resp.EqualFold(a, "noloop"):
			opts |= trkNoloop
		case resp.EqualFold(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, args[j])
		default:
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
	}
	switch {
	case resp.EqualFold(args[2], "on"):
		var cur uint32
		if ts := c.trk.Load(); ts != nil {
			cur = ts.flags.Load()
		}
		switch {
		case opts&trkBcast == 0 && len(prefixes) > 0:
			c.out = resp.AppendError(c.out, "ERR PREFIX option requires BCAST mode to be enabled")
		case cur&trkOn != 0 && (cur&trkBcast != 0) != (opts&trkBcast != 0):
			c.out = resp.AppendError(c.out, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
		case opts&trkBcast != 0 && opts&(trkOptin|trkOptout) != 0:
			c.out = resp.AppendError(c.out, "ERR OPTIN and OPTOUT are not compatible with BCAST")
		case opts&trkOptin != 0 && opts&trkOptout != 0:
			c.out = resp.AppendError(c.out, "ERR You can't specify both OPTIN mode and OPTOUT mode")
		case opts&trkOptin != 0 && cur&trkOptout != 0 || opts&trkOptout != 0 && cur&trkOptin != 0:
			c.out = resp.AppendError(c.out, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
		case opts&trkBcast != 0 && !s.prefixesFree(c, prefixes):
			// the error is written
		default:
			s.enableTracking(c, redirect, opts, prefixes)
			c.out = append(c.out, resp.OK...)
		}
	case resp.EqualFold(args[2], "off"):
		s.disableTracking(c)
		c.out = append(c.out, resp.OK...)
	default:
		c.out = append(c.out, resp.ErrSyntax...)
	}
}

// prefixesFree is Redis' checkPrefixCollisionsOrReply: no new prefix may be
// a prefix of another one, new or already the client's.
func (s *Server) prefixesFree(c *client, prefixes [][]byte) bool {
	var have []string
	if ts := c.trk.Load(); ts != nil {
		have = ts.prefixes
	}
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		for _, h := range have {
			if overlap(h, string(p)) {
				c.out = resp.AppendError(c.out, "ERR Prefix '"+string(p)+"' overlaps with an existing prefix '"+h+"'. Prefixes for a single client must not overlap.")
				return false
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(string(p), string(q)) {
				c.out = resp.AppendError(c.out, "ERR Prefix '"+string(p)+"' overlaps with another provided prefix '"+string(q)+"'. Prefixes for a single client must not overlap.")
				return false
			}
		}
	}
	return true
}

// cmdCaching is CLIENT CACHING YES|NO.
func (s *Server) cmdCaching(c *client, args [][]byte) {
	ts := c.trk.Load()
	var f uint32
	if ts != nil {
		f = ts.flags.Load()
	}
	if f&trkOn == 0 {
		c.out = resp.AppendError(c.out, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case resp.EqualFold(args[2], "yes"):
		if f&trkOptin == 0 {
			c.out = resp.AppendError(c.out, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case resp.EqualFold(args[2], "no"):
		if f&trkOptout == 0 {
			c.out = resp.AppendError(c.out, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.out = append(c.out, resp.ErrSyntax...)
		return
	}
	ts.flags.Or(trkCaching)
	c.syncTracking()
	c.out = append(c.out, resp.OK...)
}

// trackingRedirect is GETREDIR's and CLIENT LIST's redir: the redirect
// while tracking, else -1. Any goroutine.
func trackingRedirect(c *client) int64 {
	if ts := c.trk.Load(); ts != nil && ts.flags.Load()&trkOn != 0 {
		return ts.redirect.Load()
	}
	return -1
}

// trackingFlagLetters are CLIENT LIST's t, R and B. Any goroutine.
func trackingFlagLetters(c *client) string {
	ts := c.trk.Load()
	if ts == nil {
		return ""
	}
	f := ts.flags.Load()
	var b []byte
	if f&trkOn != 0 {
		b = append(b, 't')
	}
	if f&trkBrokenRedir != 0 {
		b = append(b, 'R')
	}
	if f&trkBcast != 0 {
		b = append(b, 'B')
	}
	return string(b)
}

// cmdTrackingInfo is CLIENT TRACKINGINFO.
func (s *Server) cmdTrackingInfo(c *client) {
	var f uint32
	var prefixes []string
	ts := c.trk.Load()
	if ts != nil {
		f = ts.flags.Load()
		prefixes = ts.prefixes
	}
	flags := []string{"off"}
	if f&trkOn != 0 {
		flags[0] = "on"
	}
	if f&trkBcast != 0 {
		flags = append(flags, "bcast")
	}
	if f&trkOptin != 0 {
		flags = append(flags, "optin")
		if f&trkCaching != 0 {
			flags = append(flags, "caching-yes")
		}
	}
	if f&trkOptout != 0 {
		flags = append(flags, "optout")
		if f&trkCaching != 0 {
			flags = append(flags, "caching-no")
		}
	}
	if f&trkNoloop != 0 {
		flags = append(flags, "noloop")
	}
	if f&trkBrokenRedir != 0 {
		flags = append(flags, "broken_redirect")
	}
	resp3 := c.ctx.RESP3
	c.out = resp.AppendMapHeader(c.out, 3, resp3)
	c.out = resp.AppendBulkString(c.out, "flags")
	c.out = resp.AppendSetHeader(c.out, len(flags), resp3)
	for _, fl := range flags {
		c.out = resp.AppendBulkString(c.out, fl)
	}
	c.out = resp.AppendBulkString(c.out, "redirect")
	c.out = resp.AppendInt(c.out, trackingRedirect(c))
	c.out = resp.AppendBulkString(c.out, "prefixes")
	c.out = resp.AppendArrayHeader(c.out, len(prefixes))
	for _, p := range prefixes {
		c.out = resp.AppendBulkString(c.out, p)
	}
}

// trackingInfo is INFO's tracking_total_keys, _items and _prefixes.
func (s *Server) trackingInfo() (keys, items, prefixes int64) {
	t := &s.track
	return t.keys.Load(), t.items.Load(), t.nprefix.Load()
}

// trackEmptyFlush sends the null invalidation for c's FLUSHDB or FLUSHALL
// when it removed nothing (it changed nothing, so the Changed hook did not
// run, and no flush did since c's was processed), as Redis sends it for
// every flush; called with the command's reply when it is accounted, so a
// refused flush (a syntax error) sends nothing. The table is left alone:
// nothing in it became stale, and clearing it outside the shards could
// drop a read remembered in between. A flush inside EXEC that removes
// nothing says nothing (EXEC's commands are not processed one by one).
func (s *Server) trackEmptyFlush(c *client, reply []byte) {
	t := &s.track
	if t.clients.Load() == 0 || t.flushes.Load() != c.flushSeen || string(reply) != "+OK\r\n" {
		return
	}
	s.trackFlush(false)
}
