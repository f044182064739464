package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/proc"
)

// persistOptions are svcbench persist's flags that are not fields of
// harness.PersistConfig.
type persistOptions struct {
	servers                *serverFlags
	bench                  *benchFlags
	fsyncs                 string
	loads                  stringList
	maxOthers              float64
	markdownFile, jsonFile string
	quiet, quick           bool
}

// persistFlags binds cfg's fields (cfg's values are the defaults) and the
// other options to a new flag set.
func persistFlags(cfg *harness.PersistConfig, stderr io.Writer) (*flag.FlagSet, *persistOptions) {
	fs := flag.NewFlagSet("svcbench persist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &persistOptions{}
	o.servers = addServerFlags(fs, &cfg.SvcDB, &cfg.Redis, "")
	// The persistence arguments come from the harness; the baseline's
	// default (no persistence) would only be overridden by them.
	o.servers.redisArgs = proc.QuoteArgs(cfg.Redis.Args)
	fs.Lookup("redis-args").DefValue = o.servers.redisArgs
	fs.Lookup("redis-args").Usage = "extra arguments for redis-server after --port/--bind, before the persistence arguments the harness adds (--dir D --save '' --appendonly ... --appendfsync ...)"
	fs.Lookup("svcdb-args").Usage = "extra arguments for the server under test, shell-quoted, before the persistence arguments the harness adds (--data-dir D --save '' --appendonly ... --appendfsync ...)"
	o.bench = addBenchFlags(fs, &cfg.Bench, strings.Join(cfg.Tests, ","))
	fs.StringVar(&o.fsyncs, "appendfsync", strings.Join(cfg.Fsyncs, ","), "appendfsync policies of the throughput part, comma-separated ("+strings.Join(harness.Fsyncs, ", ")+"), each on fresh servers; \"none\" skips the part")
	fs.Var(&o.loads, "load", "a load generator workload of the throughput part as `ARGS` in svcbench load's flags (repeatable; each starts from svcbench compare's default workload; \"none\" for none; default: SET:GET 1:1, memtier's other defaults on 50 connections for 2 s, at --pipeline 1 and 16)")
	o.maxOthers = 100 * cfg.MaxOthers
	fs.Float64Var(&o.maxOthers, "max-others", o.maxOthers, "a run during which other processes took more than this `percent` of a CPU on the benchmark's CPUs is left out of the medians when both servers have quieter runs, and runs wait for quiet CPUs (see --quiet-budget); 0: neither")
	fs.DurationVar(&cfg.QuietBudget, "quiet-budget", cfg.QuietBudget, "most time each part (each appendfsync policy, the snapshot part) waits for quiet CPUs")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "keys loaded for the snapshot part; 0 skips the part")
	fs.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "value size of those keys in `bytes`")
	fs.IntVar(&cfg.FillConnections, "fill-connections", cfg.FillConnections, "connections filling the keys")
	fs.IntVar(&cfg.FillPipeline, "fill-pipeline", cfg.FillPipeline, "SETs in flight per filling connection")
	fs.IntVar(&cfg.LatencyConnections, "latency-connections", cfg.LatencyConnections, "connections of the fixed-rate load (one request in flight each)")
	fs.DurationVar(&cfg.MaxRateTime, "max-rate-time", cfg.MaxRateTime, "length of the closed-loop run that measures each server's rate")
	fs.Float64Var(&cfg.RateShare, "rate-share", cfg.RateShare, "the fixed rate as a share of the lower closed-loop rate")
	fs.DurationVar(&cfg.Baseline, "baseline", cfg.Baseline, "window before BGSAVE (whole seconds)")
	fs.DurationVar(&cfg.SnapshotTimeout, "snapshot-timeout", cfg.SnapshotTimeout, "limit for one BGSAVE")
	fs.StringVar(&o.markdownFile, "markdown", "", "also write the report as Markdown to `FILE` (for docs/performance.md)")
	fs.StringVar(&o.jsonFile, "json", "", "also write every run and second as JSON to `FILE`")
	fs.BoolVar(&o.quiet, "quiet", false, "no per-run progress on stderr")
	fs.BoolVar(&o.quick, "quick", false, "a smoke run of about half a minute: one round, short runs, 20000 keys (flags given explicitly still apply)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench persist [flags]\n\nStart svcdb and redis-server with the same persistence settings, each in its own data directory, and measure (1) throughput with the append-only file for each appendfsync policy and (2) latency under a fixed-rate load before and during a BGSAVE. Exit status 1 only when a run fails: the ratios are a measurement, not a bar.\n\n")
		fs.PrintDefaults()
	}
	return fs, o
}

func persist(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := harness.DefaultPersistConfig()
	fs, o := persistFlags(&cfg, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.quick {
		// Parse again over the quick defaults, so explicit flags still win.
		cfg = harness.QuickPersistConfig()
		if fs, o = persistFlags(&cfg, stderr); parse(fs, args) != nil {
			return errUsage // cannot happen: the same arguments parsed once
		}
	}
	var err error
	if err = o.servers.apply(); err != nil {
		return err
	}
	if err := o.bench.apply(); err != nil {
		return err
	}
	if o.bench.suite {
		return fmt.Errorf("--tests suite: persist runs single tests (e.g. --tests set)")
	}
	cfg.Fsyncs = nil
	if strings.TrimSpace(o.fsyncs) != "none" {
		for _, f := range strings.Split(o.fsyncs, ",") {
			if f = strings.TrimSpace(strings.ToLower(f)); f != "" {
				cfg.Fsyncs = append(cfg.Fsyncs, f)
			}
		}
	}
	if len(o.loads) > 0 {
		if cfg.Loads, err = parseLoads(o.loads); err != nil {
			return err
		}
	}
	cfg.MaxOthers = o.maxOthers / 100
	if err := o.servers.check(); err != nil {
		return err
	}
	if !o.quiet {
		cfg.Progress = stderr
	}
	rep, err := harness.RunPersist(ctx, cfg)
	if rep != nil {
		rep.Command = "svcbench persist"
		if len(args) > 0 {
			rep.Command += " " + proc.QuoteArgs(args)
		}
		err = writeReports(rep, err, stdout, stderr, o.markdownFile, o.jsonFile)
	}
	if err == nil {
		if probs := rep.Problems(); len(probs) > 0 {
			err = fmt.Errorf("%d run(s) failed:\n  %s", len(probs), strings.Join(probs, "\n  "))
		}
	}
	return err
}
