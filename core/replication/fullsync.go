package replication

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Full syncs shared between replicas (Redis' one BGSAVE for replication
// serving every replica that waits for it: syncCommand,
// startBgsaveForReplication, shouldStartChildForReplication at 7.0.15).
//
// A replica that needs a full sync joins a syncJob: one point-in-time
// snapshot (Source.WriteReplicaSnapshot), encoded once, at whose point in
// time every member is registered with the same replication ID and offset,
// so each member's stream starts at the same byte. Which job it joins:
//
//   - A disk-based job whose snapshot is being written (Redis' CASE 1,
//     "Waiting for end of BGSAVE for SYNC"): the replica attaches to it,
//     taking a copy of what another member collected since the point in
//     time (copyReplicaOutputBuffer) and the job's offset.
//   - A job not yet at its point in time, diskless or not (Redis' replicas
//     in WAIT_BGSAVE_START): a diskless job only takes replicas that
//     accept the EOF-marked transfer.
//   - Else a new job. A diskless one waits repl-diskless-sync-delay
//     seconds from its first member's arrival, or until
//     repl-diskless-sync-max-replicas members wait, before it asks for the
//     snapshot ("Delay next BGSAVE for diskless SYNC"); a disk-based one
//     asks at once. A replica arriving while a diskless transfer streams
//     waits for the next job (Redis' CASE 2).
//
// Where svcdb differs: Redis forks at once when the delay ends, so its
// set of replicas is fixed then; svcdb's snapshot may first wait for
// another snapshot (BGSAVE, an AOF rewrite) to end, and replicas keep
// joining until its point in time, so more of them share it.
//
// The goroutine of the replica that created a job runs it; every member's
// own goroutine then sends what is its own: a diskless job writes the one
// stream of snapshot bytes to every member's socket (a member whose socket
// fails is dropped, the others go on), a disk-based job's file is sent by
// each member's goroutine (io.SectionReader: concurrent reads of one file)
// and removed by the last one.

// jobPhase is where a syncJob is; guarded by masterFeed.mu.
type jobPhase int

const (
	jobDelay    jobPhase = iota // diskless: waiting for the delay or enough replicas
	jobStarting                 // the snapshot is asked for, before its point in time
	jobSnapshot                 // past its point in time, the snapshot being written
	jobDone                     // the snapshot is written (or failed): no one joins
)

// syncJob is one snapshot serving the full syncs of its members.
type syncJob struct {
	diskless bool
	since    time.Time // the first member's arrival: the delay counts from it
	// guarded by masterFeed.mu
	phase   jobPhase
	members []*attached
	replID  string // at the point in time: the stream's ID and offset
	off     int64
	senders int // disk: members still sending the file; the last removes it

	wake chan struct{} // cap 1: a member joined (repl-diskless-sync-max-replicas)
	done chan struct{} // closed once phase is jobDone
	err  error         // the snapshot's error; read after done
	// resume lets a chained replica's incoming stream go on once the
	// snapshot's point in time passed (pauseStream); idempotent.
	resume func()
	file   *os.File // disk: the snapshot; read after done
	size   int64
	mark   string // diskless: the EOF mark
}

// SetDisklessSyncDelay applies repl-diskless-sync-delay and
// repl-diskless-sync-max-replicas (0: no maximum). Until it is called a
// diskless sync starts at once (cmd/svcdb sets Redis' defaults, 5 and 0).
func (r *Replica) SetDisklessSyncDelay(delay time.Duration, maxReplicas int) {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncDelay, f.syncMaxReplicas = delay, maxReplicas
	for _, j := range f.jobs {
		select {
		case j.wake <- struct{}{}:
		default:
		}
	}
}

// SyncSnapshots is how many snapshots full syncs took since start (one
// for several replicas that shared it).
func (r *Replica) SyncSnapshots() int64 {
	r.feed.mu.Lock()
	defer r.feed.mu.Unlock()
	return r.feed.syncSnapshots
}

// serveFullSync serves a's full sync through a shared job and returns once a
// has it all (the stream then starts).
func (r *Replica) serveFullSync(a *attached) error {
	if r.cfg.Source == nil {
		return errors.New("no snapshot source")
	}
	diskless := a.info.CapaEOF && r.cfg.DisklessSync != nil && r.cfg.DisklessSync()
	f := &r.feed
	f.mu.Lock()
	j, created := r.joinLocked(a, diskless)
	f.mu.Unlock()
	if created {
		r.runJob(j)
	}
	<-j.done
	if j.err != nil {
		return j.err
	}
	if j.diskless {
		return r.finishDiskless(j, a)
	}
	return r.sendFile(j, a)
}

// joinLocked adds a to the job it can share, or to a new one (created
// true: the caller runs it). REQUIRES: r.feed.mu.
func (r *Replica) joinLocked(a *attached, diskless bool) (j *syncJob, created bool) {
	f := &r.feed
	a.waitStart = true
	f.register(a) // INFO shows it in wait_bgsave meanwhile, as Redis
	for _, j := range f.jobs {
		switch {
		case !j.diskless && j.phase == jobSnapshot:
			if src := liveMember(j); src != nil {
				a.pend = append([]byte(nil), src.pend...) // what src collected since the point in time
				a.waitStart = false
				j.members = append(j.members, a)
				r.log.Info("Waiting for end of BGSAVE for SYNC", "replica", a.info.Addr)
				return j, false
			}
		case j.phase == jobDelay || (j.phase == jobStarting && (!j.diskless || diskless)):
			j.members = append(j.members, a)
			select {
			case j.wake <- struct{}{}:
			default:
			}
			return j, false
		}
	}
	j = &syncJob{diskless: diskless, since: time.Now(), members: []*attached{a},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if diskless && f.syncDelay > 0 {
		r.log.Info("Delay next BGSAVE for diskless SYNC", "replica", a.info.Addr, "delay", f.syncDelay)
	} else {
		j.phase = jobStarting
	}
	f.jobs = append(f.jobs, j)
	return j, true
}

// liveMember returns a member of j still connected, or nil.
// REQUIRES: r.feed.mu.
func liveMember(j *syncJob) *attached {
	for _, m := range j.members {
		if !m.gone {
			return m
		}
	}
	return nil
}

// runJob waits out a diskless job's delay, then makes its snapshot. It
// returns once the snapshot is written (j.done closed).
func (r *Replica) runJob(j *syncJob) {
	f := &r.feed
	f.mu.Lock()
	for j.phase == jobDelay {
		left := time.Until(j.since.Add(f.syncDelay))
		if left <= 0 || (f.syncMaxReplicas > 0 && len(j.members) >= f.syncMaxReplicas) {
			break
		}
		f.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-t.C:
		case <-j.wake: // a member joined, or the delay changed
		}
		t.Stop()
		f.mu.Lock()
	}
	j.phase = jobStarting
	if j.diskless {
		// A member that joined while the job was in its delay may not
		// accept the EOF-marked transfer: the whole job goes to disk, as
		// Redis' mincapa.
		for _, m := range j.members {
			j.diskless = j.diskless && m.info.CapaEOF
		}
	}
	if liveMember(j) == nil { // every member left during the delay
		f.mu.Unlock()
		r.endJob(j, errors.New("every replica waiting for the sync left"))
		return
	}
	f.syncSnapshots++
	target := "disk"
	if j.diskless {
		target = "replicas sockets"
	}
	r.log.Info("Starting BGSAVE for SYNC with target: "+target, "replicas", len(j.members))
	f.mu.Unlock()

	// On a chained replica the snapshot's point in time must be at an
	// applied offset of the master's stream: pauseStream (replica.go) holds
	// the stream between two commands until pointInTime has run.
	j.resume = r.pauseStream()
	var err error
	if j.diskless {
		err = r.streamSnapshot(j)
	} else {
		err = r.writeFile(j)
	}
	j.resume()
	r.endJob(j, err)
}

// endJob marks j done with the snapshot's error (nil: written).
func (r *Replica) endJob(j *syncJob, err error) {
	f := &r.feed
	f.mu.Lock()
	j.err = err
	j.phase = jobDone
	j.senders = len(j.members)
	for i, x := range f.jobs {
		if x == j {
			f.jobs = append(f.jobs[:i], f.jobs[i+1:]...)
			break
		}
	}
	f.mu.Unlock()
	if err != nil && j.file != nil {
		_ = j.file.Close()
		_ = os.Remove(j.file.Name())
	}
	close(j.done)
}

// pointInTime is what the snapshot calls at its point in time (every shard
// held: no record is fed concurrently): it creates the backlog if there is
// none, makes every member collect the stream from here, and records the
// stream's ID and offset for +FULLRESYNC.
func (r *Replica) pointInTime(j *syncJob) func() {
	f := &r.feed
	return func() {
		f.mu.Lock()
		if f.backlog == nil {
			f.backlog = NewBacklog(r.backlogSize(), r.offset.Load())
			r.startCron()
		}
		j.off = f.backlog.Offset()
		j.replID = r.IDs().ID
		j.phase = jobSnapshot
		for _, m := range j.members {
			m.waitStart = false
			if j.diskless {
				m.state = slaveSendBulk
			}
		}
		f.mu.Unlock()
		j.resume()
	}
}

// streamSnapshot streams the snapshot to every member as it is made
// (diskless): +FULLRESYNC, $EOF:<mark>, the RDB, the mark. The snapshot's
// writer runs on this goroutine, never on an event loop; a replica that
// stops reading for repl-timeout (60 s) is dropped, so a snapshot never
// waits on one forever. It fails when every member failed.
func (r *Replica) streamSnapshot(j *syncJob) error {
	j.mark = NewID() // 40 random hex characters, as Redis' EOF mark
	w := &fanWriter{r: r, j: j}
	if err := r.cfg.Source.WriteReplicaSnapshot(w, r, r.pointInTime(j)); err != nil {
		return err
	}
	_, err := w.Write([]byte(j.mark))
	return err
}

// fanWriter writes the snapshot to every member's socket, each preceded
// by its +FULLRESYNC line and the EOF mark's header at the first write (the
// snapshot's header is buffered until after its point in time, so the
// offset is known by then). A member whose write fails is closed and
// skipped from then on.
type fanWriter struct {
	r       *Replica
	j       *syncJob
	targets []*attached
	failed  []bool
	started bool
	n       int64
}

func (w *fanWriter) Write(p []byte) (int, error) {
	if !w.started {
		f := &w.r.feed
		f.mu.Lock()
		if w.j.phase != jobSnapshot {
			f.mu.Unlock()
			return 0, errors.New("BUG: the snapshot wrote before its point in time")
		}
		for _, m := range w.j.members {
			if !m.gone {
				w.targets = append(w.targets, m)
			}
		}
		f.mu.Unlock()
		w.failed = make([]bool, len(w.targets))
		w.started = true
		for i, m := range w.targets {
			head := append(fullResyncLine(m, w.j.replID, w.j.off), "$EOF:"+w.j.mark+"\r\n"...)
			w.write(i, m, head)
		}
	}
	alive := false
	for i, m := range w.targets {
		w.write(i, m, p)
		alive = alive || !w.failed[i]
	}
	if !alive {
		return 0, errors.New("every replica of the diskless sync failed")
	}
	w.n += int64(len(p))
	return len(p), nil
}

func (w *fanWriter) write(i int, m *attached, p []byte) {
	if w.failed[i] {
		return
	}
	_ = m.conn.SetWriteDeadline(time.Now().Add(w.r.cfg.Timeout))
	if _, err := m.conn.Write(p); err != nil {
		w.failed[i] = true
		w.r.log.Warn("diskless sync to replica failed", "replica", m.info.Addr, "err", err)
		w.r.feed.mu.Lock()
		m.gone = true // its own goroutine finds it gone
		w.r.feed.mu.Unlock()
		_ = m.conn.Close()
	}
}

// finishDiskless makes a member of a streamed job online: nothing more
// is written to it until its first REPLCONF ACK (startOnAck).
func (r *Replica) finishDiskless(j *syncJob, a *attached) error {
	_ = a.conn.SetWriteDeadline(time.Time{})
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.gone || a.waitStart {
		return errors.New("the replica's connection failed during the diskless sync")
	}
	a.state = slaveOnline
	a.lastAck = time.Now()
	a.startOnAck = true
	r.log.Info("synchronization with replica succeeded (diskless)", "replica", a.info.Addr, "offset", j.off)
	return nil
}

// fullResyncLine is +FULLRESYNC <id> <offset>, or nothing for a replica
// that sent SYNC (the old protocol: the payload comes at once).
func fullResyncLine(a *attached, replID string, off int64) []byte {
	if a.sync {
		return nil
	}
	return fmt.Appendf(nil, "+FULLRESYNC %s %d\r\n", replID, off)
}

// writeFile writes a disk-based job's snapshot to a temporary file in the
// data directory (as Redis' repl-diskless-sync no).
func (r *Replica) writeFile(j *syncJob) error {
	tmp, err := os.CreateTemp(r.cfg.Dir, "temp-repl-*.rdb")
	if err != nil {
		return err
	}
	j.file = tmp
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := r.cfg.Source.WriteReplicaSnapshot(bw, r, r.pointInTime(j)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	j.size, err = tmp.Seek(0, io.SeekCurrent)
	return err
}

// sendFile sends a disk-based job's file to member a: +FULLRESYNC <id>
// <offset>, $<len> and the file. The last member to finish removes it.
func (r *Replica) sendFile(j *syncJob, a *attached) (err error) {
	f := &r.feed
	defer func() {
		f.mu.Lock()
		j.senders--
		last := j.senders == 0
		f.mu.Unlock()
		if last {
			_ = j.file.Close()
			_ = os.Remove(j.file.Name())
		}
	}()
	f.mu.Lock()
	a.state = slaveSendBulk
	f.mu.Unlock()
	_ = a.conn.SetWriteDeadline(time.Now().Add(r.cfg.Timeout))
	w := bufio.NewWriterSize(deadlineWriter{a.conn, r.cfg.Timeout}, 64<<10)
	_, _ = w.Write(fullResyncLine(a, j.replID, j.off)) // bufio keeps the error: Flush returns it
	fmt.Fprintf(w, "$%d\r\n", j.size)
	if _, err = io.Copy(w, io.NewSectionReader(j.file, 0, j.size)); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	_ = a.conn.SetWriteDeadline(time.Time{})
	f.mu.Lock()
	a.state = slaveOnline
	a.lastAck = time.Now()
	f.mu.Unlock()
	r.log.Info("synchronization with replica succeeded", "replica", a.info.Addr, "bytes", j.size, "offset", j.off)
	return nil
}

// deadlineWriter renews the connection's write deadline at each write: a
// replica that stops reading for repl-timeout fails its sync.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration
}

func (d deadlineWriter) Write(p []byte) (int, error) {
	_ = d.conn.SetWriteDeadline(time.Now().Add(d.timeout))
	return d.conn.Write(p)
}
