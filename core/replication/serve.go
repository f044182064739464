package replication

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

// The master side: replicas attached to this server. A replica's
// connection arrives as a client (REPLCONF, then SYNC or PSYNC); the
// network side hands its socket over with Attach and this package owns it
// from then on, with two goroutines per replica: one writes the full sync
// and then the stream, one reads REPLCONF ACK.
//
// The stream is what the runtime's one execution entry point records for
// the append-only file (the same bytes, SELECTs included): the runtime tees
// its log feed into Feed, which never blocks: it appends to the backlog and
// to each replica's pending buffer under one mutex and wakes the writer. A
// replica whose pending bytes pass client-output-buffer-limit's replica
// class (hard, or soft for soft-seconds) is disconnected, as Redis'
// checkClientOutputBufferLimits does.

// Source is what a full sync needs from the runtime (shard.Runtime's
// WriteReplicaSnapshot): write a point-in-time RDB snapshot of the dataset
// to w, installing feed as the stream's sink and calling at while every
// shard is held, at the snapshot's point in time (no command runs then).
type Source interface {
	WriteReplicaSnapshot(w io.Writer, feed FeedSink, at func()) error
	// StartReplicaFeed makes feed the stream's sink without a snapshot (a
	// promoted replica continues the stream its backlog holds).
	StartReplicaFeed(feed FeedSink)
}

// FeedSink receives the stream's bytes (keyspace.AppendLog's shape).
type FeedSink interface {
	Append(p []byte) int64
}

// ReplicaInfo is what a replica told with REPLCONF before SYNC/PSYNC.
type ReplicaInfo struct {
	ID            int64  // the client ID its connection had (CLIENT LIST, CLIENT KILL ID)
	Addr          string // the connection's remote address (host:port)
	IP            string // REPLCONF ip-address, else the address' host
	ListeningPort int    // REPLCONF listening-port
	CapaEOF       bool
	CapaPSync2    bool
}

// Replica states, as INFO's slaveN state field.
const (
	slaveWaitBgsave = "wait_bgsave"
	slaveSendBulk   = "send_bulk"
	slaveOnline     = "online"
)

// attached is one replica of this master.
type attached struct {
	info    ReplicaInfo
	conn    net.Conn
	id      int64
	created time.Time

	// guarded by masterFeed.mu
	pend      []byte
	state     string
	softSince time.Time // when pend passed the soft limit; zero: under it
	gone      bool

	sync bool // came with SYNC: no +FULLRESYNC line (Redis' CLIENT_PRE_PSYNC)
	// startOnAck: a diskless transfer ended; nothing more is written until
	// the replica's first REPLCONF ACK (Redis' repl_start_cmd_stream_on_ack).
	// The replica finds the EOF mark in the last 40 bytes of what it has
	// read: stream bytes read together with the mark would hide it, and the
	// replica would take the rest of the stream for RDB payload forever.
	// Guarded by masterFeed.mu.
	startOnAck bool
	// waitStart: a full sync's snapshot has not reached its point in time
	// yet (Redis' WAIT_BGSAVE_START): the stream is not fed to it.
	// Guarded by masterFeed.mu.
	waitStart bool
	wake      chan struct{} // cap 1
	ackOff    int64         // guarded by masterFeed.mu
	lastAck   time.Time     // guarded by masterFeed.mu
}

// masterFeed is the master side's state; Replica embeds one.
type masterFeed struct {
	mu       sync.Mutex
	backlog  *Backlog // nil until the first replica attaches
	replicas []*attached
	nextID   int64
	// client-output-buffer-limit's replica class: hard and soft bytes, soft
	// seconds (0: no limit); Redis' defaults until SetReplicaBufferLimit.
	hard, soft, softSecs int64
	backlogSize          int // repl-backlog-size once set; 0: Config.BacklogSize

	fullOK, partialOK, partialErr int64 // sync_full (full syncs decided), sync_partial_ok, sync_partial_err

	// Full syncs shared between replicas (fullsync.go): the jobs not done
	// yet, repl-diskless-sync-delay and -max-replicas, and how many
	// snapshots full syncs took.
	jobs            []*syncJob
	syncDelay       time.Duration
	syncMaxReplicas int
	syncSnapshots   int64

	// The cron (startCron): PING every pingPeriod seconds (0: Redis'
	// default, 10), the backlog freed after backlogTTL seconds without
	// replicas (backlogTTLSet false: Redis' default, 3600; 0: never),
	// counted from noReplicasSince (Redis' repl_no_slaves_since).
	cronStarted     bool
	pingPeriod      int64
	backlogTTL      int64
	backlogTTLSet   bool
	noReplicasSince time.Time

	waits []*AckWait // clients blocked in WAIT (wait.go)

	// min-replicas-to-write and min-replicas-max-lag (seconds); both
	// non-zero turn the check on. good is the count of online replicas
	// whose last ACK is at most maxLag seconds old (Redis'
	// repl_good_slaves_count), refreshed at every ACK, attach and detach
	// and once a second (goodTick); tooFewGood is what Refusal reads.
	minToWrite, minMaxLag int64
	good                  int
	goodTick              chan struct{} // closed to stop the ticker; nil: none
	tooFewGood            atomic.Bool
	// peakOnline is the most replicas online at once since this node last
	// became a master (reset when it becomes a replica): with it the status
	// document tells a master that lost its replicas from one that never
	// had any.
	peakOnline int
}

// refreshGoodLocked recounts the good replicas (refreshGoodSlavesCount).
// REQUIRES: f.mu.
func (f *masterFeed) refreshGoodLocked() {
	online := 0
	for _, a := range f.replicas {
		if !a.gone && a.state == slaveOnline {
			online++
		}
	}
	f.peakOnline = max(f.peakOnline, online)
	if f.minToWrite == 0 || f.minMaxLag == 0 {
		f.good = 0
		f.tooFewGood.Store(false)
		return
	}
	now := time.Now().Unix()
	good := 0
	for _, a := range f.replicas {
		if !a.gone && a.state == slaveOnline && now-a.lastAck.Unix() <= f.minMaxLag {
			good++
		}
	}
	f.good = good
	f.tooFewGood.Store(int64(good) < f.minToWrite)
}

// SetMinReplicas applies min-replicas-to-write and min-replicas-max-lag
// (seconds): with both non-zero a master refuses writes with -NOREPLICAS
// while fewer replicas than toWrite acknowledged within maxLag seconds.
func (r *Replica) SetMinReplicas(toWrite, maxLag int64) {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.minToWrite, f.minMaxLag = toWrite, maxLag
	f.refreshGoodLocked()
	on := toWrite > 0 && maxLag > 0
	switch {
	case on && f.goodTick == nil:
		stop := make(chan struct{})
		f.goodTick = stop
		go func() { // replicationCron's refresh: a lag grows without any event
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					f.mu.Lock()
					f.refreshGoodLocked()
					f.mu.Unlock()
				}
			}
		}()
	case !on && f.goodTick != nil:
		close(f.goodTick)
		f.goodTick = nil
	}
}

// goodReplicas returns the good replicas' count and whether the
// min-replicas check is on.
func (r *Replica) goodReplicas() (int, bool) {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.good, f.minToWrite > 0 && f.minMaxLag > 0
}

// pingCmd is what the master feeds into the stream every
// repl-ping-replica-period seconds so replicas see the link alive.
var pingCmd = []byte("*1\r\n$4\r\nPING\r\n")

// ErrNotMaster is Attach's answer on a replica whose own link is not up
// (as Redis' syncCommand).
var ErrNotMaster = errors.New("NOMASTERLINK Can't SYNC while not connected with my master")

// Append is the stream's sink: the runtime's log feed calls it with every
// record, under its own mutex, from event loops. It never blocks on a
// replica. It returns 0: nothing waits on the replication offset here.
func (r *Replica) Append(p []byte) int64 {
	f := &r.feed
	f.mu.Lock()
	if f.backlog != nil && !r.IsReplica() {
		f.backlog.Feed(p)
		r.fanOut(p)
	}
	f.mu.Unlock()
	return 0
}

// fanOut appends p to every replica's pending buffer. REQUIRES: f.mu.
func (r *Replica) fanOut(p []byte) {
	f := &r.feed
	hard, soft, secs := f.hard, f.soft, f.softSecs
	for _, a := range f.replicas {
		if a.gone || a.waitStart {
			continue
		}
		a.pend = append(a.pend, p...)
		n := int64(len(a.pend))
		over := hard > 0 && n > hard
		if soft > 0 && n > soft {
			if a.softSince.IsZero() {
				a.softSince = time.Now()
			} else if time.Since(a.softSince) >= time.Duration(secs)*time.Second {
				over = true
			}
		} else {
			a.softSince = time.Time{}
		}
		if over {
			r.log.Warn("replica scheduled to be closed ASAP for overcoming of output buffer limits",
				"replica", a.info.Addr, "pending", n)
			a.gone = true
			a.pend = nil
			_ = a.conn.Close() // the writer and reader see it and remove a
		}
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// SetBacklogSize applies repl-backlog-size: an existing backlog keeps its
// newest bytes that fit.
func (r *Replica) SetBacklogSize(n int) {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backlogSize = n
	if f.backlog != nil {
		f.backlog.Resize(n)
	}
}

// backlogSize is repl-backlog-size. REQUIRES: r.feed.mu.
func (r *Replica) backlogSize() int {
	if r.feed.backlogSize > 0 {
		return r.feed.backlogSize
	}
	return r.cfg.BacklogSize
}

// SetReplicaBufferLimit sets client-output-buffer-limit's replica class:
// hard and soft bytes, soft seconds (0: no limit).
func (r *Replica) SetReplicaBufferLimit(hard, soft, softSecs int64) {
	r.feed.mu.Lock()
	r.feed.hard, r.feed.soft, r.feed.softSecs = hard, soft, softSecs
	r.feed.mu.Unlock()
}

// dropReplicas disconnects every attached replica: the server became a
// replica. The backlog stays: it holds our history up to the offset we ask
// the new master to continue from, and our replicas continue from it.
func (r *Replica) dropReplicas() {
	f := &r.feed
	f.mu.Lock()
	for _, a := range f.replicas {
		a.gone = true
		_ = a.conn.Close()
	}
	f.replicas = nil
	f.noReplicasSince = time.Now()
	f.peakOnline = 0
	f.refreshGoodLocked()
	aborted := f.takeWaitsLocked() // their replicas are gone: disconnectAllBlockedClients
	f.mu.Unlock()
	for _, w := range aborted {
		w.owner.Aborted([]byte(errUnblockedRoleChange))
	}
}

// masterOffset is master_repl_offset on a master.
func (r *Replica) masterOffset() int64 {
	r.feed.mu.Lock()
	defer r.feed.mu.Unlock()
	if r.feed.backlog != nil {
		return r.feed.backlog.Offset()
	}
	return r.offset.Load()
}

// Attach serves a replica whose client connection sent SYNC (psync false)
// or PSYNC replID offset: it owns conn from now on and returns at once.
func (r *Replica) Attach(conn net.Conn, info ReplicaInfo, psync bool, replID string, offset int64) {
	go r.serve(conn, info, psync, replID, offset)
}

func (r *Replica) serve(conn net.Conn, info ReplicaInfo, psync bool, replID string, offset int64) {
	f := &r.feed
	if r.IsReplica() && r.State() != StateConnected {
		_, _ = conn.Write([]byte("-" + ErrNotMaster.Error() + "\r\n"))
		_ = conn.Close()
		return
	}
	a := &attached{info: info, conn: conn, wake: make(chan struct{}, 1), state: slaveWaitBgsave, sync: !psync, created: time.Now()}
	// sync_full counts a full sync when it is decided, as Redis' syncCommand
	// does, not when its transfer ends: one that fails later still counted.
	if psync {
		f.mu.Lock()
		ids := r.IDs()
		d := DecidePSync(ids, f.backlog, info.CapaPSync2, replID, offset, 0)
		if d.Continue {
			a.state = slaveOnline
			a.pend = append([]byte(d.Reply), f.backlog.Since(d.Offset)...)
			a.lastAck = time.Now()
			f.register(a)
			r.startCron() // a backlog kept from our replica days: no cron yet
			f.partialOK++
			f.mu.Unlock()
			r.log.Info("partial resynchronization accepted", "replica", info.Addr, "offset", offset)
			r.streamTo(a)
			return
		}
		if replID != "?" {
			f.partialErr++
		}
		f.fullOK++ // with the failed PSYNC: INFO never shows one without the other
		f.mu.Unlock()
	} else {
		f.mu.Lock()
		f.fullOK++
		f.mu.Unlock()
	}
	r.log.Info("full resync requested", "replica", info.Addr)
	if err := r.serveFullSync(a); err != nil {
		r.log.Warn("full sync to replica failed", "replica", info.Addr, "err", err)
		f.remove(a)
		_ = conn.Close()
		return
	}
	r.streamTo(a)
}

func (f *masterFeed) register(a *attached) {
	f.nextID++
	a.id = f.nextID
	f.replicas = append(f.replicas, a)
	f.refreshGoodLocked()
}

func (f *masterFeed) remove(a *attached) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a.gone = true
	for i, x := range f.replicas {
		if x == a {
			f.replicas = append(f.replicas[:i], f.replicas[i+1:]...)
			if len(f.replicas) == 0 {
				f.noReplicasSince = time.Now() // repl-backlog-ttl counts from here
			}
			break
		}
	}
	f.refreshGoodLocked()
}

// cronStarted is set once the master side's once-a-second cron runs.
// The cron starts at the first replica's attach or the first Set* call
// that configures it (cmd/svcdb makes them at start-up, so a replica
// promoted later frees its backlog too), and never stops: like Redis'
// replicationCron, it has nothing to do while there is no backlog.
// REQUIRES (startCron): r.feed.mu.
func (r *Replica) startCron() {
	if r.feed.cronStarted {
		return
	}
	r.feed.cronStarted = true
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for loops := int64(1); ; loops++ {
			<-t.C
			r.cronTick(loops, time.Now())
		}
	}()
}

// cronTick is one turn of the cron (replicationCron's master part): PING
// into the stream every repl-ping-replica-period turns while replicas are
// attached, and the backlog freed once the master has had no replica for
// more than repl-backlog-ttl seconds.
func (r *Replica) cronTick(loops int64, now time.Time) {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.backlog == nil || r.IsReplica() {
		return
	}
	if len(f.replicas) > 0 {
		if loops%r.pingPeriodLocked() == 0 {
			f.backlog.Feed(pingCmd)
			r.fanOut(pingCmd)
		}
		return
	}
	if f.noReplicasSince.IsZero() { // a promoted replica that never had one
		f.noReplicasSince = now
	}
	ttl := r.backlogTTLLocked()
	if idle := int64(now.Sub(f.noReplicasSince) / time.Second); ttl > 0 && idle > ttl {
		r.freeBacklogLocked()
		r.log.Info("replication backlog freed after seconds without connected replicas", "seconds", ttl)
	}
}

// freeBacklogLocked frees the backlog (freeReplicationBacklog) with a new
// replication ID and no secondary one (changeReplicationId,
// clearReplicationId2): without a backlog the offset no longer counts the
// stream, so the old ID at a later offset would name a history nobody
// holds. master_repl_offset stays where the backlog ended.
// REQUIRES: r.feed.mu.
func (r *Replica) freeBacklogLocked() {
	r.offset.Store(r.feed.backlog.Offset())
	r.feed.backlog = nil
	r.idMu.Lock()
	r.ids = NewIDs()
	r.idMu.Unlock()
}

// SetBacklogTTL applies repl-backlog-ttl (seconds; 0: never free the
// backlog) and starts the cron that applies it.
func (r *Replica) SetBacklogTTL(seconds int64) {
	r.feed.mu.Lock()
	defer r.feed.mu.Unlock()
	r.feed.backlogTTL = seconds
	r.feed.backlogTTLSet = true
	r.startCron()
}

// SetPingPeriod applies repl-ping-replica-period (seconds, at least 1) and
// starts the cron that applies it.
func (r *Replica) SetPingPeriod(seconds int64) {
	r.feed.mu.Lock()
	defer r.feed.mu.Unlock()
	r.feed.pingPeriod = max(seconds, 1)
	r.startCron()
}

// pingPeriodLocked is repl-ping-replica-period, Redis' default 10 s until
// set; backlogTTLLocked is repl-backlog-ttl, 3600 s until set.
// REQUIRES: r.feed.mu.
func (r *Replica) pingPeriodLocked() int64 {
	if r.feed.pingPeriod > 0 {
		return r.feed.pingPeriod
	}
	return 10
}

func (r *Replica) backlogTTLLocked() int64 {
	if r.feed.backlogTTLSet {
		return r.feed.backlogTTL
	}
	return 3600
}

// streamTo streams a's pending bytes until the connection fails, reading its
// REPLCONF ACKs meanwhile.
func (r *Replica) streamTo(a *attached) {
	f := &r.feed
	go r.readAcks(a)
	var buf []byte
	for {
		f.mu.Lock()
		if a.gone {
			f.mu.Unlock()
			break
		}
		if a.startOnAck {
			f.mu.Unlock()
			<-a.wake
			continue
		}
		buf, a.pend = a.pend, buf[:0]
		f.mu.Unlock()
		if len(buf) > 0 {
			if _, err := a.conn.Write(buf); err != nil {
				break
			}
			continue
		}
		<-a.wake
	}
	f.remove(a)
	_ = a.conn.Close()
	r.log.Info("connection with replica lost", "replica", a.info.Addr)
}

// readAcks reads what a replica sends on its link: REPLCONF ACK <offset>
// (once a second) and anything else, which is ignored.
func (r *Replica) readAcks(a *attached) {
	f := &r.feed
	br := bufio.NewReader(a.conn)
	defer func() {
		f.mu.Lock()
		a.gone = true
		f.mu.Unlock()
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}()
	for {
		args, err := readCommand(br)
		if err != nil {
			return
		}
		if len(args) >= 3 && strings.EqualFold(args[0], "replconf") && strings.EqualFold(args[1], "ack") {
			if off, err := strconv.ParseInt(args[2], 10, 64); err == nil {
				f.mu.Lock()
				a.ackOff, a.lastAck = off, time.Now()
				f.refreshGoodLocked()
				if a.startOnAck {
					a.startOnAck = false
					select {
					case a.wake <- struct{}{}:
					default:
					}
				}
				served := r.serveWaitsLocked()
				f.mu.Unlock()
				for _, sw := range served {
					sw.w.owner.Unblocked(sw.reply, false)
				}
			}
		}
	}
}

// readCommand reads one RESP multibulk command (or an inline line).
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > 16 {
		return nil, errors.New("bad multibulk length")
	}
	out := make([]string, 0, n)
	for range n {
		h, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if len(h) < 3 || h[0] != '$' {
			return nil, errors.New("expected bulk")
		}
		l, err := strconv.Atoi(strings.TrimRight(h[1:], "\r\n"))
		if err != nil || l < 0 || l > 1<<16 {
			return nil, errors.New("bad bulk length")
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		out = append(out, string(b[:l]))
	}
	return out, nil
}

// replicaView is one attached replica as INFO and ROLE show it.
type replicaView struct {
	ip           string
	port         int
	state        string
	offset, lagS int64
}

func (r *Replica) replicaViews() []replicaView {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	out := make([]replicaView, 0, len(f.replicas))
	for _, a := range f.replicas {
		if a.gone {
			continue
		}
		lag := int64(0)
		if !a.lastAck.IsZero() {
			lag = int64(now.Sub(a.lastAck) / time.Second)
		}
		out = append(out, replicaView{ip: a.info.IP, port: a.info.ListeningPort, state: a.state, offset: a.ackOff, lagS: lag})
	}
	return out
}

// SyncStats returns sync_full, sync_partial_ok and sync_partial_err.
func (r *Replica) SyncStats() (full, partialOK, partialErr int64) {
	r.feed.mu.Lock()
	defer r.feed.mu.Unlock()
	return r.feed.fullOK, r.feed.partialOK, r.feed.partialErr
}

// ConnectedReplicas is how many replicas are attached.
func (r *Replica) ConnectedReplicas() int { return len(r.replicaViews()) }

// appendReplicasRole appends ROLE's list of replicas: [ip, port, offset].
func (r *Replica) appendReplicasRole(dst []byte) []byte {
	v := r.replicaViews()
	n := 0
	for _, x := range v {
		if x.state == slaveOnline {
			n++
		}
	}
	dst = resp.AppendArrayHeader(dst, n)
	for _, x := range v {
		if x.state != slaveOnline {
			continue
		}
		dst = resp.AppendArrayHeader(dst, 3)
		dst = resp.AppendBulkString(dst, x.ip)
		dst = resp.AppendBulkString(dst, strconv.Itoa(x.port))
		dst = resp.AppendBulkString(dst, strconv.FormatInt(x.offset, 10))
	}
	return dst
}

// ackedLocked counts the online replicas whose ACK reached offset.
// REQUIRES: f.mu.
func (f *masterFeed) ackedLocked(offset int64) int {
	n := 0
	for _, a := range f.replicas {
		if !a.gone && a.state == slaveOnline && a.ackOff >= offset {
			n++
		}
	}
	return n
}
