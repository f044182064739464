package pubsub

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/glob"
)

// Keyspace notifications (Redis' notify.c) and the debug UI's watches of
// them.
//
// A watch is not a client: it holds no connection, no mailbox and no
// subscription in the registry. PublishEvent offers each event to the
// watches after delivering it to subscribers, behind one atomic load (zero
// cost when nobody watches); an offer is a non-blocking send into the
// watch's buffered channel, so a watch can never slow a writer: when its
// buffer (its message cap) is full, further events are counted as dropped.
// Every watch ends by its deadline, or at its cap, or when its caller goes;
// the number of watches at once is capped too (MaxWatches), so the panel
// cannot be used to hold resources.

// Limits of a keyspace event watch.
const (
	MaxWatches      = 4
	MaxWatchFor     = 30 * time.Second
	MaxWatchEvents  = 1000
	MaxWatchPattern = 256
)

// ErrTooManyWatches: MaxWatches watches run already.
var ErrTooManyWatches = errors.New("too many keyspace event watches at once; try again later")

// Event is one notification a watch saw.
type Event struct {
	AtMs    int64  `json:"at_ms"` // unix ms it was published
	Channel string `json:"channel"`
	Message string `json:"message"`
}

// watches are the running watches (Registry.watches).
type watches struct {
	n    atomic.Int32 // len(list): PublishEvent's one check
	mu   sync.Mutex
	list []*watch
}

type watch struct {
	pattern []byte
	ch      chan Event
	dropped atomic.Int64
}

// Notify publishes a keyspace event (Redis' notifyKeyspaceEvent after its
// class check) on __keyspace@<db>__:<key> (message the event) when
// keyspace, then on __keyevent@<db>__:<event> (message the key) when
// keyevent; from is Message.From. With nobody subscribed to a channel or
// pattern and no watch, it formats nothing.
func (r *Registry) Notify(from any, db int, event string, key []byte, keyspace, keyevent bool) {
	if r.active.Load() == 0 && r.watches.n.Load() == 0 {
		return
	}
	// The channel and the event's bytes go into a pooled buffer, not one
	// on the stack: a Message given to Deliver (an interface call) escapes.
	bp := notifyBufs.Get().(*[]byte)
	if keyspace {
		b := append((*bp)[:0], "__keyspace@"...)
		b = strconv.AppendInt(b, int64(db), 10)
		b = append(b, "__:"...)
		b = append(b, key...)
		n := len(b)
		b = append(b, event...)
		r.PublishEvent(from, b[:n], b[n:])
		*bp = b
	}
	if keyevent {
		b := append((*bp)[:0], "__keyevent@"...)
		b = strconv.AppendInt(b, int64(db), 10)
		b = append(b, "__:"...)
		b = append(b, event...)
		r.PublishEvent(from, b, key)
		*bp = b
	}
	notifyBufs.Put(bp)
}

// notifyBufs are Notify's buffers.
var notifyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// PublishEvent is Publish of a keyspace event on channel, then its offer
// to the watches.
func (r *Registry) PublishEvent(from any, channel, msg []byte) {
	r.Publish(from, Channel, channel, msg)
	if r.watches.n.Load() != 0 {
		r.offer(channel, msg)
	}
}

// Watch collects the events whose channel matches pattern (glob, as
// PSUBSCRIBE) for up to d or until limit arrived, and returns them with
// how many were dropped past limit. d and limit are clamped to MaxWatchFor
// and MaxWatchEvents. stop ends it early.
func (r *Registry) Watch(pattern string, d time.Duration, limit int, stop <-chan struct{}) (events []Event, dropped int64, err error) {
	if len(pattern) > MaxWatchPattern {
		pattern = pattern[:MaxWatchPattern]
	}
	d = min(max(d, time.Second), MaxWatchFor)
	limit = min(max(limit, 1), MaxWatchEvents)
	w := &watch{pattern: []byte(pattern), ch: make(chan Event, limit)}
	h := &r.watches
	h.mu.Lock()
	if len(h.list) >= MaxWatches {
		h.mu.Unlock()
		return nil, 0, ErrTooManyWatches
	}
	h.list = append(h.list, w)
	h.n.Store(int32(len(h.list)))
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		for i, x := range h.list {
			if x == w {
				h.list = append(h.list[:i], h.list[i+1:]...)
				break
			}
		}
		h.n.Store(int32(len(h.list)))
		h.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	events = make([]Event, 0, min(limit, 64))
	for len(events) < limit {
		select {
		case e := <-w.ch:
			events = append(events, e)
		case <-t.C:
			return events, w.dropped.Load(), nil
		case <-stop:
			return events, w.dropped.Load(), nil
		}
	}
	return events, w.dropped.Load(), nil
}

// offer hands one notification to the watches whose pattern matches;
// never blocks.
func (r *Registry) offer(channel, msg []byte) {
	h := &r.watches
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.list {
		if !glob.Match(w.pattern, channel, false) {
			continue
		}
		select {
		case w.ch <- Event{AtMs: time.Now().UnixMilli(), Channel: string(channel), Message: string(msg)}:
		default:
			w.dropped.Add(1)
		}
	}
}
