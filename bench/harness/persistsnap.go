package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/bench/proc"
)

// LatencyStats are the latencies of the fixed-rate load's requests due in
// a span of time: a second, the baseline window, or the BGSAVE. Every
// request due is sent, late or not, so Requests is the rate × the span.
type LatencyStats struct {
	Requests uint64  `json:"requests"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p99_9_ms"`
	MaxMs    float64 `json:"max_ms"`
}

func latencyStats(h *loadgen.Histogram) LatencyStats {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return LatencyStats{Requests: h.Count(), P50Ms: ms(h.Quantile(0.5)), P99Ms: ms(h.Quantile(0.99)),
		P999Ms: ms(h.Quantile(0.999)), MaxMs: ms(h.Max())}
}

// Phases of a snapshot run's seconds.
const (
	PhaseBaseline = "baseline"
	PhaseBGSave   = "bgsave"
)

// SecondStats is one second of a snapshot run: the requests due in it.
type SecondStats struct {
	Second int    `json:"second"`
	Phase  string `json:"phase"`
	LatencyStats
}

// SnapshotRun is one BGSAVE under the fixed-rate load.
type SnapshotRun struct {
	Round int `json:"round"`
	// BGSaveSec runs from BGSAVE's reply to the first INFO persistence
	// poll (every 20 ms) that shows rdb_bgsave_in_progress:0 with
	// rdb_saves one higher.
	BGSaveSec float64 `json:"bgsave_sec"`
	// RDBBytes is the size of dump.rdb afterwards.
	RDBBytes int64 `json:"rdb_bytes"`
	// ForkUsec is INFO stats latest_fork_usec when the server reports one
	// (redis-server: the fork that starts the BGSAVE stops it that long).
	ForkUsec int64 `json:"fork_usec,omitempty"`
	// Baseline covers the requests due in the Baseline window before the
	// BGSAVE, During those due from the BGSAVE (whole seconds from it) to
	// its end.
	Baseline LatencyStats  `json:"baseline"`
	During   LatencyStats  `json:"during"`
	Seconds  []SecondStats `json:"seconds"`
}

// SnapshotSide is one server in the snapshot part.
type SnapshotSide struct {
	// FillSec is how long loading the keys took (pipelined SETs).
	FillSec float64 `json:"fill_sec"`
	// MaxOpsPerSec is the closed-loop rate of the latency connections
	// (SET:GET 1:1, one request in flight each).
	MaxOpsPerSec float64       `json:"max_ops_per_sec"`
	Runs         []SnapshotRun `json:"runs"`
	// Failure says why the side has no (or fewer) runs.
	Failure string `json:"failure,omitempty"`
}

// median returns the median of f over the side's runs.
func (s *SnapshotSide) median(f func(*SnapshotRun) float64) float64 {
	v := make([]Sample, len(s.Runs))
	for i := range s.Runs {
		v[i].OpsPerSec = f(&s.Runs[i])
	}
	return Median(v).OpsPerSec
}

// SnapshotReport is the snapshot part of a PersistReport.
type SnapshotReport struct {
	Keys        int     `json:"keys"`
	ValueSize   int     `json:"value_size"`
	Connections int     `json:"connections"`
	RateShare   float64 `json:"rate_share"`
	// Rate is the fixed rate of the load, both servers alike.
	Rate        float64      `json:"rate_ops_per_sec"`
	BaselineSec float64      `json:"baseline_sec"`
	SvcDBCmd    string       `json:"svcdb_cmd"`
	RedisCmd    string       `json:"redis_cmd"`
	SvcDB       SnapshotSide `json:"svcdb"`
	Redis       SnapshotSide `json:"redis"`
}

// runSnapshot is the snapshot part: fresh servers in dir, filled, their
// closed-loop rates measured, then Rounds BGSAVEs on each, alternating.
func runSnapshot(ctx context.Context, cfg *PersistConfig, rep *PersistReport, dir string, progress io.Writer) (err error) {
	serverCPUs, clientCPUs, _ := pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	sr := &SnapshotReport{Keys: cfg.Keys, ValueSize: cfg.ValueSize, Connections: cfg.LatencyConnections,
		RateShare: cfg.RateShare, BaselineSec: cfg.Baseline.Seconds()}
	rep.Snapshot = sr

	var group proc.Group
	defer func() {
		if serr := group.StopAll(10 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()
	type server struct {
		name string
		s    *proc.Server
		dir  string
		out  *SnapshotSide
	}
	var servers []server
	for _, side := range []struct {
		name string
		srv  Server
		args func(dir, fsync string) []string
		out  *SnapshotSide
		cmd  *string
	}{{SideSvcDB, cfg.SvcDB, svcdbPersistArgs, &sr.SvcDB, &sr.SvcDBCmd}, {SideRedis, cfg.Redis, redisPersistArgs, &sr.Redis, &sr.RedisCmd}} {
		sdir := filepath.Join(dir, side.name)
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return err
		}
		s, err := proc.StartServer(ctx, &group, proc.ServerSpec{
			Name: side.name, Path: side.srv.Path, Args: append(slices.Clone(side.srv.Args), side.args(sdir, "")...),
			CPUs: serverCPUs, Dir: sdir,
		}, 30*time.Second)
		if err != nil {
			return err
		}
		*side.cmd = s.CommandLine()
		fmt.Fprintf(progress, "started %s (pid %d) on %s: %s\n", side.name, s.Pid(), s.Addr, s.CommandLine())
		servers = append(servers, server{side.name, s, sdir, side.out})
	}

	restore, err := pinSelf(clientCPUs)
	if err != nil {
		return err
	}
	defer restore()
	benchCPUs, err := benchCPUs(serverCPUs, clientCPUs)
	if err != nil {
		return err
	}
	quiet := &runner{progress: progress, benchCPUs: benchCPUs, quietLeft: cfg.QuietBudget}

	for _, sv := range servers {
		if err := fillAndMeasure(ctx, cfg, sv.s, sv.out); err != nil {
			return fmt.Errorf("%s: %w", sv.name, err)
		}
		if sv.out.Failure != "" {
			fmt.Fprintf(progress, "[snap]  %-5s FAILED: %s\n", sv.name, sv.out.Failure)
			continue
		}
		fmt.Fprintf(progress, "[snap]  %-5s %d keys of %d bytes in %.2f s; closed-loop SET:GET 1:1 on %d connections: %.0f ops/s\n",
			sv.name, cfg.Keys, cfg.ValueSize, sv.out.FillSec, cfg.LatencyConnections, sv.out.MaxOpsPerSec)
	}
	var rates []float64
	for _, sv := range servers {
		if sv.out.Failure == "" {
			rates = append(rates, sv.out.MaxOpsPerSec)
		}
	}
	if len(rates) == 0 {
		return nil
	}
	sr.Rate = float64(twoDigits(cfg.RateShare * slices.Min(rates)))
	fmt.Fprintf(progress, "[snap]  fixed rate %.0f ops/s (%.0f%% of the lower closed-loop rate) on %d connections\n",
		sr.Rate, 100*cfg.RateShare, cfg.LatencyConnections)

	for round := 1; round <= cfg.Rounds; round++ {
		for _, sv := range servers {
			if sv.out.Failure != "" {
				continue
			}
			if cfg.MaxOthers > 0 {
				if err := quiet.waitQuiet(ctx, cfg.MaxOthers); err != nil {
					return err
				}
			}
			run, failure, err := snapshotRun(ctx, cfg, sv.s, sv.dir, sr.Rate, round)
			if exited, werr := sv.s.Exited(); exited {
				return fmt.Errorf("%s exited during BGSAVE round %d: %v; output:\n%s", sv.name, round, werr, sv.s.Output())
			}
			if err != nil {
				return fmt.Errorf("%s, BGSAVE round %d: %w", sv.name, round, err)
			}
			if failure != "" {
				sv.out.Failure = fmt.Sprintf("round %d: %s", round, failure)
				fmt.Fprintf(progress, "[snap]  %-5s round %d/%d FAILED: %s\n", sv.name, round, cfg.Rounds, failure)
				continue
			}
			sv.out.Runs = append(sv.out.Runs, run)
			fmt.Fprintf(progress, "[snap]  %-5s round %d/%d: BGSAVE %.2f s (%s); p50 %.3f -> %.3f ms, p99 %.3f -> %.3f ms, max %.3f -> %.3f ms (baseline -> during)\n",
				sv.name, round, cfg.Rounds, run.BGSaveSec, mib(run.RDBBytes), run.Baseline.P50Ms, run.During.P50Ms,
				run.Baseline.P99Ms, run.During.P99Ms, run.Baseline.MaxMs, run.During.MaxMs)
		}
	}
	return nil
}

// fillAndMeasure loads the keys into s with the load generator (SETs only,
// each connection its own slice of the key range, pipelined), checks
// DBSIZE, and measures the closed-loop rate of the latency connections.
// A server's error replies or a wrong key count go to out.Failure.
func fillAndMeasure(ctx context.Context, cfg *PersistConfig, s *proc.Server, out *SnapshotSide) error {
	fill := loadgen.DefaultConfig()
	fill.Addr = s.Addr
	fill.Ratio = loadgen.Ratio{Set: 1, Get: 0}
	fill.SetPattern, fill.GetPattern = loadgen.Parallel, loadgen.Parallel
	fill.KeyMin, fill.KeyMax = 0, uint64(cfg.Keys-1)
	fill.DataSize = cfg.ValueSize
	fill.Pipeline = cfg.FillPipeline
	fill.Clients, fill.Threads = cfg.FillConnections, 1
	fill.Requests = (cfg.Keys + cfg.FillConnections - 1) / cfg.FillConnections
	start := time.Now()
	res, err := loadgen.RunOnce(ctx, fill)
	out.FillSec = time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("filling: %w", err)
	}
	if out.Failure, err = checkFilled(ctx, s.Addr, res, cfg.Keys, "filling"); err != nil || out.Failure != "" {
		return err
	}

	probe := fill
	probe.Ratio = loadgen.Ratio{Set: 1, Get: 1}
	probe.SetPattern, probe.GetPattern = loadgen.Random, loadgen.Random
	probe.Pipeline = 1
	probe.Clients = cfg.LatencyConnections
	probe.TestTime = cfg.MaxRateTime
	res, err = loadgen.RunOnce(ctx, probe)
	if err != nil {
		return fmt.Errorf("closed-loop rate: %w", err)
	}
	sum := res.Summary()
	if sum.Totals.Errors > 0 || sum.Gets.MissesPerSec > 0 {
		out.Failure = fmt.Sprintf("closed-loop rate: %d error replies, %d GET misses of filled keys; first errors: %s",
			sum.Totals.Errors, res.Gets.Misses, strings.Join(sum.ErrorSamples, "; "))
		return nil
	}
	out.MaxOpsPerSec = sum.Totals.OpsPerSec
	return nil
}

// bgsavePoll is how often INFO persistence is read during a BGSAVE.
const bgsavePoll = 20 * time.Millisecond

// snapshotRun runs the fixed-rate load against s for the Baseline window,
// sends BGSAVE, and keeps the load on until INFO persistence shows it done.
// failure is the server's doing (an error reply, a BGSAVE that fails or
// does not end); err means the measurement broke.
func snapshotRun(ctx context.Context, cfg *PersistConfig, s *proc.Server, dir string, rate float64, round int) (run SnapshotRun, failure string, err error) {
	run.Round = round
	ctl, err := dialRESP(ctx, s.Addr)
	if err != nil {
		return run, "", err
	}
	defer ctl.Close()
	before, err := persistenceInfo(ctl)
	if err != nil {
		return run, "", err
	}
	savesBefore, ok := infoInt(before, "rdb_saves")
	if !ok {
		return run, "INFO persistence has no rdb_saves", nil
	}

	load := &pacedLoad{addr: s.Addr, rate: rate, conns: cfg.LatencyConnections, keys: uint64(cfg.Keys),
		valueSize: cfg.ValueSize, seed: uint64(round) << 32}
	if err := load.open(ctx); err != nil {
		return run, "", err
	}
	defer load.close()
	start := time.Now().Add(50 * time.Millisecond) // every connection's goroutine is up by then
	var stopAt atomic.Int64
	stopAt.Store(math.MaxInt64)
	type outcome struct {
		res *pacedResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := load.run(ctx, start, &stopAt)
		done <- outcome{res, err}
	}()
	// stopLoad ends the load at end (after start): requests due before it
	// are still sent and answered.
	stopped := false
	stopLoad := func(end time.Duration) outcome {
		stopped = true
		stopAt.Store(int64(end))
		return <-done
	}
	defer func() {
		if !stopped {
			stopLoad(0)
		}
	}()

	select {
	case <-ctx.Done():
		return run, "", context.Cause(ctx)
	case <-time.After(time.Until(start.Add(cfg.Baseline))):
	}
	sent := time.Now()
	rp, err := ctl.do("BGSAVE")
	var er errReply
	if errors.As(err, &er) {
		return run, "BGSAVE: " + string(er), nil
	}
	if err != nil {
		return run, "", fmt.Errorf("BGSAVE: %w", err)
	}
	if !strings.HasPrefix(string(rp.Str), "Background saving started") {
		return run, fmt.Sprintf("BGSAVE answered %q, want \"Background saving started\"", rp.Str), nil
	}
	deadline := sent.Add(cfg.SnapshotTimeout)
	var after map[string]string
	for {
		select {
		case <-ctx.Done():
			return run, "", context.Cause(ctx)
		case <-time.After(bgsavePoll):
		}
		if after, err = persistenceInfo(ctl); err != nil {
			return run, "", err
		}
		inProgress, _ := infoInt(after, "rdb_bgsave_in_progress")
		saves, _ := infoInt(after, "rdb_saves")
		if inProgress == 0 && saves > savesBefore {
			break
		}
		if inProgress == 0 && after["rdb_last_bgsave_status"] == "err" {
			return run, "BGSAVE failed: rdb_last_bgsave_status:err", nil
		}
		if time.Now().After(deadline) {
			return run, fmt.Sprintf("BGSAVE still in progress after %v", cfg.SnapshotTimeout), nil
		}
	}
	run.BGSaveSec = time.Since(sent).Seconds()
	end := time.Since(start)
	o := stopLoad(end)
	if o.err != nil {
		return run, "", o.err
	}
	if o.res.Errors > 0 {
		return run, fmt.Sprintf("%d unexpected replies to the fixed-rate load, first %s", o.res.Errors, o.res.FirstError), nil
	}
	if st := after["rdb_last_bgsave_status"]; st != "ok" {
		return run, fmt.Sprintf("rdb_last_bgsave_status:%s after the BGSAVE", st), nil
	}
	if fi, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
		run.RDBBytes = fi.Size()
	} else {
		return run, "no dump.rdb after the BGSAVE: " + err.Error(), nil
	}
	if st, err := info(ctx, s.Addr, "stats"); err == nil {
		run.ForkUsec, _ = infoInt(st, "latest_fork_usec")
	}
	run.Baseline, run.During, run.Seconds = phaseStats(o.res.Seconds, int(cfg.Baseline/time.Second))
	if run.Baseline.Requests == 0 || run.During.Requests == 0 {
		return run, "", fmt.Errorf("no requests measured (baseline %d, during BGSAVE %d)", run.Baseline.Requests, run.During.Requests)
	}
	return run, "", nil
}

// phaseStats splits per-second histograms at second baseline: the seconds
// before are the baseline, the rest the BGSAVE (the last one partial).
func phaseStats(secs []*loadgen.Histogram, baseline int) (base, during LatencyStats, per []SecondStats) {
	var hb, hd loadgen.Histogram
	for i, h := range secs {
		phase := PhaseBaseline
		if i >= baseline {
			phase = PhaseBGSave
			hd.Merge(h)
		} else {
			hb.Merge(h)
		}
		per = append(per, SecondStats{Second: i, Phase: phase, LatencyStats: latencyStats(h)})
	}
	return latencyStats(&hb), latencyStats(&hd), per
}

// persistenceInfo reads INFO persistence over c.
func persistenceInfo(c *respConn) (map[string]string, error) {
	rp, err := c.do("INFO", "persistence")
	if err != nil {
		return nil, fmt.Errorf("INFO persistence: %w", err)
	}
	if rp.Type != '$' {
		return nil, fmt.Errorf("INFO persistence: reply of type %q, want a bulk string", rp.Type)
	}
	return parseInfo(string(rp.Str)), nil
}

// mib formats a byte count in MiB ("21.9 MiB"), or as size does below one.
func mib(b int64) string {
	if b < 1<<20 {
		return size(float64(b))
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
