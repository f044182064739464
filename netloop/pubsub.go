package netloop

// Pub/Sub (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBE, PUBLISH,
// SPUBLISH, PUBSUB) as Redis 7.0.15 standalone has them.
//
// # Design
//
// One server-wide registry (pubsubHub) maps channels to their subscribers and
// keeps the patterns in first-subscription order; shard channels (SSUBSCRIBE)
// have their own map and lock. Subscribing and unsubscribing take the write
// lock; PUBLISH takes the read lock, so publishers on different loops run in
// parallel.
//
// PUBLISH runs on the publisher's loop and never waits on a subscriber: it
// encodes the message straight into each subscriber's mailbox (a byte buffer
// under the subscriber's own mutex, held only for the append), and wakes the
// subscriber's connection when its mailbox goes from empty to non-empty. The
// subscriber's loop moves the mailbox into its output at the start of its next
// turn (pubsubDeliver, called from OnTraffic) and writes it. Nothing is
// allocated per subscriber beyond the message bytes themselves.
//
// Per client the order of messages is the order in which publishers appended
// them, so one publisher's messages arrive in publish order. A client's own
// PUBLISH to a channel it is subscribed to (RESP3) puts the message before
// the PUBLISH reply, as Redis does. UNSUBSCRIBE and RESET remove the
// subscriptions from the registry first and then drain the mailbox, so every
// message published before the unsubscription precedes its confirmation and
// none follows it.
//
// # Slow subscribers
//
// client-output-buffer-limit's pubsub class applies to subscribed clients:
// what waits in the mailbox plus what waits in the socket's outbound buffer
// (obl, published by flush) is checked on every append (publisher side) and
// after every write (subscriber side); the first pubsubInTransit bytes of the
// mailbox are not counted (see there). Past the hard limit, or past the soft
// limit for longer than its seconds, the client is marked killed and woken,
// and its loop closes it, logging Redis' line. Until it is closed it still
// counts as a receiver, as a client Redis has scheduled to close does.

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
)

// psKind is a kind of subscription.
type psKind uint8

const (
	psChannel psKind = iota // SUBSCRIBE
	psPattern               // PSUBSCRIBE
	psShard                 // SSUBSCRIBE
)

// psWords are the confirmation words of each kind.
var psWords = [...]struct{ sub, unsub string }{
	psChannel: {"subscribe", "unsubscribe"},
	psPattern: {"psubscribe", "punsubscribe"},
	psShard:   {"ssubscribe", "sunsubscribe"},
}

// pubsubHub is the server-wide subscription registry.
type pubsubHub struct {
	mu       sync.RWMutex
	channels map[string][]*client    // channel → subscribers, in subscription order
	patterns []*patternSubs          // unique patterns, in first-subscription order
	patIdx   map[string]*patternSubs // pattern → its entry in patterns

	shardMu sync.RWMutex
	shard   map[string][]*client // shard channel → subscribers

	// The pubsub class of client-output-buffer-limit (bytes, 0 = none).
	limits outputLimits
}

type patternSubs struct {
	pattern []byte
	subs    []*client
}

// pubsubState is one client's Pub/Sub state, made on its first subscription
// and kept until it closes.
type pubsubState struct {
	// Owned by the client's loop: subscription → sequence number, which
	// orders UNSUBSCRIBE-all's confirmations by subscription.
	channels map[string]uint64
	patterns map[string]uint64
	shardChs map[string]uint64
	seq      uint64
	spare    []byte // the mailbox's other buffer

	// Subscription counts for other goroutines (CLIENT LIST, KILL).
	nsub, npsub, nssub atomic.Int32

	mu        sync.Mutex
	box       []byte       // encoded messages waiting for the client's loop; guarded by mu
	size      atomic.Int64 // len(box)
	softSince atomic.Int64 // unix seconds the soft limit was first seen reached; 0 = below
}

// initPubSub prepares the registry and follows client-output-buffer-limit.
// New calls it once s.params is set.
func (s *Server) initPubSub() {
	h := &s.pubsub
	h.channels = make(map[string][]*client)
	h.patIdx = make(map[string]*patternSubs)
	h.shard = make(map[string][]*client)
	apply := func(v string) {
		_, _, ps := config.OutputBufferLimits(v)
		h.limits.set(ps)
	}
	apply(s.params.String("client-output-buffer-limit"))
	s.params.OnChange("client-output-buffer-limit", func(v string) error { apply(v); return nil })
}

func (h *pubsubHub) lock(k psKind) {
	if k == psShard {
		h.shardMu.Lock()
	} else {
		h.mu.Lock()
	}
}

func (h *pubsubHub) unlock(k psKind) {
	if k == psShard {
		h.shardMu.Unlock()
	} else {
		h.mu.Unlock()
	}
}

// add registers c for name; the caller holds the kind's write lock.
func (h *pubsubHub) add(k psKind, name string, c *client) {
	switch k {
	case psChannel:
		h.channels[name] = append(h.channels[name], c)
	case psShard:
		h.shard[name] = append(h.shard[name], c)
	case psPattern:
		p := h.patIdx[name]
		if p == nil {
			p = &patternSubs{pattern: []byte(name)}
			h.patIdx[name] = p
			h.patterns = append(h.patterns, p)
		}
		p.subs = append(p.subs, c)
	}
}

// remove forgets c for name (a no-op when it is not there); the caller holds
// the kind's write lock. Names without subscribers are dropped, so counts
// and PUBSUB CHANNELS see only active ones.
func (h *pubsubHub) remove(k psKind, name []byte, c *client) {
	switch k {
	case psChannel, psShard:
		m := h.channels
		if k == psShard {
			m = h.shard
		}
		subs, ok := m[string(name)]
		if !ok {
			return
		}
		if subs = removeClient(subs, c); len(subs) == 0 {
			delete(m, string(name))
		} else {
			m[string(name)] = subs
		}
	case psPattern:
		p := h.patIdx[string(name)]
		if p == nil {
			return
		}
		if p.subs = removeClient(p.subs, c); len(p.subs) == 0 {
			delete(h.patIdx, string(name))
			h.patterns = slices.DeleteFunc(h.patterns, func(q *patternSubs) bool { return q == p })
		}
	}
}

// removeClient deletes c from subs keeping the order.
func removeClient(subs []*client, c *client) []*client {
	if i := slices.Index(subs, c); i >= 0 {
		return slices.Delete(subs, i, i+1) // clears the freed slot
	}
	return subs
}

// counts returns INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels.
func (h *pubsubHub) counts() (channels, patterns, shard int) {
	h.mu.RLock()
	channels, patterns = len(h.channels), len(h.patterns)
	h.mu.RUnlock()
	h.shardMu.RLock()
	shard = len(h.shard)
	h.shardMu.RUnlock()
	return channels, patterns, shard
}

// ---- per-client state ----------------------------------------------------------

// pubsubOf returns c's state, making it on first use. Any goroutine: an
// invalidation (tracking.go) may need the mailbox of a client that never
// subscribed; its maps are then used by c's loop only.
func (c *client) pubsubOf() *pubsubState {
	if ps := c.ps.Load(); ps != nil {
		return ps
	}
	ps := &pubsubState{
		channels: make(map[string]uint64),
		patterns: make(map[string]uint64),
		shardChs: make(map[string]uint64),
	}
	if !c.ps.CompareAndSwap(nil, ps) {
		return c.ps.Load()
	}
	return ps
}

func (ps *pubsubState) set(k psKind) map[string]uint64 {
	switch k {
	case psPattern:
		return ps.patterns
	case psShard:
		return ps.shardChs
	}
	return ps.channels
}

// count is the number a confirmation of kind k reports: channels and
// patterns together, or shard channels alone (Redis' subscriptionCount).
func (ps *pubsubState) count(k psKind) int64 {
	if k == psShard {
		return int64(len(ps.shardChs))
	}
	return int64(len(ps.channels) + len(ps.patterns))
}

// subscribed reports whether the client is in Pub/Sub mode (Redis'
// CLIENT_PUBSUB); on its loop.
func (ps *pubsubState) subscribed() bool {
	return len(ps.channels)+len(ps.patterns)+len(ps.shardChs) > 0
}

func (ps *pubsubState) storeCounts() {
	ps.nsub.Store(int32(len(ps.channels)))
	ps.npsub.Store(int32(len(ps.patterns)))
	ps.nssub.Store(int32(len(ps.shardChs)))
}

// inPubSub reports whether c has any subscription; from any goroutine.
func (c *client) inPubSub() bool {
	sub, psub, ssub := pubsubCounts(c)
	return sub+psub+ssub > 0
}

// pubsubCounts are c's channel, pattern and shard channel subscriptions
// (CLIENT LIST's sub, psub and ssub); from any goroutine.
func pubsubCounts(c *client) (sub, psub, ssub int32) {
	if ps := c.ps.Load(); ps != nil {
		return ps.nsub.Load(), ps.npsub.Load(), ps.nssub.Load()
	}
	return 0, 0, 0
}

// pubsubQueued is the size of c's mailbox (part of CLIENT LIST omem).
func pubsubQueued(c *client) int64 {
	if ps := c.ps.Load(); ps != nil {
		return ps.size.Load()
	}
	return 0
}

// clientType is the client's class for CLIENT LIST/KILL TYPE: "pubsub" while
// subscribed, else "normal" (there are no replicas or masters).
func clientType(c *client) string {
	if c.inPubSub() {
		return "pubsub"
	}
	return "normal"
}

// ---- mailbox -------------------------------------------------------------------

// drainMailbox moves c's waiting messages to the end of c.out; on c's loop.
func drainMailbox(c *client, ps *pubsubState) {
	if ps.size.Load() == 0 {
		return
	}
	ps.mu.Lock()
	b := ps.box
	ps.box = ps.spare
	ps.size.Store(0)
	ps.mu.Unlock()
	if len(c.out) == 0 {
		c.out, b = b, c.out // hand the buffer over instead of copying it
	} else {
		c.out = append(c.out, b...)
	}
	if cap(b) > 64<<10 {
		b = nil // a burst's buffer is not kept
	}
	ps.spare = b[:0]
}

// pubsubDeliver runs at the start of each of c's turns (OnTraffic): it
// writes the messages waiting in c's mailbox and checks the output limit.
// It reports whether c must be closed now.
func (s *Server) pubsubDeliver(c *client) (closeNow bool) {
	ps := c.ps.Load()
	if ps == nil || ps.size.Load() == 0 {
		return false
	}
	drainMailbox(c, ps)
	s.flush(c)
	// The pubsub class applies to subscribed clients; a RESP3 client that
	// only receives invalidations (tracking.go) is a normal client.
	if c.inPubSub() && s.pubsubOverLimit(ps, pubsubUsed(c, ps.size.Load())) {
		s.pubsubOverflow(c)
		return true
	}
	return false
}

// pubsubInTransit is how much of a mailbox the output limit does not count:
// messages publishers appended that the subscriber's loop has not had its
// turn to write yet. Redis writes every iteration's output before it reads
// more input (16 KiB per client and read), so a subscriber that keeps up
// never holds more than that there; here one turn of a pipelining publisher
// appends 64 KiB and more, and publishers on other loops keep appending while
// the subscriber's loop writes. Counting those bytes would close subscribers
// that read as fast as they can whenever the limit is small.
const pubsubInTransit = 256 << 10

// pubsubUsed is what the pubsub output limit weighs for c: the bytes waiting
// in its socket's outbound buffer (as of its last write) and the part of its
// mailbox beyond pubsubInTransit.
func pubsubUsed(c *client, mailbox int64) int64 {
	return c.obl.Load() + max(mailbox-pubsubInTransit, 0)
}

// pubsubOverLimit applies the pubsub class of client-output-buffer-limit to
// used bytes, as Redis' checkClientOutputBufferLimits. Any goroutine.
func (s *Server) pubsubOverLimit(ps *pubsubState, used int64) bool {
	return s.pubsub.limits.over(ps, used)
}

// outputLimits is one class of client-output-buffer-limit (bytes, 0:
// none), read by any goroutine.
type outputLimits struct {
	hard, soft, softSecs atomic.Int64
}

func (l *outputLimits) set(n config.OutputBufferLimit) {
	l.hard.Store(n.Hard)
	l.soft.Store(n.Soft)
	l.softSecs.Store(n.SoftSeconds)
}

// over reports whether used bytes of ps' mailbox pass the hard limit, or
// have stayed past the soft one for longer than its seconds (ps.softSince
// records when they first did), as checkClientOutputBufferLimits.
func (l *outputLimits) over(ps *pubsubState, used int64) bool {
	if hard := l.hard.Load(); hard > 0 && used >= hard {
		return true
	}
	if soft := l.soft.Load(); soft > 0 && used >= soft {
		now := time.Now().Unix()
		since := ps.softSince.Load()
		if since == 0 {
			ps.softSince.CompareAndSwap(0, now)
			return false
		}
		return now-since > l.softSecs.Load()
	}
	if ps.softSince.Load() != 0 {
		ps.softSince.Store(0)
	}
	return false
}

// pubsubOverflow schedules c's close, once, logging Redis' line.
func (s *Server) pubsubOverflow(c *client) {
	if c.killed.Swap(true) {
		return
	}
	line := strings.TrimSuffix(s.clientLine(c, time.Now()), "\n")
	s.log.Warn("Client "+line+" scheduled to be closed ASAP for overcoming of output buffer limits.",
		"id", c.id, "addr", c.addr, "class", "pubsub")
	_ = c.conn.Wake(nil)
}

// ---- publishing ----------------------------------------------------------------

// appendMessage encodes a message push: message/smessage (pattern nil) or
// pmessage.
func appendMessage(dst []byte, resp3 bool, kind string, pattern, channel, msg []byte) []byte {
	if pattern != nil {
		dst = resp.AppendPushHeader(dst, 4, resp3)
		dst = resp.AppendBulkString(dst, kind)
		dst = resp.AppendBulk(dst, pattern)
	} else {
		dst = resp.AppendPushHeader(dst, 3, resp3)
		dst = resp.AppendBulkString(dst, kind)
	}
	dst = resp.AppendBulk(dst, channel)
	return resp.AppendBulk(dst, msg)
}

// publish delivers msg to channel's subscribers (and, for channels, to the
// matching patterns' subscribers) and returns how many received it. It runs
// on the publisher's loop and holds only the registry's read lock and, for
// one append each, the subscribers' mailbox locks.
func (s *Server) publish(from *client, k psKind, channel, msg []byte) int64 {
	h := &s.pubsub
	var n int64
	if k == psShard {
		h.shardMu.RLock()
		for _, to := range h.shard[string(channel)] {
			s.deliver(from, to, "smessage", nil, channel, msg)
			n++
		}
		h.shardMu.RUnlock()
		return n
	}
	h.mu.RLock()
	for _, to := range h.channels[string(channel)] {
		s.deliver(from, to, "message", nil, channel, msg)
		n++
	}
	for _, p := range h.patterns {
		if !glob.Match(p.pattern, channel, false) {
			continue
		}
		for _, to := range p.subs {
			s.deliver(from, to, "pmessage", p.pattern, channel, msg)
			n++
		}
	}
	h.mu.RUnlock()
	return n
}

// deliver appends one message to to's mailbox and wakes it, or, when to is
// the publisher itself, to its output right away.
func (s *Server) deliver(from, to *client, kind string, pattern, channel, msg []byte) {
	if to.killed.Load() {
		return // being closed: counted, not written (as Redis' CLOSE_ASAP)
	}
	ps := to.ps.Load()
	if to == from {
		drainMailbox(from, ps) // earlier messages first
		from.out = appendMessage(from.out, from.ctx.RESP3, kind, pattern, channel, msg)
		return
	}
	ps.mu.Lock()
	wasEmpty := len(ps.box) == 0
	ps.box = appendMessage(ps.box, to.resp3.Load(), kind, pattern, channel, msg)
	size := int64(len(ps.box))
	ps.size.Store(size)
	ps.mu.Unlock()
	if s.pubsubOverLimit(ps, pubsubUsed(to, size)) {
		s.pubsubOverflow(to)
		return
	}
	if wasEmpty {
		_ = to.conn.Wake(nil) // a non-empty mailbox has a wake-up pending already
	}
}

// ---- commands ------------------------------------------------------------------

// pubsubAllowed are the commands a RESP2 client may run while subscribed.
func pubsubAllowed(name string) bool {
	switch name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// pubsubDenied refuses, with Redis' error, a command a RESP2 client in
// Pub/Sub mode may not run. process calls it after the authentication check,
// as Redis' processCommand orders them.
func (s *Server) pubsubDenied(c *client, cmd *command.Command) bool {
	ps := c.ps.Load()
	if ps == nil || c.ctx.RESP3 || !ps.subscribed() || pubsubAllowed(cmd.FullName) {
		return false
	}
	c.out = resp.AppendError(c.out, "ERR Can't execute '"+cmd.FullName+
		"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	return true
}

// pubsubPing answers PING in RESP2 Pub/Sub mode (["pong", message]) and
// reports whether it did.
func (s *Server) pubsubPing(c *client, args [][]byte) bool {
	ps := c.ps.Load()
	if ps == nil || c.ctx.RESP3 || !ps.subscribed() {
		return false
	}
	c.out = resp.AppendArrayHeader(c.out, 2)
	c.out = resp.AppendBulkString(c.out, "pong")
	if len(args) > 1 {
		c.out = resp.AppendBulk(c.out, args[1])
	} else {
		c.out = resp.AppendBulkString(c.out, "")
	}
	return true
}

// cmdPubSub runs the Pub/Sub commands; on c's loop.
func (s *Server) cmdPubSub(c *client, cmd *command.Command, args [][]byte) {
	switch cmd.Name {
	case "subscribe":
		s.subscribe(c, psChannel, args[1:])
	case "psubscribe":
		s.subscribe(c, psPattern, args[1:])
	case "ssubscribe":
		if c.multi.inExec {
			// As Redis: a client that expects one reply per command (inside
			// EXEC) may not SSUBSCRIBE; SUBSCRIBE is let through there for
			// backward compatibility.
			c.out = resp.AppendError(c.out, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
			return
		}
		s.subscribe(c, psShard, args[1:])
	case "unsubscribe":
		s.unsubscribe(c, psChannel, args[1:])
	case "punsubscribe":
		s.unsubscribe(c, psPattern, args[1:])
	case "sunsubscribe":
		s.unsubscribe(c, psShard, args[1:])
	case "publish":
		c.out = resp.AppendInt(c.out, s.publish(c, psChannel, args[1], args[2]))
	case "spublish":
		c.out = resp.AppendInt(c.out, s.publish(c, psShard, args[1], args[2]))
	case "pubsub":
		s.cmdPubsubIntrospect(c, cmd, args)
	}
}

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

// subscribe is (P|S)SUBSCRIBE: one confirmation per argument, with the count
// after it; subscribing again to the same name changes nothing but confirms.
func (s *Server) subscribe(c *client, k psKind, names [][]byte) {
	ps := c.pubsubOf()
	set := ps.set(k)
	h := &s.pubsub
	h.lock(k)
	for _, n := range names {
		if _, ok := set[string(n)]; !ok {
			name := string(n)
			ps.seq++
			set[name] = ps.seq
			h.add(k, name, c)
		}
		c.out = appendConfirm(c.out, c.ctx.RESP3, psWords[k].sub, n, ps.count(k))
	}
	h.unlock(k)
	ps.storeCounts()
}

// unsubscribe is (P|S)UNSUBSCRIBE, with names or (none) all of the kind.
// Messages published before the unsubscription are written before its
// confirmation.
func (s *Server) unsubscribe(c *client, k psKind, names [][]byte) {
	ps := c.ps.Load()
	if ps == nil {
		ps = &pubsubState{} // nothing subscribed: nil maps read as empty
	}
	set := ps.set(k)
	if len(names) == 0 {
		if len(set) == 0 {
			c.out = appendConfirm(c.out, c.ctx.RESP3, psWords[k].unsub, nil, ps.count(k))
			return
		}
		names = sortedSubs(set)
	}
	h := &s.pubsub
	h.lock(k)
	for _, n := range names {
		if _, ok := set[string(n)]; ok {
			h.remove(k, n, c)
		}
	}
	h.unlock(k)
	drainMailbox(c, ps)
	for _, n := range names {
		delete(set, string(n))
		c.out = appendConfirm(c.out, c.ctx.RESP3, psWords[k].unsub, n, ps.count(k))
	}
	ps.storeCounts()
}

// sortedSubs lists a subscription set in subscription order.
func sortedSubs(set map[string]uint64) [][]byte {
	type entry struct {
		name string
		seq  uint64
	}
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

// pubsubRemoveAll forgets every subscription of c without confirmations.
func (s *Server) pubsubRemoveAll(c *client, ps *pubsubState) {
	h := &s.pubsub
	for _, k := range []psKind{psChannel, psPattern, psShard} {
		set := ps.set(k)
		if len(set) == 0 {
			continue
		}
		h.lock(k)
		for n := range set {
			h.remove(k, []byte(n), c)
		}
		h.unlock(k)
		clear(set)
	}
	ps.storeCounts()
}

// pubsubReset is RESET's part: every subscription ends without
// confirmations; messages already published are written first.
func (s *Server) pubsubReset(c *client) {
	if ps := c.ps.Load(); ps != nil {
		s.pubsubRemoveAll(c, ps)
		drainMailbox(c, ps)
	}
}

// pubsubClose forgets a closing client's subscriptions (OnClose).
func (s *Server) pubsubClose(c *client) {
	if ps := c.ps.Load(); ps != nil {
		s.pubsubRemoveAll(c, ps)
	}
}

// pubsubHelp is Redis 7.0.15's PUBSUB HELP text.
var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

// cmdPubsubIntrospect is PUBSUB's subcommands.
func (s *Server) cmdPubsubIntrospect(c *client, cmd *command.Command, args [][]byte) {
	h := &s.pubsub
	switch sub := s.subcommand(c, cmd, args); sub.Name {
	case "channels", "shardchannels":
		if len(args) > 3 {
			c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], cmd.Name)
			return
		}
		var pat []byte
		if len(args) == 3 {
			pat = args[2]
		}
		mu, m := &h.mu, h.channels
		if sub.Name == "shardchannels" {
			mu, m = &h.shardMu, h.shard
		}
		var names []string
		mu.RLock()
		for n := range m {
			if pat == nil || glob.Match(pat, []byte(n), false) {
				names = append(names, n)
			}
		}
		mu.RUnlock()
		slices.Sort(names) // Redis lists them in hash order; any order is valid
		c.out = resp.AppendArrayHeader(c.out, len(names))
		for _, n := range names {
			c.out = resp.AppendBulkString(c.out, n)
		}
	case "numsub", "shardnumsub":
		mu, m := &h.mu, h.channels
		if sub.Name == "shardnumsub" {
			mu, m = &h.shardMu, h.shard
		}
		c.out = resp.AppendArrayHeader(c.out, 2*(len(args)-2))
		mu.RLock()
		for _, n := range args[2:] {
			c.out = resp.AppendBulk(c.out, n)
			c.out = resp.AppendInt(c.out, int64(len(m[string(n)])))
		}
		mu.RUnlock()
	case "numpat":
		h.mu.RLock()
		n := len(h.patterns)
		h.mu.RUnlock()
		c.out = resp.AppendInt(c.out, int64(n))
	case "help":
		c.out = resp.AppendHelp(c.out, pubsubHelp)
	default:
		c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], cmd.Name)
	}
}
