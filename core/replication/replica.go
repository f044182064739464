package replication

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Target is what a replica does to its dataset: the runtime implements it
// (shard.ReplicaTarget). Its methods are called from the link's goroutine
// only, one at a time.
type Target interface {
	// Begin is called when a master becomes a replica (SetMaster), before
	// any other method: from here on the master decides what expires, and
	// only the stream writes while readOnly (replica-read-only) reports
	// true: a client's write that was let through while the server was a
	// master and runs after at is refused. at runs while no command runs,
	// after that fence is up: the dataset it sees is final.
	Begin(readOnly func() bool, at func())
	// Load replaces the whole dataset with the RDB snapshot read from rdb.
	Load(rdb io.Reader) error
	// Apply runs one command of the master's stream (SELECT, MULTI and EXEC
	// included). args are valid until Apply returns. An error is the
	// command's (logged; the stream goes on, as Redis ignores the replies
	// of its master's commands).
	Apply(args [][]byte) error
	// DropMulti forgets a transaction whose EXEC will not come (the link
	// broke inside it).
	DropMulti()
	// End is called when the server stops being a replica (REPLICAOF NO
	// ONE, shutdown).
	End()
}

// Config is what a Replica needs. Zero values mean the documented default.
type Config struct {
	Target Target
	Logger *slog.Logger
	// Dir is where a disk-based full sync writes the master's payload
	// before loading it (Redis' temp-<time>.<pid>.rdb in dir); default the
	// system's temporary directory.
	Dir string
	// ListeningPort is announced with REPLCONF listening-port (the port this
	// server accepts clients on); it is asked at each connection.
	ListeningPort func() int
	// Auth returns masteruser and masterauth, read at each connection as
	// Redis reads them; an empty password means no AUTH.
	Auth func() (user, pass string)
	// Timeout is repl-timeout: the link drops when the master sends nothing
	// for this long; default 60 s, as Redis.
	Timeout time.Duration
	// AckPeriod is how often REPLCONF ACK is sent; default 1 s, as Redis'
	// replicationCron.
	AckPeriod time.Duration
	// RetryMin and RetryMax bound the back-off between connection attempts;
	// default 100 ms doubling up to 1 s (Redis retries from its once-a-second
	// cron).
	RetryMin, RetryMax time.Duration
	// MaxBulkLen is proto-max-bulk-len, read at each connection: the
	// largest argument the master's stream may carry (as Redis' master
	// client). nil: the parser's default, 512 MiB.
	MaxBulkLen func() int64
	// Priority is replica-priority (INFO's slave_priority; Sentinel
	// promotes the lowest, never 0), Announced replica-announced; both read
	// at each INFO. nil: 100 and yes.
	Priority  func() int
	Announced func() bool
	// Announce returns replica-announce-ip and replica-announce-port, read
	// at each connection to the master: a non-empty IP is sent with
	// REPLCONF ip-address, a non-zero port replaces ListeningPort's. nil:
	// none.
	Announce func() (ip string, port int)
	// NewClientID hands out the client ID the link to our master shows in
	// CLIENT LIST (the server's client ID sequence). nil: a package counter.
	NewClientID func() int64
	// AfterFullSync is told when a full sync loaded (e.g. to rewrite the
	// replica's own append-only file). May be nil.
	AfterFullSync func()

	// The master side (serve.go). Source writes the snapshot a full sync
	// sends (nil: SYNC and PSYNC fail); BacklogSize is the backlog's size
	// in bytes (Redis' repl-backlog-size default, 1 MiB, when 0).
	Source      Source
	BacklogSize int
	// DisklessSync is repl-diskless-sync, read at each full sync: stream the
	// snapshot to a replica that announced capa eof. nil: disk-based.
	DisklessSync func() bool
}

// LinkState is the replica's state, Redis' repl_state.
type LinkState int32

const (
	StateNone       LinkState = iota // not a replica
	StateConnect                     // must connect (waiting to retry)
	StateConnecting                  // TCP connect in progress
	StateHandshake                   // PING .. PSYNC
	StateTransfer                    // receiving the RDB payload
	StateLoading                     // loading it (-LOADING to clients)
	StateConnected                   // streaming
)

// roleState is ROLE's name for a state (roleCommand).
func (s LinkState) roleState() string {
	switch s {
	case StateConnect:
		return "connect"
	case StateConnecting:
		return "connecting"
	case StateHandshake:
		return "handshake"
	case StateTransfer, StateLoading:
		return "sync"
	case StateConnected:
		return "connected"
	}
	return "none"
}

// master is the master this server replicates from and the link's
// lifetime: cancel stops the goroutine, done is closed when it returned.
type master struct {
	host   string
	port   int
	cancel context.CancelFunc
	done   chan struct{}
}

// Replica is this server's replication role: a master by default (no link),
// a replica after SetMaster. It keeps the replication IDs INFO and ROLE
// report. Its methods are safe for concurrent use; the hot-path ones
// (Refusal) are one atomic load while the server is a master.
type Replica struct {
	cfg Config
	log *slog.Logger

	roleMu sync.Mutex // guards m and changes of role; held while a link stops
	m      *master
	// addr is m's host and port for readers (INFO, ROLE, CLIENT LIST), who
	// must not wait on roleMu: a role change holds it while the old link
	// stops, which may take as long as loading a snapshot. nil: a master.
	addr atomic.Pointer[masterAddr]

	idMu   sync.Mutex // guards ids and cached; the link goroutine takes it, never roleMu
	ids    IDs
	cached *cachedMaster // the master's ID and offset after a link broke: PSYNC tries them

	state      atomic.Int32 // LinkState
	readOnly   atomic.Bool  // replica-read-only
	serveStale atomic.Bool  // replica-serve-stale-data
	offset     atomic.Int64 // slave_repl_offset (and master_repl_offset on a replica)
	readOff    atomic.Int64 // slave_read_repl_offset
	lastIO     atomic.Int64 // unix seconds of the last byte from the master
	downSince  atomic.Int64 // unix seconds the link went down; 0: never up
	everUp     atomic.Bool  // the link was up once since SetMaster
	xferSize   atomic.Int64 // master_sync_total_bytes (-1: EOF-marked)
	xferRead   atomic.Int64 // master_sync_read_bytes
	xferLastIO atomic.Int64 // unix seconds of the last payload byte

	fullSyncs, partialSyncs atomic.Int64 // since start, for INFO and tests

	// gate is held by the link while a command of the master's stream runs
	// and its offset is recorded (and while a sync replaces the dataset and
	// the offsets), and by a full sync this server serves to its own
	// replica until its snapshot's point in time (pauseStream): that
	// snapshot is then the dataset at the offset +FULLRESYNC announces.
	gate sync.Mutex

	feed masterFeed                 // the master side: attached replicas, the backlog (serve.go)
	link atomic.Pointer[masterLink] // the current connection to our master (links.go)
}

// masterAddr is the master a replica follows, as INFO and ROLE show it.
type masterAddr struct {
	host string
	port int
}

// cachedMaster is what PSYNC sends after a broken link (Redis'
// cached_master): the master's replication ID and our offset in it.
type cachedMaster struct {
	replID string
	offset int64
}

// New returns a Replica in the master role, with a fresh replication ID.
func New(cfg Config) *Replica {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.BacklogSize <= 0 {
		cfg.BacklogSize = 1 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.AckPeriod <= 0 {
		cfg.AckPeriod = time.Second
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = 100 * time.Millisecond
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = time.Second
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	r := &Replica{cfg: cfg, log: cfg.Logger, ids: NewIDs()}
	r.readOnly.Store(true)
	r.serveStale.Store(true)
	return r
}

// SetReadOnly sets replica-read-only; SetServeStale replica-serve-stale-data.
func (r *Replica) SetReadOnly(on bool)   { r.readOnly.Store(on) }
func (r *Replica) SetServeStale(on bool) { r.serveStale.Store(on) }

// State is the link's state (StateNone on a master).
func (r *Replica) State() LinkState { return LinkState(r.state.Load()) }

// IsReplica reports whether the server follows a master.
func (r *Replica) IsReplica() bool { return r.State() != StateNone }

// Offset is the replication offset processed (slave_repl_offset).
func (r *Replica) Offset() int64 { return r.offset.Load() }

// FullSyncs and PartialSyncs count the syncs this replica did since start.
func (r *Replica) FullSyncs() int64    { return r.fullSyncs.Load() }
func (r *Replica) PartialSyncs() int64 { return r.partialSyncs.Load() }

// ErrSameMaster is SetMaster's answer when the server already follows that
// master: Redis replies "+OK Already connected to specified master".
var ErrSameMaster = errors.New("already connected to specified master")

// SetMaster makes the server a replica of host:port (REPLICAOF host port),
// dropping the link to a previous master. Keys stay until a full sync
// replaces them. A replica that switches masters asks the new one to
// continue the old one's history (after a failover the promoted replica
// shares it: +CONTINUE); so does a master that becomes a replica, with its
// own ID and offset (Redis' replicationCacheMasterUsingMyself): the replica
// promoted in its place holds that ID as its secondary one.
func (r *Replica) SetMaster(host string, port int) error {
	r.roleMu.Lock()
	defer r.roleMu.Unlock()
	if r.m != nil && r.m.port == port && equalFoldASCII(r.m.host, host) {
		return ErrSameMaster
	}
	wasMaster := r.m == nil
	r.stopLocked()
	r.addr.Store(&masterAddr{host: host, port: port})
	r.everUp.Store(false)
	r.downSince.Store(time.Now().Unix())
	if wasMaster {
		r.dropReplicas() // they reconnect and continue from us once our link is up
		r.cfg.Target.Begin(r.readOnly.Load, r.demoteAt)
	}
	r.state.Store(int32(StateConnect))
	ctx, cancel := context.WithCancel(context.Background())
	m := &master{host: host, port: port, cancel: cancel, done: make(chan struct{})}
	r.m = m
	r.log.Info("connecting to master", "master", net.JoinHostPort(host, strconv.Itoa(port)))
	go r.run(ctx, m)
	return nil
}

// demoteAt runs while no command runs, the write fence up (Target.Begin):
// the server turns replica there, so no write of a client runs after the
// offset is taken, and it caches itself as the master to continue
// (replicationCacheMasterUsingMyself): PSYNC <our ID> <our offset+1>. The
// offset is the backlog's end: every write since the first replica
// attached is counted there. Without a backlog no write was counted, and
// the offset vouches for nothing: PSYNC ? -1.
func (r *Replica) demoteAt() {
	r.state.Store(int32(StateConnect))
	r.feed.mu.Lock()
	var off int64 = -1
	if r.feed.backlog != nil {
		off = r.feed.backlog.Offset()
	}
	r.feed.mu.Unlock()
	r.idMu.Lock()
	r.cached = nil
	id := r.ids.ID
	if off >= 0 {
		r.cached = &cachedMaster{replID: id, offset: off}
		r.offset.Store(off)
		r.readOff.Store(off)
	}
	r.idMu.Unlock()
	if off >= 0 {
		r.log.Info("before turning into a replica, using my own ID and offset to synthesize a cached master: a partial resync may follow",
			"replid", id, "offset", off)
	}
}

// SetMasterNone makes the server a master again (REPLICAOF NO ONE): the
// link closes, the data stays, writes are accepted, and the replication ID
// shifts (the old one becomes the secondary ID, valid up to our offset, so
// the other replicas of the old master, and our own, continue from us).
// Our own replicas are disconnected to learn the new ID (Redis'
// disconnectSlaves in replicationUnsetMaster): they reconnect and continue
// with +CONTINUE <new id>.
func (r *Replica) SetMasterNone() {
	r.roleMu.Lock()
	defer r.roleMu.Unlock()
	if r.m == nil {
		return
	}
	r.stopLocked()
	r.m = nil
	r.addr.Store(nil)
	r.idMu.Lock()
	r.cached = nil
	r.ids.Shift(r.offset.Load())
	r.idMu.Unlock()
	r.disconnectReplicas()
	r.feed.mu.Lock()
	r.feed.refreshGoodLocked() // a new master has no replicas yet
	kept := r.feed.backlog != nil
	r.feed.mu.Unlock()
	if kept && r.cfg.Source != nil {
		// Our backlog holds the old master's stream up to our offset: our
		// own writes continue it from now on (Append ignores records until
		// the state below says master).
		r.cfg.Source.StartReplicaFeed(r)
	}
	r.cfg.Target.End() // the fence down first: a client's write let through from here on runs
	r.state.Store(int32(StateNone))
	r.log.Info("MASTER MODE enabled (user request)")
}

// Close stops the link at shutdown: no command of the master's runs after
// it returns. The role is kept (nothing reads it any more).
func (r *Replica) Close() {
	r.roleMu.Lock()
	defer r.roleMu.Unlock()
	r.stopLocked()
}

// stopLocked stops the link goroutine and waits for it.
// REQUIRES: r.roleMu held.
func (r *Replica) stopLocked() {
	if r.m == nil {
		return
	}
	r.m.cancel()
	<-r.m.done
}

// run connects, syncs and streams until ctx ends, reconnecting with
// back-off.
func (r *Replica) run(ctx context.Context, m *master) {
	defer close(m.done)
	addr := net.JoinHostPort(m.host, strconv.Itoa(m.port))
	wait := r.cfg.RetryMin
	for ctx.Err() == nil {
		up, err := r.session(ctx, addr)
		if ctx.Err() != nil {
			break
		}
		if up {
			wait = r.cfg.RetryMin // a link that was up retries at once-ish
		}
		r.linkDown()
		r.log.Warn("replication link with master lost, retrying", "master", addr, "err", err, "in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(wait*2, r.cfg.RetryMax)
	}
	r.linkDown()
}

// linkDown records that the link is down.
func (r *Replica) linkDown() {
	if LinkState(r.state.Load()) == StateConnected {
		r.downSince.Store(time.Now().Unix())
	}
	r.state.Store(int32(StateConnect))
}

// conn is one connection to the master: reads through a buffered reader,
// writes (the link goroutine's and the ACK ticker's) under a mutex.
type conn struct {
	nc      net.Conn
	rd      *bufio.Reader
	wmu     sync.Mutex
	timeout time.Duration
	r       *Replica
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.timeout))
	_, err := c.nc.Write(b)
	return err
}

// readLine reads one reply line without its CRLF (or LF) within the
// timeout.
func (c *conn) readLine() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.timeout))
	line, err := c.rd.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("reply line from master longer than %d bytes", c.rd.Size())
		}
		return nil, err
	}
	c.r.lastIO.Store(time.Now().Unix())
	return bytes.TrimRight(line, "\r\n"), nil
}

// command sends args and returns the reply line.
func (c *conn) command(args ...string) ([]byte, error) {
	if err := c.write(AppendCommand(nil, args...)); err != nil {
		return nil, err
	}
	return c.readLine()
}

// session is one connection: handshake, sync, stream. up reports whether
// the link reached the streaming state.
func (r *Replica) session(ctx context.Context, addr string) (up bool, err error) {
	r.state.Store(int32(StateConnecting))
	d := net.Dialer{Timeout: r.cfg.Timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	defer nc.Close()
	r.link.Store(&masterLink{id: r.newClientID(), nc: nc, created: time.Now()})
	defer r.link.Store(nil)
	c := &conn{nc: nc, rd: bufio.NewReaderSize(nc, 64<<10), timeout: r.cfg.Timeout, r: r}
	r.state.Store(int32(StateHandshake))
	reply, err := r.handshake(c)
	if err != nil {
		return false, err
	}
	switch reply.Kind {
	case TryLater:
		return false, errors.New("master is not ready to sync (NOMASTERLINK or LOADING), retrying later")
	case FullResync:
		if err := r.fullSync(c, reply); err != nil {
			return false, err
		}
	case Continue:
		r.partialSync(reply)
	}
	return true, r.stream(ctx, c)
}

// handshake runs PING, AUTH, REPLCONF and PSYNC (syncWithMaster).
func (r *Replica) handshake(c *conn) (PSyncReply, error) {
	line, err := c.command("PING")
	if err != nil {
		return PSyncReply{}, err
	}
	// Redis accepts -NOAUTH, -NOPERM and the old "-ERR operation not
	// permitted" here: authentication comes next.
	if len(line) > 0 && line[0] == '-' && !bytes.HasPrefix(line, []byte("-NOAUTH")) &&
		!bytes.HasPrefix(line, []byte("-NOPERM")) && !bytes.HasPrefix(line, []byte("-ERR operation not permitted")) {
		return PSyncReply{}, fmt.Errorf("error reply to PING from master: %q", line)
	}
	if r.cfg.Auth != nil {
		if user, pass := r.cfg.Auth(); pass != "" {
			args := []string{"AUTH", pass}
			if user != "" {
				args = []string{"AUTH", user, pass}
			}
			if line, err = c.command(args...); err != nil {
				return PSyncReply{}, err
			}
			if len(line) > 0 && line[0] == '-' {
				return PSyncReply{}, fmt.Errorf("unable to AUTH to MASTER: %q", line)
			}
		}
	}
	var annIP string
	annPort := 0
	if r.cfg.Announce != nil {
		annIP, annPort = r.cfg.Announce()
	}
	if annPort == 0 && r.cfg.ListeningPort != nil {
		annPort = r.cfg.ListeningPort()
	}
	if annPort != 0 {
		if line, err = c.command("REPLCONF", "listening-port", strconv.Itoa(annPort)); err != nil {
			return PSyncReply{}, err
		}
		if len(line) > 0 && line[0] == '-' { // not fatal, as in Redis
			r.log.Info("master does not understand REPLCONF listening-port", "reply", string(line))
		}
	}
	if annIP != "" {
		if line, err = c.command("REPLCONF", "ip-address", annIP); err != nil {
			return PSyncReply{}, err
		}
		if len(line) > 0 && line[0] == '-' { // not fatal, as in Redis
			r.log.Info("master does not understand REPLCONF ip-address", "reply", string(line))
		}
	}
	if line, err = c.command("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return PSyncReply{}, err
	}
	if len(line) > 0 && line[0] == '-' {
		r.log.Info("master does not understand REPLCONF capa", "reply", string(line))
	}
	psync := []string{"PSYNC", "?", "-1"}
	r.idMu.Lock()
	cached := r.cached
	r.idMu.Unlock()
	if cached != nil {
		psync = []string{"PSYNC", cached.replID, strconv.FormatInt(cached.offset+1, 10)}
	}
	if err := c.write(AppendCommand(nil, psync...)); err != nil {
		return PSyncReply{}, err
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return PSyncReply{}, err
		}
		if len(line) == 0 {
			continue // keep-alive newline while the master prepares
		}
		return ParsePSyncReply(line)
	}
}

// partialSync continues the cached master's stream (+CONTINUE).
func (r *Replica) partialSync(reply PSyncReply) {
	r.gate.Lock()
	defer r.gate.Unlock()
	r.idMu.Lock()
	off := r.cached.offset
	newID := reply.ReplID != "" && reply.ReplID != r.cached.replID
	if newID {
		// The master was promoted: its new ID continues our history up to
		// off; keep the old one as the secondary ID (PSYNC2).
		r.ids.ID2, r.ids.Offset2 = r.cached.replID, off+1
		r.ids.ID = reply.ReplID
	} else {
		r.ids.ID = r.cached.replID
	}
	r.cached = nil
	r.idMu.Unlock()
	if newID {
		// Our replicas must learn the new ID: they reconnect and continue
		// on it (Redis' disconnectSlaves in slaveTryPartialResynchronization).
		r.disconnectReplicas()
	}
	r.resetBacklog(off)
	r.offset.Store(off)
	r.readOff.Store(off)
	r.partialSyncs.Add(1)
	r.log.Info("MASTER <-> REPLICA sync: master accepted a partial resynchronization", "offset", off)
}

// fullSync receives the payload, then loads it (readSyncBulkPayload): to a
// file first, so that a transfer that breaks leaves the old data served.
func (r *Replica) fullSync(c *conn, reply PSyncReply) error {
	r.log.Info("full resync from master", "replid", reply.ReplID, "offset", reply.Offset)
	r.state.Store(int32(StateTransfer))
	var hdr Transfer
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			continue // keep-alive newline while the master makes the snapshot
		}
		if hdr, err = ParseTransferHeader(line); err != nil {
			return err
		}
		break
	}
	r.xferSize.Store(hdr.Size)
	r.xferRead.Store(0)
	f, err := os.CreateTemp(r.cfg.Dir, "temp-replica-*.rdb")
	if err != nil {
		return fmt.Errorf("opening the temporary file for the master's payload: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := r.receive(c, hdr, f); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r.state.Store(int32(StateLoading))
	r.log.Info("MASTER <-> REPLICA sync: loading the master's snapshot", "bytes", r.xferRead.Load())
	r.gate.Lock()
	defer r.gate.Unlock()
	// Our replicas' history ends here: they sync again from us (Redis'
	// replicationAttachToNewMaster).
	r.disconnectReplicas()
	r.cfg.Target.DropMulti()
	if err := r.cfg.Target.Load(bufio.NewReaderSize(f, 1<<20)); err != nil {
		// The dataset is flushed and partly loaded: retry the whole sync.
		return fmt.Errorf("loading the master's snapshot: %w", err)
	}
	r.idMu.Lock()
	r.ids.ID, r.ids.ID2, r.ids.Offset2 = reply.ReplID, zeroID, -1
	r.cached = nil
	r.idMu.Unlock()
	r.feed.mu.Lock()
	r.feed.backlog = nil // a new history: the backlog starts at its offset
	r.feed.mu.Unlock()
	r.resetBacklog(reply.Offset)
	r.offset.Store(reply.Offset)
	r.readOff.Store(reply.Offset)
	r.fullSyncs.Add(1)
	if r.cfg.AfterFullSync != nil {
		r.cfg.AfterFullSync()
	}
	r.log.Info("MASTER <-> REPLICA sync: finished with success")
	return nil
}

// receive copies the payload to w: Size bytes, or up to the EOF mark
// (checked at the end of every read, as Redis does: a diskless master
// sends nothing after it until we ACK).
func (r *Replica) receive(c *conn, hdr Transfer, w io.Writer) error {
	buf := make([]byte, 64<<10)
	var tail []byte // the last IDLen bytes received (EOF-marked payloads)
	var all []byte  // tail + the chunk just read, reused
	var got int64
	for hdr.Size < 0 || got < hdr.Size {
		want := len(buf)
		if hdr.Size >= 0 {
			want = int(min(int64(want), hdr.Size-got))
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(c.timeout))
		n, err := c.rd.Read(buf[:want])
		if n > 0 {
			now := time.Now().Unix()
			r.lastIO.Store(now)
			r.xferLastIO.Store(now)
			got += int64(n)
			r.xferRead.Store(got)
			chunk := buf[:n]
			if hdr.Size < 0 {
				// Hold back the last IDLen bytes: they may be the mark.
				all = append(append(all[:0], tail...), chunk...)
				if len(all) >= IDLen && bytes.Equal(all[len(all)-IDLen:], hdr.Mark) {
					if _, werr := w.Write(all[:len(all)-IDLen]); werr != nil {
						return werr
					}
					return nil
				}
				keep := min(len(all), IDLen)
				if _, werr := w.Write(all[:len(all)-keep]); werr != nil {
					return werr
				}
				tail = append(tail[:0], all[len(all)-keep:]...)
			} else if _, werr := w.Write(chunk); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// stream applies the master's commands until the link breaks or ctx ends,
// acknowledging the offset every AckPeriod.
func (r *Replica) stream(ctx context.Context, c *conn) error {
	var s Stream
	s.Reset(r.offset.Load())
	if r.cfg.MaxBulkLen != nil {
		s.parser.Limits.MaxBulkLen = r.cfg.MaxBulkLen()
	}
	r.state.Store(int32(StateConnected))
	r.everUp.Store(true)
	r.lastIO.Store(time.Now().Unix())
	r.log.Info("MASTER <-> REPLICA link up")
	// The first ACK at once: a diskless master puts us online on it.
	if err := c.write(AppendAck(nil, s.Applied)); err != nil {
		return err
	}
	ackDone := make(chan struct{})
	defer close(ackDone)
	go func() {
		t := time.NewTicker(r.cfg.AckPeriod)
		defer t.Stop()
		var b []byte
		for {
			select {
			case <-ackDone:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				b = AppendAck(b[:0], r.offset.Load())
				if c.write(b) != nil {
					c.nc.Close() // the reader sees it and reconnects
					return
				}
			}
		}
	}()
	defer func() {
		if s.InMulti() {
			r.cfg.Target.DropMulti()
		}
		// Whatever broke the link, the next PSYNC (to this master or, after
		// REPLICAOF, to another that shares its history) asks to continue.
		r.cacheMaster(&s)
	}()
	buf := make([]byte, 0, 64<<10)
	var ack []byte
	// The master's bytes go into our backlog once applied (a transaction's
	// at its EXEC), at the master's offsets: promoted, this server lets
	// the old master's other replicas continue (PSYNC2).
	var pend []byte
	fed := s.Applied
	for {
		// Parse what is buffered; read more only when a command is partial.
		off := 0
		for off < len(buf) {
			args, n, err := s.Next(buf[off:])
			if err != nil {
				return fmt.Errorf("protocol error in the master's stream: %w", err)
			}
			if n == 0 {
				break
			}
			off += n
			r.readOff.Store(s.Read)
			r.gate.Lock() // a snapshot for our own replica sees every command or none
			if len(args) >= 2 && eqFold(args[0], "replconf") {
				if eqFold(args[1], "getack") {
					ack = AppendAck(ack[:0], s.Applied) // before this command, as Redis
					if err := c.write(ack); err != nil {
						r.gate.Unlock()
						return err
					}
				}
			} else if len(args) > 0 && !eqFold(args[0], "ping") {
				if err := r.cfg.Target.Apply(args); err != nil {
					r.log.Warn("command from master failed", "command", string(args[0]), "err", err)
				}
			}
			s.Commit(args, n)
			pend = append(pend, buf[off-n:off]...)
			if s.Applied != fed {
				r.feedBacklog(pend)
				pend, fed = pend[:0], s.Applied
			}
			r.offset.Store(s.Applied)
			r.gate.Unlock()
		}
		buf = buf[:copy(buf, buf[off:])]
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), 2*cap(buf))
			copy(grown, buf)
			buf = grown
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(c.timeout))
		n, err := c.rd.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
			r.lastIO.Store(time.Now().Unix())
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == io.EOF {
				err = errors.New("connection closed by master")
			}
			return err
		}
	}
}

// feedBacklog appends the master's applied stream bytes to our backlog and
// to our own replicas (Redis' replicationFeedStreamFromMasterStream): they
// get the master's stream verbatim, at the master's offsets and under its
// ID, so they can continue from either.
func (r *Replica) feedBacklog(p []byte) {
	f := &r.feed
	f.mu.Lock()
	if f.backlog != nil {
		f.backlog.Feed(p)
		r.fanOut(p)
	}
	f.mu.Unlock()
}

// disconnectReplicas closes the connections of the replicas attached to
// this server (Redis' disconnectSlaves); the backlog stays, so they can
// continue from it. Their goroutines remove them.
func (r *Replica) disconnectReplicas() {
	f := &r.feed
	f.mu.Lock()
	for _, a := range f.replicas {
		if !a.gone {
			a.gone = true
			_ = a.conn.Close()
		}
	}
	f.mu.Unlock()
}

// pauseStream holds the master's stream between two commands (the gate)
// until resume is called (once; later calls do nothing): a full sync this
// server serves marks its snapshot meanwhile, so on a replica the snapshot
// is the dataset at the offset +FULLRESYNC announces. It first waits for a
// snapshot already running (BGSAVE, an AOF rewrite) to end, so the stream
// does not pause for it. On a master nothing holds the gate.
func (r *Replica) pauseStream() (resume func()) {
	if b, ok := r.cfg.Source.(interface{ SnapshotRunning() bool }); ok {
		for b.SnapshotRunning() {
			time.Sleep(50 * time.Millisecond)
		}
	}
	r.gate.Lock()
	var once sync.Once
	return func() { once.Do(r.gate.Unlock) }
}

// resetBacklog makes our backlog start after offset, the master's offset
// we hold, unless it already ends there (a partial resync continues it).
func (r *Replica) resetBacklog(offset int64) {
	f := &r.feed
	f.mu.Lock()
	if f.backlog == nil || f.backlog.Offset() != offset {
		f.backlog = NewBacklog(r.backlogSize(), offset)
	}
	f.mu.Unlock()
}

// cacheMaster keeps the master's ID and our offset for the next PSYNC
// (replicationCacheMaster).
func (r *Replica) cacheMaster(s *Stream) {
	r.idMu.Lock()
	r.cached = &cachedMaster{replID: r.ids.ID, offset: s.Applied}
	r.idMu.Unlock()
}

func eqFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func equalFoldASCII(a, b string) bool { return eqFold([]byte(a), toLower(b)) }

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
