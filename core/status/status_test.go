package status

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func i64(v int64) *int64 { return &v }

func ptr[T any](v T) *T { return &v }

// sample is a document with every kind of value: a late shard, an unlimited
// and a limited section, hot shards on.
func sample() Document {
	started := time.Unix(1700000000, 0)
	now := started.Add(42 * time.Second)
	late := []int{1}
	return Document{
		Svc: Svc{Version: "1.2.3", RedisVersion: "7.0.15", GitCommit: "unknown", GoVersion: "go1.26.8", PID: 7,
			State: StateReady, StartedAt: At(started), GeneratedAt: At(now), UptimeSeconds: 42},
		Health: Assess(HealthInput{State: StateReady, LateShards: late, Deadline: 100 * time.Millisecond,
			Connected: 1, MaxClients: 10000, ConnectionWarningPercent: 80, MemoryWarningPercent: 80}),
		Cluster: Cluster{Mode: "standalone", NodeID: "abc", Address: "127.0.0.1:6379", Shards: 2, EventLoops: 1, DrainStrategy: "run-to-completion"},
		Clients: Clients{Connected: 1, MaxClients: 10000, UsedPercent: Percent(1, 10000), WarningPercent: 80, ConnectionsReceived: 3},
		Memory:  Memory{UsedBytes: 100, WarningPercent: 80, Policy: "noeviction"},
		Persistence: Persistence{Enabled: true,
			RDB:         RDB{Enabled: true, SaveRules: []SaveRule{{3600, 1}, {300, 100}}, LastSave: At(started), LastBGSaveStatus: PersistOK, ChangesSinceLastSave: 5},
			AOF:         AOF{Enabled: true, Fsync: "everysec", LastWriteStatus: PersistOK, LastFsyncStatus: PersistOK, CurrentSizeBytes: i64(88), LastFsync: ptr(At(now))},
			ErrorsTotal: PersistenceErrors{AOFFsync: 2}},
		Shards: []Shard{
			{ID: 0, State: ShardOK, Keys: i64(3), Expires: i64(1), MemoryBytes: i64(100), OpsPerSec: 1.5},
			{ID: 1, State: ShardLate, QueueDepth: 2},
		},
		Keyspace: Keyspace{Complete: false, LateShards: late, Databases: []Database{{DB: 0, Keys: 3, Expires: 1}}},
		Commands: Commands{Total: 10, OpsPerSec: 2},
		HotShards: HotShards{Enabled: true, HotReport: &HotReport{PeriodSecs: 10, TotalOpsPerSec: 1.5, ImbalanceRatio: 2,
			Shards:          []ShardHot{{ID: 0, OpsPerSec: 1.5, Percentage: 100, Status: "HOT"}, {ID: 1, Status: "OK"}},
			Recommendations: []string{}}},
	}
}

func TestRenderShape(t *testing.T) {
	d := sample()
	got := Render(&d)
	want := `{"svc":{"version":"1.2.3","redis_version":"7.0.15","git_commit":"unknown","go_version":"go1.26.8","pid":7,"state":"ready",` +
		`"started_at":{"unix":1700000000,"iso":"2023-11-14T22:13:20Z"},"generated_at":{"unix":1700000042,"iso":"2023-11-14T22:14:02Z"},"uptime_seconds":42},` +
		`"health":{"status":"degraded","issues":[{"code":"shard_late","severity":"warning","message":"shard 1 did not answer within 100ms: their keys, expires and memory are unknown (null), and the keyspace section is incomplete"}]},` +
		`"cluster":{"mode":"standalone","node_id":"abc","address":"127.0.0.1:6379","shards":2,"event_loops":1,"drain_strategy":"run-to-completion"},` +
		`"clients":{"connected":1,"max_clients":10000,"used_percent":0.01,"warning_percent":80,"connections_received_total":3,"connections_rejected_total":0},` +
		`"memory":{"used_bytes":100,"maxmemory_bytes":0,"used_percent":null,"warning_percent":80,"maxmemory_policy":"noeviction"},` +
		`"persistence":{"enabled":true,"loading":false,"rdb":{"enabled":true,"save_rules":[{"seconds":3600,"changes":1},{"seconds":300,"changes":100}],` +
		`"last_save":{"unix":1700000000,"iso":"2023-11-14T22:13:20Z"},"last_bgsave_status":"ok","bgsave_in_progress":false,"changes_since_last_save":5,"last_error":null},` +
		`"aof":{"enabled":true,"fsync":"everysec","last_write_status":"ok","last_fsync_status":"ok","rewrite_in_progress":false,"current_size_bytes":88,` +
		`"last_fsync":{"unix":1700000042,"iso":"2023-11-14T22:14:02Z"}},"errors_total":{"rdb":0,"aof_write":0,"aof_fsync":2,"load":0},"writes_refused":null},` +
		`"shards":[{"id":0,"state":"ok","keys":3,"expires":1,"memory_bytes":100,"ops_per_sec":1.5,"queue_depth":0},` +
		`{"id":1,"state":"late","keys":null,"expires":null,"memory_bytes":null,"ops_per_sec":0,"queue_depth":2}],` +
		`"keyspace":{"complete":false,"late_shards":[1],"databases":[{"db":0,"keys":3,"expires":1}]},` +
		`"commands":{"total":10,"ops_per_sec":2},` +
		`"hot_shards":{"enabled":true,"period_secs":10,"total_ops_per_sec":1.5,"imbalance_ratio":2,"hot_count":0,"warm_count":0,` +
		`"shards":[{"shard_id":0,"ops_per_sec":1.5,"reads_per_sec":0,"writes_per_sec":0,"percentage":100,"status":"HOT"},` +
		`{"shard_id":1,"ops_per_sec":0,"reads_per_sec":0,"writes_per_sec":0,"percentage":0,"status":"OK"}],"recommendations":[]}}`
	if string(got) != want {
		t.Fatalf("Render:\n got %s\nwant %s", got, want)
	}
	// Deterministic, and what encoding/json reads back is what went in.
	for range 20 {
		if again := Render(&d); !bytes.Equal(again, got) {
			t.Fatalf("second rendering differs:\n%s\n%s", got, again)
		}
	}
	var back Document
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if again := Render(&back); !bytes.Equal(again, got) {
		t.Fatalf("round trip differs:\n%s\n%s", got, again)
	}
}

func TestRenderHotShardsDisabled(t *testing.T) {
	d := sample()
	d.HotShards = HotShards{}
	if got := string(Render(&d)); !strings.HasSuffix(got, `"hot_shards":{"enabled":false}}`) {
		t.Fatalf("disabled hot shards render as %s", got)
	}
}

func TestAt(t *testing.T) {
	got := At(time.Date(2023, 11, 14, 23, 13, 20, 999_999_999, time.FixedZone("CET", 3600)))
	if got != (Time{1700000000, "2023-11-14T22:13:20Z"}) {
		t.Fatalf("At = %+v", got)
	}
}

func TestAssess(t *testing.T) {
	base := HealthInput{State: StateReady, MemoryWarningPercent: 80, ConnectionWarningPercent: 80, MaxClients: 100, Deadline: time.Second}
	for _, tc := range []struct {
		name   string
		edit   func(*HealthInput)
		status string
		codes  string
	}{
		{"healthy", func(*HealthInput) {}, Healthy, ""},
		{"starting", func(in *HealthInput) { in.State = StateStarting }, Unhealthy, "not_ready"},
		{"shutting down", func(in *HealthInput) { in.State = StateShuttingDown }, Unhealthy, "not_ready"},
		{"unlimited memory is never pressure", func(in *HealthInput) { in.UsedMemory = 1 << 40 }, Healthy, ""},
		{"memory below", func(in *HealthInput) { in.UsedMemory, in.MaxMemory = 799, 1000 }, Healthy, ""},
		{"memory at threshold", func(in *HealthInput) { in.UsedMemory, in.MaxMemory = 800, 1000 }, Degraded, "memory_pressure"},
		{"memory over max", func(in *HealthInput) { in.UsedMemory, in.MaxMemory = 2000, 1000 }, Degraded, "memory_pressure"},
		{"huge maxmemory", func(in *HealthInput) { in.UsedMemory, in.MaxMemory = 1<<62, 1<<62+1 }, Degraded, "memory_pressure"},
		{"connections below", func(in *HealthInput) { in.Connected = 79 }, Healthy, ""},
		{"connections at threshold", func(in *HealthInput) { in.Connected = 80 }, Degraded, "near_connection_limit"},
		{"late shard", func(in *HealthInput) { in.LateShards = []int{3} }, Degraded, "shard_late"},
		{"persistence errors without refused writes", func(in *HealthInput) {
			in.Persistence = NoPersistence(time.Now(), "everysec")
			in.Persistence.ErrorsTotal.RDB = 3
		}, Healthy, ""},
		{"persistence failing", func(in *HealthInput) { in.Persistence.WritesRefused = ptr("MISCONF x") }, Degraded, "persistence_failing"},
		{"everything", func(in *HealthInput) {
			in.State, in.UsedMemory, in.MaxMemory, in.Connected, in.LateShards = StateStarting, 900, 1000, 100, []int{0, 2}
			in.Persistence.WritesRefused = ptr("MISCONF x")
		}, Unhealthy, "not_ready memory_pressure near_connection_limit shard_late persistence_failing"},
	} {
		in := base
		tc.edit(&in)
		h := Assess(in)
		var codes []string
		for _, is := range h.Issues {
			codes = append(codes, is.Code)
			if is.Message == "" {
				t.Errorf("%s: issue %s without a message", tc.name, is.Code)
			}
		}
		if h.Status != tc.status || strings.Join(codes, " ") != tc.codes || h.Issues == nil {
			t.Errorf("%s: %s %v; want %s [%s]", tc.name, h.Status, codes, tc.status, tc.codes)
		}
	}
	h := Assess(HealthInput{State: StateReady, LateShards: []int{0, 2}, Deadline: 100 * time.Millisecond})
	if msg := h.Issues[0].Message; !strings.HasPrefix(msg, "shards 0, 2 did not answer within 100ms") {
		t.Errorf("late message %q", msg)
	}
}

// TestAssessPersistenceMessage: the persistence_failing message names the
// error behind the refusal, whichever side of persistence fails.
func TestAssessPersistenceMessage(t *testing.T) {
	misconfRDB := "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."
	misconfAOF := "MISCONF Errors writing to the AOF file: No space left on device"
	for _, tc := range []struct {
		name string
		edit func(*Persistence)
		want []string
	}{
		{"rdb", func(p *Persistence) {
			p.RDB.LastBGSaveStatus, p.RDB.LastError, p.WritesRefused = PersistErr, ptr("write error saving DB on disk: no space left on device"), &misconfRDB
		}, []string{"the last RDB snapshot failed (write error saving DB on disk: no space left on device)", "stop-writes-on-bgsave-error", "reads still work"}},
		{"aof write", func(p *Persistence) {
			p.AOF.Enabled, p.AOF.LastWriteStatus, p.WritesRefused = true, PersistErr, &misconfAOF
		}, []string{"append-only file", "No space left on device", "-MISCONF"}},
		{"aof fsync wins over rdb", func(p *Persistence) {
			p.AOF.Enabled, p.AOF.LastFsyncStatus, p.WritesRefused = true, PersistErr, &misconfAOF
			p.RDB.LastBGSaveStatus, p.RDB.LastError = PersistErr, ptr("disk gone")
		}, []string{"append-only file cannot be made durable (" + misconfAOF + ")"}},
		{"cause unknown", func(p *Persistence) { p.WritesRefused = &misconfRDB }, []string{"persistence is failing (" + misconfRDB + ")"}},
	} {
		p := NoPersistence(time.Unix(1700000000, 0), "everysec")
		tc.edit(&p)
		h := Assess(HealthInput{State: StateReady, Persistence: p})
		if h.Status != Degraded || len(h.Issues) != 1 || h.Issues[0].Code != IssuePersistenceFailing || h.Issues[0].Severity != SeverityWarning {
			t.Fatalf("%s: %+v", tc.name, h)
		}
		for _, w := range tc.want {
			if !strings.Contains(h.Issues[0].Message, w) {
				t.Errorf("%s: message %q lacks %q", tc.name, h.Issues[0].Message, w)
			}
		}
	}
}

// TestAssessReplicasLost: a master that had replicas is degraded once it
// has none online, or fewer good ones than min-replicas-to-write; a master
// that never had one, a replica, and a master with enough are not.
func TestAssessReplicasLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *ReplicationHealth
		want string // "" healthy, else a part of the message
	}{
		{"no replication", nil, ""},
		{"never had replicas", &ReplicationHealth{Master: true}, ""},
		{"never had replicas, min-replicas on", &ReplicationHealth{Master: true, MinToWrite: 1}, ""},
		{"a replica", &ReplicationHealth{Master: false, Peak: 0}, ""},
		{"has its replicas", &ReplicationHealth{Master: true, Online: 2, Peak: 2}, ""},
		{"lost one of two", &ReplicationHealth{Master: true, Online: 1, Peak: 2}, ""},
		{"lost all", &ReplicationHealth{Master: true, Online: 0, Peak: 2}, "no replica is online (2 at most"},
		{"below min-replicas-to-write", &ReplicationHealth{Master: true, Online: 1, Peak: 2, MinToWrite: 2, Good: 1}, "1 of min-replicas-to-write 2"},
		{"lagging below min-replicas-to-write", &ReplicationHealth{Master: true, Online: 1, Peak: 1, MinToWrite: 1, Good: 0}, "-NOREPLICAS"},
		{"enough good", &ReplicationHealth{Master: true, Online: 2, Peak: 3, MinToWrite: 2, Good: 2}, ""},
	} {
		h := Assess(HealthInput{State: StateReady, Replication: tc.r})
		if tc.want == "" {
			if h.Status != Healthy || len(h.Issues) != 0 {
				t.Errorf("%s: %+v", tc.name, h)
			}
			continue
		}
		if h.Status != Degraded || len(h.Issues) != 1 || h.Issues[0].Code != IssueReplicasLost || h.Issues[0].Severity != SeverityWarning ||
			!strings.Contains(h.Issues[0].Message, tc.want) {
			t.Errorf("%s: %+v, want a replicas_lost warning with %q", tc.name, h, tc.want)
		}
	}
}

// TestNoPersistence: a server without persistence renders a complete
// section: off, nothing failing, lists not null.
func TestNoPersistence(t *testing.T) {
	d := sample()
	d.Persistence = NoPersistence(time.Unix(1700000000, 0), "always")
	got := string(Render(&d))
	want := `"persistence":{"enabled":false,"loading":false,"rdb":{"enabled":false,"save_rules":[],` +
		`"last_save":{"unix":1700000000,"iso":"2023-11-14T22:13:20Z"},"last_bgsave_status":"ok","bgsave_in_progress":false,"changes_since_last_save":0,"last_error":null},` +
		`"aof":{"enabled":false,"fsync":"always","last_write_status":"ok","last_fsync_status":"ok","rewrite_in_progress":false,"current_size_bytes":null,"last_fsync":null},` +
		`"errors_total":{"rdb":0,"aof_write":0,"aof_fsync":0,"load":0},"writes_refused":null}`
	if !strings.Contains(got, want) {
		t.Fatalf("no-persistence section:\n got %s\nwant %s", got, want)
	}
}
