package harness

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
)

// Server is how to start one side of the comparison. The harness adds
// "--port N --bind 127.0.0.1" in front of Args.
type Server struct {
	Path string
	Args []string
}

// RedisBaselineArgs are the redis-server arguments for the baseline: no
// persistence, in the foreground.
var RedisBaselineArgs = []string{"--save", "", "--appendonly", "no", "--daemonize", "no"}

// Tests are the redis-benchmark tests the harness can run one at a time
// (-t): every test of the default suite that has a -t name of its own.
var Tests = suiteSelects(DefaultSuite)

// Bench is what both comparisons (Config and DiagConfig) share: the
// redis-benchmark runs, how they are sized and where they are pinned.
type Bench struct {
	// RedisBenchmark is the redis-benchmark executable.
	RedisBenchmark string

	// Pin asks for servers on ServerCPUs and clients (redis-benchmark and
	// the in-process load generator) on ClientCPUs. It is ignored, with a
	// note in the report, when taskset is missing or fewer than two CPUs are
	// usable. Pinning the load generator pins this whole process for the
	// duration of Run.
	Pin                    bool
	ServerCPUs, ClientCPUs string

	// Rounds is the number of runs per case and server; the report shows
	// medians. Default 3.
	Rounds int

	// Tests and Pipelines select the redis-benchmark cases run one test at
	// a time (-t, -P); either empty means none. Pipelines also gives the
	// depths of Config.Suite.
	Tests     []string
	Pipelines []int
	// Requests is redis-benchmark's -n at pipeline 1; at pipeline P it is
	// Requests × min(P, 10), since pipelining multiplies throughput by
	// roughly that much. Default 200000. With TargetTime set, a tenth of it
	// is the size of the calibration runs instead.
	Requests int
	// TargetTime, when positive, sizes -n per case so a run lasts about
	// this long: an unrecorded calibration run against each server (which
	// also warms both up alike) measures the baseline's throughput, and -n
	// becomes that rate × TargetTime, to two significant digits. Fixed
	// ratios cannot do this: MSET costs ten SETs, and a VM may run at half
	// the speed of the machine the defaults were chosen on. Default 2.5 s;
	// 0 uses RequestsFor as is.
	TargetTime time.Duration
	// Clients is -c (default 50) and KeySpace is -r (default 100000; 0:
	// no -r, every request of a test on one key).
	Clients, KeySpace int

	// RunTimeout bounds each single run. Default 5 minutes.
	RunTimeout time.Duration
}

// Config is one comparison. DefaultConfig fills everything except SvcDB.
type Config struct {
	// SvcDB is the server under test; Redis the baseline.
	SvcDB, Redis Server
	Bench

	// Suite is redis-benchmark's default suite (DefaultSuite), run at each
	// of Pipelines: each group of tests is one redis-benchmark invocation
	// per round and server, and each test in it a case. Empty means none.
	Suite []SuiteGroup
	// SuiteTestTime sizes the suite's runs: an unrecorded calibration run
	// of each group on each server measures the baseline's rates, and the
	// group's -n becomes its median rate × SuiteTestTime, so a test of
	// median cost lasts about this long, and its fastest test at least
	// half of it (suiteShortest). Both servers always get the same -n.
	// Default 1 s; 0 uses RequestsFor(p) × the group's Share.
	SuiteTestTime time.Duration

	// MinRatio is the bar for redis-benchmark cases (the suite's and
	// single tests'): svcdb's ops/s at least MinRatio × redis-server's, and
	// no error from either server. The report flags every case that misses
	// it (Report.Problems). Default 0.9; 0 checks errors only.
	MinRatio float64

	// MaxOthers is how much of a CPU other processes (and the hypervisor's
	// steal) may take on the benchmark's CPUs during a run before the run
	// counts as disturbed: disturbed runs are left out of a case's medians
	// when both servers have undisturbed ones (see Report.Rows), and before
	// each recorded run the harness waits for quiet CPUs (QuietBudget).
	// Default 0.1; 0 turns both off.
	MaxOthers float64
	// QuietBudget bounds the time the whole comparison may wait for quiet
	// CPUs before its runs. Default 60 s.
	QuietBudget time.Duration

	// Scripts are Lua scripts run with EVALSHA at each of Pipelines; empty
	// (DefaultConfig's) means none. svcbench compare runs DefaultScripts
	// unless --scripts=false.
	Scripts []ScriptCase

	// Commands are single commands (with their setup) run at each of
	// Pipelines after the scripts, held to MinRatio; empty (DefaultConfig's)
	// means none. svcbench compare runs DefaultCommands unless
	// --commands=false.
	Commands []CommandCase

	// Loads are the load generator workloads (Addr is filled in per server).
	// Empty means no load generator runs. Their key range follows KeySpace
	// as redis-benchmark's keys do (LoadKeyRange: -r N is keys 1..N, 0 is
	// key 1 alone), except for the workloads LoadKeysGiven marks.
	Loads []loadgen.Config
	// LoadKeysGiven marks, by index into Loads, the workloads whose key range
	// was given explicitly (svcbench compare's --load with --key-minimum or
	// --key-maximum): they keep KeyMin..KeyMax whatever KeySpace is. Missing
	// entries are false.
	LoadKeysGiven []bool
	// LoadRounds is the number of runs per workload and server; 0 means
	// Rounds. Default 5: a workload's p99 and p99.9 move with single
	// stalls of either server or of the client (docs/performance.md,
	// "memtier's p99 pinned"), and one pair of 3 s runs put the same
	// build's pinned pipeline-16 p99 ratio anywhere in 0.66-1.52, the
	// first run from an empty keyspace most often the outlier; the median
	// of five keeps one such run from deciding it.
	LoadRounds int

	// Progress receives one line per run; nil discards them.
	Progress io.Writer
	// WorkDir holds the servers' working directories; "" means a temporary
	// directory removed at the end.
	WorkDir string
}

// DefaultLoad is the memtier-like default workload of a comparison:
// memtier_benchmark's defaults (1:10 SET:GET, random keys over 0..10M, which
// a comparison replaces by its KeySpace's range, LoadKeyRange,
// 32-byte values, 50 clients per thread, pipeline 1) scaled to a 2-CPU
// machine, where the client gets one CPU: 1 thread instead of memtier's 4
// (memtier sizes threads to the client's cores), so 50 connections, as
// redis-benchmark's -c 50; and bounded to 3 s instead of 10000 requests per
// client so a round takes as long as a redis-benchmark run. It is also what
// a --load workload starts from.
func DefaultLoad() loadgen.Config {
	c := loadgen.DefaultConfig()
	c.Threads = 1
	c.TestTime = 3 * time.Second
	return c
}

// LoadKeyRange is the load generator's key range for redis-benchmark's -r
// keySpace: keys 1..keySpace, as many keys as -r N gives redis-benchmark;
// 0 (no -r: one key per test) is key 1 alone.
func LoadKeyRange(keySpace int) (keyMin, keyMax uint64) {
	return 1, uint64(max(keySpace, 1))
}

// loadKeysGiven reports whether Loads[i]'s key range was given explicitly.
func (c *Config) loadKeysGiven(i int) bool {
	return i < len(c.LoadKeysGiven) && c.LoadKeysGiven[i]
}

// loadsFollowKeySpace reports whether any of Loads takes its key range
// from KeySpace.
func (c *Config) loadsFollowKeySpace() bool {
	for i := range c.Loads {
		if !c.loadKeysGiven(i) {
			return true
		}
	}
	return false
}

// DefaultLoads are the load generator workloads of a comparison:
// DefaultLoad, and the same with 16 requests in flight per connection.
func DefaultLoads() []loadgen.Config {
	a, b := DefaultLoad(), DefaultLoad()
	b.Pipeline = 16
	return []loadgen.Config{a, b}
}

// defaultBench returns the defaults described on Bench's fields.
func defaultBench() Bench {
	return Bench{
		RedisBenchmark: "/usr/bin/redis-benchmark",
		Pin:            true,
		ServerCPUs:     "0",
		ClientCPUs:     "1",
		Rounds:         3,
		Pipelines:      []int{1, 16},
		Requests:       200_000,
		TargetTime:     2500 * time.Millisecond,
		Clients:        50,
		KeySpace:       100_000,
		RunTimeout:     5 * time.Minute,
	}
}

// DefaultConfig returns the defaults described on each field.
func DefaultConfig() Config {
	return Config{
		Redis:         Server{Path: "/usr/bin/redis-server", Args: slices.Clone(RedisBaselineArgs)},
		Bench:         defaultBench(),
		Suite:         CloneSuite(DefaultSuite),
		SuiteTestTime: time.Second,
		MinRatio:      0.9,
		MaxOthers:     0.1,
		QuietBudget:   time.Minute,
		Loads:         DefaultLoads(),
		LoadRounds:    5,
	}
}

// RequestsFor returns redis-benchmark's -n at pipeline p.
func (b *Bench) RequestsFor(p int) int { return b.Requests * min(max(p, 1), 10) }

// validate appends b's problems to errs. withRuns says redis-benchmark runs
// will happen, so its path and sizes must be usable.
func (b *Bench) validate(errs []error, withRuns bool) []error {
	if b.Rounds < 1 {
		errs = append(errs, fmt.Errorf("rounds %d: want >= 1", b.Rounds))
	}
	for _, t := range b.Tests {
		if !slices.Contains(Tests, t) {
			errs = append(errs, fmt.Errorf("test %q: want one of %s", t, strings.Join(Tests, ", ")))
		}
	}
	for _, p := range b.Pipelines {
		if p < 1 {
			errs = append(errs, fmt.Errorf("pipeline %d: want >= 1", p))
		}
	}
	if withRuns {
		if b.RedisBenchmark == "" {
			errs = append(errs, errors.New("no redis-benchmark path"))
		}
		if b.Requests < 1 || b.Clients < 1 || b.KeySpace < 0 {
			errs = append(errs, fmt.Errorf("requests %d, clients %d, keyspace %d: want >= 1 each (keyspace 0: one key)", b.Requests, b.Clients, b.KeySpace))
		}
	}
	if b.TargetTime < 0 {
		errs = append(errs, fmt.Errorf("target time %v: want >= 0", b.TargetTime))
	}
	if b.RunTimeout <= 0 {
		errs = append(errs, fmt.Errorf("run timeout %v: want > 0", b.RunTimeout))
	}
	return errs
}

// hasRuns reports whether b selects any redis-benchmark case.
func (b *Bench) hasRuns() bool { return len(b.Tests) > 0 && len(b.Pipelines) > 0 }

// hasSuite reports whether c runs the default suite.
func (c *Config) hasSuite() bool { return len(c.Suite) > 0 && len(c.Pipelines) > 0 }

// loadRounds returns LoadRounds, or Rounds when it is 0.
func (c *Config) loadRounds() int {
	if c.LoadRounds > 0 {
		return c.LoadRounds
	}
	return c.Rounds
}

// Validate checks c and returns every problem found.
func (c *Config) Validate() error {
	var errs []error
	if c.SvcDB.Path == "" || c.Redis.Path == "" {
		errs = append(errs, errors.New("both servers need a path"))
	}
	errs = c.Bench.validate(errs, c.hasRuns() || c.hasSuite() || len(c.Scripts) > 0 || len(c.Commands) > 0)
	if c.LoadRounds < 0 {
		errs = append(errs, fmt.Errorf("load rounds %d: want >= 0 (0: --rounds)", c.LoadRounds))
	}
	if c.SuiteTestTime < 0 || c.MinRatio < 0 || c.MaxOthers < 0 || c.QuietBudget < 0 {
		errs = append(errs, fmt.Errorf("suite test time %v, min ratio %v, max others %v, quiet budget %v: want >= 0",
			c.SuiteTestTime, c.MinRatio, c.MaxOthers, c.QuietBudget))
	}
	for _, g := range c.Suite {
		if len(g.Tests) == 0 || g.Share <= 0 || len(suiteSelects([]SuiteGroup{g})) == 0 {
			errs = append(errs, fmt.Errorf("suite group %q: want tests, one with a -t name at least, and a share > 0", g.Name))
		}
	}
	for i := range c.Loads {
		l := c.Loads[i]
		l.Addr = "127.0.0.1:1" // filled in per server
		if err := l.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("load workload %d: %w", i+1, err))
		}
	}
	for _, sc := range c.Scripts {
		if sc.Name == "" || sc.Body == "" || len(sc.Args) == 0 {
			errs = append(errs, fmt.Errorf("script case %q: want a name, a body and EVALSHA's numkeys at least", sc.Name))
		}
	}
	for _, cc := range c.Commands {
		if cc.Name == "" || len(cc.Command) == 0 || slices.ContainsFunc(cc.Setup, func(cmd []string) bool { return len(cmd) == 0 }) {
			errs = append(errs, fmt.Errorf("command case %q: want a name, a command and no empty setup command", cc.Name))
		}
	}
	if (len(c.Scripts) > 0 || len(c.Commands) > 0) && len(c.Pipelines) == 0 {
		errs = append(errs, errors.New("script and command cases need pipeline depths"))
	}
	if len(c.Loads) == 0 && !c.hasRuns() && !c.hasSuite() && len(c.Scripts) == 0 && len(c.Commands) == 0 {
		errs = append(errs, errors.New("nothing to run: no redis-benchmark tests and no load workloads"))
	}
	return errors.Join(errs...)
}
