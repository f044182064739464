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

// replOptions are svcbench repl's flags that are not fields of
// harness.ReplConfig.
type replOptions struct {
	servers                *serverFlags
	replicas, pairs        string
	loads                  stringList
	maxOthers              float64
	markdownFile, jsonFile string
	quiet, quick           bool
}

// replFlags binds cfg's fields (cfg's values are the defaults) and the
// other options to a new flag set.
func replFlags(cfg *harness.ReplConfig, stderr io.Writer) (*flag.FlagSet, *replOptions) {
	fs := flag.NewFlagSet("svcbench repl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &replOptions{}
	o.servers = addServerFlags(fs, &cfg.SvcDB, &cfg.Redis, "; every master and replica gets them (each runs in a directory of its own)")
	fs.Lookup("redis-args").Usage = "arguments for every redis-server after --port/--bind, before the --repl-diskless-sync-delay 0 the harness adds (each runs in a directory of its own)"
	fs.BoolVar(&cfg.Pin, "pin", cfg.Pin, "pin every master and replica to the server CPUs and the load generator to the client CPUs with taskset (if >= 2 CPUs)")
	fs.StringVar(&cfg.ServerCPUs, "server-cpus", cfg.ServerCPUs, "CPU list for the servers when pinning")
	fs.StringVar(&cfg.ClientCPUs, "client-cpus", cfg.ClientCPUs, "CPU list for the load generator when pinning")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "runs per workload, replica count and server (medians are reported)")
	fs.DurationVar(&cfg.RunTimeout, "run-timeout", cfg.RunTimeout, "limit for one run")
	reps := make([]string, len(cfg.Replicas))
	for i, n := range cfg.Replicas {
		reps[i] = fmt.Sprint(n)
	}
	fs.StringVar(&o.replicas, "replicas", strings.Join(reps, ","), "replica counts of the throughput part, comma-separated, each on fresh servers; \"none\" skips the part")
	fs.Var(&o.loads, "load", "a load generator workload as `ARGS` in svcbench load's flags (repeatable; each starts from svcbench compare's default workload; default: SET:GET 1:1, memtier's other defaults on 50 connections for 2 s, at --pipeline 1 and 16)")
	o.maxOthers = 100 * cfg.MaxOthers
	fs.Float64Var(&o.maxOthers, "max-others", o.maxOthers, "a run during which other processes took more than this `percent` of a CPU on the benchmark's CPUs is left out of the medians when both servers have quieter runs, and runs wait for quiet CPUs (see --quiet-budget); 0: neither")
	fs.DurationVar(&cfg.QuietBudget, "quiet-budget", cfg.QuietBudget, "most time each replica count waits for quiet CPUs")
	fs.IntVar(&cfg.SyncKeys, "keys", cfg.SyncKeys, "keys loaded into each master for the full-sync part; 0 skips the part")
	fs.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "value size of those keys in `bytes`")
	fs.IntVar(&cfg.FillConnections, "fill-connections", cfg.FillConnections, "connections filling the keys")
	fs.IntVar(&cfg.FillPipeline, "fill-pipeline", cfg.FillPipeline, "SETs in flight per filling connection")
	fs.IntVar(&cfg.SyncRounds, "sync-rounds", cfg.SyncRounds, "full syncs per master -> replica pair")
	pairs := make([]string, len(cfg.SyncPairs))
	for i, p := range cfg.SyncPairs {
		pairs[i] = p.Master + ">" + p.Replica
	}
	fs.StringVar(&o.pairs, "sync-pairs", strings.Join(pairs, ","), "master>replica kinds of the full-sync part, comma-separated")
	fs.DurationVar(&cfg.SyncTimeout, "sync-timeout", cfg.SyncTimeout, "limit for one full sync")
	fs.DurationVar(&cfg.OnlineTimeout, "online-timeout", cfg.OnlineTimeout, "limit for the replicas to come online, and to catch up after the runs")
	fs.StringVar(&o.markdownFile, "markdown", "", "also write the report as Markdown to `FILE` (for docs/performance.md)")
	fs.StringVar(&o.jsonFile, "json", "", "also write every run as JSON to `FILE`")
	fs.BoolVar(&o.quiet, "quiet", false, "no per-run progress on stderr")
	fs.BoolVar(&o.quick, "quick", false, "a smoke run of about half a minute: one round, short runs, 20000 keys (flags given explicitly still apply)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench repl [flags]\n\nMeasure (1) a svcdb master's throughput and latency with 0, 1 and 2 svcdb replicas attached against a redis-server master with as many redis-server replicas, interleaved, and (2) the time of a full sync of 1M keys: svcdb -> svcdb, redis -> redis and both crossings. Exit status 1 only when a run fails or a replica falls off: the ratios are a measurement, not a bar.\n\n")
		fs.PrintDefaults()
	}
	return fs, o
}

func repl(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := harness.DefaultReplConfig()
	fs, o := replFlags(&cfg, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.quick {
		// Parse again over the quick defaults, so explicit flags still win.
		cfg = harness.QuickReplConfig()
		if fs, o = replFlags(&cfg, stderr); parse(fs, args) != nil {
			return errUsage // cannot happen: the same arguments parsed once
		}
	}
	var err error
	if err = o.servers.apply(); err != nil {
		return err
	}
	cfg.Replicas = nil
	if strings.TrimSpace(o.replicas) != "none" {
		if cfg.Replicas, err = parseInts(o.replicas); err != nil {
			return fmt.Errorf("--replicas %q: %w", o.replicas, err)
		}
	}
	cfg.SyncPairs = nil
	for _, s := range strings.Split(o.pairs, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		p, err := harness.ParseSyncPair(s)
		if err != nil {
			return fmt.Errorf("--sync-pairs: %w", err)
		}
		cfg.SyncPairs = append(cfg.SyncPairs, p)
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
	rep, err := harness.RunRepl(ctx, cfg)
	if rep != nil {
		rep.Command = "svcbench repl"
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
