package netloop

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/svcdb/svcdb/core/cmdstats"
)

// An event loop writes the replies of a turn together at its end, after it
// has served every client whose input or wake-up came in that turn, as Redis
// writes its replies in beforeSleep. Written one by one as each client is
// served, every write finds its client asleep and wakes it: a wake-up costs
// the writer several microseconds (an inter-processor interrupt, a VM exit on
// virtual machines), and at pipeline 1 writing (tcp_sendmsg into loopback,
// which wakes the client) is about 60% of the server's CPU. Written together,
// a client that wakes for its reply is still reading when the next arrives.
//
// gnet calls Server.OnTurnEnd on each loop after the callbacks and the queued
// tasks of each batch of events (the TurnEnder hook of the patched copy in
// third_party/gnet, see SVCDB-PATCH.md there): so replies that tasks produce
// (a completed batch, a served blocking command, all woken with Wake) go out
// in the same turn. A turn with no events calls nothing and owes nothing.
//
// What writes at once instead, and why (every other reply goes through
// writeBack):
//   - a reply that ends the connection (closeWhenWritten, protocolError):
//     gnet closes the connection when the callback returns;
//   - back-pressure flushes (OnTraffic, consume): what they decide depends
//     on gnet's outbound buffer after the write;
//   - pubsub deliveries (pubsubDeliver): the output limit is checked on what
//     gnet holds after the write;
//   - replies held until durable, offered again (resume, connDurable):
//     whether flush wrote them decides the connection's state;
//   - a loop with no event loop (benchmarks driving consume without gnet).
//
// A client closed before its turn ends is skipped: its file descriptor may
// already belong to a new connection accepted in the same turn.

// loopState is what one event loop keeps for all its connections. Only the
// loop's own goroutine uses it after loopFor made it.
type loopState struct {
	srv *Server
	el  gnet.EventLoop
	rec *cmdstats.Recorder // this loop's command statistics (see cmdstats.go)

	deferred []*client // served this turn: OnTurnEnd writes their replies

	// endWrites counts the clients whose replies OnTurnEnd wrote (tests
	// check that replies take this path); atomic for their reads.
	endWrites atomic.Int64
}

// loops maps each event loop to its loopState: m under mu for loopFor, and
// read, a copy published on every change, for OnTurnEnd's lock-free lookup.
type loops struct {
	mu   sync.Mutex
	m    map[gnet.EventLoop]*loopState
	read atomic.Pointer[map[gnet.EventLoop]*loopState]
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
		read := maps.Clone(s.loops.m)
		s.loops.read.Store(&read)
	}
	return l
}

// writeBack has c's replies written at the end of the loop's turn.
// REQUIRES: on c's loop.
func (l *loopState) writeBack(c *client) {
	switch {
	case len(c.out) == 0:
	case l.el == nil:
		l.srv.flush(c)
	default:
		l.deferred = append(l.deferred, c)
	}
}

var _ gnet.TurnEnder = (*Server)(nil) // the replies' only way out (see above)

// OnTurnEnd writes the replies deferred in el's turn; gnet calls it on el's
// goroutine. It allocates nothing.
func (s *Server) OnTurnEnd(el gnet.EventLoop) {
	read := s.loops.read.Load()
	if read == nil {
		return
	}
	l := (*read)[el]
	if l == nil || len(l.deferred) == 0 {
		return // a loop that has not opened a connection yet, or nothing owed
	}
	for i, c := range l.deferred {
		if c.state != connClosed {
			s.flush(c)
		}
		l.deferred[i] = nil
	}
	l.endWrites.Add(int64(len(l.deferred)))
	l.deferred = l.deferred[:0]
}
