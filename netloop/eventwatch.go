package netloop

// Keyspace event watches for the debug UI's "Keyspace events" panel
// (diaghttp, /debug/api/keyspace-events): an operator watches the
// keyspace notifications whose channel matches a pattern for a short,
// bounded time without a terminal. The watches are the Pub/Sub registry's
// (netloop/pubsub, events.go); here is the server's API for them.

import (
	"time"

	"github.com/svcdb/svcdb/netloop/pubsub"
)

// Limits of a keyspace event watch.
const (
	MaxEventWatchFor     = pubsub.MaxWatchFor
	MaxEventWatchEvents  = pubsub.MaxWatchEvents
	MaxEventWatchPattern = pubsub.MaxWatchPattern
)

// ErrTooManyWatches: pubsub.MaxWatches watches run already.
var ErrTooManyWatches = pubsub.ErrTooManyWatches

// KeyspaceEvent is one notification a watch saw.
type KeyspaceEvent = pubsub.Event

// WatchKeyspace collects the keyspace notifications whose channel matches
// pattern (glob, as PSUBSCRIBE) for up to d or until limit arrived, and
// returns them with how many were dropped past limit. d and limit are clamped
// to MaxEventWatchFor and MaxEventWatchEvents. stop ends it early (the
// HTTP request went). Notifications are published only for the classes
// notify-keyspace-events enables.
func (s *Server) WatchKeyspace(pattern string, d time.Duration, limit int, stop <-chan struct{}) (events []KeyspaceEvent, dropped int64, err error) {
	return s.pubsub.Watch(pattern, d, limit, stop)
}

// NotifyKeyspaceEvents is notify-keyspace-events' current value.
func (s *Server) NotifyKeyspaceEvents() string { return s.params.String("notify-keyspace-events") }
