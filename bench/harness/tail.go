package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/bench/proc"
)

// TailConfig is one tail-latency comparison with a large dataset (issue
// 20, part 4): Keys keys loaded into svcdb and redis-server, then memtier's
// 1:10 SET:GET workload at each pipeline depth, then the same workload
// with a BGSAVE started mid-run. DefaultTailConfig fills everything except
// SvcDB.
type TailConfig struct {
	// SvcDB and Redis are started as for Config, each with a data
	// directory of its own and no save rules (BGSAVE only when asked).
	SvcDB, Redis Server
	// Pin, ServerCPUs and ClientCPUs mean what they mean in Bench.
	Pin                    bool
	ServerCPUs, ClientCPUs string
	// Keys are loaded as "memtier-<n>", n in [0, Keys), values of
	// ValueSize bytes; the workload draws keys uniformly from that range,
	// so every GET hits. Default 10,000,000 keys of 32 bytes.
	Keys, ValueSize int
	// FillConnections and FillPipeline: the loader's connections and SETs
	// in flight on each (as svcbench memory). Defaults 4 and 256.
	FillConnections, FillPipeline int
	// FillTimeout bounds the loading of one server. Default 10 minutes.
	FillTimeout time.Duration
	// Load is the workload: memtier's 1:10 with 50 connections
	// (DefaultLoad); its Pipeline, KeyMin, KeyMax, DataSize and TestTime
	// are set from the fields here.
	Load loadgen.Config
	// Pipelines are the depths of the steady-state runs. Default 1 and 16.
	Pipelines []int
	// RunTime is the length of one steady-state run; Rounds how many runs
	// of each depth on each server, alternating between servers. Defaults
	// 10 s and 2.
	RunTime time.Duration
	Rounds  int
	// SnapshotPipelines are the depths of the snapshot phase (empty: no
	// phase). Default 1 and 16.
	SnapshotPipelines []int
	// GCPipelines are the depths of the forced-collection phase, svcdb
	// only (empty: no phase; see tailForcedGC). Default 1 and 16.
	GCPipelines []int
	// Window is the length of one closed-loop run of the snapshot phase:
	// the phase is a sequence of them, each on freshly dialed connections
	// (dialed before the window starts), classed as baseline (before the
	// BGSAVE) or during (started while it ran). Default 1 s.
	Window time.Duration
	// Baseline is how long the phase runs before BGSAVE. Default 4 s.
	Baseline time.Duration
	// SnapshotTimeout bounds one BGSAVE. Default 5 minutes.
	SnapshotTimeout time.Duration

	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// WorkDir holds the servers' working directories; "" means a temporary
	// directory removed at the end.
	WorkDir string
}

// DefaultTailConfig returns the defaults described on each field.
func DefaultTailConfig() TailConfig {
	return TailConfig{
		Redis:             Server{Path: "/usr/bin/redis-server", Args: slices.Clone(RedisBaselineArgs)},
		Pin:               true,
		ServerCPUs:        "0",
		ClientCPUs:        "1",
		Keys:              10_000_000,
		ValueSize:         32,
		FillConnections:   4,
		FillPipeline:      256,
		FillTimeout:       10 * time.Minute,
		Load:              DefaultLoad(),
		Pipelines:         []int{1, 16},
		RunTime:           10 * time.Second,
		Rounds:            2,
		SnapshotPipelines: []int{1, 16},
		GCPipelines:       []int{1, 16},
		Window:            time.Second,
		Baseline:          4 * time.Second,
		SnapshotTimeout:   5 * time.Minute,
	}
}

// Validate checks c and returns every problem found.
func (c *TailConfig) Validate() error {
	var errs []error
	if c.SvcDB.Path == "" || c.Redis.Path == "" {
		errs = append(errs, errors.New("both servers need a path"))
	}
	if c.Keys < 1 || c.ValueSize < 1 || c.FillConnections < 1 || c.FillPipeline < 1 || c.Rounds < 1 {
		errs = append(errs, fmt.Errorf("keys %d, value size %d, fill connections %d, fill pipeline %d, rounds %d: want >= 1 each",
			c.Keys, c.ValueSize, c.FillConnections, c.FillPipeline, c.Rounds))
	}
	for _, p := range slices.Concat(c.Pipelines, c.SnapshotPipelines, c.GCPipelines) {
		if p < 1 {
			errs = append(errs, fmt.Errorf("pipeline %d: want >= 1", p))
		}
	}
	if len(c.Pipelines) == 0 && len(c.SnapshotPipelines) == 0 && len(c.GCPipelines) == 0 {
		errs = append(errs, errors.New("no pipelines and no snapshot pipelines: nothing to run"))
	}
	if c.RunTime <= 0 || c.Window <= 0 || c.Baseline < c.Window || c.SnapshotTimeout <= 0 || c.FillTimeout <= 0 {
		errs = append(errs, fmt.Errorf("run time %v, window %v, baseline %v, snapshot timeout %v, fill timeout %v: want > 0, baseline >= window",
			c.RunTime, c.Window, c.Baseline, c.SnapshotTimeout, c.FillTimeout))
	}
	return errors.Join(errs...)
}

// GCDelta is what svcdb's collector did over a span, from INFO svc's gc_*
// fields read
// before and after (core/gcstats' figures): redis-server has no section
// and no delta.
type GCDelta struct {
	Cycles int64 `json:"cycles"`
	Pauses int64 `json:"pauses"`
	// PauseMs is the pauses' total (estimated by the server within ~12%).
	PauseMs float64 `json:"pause_ms"`
	// CPUSec and AssistCPUSec are the collector's CPU and its mark-assist
	// part, the Go runtime's estimates.
	CPUSec       float64 `json:"cpu_sec"`
	AssistCPUSec float64 `json:"assist_cpu_sec"`
	// WallSec is the span's length: CPUSec/WallSec is how many CPUs the
	// collector kept busy on average.
	WallSec float64 `json:"wall_sec"`
	// PauseMaxUs is gc_pause_max_usec after the span: the largest pause
	// since the server started (the fill included), not of the span alone.
	PauseMaxUs int64 `json:"pause_max_us_since_start"`
}

// gcInfo is one reading of INFO svc's gc_* fields; ok is false for a
// server without them.
type gcInfo struct {
	cycles, pauses, maxUs    int64
	pauseSec, cpu, assistCPU float64
	ok                       bool
}

func readGC(ctx context.Context, addr string) (gcInfo, error) {
	m, err := info(ctx, addr, "svc")
	if err != nil {
		return gcInfo{}, err
	}
	var g gcInfo
	if g.cycles, g.ok = infoInt(m, "gc_cycles"); !g.ok {
		return g, nil
	}
	g.pauses, _ = infoInt(m, "gc_pauses")
	g.maxUs, _ = infoInt(m, "gc_pause_max_usec")
	f := func(k string) float64 { v, _ := strconv.ParseFloat(m[k], 64); return v }
	g.pauseSec, g.cpu, g.assistCPU = f("gc_pause_total_seconds"), f("gc_cpu_seconds"), f("gc_assist_cpu_seconds")
	return g, nil
}

// delta is what happened between a and b (nil if either has no figures).
func (a gcInfo) delta(b gcInfo, wall time.Duration) *GCDelta {
	if !a.ok || !b.ok {
		return nil
	}
	return &GCDelta{Cycles: b.cycles - a.cycles, Pauses: b.pauses - a.pauses, PauseMs: 1000 * (b.pauseSec - a.pauseSec),
		CPUSec: b.cpu - a.cpu, AssistCPUSec: b.assistCPU - a.assistCPU, WallSec: wall.Seconds(), PauseMaxUs: b.maxUs}
}

// TailRun is one steady-state run of the workload.
type TailRun struct {
	Pipeline  int      `json:"pipeline"`
	Round     int      `json:"round"`
	OpsPerSec float64  `json:"ops_per_sec"`
	P50Ms     float64  `json:"p50_ms"`
	P99Ms     float64  `json:"p99_ms"`
	P999Ms    float64  `json:"p99_9_ms"`
	MaxMs     float64  `json:"max_ms"`
	Errors    uint64   `json:"errors,omitempty"`
	GC        *GCDelta `json:"gc,omitempty"`
}

// PhaseStats are the workload's figures over the windows of one phase.
type PhaseStats struct {
	Windows   int     `json:"windows"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p99_9_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// Events of the phases that run the workload around one.
const (
	EventBGSave = "bgsave"
	EventGC     = "gc"
)

// TailSnapshot is a phase at one depth: windows before an event (a BGSAVE,
// or a forced full collection of svcdb's heap) against windows started
// while it ran.
type TailSnapshot struct {
	Pipeline int    `json:"pipeline"`
	Event    string `json:"event"`
	// DurationSec is the event's: the BGSAVE's (from its reply to INFO
	// persistence showing it done), or MEMORY PURGE's round trip.
	DurationSec float64    `json:"duration_sec"`
	ForkUsec    int64      `json:"fork_usec,omitempty"`
	RDBBytes    int64      `json:"rdb_bytes"`
	Baseline    PhaseStats `json:"baseline"`
	During      PhaseStats `json:"during"`
	GC          *GCDelta   `json:"gc,omitempty"`
	Errors      uint64     `json:"errors,omitempty"`
}

// TailSide is one server's part.
type TailSide struct {
	FillSec float64 `json:"fill_sec"`
	// RSSBytes is VmRSS after the fill.
	RSSBytes  int64          `json:"rss_bytes"`
	FillGC    *GCDelta       `json:"fill_gc,omitempty"`
	Runs      []TailRun      `json:"runs"`
	Snapshots []TailSnapshot `json:"snapshots"`
	// ForcedGCs are svcdb's forced-collection phases (GCPipelines).
	ForcedGCs []TailSnapshot `json:"forced_gcs,omitempty"`
	// Failure says why the side has no (or fewer) figures.
	Failure string `json:"failure,omitempty"`
}

// median returns the per-field median of the side's runs at pipeline p
// (GC figures from the median run by ops/s), and how many runs there were.
func (s *TailSide) median(p int) (TailRun, int) {
	var runs []TailRun
	for _, r := range s.Runs {
		if r.Pipeline == p {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return TailRun{Pipeline: p}, 0
	}
	med := func(get func(*TailRun) float64) float64 {
		v := make([]Sample, len(runs))
		for i := range runs {
			v[i].OpsPerSec = get(&runs[i])
		}
		return Median(v).OpsPerSec
	}
	out := TailRun{Pipeline: p,
		OpsPerSec: med(func(r *TailRun) float64 { return r.OpsPerSec }),
		P50Ms:     med(func(r *TailRun) float64 { return r.P50Ms }),
		P99Ms:     med(func(r *TailRun) float64 { return r.P99Ms }),
		P999Ms:    med(func(r *TailRun) float64 { return r.P999Ms }),
		MaxMs:     med(func(r *TailRun) float64 { return r.MaxMs }),
	}
	var gc GCDelta
	n := 0
	for _, r := range runs {
		out.Errors += r.Errors
		if r.GC != nil {
			n++
			gc.Cycles += r.GC.Cycles
			gc.Pauses += r.GC.Pauses
			gc.PauseMs += r.GC.PauseMs
			gc.CPUSec += r.GC.CPUSec
			gc.AssistCPUSec += r.GC.AssistCPUSec
			gc.WallSec += r.GC.WallSec
			gc.PauseMaxUs = max(gc.PauseMaxUs, r.GC.PauseMaxUs)
		}
	}
	if n > 0 {
		out.GC = &gc // the runs' sum: rates are per second of all of them
	}
	return out, len(runs)
}

// TailReport is the outcome of RunTail.
type TailReport struct {
	Started     time.Time `json:"started"`
	Elapsed     float64   `json:"elapsed_sec"`
	Machine     Machine   `json:"machine"`
	PinNote     string    `json:"pin_note"`
	Command     string    `json:"command,omitempty"`
	SvcDBCmd    string    `json:"svcdb_cmd"`
	RedisCmd    string    `json:"redis_cmd"`
	Keys        int       `json:"keys"`
	ValueSize   int       `json:"value_size"`
	Workload    string    `json:"workload"`
	Connections int       `json:"connections"`
	RunSec      float64   `json:"run_sec"`
	Rounds      int       `json:"rounds"`
	Pipelines   []int     `json:"pipelines"`
	WindowSec   float64   `json:"window_sec"`
	SvcDB       TailSide  `json:"svcdb"`
	Redis       TailSide  `json:"redis"`
}

// Failures lists what failed, one line per server.
func (r *TailReport) Failures() []string {
	var out []string
	for _, s := range []struct {
		name string
		side *TailSide
	}{{SideSvcDB, &r.SvcDB}, {SideRedis, &r.Redis}} {
		if s.side.Failure != "" {
			out = append(out, s.name+": "+s.side.Failure)
		}
	}
	return out
}

// RunTail runs the comparison. Every process it starts is stopped before
// it returns. A server's error replies or a wrong key count fail that
// server's side (TailSide.Failure), not the comparison.
func RunTail(ctx context.Context, cfg TailConfig) (rep *TailReport, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	load := cfg.Load
	load.KeyMin, load.KeyMax = 0, uint64(cfg.Keys-1)
	load.DataSize = cfg.ValueSize
	load.TestTime = cfg.RunTime
	load.SetPattern, load.GetPattern = loadgen.Random, loadgen.Random
	rep = &TailReport{Started: time.Now(), Keys: cfg.Keys, ValueSize: cfg.ValueSize, Workload: fmt.Sprintf("SET:GET %s, random keys over the loaded range", load.Ratio),
		Connections: load.Connections(), RunSec: cfg.RunTime.Seconds(), Rounds: cfg.Rounds,
		Pipelines: cfg.Pipelines, WindowSec: cfg.Window.Seconds()}
	defer func() { rep.Elapsed = time.Since(rep.Started).Seconds() }()
	serverCPUs, clientCPUs, note := pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	rep.PinNote = note
	rep.Machine = describeMachine(ctx, &Config{SvcDB: cfg.SvcDB, Redis: cfg.Redis})

	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "svcbench-tail-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(workDir)
	}
	var group proc.Group
	defer func() {
		if serr := group.StopAll(30 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()
	restore, err := pinSelf(clientCPUs)
	if err != nil {
		return rep, err
	}
	defer restore()

	type server struct {
		name string
		s    *proc.Server
		dir  string
		out  *TailSide
	}
	var servers []*server
	for _, side := range []struct {
		name string
		srv  Server
		args func(dir, fsync string) []string
		out  *TailSide
		cmd  *string
	}{{SideSvcDB, cfg.SvcDB, svcdbPersistArgs, &rep.SvcDB, &rep.SvcDBCmd}, {SideRedis, cfg.Redis, redisPersistArgs, &rep.Redis, &rep.RedisCmd}} {
		sdir := filepath.Join(workDir, side.name)
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return rep, err
		}
		s, err := proc.StartServer(ctx, &group, proc.ServerSpec{
			Name: side.name, Path: side.srv.Path, Args: append(slices.Clone(side.srv.Args), side.args(sdir, "")...),
			CPUs: serverCPUs, Dir: sdir,
		}, 30*time.Second)
		if err != nil {
			return rep, err
		}
		*side.cmd = s.CommandLine()
		servers = append(servers, &server{side.name, s, sdir, side.out})
	}
	check := func(sv *server, what string) error {
		if exited, werr := sv.s.Exited(); exited {
			return fmt.Errorf("%s exited %s: %v; output:\n%s", sv.name, what, werr, sv.s.Output())
		}
		return nil
	}

	for _, sv := range servers {
		if err := tailFill(ctx, &cfg, sv.s, sv.out); err != nil {
			return rep, fmt.Errorf("%s: %w", sv.name, err)
		}
		if err := check(sv, "while loading"); err != nil {
			return rep, err
		}
		if sv.out.Failure != "" {
			fmt.Fprintf(progress, "[tail]  %-5s FAILED: %s\n", sv.name, sv.out.Failure)
			continue
		}
		fmt.Fprintf(progress, "[tail]  %-5s %d keys of %d bytes in %.1f s, RSS %s\n", sv.name, cfg.Keys, cfg.ValueSize, sv.out.FillSec, mib(sv.out.RSSBytes))
	}

	for round := 1; round <= cfg.Rounds; round++ {
		for _, p := range cfg.Pipelines {
			for _, sv := range servers {
				if sv.out.Failure != "" {
					continue
				}
				run, err := tailRun(ctx, load, sv.s.Addr, p, round)
				if cerr := check(sv, fmt.Sprintf("during the pipeline %d run", p)); cerr != nil {
					return rep, cerr
				}
				if err != nil {
					return rep, fmt.Errorf("%s, pipeline %d: %w", sv.name, p, err)
				}
				sv.out.Runs = append(sv.out.Runs, run)
				fmt.Fprintf(progress, "[tail]  %-5s P%-2d round %d/%d: %.0f ops/s, p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms%s\n",
					sv.name, p, round, cfg.Rounds, run.OpsPerSec, run.P50Ms, run.P99Ms, run.P999Ms, run.MaxMs, gcNote(run.GC))
			}
		}
	}

	for _, p := range cfg.SnapshotPipelines {
		for _, sv := range servers {
			if sv.out.Failure != "" {
				continue
			}
			snap, failure, err := tailSnapshot(ctx, &cfg, load, sv.s.Addr, sv.dir, p)
			if cerr := check(sv, fmt.Sprintf("during the pipeline %d BGSAVE", p)); cerr != nil {
				return rep, cerr
			}
			if err != nil {
				return rep, fmt.Errorf("%s, BGSAVE at pipeline %d: %w", sv.name, p, err)
			}
			if failure != "" {
				sv.out.Failure = fmt.Sprintf("BGSAVE at pipeline %d: %s", p, failure)
				fmt.Fprintf(progress, "[tail]  %-5s BGSAVE P%d FAILED: %s\n", sv.name, p, failure)
				continue
			}
			sv.out.Snapshots = append(sv.out.Snapshots, snap)
			fmt.Fprintf(progress, "[tail]  %-5s P%-2d BGSAVE %.1f s (%s): p99 %.3f -> %.3f ms, p99.9 %.3f -> %.3f ms, ops/s %.0f -> %.0f (baseline -> during)%s\n",
				sv.name, p, snap.DurationSec, mib(snap.RDBBytes), snap.Baseline.P99Ms, snap.During.P99Ms,
				snap.Baseline.P999Ms, snap.During.P999Ms, snap.Baseline.OpsPerSec, snap.During.OpsPerSec, gcNote(snap.GC))
		}
	}
	for _, p := range cfg.GCPipelines {
		sv := servers[0] // svcdb: redis-server has no collector
		if sv.out.Failure != "" {
			break
		}
		ev, failure, err := tailForcedGC(ctx, &cfg, load, sv.s.Addr, p)
		if cerr := check(sv, fmt.Sprintf("during the pipeline %d forced collection", p)); cerr != nil {
			return rep, cerr
		}
		if err != nil {
			return rep, fmt.Errorf("%s, forced collection at pipeline %d: %w", sv.name, p, err)
		}
		if failure != "" {
			sv.out.Failure = fmt.Sprintf("forced collection at pipeline %d: %s", p, failure)
			fmt.Fprintf(progress, "[tail]  %-5s GC P%d FAILED: %s\n", sv.name, p, failure)
			break
		}
		sv.out.ForcedGCs = append(sv.out.ForcedGCs, ev)
		fmt.Fprintf(progress, "[tail]  %-5s P%-2d forced GC %.2f s: p99 %.3f -> %.3f ms, p99.9 %.3f -> %.3f ms, ops/s %.0f -> %.0f (baseline -> during)%s\n",
			sv.name, p, ev.DurationSec, ev.Baseline.P99Ms, ev.During.P99Ms,
			ev.Baseline.P999Ms, ev.During.P999Ms, ev.Baseline.OpsPerSec, ev.During.OpsPerSec, gcNote(ev.GC))
	}
	return rep, nil
}

// gcNote is a progress line's GC part.
func gcNote(g *GCDelta) string {
	if g == nil {
		return ""
	}
	return fmt.Sprintf("; GC %d cycles, pauses %.2f ms, CPU %.2f s (assist %.2f s)", g.Cycles, g.PauseMs, g.CPUSec, g.AssistCPUSec)
}

// tailFill loads the keys with the load generator (SETs only, each
// connection its own slice of the range, pipelined), checks DBSIZE and
// reads the RSS.
func tailFill(ctx context.Context, cfg *TailConfig, s *proc.Server, out *TailSide) error {
	fill := loadgen.DefaultConfig()
	fill.Addr = s.Addr
	fill.Ratio = loadgen.Ratio{Set: 1, Get: 0}
	fill.SetPattern, fill.GetPattern = loadgen.Parallel, loadgen.Parallel
	fill.KeyMin, fill.KeyMax = 0, uint64(cfg.Keys-1)
	fill.DataSize = cfg.ValueSize
	fill.Pipeline = cfg.FillPipeline
	fill.Clients, fill.Threads = cfg.FillConnections, 1
	fill.Requests = (cfg.Keys + cfg.FillConnections - 1) / cfg.FillConnections
	gc0, err := readGC(ctx, s.Addr)
	if err != nil {
		return err
	}
	fctx, cancel := context.WithTimeoutCause(ctx, cfg.FillTimeout, fmt.Errorf("loading: timeout %v", cfg.FillTimeout))
	start := time.Now()
	res, err := loadgen.RunOnce(fctx, fill)
	cancel()
	took := time.Since(start)
	out.FillSec = took.Seconds()
	if err != nil {
		return fmt.Errorf("loading: %w", err)
	}
	if out.Failure, err = checkFilled(ctx, s.Addr, res, cfg.Keys, "loading"); err != nil || out.Failure != "" {
		return err
	}
	gc1, err := readGC(ctx, s.Addr)
	if err != nil {
		return err
	}
	out.FillGC = gc0.delta(gc1, took)
	out.RSSBytes, err = proc.ReadRSS(s.Pid())
	return err
}

// tailRun is one steady-state run at pipeline p.
func tailRun(ctx context.Context, load loadgen.Config, addr string, p, round int) (TailRun, error) {
	run := TailRun{Pipeline: p, Round: round}
	load.Addr, load.Pipeline = addr, p
	load.Seed = uint64(round)<<16 | uint64(p)
	l, err := loadgen.Dial(ctx, load)
	if err != nil {
		return run, err
	}
	defer l.Close()
	gc0, err := readGC(ctx, addr)
	if err != nil {
		return run, err
	}
	res, err := l.Run(ctx)
	if err != nil {
		return run, err
	}
	gc1, err := readGC(ctx, addr)
	if err != nil {
		return run, err
	}
	sum := res.Summary()
	t := sum.Totals
	run.OpsPerSec, run.P50Ms, run.P99Ms, run.P999Ms, run.MaxMs, run.Errors = t.OpsPerSec, t.P50Ms, t.P99Ms, t.P999Ms, t.MaxMs, t.Errors
	run.GC = gc0.delta(gc1, res.Duration)
	if t.Errors > 0 || res.Gets.Misses > 0 {
		return run, fmt.Errorf("%d error replies and %d GET misses of loaded keys; first errors: %s", t.Errors, res.Gets.Misses, strings.Join(sum.ErrorSamples, "; "))
	}
	return run, nil
}

// phaseAcc accumulates the windows of one phase.
type phaseAcc struct {
	h       loadgen.Histogram
	ops     uint64
	wall    time.Duration
	windows int
}

func (a *phaseAcc) add(res *loadgen.Result) {
	t := res.Total()
	a.h.Merge(&t.Latency)
	a.ops += t.Ops
	a.wall += res.Duration
	a.windows++
}

func (a *phaseAcc) stats() PhaseStats {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	ps := PhaseStats{Windows: a.windows, P50Ms: ms(a.h.Quantile(0.5)), P99Ms: ms(a.h.Quantile(0.99)),
		P999Ms: ms(a.h.Quantile(0.999)), MaxMs: ms(a.h.Max())}
	if a.wall > 0 {
		ps.OpsPerSec = float64(a.ops) / a.wall.Seconds()
	}
	return ps
}

// windowsAround runs the workload at pipeline p in windows: Baseline's
// worth, then start (which begins the event and must set doneAt, in
// nanoseconds after the time it returns, once the event is over), then
// windows until doneAt is set. A window that starts before the event ends
// counts as during it. errs counts error replies and GET misses.
func windowsAround(ctx context.Context, cfg *TailConfig, load loadgen.Config, addr string, p int, doneAt *atomic.Int64, start func() error) (base, during phaseAcc, errs uint64, err error) {
	load.Addr, load.Pipeline, load.TestTime = addr, p, cfg.Window
	window := func(acc *phaseAcc, seed uint64) error {
		load.Seed = seed
		res, err := loadgen.RunOnce(ctx, load)
		if err != nil {
			return err
		}
		acc.add(res)
		errs += res.Total().Errors + res.Gets.Misses
		return nil
	}
	seed := uint64(p) << 32
	for t0 := time.Now(); time.Since(t0) < cfg.Baseline; {
		seed++
		if err := window(&base, seed); err != nil {
			return base, during, errs, fmt.Errorf("baseline window: %w", err)
		}
	}
	if err := start(); err != nil {
		return base, during, errs, err
	}
	for doneAt.Load() == 0 {
		seed++
		if err := window(&during, seed); err != nil {
			return base, during, errs, fmt.Errorf("window during the event: %w", err)
		}
	}
	return base, during, errs, nil
}

// tailSnapshot runs the workload at pipeline p in windows around a BGSAVE
// (until INFO persistence, polled every bgsavePoll, shows it done).
// failure is the server's doing; err means the measurement broke.
func tailSnapshot(ctx context.Context, cfg *TailConfig, load loadgen.Config, addr, dir string, p int) (snap TailSnapshot, failure string, err error) {
	snap.Pipeline, snap.Event = p, EventBGSave
	ctl, err := dialRESP(ctx, addr)
	if err != nil {
		return snap, "", err
	}
	defer ctl.Close()
	before, err := persistenceInfo(ctl)
	if err != nil {
		return snap, "", err
	}
	savesBefore, ok := infoInt(before, "rdb_saves")
	if !ok {
		return snap, "INFO persistence has no rdb_saves", nil
	}
	gc0, err := readGC(ctx, addr)
	if err != nil {
		return snap, "", err
	}
	phaseStart := time.Now()
	// A poller on its own connection marks the BGSAVE's end.
	var doneAt atomic.Int64
	pollErr := make(chan string, 1)
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	polling := false
	startSave := func() error {
		sent := time.Now()
		rp, err := ctl.do("BGSAVE")
		var er errReply
		if errors.As(err, &er) {
			failure = "BGSAVE: " + string(er)
			return errStopPhase
		}
		if err != nil {
			return fmt.Errorf("BGSAVE: %w", err)
		}
		if !strings.HasPrefix(string(rp.Str), "Background saving started") {
			failure = fmt.Sprintf("BGSAVE answered %q, want \"Background saving started\"", rp.Str)
			return errStopPhase
		}
		polling = true
		go func() {
			pollErr <- pollBGSave(pctx, addr, savesBefore, sent, cfg.SnapshotTimeout, &doneAt)
		}()
		return nil
	}
	base, during, errs, err := windowsAround(ctx, cfg, load, addr, p, &doneAt, startSave)
	if polling {
		if err != nil {
			stopPoll()
		}
		if f := <-pollErr; f != "" && failure == "" && err == nil {
			failure = f
		}
	}
	if errors.Is(err, errStopPhase) || failure != "" {
		return snap, failure, nil
	}
	if err != nil {
		return snap, "", err
	}
	snap.DurationSec = time.Duration(doneAt.Load()).Seconds()
	gc1, err := readGC(ctx, addr)
	if err != nil {
		return snap, "", err
	}
	snap.GC = gc0.delta(gc1, time.Since(phaseStart))
	snap.Baseline, snap.During, snap.Errors = base.stats(), during.stats(), errs
	if errs > 0 {
		return snap, fmt.Sprintf("%d error replies or GET misses of loaded keys", errs), nil
	}
	if fi, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
		snap.RDBBytes = fi.Size()
	} else {
		return snap, "no dump.rdb after the BGSAVE: " + err.Error(), nil
	}
	if st, err := info(ctx, addr, "stats"); err == nil {
		snap.ForkUsec, _ = infoInt(st, "latest_fork_usec")
	}
	return snap, "", nil
}

// tailForcedGC runs the workload at pipeline p in windows around a full
// collection of svcdb's heap: MEMORY PURGE, which svcdb answers after
// runtime.GC and debug.FreeOSMemory (two complete cycles, run off the
// event loops), so the reply marks the end. It shows what one collection
// of the whole loaded heap does to the tail: what the runtime's periodic
// collection (at least one every 2 minutes) and every pacer-started cycle
// cost. redis-server has no collector; its MEMORY PURGE is jemalloc's
// purge, so the phase runs on svcdb only.
func tailForcedGC(ctx context.Context, cfg *TailConfig, load loadgen.Config, addr string, p int) (ev TailSnapshot, failure string, err error) {
	ev.Pipeline, ev.Event = p, EventGC
	ctl, err := dialRESP(ctx, addr)
	if err != nil {
		return ev, "", err
	}
	defer ctl.Close()
	gc0, err := readGC(ctx, addr)
	if err != nil {
		return ev, "", err
	}
	phaseStart := time.Now()
	var doneAt atomic.Int64
	reply := make(chan error, 1)
	started := false
	start := func() error {
		started = true
		sent := time.Now()
		go func() {
			_, err := ctl.do("MEMORY", "PURGE")
			doneAt.Store(max(int64(time.Since(sent)), 1))
			reply <- err
		}()
		return nil
	}
	base, during, errs, err := windowsAround(ctx, cfg, load, addr, p, &doneAt, start)
	if err != nil {
		if started {
			ctl.Close() // unblocks the MEMORY PURGE reader
			if rerr := <-reply; rerr != nil {
				err = errors.Join(err, rerr) // the MEMORY PURGE reader saw the close above
			}
		}
		return ev, "", err
	}
	if rerr := <-reply; rerr != nil {
		var er errReply
		if errors.As(rerr, &er) {
			return ev, "MEMORY PURGE: " + string(er), nil
		}
		return ev, "", fmt.Errorf("MEMORY PURGE: %w", rerr)
	}
	ev.DurationSec = time.Duration(doneAt.Load()).Seconds()
	gc1, err := readGC(ctx, addr)
	if err != nil {
		return ev, "", err
	}
	ev.GC = gc0.delta(gc1, time.Since(phaseStart))
	ev.Baseline, ev.During, ev.Errors = base.stats(), during.stats(), errs
	if errs > 0 {
		return ev, fmt.Sprintf("%d error replies or GET misses of loaded keys", errs), nil
	}
	return ev, "", nil
}

// errStopPhase ends a phase whose event the server refused (the failure
// says why).
var errStopPhase = errors.New("the server refused the event")

// pollBGSave reads INFO persistence every bgsavePoll until the BGSAVE
// sent at sent has finished (rdb_saves above savesBefore, nothing in
// progress), stores its duration in doneAt and returns "", or returns why
// it failed (storing a duration all the same, so the windows stop).
func pollBGSave(ctx context.Context, addr string, savesBefore int64, sent time.Time, timeout time.Duration, doneAt *atomic.Int64) (failure string) {
	defer func() {
		if doneAt.Load() == 0 {
			doneAt.Store(max(int64(time.Since(sent)), 1))
		}
	}()
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return "polling INFO persistence: " + err.Error()
	}
	defer c.Close()
	for {
		select {
		case <-ctx.Done():
			return "cancelled while the BGSAVE ran"
		case <-time.After(bgsavePoll):
		}
		m, err := persistenceInfo(c)
		if err != nil {
			return err.Error()
		}
		inProgress, _ := infoInt(m, "rdb_bgsave_in_progress")
		saves, _ := infoInt(m, "rdb_saves")
		if inProgress == 0 && saves > savesBefore {
			doneAt.Store(max(int64(time.Since(sent)), 1))
			if st := m["rdb_last_bgsave_status"]; st != "ok" {
				return "rdb_last_bgsave_status:" + st + " after the BGSAVE"
			}
			return ""
		}
		if inProgress == 0 && m["rdb_last_bgsave_status"] == "err" {
			return "BGSAVE failed: rdb_last_bgsave_status:err"
		}
		if time.Since(sent) > timeout {
			return fmt.Sprintf("BGSAVE still in progress after %v", timeout)
		}
	}
}
