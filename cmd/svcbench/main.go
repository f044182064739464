package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/bench/proc"
)

const usage = `usage: svcbench <command> [flags]

commands:
  compare   start svcdb and redis-server, run redis-benchmark's default suite
            and the load generator against both (interleaved), print medians
            and ratios, and check the bar (exit status 3 when missed)
  diag      start svcdb twice, without and with its HTTP diagnostics server
            (scraped every second), run redis-benchmark against both
            (interleaved), print ops/s and CPU per request, on/off, and the
            cost in percent
  load      run a memtier-like workload against one server
  memory    start svcdb and redis-server, load N keys of a shape into each,
            print the memory each takes per key
  persist   start svcdb and redis-server with the same persistence settings,
            print throughput with the append-only file (appendfsync everysec,
            always) and latency before and during a BGSAVE of 1M keys
  repl      start svcdb and redis-server masters with 0, 1 and 2 replicas of
            their own kind, print throughput and p99 of each master, and
            the time of a full sync of 1M keys (svcdb and redis-server
            replicas of either master)
  tail      start svcdb and redis-server, load 10M keys into each, print
            ops/s, p50, p99 and p99.9 of memtier's 1:10 workload at
            pipeline 1 and 16 with svcdb's GC over the runs, and how much
            a BGSAVE during the workload moves each server's tail

run "svcbench <command> -h" for the flags of a command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	// The first Ctrl-C cancels the run, which stops every process it started
	// and prints what was measured; a second one kills svcbench outright
	// (its children then die of PR_SET_PDEATHSIG).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	var err error
	switch args[0] {
	case "compare":
		err = compare(ctx, args[1:], stdout, stderr)
	case "diag":
		err = diag(ctx, args[1:], stdout, stderr)
	case "load":
		err = load(ctx, args[1:], stdout, stderr)
	case "memory":
		err = memory(ctx, args[1:], stdout, stderr)
	case "persist":
		err = persist(ctx, args[1:], stdout, stderr)
	case "repl":
		err = repl(ctx, args[1:], stdout, stderr)
	case "tail":
		err = tail(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "svcbench: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errBar):
		fmt.Fprintf(stderr, "svcbench %s: %v\n", args[0], err)
		return 3
	default:
		fmt.Fprintf(stderr, "svcbench %s: %v\n", args[0], err)
		return 1
	}
}

// errUsage marks flag errors (already printed by the flag package).
var errUsage = errors.New("usage error")

// errBar marks a comparison that ran to the end but missed the bar.
var errBar = errors.New("the bar is not met")

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %q\n", fs.Args())
		return errUsage
	}
	return nil
}

// loadFlags binds memtier_benchmark's flag names to c, using c's current
// values as defaults. withServer adds -s/--server and -p/--port (the compare
// command fills the address itself).
func loadFlags(fs *flag.FlagSet, c *loadgen.Config, withServer bool, host *string, port *int) {
	if withServer {
		fs.StringVar(host, "server", "127.0.0.1", "server `host`")
		fs.StringVar(host, "s", "127.0.0.1", "short for --server")
		fs.IntVar(port, "port", 6379, "server `port`")
		fs.IntVar(port, "p", 6379, "short for --port")
	}
	fs.Var(ratioFlag{&c.Ratio}, "ratio", "`SET:GET` ratio")
	fs.Var(&patternFlag{c}, "key-pattern", "`SET:GET` key patterns: R (random), S (sequential), G (gaussian), P (parallel slices)")
	fs.Uint64Var(&c.KeyMin, "key-minimum", c.KeyMin, "smallest key number")
	fs.Uint64Var(&c.KeyMax, "key-maximum", c.KeyMax, "largest key number")
	fs.StringVar(&c.KeyPrefix, "key-prefix", c.KeyPrefix, "key name prefix")
	fs.Float64Var(&c.KeyMedian, "key-median", c.KeyMedian, "gaussian median (0: middle of the range)")
	fs.Float64Var(&c.KeyStddev, "key-stddev", c.KeyStddev, "gaussian standard deviation (0: a sixth of the range)")
	fs.IntVar(&c.DataSize, "data-size", c.DataSize, "SET value size in `bytes`")
	fs.IntVar(&c.DataSize, "d", c.DataSize, "short for --data-size")
	fs.IntVar(&c.Pipeline, "pipeline", c.Pipeline, "requests in flight per connection")
	fs.IntVar(&c.Clients, "clients", c.Clients, "connections per thread")
	fs.IntVar(&c.Clients, "c", c.Clients, "short for --clients")
	fs.IntVar(&c.Threads, "threads", c.Threads, "threads (multiplies connections)")
	fs.IntVar(&c.Threads, "t", c.Threads, "short for --threads")
	fs.IntVar(&c.Requests, "requests", c.Requests, "requests per connection (ignored with --test-time)")
	fs.IntVar(&c.Requests, "n", c.Requests, "short for --requests")
	fs.Var((*secondsFlag)(&c.TestTime), "test-time", "run for this many `seconds` (fractions allowed) instead of --requests")
	fs.IntVar(&c.RateLimit, "rate-limiting", c.RateLimit, "at most this many requests a second per connection (0: no limit), to compare servers at the same ops/s")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed (connection i uses seed+i)")
}

func load(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svcbench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := loadgen.DefaultConfig()
	var (
		host        string
		port        int
		jsonOut     bool
		percentiles string
	)
	loadFlags(fs, &cfg, true, &host, &port)
	fs.BoolVar(&jsonOut, "json", false, "print the summary as JSON instead of the table")
	fs.StringVar(&percentiles, "print-percentiles", "", "also print these latency percentiles of all requests after the table, comma-separated (as memtier's flag), e.g. 50,90,99,99.9,99.99,100")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench load [flags]\n\nmemtier_benchmark-like load against one Redis-protocol server (flag names as memtier's).\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	var qs []float64
	for f := range strings.SplitSeq(percentiles, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		q, perr := strconv.ParseFloat(f, 64)
		if perr != nil || q < 0 || q > 100 {
			fmt.Fprintf(stderr, "--print-percentiles: %q is not a percentile (0..100)\n", f)
			return errUsage
		}
		qs = append(qs, q)
	}
	cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	if os.Getenv("GOMAXPROCS") == "" {
		// As memtier_benchmark's -t: the client runs on that many
		// threads, not on every CPU (harness.clientThreads).
		runtime.GOMAXPROCS(max(cfg.Threads, 1))
	}
	res, err := loadgen.RunOnce(ctx, cfg)
	if res != nil {
		if jsonOut {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(res.Summary()); jerr != nil && err == nil {
				err = jerr
			}
		} else if werr := res.WriteReport(stdout); werr != nil && err == nil {
			err = werr
		}
		if len(qs) > 0 && !jsonOut {
			if werr := res.WritePercentiles(stdout, qs); werr != nil && err == nil {
				err = werr
			}
		}
	}
	if err == nil && res.Total().Errors > 0 {
		err = fmt.Errorf("%d error replies", res.Total().Errors)
	}
	return err
}

// benchFlags are the redis-benchmark flags compare and diag share
// (harness.Bench); --tests and --pipelines are applied after parsing.
type benchFlags struct {
	b                *harness.Bench
	tests, pipelines string
	// suite is set by apply when --tests names "suite".
	suite bool
}

// addBenchFlags binds b's fields; tests is --tests' default.
func addBenchFlags(fs *flag.FlagSet, b *harness.Bench, tests string) *benchFlags {
	f := &benchFlags{b: b}
	pipes := make([]string, len(b.Pipelines))
	for i, p := range b.Pipelines {
		pipes[i] = strconv.Itoa(p)
	}
	fs.StringVar(&b.RedisBenchmark, "redis-benchmark", b.RedisBenchmark, "redis-benchmark executable")
	fs.BoolVar(&b.Pin, "pin", b.Pin, "pin the servers to the server CPUs and the clients (redis-benchmark, the load generator, the scraper) to the client CPUs with taskset (if >= 2 CPUs)")
	fs.StringVar(&b.ServerCPUs, "server-cpus", b.ServerCPUs, "CPU list for the servers when pinning")
	fs.StringVar(&b.ClientCPUs, "client-cpus", b.ClientCPUs, "CPU list for the clients when pinning")
	fs.IntVar(&b.Rounds, "rounds", b.Rounds, "runs per case and server (medians are reported)")
	fs.StringVar(&f.tests, "tests", tests, "redis-benchmark tests, comma-separated: \"suite\" (compare only: the default suite, every test of a plain redis-benchmark run, one run per group of tests), test names run one at a time ("+strings.Join(harness.Tests, ",")+"), or none")
	fs.StringVar(&f.pipelines, "pipelines", strings.Join(pipes, ","), "redis-benchmark pipeline depths (-P)")
	fs.IntVar(&b.Requests, "requests", b.Requests, "redis-benchmark -n at pipeline 1; at -P p it is this × min(p, 10) (with --target-time: a tenth of it sizes the calibration run)")
	fs.DurationVar(&b.TargetTime, "target-time", b.TargetTime, "size each redis-benchmark -n from a calibration run so a run lasts about this long; 0 uses --requests as is")
	fs.IntVar(&b.Clients, "clients", b.Clients, "redis-benchmark -c")
	fs.IntVar(&b.KeySpace, "keyspace", b.KeySpace, "redis-benchmark -r; 0: no -r (one hot key per test)")
	fs.DurationVar(&b.RunTimeout, "run-timeout", b.RunTimeout, "limit for a single run")
	return f
}

// apply sets the parsed --tests and --pipelines.
func (f *benchFlags) apply() error {
	f.b.Tests, f.suite = nil, false
	if f.tests != "none" && f.tests != "" {
		for _, t := range strings.Split(strings.ToLower(f.tests), ",") {
			switch t = strings.TrimSpace(t); t {
			case "":
			case "suite":
				f.suite = true
			default:
				f.b.Tests = append(f.b.Tests, t)
			}
		}
	}
	var err error
	if f.b.Pipelines, err = parseInts(f.pipelines); err != nil {
		return fmt.Errorf("--pipelines: %w", err)
	}
	return nil
}

// serverFlags are the flags naming the servers compare and memory start:
// svcdb and the baseline redis-server, each with its arguments.
type serverFlags struct {
	svcdb, redis         *harness.Server
	svcdbArgs, redisArgs string
}

// addServerFlags defines --svcdb, --svcdb-args, --redis and --redis-args on
// fs; svcdbArgsExample ends --svcdb-args' help.
func addServerFlags(fs *flag.FlagSet, svcdb, redis *harness.Server, svcdbArgsExample string) *serverFlags {
	f := &serverFlags{svcdb: svcdb, redis: redis}
	fs.StringVar(&svcdb.Path, "svcdb", "bin/svcdb", "server under test (any server taking --port N --bind ADDR)")
	fs.StringVar(&f.svcdbArgs, "svcdb-args", "", "extra arguments for the server under test, shell-quoted"+svcdbArgsExample)
	fs.StringVar(&redis.Path, "redis", redis.Path, "baseline redis-server")
	fs.StringVar(&f.redisArgs, "redis-args", proc.QuoteArgs(harness.RedisBaselineArgs), "arguments for the baseline after --port/--bind")
	return f
}

// apply sets the servers' arguments from the parsed --svcdb-args and
// --redis-args.
func (f *serverFlags) apply() error {
	var err error
	if f.svcdb.Args, err = proc.SplitArgs(f.svcdbArgs); err != nil {
		return fmt.Errorf("--svcdb-args: %w", err)
	}
	if f.redis.Args, err = proc.SplitArgs(f.redisArgs); err != nil {
		return fmt.Errorf("--redis-args: %w", err)
	}
	return nil
}

// check makes sure --svcdb names a file.
func (f *serverFlags) check() error {
	if _, err := os.Stat(f.svcdb.Path); err != nil {
		return fmt.Errorf("--svcdb %s: %w (build it with `go build -o bin/svcdb ./cmd/svcdb`, or point --svcdb at any Redis-protocol server)", f.svcdb.Path, err)
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " | ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func compare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svcbench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := harness.DefaultConfig()
	var (
		loads                  stringList
		markdownFile, jsonFile string
		quiet                  bool
		scripts                = true
		commands               = true
		modes, keyspaces       string
	)
	servers := addServerFlags(fs, &cfg.SvcDB, &cfg.Redis, " (e.g. \"--shards 4 --event-loops 1\")")
	bench := addBenchFlags(fs, &cfg.Bench, "suite")
	fs.DurationVar(&cfg.SuiteTestTime, "suite-test-time", cfg.SuiteTestTime, "size each suite group's -n from a calibration run so a test of the group's median rate lasts about this long and its fastest at least half of it; 0: --requests × the group's share (main 1, lrange-lpush 1, lrange 0.2, mset 0.2)")
	fs.Float64Var(&cfg.MinRatio, "min-ratio", cfg.MinRatio, "the bar: each redis-benchmark case's svcdb/redis ops/s ratio must be at least this, and no case may fail (exit status 3 otherwise); 0 checks failures only")
	maxOthers := 100 * cfg.MaxOthers
	fs.Float64Var(&maxOthers, "max-others", maxOthers, "a run during which other processes took more than this `percent` of a CPU on the benchmark's CPUs is left out of the medians when both servers have quieter runs, and runs wait for quiet CPUs (see --quiet-budget); 0: neither")
	fs.DurationVar(&cfg.QuietBudget, "quiet-budget", cfg.QuietBudget, "most time the whole comparison waits for quiet CPUs before its runs")
	fs.Var(&loads, "load", "a load generator workload as `ARGS` in svcbench load's flags, e.g. \"--ratio 1:1 --pipeline 16 --test-time 3\" (repeatable; \"none\" for none; default: memtier's defaults scaled to one client CPU (-c 50 -t 1) for 3 s, at --pipeline 1 and 16); its keys follow the key space, -r N as keys 1..N and 0 as key 1 alone, unless it gives --key-minimum or --key-maximum")
	fs.IntVar(&cfg.LoadRounds, "load-rounds", cfg.LoadRounds, "runs per --load workload and server (0: --rounds); its p99 and p99.9 are medians of these, with the range of the per-round ratios")
	fs.StringVar(&markdownFile, "markdown", "", "also write the report as Markdown to `FILE` (for docs/performance.md)")
	fs.StringVar(&jsonFile, "json", "", "also write every run as JSON to `FILE`")
	fs.BoolVar(&quiet, "quiet", false, "no per-run progress on stderr")
	fs.StringVar(&modes, "modes", "", "run the whole comparison in each of these `MODES`, comma-separated: pinned (--pin) and defaults (no taskset, as the README's tour), for each of --keyspaces, then print the ratios side by side; empty: once, as --pin and --keyspace say")
	fs.StringVar(&keyspaces, "keyspaces", "", "with --modes: redis-benchmark -r values, comma-separated, 0 for one hot key (default: --keyspace)")
	fs.BoolVar(&scripts, "scripts", scripts, "also run the EVALSHA cases at each --pipeline (a script doing one GET, one doing INCR and EXPIRE; SCRIPT LOAD first on both servers), reported with their ratios but not held to --min-ratio")
	fs.BoolVar(&commands, "commands", commands, "also run the bitmap, HyperLogLog and geo cases at each --pipeline (SETBIT then BITCOUNT of its keys, PFADD, PFCOUNT of a filled HLL, GEOSEARCH of a 1,000-place set filled first on both servers), held to --min-ratio like the tests")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench compare [flags]\n\nStart svcdb and redis-server, benchmark both the same way, interleaved, and print medians and svcdb/redis ratios.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}

	var err error
	if err = servers.apply(); err != nil {
		return err
	}
	if err := bench.apply(); err != nil {
		return err
	}
	if !bench.suite {
		cfg.Suite = nil
	}
	if scripts {
		cfg.Scripts = slices.Clone(harness.DefaultScripts)
	}
	if commands {
		cfg.Commands = slices.Clone(harness.DefaultCommands)
	}
	cfg.MaxOthers = maxOthers / 100
	if cfg.Loads, cfg.LoadKeysGiven, err = parseLoadsKeys(loads); err != nil {
		return err
	}
	if err := servers.check(); err != nil {
		return err
	}
	if !quiet {
		cfg.Progress = stderr
	}

	if modes != "" || keyspaces != "" {
		return compareModes(ctx, cfg, modes, keyspaces, stdout, stderr, markdownFile, jsonFile)
	}
	rep, err := harness.Run(ctx, cfg)
	if rep != nil && len(rep.Cases) > 0 {
		err = writeReports(rep, err, stdout, stderr, markdownFile, jsonFile)
	}
	if err == nil {
		if probs := rep.Problems(); len(probs) > 0 {
			err = fmt.Errorf("%w: %d case(s) failed or have a svcdb/redis ops/s ratio below %.2f:\n  %s",
				errBar, len(probs), cfg.MinRatio, strings.Join(probs, "\n  "))
		}
	}
	return err
}

// compareModes runs the comparison once per mode and key space (--modes,
// --keyspaces), prints each run's table as it ends, then the ratios side
// by side. The Markdown file gets the side-by-side table and each run's
// section; the JSON file every run. It stops at the first run that fails
// to run, with what was measured so far.
func compareModes(ctx context.Context, cfg harness.Config, modes, keyspaces string, stdout, stderr io.Writer, markdownFile, jsonFile string) error {
	if modes == "" {
		modes = "defaults"
		if cfg.Pin {
			modes = "pinned"
		}
	}
	ks := []int{cfg.KeySpace}
	if keyspaces != "" {
		var err error
		if ks, err = parseInts(keyspaces); err != nil {
			return fmt.Errorf("--keyspaces: %w", err)
		}
	}
	list, err := harness.ParseModes(modes, ks)
	if err != nil {
		return err
	}
	var (
		done   []harness.Variant
		probs  []string
		runErr error
	)
	for _, m := range list {
		fmt.Fprintf(stdout, "\n== %s ==\n", m.Label())
		rep, err := harness.Run(ctx, m.Apply(cfg))
		if rep != nil && len(rep.Cases) > 0 {
			done = append(done, harness.Variant{Mode: m, Report: rep})
			if werr := writeReportFiles(rep, stdout, "", ""); werr != nil && err == nil {
				err = werr
			}
			for _, p := range rep.Problems() {
				probs = append(probs, m.Label()+": "+p)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "\npartial results (the %s run failed):\n", m.Label())
			runErr = err
			break
		}
	}
	if len(done) == 0 {
		return runErr
	}
	fmt.Fprintln(stdout)
	if err := harness.WriteSideBySide(stdout, done); err != nil && runErr == nil {
		return err
	}
	if markdownFile != "" {
		if err := writeFile(markdownFile, func(w io.Writer) error {
			if err := harness.WriteSideBySideMarkdown(w, done); err != nil {
				return err
			}
			for _, v := range done {
				fmt.Fprintf(w, "\n### %s\n\n", v.Mode.Label())
				if err := v.Report.WriteMarkdown(w); err != nil {
					return err
				}
			}
			return nil
		}); err != nil && runErr == nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", markdownFile)
	}
	if jsonFile != "" {
		if err := writeFile(jsonFile, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(done)
		}); err != nil && runErr == nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", jsonFile)
	}
	if runErr == nil && len(probs) > 0 {
		runErr = fmt.Errorf("%w: %d case(s) failed or have a svcdb/redis ops/s ratio below %.2f:\n  %s",
			errBar, len(probs), cfg.MinRatio, strings.Join(probs, "\n  "))
	}
	return runErr
}

func diag(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svcbench diag", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := harness.DefaultDiagConfig()
	var (
		svcdbArgs, endpoints   string
		markdownFile, jsonFile string
		quiet                  bool
	)
	fs.StringVar(&cfg.SvcDB.Path, "svcdb", "bin/svcdb", "server under test (takes --port N --bind ADDR, and --http-port 0 --http-token T for diagnostics on)")
	fs.StringVar(&svcdbArgs, "svcdb-args", "", "extra arguments for both svcdb processes, shell-quoted (e.g. \"--shards 4\")")
	bench := addBenchFlags(fs, &cfg.Bench, strings.Join(cfg.Tests, ","))
	fs.DurationVar(&cfg.ScrapeInterval, "scrape-interval", cfg.ScrapeInterval, "time between two scrapes of every endpoint during the diagnostics-on runs")
	fs.StringVar(&endpoints, "endpoints", endpointList(cfg.Endpoints), "paths to scrape, comma-separated; a trailing ? marks one that may answer 404 (then it is skipped)")
	fs.StringVar(&cfg.Token, "http-token", "", "bearer token for the diagnostics server and the scrapes (default: a random one)")
	fs.Float64Var(&cfg.MaxCostPct, "max-cost", cfg.MaxCostPct, "the bar: throughput cost of diagnostics in `percent` the report checks")
	maxOthers := 100 * cfg.MaxOthers
	fs.Float64Var(&maxOthers, "max-others", maxOthers, "repeat a run during which other processes took more than this `percent` of a CPU on the benchmark's CPUs, and wait for quieter CPUs before runs (see --quiet-budget); 0: never")
	fs.IntVar(&cfg.Retries, "retries", cfg.Retries, "most runs repeated over the whole comparison (at most 2 per run)")
	fs.DurationVar(&cfg.QuietBudget, "quiet-budget", cfg.QuietBudget, "most time the whole comparison waits for quiet CPUs before its runs")
	fs.StringVar(&markdownFile, "markdown", "", "also write the report as Markdown to `FILE` (for docs/performance.md)")
	fs.StringVar(&jsonFile, "json", "", "also write every run as JSON to `FILE`")
	fs.BoolVar(&quiet, "quiet", false, "no per-run progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench diag [flags]\n\nStart svcdb twice, with its HTTP diagnostics server off and on (scraped by svcbench every --scrape-interval), benchmark both the same way, interleaved, and print medians, on/off ratios and the cost of diagnostics in percent.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}

	cfg.MaxOthers = maxOthers / 100
	var err error
	if cfg.SvcDB.Args, err = proc.SplitArgs(svcdbArgs); err != nil {
		return fmt.Errorf("--svcdb-args: %w", err)
	}
	if err := bench.apply(); err != nil {
		return err
	}
	if bench.suite {
		return errors.New("--tests suite: diag runs single tests (e.g. --tests set,get)")
	}
	if cfg.Endpoints, err = parseEndpoints(endpoints); err != nil {
		return fmt.Errorf("--endpoints: %w", err)
	}
	if _, err := os.Stat(cfg.SvcDB.Path); err != nil {
		return fmt.Errorf("--svcdb %s: %w (build it with `go build -o bin/svcdb ./cmd/svcdb`)", cfg.SvcDB.Path, err)
	}
	if !quiet {
		cfg.Progress = stderr
	}

	rep, err := harness.RunDiag(ctx, cfg)
	if rep != nil && len(rep.Cases) > 0 {
		rep.Command = "svcbench diag"
		if len(args) > 0 {
			rep.Command += " " + proc.QuoteArgs(redactFlag(args, "http-token"))
		}
		err = writeReports(rep, err, stdout, stderr, markdownFile, jsonFile)
	}
	return err
}

// endpointList formats endpoints as the --endpoints flag takes them.
func endpointList(eps []harness.Endpoint) string {
	s := make([]string, len(eps))
	for i, e := range eps {
		s[i] = e.Path
		if !e.Required {
			s[i] += "?"
		}
	}
	return strings.Join(s, ",")
}

// parseEndpoints reads "/metrics,/status/json?": a trailing ? marks an
// endpoint that may answer 404 (skipped then).
func parseEndpoints(s string) ([]harness.Endpoint, error) {
	var out []harness.Endpoint
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		e := harness.Endpoint{Required: true}
		if p, ok := strings.CutSuffix(f, "?"); ok {
			f, e.Required = p, false
		}
		if !strings.HasPrefix(f, "/") || strings.ContainsAny(f, " ?") {
			return nil, fmt.Errorf("%q: want a path such as /metrics, optionally followed by ?", f)
		}
		e.Path = f
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no endpoints in %q", s)
	}
	return out, nil
}

// redactFlag returns args with the value of --name (or -name) hidden.
func redactFlag(args []string, name string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := strings.TrimLeft(out[i], "-")
		if a == name && strings.HasPrefix(out[i], "-") && i+1 < len(out) {
			out[i+1] = "REDACTED"
			i++
		} else if v, ok := strings.CutPrefix(a, name+"="); ok && v != "" && strings.HasPrefix(out[i], "-") {
			out[i] = out[i][:len(out[i])-len(v)] + "REDACTED"
		}
	}
	return out
}

// report is what both comparisons print and write.
type report interface {
	WriteTable(io.Writer) error
	WriteMarkdown(io.Writer) error
	WriteJSON(io.Writer) error
}

// writeReports prints rep and writes it to the files named, after a note on
// stderr that the results are partial when the run failed with runErr. It
// returns runErr, or else the first error printing or writing.
func writeReports(rep report, runErr error, stdout, stderr io.Writer, markdownFile, jsonFile string) error {
	if runErr != nil {
		fmt.Fprintf(stderr, "\npartial results (the run failed):\n")
	}
	if err := writeReportFiles(rep, stdout, markdownFile, jsonFile); err != nil && runErr == nil {
		return err
	}
	return runErr
}

func writeReportFiles(rep report, stdout io.Writer, markdownFile, jsonFile string) error {
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{markdownFile, rep.WriteMarkdown}, {jsonFile, rep.WriteJSON}} {
		if f.name == "" {
			continue
		}
		if err := writeFile(f.name, f.write); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", f.name)
	}
	return nil
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseLoads turns each --load value into a workload, starting from the
// compare command's default workload.
func parseLoads(loads []string) ([]loadgen.Config, error) {
	out, _, err := parseLoadsKeys(loads)
	return out, err
}

// parseLoadsKeys is parseLoads that also says, per workload, whether its
// key range was given (--key-minimum or --key-maximum): compare's key space
// sets the others' (harness.Config.LoadKeysGiven).
func parseLoadsKeys(loads []string) ([]loadgen.Config, []bool, error) {
	if len(loads) == 0 {
		return harness.DefaultLoads(), nil, nil
	}
	var (
		out   []loadgen.Config
		given []bool
	)
	for _, l := range loads {
		if strings.TrimSpace(l) == "none" {
			continue
		}
		args, err := proc.SplitArgs(l)
		if err != nil {
			return nil, nil, fmt.Errorf("--load %q: %w", l, err)
		}
		c := harness.DefaultLoad()
		fs := flag.NewFlagSet("--load", flag.ContinueOnError)
		var sb strings.Builder
		fs.SetOutput(&sb)
		loadFlags(fs, &c, false, nil, nil)
		if err := fs.Parse(args); err != nil {
			return nil, nil, fmt.Errorf("--load %q: %v", l, strings.TrimSpace(firstLine(sb.String(), err)))
		}
		if fs.NArg() > 0 {
			return nil, nil, fmt.Errorf("--load %q: unexpected arguments %q", l, fs.Args())
		}
		// A workload given with --requests and no --test-time is request-bound.
		if requestsSet(fs) && !flagSet(fs, "test-time") {
			c.TestTime = 0
		}
		out = append(out, c)
		given = append(given, flagSet(fs, "key-minimum") || flagSet(fs, "key-maximum"))
	}
	return out, given, nil
}

func firstLine(s string, err error) string {
	if l, _, _ := strings.Cut(s, "\n"); l != "" {
		return l
	}
	return err.Error()
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func requestsSet(fs *flag.FlagSet) bool { return flagSet(fs, "requests") || flagSet(fs, "n") }

// ratioFlag parses "SET:GET" into a Ratio. (A named Ratio type cannot be
// the flag.Value: Ratio has a field called Set.)
type ratioFlag struct{ r *loadgen.Ratio }

func (f ratioFlag) String() string {
	if f.r == nil {
		return "" // zero value, for flag's default detection
	}
	return f.r.String()
}

func (f ratioFlag) Set(s string) error {
	v, err := loadgen.ParseRatio(s)
	if err == nil {
		*f.r = v
	}
	return err
}

// patternFlag parses "R:R" into a Config's two patterns.
type patternFlag struct{ c *loadgen.Config }

func (p *patternFlag) String() string {
	if p.c == nil {
		return ""
	}
	return fmt.Sprintf("%c:%c", p.c.SetPattern, p.c.GetPattern)
}

func (p *patternFlag) Set(s string) error {
	set, get, err := loadgen.ParseKeyPattern(s)
	if err == nil {
		p.c.SetPattern, p.c.GetPattern = set, get
	}
	return err
}

// secondsFlag is a duration given in seconds, as memtier's --test-time;
// a Go duration ("1500ms") is accepted too.
type secondsFlag time.Duration

func (d *secondsFlag) String() string {
	return strconv.FormatFloat(time.Duration(*d).Seconds(), 'g', -1, 64)
}
func (d *secondsFlag) Set(s string) error {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || math.IsNaN(v) || v > 1e6 {
			return fmt.Errorf("want 0..1e6 seconds")
		}
		*d = secondsFlag(v * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds or a duration like 1500ms")
	}
	*d = secondsFlag(v)
	return nil
}

func memory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svcbench memory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := harness.DefaultMemoryConfig()
	var (
		shapes                 string
		markdownFile, jsonFile string
		quiet                  bool
	)
	servers := addServerFlags(fs, &cfg.SvcDB, &cfg.Redis, "")
	fs.BoolVar(&cfg.Pin, "pin", cfg.Pin, "pin the servers to the server CPUs and the loader to the client CPUs (if >= 2 CPUs)")
	fs.StringVar(&cfg.ServerCPUs, "server-cpus", cfg.ServerCPUs, "CPU list for the servers when pinning")
	fs.StringVar(&cfg.ClientCPUs, "client-cpus", cfg.ClientCPUs, "CPU list for the loader when pinning")
	fs.StringVar(&shapes, "shapes", strings.Join(cfg.Shapes, ","), "key shapes to load, comma-separated: "+strings.Join(harness.MemoryShapeNames(), ", ")+", each on fresh servers; name@N loads N keys instead of --keys (the default ends with "+harness.LargeStringShape+")")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "keys loaded per shape (not of a name@N shape)")
	fs.IntVar(&cfg.Connections, "connections", cfg.Connections, "loader connections")
	fs.IntVar(&cfg.Pipeline, "pipeline", cfg.Pipeline, "commands in flight per loader connection")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "wait this long after loading before reading memory (Go forces a GC every 2 minutes: 2m10s reads svcdb after one)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "limit for loading one shape into one server")
	fs.StringVar(&markdownFile, "markdown", "", "also write the report as Markdown to `FILE` (for docs/performance.md)")
	fs.StringVar(&jsonFile, "json", "", "also write every reading as JSON to `FILE`")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: svcbench memory [flags]\n\nFor each shape, start svcdb and redis-server, load --keys keys of that shape into each over pipelined connections, and print the bytes per key each took: RSS growth for both, INFO used_memory growth for both, and svcdb's Go heap growth.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	var err error
	if err = servers.apply(); err != nil {
		return err
	}
	cfg.Shapes = nil
	for _, s := range strings.Split(shapes, ",") {
		if s = strings.TrimSpace(strings.ToLower(s)); s != "" {
			cfg.Shapes = append(cfg.Shapes, s)
		}
	}
	if err := servers.check(); err != nil {
		return err
	}
	if !quiet {
		cfg.Progress = stderr
	}
	rep, err := harness.RunMemory(ctx, cfg)
	if rep != nil && len(rep.Results) > 0 {
		err = writeReports(rep, err, stdout, stderr, markdownFile, jsonFile)
	}
	if err == nil {
		if f := rep.Failures(); len(f) > 0 {
			err = fmt.Errorf("%d shape(s) could not be loaded:\n  %s", len(f), strings.Join(f, "\n  "))
		}
	}
	return err
}
