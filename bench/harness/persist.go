package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
)

// PersistConfig is one persistence comparison (svcbench persist): svcdb and
// redis-server with the same persistence settings, each in its own data
// directory, in two parts.
//
// The throughput part runs, for each appendfsync policy in Fsyncs, a
// comparison as Run does (redis-benchmark Tests at Pipelines, and Loads)
// on fresh servers with the append-only file on. No bar: it is a
// measurement, and only a failed case fails it.
//
// The snapshot part fills fresh servers (append-only file off) with Keys
// keys of ValueSize bytes, measures the closed-loop rate each sustains,
// then, Rounds times on each server, runs a fixed-rate load at RateShare of
// the lower of the two rates (the same rate for both): a Baseline window,
// then BGSAVE, measured until INFO persistence rdb_bgsave_in_progress is 0
// again.
//
// DefaultPersistConfig fills everything except SvcDB.Path.
type PersistConfig struct {
	// SvcDB and Redis are the servers. Args are extra arguments; the
	// harness puts the persistence arguments after them, so those win.
	SvcDB, Redis Server
	// Bench is the redis-benchmark side of the throughput part (Tests at
	// Pipelines, sized by TargetTime), the pinning of both parts, and
	// Rounds: runs per case and server, and BGSAVEs per server.
	Bench

	// Fsyncs are the appendfsync policies of the throughput part, each
	// measured on fresh servers. Default everysec, always. Empty: no
	// throughput part.
	Fsyncs []string
	// Loads are the load generator workloads of the throughput part.
	// Default SET:GET 1:1 (memtier's other defaults, one client CPU's 50
	// connections) at pipeline 1 and 16, 2 s each.
	Loads []loadgen.Config
	// MaxOthers and QuietBudget are Config's: runs disturbed by other
	// processes are left out of medians, and each part (each policy, and
	// the snapshot part) waits at most QuietBudget for quiet CPUs. Defaults
	// 0.1 and 20 s.
	MaxOthers   float64
	QuietBudget time.Duration

	// Keys is how many keys the snapshot part loads ("memtier-0" ...),
	// ValueSize their size in bytes. Defaults 1,000,000 and 100. Keys 0:
	// no snapshot part.
	Keys, ValueSize int
	// FillConnections and FillPipeline: the load generator's connections
	// and requests in flight each while filling. Defaults 4 and 64.
	FillConnections, FillPipeline int
	// LatencyConnections carry the fixed-rate load, one request in flight
	// each; they also measure the closed-loop rate, for MaxRateTime.
	// Defaults 32 and 2 s.
	LatencyConnections int
	MaxRateTime        time.Duration
	// RateShare is the fixed rate as a share of the lower closed-loop
	// rate. Default 0.5.
	RateShare float64
	// Baseline is the window before BGSAVE, in whole seconds. Default 5 s.
	Baseline time.Duration
	// SnapshotTimeout bounds one BGSAVE. Default 2 minutes.
	SnapshotTimeout time.Duration

	// Progress receives one line per run; nil discards them.
	Progress io.Writer
	// WorkDir holds the servers' data directories; "" means a temporary
	// directory removed at the end.
	WorkDir string
}

// Fsyncs are the appendfsync policies both servers take.
var Fsyncs = []string{"everysec", "always", "no"}

// DefaultPersistLoads are PersistConfig's default Loads.
func DefaultPersistLoads() []loadgen.Config {
	var out []loadgen.Config
	for _, p := range []int{1, 16} {
		c := DefaultLoad()
		c.Ratio = loadgen.Ratio{Set: 1, Get: 1}
		c.Pipeline = p
		c.TestTime = 2 * time.Second
		out = append(out, c)
	}
	return out
}

// DefaultPersistConfig returns the defaults described on each field: about
// 4 to 5 minutes on a 2-CPU machine.
func DefaultPersistConfig() PersistConfig {
	b := defaultBench()
	b.Tests = []string{"set"}
	b.TargetTime = 2 * time.Second
	return PersistConfig{
		Redis:              Server{Path: "/usr/bin/redis-server", Args: []string{"--daemonize", "no"}},
		Bench:              b,
		Fsyncs:             []string{"everysec", "always"},
		Loads:              DefaultPersistLoads(),
		MaxOthers:          0.1,
		QuietBudget:        20 * time.Second,
		Keys:               1_000_000,
		ValueSize:          100,
		FillConnections:    4,
		FillPipeline:       64,
		LatencyConnections: 32,
		MaxRateTime:        2 * time.Second,
		RateShare:          0.5,
		Baseline:           5 * time.Second,
		SnapshotTimeout:    2 * time.Minute,
	}
}

// QuickPersistConfig is DefaultPersistConfig shrunk to a smoke run of
// 20 to 30 seconds (svcbench persist --quick, and the tests): one round,
// short runs, 20,000 keys.
func QuickPersistConfig() PersistConfig {
	c := DefaultPersistConfig()
	c.Rounds = 1
	c.Requests = 5000
	c.TargetTime = 300 * time.Millisecond
	c.Clients = 20
	for i := range c.Loads {
		c.Loads[i].TestTime = 500 * time.Millisecond
		c.Loads[i].Clients = 10
	}
	c.QuietBudget = 2 * time.Second
	c.Keys = 20_000
	c.MaxRateTime = 500 * time.Millisecond
	c.Baseline = 2 * time.Second
	c.SnapshotTimeout = 30 * time.Second
	return c
}

// Validate checks c and returns every problem found.
func (c *PersistConfig) Validate() error {
	var errs []error
	if c.SvcDB.Path == "" || c.Redis.Path == "" {
		errs = append(errs, errors.New("both servers need a path"))
	}
	errs = c.Bench.validate(errs, c.hasRuns() && len(c.Fsyncs) > 0)
	for _, f := range c.Fsyncs {
		if !slices.Contains(Fsyncs, f) {
			errs = append(errs, fmt.Errorf("appendfsync %q: want one of %s", f, strings.Join(Fsyncs, ", ")))
		}
	}
	if len(c.Fsyncs) > 0 && !c.hasRuns() && len(c.Loads) == 0 {
		errs = append(errs, errors.New("appendfsync policies but no redis-benchmark tests and no load workloads"))
	}
	for i := range c.Loads {
		l := c.Loads[i]
		l.Addr = "127.0.0.1:1" // filled in per server
		if err := l.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("load workload %d: %w", i+1, err))
		}
	}
	if c.MaxOthers < 0 || c.QuietBudget < 0 {
		errs = append(errs, fmt.Errorf("max others %v, quiet budget %v: want >= 0", c.MaxOthers, c.QuietBudget))
	}
	if c.Keys < 0 {
		errs = append(errs, fmt.Errorf("keys %d: want >= 0", c.Keys))
	}
	if c.Keys > 0 {
		if c.ValueSize < 1 || c.FillConnections < 1 || c.FillPipeline < 1 || c.LatencyConnections < 1 {
			errs = append(errs, fmt.Errorf("value size %d, fill connections %d, fill pipeline %d, latency connections %d: want >= 1 each",
				c.ValueSize, c.FillConnections, c.FillPipeline, c.LatencyConnections))
		}
		if c.RateShare <= 0 || c.RateShare > 1 {
			errs = append(errs, fmt.Errorf("rate share %v: want more than 0, at most 1", c.RateShare))
		}
		if c.Baseline < time.Second || c.Baseline%time.Second != 0 {
			errs = append(errs, fmt.Errorf("baseline %v: want whole seconds, at least 1", c.Baseline))
		}
		if c.MaxRateTime <= 0 || c.SnapshotTimeout <= 0 {
			errs = append(errs, fmt.Errorf("max rate time %v, snapshot timeout %v: want > 0", c.MaxRateTime, c.SnapshotTimeout))
		}
	}
	if len(c.Fsyncs) == 0 && c.Keys == 0 {
		errs = append(errs, errors.New("nothing to run: no appendfsync policies and no keys for the snapshot part"))
	}
	return errors.Join(errs...)
}

// svcdbPersistArgs are svcdb's persistence arguments: data in dir, no save
// rules, the append-only file on with fsync, or off when fsync is "".
func svcdbPersistArgs(dir, fsync string) []string {
	args := []string{"--data-dir", dir, "--save", ""}
	if fsync == "" {
		return append(args, "--appendonly", "no")
	}
	return append(args, "--appendonly", "yes", "--appendfsync", fsync)
}

// redisPersistArgs are the same settings under redis-server's names.
func redisPersistArgs(dir, fsync string) []string {
	args := []string{"--dir", dir, "--save", ""}
	if fsync == "" {
		return append(args, "--appendonly", "no")
	}
	return append(args, "--appendonly", "yes", "--appendfsync", fsync)
}

// PersistMode is one appendfsync policy of the throughput part: how both
// servers were started and the append-only files they left.
type PersistMode struct {
	Fsync    string `json:"appendfsync"`
	SvcDBCmd string `json:"svcdb_cmd"`
	RedisCmd string `json:"redis_cmd"`
	// SvcDBAOFBytes and RedisAOFBytes are the sizes of the files in each
	// server's appendonlydir at the end (after any automatic rewrite).
	SvcDBAOFBytes int64 `json:"svcdb_aof_bytes"`
	RedisAOFBytes int64 `json:"redis_aof_bytes"`
	// Failure says why the policy's results cannot be trusted (a server
	// wrote no append-only file).
	Failure string `json:"failure,omitempty"`
}

// PersistReport is the outcome of RunPersist.
type PersistReport struct {
	Started time.Time      `json:"started"`
	Elapsed float64        `json:"elapsed_sec"`
	Machine Machine        `json:"machine"`
	Rounds  int            `json:"rounds"`
	PinNote string         `json:"pin_note"`
	Modes   []*PersistMode `json:"modes"`
	// Throughput holds the throughput part's cases of every policy, named
	// "<policy> <case>", ungated.
	Throughput *Report         `json:"throughput,omitempty"`
	Snapshot   *SnapshotReport `json:"snapshot,omitempty"`
	// Command is the svcbench command line, for the Markdown report.
	Command string `json:"command,omitempty"`
}

// Problems lists what failed, one line each: failed throughput cases,
// policies whose files are missing, snapshot sides that failed. Empty
// means every run worked; the numbers themselves are never a problem.
func (r *PersistReport) Problems() []string {
	var out []string
	for _, m := range r.Modes {
		if m.Failure != "" {
			out = append(out, fmt.Sprintf("appendfsync %s: %s", m.Fsync, m.Failure))
		}
	}
	if r.Throughput != nil {
		out = append(out, r.Throughput.Problems()...)
	}
	if s := r.Snapshot; s != nil {
		for _, side := range []struct {
			name string
			s    *SnapshotSide
		}{{SideSvcDB, &s.SvcDB}, {SideRedis, &s.Redis}} {
			if side.s.Failure != "" {
				out = append(out, fmt.Sprintf("snapshot on %s: %s", side.name, side.s.Failure))
			}
		}
	}
	return out
}

// RunPersist performs the persistence comparison described by cfg. Every
// process it starts is stopped before it returns, on success, error or
// cancellation. A server that fails a case, a BGSAVE or the fill fails
// that part (PersistReport.Problems); an error means the comparison itself
// broke, with the partial report.
func RunPersist(ctx context.Context, cfg PersistConfig) (rep *PersistReport, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep = &PersistReport{Started: time.Now(), Rounds: cfg.Rounds}
	defer func() { rep.Elapsed = time.Since(rep.Started).Seconds() }()
	_, _, rep.PinNote = pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	rep.Machine = describeMachine(ctx, &Config{SvcDB: cfg.SvcDB, Redis: cfg.Redis, Bench: cfg.Bench})

	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "svcbench-persist-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(workDir)
	}

	for _, fsync := range cfg.Fsyncs {
		if err := runAOFMode(ctx, &cfg, rep, fsync, filepath.Join(workDir, "aof-"+fsync), progress); err != nil {
			return rep, err
		}
		// Each policy's files are spent: leave the disk to the next part.
		_ = os.RemoveAll(filepath.Join(workDir, "aof-"+fsync))
	}
	if cfg.Keys > 0 {
		if err := runSnapshot(ctx, &cfg, rep, filepath.Join(workDir, "snapshot"), progress); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// runAOFMode runs the throughput part for one appendfsync policy: Run on
// fresh servers with the append-only file on, its cases renamed and
// ungated into rep.Throughput.
func runAOFMode(ctx context.Context, cfg *PersistConfig, rep *PersistReport, fsync, dir string, progress io.Writer) error {
	fmt.Fprintf(progress, "[aof]   appendfsync %s\n", fsync)
	c := Config{
		SvcDB:       Server{Path: cfg.SvcDB.Path, Args: append(slices.Clone(cfg.SvcDB.Args), svcdbPersistArgs(filepath.Join(dir, SideSvcDB), fsync)...)},
		Redis:       Server{Path: cfg.Redis.Path, Args: append(slices.Clone(cfg.Redis.Args), redisPersistArgs(filepath.Join(dir, SideRedis), fsync)...)},
		Bench:       cfg.Bench,
		MaxOthers:   cfg.MaxOthers,
		QuietBudget: cfg.QuietBudget,
		Loads:       slices.Clone(cfg.Loads),
		Progress:    progress,
		WorkDir:     dir,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sub, err := Run(ctx, c)
	if sub == nil {
		return err
	}
	mode := &PersistMode{Fsync: fsync, SvcDBCmd: sub.SvcDBCmd, RedisCmd: sub.RedisCmd}
	rep.Modes = append(rep.Modes, mode)
	if rep.Throughput == nil {
		rep.Throughput = &Report{Started: sub.Started, Machine: sub.Machine, Rounds: sub.Rounds,
			Pinned: sub.Pinned, PinNote: sub.PinNote, MaxOthers: sub.MaxOthers}
	}
	rep.Throughput.Notes = append(rep.Throughput.Notes, sub.Notes...)
	for _, cs := range sub.Cases {
		cs.Name = fsync + " " + cs.Name
		cs.Gated = false
		rep.Throughput.Cases = append(rep.Throughput.Cases, cs)
	}
	if err != nil {
		return err
	}
	// A server that ignored the flags would be measured without its
	// append-only file: make sure both wrote one.
	for _, side := range []struct {
		name string
		n    *int64
	}{{SideSvcDB, &mode.SvcDBAOFBytes}, {SideRedis, &mode.RedisAOFBytes}} {
		*side.n = dirBytes(filepath.Join(dir, side.name, "appendonlydir"))
		if *side.n <= 0 && mode.Failure == "" {
			mode.Failure = side.name + " wrote no append-only file (" + filepath.Join(side.name, "appendonlydir") + " empty or missing)"
		}
	}
	fmt.Fprintf(progress, "[aof]   appendfsync %s: append-only files svcdb %s, redis %s\n",
		fsync, size(float64(mode.SvcDBAOFBytes)), size(float64(mode.RedisAOFBytes)))
	return nil
}

// dirBytes returns the total size of the regular files in dir, 0 if it
// cannot be read.
func dirBytes(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}
