package persist

import "time"

// Status is what the diagnostics side shows of persistence.
type Status struct {
	Loading              bool
	BGSaveInProgress     bool
	ChangesSinceLastSave int64
	LastSaveUnix         int64
	LastBGSaveOK         bool
	LastBGSaveSeconds    int64 // -1 when none ran
	CurrentBGSaveSeconds int64 // -1 when none runs
	Saves                int64
	LastError            string // the last snapshot's error; "" after a success
	LoadedKeys           int64
	LoadExpiredKeys      int64
	Errors               map[string]int64 // by kind (KindRDB ...)
	WriteDenied          string           // the -MISCONF text while writes are refused
	RewriteInProgress    bool             // an AOF rewrite runs
}

// Status reads the current state.
func (m *Manager) Status() Status {
	m.mu.Lock()
	st := Status{
		Loading:              m.loading.Load(),
		BGSaveInProgress:     m.bgsave != nil,
		ChangesSinceLastSave: m.rt.Dirty() - m.dirtyBase,
		LastSaveUnix:         m.lastSave.Unix(),
		LastBGSaveOK:         m.lastOK,
		LastBGSaveSeconds:    -1,
		CurrentBGSaveSeconds: -1,
		Saves:                m.saves,
		LastError:            m.lastErr,
		LoadedKeys:           m.loadStats.Keys,
		LoadExpiredKeys:      m.loadStats.Expired,
		WriteDenied:          m.WriteDenied(),
		RewriteInProgress:    m.rewriting != nil,
	}
	if !m.lastTry.IsZero() && m.bgsave == nil {
		st.LastBGSaveSeconds = int64(m.lastDur.Round(time.Second) / time.Second)
	}
	if m.bgsave != nil {
		st.CurrentBGSaveSeconds = int64(time.Since(m.bgsave.started) / time.Second)
	}
	m.mu.Unlock()
	st.Errors = m.Errors() // reads the log's status: not under m.mu
	return st
}

// Info writes the INFO persistence fields Redis 7.0 writes, in its order,
// through add (the server's field writer).
func (m *Manager) Info(add func(name string, value any)) {
	st := m.Status()
	add("loading", boolInt(st.Loading))
	add("async_loading", 0)
	add("current_cow_peak", 0)
	add("current_cow_size", 0)
	add("current_cow_size_age", 0)
	add("current_fork_perc", "0.00")
	add("current_save_keys_processed", 0)
	add("current_save_keys_total", 0)
	add("rdb_changes_since_last_save", st.ChangesSinceLastSave)
	add("rdb_bgsave_in_progress", boolInt(st.BGSaveInProgress))
	add("rdb_last_save_time", st.LastSaveUnix)
	add("rdb_last_bgsave_status", okErr(st.LastBGSaveOK))
	add("rdb_last_bgsave_time_sec", st.LastBGSaveSeconds)
	add("rdb_current_bgsave_time_sec", st.CurrentBGSaveSeconds)
	add("rdb_saves", st.Saves)
	add("rdb_last_cow_size", 0)
	add("rdb_last_load_keys_expired", st.LoadExpiredKeys)
	add("rdb_last_load_keys_loaded", st.LoadedKeys)
	m.aofInfo(add)
	add("svc_persistence_errors_rdb", st.Errors[KindRDB])
	add("svc_persistence_errors_aof_write", st.Errors[KindAOFWrite])
	add("svc_persistence_errors_aof_fsync", st.Errors[KindAOFFsync])
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
