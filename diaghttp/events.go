package diaghttp

// /debug/api/keyspace-events: the "Keyspace events" panel of the Clients
// view. GET ?pattern=<glob>&seconds=<1..30>&max=<1..1000> watches the
// keyspace notifications whose channel matches pattern (for example
// __keyspace@0__:user:* or __keyevent@*__:expired) and answers when max
// arrived or the seconds passed, whichever comes first.
//
// It cannot be used to hold resources: it is behind the token like every
// /debug/api/ route, lasts at most 30 s, keeps at most 1000 messages
// (more are only counted), runs at most 4 at once (429 past that), ends
// at shutdown, and never slows a writer (netloop/eventwatch.go:
// events are offered with a non-blocking send).

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svcdb/svcdb/netloop"
)

// KeyspaceWatcher is the optional Source method behind the panel
// (netloop.Server.WatchKeyspace); a Source without it answers 404 there.
type KeyspaceWatcher interface {
	WatchKeyspace(pattern string, d time.Duration, limit int, stop <-chan struct{}) ([]netloop.KeyspaceEvent, int64, error)
	// NotifyKeyspaceEvents is notify-keyspace-events' value, so the panel
	// can say why nothing comes (empty: notifications are off).
	NotifyKeyspaceEvents() string
}

func (s *Server) keyspaceEvents(ctx *fasthttp.RequestCtx) {
	kw, ok := s.src.(KeyspaceWatcher)
	if !ok {
		jsonError(ctx, fasthttp.StatusNotFound, "keyspace event watches are not available")
		return
	}
	args := ctx.QueryArgs()
	pattern := string(args.Peek("pattern"))
	if pattern == "" || len(pattern) > netloop.MaxEventWatchPattern {
		jsonError(ctx, fasthttp.StatusBadRequest, "pattern is required, at most 256 bytes")
		return
	}
	intArg := func(name string, def, lo, hi int) (int, bool) {
		raw := args.Peek(name)
		if raw == nil {
			return def, true
		}
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < lo || n > hi {
			jsonError(ctx, fasthttp.StatusBadRequest, name+" must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
			return 0, false
		}
		return n, true
	}
	secs, ok := intArg("seconds", 10, 1, int(netloop.MaxEventWatchFor/time.Second))
	if !ok {
		return
	}
	limit, ok := intArg("max", 100, 1, netloop.MaxEventWatchEvents)
	if !ok {
		return
	}
	events, dropped, err := kw.WatchKeyspace(pattern, time.Duration(secs)*time.Second, limit, s.done) // shutdown ends it early
	if err != nil {
		jsonError(ctx, fasthttp.StatusTooManyRequests, err.Error())
		return
	}
	writeAPIJSON(ctx, struct {
		Pattern string                  `json:"pattern"`
		Seconds int                     `json:"seconds"`
		Max     int                     `json:"max"`
		Classes string                  `json:"notify_keyspace_events"`
		Events  []netloop.KeyspaceEvent `json:"events"`
		Dropped int64                   `json:"dropped"`
	}{pattern, secs, limit, kw.NotifyKeyspaceEvents(), events, dropped})
}
