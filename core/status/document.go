package status

import (
	"math"
	"time"
)

// Document is the status document. Field order is rendering order.
type Document struct {
	Svc         Svc         `json:"svc"`
	Health      Health      `json:"health"`
	Cluster     Cluster     `json:"cluster"`
	Clients     Clients     `json:"clients"`
	Memory      Memory      `json:"memory"`
	Persistence Persistence `json:"persistence"`
	Shards      []Shard     `json:"shards"`
	Keyspace    Keyspace    `json:"keyspace"`
	Commands    Commands    `json:"commands"`
	HotShards   HotShards   `json:"hot_shards"`
}

// Time is an instant as unix seconds and as ISO 8601 in UTC, both at
// one-second precision.
type Time struct {
	Unix int64  `json:"unix"`
	ISO  string `json:"iso"`
}

// At converts t, truncated to the second.
func At(t time.Time) Time {
	u := t.Unix()
	return Time{Unix: u, ISO: time.Unix(u, 0).UTC().Format("2006-01-02T15:04:05Z")}
}

// Lifecycle states as the document names them.
const (
	StateStarting     = "starting"
	StateReady        = "ready"
	StateShuttingDown = "shutting_down"
)

// Svc is the process: build, identity and age.
type Svc struct {
	Version       string `json:"version"`
	RedisVersion  string `json:"redis_version"` // the Redis version svcdb is compatible with
	GitCommit     string `json:"git_commit"`    // vcs.revision of the build, or "unknown"
	GoVersion     string `json:"go_version"`
	PID           int    `json:"pid"`
	State         string `json:"state"` // StateStarting, StateReady or StateShuttingDown
	StartedAt     Time   `json:"started_at"`
	GeneratedAt   Time   `json:"generated_at"` // the instant the document describes
	UptimeSeconds int64  `json:"uptime_seconds"`
}

// Health verdicts.
const (
	Healthy   = "healthy"   // no issue
	Degraded  = "degraded"  // at least one warning, no critical issue
	Unhealthy = "unhealthy" // at least one critical issue
)

// Issue severities.
const (
	SeverityWarning  = "warning"  // makes health degraded
	SeverityCritical = "critical" // makes health unhealthy
)

// Issue codes.
const (
	IssueNotReady            = "not_ready"             // starting or shutting down (critical)
	IssueMemoryPressure      = "memory_pressure"       // used/maxmemory at or above the warning percent
	IssueNearConnectionLimit = "near_connection_limit" // connected/maxclients at or above the warning percent
	IssueShardLate           = "shard_late"            // a shard missed the collector's deadline
	IssuePersistenceFailing  = "persistence_failing"   // writes are refused (-MISCONF) because persistence fails
	IssueReplicasLost        = "replicas_lost"         // a master lost replicas it had (all, or below min-replicas-to-write)
)

// Health is the verdict and the issues behind it, most severe first.
type Health struct {
	Status string  `json:"status"` // Healthy, Degraded or Unhealthy
	Issues []Issue `json:"issues"`
}

// Issue is one reason health is not Healthy.
type Issue struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// Cluster is the topology as this node sees it.
type Cluster struct {
	Mode          string `json:"mode"`    // "standalone" until clustering exists
	NodeID        string `json:"node_id"` // INFO's run_id
	Address       string `json:"address"` // the Redis port's host:port
	Shards        int    `json:"shards"`
	EventLoops    int    `json:"event_loops"`
	DrainStrategy string `json:"drain_strategy"`
}

// Clients are the connections on the Redis port.
type Clients struct {
	Connected           int64   `json:"connected"`
	MaxClients          int64   `json:"max_clients"`
	UsedPercent         float64 `json:"used_percent"`    // connected / max_clients
	WarningPercent      int64   `json:"warning_percent"` // status-connection-warning-percent
	ConnectionsReceived int64   `json:"connections_received_total"`
	ConnectionsRejected int64   `json:"connections_rejected_total"`
}

// Memory is the dataset's memory against maxmemory.
type Memory struct {
	// UsedBytes is the dataset's approximate size: the shards' published
	// counters, so it is known even while a shard is late.
	UsedBytes      int64    `json:"used_bytes"`
	MaxMemoryBytes int64    `json:"maxmemory_bytes"` // 0: unlimited
	UsedPercent    *float64 `json:"used_percent"`    // null when unlimited
	WarningPercent int64    `json:"warning_percent"` // status-memory-warning-percent
	Policy         string   `json:"maxmemory_policy"`
}

// Persistence outcomes, as Redis' INFO writes them (rdb_last_bgsave_status,
// aof_last_write_status).
const (
	PersistOK  = "ok"
	PersistErr = "err"
)

// Persistence is what is saved and whether saving works: the RDB snapshot,
// the append-only file, the errors since start by kind, and the -MISCONF
// error write commands get while persistence fails.
//
// Invariants: Enabled == RDB.Enabled || AOF.Enabled; WritesRefused is null
// exactly while write commands are accepted; AOF.CurrentSizeBytes and
// AOF.LastFsync are null unless the append-only file is open; lists are
// never null.
type Persistence struct {
	Enabled bool `json:"enabled"` // RDB snapshots or the append-only file are on
	Loading bool `json:"loading"` // the dataset is being loaded: clients get -LOADING
	RDB     RDB  `json:"rdb"`
	AOF     AOF  `json:"aof"`
	// ErrorsTotal counts failures since start, as svc_persistence_errors_total.
	ErrorsTotal PersistenceErrors `json:"errors_total"`
	// WritesRefused is the error (without the leading '-') write commands
	// get while persistence fails (-MISCONF, as Redis); null while they are
	// accepted.
	WritesRefused *string `json:"writes_refused"`
}

// RDB is the snapshot side: the save rules and how the last snapshot went.
type RDB struct {
	Enabled   bool       `json:"enabled"`    // save rules are set
	SaveRules []SaveRule `json:"save_rules"` // the save parameter; [] when none
	// LastSave is the end of the last successful snapshot (LASTSAVE); the
	// start time until one succeeded, as in Redis.
	LastSave             Time    `json:"last_save"`
	LastBGSaveStatus     string  `json:"last_bgsave_status"` // PersistOK or PersistErr
	BGSaveInProgress     bool    `json:"bgsave_in_progress"`
	ChangesSinceLastSave int64   `json:"changes_since_last_save"`
	LastError            *string `json:"last_error"` // the last snapshot's error; null after a success
}

// SaveRule is one "<seconds> <changes>" pair of the save parameter: a
// snapshot starts when at least Changes writes happened in Seconds.
type SaveRule struct {
	Seconds int64 `json:"seconds"`
	Changes int64 `json:"changes"`
}

// AOF is the append-only file.
type AOF struct {
	Enabled           bool   `json:"enabled"`           // appendonly
	Fsync             string `json:"fsync"`             // appendfsync: always, everysec or no
	LastWriteStatus   string `json:"last_write_status"` // PersistOK or PersistErr; ok while off
	LastFsyncStatus   string `json:"last_fsync_status"` // PersistOK or PersistErr; ok while off
	RewriteInProgress bool   `json:"rewrite_in_progress"`
	CurrentSizeBytes  *int64 `json:"current_size_bytes"` // base and incremental files; null while off
	LastFsync         *Time  `json:"last_fsync"`         // last successful fsync; null while off or before the first
}

// PersistenceErrors counts persistence failures since start by kind; the
// kinds are svc_persistence_errors_total's kind label (rdb, aof-write,
// aof-fsync, load) with '_' for '-'.
type PersistenceErrors struct {
	RDB      int64 `json:"rdb"`       // a snapshot could not be written
	AOFWrite int64 `json:"aof_write"` // a write to the append-only file, or its rewrite, failed
	AOFFsync int64 `json:"aof_fsync"` // an fsync of the append-only file failed
	Load     int64 `json:"load"`      // a file could not be read at start-up
}

// NoPersistence is the section of a server without a persistence manager:
// nothing is saved, nothing fails, and the last save is lastSave (the start
// time, as LASTSAVE answers). fsync is the appendfsync parameter.
func NoPersistence(lastSave time.Time, fsync string) Persistence {
	return Persistence{
		RDB: RDB{SaveRules: []SaveRule{}, LastSave: At(lastSave), LastBGSaveStatus: PersistOK},
		AOF: AOF{Fsync: fsync, LastWriteStatus: PersistOK, LastFsyncStatus: PersistOK},
	}
}

// Shard states.
const (
	ShardOK   = "ok"
	ShardLate = "late" // missed the deadline: keys, expires and memory_bytes are null
)

// Shard is one shard. Keys, Expires and MemoryBytes are read by the shard's
// owner and are nil (null) when it is late; OpsPerSec and QueueDepth come
// from counters anyone may read and are always real.
type Shard struct {
	ID          int     `json:"id"`
	State       string  `json:"state"` // ShardOK or ShardLate
	Keys        *int64  `json:"keys"`
	Expires     *int64  `json:"expires"`
	MemoryBytes *int64  `json:"memory_bytes"`
	OpsPerSec   float64 `json:"ops_per_sec"` // over hot_shards.period_secs
	QueueDepth  int     `json:"queue_depth"`
}

// Keyspace sums the shards' answers per database. With late shards it is
// incomplete: Complete is false and LateShards names them.
type Keyspace struct {
	Complete   bool       `json:"complete"`
	LateShards []int      `json:"late_shards"`
	Databases  []Database `json:"databases"` // databases holding keys, by number
}

// Database is one numbered database.
type Database struct {
	DB      int   `json:"db"`
	Keys    int64 `json:"keys"`
	Expires int64 `json:"expires"`
}

// Commands are the commands processed since start.
type Commands struct {
	Total     int64 `json:"total"`
	OpsPerSec int64 `json:"ops_per_sec"` // INFO's instantaneous_ops_per_sec
}

// HotShards is DEBUG HOTSHARDS' summary over the default period; with
// [hotshards] enabled = false only "enabled": false is rendered.
type HotShards struct {
	Enabled    bool `json:"enabled"`
	*HotReport      // nil when disabled
}

// HotReport is the hot-shard analysis.
type HotReport struct {
	PeriodSecs      int        `json:"period_secs"`
	TotalOpsPerSec  float64    `json:"total_ops_per_sec"`
	ImbalanceRatio  float64    `json:"imbalance_ratio"` // busiest shard over the mean; 0 when idle
	HotCount        int        `json:"hot_count"`
	WarmCount       int        `json:"warm_count"`
	Shards          []ShardHot `json:"shards"`
	Recommendations []string   `json:"recommendations"`
}

// ShardHot is one shard in the hot-shard analysis.
type ShardHot struct {
	ID           int     `json:"shard_id"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	ReadsPerSec  float64 `json:"reads_per_sec"`
	WritesPerSec float64 `json:"writes_per_sec"`
	Percentage   float64 `json:"percentage"`
	Status       string  `json:"status"` // HOT, WARM or OK
}

// Round2 keeps two decimals, so rates read as rates and two renderings of
// one value agree; NaN and infinities (never produced by the collector)
// become 0 rather than make the document unrenderable.
func Round2(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*100) / 100
}

// Percent is 100*part/whole rounded to two decimals; 0 when whole <= 0.
func Percent(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return Round2(100 * float64(part) / float64(whole))
}
