package netloop

// Keyspace event watches for the debug UI's "Keyspace events" panel
// (diaghttp, /debug/api/keyspace-events): an operator watches the
// keyspace notifications whose channel matches a pattern for a short,
// bounded time without a terminal.
//
// A watch is not a client: it holds no connection, no mailbox and no
// subscription in the Pub/Sub registry. publishEvent (notify.go) offers
// each event to the watches after delivering it to subscribers, behind one
// atomic load (zero cost when nobody watches); an offer is a non-blocking
// send into the watch's buffered channel, so a watch can never slow a
// writer: when its buffer (its message cap) is full, further events are
// counted as dropped. Every watch ends by its deadline, or at its cap, or
// when its caller goes; the number of watches at once is capped too
// (maxEventWatches), so the panel cannot be used to hold resources.

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/glob"
)

// Limits of a keyspace event watch.
const (
	maxEventWatches      = 4
	MaxEventWatchFor     = 30 * time.Second
	MaxEventWatchEvents  = 1000
	MaxEventWatchPattern = 256
)

// ErrTooManyWatches: maxEventWatches watches run already.
var ErrTooManyWatches = errors.New("too many keyspace event watches at once; try again later")

// KeyspaceEvent is one notification a watch saw.
type KeyspaceEvent struct {
	AtMs    int64  `json:"at_ms"` // unix ms it was published
	Channel string `json:"channel"`
	Message string `json:"message"`
}

// eventWatches are the running watches.
type eventWatches struct {
	n    atomic.Int32 // len(list): publishEvent's one check
	mu   sync.Mutex
	list []*eventWatch
}

type eventWatch struct {
	pattern []byte
	ch      chan KeyspaceEvent
	dropped atomic.Int64
}

// WatchKeyspace collects the keyspace notifications whose channel matches
// pattern (glob, as PSUBSCRIBE) for up to d or until limit arrived, and
// returns them with how many were dropped past limit. d and limit are clamped
// to MaxEventWatchFor and MaxEventWatchEvents. stop ends it early (the
// HTTP request went). Notifications are published only for the classes
// notify-keyspace-events enables.
func (s *Server) WatchKeyspace(pattern string, d time.Duration, limit int, stop <-chan struct{}) (events []KeyspaceEvent, dropped int64, err error) {
	if len(pattern) > MaxEventWatchPattern {
		pattern = pattern[:MaxEventWatchPattern]
	}
	d = min(max(d, time.Second), MaxEventWatchFor)
	limit = min(max(limit, 1), MaxEventWatchEvents)
	w := &eventWatch{pattern: []byte(pattern), ch: make(chan KeyspaceEvent, limit)}
	h := &s.evWatch
	h.mu.Lock()
	if len(h.list) >= maxEventWatches {
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
	events = make([]KeyspaceEvent, 0, min(limit, 64))
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

// offerEvent hands one notification to the watches whose pattern matches;
// never blocks (publishEvent, behind eventWatches.n).
func (s *Server) offerEvent(channel, msg []byte) {
	h := &s.evWatch
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.list {
		if !glob.Match(w.pattern, channel, false) {
			continue
		}
		select {
		case w.ch <- KeyspaceEvent{AtMs: time.Now().UnixMilli(), Channel: string(channel), Message: string(msg)}:
		default:
			w.dropped.Add(1)
		}
	}
}

// NotifyKeyspaceEvents is notify-keyspace-events' current value.
func (s *Server) NotifyKeyspaceEvents() string { return s.params.String("notify-keyspace-events") }
