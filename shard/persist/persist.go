// Package persist owns svcdb's files on disk: the RDB snapshot (SAVE, BGSAVE,
// the save rules, loading at start-up) and the append-only file (its log,
// rewrites and replay). It decides when to write and where, reports how it
// went (INFO persistence, /status/json, metrics) and tells the server when
// writes must be refused (-MISCONF) because the disk refuses them.
//
// The data itself is serialized and loaded by the shards (shard.Runtime's
// WriteSnapshot and LoadRDB), which keep a snapshot point-in-time without
// stopping the world. This package must never hold a shard's token itself,
// and nothing it does may block the data path on the disk: writes to files
// happen on its own goroutines.
package persist

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/aof"
)

// Error kinds, the label of svc_persistence_errors_total.
const (
	KindRDB      = "rdb"       // a snapshot could not be written
	KindAOFWrite = "aof-write" // a write to the append-only file failed
	KindAOFFsync = "aof-fsync" // an fsync of the append-only file failed
	KindLoad     = "load"      // a file could not be read at start-up
)

// Manager runs persistence for one server. Its methods are safe for
// concurrent use.
type Manager struct {
	rt  *shard.Runtime
	reg *config.Registry
	log *slog.Logger

	started time.Time

	mu        sync.Mutex // guards the fields below
	bgsave    *job       // the snapshot running now, nil when none
	scheduled bool       // BGSAVE SCHEDULE: start one when the running rewrite ends
	lastTry   time.Time  // start of the last snapshot attempt (ok or not)
	lastOK    bool       // the last snapshot succeeded (Redis' lastbgsave_status)
	lastSave  time.Time  // end of the last successful snapshot (LASTSAVE)
	lastDur   time.Duration
	saves     int64
	dirtyBase int64 // Runtime.Dirty() when the last successful snapshot started
	lastErr   string
	loadStats shard.LoadStats

	rewriting         *job // the AOF rewrite running now
	aofRewriteOK      bool
	aofRewrites       int64
	aofLastRewriteDur time.Duration

	appendLog atomic.Pointer[aof.Log] // the append-only file; nil when appendonly is off (AwaitDurable reads it per reply)
	aofDenied atomic.Pointer[string]  // the AOF's -MISCONF text while it fails

	errCount [4]atomic.Int64 // by kind, in kinds order
	loading  atomic.Bool
	denied   atomic.Pointer[string] // WriteDenied's answer, kept by Refresh

	stop chan struct{}
	wg   sync.WaitGroup
}

var kinds = [...]string{KindRDB, KindAOFWrite, KindAOFFsync, KindLoad}

// New returns a Manager for rt reading its parameters from reg. Call Load
// before serving clients, then Start.
func New(rt *shard.Runtime, reg *config.Registry, log *slog.Logger) *Manager {
	return &Manager{rt: rt, reg: reg, log: log, started: time.Now(), lastOK: true, lastSave: time.Now(), stop: make(chan struct{})}
}

// dir is [server] data-dir.
func (m *Manager) dir() string { return m.reg.String("data-dir") }

// RDBPath is where the snapshot lives: <data-dir>/<dbfilename>.
func (m *Manager) RDBPath() string { return filepath.Join(m.dir(), m.reg.String("dbfilename")) }

func (m *Manager) countError(kind string) {
	for i, k := range kinds {
		if k == kind {
			m.errCount[i].Add(1)
		}
	}
}

// Errors returns the count of persistence errors by kind since start.
func (m *Manager) Errors() map[string]int64 {
	out := make(map[string]int64, len(kinds))
	for i, k := range kinds {
		out[k] = m.errCount[i].Load()
	}
	if l := m.appendLog.Load(); l != nil {
		st := l.Status()
		out[KindAOFWrite] += st.WriteErrors
		out[KindAOFFsync] += st.FsyncErrors
	}
	return out
}

// Loading reports whether the dataset is being loaded (clients get -LOADING).
func (m *Manager) Loading() bool { return m.loading.Load() }

// Load reads the dataset at start-up: the append-only file when appendonly
// is on (as Redis, it wins over the snapshot), else the snapshot if the file
// exists. A missing file is an empty dataset; a file that cannot be read is
// an error naming it, and the server must not start (as Redis exits).
func (m *Manager) Load() error {
	m.loading.Store(true)
	defer m.loading.Store(false)
	defer m.Refresh()
	if err := os.MkdirAll(m.dir(), 0o755); err != nil {
		m.countError(KindLoad)
		return fmt.Errorf("data-dir %s: %w", m.dir(), err)
	}
	start := time.Now()
	if m.reg.Bool("appendonly") {
		// As Redis, the append-only file wins over the snapshot. Unlike Redis
		// 7.0, a snapshot is loaded when there is no append-only file yet (the
		// first start with appendonly on), and becomes the file's base.
		found, err := m.loadAOF()
		if err != nil {
			m.countError(KindLoad)
			return fmt.Errorf("loading the append only file: %w", err)
		}
		if found {
			m.mu.Lock()
			m.dirtyBase = m.rt.Dirty()
			m.mu.Unlock()
			m.log.Info("dataset loaded", "seconds", time.Since(start).Seconds(), "keys", m.loadStats.Keys)
			return m.openAOF(false)
		}
		if err := m.loadRDB(start); err != nil {
			return err
		}
		return m.openAOF(true)
	}
	return m.loadRDB(start)
}

func (m *Manager) loadRDB(start time.Time) error {
	path := m.RDBPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		m.log.Info("no snapshot to load: starting with an empty dataset", "file", path)
		return nil
	}
	if err != nil {
		m.countError(KindLoad)
		return fmt.Errorf("opening the snapshot: %w", err)
	}
	defer f.Close()
	st, err := m.rt.LoadRDB(f)
	if err != nil {
		m.countError(KindLoad)
		return fmt.Errorf("loading the snapshot %s: %w", path, err)
	}
	m.mu.Lock()
	m.loadStats = st
	m.dirtyBase = m.rt.Dirty()
	m.mu.Unlock()
	m.log.Info("DB loaded from disk", "file", path, "keys", st.Keys, "expired_skipped", st.Expired, "seconds", time.Since(start).Seconds())
	return nil
}

// Start runs the save rules (Redis' serverCron checks them ten times a second).
func (m *Manager) Start() {
	m.wg.Add(1)
	go m.cron()
}

// Close stops the background work and waits for a snapshot in progress;
// with save it then writes a final snapshot (Redis saves on SHUTDOWN and
// SIGTERM when save rules are set, see SaveRulesSet; SHUTDOWN SAVE/NOSAVE
// override).
func (m *Manager) Close(save bool) error {
	close(m.stop)
	m.wg.Wait()
	m.waitBGSave()
	m.waitRewrite()
	if l := m.appendLog.Load(); l != nil {
		m.rt.SetAppendLog(nil)
		if err := l.Close(); err != nil { // writes and fsyncs what is buffered
			m.log.Error("closing the append only file", "err", err)
		}
	}
	if save {
		m.log.Info("saving the final RDB snapshot before exiting", "file", m.RDBPath())
		return m.Save()
	}
	return nil
}

// SaveRulesSet reports whether the save parameter holds rules.
func (m *Manager) SaveRulesSet() bool { return len(config.SaveRules(m.reg.String("save"))) > 0 }

// BeginLoading marks the dataset as loading before the server opens its
// port, so the first client already gets -LOADING; Load ends it.
func (m *Manager) BeginLoading() { m.loading.Store(true) }

func (m *Manager) cron() {
	defer m.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.checkSaveRules(time.Now())
		m.checkAOF()
	}
}

// retryDelay is Redis' CONFIG_BGSAVE_RETRY_DELAY: after a failed snapshot,
// the save rules wait this long before trying again.
const retryDelay = 5 * time.Second

func (m *Manager) checkSaveRules(now time.Time) {
	rules := config.SaveRules(m.reg.String("save"))
	if len(rules) == 0 {
		return
	}
	m.mu.Lock()
	running := m.bgsave != nil
	changes := m.rt.Dirty() - m.dirtyBase
	since := now.Sub(m.lastSave)
	canRetry := m.lastOK || now.Sub(m.lastTry) > retryDelay
	m.mu.Unlock()
	if running || !canRetry {
		return
	}
	for _, r := range rules {
		if changes >= r.Changes && since >= time.Duration(r.Seconds)*time.Second {
			m.log.Info("starting a snapshot by the save rules", "changes", changes, "seconds", int64(since.Seconds()), "rule", fmt.Sprintf("%d %d", r.Seconds, r.Changes))
			_, _ = m.BGSave(false)
			return
		}
	}
}
