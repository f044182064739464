package persist

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/shard"
)

// ErrSaveInProgress is Redis' reply to SAVE or BGSAVE while a snapshot runs.
var ErrSaveInProgress = errors.New("ERR Background save already in progress")

// job is one snapshot being written.
type job struct {
	started time.Time
	done    chan struct{}
	err     error
}

// errChildActive is Redis' reply to BGSAVE while an AOF rewrite (its
// other child process) runs.
var errChildActive = errors.New("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")

// BGSave starts a snapshot in the background (BGSAVE, the save rules) and
// returns Redis' status reply. While an AOF rewrite runs (one snapshot at a
// time, as Redis runs one child), BGSAVE SCHEDULE starts one when it ends
// ("Background saving scheduled"); without SCHEDULE it is an error.
func (m *Manager) BGSave(schedule bool) (string, error) {
	m.mu.Lock()
	if m.bgsave == nil && m.rewriting != nil {
		defer m.mu.Unlock()
		if !schedule {
			return "", errChildActive
		}
		m.scheduled = true
		return "Background saving scheduled", nil
	}
	m.mu.Unlock()
	if _, err := m.startSnapshot(); err != nil {
		return "", err
	}
	return "Background saving started", nil
}

// Save writes a snapshot and returns when it is on disk (SAVE). Unlike Redis'
// SAVE it does not stop other clients: the shards serialize between their
// batches, as for BGSAVE. It waits for an AOF rewrite that runs.
func (m *Manager) Save() error {
	m.waitRewrite()
	j, err := m.startSnapshot()
	if err != nil {
		return err
	}
	<-j.done
	return j.err
}

// startSnapshot starts a snapshot unless one (or an AOF rewrite) runs.
func (m *Manager) startSnapshot() (*job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bgsave != nil {
		return nil, ErrSaveInProgress
	}
	if m.rewriting != nil {
		return nil, errChildActive
	}
	j := &job{started: time.Now(), done: make(chan struct{})}
	m.bgsave = j
	m.lastTry = j.started
	dirty := m.rt.Dirty()
	go func() {
		st, err := m.writeSnapshot(m.RDBPath())
		m.finishSnapshot(j, dirty, st, err)
	}()
	return j, nil
}

func (m *Manager) finishSnapshot(j *job, dirtyAtStart int64, st shard.SnapshotStats, err error) {
	m.mu.Lock()
	j.err = err
	m.bgsave = nil
	m.lastDur = time.Since(j.started)
	took := m.lastDur
	if err != nil {
		m.lastOK = false
		m.lastErr = err.Error()
	} else {
		m.lastOK = true
		m.lastErr = ""
		m.lastSave = time.Now()
		m.saves++
		m.dirtyBase = dirtyAtStart
	}
	m.mu.Unlock()
	if err != nil {
		m.countError(KindRDB)
	}
	m.Refresh() // before SAVE replies: a write right after it sees the new state
	close(j.done)
	if err != nil {
		m.log.Error("background saving error", "file", m.RDBPath(), "err", err)
		return
	}
	m.log.Info("DB saved on disk", "file", m.RDBPath(), "keys", st.Keys, "bytes", st.Bytes,
		"early_keys", st.EarlyKeys, "longest_step_us", st.LongestStep.Microseconds(), "mark_us", st.Mark.Microseconds(),
		"seconds", took.Seconds())
}

func (m *Manager) waitBGSave() {
	m.mu.Lock()
	j := m.bgsave
	m.mu.Unlock()
	if j != nil {
		<-j.done
	}
}

// writeSnapshot writes the dataset to a temporary file next to path, fsyncs
// it, renames it over path and fsyncs the directory, so path always holds a
// complete snapshot: the old one or the new one (Redis' rdbSave).
func (m *Manager) writeSnapshot(path string) (shard.SnapshotStats, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return shard.SnapshotStats{}, err
	}
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), time.Now().UnixNano()))
	f, err := os.Create(tmp)
	if err != nil {
		return shard.SnapshotStats{}, fmt.Errorf("failed opening the temp RDB file %s (in server root dir %s) for saving: %w", filepath.Base(tmp), dir, err)
	}
	st, err := m.writeTo(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return st, fmt.Errorf("write error saving DB on disk: %w", err)
	}
	return st, nil
}

func (m *Manager) writeTo(f *os.File) (shard.SnapshotStats, error) {
	// Small writes: on a busy CPU a long write(2) holds it from the event
	// loops (WriteSnapshot buffers 64 KiB itself).
	w := bufio.NewWriterSize(f, 64<<10)
	m.rt.SetSnapshotCompression(m.reg.Bool("rdbcompression"))
	st, err := m.rt.WriteSnapshot(w, m.aux()...)
	if err != nil {
		return st, err
	}
	return st, w.Flush()
}

// aux are the AUX fields Redis 7.0 writes at the start of a snapshot.
func (m *Manager) aux() [][2]string {
	var used int64
	for _, sn := range m.rt.Snapshots() {
		used += sn.MemoryUsed
	}
	return [][2]string{
		{"redis-ver", "7.0.15"},
		{"redis-bits", "64"},
		{"ctime", strconv.FormatInt(time.Now().Unix(), 10)},
		{"used-mem", strconv.FormatInt(used, 10)},
		{"aof-base", "0"},
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// LastSave is the unix time of the last successful snapshot (LASTSAVE); the
// start time when there was none.
func (m *Manager) LastSave() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastSave.Unix()
}

// misconfRDB is Redis' shared.bgsaveerr.
const misconfRDB = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// WriteDenied returns the error (without the leading '-') that write
// commands get while persistence is failing, or "" when writes may proceed
// (Redis' writeCommandsDeniedByDiskError). One atomic load: the server asks
// before every write command.
func (m *Manager) WriteDenied() string {
	if p := m.aofDenied.Load(); p != nil {
		return *p
	}
	if p := m.denied.Load(); p != nil {
		return *p
	}
	return ""
}

// Refresh recomputes WriteDenied after a snapshot ended or a parameter it
// depends on changed (save, stop-writes-on-bgsave-error): writes are refused
// while the last snapshot failed, save rules are set and
// stop-writes-on-bgsave-error is on.
func (m *Manager) Refresh() {
	m.mu.Lock()
	ok := m.lastOK
	m.mu.Unlock()
	if !ok && m.reg.Bool("stop-writes-on-bgsave-error") && len(config.SaveRules(m.reg.String("save"))) > 0 {
		msg := misconfRDB
		m.denied.Store(&msg)
		return
	}
	m.denied.Store(nil)
}
