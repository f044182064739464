package persist

import (
	"time"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/status"
)

// StatusSection is the status document's persistence section (GET
// /status/json, STATUS JSON) and what the metrics read at scrape time: the
// snapshot side from Status, the append-only file from its log, the save
// rules and the fsync policy from the registry. It takes the manager's lock
// and the log's briefly, never a shard's token, so a scrape cannot slow the
// data path.
func (m *Manager) StatusSection() status.Persistence {
	st := m.Status()
	rules := config.SaveRules(m.reg.String("save"))
	l := m.appendLog.Load()

	p := status.Persistence{
		Loading: st.Loading,
		RDB: status.RDB{
			Enabled:              len(rules) > 0,
			SaveRules:            make([]status.SaveRule, 0, len(rules)),
			LastSave:             status.At(time.Unix(st.LastSaveUnix, 0)),
			LastBGSaveStatus:     okErr(st.LastBGSaveOK),
			BGSaveInProgress:     st.BGSaveInProgress,
			ChangesSinceLastSave: st.ChangesSinceLastSave,
		},
		AOF: status.AOF{
			// appendonly as configured, as Redis' aof_enabled: on while the
			// dataset loads, before the log is open.
			Enabled:           m.reg.Bool("appendonly"),
			Fsync:             m.policy().String(),
			LastWriteStatus:   status.PersistOK,
			LastFsyncStatus:   status.PersistOK,
			RewriteInProgress: st.RewriteInProgress,
		},
		ErrorsTotal: status.PersistenceErrors{
			RDB:      st.Errors[KindRDB],
			AOFWrite: st.Errors[KindAOFWrite],
			AOFFsync: st.Errors[KindAOFFsync],
			Load:     st.Errors[KindLoad],
		},
	}
	for _, r := range rules {
		p.RDB.SaveRules = append(p.RDB.SaveRules, status.SaveRule{Seconds: r.Seconds, Changes: r.Changes})
	}
	if st.LastError != "" {
		p.RDB.LastError = &st.LastError
	}
	if l != nil {
		as := l.Status()
		p.AOF.LastWriteStatus = okErr(as.WriteOK)
		p.AOF.LastFsyncStatus = okErr(as.FsyncOK)
		size := as.Size
		p.AOF.CurrentSizeBytes = &size
		if !as.LastFsync.IsZero() {
			t := status.At(as.LastFsync)
			p.AOF.LastFsync = &t
		}
	}
	if st.WriteDenied != "" {
		p.WritesRefused = &st.WriteDenied
	}
	p.Enabled = p.RDB.Enabled || p.AOF.Enabled
	return p
}
