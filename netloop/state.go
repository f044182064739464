package netloop

import "fmt"

// connState is what a connection's loop does with it: parse its input, or
// wait for one thing before parsing more. It is the one place a client's
// phase is kept (a batch filling, queued or waiting for room, a reply
// computed off the loop, a parked blocking command, output back-pressure, a
// reply held for the append-only log, closing), so two phases can never be
// set at once; every change goes through client.to, which refuses a change
// the table below does not list.
//
// Not part of the state: where unparsed input lives (gnet's buffer, or qb
// for a large command, querybuf.go: a property of the input, kept across
// every phase), a transaction (multiState: MULTI runs while reading), and
// the atomics other goroutines set (killed, aclRecheck), which the loop
// checks at the start of each turn.
type connState uint8

const (
	// connReading: parse and run commands (the zero value: a new client).
	connReading connState = iota
	// connFilling: a batch for one shard is being filled during this turn
	// (its shard's token was taken); it is submitted at the end of the turn.
	connFilling
	// connWaitingRoom: the batch is sealed but its shard's queue was full
	// (Runtime.TrySubmit). Parsing stopped, the input stays buffered, and
	// the shard wakes the loop when it has taken a batch out of the queue;
	// the loop then tries again. No sleep, no spin.
	connWaitingRoom
	// connQueued: the batch is in its shard's queue; the shard wakes the
	// loop when its replies are in (Batch.Done).
	connQueued
	// connAwaiting: a command runs off the loop (async.go); its reply
	// arrives in deferred.
	connAwaiting
	// connBlocked: a blocking command is parked in the shards (blocked
	// holds its waiter, multi.go) or WAIT in core/replication (waitAck);
	// its reply arrives in deferred.
	connBlocked
	// connOutputPaused: earlier replies are unread; parsing stopped until
	// the socket's outbound buffer has drained (the resumer wakes the loop).
	connOutputPaused
	// connDurable: replies are held until the append-only log has them on
	// disk (persistcmd.go); the log wakes the loop.
	connDurable
	// connPaused: CLIENT PAUSE postpones the command at the front of the
	// input, which stays unparsed; the pause's end wakes the loop (pause.go).
	connPaused
	// connWaitingRoomThenClose and connQueuedThenClose: a protocol error
	// ended the input while a batch was open. The commands before it still
	// run and answer first; then the error is written and the connection
	// closes (protoErr holds the error).
	connWaitingRoomThenClose
	connQueuedThenClose
	// connClosing: close once the replies are written (QUIT, CLIENT KILL of
	// itself, SHUTDOWN, a disk error under appendfsync always). A reply held
	// for the log is written first.
	connClosing
	// connClosed: OnClose ran; the file descriptor may belong to another
	// connection now.
	connClosed
	numConnStates
)

var connStateNames = [numConnStates]string{
	"reading", "filling", "waiting-room", "queued", "awaiting", "blocked",
	"output-paused", "durable", "paused", "waiting-room-then-close", "queued-then-close",
	"closing", "closed",
}

func (s connState) String() string {
	if s < numConnStates {
		return connStateNames[s]
	}
	return fmt.Sprintf("connState(%d)", uint8(s))
}

// connTransitions lists, for each state, the states it may move to. Closing
// and closed are reachable from everywhere but closed: a disk error or
// OnClose can come in any phase.
var connTransitions = func() (t [numConnStates][numConnStates]bool) {
	allow := func(from connState, to ...connState) {
		for _, s := range to {
			t[from][s] = true
		}
	}
	allow(connReading, connFilling, connAwaiting, connBlocked, connOutputPaused, connDurable, connPaused)
	allow(connFilling, connQueued, connWaitingRoom, connQueuedThenClose, connWaitingRoomThenClose)
	allow(connWaitingRoom, connQueued)
	allow(connWaitingRoomThenClose, connQueuedThenClose)
	allow(connQueued, connReading)
	allow(connAwaiting, connReading)
	allow(connBlocked, connReading)
	allow(connOutputPaused, connReading)
	allow(connDurable, connReading)
	allow(connPaused, connReading)
	for from := range numConnStates {
		if from != connClosed {
			t[from][connClosing] = true
			t[from][connClosed] = true
		}
	}
	return t
}()

// to moves c to state next. A change the table does not allow is a bug: it
// panics, and recoverConn closes that one connection and logs it.
func (c *client) to(next connState) {
	if !connTransitions[c.state][next] {
		panic(fmt.Sprintf("BUG: connection %d: state %v cannot become %v", c.id, c.state, next))
	}
	c.state = next
}

// parsing reports whether c may parse more input in this turn.
func (c *client) parsing() bool { return c.state == connReading || c.state == connFilling }
