package harness

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestTailReport(t *testing.T) {
	gc := func(cycles int64, pauseMs, cpu, assist, wall float64) *GCDelta {
		return &GCDelta{Cycles: cycles, PauseMs: pauseMs, CPUSec: cpu, AssistCPUSec: assist, WallSec: wall, PauseMaxUs: 900}
	}
	rep := &TailReport{
		Started: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Keys: 1000, ValueSize: 32, Workload: "SET:GET 1:10",
		Connections: 50, RunSec: 10, Rounds: 3, Pipelines: []int{1, 16}, WindowSec: 1,
		SvcDB: TailSide{FillSec: 2, RSSBytes: 300 << 20, FillGC: gc(5, 1, 2, 1, 2),
			Runs: []TailRun{
				{Pipeline: 1, Round: 1, OpsPerSec: 100, P50Ms: 0.4, P99Ms: 2, P999Ms: 5, GC: gc(1, 0.5, 0.5, 0.1, 10)},
				{Pipeline: 1, Round: 2, OpsPerSec: 120, P50Ms: 0.5, P99Ms: 4, P999Ms: 6, GC: gc(2, 0.5, 0.5, 0.1, 10)},
				{Pipeline: 1, Round: 3, OpsPerSec: 110, P50Ms: 0.6, P99Ms: 3, P999Ms: 7, GC: gc(0, 0, 0, 0, 10)},
				{Pipeline: 16, Round: 1, OpsPerSec: 900, P50Ms: 1, P99Ms: 8, P999Ms: 9},
			},
			Snapshots: []TailSnapshot{{Pipeline: 1, Event: EventBGSave, DurationSec: 4, RDBBytes: 1 << 20,
				Baseline: PhaseStats{Windows: 4, OpsPerSec: 100, P99Ms: 2, P999Ms: 4},
				During:   PhaseStats{Windows: 4, OpsPerSec: 80, P99Ms: 3, P999Ms: 8}, GC: gc(3, 1, 1, 0.5, 8)}},
			ForcedGCs: []TailSnapshot{{Pipeline: 16, Event: EventGC, DurationSec: 1.5,
				Baseline: PhaseStats{Windows: 4, OpsPerSec: 1000, P99Ms: 2, P999Ms: 4},
				During:   PhaseStats{Windows: 2, OpsPerSec: 700, P99Ms: 5, P999Ms: 6}, GC: gc(2, 0.25, 3.5, 1.25, 6)}},
		},
		Redis: TailSide{FillSec: 1, RSSBytes: 200 << 20,
			Runs: []TailRun{
				{Pipeline: 1, Round: 1, OpsPerSec: 100, P50Ms: 0.5, P99Ms: 2, P999Ms: 2.5},
				{Pipeline: 1, Round: 2, OpsPerSec: 100, P50Ms: 0.5, P99Ms: 2, P999Ms: 2.5},
				{Pipeline: 1, Round: 3, OpsPerSec: 100, P50Ms: 0.5, P99Ms: 2, P999Ms: 2.5},
			},
			Snapshots: []TailSnapshot{{Pipeline: 1, Event: EventBGSave, DurationSec: 2, ForkUsec: 45_000,
				Baseline: PhaseStats{Windows: 4, OpsPerSec: 100, P99Ms: 2, P999Ms: 2},
				During:   PhaseStats{Windows: 2, OpsPerSec: 90, P99Ms: 4, P999Ms: 8}}},
		},
	}

	// Medians per field over the rounds; the GC figures are the runs' sum.
	m, n := rep.SvcDB.median(1)
	if n != 3 || m.OpsPerSec != 110 || m.P50Ms != 0.5 || m.P99Ms != 3 || m.P999Ms != 6 {
		t.Errorf("median %+v of %d runs", m, n)
	}
	if m.GC == nil || m.GC.Cycles != 3 || m.GC.PauseMs != 1 || m.GC.WallSec != 30 {
		t.Errorf("summed GC %+v", m.GC)
	}
	rows := rep.tailRows()
	if got := strings.Join(rows[0], " "); got != "1 110 100 1.10 0.500 0.500 3.000 2.000 1.50 6.000 2.500 2.40 3 1.00 3.3 0.7" {
		t.Errorf("pipeline 1 row %q", got)
	}
	// Redis has no run at pipeline 16: no ratio, no figures.
	if got := strings.Join(rows[1], " "); got != "16 900 - - 1.000 - 8.000 - - 9.000 - - - - - -" {
		t.Errorf("pipeline 16 row %q", got)
	}

	snaps := rep.snapRows()
	if len(snaps) != 3 {
		t.Fatalf("snapshot rows %q", snaps)
	}
	if got := strings.Join(snaps[0][:12], " "); got != "1 svcdb 4.0 - 2.000 3.000 1.50x 4.000 8.000 2.00x 100 80" {
		t.Errorf("svcdb snapshot row %q", got)
	}
	if got := strings.Join(snaps[1][:4], " "); got != "1 redis 2.0 45.0" {
		t.Errorf("redis snapshot row %q", got)
	}
	// svcdb's p99 grew 1.5x against Redis' 2x: 0.75; p99.9 2x against 4x.
	if snaps[2][1] != "svcdb/redis" || snaps[2][6] != "0.75" || snaps[2][9] != "0.50" {
		t.Errorf("growth row %q", snaps[2])
	}

	gcRows := rep.gcPhaseRows()
	if len(gcRows) != 1 || strings.Join(gcRows[0], " ") != "16 1.50 2.000 5.000 2.50x 4.000 6.000 1.50x 1000 700 2 0.25 3.50 1.25" {
		t.Errorf("forced GC rows %q", gcRows)
	}

	var tb, md, js bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tail latency with 1000 keys", "svcdb: loaded in 2.0 s (500 keys/s), RSS 300.0 MiB; GC during the load: 5 cycles",
		"BGSAVE during the workload", "svcdb/redis", "p99.9 ratio", "A full collection of svcdb's heap"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table has no %q:\n%s", want, tb.String())
		}
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "## Tail latency with 1000 keys\n") || !strings.Contains(md.String(), "| 1 | 110 | 100 | 1.10 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back TailReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.SvcDB.Snapshots[0].During.P999Ms != 8 {
		t.Errorf("JSON round trip: %v, %+v", err, back.SvcDB.Snapshots)
	}

	rep.Redis.Failure = "DBSIZE 999 after loading 1000 keys"
	if f := rep.Failures(); len(f) != 1 || f[0] != "redis: DBSIZE 999 after loading 1000 keys" {
		t.Errorf("failures %q", f)
	}
}

func TestTailConfigValidate(t *testing.T) {
	c := DefaultTailConfig()
	c.SvcDB.Path = "bin/svcdb"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := c
	bad.Keys, bad.Pipelines, bad.SnapshotPipelines, bad.GCPipelines, bad.Baseline = 0, nil, nil, nil, time.Millisecond
	err := bad.Validate()
	for _, want := range []string{"keys 0", "nothing to run", "baseline >= window"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}

func TestGCDelta(t *testing.T) {
	a := gcInfo{cycles: 10, pauses: 20, pauseSec: 0.001, cpu: 1, assistCPU: 0.25, ok: true}
	b := gcInfo{cycles: 13, pauses: 26, pauseSec: 0.004, cpu: 2.5, assistCPU: 0.5, maxUs: 700, ok: true}
	d := a.delta(b, 2*time.Second)
	if d == nil || d.Cycles != 3 || d.Pauses != 6 || d.CPUSec != 1.5 || d.AssistCPUSec != 0.25 || d.WallSec != 2 || d.PauseMaxUs != 700 {
		t.Errorf("delta %+v", d)
	}
	if d.PauseMs < 2.999 || d.PauseMs > 3.001 {
		t.Errorf("pause %v ms, want 3", d.PauseMs)
	}
	if (gcInfo{}).delta(b, time.Second) != nil {
		t.Error("a server without INFO gc has a GC delta")
	}
}
