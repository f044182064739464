package netloop

import (
	"context"
	"sync"

	"github.com/panjf2000/gnet/v2"

	"github.com/svcdb/svcdb/core/cmdstats"
)

// A busy event loop writes its replies together, after it has served the
// clients whose input arrived with them, as Redis writes in beforeSleep once
// per event-loop turn. Written one by one as each client is served, every
// write finds its client asleep and wakes it: a wake-up costs the writer
// several microseconds (an inter-processor interrupt, a VM exit on virtual
// machines), and with pipelined clients waiting on a server-bound loop it
// was a tenth of the server's CPU. Written together, a client that wakes for
// its reply is still reading when the next one arrives.
//
// gnet has no hook at the end of a turn, so the loop asks for one: the
// first deferred reply of a turn queues loopState.Run as a task, which gnet
// runs after the callbacks of its next turn. That task costs about two
// microseconds (an eventfd write, an allocation, one more epoll event), so
// replies are deferred only where wake-ups are what they save:
//   - the loop is busy: it finished serving another client moments before
//     this one's input was taken up (burstGap). A lone client's reply goes
//     out at once, as before, and never waits for a task.
//   - the client sent a pipeline (more than one command this turn). Serving
//     a single command takes about a microsecond, so unpipelined replies to a
//     client program's connections already land while it is still awake
//     from the first: deferring them measured 6% more server CPU per request
//     with redis-benchmark -P 1 -c 50 and saved nothing.
//
// Replies that end a connection (connClosing) and back-pressure flushes are
// never deferred.

// burstGap is how soon after the loop last served a client a new turn counts
// as part of the same burst. Between two clients of one epoll turn the loop
// only reads (a microsecond or two); a client that waited for its own reply
// comes back after a loopback round trip, tens of microseconds.
const burstGap = 5_000 // ns

// loopState is what one event loop keeps for all its connections. Only the
// loop's own goroutine uses it after loopFor made it.
type loopState struct {
	srv *Server
	el  gnet.EventLoop
	rec *cmdstats.Recorder // this loop's command statistics (see cmdstats.go)

	// lastEnd is when the loop last finished serving a client (cmdstats
	// clock); armed is set while Run is queued; deferred holds the clients
	// whose replies Run writes. Invariant: deferred is empty unless armed.
	lastEnd  int64
	armed    bool
	deferred []*client
}

// loops maps each event loop to its loopState.
type loops struct {
	mu sync.Mutex
	m  map[gnet.EventLoop]*loopState
}

// loopFor returns the state of gc's event loop, creating it the first time
// that loop opens a connection.
func (s *Server) loopFor(gc gnet.Conn) *loopState {
	var el gnet.EventLoop
	if gc != nil {
		el = gc.EventLoop()
	}
	s.loops.mu.Lock()
	defer s.loops.mu.Unlock()
	l := s.loops.m[el]
	if l == nil {
		l = &loopState{srv: s, el: el, rec: s.cmdStats.NewRecorder()}
		s.loops.m[el] = l
	}
	return l
}

// busy reports whether a turn that started at start (cmdstats clock) is part
// of a burst of clients on this loop.
func (l *loopState) busy(start int64) bool { return start-l.lastEnd < burstGap }

// writeBack writes c's replies now, or with the loop's other replies when
// deferrable (busy loop, pipelined client: see above) or when a write-back
// is already queued, and marks the end of serving c: after the write, which
// is not part of the gap to the next client.
func (l *loopState) writeBack(c *client, deferrable bool) {
	defer func() { l.lastEnd = cmdstats.Now() }()
	if len(c.out) == 0 {
		return
	}
	if !deferrable && !l.armed || l.el == nil {
		l.srv.flush(c)
		return
	}
	if !l.armed {
		if err := l.el.Execute(context.Background(), l); err != nil {
			l.srv.flush(c) // the engine is stopping: no more tasks
			return
		}
		l.armed = true
	}
	l.deferred = append(l.deferred, c)
}

// Run writes the deferred replies; gnet runs it on the loop after a turn's
// callbacks. A client closed since it was deferred is skipped: its file
// descriptor may already belong to a new connection.
func (l *loopState) Run(context.Context) error {
	for i, c := range l.deferred {
		if c.state != connClosed {
			l.srv.flush(c)
		}
		l.deferred[i] = nil
	}
	l.deferred = l.deferred[:0]
	l.armed = false
	l.lastEnd = cmdstats.Now()
	return nil
}
