package harness

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/internal/benchtest"
	"github.com/svcdb/svcdb/bench/loadgen"
)

// The fixed-rate load sends exactly the requests due, and a server that
// stops answering for 300 ms shows as every request due meanwhile waiting,
// not as one slow request per connection (coordinated omission).
func TestPacedLoadMeasuresStalls(t *testing.T) {
	s := benchtest.StartRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cfg := QuickPersistConfig()
	cfg.Keys, cfg.LatencyConnections, cfg.MaxRateTime = 1000, 8, 200*time.Millisecond
	var side SnapshotSide
	if err := fillAndMeasure(ctx, &cfg, s, &side); err != nil || side.Failure != "" {
		t.Fatalf("fill: %v %s", err, side.Failure)
	}
	if side.FillSec <= 0 || side.MaxOpsPerSec <= 0 {
		t.Fatalf("fill %v s, closed-loop rate %v ops/s", side.FillSec, side.MaxOpsPerSec)
	}
	if got := benchtest.Command(t, s.Addr, "DBSIZE"); got != "1000" {
		t.Fatalf("DBSIZE %s after the fill; want 1000", got)
	}

	const rate, conns = 2000, 8
	load := &pacedLoad{addr: s.Addr, rate: rate, conns: conns, keys: 1000, valueSize: 100, seed: 1}
	if err := load.open(ctx); err != nil {
		t.Fatal(err)
	}
	defer load.close()
	start := time.Now().Add(20 * time.Millisecond)
	var stopAt atomic.Int64
	stopAt.Store(int64(1500 * time.Millisecond))
	go func() {
		time.Sleep(time.Until(start.Add(500 * time.Millisecond)))
		if got := benchtest.Command(t, s.Addr, "CLIENT", "PAUSE", "300", "ALL"); got != "OK" {
			t.Errorf("CLIENT PAUSE: %s", got)
		}
	}()
	res, err := load.run(ctx, start, &stopAt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors > 0 {
		t.Fatalf("%d unexpected replies, first %s", res.Errors, res.FirstError)
	}
	var all loadgen.Histogram
	for _, h := range res.Seconds {
		all.Merge(h)
	}
	// Due before 1.5 s at 2000/s: 3000 requests, all sent.
	if all.Count() != 3000 || len(res.Seconds) != 2 || res.Seconds[0].Count() != 2000 {
		t.Errorf("%d requests in %d seconds (first %d); want 3000 in 2 (2000 in the first)", all.Count(), len(res.Seconds), res.Seconds[0].Count())
	}
	if all.Max() < 250*time.Millisecond {
		t.Errorf("max latency %v; want the 300 ms pause", all.Max())
	}
	// About 600 requests were due during the pause; without the correction
	// only the 8 in flight would have waited.
	if q := all.Quantile(0.94); q < 100*time.Millisecond {
		t.Errorf("94th percentile %v; want >= 100 ms (6%% of the requests were due during the pause)", q)
	}
	base, during, per := phaseStats(res.Seconds, 1)
	if base.Requests != 2000 || during.Requests != 1000 || len(per) != 2 || per[1].Phase != PhaseBGSave {
		t.Errorf("phases %+v / %+v, seconds %+v", base, during, per)
	}
}

func TestPhaseStats(t *testing.T) {
	secs := make([]*loadgen.Histogram, 4)
	for i := range secs {
		secs[i] = &loadgen.Histogram{}
		for range 100 {
			secs[i].Record(time.Duration(i+1) * time.Millisecond)
		}
	}
	base, during, per := phaseStats(secs, 2)
	if base.Requests != 200 || base.MaxMs < 2 || base.MaxMs > 2.05 || base.P50Ms > 1.02 {
		t.Errorf("baseline %+v", base)
	}
	if during.Requests != 200 || during.P50Ms < 3 || during.MaxMs < 4 || during.MaxMs > 4.1 {
		t.Errorf("during %+v", during)
	}
	phases := []string{per[0].Phase, per[1].Phase, per[2].Phase, per[3].Phase}
	if !slices.Equal(phases, []string{PhaseBaseline, PhaseBaseline, PhaseBGSave, PhaseBGSave}) || per[3].Second != 3 {
		t.Errorf("seconds %+v", per)
	}
}

func TestPersistArgs(t *testing.T) {
	if got := strings.Join(svcdbPersistArgs("/d", "always"), " "); got != "--data-dir /d --save  --appendonly yes --appendfsync always" {
		t.Errorf("svcdb AOF args %q", got)
	}
	if got := strings.Join(redisPersistArgs("/d", ""), " "); got != "--dir /d --save  --appendonly no" {
		t.Errorf("redis snapshot args %q", got)
	}
}

func TestPersistValidate(t *testing.T) {
	c := DefaultPersistConfig()
	c.SvcDB.Path = "bin/svcdb"
	if err := c.Validate(); err != nil {
		t.Fatalf("default: %v", err)
	}
	q := QuickPersistConfig()
	q.SvcDB.Path = "bin/svcdb"
	if err := q.Validate(); err != nil {
		t.Fatalf("quick: %v", err)
	}
	c.Fsyncs = []string{"sometimes"}
	c.Baseline = 1500 * time.Millisecond
	c.RateShare = 2
	err := c.Validate()
	for _, want := range []string{`appendfsync "sometimes"`, "baseline 1.5s", "rate share 2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
	c = DefaultPersistConfig()
	c.SvcDB.Path = "x"
	c.Fsyncs, c.Keys = nil, 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "nothing to run") {
		t.Errorf("nothing to run: %v", err)
	}
}

// The report shows each table's rows with their medians, and failures both
// in the text and in Problems.
func TestPersistReportWriters(t *testing.T) {
	run := func(round int, bgsave, p99base, p99during float64) SnapshotRun {
		return SnapshotRun{Round: round, BGSaveSec: bgsave, RDBBytes: 3 << 20, ForkUsec: 1500,
			Baseline: LatencyStats{Requests: 100, P50Ms: 0.1, P99Ms: p99base, P999Ms: 1, MaxMs: 2},
			During:   LatencyStats{Requests: 50, P50Ms: 0.2, P99Ms: p99during, P999Ms: 3, MaxMs: 8},
			Seconds:  []SecondStats{{Second: 0, Phase: PhaseBaseline, LatencyStats: LatencyStats{Requests: 100, P50Ms: 0.1}}}}
	}
	sample := Sample{OpsPerSec: 1000, P50Ms: 0.5, P99Ms: 1, CPUUsPerReq: 10, Requests: 1000, WallSec: 1}
	rep := &PersistReport{
		Rounds: 3,
		Modes:  []*PersistMode{{Fsync: "always", SvcDBCmd: "svcdb --appendfsync always", RedisCmd: "redis-server", SvcDBAOFBytes: 5 << 20, RedisAOFBytes: 0, Failure: "redis wrote no append-only file"}},
		Throughput: &Report{Rounds: 3, Cases: []*Case{
			{Name: "always SET -P 1", Tool: "redis-benchmark", Detail: "redis-benchmark -t set -P 1", SvcDB: []Sample{sample}, Redis: []Sample{sample, sample}},
		}},
		Snapshot: &SnapshotReport{Keys: 1000, ValueSize: 100, Connections: 8, RateShare: 0.5, Rate: 500, BaselineSec: 5,
			SvcDB: SnapshotSide{MaxOpsPerSec: 1000, Runs: []SnapshotRun{run(1, 0.5, 1, 2), run(2, 0.7, 1, 4), run(3, 0.6, 2, 2)}},
			Redis: SnapshotSide{MaxOpsPerSec: 1100, Runs: []SnapshotRun{run(1, 1.2, 1, 1)}, Failure: "round 2: BGSAVE: ERR nope"}},
	}
	var tb, md, js bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"always SET -P 1", "svcdb ops/s", // the throughput row, without compare's bar column
		"svcdb      0.60      3.0            0.100   1.000", // medians of BGSAVE s, MiB, baseline p50, p99
		"2.00                 4.00",                         // median during/baseline ratios: p99 (2, 4, 1), max (4, 4, 4)
		"redis      1.20", "fork (INFO stats latest_fork_usec, median): 1.5 ms",
		"FAILED appendfsync always: redis wrote no append-only file", "FAILED snapshot on redis: round 2: BGSAVE: ERR nope",
	} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	if strings.Contains(tb.String(), " bar ") {
		t.Errorf("table has a bar column:\n%s", tb.String())
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Persistence", "| always SET -P 1 | 1000 | 1000 | 1.00 |", "| svcdb | 0.60 | 3.0 | 0.100 | 1.000 |",
		"| svcdb | 1 | 0 | baseline | 100 |", "SET -P 1: `redis-benchmark -t set -P 1`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"bgsave_sec": 0.7`) {
		t.Errorf("json: %v\n%s", err, js.String())
	}
	if p := rep.Problems(); len(p) != 2 {
		t.Errorf("problems %q; want 2", p)
	}
	if got := strings.Join((&SnapshotSide{}).cells("x"), ""); got != "x"+strings.Repeat("-", len(snapshotHeader)-1) {
		t.Errorf("a side without runs: %q", got)
	}
	if got := rep.Snapshot.SvcDB.median(func(r *SnapshotRun) float64 { return r.BGSaveSec }); math.Abs(got-0.6) > 1e-9 {
		t.Errorf("median BGSAVE %v; want 0.6", got)
	}
}
