package netloop

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop/clientmem"
	"github.com/svcdb/svcdb/netloop/tracking"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// client is one connection's state. Fields without "atomic" in their type are
// owned by the connection's event loop (see the package doc).
type client struct {
	noCopy noCopy

	srv  *Server
	conn gnet.Conn
	id   int64
	addr string // remote ip:port
	lad  string // local ip:port
	fd   int
	// local: the peer is a loopback address (security.go), set in OnOpen.
	local bool
	// sub is the subcommand of the local command running now, resolved once
	// by process (Server.local, Server.subcommand); nil otherwise.
	sub *command.Command
	// replica: what REPLCONF told before SYNC/PSYNC (replcmd.go); nil for
	// every other connection.
	replica *replication.ReplicaInfo

	parser resp.Parser
	argv   [][]byte     // the parsed command's arguments; capacity kept up to maxRetainedArgv
	qb     []byte       // a large command's own query buffer (querybuf.go)
	out    []byte       // replies of this loop turn, written once at its end
	ctx    keyspace.Ctx // DB, RESP3 and scratch for inline execution
	batch  shard.Batch
	// state is the connection's phase (state.go); the fields below it are
	// meaningful only in the states named.
	state connState
	// batchStart: cmdstats clock when the batch's first command was parsed
	// (connFilling to connQueued): its commands' latency runs from here to
	// the batch's completion.
	batchStart int64
	// protoErr: the protocol error written once the batch completes
	// (connWaitingRoomThenClose, connQueuedThenClose).
	protoErr error
	// deferred: the reply of connAwaiting or connBlocked, stored by another
	// goroutine.
	deferred atomic.Pointer[[]byte]
	// blocked: connBlocked's waiter (multi.go); retryBlocked: its wait ended
	// without a reply, run it again; abortedBlocked: the server ended it
	// (REPLICAOF), close after the reply (a blocked WAIT's too).
	blocked        *keyspace.Waiter
	retryBlocked   atomic.Bool
	abortedBlocked atomic.Bool
	multi          multiState // MULTI/EXEC/WATCH (multi.go)
	// replyMode is CLIENT REPLY's mode; dropReply: the reply of the command
	// in flight is not sent (clientcmd.go, processQuiet).
	replyMode uint8
	dropReply bool
	// flushSeen: the tracker's flush count when a FLUSHDB or FLUSHALL
	// of this client was processed (tracking.go, trackEmptyFlush).
	flushSeen uint64
	// authed: authenticated, or connected while the default user needed no
	// password (Redis' c->authenticated; see authRequired in acl.go).
	authed bool
	user   *acl.User   // the ACL user; never nil (acl.go)
	spans  []batchSpan // per-request spans of the queued batch, ended when it completes

	loop *loopState // the event loop's command statistics and deferred replies (writeback.go)
	tick int64      // cmdstats.Now at the end of the last command or the start of the read (see lap)

	// Counters this loop adds up per turn and publishes with one store each.
	commands int64
	netIn    int64
	netOut   int64

	// Read by other goroutines (CLIENT LIST/INFO/KILL, idle timeout).
	created         time.Time
	lastInteraction atomic.Int64 // unix ms
	lastCmd         atomic.Pointer[string]
	db              atomic.Int32
	resp3           atomic.Bool
	name            atomic.Pointer[string]
	libName         atomic.Pointer[string]
	libVer          atomic.Pointer[string]
	killed          atomic.Bool
	monitor         atomic.Bool                         // MONITOR ran (monitor.go)
	pausedFlag      atomic.Bool                         // parked by CLIENT PAUSE (pause.go)
	noEvict         atomic.Bool                         // CLIENT NO-EVICT ON
	mem             clientmem.Entry                     // client eviction's view of it (clientcmd.go, netloop/clientmem)
	blockedPub      atomic.Pointer[keyspace.Waiter]     // blocked, for other loops (CLIENT UNBLOCK, LIST)
	waitAck         atomic.Pointer[replication.AckWait] // blocked in WAIT, as blockedPub
	ps              atomic.Pointer[pubsubState]         // Pub/Sub state and mailbox, made on first use (pubsub.go)
	trk             tracking.State                      // CLIENT TRACKING state (netloop/tracking; tracking.go)
	pubCommands     atomic.Int64
	pubNetIn        atomic.Int64
	pubNetOut       atomic.Int64
	qbuf            atomic.Int64 // input buffered, unparsed (querybuf.go)
	qbufFree        atomic.Int64
	argvMem         atomic.Int64
	multiMem        atomic.Int64 // commands queued in MULTI (multi.go): CLIENT LIST multi-mem
	obl             atomic.Int64
	userPub         atomic.Pointer[acl.User] // user, for other goroutines (CLIENT LIST, ACL DELUSER)
	aclRecheck      atomic.Bool              // the user's channels shrank: check subscriptions (acl.go)
}

// noCopy makes `go vet` flag copies of a client.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// BatchDone is called by the goroutine that executed the client's batch, or
// by a shard whose full queue refused it and now has room; it only wakes
// the client's loop, which picks the replies up or submits again (OnTraffic).
func (c *client) BatchDone() { _ = c.conn.Wake(nil) }

// setLastCmd records name for CLIENT LIST's cmd= field, storing only a
// change: an atomic store is a locked XCHG, and a pipeline repeats one name.
func (c *client) setLastCmd(name *string) {
	if c.lastCmd.Load() != name {
		c.lastCmd.Store(name)
	}
}

func (c *client) stringField(p *atomic.Pointer[string]) string {
	if s := p.Load(); s != nil {
		return *s
	}
	return ""
}

// publish makes this turn's counters visible to readers on other goroutines.
func (c *client) publish(now int64) {
	c.lastInteraction.Store(now)
	c.pubCommands.Store(c.commands)
	c.pubNetIn.Store(c.netIn)
	// pubNetOut is stored by flush, as the bytes go out.
}

// ---- registry ----------------------------------------------------------------

func (s *Server) register(c *client) {
	s.registryMu.Lock()
	s.registry[c.id] = c
	s.registryMu.Unlock()
}

func (s *Server) unregister(c *client) {
	s.registryMu.Lock()
	delete(s.registry, c.id)
	s.registryMu.Unlock()
	s.pausedMu.Lock()
	delete(s.paused, c)
	s.pausedMu.Unlock()
	s.stats.commands.Add(c.commands)
	s.stats.netIn.Add(c.netIn)
	s.stats.netOut.Add(c.netOut)
}

// clients returns a snapshot of the connected clients, ordered by id.
func (s *Server) clients() []*client {
	s.registryMu.Lock()
	out := make([]*client, 0, len(s.registry))
	for _, c := range s.registry {
		out = append(out, c)
	}
	s.registryMu.Unlock()
	slices.SortFunc(out, func(a, b *client) int { return cmp.Compare(a.id, b.id) })
	return out
}

func (s *Server) totalCommands() int64 {
	n := s.stats.commands.Load()
	s.registryMu.Lock()
	for _, c := range s.registry {
		n += c.pubCommands.Load()
	}
	s.registryMu.Unlock()
	return n
}

func (s *Server) totalNet() (in, out int64) {
	in, out = s.stats.netIn.Load(), s.stats.netOut.Load()
	s.registryMu.Lock()
	for _, c := range s.registry {
		in += c.pubNetIn.Load()
		out += c.pubNetOut.Load()
	}
	s.registryMu.Unlock()
	return in, out
}

// ---- back-pressure and timeouts (ticker goroutine) ---------------------------

// pause records that c stopped parsing because its replies are not being
// read; the resumer wakes it until its outbound buffer has drained.
func (s *Server) pause(c *client) {
	s.pausedMu.Lock()
	s.paused[c] = struct{}{}
	first := len(s.paused) == 1
	s.pausedMu.Unlock()
	if first {
		select {
		case s.resumeKick <- struct{}{}:
		default:
		}
	}
}

// resumeEvery is how often paused clients are woken to re-check their
// outbound buffer. gnet has no "drained" callback, so this poll is what lets a
// client that reads fast again get its next replies; it runs only while some
// client is paused.
const resumeEvery = time.Millisecond

// resumer wakes paused clients every resumeEvery while there are any. Each
// client's own loop decides whether it may continue (OnTraffic).
func (s *Server) resumer() {
	t := time.NewTicker(resumeEvery)
	defer t.Stop()
	for {
		select {
		case <-s.resumeKick:
		case <-s.stopped:
			return
		}
		for {
			s.pausedMu.Lock()
			n := len(s.paused)
			for c := range s.paused {
				_ = c.conn.Wake(nil)
			}
			s.pausedMu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-t.C:
			case <-s.stopped:
				return
			}
		}
	}
}

func (s *Server) closeIdle() {
	limit := time.Now().Add(-time.Duration(s.live.idleTimeout.Load())).UnixMilli()
	s.registryMu.Lock()
	defer s.registryMu.Unlock()
	for _, c := range s.registry {
		if c.lastInteraction.Load() < limit && !c.inPubSub() && !c.killed.Swap(true) { // as Redis, subscribers never time out
			_ = c.conn.Wake(nil)
		}
	}
}
