package aof

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FsyncPolicy is appendfsync.
type FsyncPolicy uint32

const (
	// FsyncEverySec: written at once, fsynced about once a second in the
	// background (Redis' default).
	FsyncEverySec FsyncPolicy = iota
	// FsyncAlways: every write is fsynced before WaitDurable returns; many
	// waiters share one write and one fsync (group commit).
	FsyncAlways
	// FsyncNo: written at once, never fsynced (the kernel decides), except
	// when a file is closed.
	FsyncNo
)

func (p FsyncPolicy) String() string {
	switch p {
	case FsyncAlways:
		return "always"
	case FsyncNo:
		return "no"
	}
	return "everysec"
}

// ParseFsyncPolicy reads appendfsync's value, in any case as Redis does.
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverySec, nil
	case "no":
		return FsyncNo, nil
	}
	return 0, fmt.Errorf("argument(s) must be one of the following: always, everysec, no")
}

// Error kinds, as counted in Status and exported as
// svc_persistence_errors_total{kind=...}.
const (
	KindWrite = "aof-write"
	KindFsync = "aof-fsync"
)

// DiskError is a failed write or fsync that has not been cured yet. Its
// text is what Redis puts after "-MISCONF ": "Errors writing to the AOF
// file: No space left on device".
type DiskError struct {
	Kind string // KindWrite or KindFsync
	Text string // C's strerror text
	Err  error  // the error the File returned
}

func (e *DiskError) Error() string { return "Errors writing to the AOF file: " + e.Text }
func (e *DiskError) Unwrap() error { return e.Err }

var (
	// ErrClosed: the Log was closed.
	ErrClosed = errors.New("aof: log closed")
	// ErrRewriteInProgress: StartRewrite while a rewrite runs.
	ErrRewriteInProgress = errors.New("Background append only file rewriting already in progress")
	// ErrNoRewrite: FinishRewrite or AbortRewrite without StartRewrite.
	ErrNoRewrite = errors.New("aof: no rewrite in progress")
)

// Option changes how Open builds a Log.
type Option func(*options)

type options struct {
	open  Opener
	retry time.Duration
}

// WithOpener makes the Log open its incremental files with open instead of
// OpenAppend (tests inject failing or counting files).
func WithOpener(open Opener) Option { return func(o *options) { o.open = open } }

// WithRetryInterval sets how often the flusher wakes without an Append: to
// retry a failed write or fsync and to run everysec's fsync (default
// 100 ms; tests shorten it). The everysec fsync stays at most one a second.
func WithRetryInterval(d time.Duration) Option { return func(o *options) { o.retry = d } }

// segment is one incremental file the flusher writes.
type segment struct {
	name string
	seq  int64
	file File
	size int64 // bytes in the file; guarded by Log.mu, changed by the flusher
	// end is the log offset where this file's bytes end, set when
	// StartRewrite opens the next file; -1 for the file receiving appends.
	end int64
	// discard: a rewrite finished, the file is history and its bytes are
	// in the new base; the flusher drops what is left instead of writing it.
	discard bool
}

// Log is the open AOF: Append buffers commands, one flusher goroutine
// writes and fsyncs them.
//
// Offsets (Append's result, WaitDurable's argument) count bytes appended
// since Open, across every incremental file; they are not file positions.
//
// Invariants, under mu:
//   - written <= end and durable <= end; end - written == len(buf) + the
//     flusher's unwritten bytes;
//   - durable <= written, except just after FinishRewrite, which makes every
//     byte before the switch durable (the new base holds them) before the
//     flusher has dropped them from its buffer;
//   - every byte at an offset below durable is fsynced, or superseded by a
//     base that is;
//   - segs is never empty: segs[0] is the file the flusher writes, the last
//     one the file new appends go to;
//   - a file on disk holds exactly the bytes written to it, in order, once.
type Log struct {
	dir, filename string
	opts          options
	policy        atomic.Uint32

	mu       sync.Mutex
	cond     sync.Cond // broadcast when durable grows, the status changes or the Log closes
	buf      []byte    // appended, not yet taken by the flusher
	end      int64
	written  int64
	durable  int64
	segs     []*segment
	manifest *Manifest
	rewrite  *rewriteState
	waiters  int
	notify   []notifyReq // NotifyDurable's waiters
	closed   bool
	st       Status // the counters and flags Status returns (Policy, Buffered, sizes filled in there)
	lastErr  *DiskError
	size     int64     // bytes in the base and incremental files: Redis' aof_current_size
	baseSize int64     // size after the last load or rewrite: Redis' aof_rewrite_base_size
	syncTry  time.Time // last fsync attempt, for everysec

	rwLock sync.Mutex    // serializes manifest changes (rewrites)
	kick   chan struct{} // cap 1: the flusher has work
	stop   chan struct{}
	done   chan struct{}

	// Owned by the flusher goroutine.
	out   []byte // taken from buf, not yet written; out[outAt:] is pending
	outAt int
}

// rewriteState is a rewrite between StartRewrite and FinishRewrite.
type rewriteState struct {
	basePath string
	baseSeq  int64
	incrSeq  int64 // the first incremental file after the switch
	switchAt int64 // log offset of the switch: earlier bytes are in the new base
}

// Status is the Log's health and counters, for INFO persistence, metrics
// and -MISCONF.
type Status struct {
	Policy FsyncPolicy
	// WriteOK is Redis' aof_last_write_status: false from a failed or short
	// write until a write succeeds. FsyncOK is aof_bio_fsync_status: false
	// from a failed fsync until an fsync succeeds.
	WriteOK, FsyncOK bool
	LastError        string    // C's strerror text of the last failure; "" when none ever
	LastErrorKind    string    // KindWrite or KindFsync
	LastErrorAt      time.Time // when it happened
	WriteErrors      int64     // failed or short writes (kind aof-write)
	FsyncErrors      int64     // failed fsyncs (kind aof-fsync)
	Writes, Fsyncs   int64     // successful writes and fsyncs
	LastFsync        time.Time // the last successful fsync; zero when none
	Buffered         int64     // bytes appended and not yet written (Redis' aof_buffer_length)
	Unsynced         int64     // bytes written and not yet fsynced
	Size, BaseSize   int64     // aof_current_size and aof_rewrite_base_size
	Rewriting        bool
}

// OK is false while a write or an fsync error lasts: Redis then refuses
// writes with -MISCONF.
func (s Status) OK() bool { return s.WriteOK && s.FsyncOK }

// Open opens the AOF in dir (<data-dir>/<appenddirname>) for appending, as
// Redis' aofOpenIfNeededOnServerStart: the directory is created when
// missing; an old-style <data-dir>/<filename> is upgraded as Load does; an
// AOF with no base and no incremental file (a start with an empty data set)
// gets an empty RDB base (<filename>.1.base.rdb, see EmptyRDB); the last
// incremental file is opened for appending, or <filename>.<n>.incr.aof
// created when there is none; the manifest is written when it changed;
// history files are deleted. Call Load first: Open does not read commands.
//
// The first command appended should be a SELECT (Redis starts every
// incremental file's stream with one).
func Open(dir, filename string, policy FsyncPolicy, opts ...Option) (*Log, error) {
	o := options{open: OpenAppend, retry: 100 * time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	if filename == "" {
		filename = DefaultFilename
	}
	m, err := readManifest(dir, filename)
	if err != nil {
		return nil, err
	}
	if m, _, err = upgradeIfNeeded(dir, filename, m); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("Can't open or create append-only dir %s: %s", dir, strerror(err))
	}
	if m == nil {
		m = &Manifest{}
	}
	dirty := false
	if m.Base == nil && len(m.Incr) == 0 {
		m.BaseSeq++
		name := baseName(filename, m.BaseSeq)
		if err := writeFileSync(filepath.Join(dir, name), EmptyRDB()); err != nil {
			return nil, fmt.Errorf("Can't create the AOF base file %s: %s", name, strerror(err))
		}
		m.Base = &FileInfo{Name: name, Seq: m.BaseSeq, Type: TypeBase}
		dirty = true
	}
	if len(m.Incr) == 0 {
		m.IncrSeq++
		m.Incr = append(m.Incr, FileInfo{Name: incrName(filename, m.IncrSeq), Seq: m.IncrSeq, Type: TypeIncr})
		dirty = true
	}
	last := m.Incr[len(m.Incr)-1]
	f, fsize, err := o.open(filepath.Join(dir, last.Name))
	if err != nil {
		return nil, fmt.Errorf("Can't open the append-only file %s: %s", last.Name, strerror(err))
	}
	if dirty {
		if err := writeManifest(dir, filename, m); err != nil {
			f.Close()
			return nil, err
		}
	}
	if len(m.History) > 0 {
		if m, err = deleteHistory(dir, filename, m); err != nil {
			f.Close()
			return nil, err
		}
	}
	l := &Log{
		dir: dir, filename: filename, opts: o, manifest: m,
		segs: []*segment{{name: last.Name, seq: last.Seq, file: f, size: fsize, end: -1}},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	l.cond.L = &l.mu
	l.policy.Store(uint32(policy))
	l.st.WriteOK, l.st.FsyncOK = true, true
	l.size = fsize
	for _, fi := range m.Incr[:len(m.Incr)-1] {
		l.size += statSize(filepath.Join(dir, fi.Name))
	}
	if m.Base != nil {
		l.size += statSize(filepath.Join(dir, m.Base.Name))
	}
	l.baseSize = l.size
	l.syncTry = time.Now()
	go l.run()
	return l, nil
}

// Dir is the AOF directory; Filename is appendfilename.
func (l *Log) Dir() string      { return l.dir }
func (l *Log) Filename() string { return l.filename }

// Manifest returns a copy of the current manifest.
func (l *Log) Manifest() *Manifest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.manifest.clone()
}

// Append adds p (complete RESP commands; a MULTI ... EXEC block in one call
// is never split or interleaved with another Append) to the log and returns
// the log's end offset after p. It copies p into memory and returns: no
// I/O, no waiting on the disk. After Close it drops p.
func (l *Log) Append(p []byte) int64 {
	l.mu.Lock()
	if l.closed {
		end := l.end
		l.mu.Unlock()
		return end
	}
	wake := len(l.buf) == 0
	l.buf = append(l.buf, p...)
	l.end += int64(len(p))
	end := l.end
	l.mu.Unlock()
	if wake {
		l.wake()
	}
	return end
}

func (l *Log) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// End is the offset after the last Append.
func (l *Log) End() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// WaitDurable returns once every byte up to offset end is written and
// fsynced (whatever the policy: waiting makes the flusher fsync now). All
// waiters share the flusher's next write and fsync: that is the group
// commit of appendfsync always. If a write or fsync fails while it waits
// (the flusher retries at once when a waiter arrives during an error, so
// while an error lasts a waiter gets it after one more failed attempt), it
// returns that *DiskError; it returns ErrClosed once the Log is closed.
func (l *Log) WaitDurable(end int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	failures := l.st.WriteErrors + l.st.FsyncErrors
	for l.durable < end {
		if l.st.WriteErrors+l.st.FsyncErrors != failures {
			return l.lastErr
		}
		if l.closed {
			return ErrClosed
		}
		l.waiters++
		l.wake()
		l.cond.Wait()
		l.waiters--
	}
	return nil
}

// Notifier is told that a wait registered with NotifyDurable is over.
type Notifier interface {
	Notify()
}

type notifyReq struct {
	end int64
	n   Notifier
}

// NotifyDurable is WaitDurable for callers that must not block (an event
// loop serving other clients): it reports whether everything up to end is
// written and fsynced; when not, n.Notify is called once it is, or once an
// error or Close ends the wait, and the caller asks again. Many waiters
// share the flusher's next fsync, as with WaitDurable. The error is
// WaitDurable's.
func (l *Log) NotifyDurable(end int64, n Notifier) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.durable >= end {
		return true, nil
	}
	if l.lastErr != nil && !l.st.OK() {
		return false, l.lastErr
	}
	if l.closed {
		return false, ErrClosed
	}
	l.notify = append(l.notify, notifyReq{end, n})
	l.wake()
	return false, nil
}

// broadcast wakes WaitDurable's waiters and calls the NotifyDurable
// waiters whose wait is over. REQUIRES: l.mu held.
func (l *Log) broadcast() {
	l.cond.Broadcast()
	if len(l.notify) == 0 {
		return
	}
	over := l.closed || (l.lastErr != nil && !l.st.OK())
	keep := l.notify[:0]
	for _, r := range l.notify {
		if over || l.durable >= r.end {
			r.n.Notify()
		} else {
			keep = append(keep, r)
		}
	}
	clear(l.notify[len(keep):])
	l.notify = keep
}

// SetPolicy changes appendfsync at run time (CONFIG SET appendfsync).
func (l *Log) SetPolicy(p FsyncPolicy) {
	l.policy.Store(uint32(p))
	l.wake()
}

// Policy is the current appendfsync.
func (l *Log) Policy() FsyncPolicy { return FsyncPolicy(l.policy.Load()) }

// Size is the bytes in the base and incremental files (written bytes; the
// buffer not included): Redis' aof_current_size.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// BaseSize is Size as it was after Open or the last rewrite: Redis'
// aof_rewrite_base_size, against which auto-aof-rewrite-percentage is
// measured (the caller decides when to rewrite).
func (l *Log) BaseSize() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.baseSize
}

// Status returns the Log's health and counters.
func (l *Log) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.st
	s.Policy = l.Policy()
	s.Buffered = l.end - l.written
	s.Unsynced = max(0, l.written-l.durable)
	s.Size, s.BaseSize = l.size, l.baseSize
	s.Rewriting = l.rewrite != nil
	return s
}

// Close writes and fsyncs what is buffered (Redis does the same at
// shutdown), stops the flusher and closes the files. It returns the error
// that left bytes unwritten or unsynced, if any. A rewrite in progress is
// abandoned as AbortRewrite would.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	rwErr := l.AbortRewrite()
	if errors.Is(rwErr, ErrNoRewrite) {
		rwErr = nil
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.durable < l.end {
		// lastErr is a *DiskError: assigning a nil one to err would make a
		// non-nil error holding a nil pointer.
		if l.lastErr != nil {
			err = l.lastErr
		} else {
			err = fmt.Errorf("aof: %d bytes were not written and synced", l.end-l.durable)
		}
	}
	if err == nil {
		err = rwErr
	}
	for _, s := range l.segs {
		if cerr := s.file.Close(); cerr != nil && err == nil && !s.discard {
			err = cerr
		}
	}
	l.broadcast()
	return err
}

// ---- the flusher ------------------------------------------------------------

func (l *Log) run() {
	defer close(l.done)
	tick := time.NewTicker(l.opts.retry)
	defer tick.Stop()
	for {
		select {
		case <-l.kick:
		case <-tick.C:
		case <-l.stop:
			l.cycle(true)
			return
		}
		l.cycle(false)
	}
}

// cycle writes what was appended and fsyncs when the policy, a waiter or
// final asks for it.
func (l *Log) cycle(final bool) {
	l.mu.Lock()
	l.take()
	l.mu.Unlock()
	l.writeOut()
	l.maybeSync(final)
}

// bigBuffer: buffers above this capacity are dropped once empty, so one
// burst does not pin its memory (Redis frees its aof_buf past 4000 bytes).
const bigBuffer = 4 << 20

// take moves the appended bytes to the flusher's out buffer.
// REQUIRES: l.mu held; called by the flusher.
func (l *Log) take() {
	if len(l.buf) == 0 {
		return
	}
	if l.outAt == len(l.out) {
		spare := l.out[:0]
		if cap(spare) > bigBuffer {
			spare = nil
		}
		l.out, l.outAt, l.buf = l.buf, 0, spare
		return
	}
	l.out = append(l.out, l.buf...)
	l.buf = l.buf[:0]
	if cap(l.buf) > bigBuffer {
		l.buf = nil
	}
}

// writeOut writes out's pending bytes, file after file, until they are all
// written or a write fails.
func (l *Log) writeOut() {
	for {
		l.mu.Lock()
		seg := l.segs[0]
		segEnd, discard, written, size := seg.end, seg.discard, l.written, seg.size
		l.mu.Unlock()
		if segEnd >= 0 && written >= segEnd {
			if !l.retire(seg, discard, segEnd) {
				return
			}
			continue
		}
		pending := l.out[l.outAt:]
		if len(pending) == 0 {
			return
		}
		n := len(pending)
		if segEnd >= 0 && written+int64(n) > segEnd {
			n = int(segEnd - written)
		}
		if discard {
			l.consume(n)
			l.advance(seg, int64(n), false, nil)
			continue
		}
		w, err := seg.file.Write(pending[:n])
		w = max(0, min(w, n))
		if err == nil && w < n {
			err = io.ErrShortWrite
		}
		if err != nil && w > 0 {
			// A short write: take it back as Redis' flushAppendOnlyFile
			// does, so the file never ends inside a command; if the
			// truncation fails, keep the bytes and continue after them.
			if seg.file.Truncate(size) == nil {
				w = 0
			}
		}
		l.consume(w)
		l.advance(seg, int64(w), true, err)
		if err != nil {
			return
		}
	}
}

// consume drops n written (or discarded) bytes from the front of out.
func (l *Log) consume(n int) {
	l.outAt += n
	if l.outAt == len(l.out) {
		l.out, l.outAt = l.out[:0], 0
	}
}

// advance records n bytes written to seg (or dropped, for a discarded one)
// and the write's outcome.
func (l *Log) advance(seg *segment, n int64, wrote bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.written += n
	if wrote {
		seg.size += n
		if !seg.discard {
			l.size += n
		}
		if err != nil {
			l.fail(KindWrite, err)
			return
		}
		l.st.Writes++
		if !l.st.WriteOK {
			l.st.WriteOK = true // Redis: "AOF write error looks solved, Redis can write again."
			l.broadcast()
		}
	}
}

// retire fsyncs and closes a file the log has moved past (Redis'
// aof_background_fsync_and_close), or just closes a discarded one. It
// reports false when the fsync failed: the file stays, to be retried.
func (l *Log) retire(seg *segment, discard bool, segEnd int64) bool {
	if !discard {
		if err := seg.file.Sync(); err != nil {
			l.mu.Lock()
			l.fail(KindFsync, err)
			l.mu.Unlock()
			return false
		}
	}
	seg.file.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !discard {
		l.synced(segEnd)
	}
	l.segs = l.segs[1:]
	return true
}

// maybeSync fsyncs the file being written when bytes are unsynced and the
// policy (always; everysec once a second), a waiter or final asks for it.
func (l *Log) maybeSync(final bool) {
	l.mu.Lock()
	seg, target := l.segs[0], l.written
	policy := l.Policy()
	need := target > l.durable && !seg.discard
	due := final || l.waiters > 0 || len(l.notify) > 0 || policy == FsyncAlways ||
		(policy == FsyncEverySec && time.Since(l.syncTry) >= time.Second)
	if need && due {
		l.syncTry = time.Now()
	}
	l.mu.Unlock()
	if !need || !due {
		return
	}
	err := seg.file.Sync()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.fail(KindFsync, err)
		return
	}
	l.synced(target)
}

// synced records a successful fsync covering the log up to offset at.
// REQUIRES: l.mu held.
func (l *Log) synced(at int64) {
	l.durable = max(l.durable, at)
	l.st.Fsyncs++
	l.st.LastFsync = time.Now()
	l.st.FsyncOK = true
	l.broadcast()
}

// fail records a failed write or fsync. REQUIRES: l.mu held.
func (l *Log) fail(kind string, err error) {
	text := strerror(err)
	if errors.Is(err, io.ErrShortWrite) {
		text = "No space left on device" // Redis sets ENOSPC for a short write
	}
	l.lastErr = &DiskError{Kind: kind, Text: text, Err: err}
	l.st.LastError, l.st.LastErrorKind, l.st.LastErrorAt = text, kind, time.Now()
	if kind == KindWrite {
		l.st.WriteErrors++
		l.st.WriteOK = false
	} else {
		l.st.FsyncErrors++
		l.st.FsyncOK = false
	}
	l.broadcast()
}

// ---- rewrite ----------------------------------------------------------------

// StartRewrite begins an AOF rewrite, as Redis' rewriteAppendOnlyFileBackground
// with openNewIncrAofForAppend: a new incremental file (seq+1) is created
// and added to the manifest (so a crash now still loads old base + old and
// new incremental files), and every Append from now on goes to it. It
// returns the path where the caller must write the new base, an RDB of the
// data set exactly as of this call (no command appended after it may be in
// it, none before it missing), then call FinishRewrite, or AbortRewrite.
//
// As Redis resets aof_selected_db here, the caller's next Append should
// start with a SELECT.
func (l *Log) StartRewrite() (basePath string, err error) {
	l.rwLock.Lock()
	defer l.rwLock.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return "", ErrClosed
	}
	if l.rewrite != nil {
		l.mu.Unlock()
		return "", ErrRewriteInProgress
	}
	m := l.manifest.clone()
	l.mu.Unlock()

	m.IncrSeq++
	fi := FileInfo{Name: incrName(l.filename, m.IncrSeq), Seq: m.IncrSeq, Type: TypeIncr}
	m.Incr = append(m.Incr, fi)
	path := filepath.Join(l.dir, fi.Name)
	// A file of that name can only be a leftover of a crash before the
	// manifest named it: start it empty, as Redis' O_TRUNC.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("Can't open the append-only file %s: %s", fi.Name, strerror(err))
	}
	f, size, err := l.opts.open(path)
	if err != nil {
		return "", fmt.Errorf("Can't open the append-only file %s: %s", fi.Name, strerror(err))
	}
	if err := writeManifest(l.dir, l.filename, m); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	l.mu.Lock()
	l.segs[len(l.segs)-1].end = l.end
	l.segs = append(l.segs, &segment{name: fi.Name, seq: fi.Seq, file: f, size: size, end: -1})
	l.manifest = m
	l.rewrite = &rewriteState{
		basePath: filepath.Join(l.dir, baseName(l.filename, m.BaseSeq+1)),
		baseSeq:  m.BaseSeq + 1,
		incrSeq:  fi.Seq,
		switchAt: l.end,
	}
	basePath = l.rewrite.basePath
	l.mu.Unlock()
	l.wake()
	return basePath, nil
}

// FinishRewrite installs the base the caller wrote at StartRewrite's path,
// as Redis' backgroundRewriteDoneHandler: the base is fsynced, the manifest
// switched atomically to the new base and the incremental files since
// StartRewrite, the old base and incremental files marked history, then
// deleted and the manifest written again without them. Bytes appended
// before StartRewrite that were still buffered are dropped (the base holds
// them) and count as durable. On error the rewrite is still in progress:
// retry, or AbortRewrite.
func (l *Log) FinishRewrite() error {
	l.rwLock.Lock()
	defer l.rwLock.Unlock()
	l.mu.Lock()
	rw := l.rewrite
	m := l.manifest.clone()
	l.mu.Unlock()
	if rw == nil {
		return ErrNoRewrite
	}
	baseSize, err := syncFile(rw.basePath)
	if err != nil {
		return fmt.Errorf("Error trying to fsync the new base file %s: %s", filepath.Base(rw.basePath), strerror(err))
	}
	var history []FileInfo
	if m.Base != nil {
		h := *m.Base
		h.Type = TypeHistory
		history = append(history, h)
	}
	var keep []FileInfo
	for _, fi := range m.Incr {
		if fi.Seq < rw.incrSeq {
			fi.Type = TypeHistory
			history = append(history, fi)
		} else {
			keep = append(keep, fi)
		}
	}
	m.History = append(history, m.History...)
	m.Incr = keep
	m.BaseSeq = rw.baseSeq
	m.Base = &FileInfo{Name: filepath.Base(rw.basePath), Seq: rw.baseSeq, Type: TypeBase}
	if err := writeManifest(l.dir, l.filename, m); err != nil {
		return err
	}

	l.mu.Lock()
	l.manifest = m
	l.rewrite = nil
	l.size = baseSize
	for _, s := range l.segs {
		if s.seq < rw.incrSeq {
			s.discard = true
		} else {
			l.size += s.size
		}
	}
	l.baseSize = l.size
	l.durable = max(l.durable, rw.switchAt)
	l.broadcast()
	l.mu.Unlock()
	l.wake()

	m, err = deleteHistory(l.dir, l.filename, m)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.manifest = m
	l.mu.Unlock()
	return nil
}

// AbortRewrite gives up the rewrite: the partial base is removed and the
// files keep working (the new incremental file stays in the manifest, as
// in Redis after a failed rewrite).
func (l *Log) AbortRewrite() error {
	l.rwLock.Lock()
	defer l.rwLock.Unlock()
	l.mu.Lock()
	rw := l.rewrite
	l.rewrite = nil
	l.mu.Unlock()
	if rw == nil {
		return ErrNoRewrite
	}
	if err := os.Remove(rw.basePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ---- file helpers -------------------------------------------------------------

// deleteHistory removes m's history files and writes the manifest without
// them (Redis' aofDelHistoryFiles), returning the new manifest.
func deleteHistory(dir, filename string, m *Manifest) (*Manifest, error) {
	for _, h := range m.History {
		if err := os.Remove(filepath.Join(dir, h.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("Can't remove the history file %s: %s", h.Name, strerror(err))
		}
	}
	nm := m.clone()
	nm.History = nil
	if err := writeManifest(dir, filename, nm); err != nil {
		return m, err
	}
	return nm, nil
}

// writeFileSync creates (or truncates) path with data and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncFile fsyncs the file at path and returns its size.
func syncFile(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func statSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
