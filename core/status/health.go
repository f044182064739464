package status

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// HealthInput is what the verdict is computed from.
type HealthInput struct {
	State string // StateStarting, StateReady or StateShuttingDown

	UsedMemory, MaxMemory int64 // MaxMemory 0: unlimited, never pressure
	MemoryWarningPercent  int64

	Connected, MaxClients    int64
	ConnectionWarningPercent int64

	LateShards []int         // shards that missed the deadline, ascending
	Deadline   time.Duration // the deadline they missed

	// Persistence is the document's persistence section: while its
	// WritesRefused is set, persistence is failing.
	Persistence Persistence

	// Replication is this node's replication state; nil: a standalone
	// server without replication.
	Replication *ReplicationHealth
}

// ReplicationHealth is what the verdict reads of replication (from
// core/replication's Status).
type ReplicationHealth struct {
	Master bool // this node is a master
	// Online: replicas attached past their full sync; Peak: the most online
	// at once since the node became a master.
	Online, Peak int
	// MinToWrite is min-replicas-to-write while the check is on (0: off);
	// Good the replicas that acknowledged within min-replicas-max-lag.
	MinToWrite int64
	Good       int
}

// Assess gives the verdict: unhealthy with any critical issue (not ready),
// degraded with any warning (memory pressure, near the connection limit, a
// late shard, persistence failing: reads work, writes are refused), healthy
// otherwise. Issues come most severe first, then in a
// fixed order, so the verdict renders deterministically.
func Assess(in HealthInput) Health {
	issues := []Issue{}
	switch in.State {
	case StateReady:
	case StateStarting:
		issues = append(issues, Issue{IssueNotReady, SeverityCritical,
			"starting: the dataset is loading and the Redis port does not accept commands yet"})
	case StateShuttingDown:
		issues = append(issues, Issue{IssueNotReady, SeverityCritical,
			"shutting down: new connections are refused and in-flight commands are finishing"})
	default:
		issues = append(issues, Issue{IssueNotReady, SeverityCritical, "lifecycle state " + strconv.Quote(in.State)})
	}
	if in.MaxMemory > 0 && atOrAbove(in.UsedMemory, in.MaxMemory, in.MemoryWarningPercent) {
		issues = append(issues, Issue{IssueMemoryPressure, SeverityWarning, fmt.Sprintf(
			"used memory is %.2f%% of maxmemory (%d of %d bytes); the warning threshold is %d%% ([status] memory-warning-percent)",
			Percent(in.UsedMemory, in.MaxMemory), in.UsedMemory, in.MaxMemory, in.MemoryWarningPercent)})
	}
	if in.MaxClients > 0 && atOrAbove(in.Connected, in.MaxClients, in.ConnectionWarningPercent) {
		issues = append(issues, Issue{IssueNearConnectionLimit, SeverityWarning, fmt.Sprintf(
			"%d of maxclients %d connections in use (%.2f%%); the warning threshold is %d%% ([status] connection-warning-percent)",
			in.Connected, in.MaxClients, Percent(in.Connected, in.MaxClients), in.ConnectionWarningPercent)})
	}
	if len(in.LateShards) > 0 {
		ids := make([]string, len(in.LateShards))
		for i, id := range in.LateShards {
			ids[i] = strconv.Itoa(id)
		}
		word := "shard"
		if len(ids) > 1 {
			word = "shards"
		}
		issues = append(issues, Issue{IssueShardLate, SeverityWarning, fmt.Sprintf(
			"%s %s did not answer within %v: their keys, expires and memory are unknown (null), and the keyspace section is incomplete",
			word, strings.Join(ids, ", "), in.Deadline)})
	}
	if msg := persistenceFailure(&in.Persistence); msg != "" {
		issues = append(issues, Issue{IssuePersistenceFailing, SeverityWarning, msg})
	}
	if msg := replicasLost(in.Replication); msg != "" {
		issues = append(issues, Issue{IssueReplicasLost, SeverityWarning, msg})
	}
	h := Health{Status: Healthy, Issues: issues}
	for _, is := range issues {
		switch is.Severity {
		case SeverityCritical:
			h.Status = Unhealthy
		case SeverityWarning:
			if h.Status == Healthy {
				h.Status = Degraded
			}
		}
	}
	return h
}

// atOrAbove reports part/whole >= pct/100, exactly: in 128-bit integer
// arithmetic, so there is no float rounding at the threshold and no overflow
// for any maxmemory. whole > 0.
func atOrAbove(part, whole, pct int64) bool {
	if part <= 0 || pct < 0 {
		return part >= 0 && pct <= 0
	}
	hi1, lo1 := bits.Mul64(uint64(part), 100)
	hi2, lo2 := bits.Mul64(uint64(pct), uint64(whole))
	return hi1 > hi2 || hi1 == hi2 && lo1 >= lo2
}

// persistenceFailure describes why writes are refused, naming the error, or
// returns "" while they are accepted. An append-only file that cannot be
// written or fsynced comes first, as in Redis' writeCommandsDeniedByDiskError.
func persistenceFailure(p *Persistence) string {
	if p.WritesRefused == nil {
		return ""
	}
	refusal := *p.WritesRefused
	const tail = "; write commands are refused with -MISCONF until it works again, reads still work"
	switch {
	case p.AOF.Enabled && (p.AOF.LastWriteStatus == PersistErr || p.AOF.LastFsyncStatus == PersistErr):
		return "the append-only file cannot be made durable (" + refusal + ")" + tail
	case p.RDB.LastBGSaveStatus == PersistErr && p.RDB.LastError != nil:
		return "the last RDB snapshot failed (" + *p.RDB.LastError + ") and stop-writes-on-bgsave-error is on" + tail
	}
	return "persistence is failing (" + refusal + ")" + tail
}

// replicasLost describes a master that had replicas and lost them: fewer
// good ones than min-replicas-to-write (writes are refused with
// -NOREPLICAS), or none online at all. "" otherwise, and for a master that
// never had a replica (a deliberate single node) or a replica.
func replicasLost(r *ReplicationHealth) string {
	if r == nil || !r.Master || r.Peak == 0 {
		return ""
	}
	if r.MinToWrite > 0 && int64(r.Good) < r.MinToWrite {
		return fmt.Sprintf("%d of min-replicas-to-write %d replicas acknowledged within min-replicas-max-lag (%d online, %d at most since this node became a master); write commands are refused with -NOREPLICAS until enough replicas are back",
			r.Good, r.MinToWrite, r.Online, r.Peak)
	}
	if r.Online == 0 {
		return fmt.Sprintf("no replica is online (%d at most since this node became a master): writes are not replicated, a failover now would lose them", r.Peak)
	}
	return ""
}
