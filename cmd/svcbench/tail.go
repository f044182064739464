package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/proc"
)

// tailOptions are svcbench tail's flags that are not fields of
// harness.TailConfig.
type tailOptions struct {
	servers                *serverFlags
	pipelines, snapPipes   string
	gcPipes                string
	markdownFile, jsonFile string
	quiet, quick           bool
	connections            int
}

// tailFlags binds cfg's fields (cfg's values are the defaults) and the
// other options to a new flag set.
func tailFlags(cfg *harness.TailConfig, stderr io.Writer) (*flag.FlagSet, *tailOptions) {
	fs := flag.NewFlagSet("svcbench tail", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &tailOptions{connections: cfg.Load.Clients}
	o.servers = addServerFlags(fs, &cfg.SvcDB, &cfg.Redis, " (the harness adds --data-dir D --save '' --appendonly no)")
	fs.BoolVar(&cfg.Pin, "pin", cfg.Pin, "pin the servers to the server CPUs and svcbench to the client CPUs (if >= 2 CPUs)")
	fs.StringVar(&cfg.ServerCPUs, "server-cpus", cfg.ServerCPUs, "CPU list for the servers when pinning")
	fs.StringVar(&cfg.ClientCPUs, "client-cpus", cfg.ClientCPUs, "CPU list for svcbench when pinning")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "keys loaded into each server (memtier-<n>), the range the workload draws from")
	fs.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "value size in `bytes` (loaded and SET)")
	fs.IntVar(&cfg.FillConnections, "fill-connections", cfg.FillConnections, "connections loading the keys")
	fs.IntVar(&cfg.FillPipeline, "fill-pipeline", cfg.FillPipeline, "SETs in flight per loading connection")
	fs.DurationVar(&cfg.FillTimeout, "fill-timeout", cfg.FillTimeout, "limit for loading one server")
	fs.IntVar(&o.connections, "connections", o.connections, "connections of the workload (memtier's 1:10 SET:GET, 32-byte values, random keys)")
	fs.StringVar(&o.pipelines, "pipelines", joinInts(cfg.Pipelines), "pipeline depths of the steady-state runs, comma-separated; \"none\" for none")
	fs.DurationVar(&cfg.RunTime, "run-time", cfg.RunTime, "length of one steady-state run")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "steady-state runs per depth and server (alternating servers); medians are reported")
	fs.StringVar(&o.snapPipes, "snapshot-pipelines", joinInts(cfg.SnapshotPipelines), "pipeline depths of the BGSAVE phase, comma-separated; \"none\" skips the phase")
	fs.StringVar(&o.gcPipes, "gc-pipelines", joinInts(cfg.GCPipelines), "pipeline depths of the forced-collection phase (svcdb only: the workload around MEMORY PURGE, two full GC cycles), comma-separated; \"none\" skips the phase")
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "length of one closed-loop window of the BGSAVE phase")
	fs.DurationVar(&cfg.Baseline, "baseline", cfg.Baseline, "how long the BGSAVE phase runs before BGSAVE")
	fs.DurationVar(&cfg.SnapshotTimeout, "snapshot-timeout", cfg.SnapshotTimeout, "limit for one BGSAVE")
	fs.StringVar(&o.markdownFile, "markdown", "", "also write the report as Markdown to `FILE` (for docs/performance.md)")
	fs.StringVar(&o.jsonFile, "json", "", "also write every run as JSON to `FILE`")
	fs.BoolVar(&o.quiet, "quiet", false, "no per-run progress on stderr")
	fs.BoolVar(&o.quick, "quick", false, "a smoke run: 200000 keys, 2 s runs, one round, 2 s baseline (flags given explicitly still apply)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench tail [flags]\n\nStart svcdb and redis-server, load --keys keys into each (pipelined), run memtier's 1:10 SET:GET workload on 50 connections at each pipeline depth, alternating servers, and print ops/s, p50, p99 and p99.9 of each with svcdb/redis ratios and svcdb's GC cycles, pause and CPU over the runs (INFO svc's gc_* fields); then run the workload in 1 s windows before and during a BGSAVE and print how much the snapshot moved each server's p99 and p99.9. Exit status 1 only when a run fails: the ratios are a measurement, not a bar.\n\n")
		fs.PrintDefaults()
	}
	return fs, o
}

// quickTail is DefaultTailConfig shrunk to a smoke run.
func quickTail() harness.TailConfig {
	c := harness.DefaultTailConfig()
	c.Keys = 200_000
	c.RunTime = 2 * time.Second
	c.Rounds = 1
	c.Baseline = 2 * time.Second
	return c
}

func tail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := harness.DefaultTailConfig()
	fs, o := tailFlags(&cfg, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.quick {
		// Parse again over the quick defaults, so explicit flags still win.
		cfg = quickTail()
		if fs, o = tailFlags(&cfg, stderr); parse(fs, args) != nil {
			return errUsage // cannot happen: the same arguments parsed once
		}
	}
	if err := o.servers.apply(); err != nil {
		return err
	}
	var err error
	if cfg.Pipelines, err = parsePipelines(o.pipelines); err != nil {
		return fmt.Errorf("--pipelines: %w", err)
	}
	if cfg.SnapshotPipelines, err = parsePipelines(o.snapPipes); err != nil {
		return fmt.Errorf("--snapshot-pipelines: %w", err)
	}
	if cfg.GCPipelines, err = parsePipelines(o.gcPipes); err != nil {
		return fmt.Errorf("--gc-pipelines: %w", err)
	}
	cfg.Load.Clients, cfg.Load.Threads = o.connections, 1
	if err := o.servers.check(); err != nil {
		return err
	}
	if !o.quiet {
		cfg.Progress = stderr
	}
	rep, err := harness.RunTail(ctx, cfg)
	if rep != nil {
		rep.Command = "svcbench tail"
		if len(args) > 0 {
			rep.Command += " " + proc.QuoteArgs(args)
		}
		err = writeReports(rep, err, stdout, stderr, o.markdownFile, o.jsonFile)
	}
	if err == nil {
		if f := rep.Failures(); len(f) > 0 {
			err = fmt.Errorf("%d server(s) failed:\n  %s", len(f), strings.Join(f, "\n  "))
		}
	}
	return err
}

// parsePipelines parses "1,16", or "none" for none.
func parsePipelines(s string) ([]int, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil
	}
	return parseInts(s)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
