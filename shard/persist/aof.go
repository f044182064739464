package persist

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/aof"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// aofRewriteInProgress is Redis' reply to BGREWRITEAOF while one runs.
var errRewriteInProgress = errors.New("ERR Background append only file rewriting already in progress")

// aofDir is <data-dir>/<appenddirname>.
func (m *Manager) aofDir() string { return filepath.Join(m.dir(), m.reg.String("appenddirname")) }

func (m *Manager) policy() aof.FsyncPolicy {
	p, err := aof.ParseFsyncPolicy(m.reg.String("appendfsync"))
	if err != nil {
		return aof.FsyncEverySec
	}
	return p
}

// loadAOF replays the append-only file: its base (an RDB snapshot, or
// commands) and then its incremental files. It reports whether there was
// one.
func (m *Manager) loadAOF() (bool, error) {
	rep := m.rt.NewReplayer()
	defer rep.Finish()
	base := func(path string, isRDB bool) error {
		if isRDB {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			st, err := m.rt.LoadRDB(bufio.NewReaderSize(f, 1<<20))
			m.loadStats.Keys += st.Keys
			m.loadStats.Expired += st.Expired
			return err
		}
		return nil // a base of commands: Load hands them to rep.Apply
	}
	var replyErrors int64
	apply := func(args [][]byte) error {
		err := rep.Apply(args)
		var re *shard.ReplyError
		if errors.As(err, &re) { // as Redis' loader: the reply is ignored
			if replyErrors++; replyErrors <= 10 {
				m.log.Warn("a command of the append only file replied with an error", "command", re.Command, "reply", re.Reply)
			}
			return nil
		}
		return err
	}
	info, err := aof.Load(m.aofDir(), m.reg.String("appendfilename"), m.reg.Bool("aof-load-truncated"), base, apply)
	if replyErrors > 0 {
		m.log.Warn("commands of the append only file replied with errors; loading went on, as Redis does", "count", replyErrors)
	}
	if err != nil {
		return info.Exists, err
	}
	if info.Truncated {
		m.log.Warn("!!! Warning: short read while loading the AOF file !!!", "file", info.TruncatedFile, "truncated_at", info.TruncatedAt)
		m.log.Warn("AOF loaded anyway because aof-load-truncated is enabled", "file", info.TruncatedFile)
	}
	if info.RevertedMulti {
		m.log.Warn("reverted an incomplete MULTI/EXEC transaction at the end of the AOF")
	}
	if info.Exists {
		m.log.Info("DB loaded from append only file", "dir", m.aofDir(), "files", info.Files, "commands", info.Commands, "bytes", info.Size)
	}
	return info.Exists, nil
}

// openAOF starts logging every change to the append-only file. When the
// file holds less than the dataset (it did not exist, or appendonly was
// just turned on), a rewrite makes a base of the whole dataset at once.
func (m *Manager) openAOF(needBase bool) error {
	l, err := aof.Open(m.aofDir(), m.reg.String("appendfilename"), m.policy())
	if err != nil {
		return fmt.Errorf("opening the append only file in %s: %w", m.aofDir(), err)
	}
	m.mu.Lock()
	m.appendLog.Store(l) // before the first record: AwaitDurable must see the log
	m.aofRewriteOK = true
	m.mu.Unlock()
	m.rt.SetAppendLog(l)
	if needBase {
		_, err := m.BGRewriteAOF()
		return err
	}
	return nil
}

// SetAppendOnly follows CONFIG SET appendonly: on opens the log and writes
// a base with the dataset (Redis' startAppendOnly), off stops logging and
// closes it.
func (m *Manager) SetAppendOnly(on bool) error {
	l := m.appendLog.Load()
	if on == (l != nil) {
		return nil
	}
	if on {
		return m.openAOF(true)
	}
	m.rt.SetAppendLog(nil)
	m.waitRewrite()
	m.mu.Lock()
	m.appendLog.Store(nil)
	m.mu.Unlock()
	m.refreshAOF()
	err := l.Close() // writes and fsyncs what is buffered; parked clients are woken
	return err
}

// SetFsyncPolicy follows CONFIG SET appendfsync.
func (m *Manager) SetFsyncPolicy() {
	l := m.appendLog.Load()
	if l != nil {
		l.SetPolicy(m.policy())
	}
}

// AwaitDurable reports whether the changes up to log offset end may be
// acknowledged: at once under appendfsync everysec and no (or without a
// log); under always once they are written and fsynced. When they are not
// yet, n.Notify is called when that changes and the caller asks again; the
// event loop meanwhile serves its other clients, and one fsync covers every
// client waiting (group commit). The error is the disk's while it fails.
func (m *Manager) AwaitDurable(end int64, n interface{ Notify() }) (bool, error) {
	l := m.appendLog.Load()
	if l == nil || l.Policy() != aof.FsyncAlways {
		return true, nil
	}
	return l.NotifyDurable(end, n)
}

// BGRewriteAOF rewrites the append-only file in the background: a new base
// holding the dataset as an RDB snapshot, taken at the same instant the log
// switches to a new incremental file, so every change is in exactly one of
// them. It returns Redis' status reply: while a BGSAVE runs the rewrite
// waits for it ("Background append only file rewriting scheduled").
func (m *Manager) BGRewriteAOF() (string, error) {
	m.mu.Lock()
	reply := "Background append only file rewriting started"
	if m.bgsave != nil {
		reply = "Background append only file rewriting scheduled"
	}
	l, standalone := m.appendLog.Load(), false
	if l == nil {
		// As Redis 7.0 with appendonly no: write the AOF directory with a
		// base of the dataset; nothing is logged after it.
		var err error
		if l, err = aof.Open(m.aofDir(), m.reg.String("appendfilename"), m.policy()); err != nil {
			m.mu.Unlock()
			return "", fmt.Errorf("ERR %v", err)
		}
		standalone = true
	}
	if m.rewriting != nil {
		if standalone {
			_ = l.Close()
		}
		m.mu.Unlock()
		return "", errRewriteInProgress
	}
	j := &job{started: time.Now(), done: make(chan struct{})}
	m.rewriting = j
	m.mu.Unlock()
	go func() {
		err := m.rewrite(l)
		if standalone {
			if cerr := l.Close(); err == nil {
				err = cerr
			}
		}
		m.mu.Lock()
		m.rewriting = nil
		m.aofLastRewriteDur = time.Since(j.started)
		m.aofRewriteOK = err == nil
		if err == nil {
			m.aofRewrites++
		}
		scheduled := m.scheduled
		m.scheduled = false
		m.mu.Unlock()
		j.err = err
		close(j.done)
		if scheduled { // BGSAVE SCHEDULE during the rewrite
			if _, serr := m.startSnapshot(); serr != nil {
				m.log.Warn("starting the scheduled BGSAVE", "err", serr)
			}
		}
		if err != nil {
			m.countError(KindAOFWrite)
			m.log.Error("background AOF rewrite failed", "err", err)
			return
		}
		m.log.Info("background AOF rewrite finished successfully", "seconds", time.Since(j.started).Seconds())
	}()
	return reply, nil
}

func (m *Manager) rewrite(l *aof.Log) error {
	// The snapshot is taken behind the database's other snapshots: one at a
	// time (Redis' rule that BGSAVE and BGREWRITEAOF do not run together).
	m.waitBGSave()
	var basePath string
	at := func() error { // every shard held: no change can slip between the two
		p, err := l.StartRewrite()
		basePath = p
		return err
	}
	f, err := os.CreateTemp(m.aofDir(), "temp-rewriteaof-*.rdb")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_ = f.Chmod(0o644) // as the AOF's other files (CreateTemp makes 0600)
	// Small writes: on a busy CPU a long write(2) holds it from the event
	// loops (WriteSnapshot buffers 64 KiB itself).
	w := bufio.NewWriterSize(f, 64<<10)
	aux := append(m.aux(), [2]string{"aof-base", "1"})
	m.rt.SetSnapshotCompression(m.reg.Bool("rdbcompression"))
	_, err = m.rt.WriteSnapshotAt(w, at, aux...)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && basePath != "" {
		err = os.Rename(f.Name(), basePath)
	}
	if err != nil {
		if basePath != "" {
			_ = l.AbortRewrite()
		}
		return err
	}
	return l.FinishRewrite()
}

func (m *Manager) waitRewrite() {
	m.mu.Lock()
	j := m.rewriting
	m.mu.Unlock()
	if j != nil {
		<-j.done
	}
}

// checkAOF runs from the cron: it refreshes -MISCONF from the log's health
// and starts an automatic rewrite when the log outgrew its base by
// auto-aof-rewrite-percentage (Redis' serverCron).
func (m *Manager) checkAOF() {
	m.refreshAOF()
	m.mu.Lock()
	l, busy := m.appendLog.Load(), m.rewriting != nil
	m.mu.Unlock()
	if l == nil || busy {
		return
	}
	pct := m.reg.Int("auto-aof-rewrite-percentage")
	size, base := l.Size(), l.BaseSize()
	if pct > 0 && size > m.reg.Size("auto-aof-rewrite-min-size") {
		if base < 1 {
			base = 1
		}
		if growth := (size - base) * 100 / base; growth >= pct {
			m.log.Info("starting automatic rewriting of AOF", "growth_percent", growth)
			_, _ = m.BGRewriteAOF()
		}
	}
}

// refreshAOF keeps the log's health where WriteDenied reads it.
func (m *Manager) refreshAOF() {
	l := m.appendLog.Load()
	if l == nil {
		m.aofDenied.Store(nil)
		return
	}
	if st := l.Status(); !st.OK() {
		msg := "MISCONF Errors writing to the AOF file: " + st.LastError
		if prev := m.aofDenied.Load(); prev == nil || *prev != msg {
			m.log.Error("the append only file cannot be written: writes are refused until it can", "err", st.LastError, "kind", st.LastErrorKind)
		}
		m.aofDenied.Store(&msg)
		return
	}
	if m.aofDenied.Load() != nil {
		m.log.Warn("the append only file can be written again: writes are accepted")
	}
	m.aofDenied.Store(nil)
}

// aofInfo writes the INFO persistence fields of the append-only file.
func (m *Manager) aofInfo(add func(string, any)) {
	m.mu.Lock()
	l, j := m.appendLog.Load(), m.rewriting
	ok, rewrites, last := m.aofRewriteOK, m.aofRewrites, m.aofLastRewriteDur
	m.mu.Unlock()
	add("aof_enabled", boolInt(l != nil))
	add("aof_rewrite_in_progress", boolInt(j != nil))
	add("aof_rewrite_scheduled", 0)
	if rewrites > 0 || !ok {
		add("aof_last_rewrite_time_sec", int64(last/time.Second))
	} else {
		add("aof_last_rewrite_time_sec", -1)
	}
	if j != nil {
		add("aof_current_rewrite_time_sec", int64(time.Since(j.started)/time.Second))
	} else {
		add("aof_current_rewrite_time_sec", -1)
	}
	add("aof_last_bgrewrite_status", okErr(ok))
	add("aof_rewrites", rewrites)
	add("aof_rewrites_consecutive_failures", boolInt(!ok))
	var st aof.Status
	if l != nil {
		st = l.Status()
	}
	add("aof_last_write_status", okErr(l == nil || st.WriteOK))
	add("aof_last_cow_size", 0)
	add("module_fork_in_progress", 0)
	add("module_fork_last_cow_size", 0)
	if l != nil {
		add("aof_current_size", st.Size)
		add("aof_base_size", st.BaseSize)
		add("aof_pending_rewrite", 0)
		add("aof_buffer_length", st.Buffered)
		add("aof_pending_bio_fsync", boolInt(st.Unsynced > 0))
		add("aof_delayed_fsync", 0)
		add("svc_aof_fsyncs", st.Fsyncs)
		add("svc_aof_last_fsync_unix", strconv.FormatInt(st.LastFsync.Unix(), 10))
	}
}

var _ keyspace.AppendLog = (*aof.Log)(nil)
