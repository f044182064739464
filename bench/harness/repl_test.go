package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/internal/benchtest"
)

func TestParseSyncPair(t *testing.T) {
	for in, want := range map[string]harness.SyncPair{
		"svcdb>redis":     {Master: "svcdb", Replica: "redis"},
		" redis > svcdb ": {Master: "redis", Replica: "svcdb"},
	} {
		if got, err := harness.ParseSyncPair(in); err != nil || got != want {
			t.Errorf("ParseSyncPair(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "svcdb", "svcdb>", ">redis", "svcdb>mysql", "svcdb-redis"} {
		if _, err := harness.ParseSyncPair(bad); err == nil {
			t.Errorf("ParseSyncPair(%q): want an error", bad)
		}
	}
}

func TestReplConfigValidate(t *testing.T) {
	c := harness.DefaultReplConfig()
	c.SvcDB.Path = "/bin/true"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := c
	bad.Replicas, bad.SyncKeys = nil, 0
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "nothing to run") {
		t.Errorf("nothing to run: %v", err)
	}
	bad = c
	bad.Replicas = []int{-1}
	bad.SyncPairs = []harness.SyncPair{{Master: "svcdb", Replica: "mysql"}}
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "replicas -1") || !strings.Contains(err.Error(), "mysql") {
		t.Errorf("bad counts and pairs: %v", err)
	}
}

// RunRepl with a second redis-server playing svcdb: every replica count
// has its rows with numbers, every replica caught up, every pair synced
// and the replica's DBSIZE matched, the tables print, and no process is
// left behind.
func TestRunReplTwoRedisServers(t *testing.T) {
	redis := benchtest.NeedTool(t, "redis-server")
	benchtest.NeedTool(t, "taskset")
	cfg := harness.QuickReplConfig()
	cfg.SvcDB = harness.Server{Path: redis, Args: append(append([]string{}, harness.RedisBaselineArgs...), "--repl-diskless-sync-delay", "0")}
	cfg.Redis.Path = redis
	cfg.Replicas = []int{0, 2}
	cfg.Loads = cfg.Loads[:1]
	cfg.Loads[0].TestTime = 300 * time.Millisecond
	cfg.MaxOthers = 0
	cfg.SyncKeys = 5000
	cfg.WorkDir = t.TempDir()
	var progress bytes.Buffer
	cfg.Progress = &progress
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := harness.RunRepl(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkGone(t, progress.String())
	if p := rep.Problems(); len(p) > 0 {
		t.Fatalf("problems: %q", p)
	}
	if len(rep.Setups) != 2 || rep.Setups[1].Replicas != 2 {
		t.Fatalf("setups %+v", rep.Setups)
	}
	rows := rep.Throughput.Rows()
	want := []string{"0 replicas loadgen 1:1 R:R -P 1", "2 replicas loadgen 1:1 R:R -P 1"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows; want %q", len(rows), want)
	}
	for i, r := range rows {
		if r.Case.Name != want[i] || r.Case.Failure != "" {
			t.Errorf("row %d: %q, failure %q; want %q", i, r.Case.Name, r.Case.Failure, want[i])
		}
		for _, s := range []harness.Sample{r.SvcDB, r.Redis} {
			if s.OpsPerSec <= 0 || s.P99Ms <= 0 || s.Requests == 0 {
				t.Errorf("%s: a number is not > 0: %+v", r.Case.Name, s)
			}
		}
	}
	// Only the count with replicas has their CPU, and it is > 0: they
	// applied the master's writes.
	if len(rep.ReplicaCPU) != 1 || rep.ReplicaCPU[0].Case != want[1] ||
		len(rep.ReplicaCPU[0].SvcDB) != 1 || rep.ReplicaCPU[0].SvcDB[0] <= 0 || len(rep.ReplicaCPU[0].Redis) != 1 || rep.ReplicaCPU[0].Redis[0] <= 0 {
		t.Errorf("replica CPU %+v", rep.ReplicaCPU)
	}
	if rep.Sync == nil || len(rep.Sync.Results) != len(harness.DefaultSyncPairs) {
		t.Fatalf("sync part %+v", rep.Sync)
	}
	for _, res := range rep.Sync.Results {
		if len(res.Runs) != 1 || res.Runs[0].Sec <= 0 || res.ReplicaCmd == "" {
			t.Errorf("%s: %+v", res.SyncPair, res)
		}
	}

	var table, md, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2 replicas loadgen 1:1 R:R -P 1", "replicas cpu us/req", "svcdb -> redis", "redis -> redis", "vs redis -> redis"} {
		if !strings.Contains(table.String(), s) || !strings.Contains(md.String(), s) {
			t.Errorf("%q missing from the table or the Markdown:\n%s\n%s", s, table.String(), md.String())
		}
	}
	if strings.Contains(table.String(), "FAILED") {
		t.Errorf("table reports a failure:\n%s", table.String())
	}
	var back harness.ReplReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Sync.Results) != 4 {
		t.Errorf("JSON round trip: %v, %+v", err, back.Sync)
	}
	// Every replica's directory is gone with its process.
	ents, _ := filepath.Glob(filepath.Join(cfg.WorkDir, "sync", "r[0-9]*"))
	if len(ents) > 0 {
		t.Errorf("replica directories left: %q", ents)
	}
}

// svcbench repl --quick against the real svcdb (built here) and the real
// redis-server: it exits 0, svcdb's replicas came online and caught up,
// and every full sync (svcdb -> svcdb, redis -> redis, both crossings)
// loaded every key.
func TestReplQuickAgainstSvcDB(t *testing.T) {
	redis := benchtest.NeedTool(t, "redis-server")
	benchtest.NeedTool(t, "taskset")
	dir := t.TempDir()
	svcdb := goBuild(t, "./cmd/svcdb", dir)
	bin := goBuild(t, "./cmd/svcbench", dir)
	jsonFile := filepath.Join(dir, "repl.json")

	code, stdout, stderr := svcbench(t, bin, 5*time.Minute, "repl", "--quick", "--svcdb", svcdb, "--redis", redis,
		"--max-others", "0", "--replicas", "1,2", "--json", jsonFile)
	if code != 0 {
		t.Fatalf("exit status %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkGone(t, stderr)
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var rep harness.ReplReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Setups) != 2 || len(rep.Throughput.Cases) != 4 {
		t.Fatalf("setups %+v, %d cases; want 2 counts of 2 workloads", rep.Setups, len(rep.Throughput.Cases))
	}
	for _, s := range rep.Setups {
		if s.Failure != "" || !strings.Contains(s.SvcDBCmd, svcdb) {
			t.Errorf("setup %+v", s)
		}
	}
	for _, r := range rep.Throughput.Rows() {
		if r.SvcDB.OpsPerSec <= 0 || r.Redis.OpsPerSec <= 0 || r.SvcDB.P99Ms <= 0 {
			t.Errorf("%s: %+v / %+v", r.Case.Name, r.SvcDB, r.Redis)
		}
	}
	if rep.Sync == nil || rep.Sync.Keys != 20000 || len(rep.Sync.Results) != 4 {
		t.Fatalf("sync part %+v", rep.Sync)
	}
	for _, res := range rep.Sync.Results {
		if res.Failure != "" || len(res.Runs) != 1 {
			t.Errorf("%s: %+v", res.SyncPair, res)
		}
	}
	if !strings.Contains(stdout, "svcdb -> svcdb") {
		t.Errorf("no sync table in stdout:\n%s", stdout)
	}
}
