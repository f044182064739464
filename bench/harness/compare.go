package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/bench/proc"
)

// Side names the two servers in reports.
const (
	SideSvcDB = "svcdb"
	SideRedis = "redis"
)

// Sample is one run against one server.
type Sample struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	// P999Ms is the p99.9 latency, known for load generator runs only
	// (redis-benchmark's CSV stops at p99); 0 when unknown.
	P999Ms float64 `json:"p999_ms,omitempty"`
	// CPUUsPerReq is the server's CPU time during the run divided by the
	// requests completed, in microseconds.
	CPUUsPerReq float64 `json:"cpu_us_per_req"`
	Requests    uint64  `json:"requests"`
	WallSec     float64 `json:"wall_sec"`
	ServerCPU   float64 `json:"server_cpu_sec"`
	// ClientCPU is the client's CPU time (redis-benchmark's rusage, or this
	// process's during a load generator run); near WallSec means the client,
	// not the server, was the bottleneck.
	ClientCPU float64 `json:"client_cpu_sec"`
	// OthersCPU is the CPU time everything else took on the benchmark's
	// CPUs during a redis-benchmark run (other processes, the idle second
	// server, the hypervisor's steal): busy time from /proc/stat less the
	// server's, the client's and svcbench's own. Coarse (10 ms ticks);
	// well above zero means the run shared its CPUs.
	OthersCPU float64 `json:"others_cpu_sec,omitempty"`
	Errors    uint64  `json:"errors,omitempty"`
}

// OthersShare is OthersCPU per second of the run: the fraction of one CPU
// that something else used, 0 if unknown.
func (s Sample) OthersShare() float64 {
	if s.WallSec <= 0 || s.OthersCPU <= 0 {
		return 0
	}
	return s.OthersCPU / s.WallSec
}

// Case is one benchmark (a redis-benchmark test at a pipeline depth, or a
// load generator workload) with its samples per server.
type Case struct {
	Name   string `json:"name"`
	Tool   string `json:"tool"` // "redis-benchmark" or "loadgen"
	Detail string `json:"detail"`
	// Suite is the default suite's group the case belongs to, "" for a
	// test run on its own and for load generator workloads.
	Suite string `json:"suite,omitempty"`
	// Gated cases are held to the bar (Config.MinRatio): redis-benchmark's.
	Gated bool `json:"gated,omitempty"`
	// Failure says why the case failed: which server, and what it or
	// redis-benchmark said ("svcdb: Error from server: ERR unknown command
	// ..."). A failed case fails the bar whatever its samples.
	Failure string   `json:"failure,omitempty"`
	SvcDB   []Sample `json:"svcdb"`
	Redis   []Sample `json:"redis"`
	// SvcDBKeys and RedisKeys are the keys a load generator workload added
	// to each server over its rounds (DBSIZE after the last less before the
	// first; meaningless when either read failed): its key range as the
	// servers saw it, 1 for one key.
	SvcDBKeys int64 `json:"svcdb_keys,omitempty"`
	RedisKeys int64 `json:"redis_keys,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Started time.Time `json:"started"`
	Elapsed float64   `json:"elapsed_sec"`
	Machine Machine   `json:"machine"`
	Rounds  int       `json:"rounds"`
	// LoadRounds is the rounds of each load generator workload.
	LoadRounds int    `json:"load_rounds,omitempty"`
	Pinned     bool   `json:"pinned"`
	PinNote    string `json:"pin_note"`
	SvcDBCmd   string `json:"svcdb_cmd"`
	RedisCmd   string `json:"redis_cmd"`
	// MinRatio is the bar the gated cases are held to (Config.MinRatio).
	MinRatio float64 `json:"min_ratio"`
	// MaxOthers is the share of a CPU other processes could take during a
	// run before it counted as disturbed (Config.MaxOthers).
	MaxOthers float64 `json:"max_others"`
	// Notes are caveats about the measurements, for the report's header.
	Notes []string `json:"notes,omitempty"`
	Cases []*Case  `json:"cases"`
}

// Run performs the comparison described by cfg. Every process it starts is
// stopped before it returns, on success, error or ctx cancellation. On error
// it returns the partial report with what was measured so far.
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep = &Report{Started: time.Now(), Rounds: cfg.Rounds, LoadRounds: cfg.loadRounds(), MinRatio: cfg.MinRatio, MaxOthers: cfg.MaxOthers}
	defer func() { rep.Elapsed = time.Since(rep.Started).Seconds() }()

	serverCPUs, clientCPUs, note := pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	rep.Pinned, rep.PinNote = serverCPUs != "", note

	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "svcbench-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(workDir)
	}

	var group proc.Group
	defer func() {
		if serr := group.StopAll(10 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()

	servers := map[string]*proc.Server{}
	for _, side := range []struct {
		name string
		srv  Server
	}{{SideSvcDB, cfg.SvcDB}, {SideRedis, cfg.Redis}} {
		dir := filepath.Join(workDir, side.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rep, err
		}
		s, err := proc.StartServer(ctx, &group, proc.ServerSpec{
			Name: side.name, Path: side.srv.Path, Args: side.srv.Args, CPUs: serverCPUs, Dir: dir,
		}, 30*time.Second)
		if err != nil {
			return rep, err
		}
		servers[side.name] = s
		fmt.Fprintf(progress, "started %s (pid %d) on %s: %s\n", side.name, s.Pid(), s.Addr, s.CommandLine())
	}
	rep.SvcDBCmd = servers[SideSvcDB].CommandLine()
	rep.RedisCmd = servers[SideRedis].CommandLine()
	rep.Machine = describeMachine(ctx, &cfg)

	r := &runner{cfg: &cfg, progress: progress, clientCPUs: clientCPUs, servers: servers, failCases: true,
		maxOthers: cfg.MaxOthers, quietLeft: cfg.QuietBudget}
	if r.benchCPUs, err = benchCPUs(serverCPUs, clientCPUs); err != nil {
		return rep, err
	}
	r.total = 2 * (cfg.Rounds*(len(cfg.Tests)+len(cfg.Suite)+len(cfg.Scripts)+len(cfg.Commands))*len(cfg.Pipelines) + cfg.loadRounds()*len(cfg.Loads))

	if cfg.hasSuite() {
		if r.stdbuf, err = exec.LookPath("stdbuf"); err != nil {
			r.stdbuf = ""
			rep.Notes = append(rep.Notes, "stdbuf (coreutils) not found: the suite's rows have no CPU time per request (redis-benchmark's rows arrive only at its exit)")
		}
		for _, p := range cfg.Pipelines {
			if err := r.runSuite(ctx, rep, p); err != nil {
				return rep, err
			}
		}
	}

	for _, test := range cfg.Tests {
		for _, p := range cfg.Pipelines {
			c := &Case{Name: fmt.Sprintf("%s -P %d", strings.ToUpper(test), p), Tool: "redis-benchmark", Gated: true}
			rep.Cases = append(rep.Cases, c)
			n := cfg.RequestsFor(p)
			if cfg.TargetTime > 0 {
				if n, err = r.calibrate(ctx, c.Name, benchWork{test: test}, p, SideSvcDB, SideRedis); err != nil {
					var be *benchError
					if !errors.As(err, &be) {
						return rep, err
					}
					c.Failure = be.msg
					r.done += 2 * cfg.Rounds
					fmt.Fprintf(progress, "[fail]  %s (calibration): %s\n", c.Name, be.msg)
					continue
				}
			}
			c.Detail = "redis-benchmark " + strings.Join(benchArgs(0, cfg.Clients, n, cfg.KeySpace, test, p)[4:], " ")
			if err := r.rounds(ctx, c, func(ctx context.Context, s *proc.Server) (Sample, error) {
				return r.redisBenchmark(ctx, s, benchWork{test: test}, p, n)
			}); err != nil {
				return rep, err
			}
		}
	}

	for _, sc := range cfg.Scripts {
		if err := r.runScript(ctx, rep, sc); err != nil {
			return rep, err
		}
	}
	for _, cc := range cfg.Commands {
		if err := r.runCommand(ctx, rep, cc); err != nil {
			return rep, err
		}
	}

	if len(cfg.Loads) > 0 {
		restore, err := pinSelf(clientCPUs)
		if err != nil {
			return rep, err
		}
		defer restore()
		if keyMin, keyMax := LoadKeyRange(cfg.KeySpace); cfg.loadsFollowKeySpace() {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the load generator's keys: %s (as redis-benchmark's %s), unless its workload names a range",
				keyRangeLabel(keyMin, keyMax), Mode{KeySpace: cfg.KeySpace}.keysLabel()))
		}
		for i := range cfg.Loads {
			lc := cfg.Loads[i]
			if !cfg.loadKeysGiven(i) {
				lc.KeyMin, lc.KeyMax = LoadKeyRange(cfg.KeySpace)
			}
			c := &Case{Name: loadCaseName(&lc, cfg.loadKeysGiven(i)), Tool: "loadgen", Detail: lc.String()}
			rep.Cases = append(rep.Cases, c)
			before := r.dbsizes(ctx)
			if err := r.roundsOf(ctx, c, cfg.loadRounds(), func(ctx context.Context, s *proc.Server) (Sample, error) {
				return r.load(ctx, s, lc)
			}); err != nil {
				return rep, err
			}
			after := r.dbsizes(ctx)
			c.SvcDBKeys, c.RedisKeys = after[0]-before[0], after[1]-before[1]
		}
	}
	return rep, nil
}

// pinning decides where servers and clients run: the given CPU lists when
// pin is asked for and possible, else "" for both, with a note for reports.
func pinning(pin bool, serverCPUs, clientCPUs string) (servers, clients, note string) {
	if !pin {
		return "", "", "not pinned (--pin=false)"
	}
	if ok, why := proc.CanPin(); !ok {
		return "", "", "not pinned: " + why
	}
	return serverCPUs, clientCPUs, fmt.Sprintf("servers pinned to CPU %s, clients to CPU %s (taskset)", serverCPUs, clientCPUs)
}

// pinSelf pins this process (the in-process load generator, the
// diagnostics scraper) to cpus, a taskset list; "" leaves it alone. The
// returned function restores the previous affinity; it runs when the run's
// numbers are already taken, so a failure to restore has nothing to spoil
// and is dropped.
func pinSelf(cpus string) (restore func(), err error) {
	if cpus == "" {
		return func() {}, nil
	}
	list, err := proc.ParseCPUList(cpus)
	if err != nil {
		return nil, err
	}
	unpin, err := proc.PinSelf(list)
	if err != nil {
		return nil, fmt.Errorf("pinning svcbench to CPU %s: %w", cpus, err)
	}
	return func() { _ = unpin() }, nil
}

// benchCPUs returns the CPUs of both lists, or nil (every CPU) when not
// pinned.
func benchCPUs(serverCPUs, clientCPUs string) ([]int, error) {
	if serverCPUs == "" {
		return nil, nil
	}
	var all []int
	for _, l := range []string{serverCPUs, clientCPUs} {
		cpus, err := proc.ParseCPUList(l)
		if err != nil {
			return nil, err
		}
		for _, c := range cpus {
			if !slices.Contains(all, c) {
				all = append(all, c)
			}
		}
	}
	return all, nil
}

// loadName is a short label for a workload in the table. It leaves out
// the key range, which the report's notes give (the side-by-side table
// joins a workload's rows across modes by this name, each mode's column
// saying its keys).
func loadName(c *loadgen.Config) string {
	return fmt.Sprintf("loadgen %v %c:%c -P %d", c.Ratio, c.SetPattern, c.GetPattern, c.Pipeline)
}

// loadCaseName is a comparison's row name for workload c: loadName, and
// the key range when the workload gave its own (--load "... --key-maximum
// 10000000"), so that it does not share a row with the same workload on
// the key space's keys.
func loadCaseName(c *loadgen.Config, keysGiven bool) string {
	if !keysGiven {
		return loadName(c)
	}
	return loadName(c) + ", " + keyRangeLabel(c.KeyMin, c.KeyMax)
}

// keyRangeLabel describes a load generator key range: "keys 1..100000",
// "key 1 alone".
func keyRangeLabel(keyMin, keyMax uint64) string {
	if keyMin == keyMax {
		return fmt.Sprintf("key %d alone", keyMin)
	}
	return fmt.Sprintf("keys %d..%d", keyMin, keyMax)
}

// dbsizes returns the two servers' DBSIZE (svcdb, redis), -1 for one that
// did not answer: what a workload added to each server is the difference
// across its runs (Case.SvcDBKeys).
func (r *runner) dbsizes(ctx context.Context) [2]int64 {
	out := [2]int64{-1, -1}
	for i, side := range []string{SideSvcDB, SideRedis} {
		if n, err := dbsize(ctx, r.servers[side].Addr); err == nil {
			out[i] = n
		}
	}
	return out
}

type runner struct {
	cfg        *Config
	progress   io.Writer
	clientCPUs string
	// failCases makes a run that fails because of a server's replies (a
	// benchError) fail its case, and the comparison go on; otherwise (the
	// diagnostics comparison) it ends the comparison.
	failCases bool
	// stdbuf is the stdbuf executable that line-buffers redis-benchmark's
	// output during suite runs, "" if there is none.
	stdbuf string
	// benchCPUs are the CPUs the runs use, for OthersCPU: the server and
	// client lists when pinned, nil (every CPU) when not.
	benchCPUs []int
	// maxOthers and retriesLeft: the diagnostics comparison's repeats of
	// disturbed runs (see DiagConfig.MaxOthers).
	maxOthers   float64
	retriesLeft int
	quietLeft   time.Duration
	servers     map[string]*proc.Server
	done        int
	total       int
}

// rounds runs one case Rounds times on each server, svcdb first, alternating.
func (r *runner) rounds(ctx context.Context, c *Case, run func(context.Context, *proc.Server) (Sample, error)) error {
	return r.roundsOf(ctx, c, r.cfg.Rounds, run)
}

// roundsOf is rounds with n rounds.
func (r *runner) roundsOf(ctx context.Context, c *Case, n int, run func(context.Context, *proc.Server) (Sample, error)) error {
	for round := 1; round <= n; round++ {
		for _, side := range []string{SideSvcDB, SideRedis} {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
			s := r.servers[side]
			if r.maxOthers > 0 {
				if err := r.waitQuiet(ctx, r.maxOthers); err != nil {
					return err
				}
			}
			rctx, cancel := context.WithTimeoutCause(ctx, r.cfg.RunTimeout,
				fmt.Errorf("%s against %s: run timeout %v", c.Name, side, r.cfg.RunTimeout))
			sample, err := run(rctx, s)
			cancel()
			if exited, werr := s.Exited(); exited {
				return fmt.Errorf("%s exited during %s (round %d): %v; output:\n%s", side, c.Name, round, werr, s.Output())
			}
			var be *benchError
			if err != nil && r.failCases && ctx.Err() == nil && errors.As(err, &be) {
				c.Failure = side + ": " + be.msg
				fmt.Fprintf(r.progress, "[fail]  %s on %s, round %d: %s\n", c.Name, side, round, be.msg)
				r.done += 2*(n-round) + 1
				if side == SideSvcDB {
					r.done++
				}
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s against %s, round %d: %w", c.Name, side, round, err)
			}
			if side == SideSvcDB {
				c.SvcDB = append(c.SvcDB, sample)
			} else {
				c.Redis = append(c.Redis, sample)
			}
			r.done++
			fmt.Fprintf(r.progress, "[%2d/%d] %-28s %-5s round %d/%d: %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  cpu %6.2f us/req  (%.2f s, others %3.0f%%)\n",
				r.done, r.total, c.Name, side, round, n,
				sample.OpsPerSec, sample.P50Ms, sample.P99Ms, sample.CPUUsPerReq, sample.WallSec, 100*sample.OthersShare())
		}
	}
	return nil
}

// calibrate runs a tenth of RequestsFor(p) against each of sides in turn,
// unrecorded (it also fills the key space and warms them up alike), and
// returns the -n that makes a run against the last side (the baseline) last
// about TargetTime.
func (r *runner) calibrate(ctx context.Context, name string, work benchWork, p int, sides ...string) (int, error) {
	ncal := max(r.cfg.RequestsFor(p)/10, r.cfg.Clients*10)
	var rps float64
	for _, side := range sides {
		rctx, cancel := context.WithTimeoutCause(ctx, r.cfg.RunTimeout,
			fmt.Errorf("calibrating %s against %s: run timeout %v", name, side, r.cfg.RunTimeout))
		s, err := r.redisBenchmark(rctx, r.servers[side], work, p, ncal)
		cancel()
		if err != nil {
			var be *benchError
			if errors.As(err, &be) && ctx.Err() == nil {
				return 0, &benchError{msg: side + ": " + be.msg}
			}
			return 0, fmt.Errorf("calibrating %s against %s: %w", name, side, err)
		}
		rps = s.OpsPerSec // the baseline's, as it runs last
	}
	n := max(twoDigits(rps*r.cfg.TargetTime.Seconds()), r.cfg.Clients*10)
	fmt.Fprintf(r.progress, "[cal]   %-28s %s %.0f ops/s over %d requests: -n %d for %v runs\n",
		name, sides[len(sides)-1], rps, ncal, n, r.cfg.TargetTime)
	return n, nil
}

// twoDigits rounds v to two significant digits (123456 -> 120000).
func twoDigits(v float64) int {
	if v < 100 {
		return int(v)
	}
	scale := math.Pow(10, math.Floor(math.Log10(v))-1)
	return int(math.Round(v/scale) * scale)
}

func (r *runner) redisBenchmark(ctx context.Context, s *proc.Server, work benchWork, p, n int) (Sample, error) {
	return r.redisBenchmarkWith(ctx, s, work, p, n, nil)
}

// redisBenchmarkWith is redisBenchmark with work running alongside: during,
// if not nil, is called inside the CPU accounting window just before
// redis-benchmark starts, and the function it returns right after it ends,
// still inside the window (the diagnostics scraper: what the server spends
// answering it is part of what is measured).
func (r *runner) redisBenchmarkWith(ctx context.Context, s *proc.Server, work benchWork, p, n int, during func() (stop func())) (Sample, error) {
	errsBefore := readErrorCounts(ctx, s.Addr)
	sysBefore, sysErr := proc.ReadCPUTimes(r.benchCPUs)
	selfBefore := selfCPU()
	before, err := proc.ReadCPU(s.Pid())
	if err != nil {
		return Sample{}, err
	}
	var stop func()
	if during != nil {
		stop = during()
	}
	res, err := proc.Run(ctx, proc.Spec{
		Name: "redis-benchmark",
		Path: r.cfg.RedisBenchmark,
		Args: work.args(s.Port, r.cfg.Clients, n, r.cfg.KeySpace, p),
		CPUs: r.clientCPUs,
	})
	if stop != nil {
		stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// The run's own timeout: the server stopped answering.
				return Sample{}, &benchError{msg: "no reply in time: " + context.Cause(ctx).Error()}
			}
			return Sample{}, err
		}
		// The server's doing until shown otherwise: redis-benchmark exits
		// at the first error reply it gets.
		msg := benchFailure(res.Stderr)
		if msg == "" {
			msg = err.Error()
		}
		if _, perr := parseBenchCSV(res.Stdout, work.row()); perr == nil {
			return Sample{}, fmt.Errorf("redis-benchmark failed after its test: %w", err)
		}
		return Sample{}, &benchError{msg: msg}
	}
	after, err := proc.ReadCPU(s.Pid())
	if err != nil {
		return Sample{}, err
	}
	selfAfter := selfCPU()
	var others time.Duration
	if sysAfter, err := proc.ReadCPUTimes(r.benchCPUs); err == nil && sysErr == nil {
		d := sysAfter.Sub(sysBefore)
		others = max(d.Busy+d.Steal-after.Sub(before)-res.CPU-(selfAfter-selfBefore), 0)
	}
	row, err := parseBenchCSV(res.Stdout, work.row())
	if err != nil {
		return Sample{}, err
	}
	if d := readErrorCounts(ctx, s.Addr).since(errsBefore); d.Known && d.Total > 0 {
		return Sample{}, &benchError{msg: fmt.Sprintf(
			"the server counted %d error replies during the run (INFO stats total_error_replies) that redis-benchmark did not report", d.Total)}
	}
	cpu := after.Sub(before)
	return Sample{
		OpsPerSec:   row.OpsPerSec,
		P50Ms:       row.P50Ms,
		P99Ms:       row.P99Ms,
		CPUUsPerReq: cpu.Seconds() * 1e6 / float64(n),
		Requests:    uint64(n),
		WallSec:     res.Wall.Seconds(),
		ServerCPU:   cpu.Seconds(),
		ClientCPU:   res.CPU.Seconds(),
		OthersCPU:   others.Seconds(),
	}, nil
}

func (r *runner) load(ctx context.Context, s *proc.Server, lc loadgen.Config) (Sample, error) {
	lc.Addr = s.Addr
	defer clientThreads(lc.Threads)()
	l, err := loadgen.Dial(ctx, lc)
	if err != nil {
		return Sample{}, err
	}
	defer l.Close()
	// Read counters after the connections are up, so accept() and
	// connection set-up are not charged to the requests.
	sysBefore, sysErr := proc.ReadCPUTimes(r.benchCPUs)
	before, err := proc.ReadCPU(s.Pid())
	if err != nil {
		return Sample{}, err
	}
	selfBefore := selfCPU()
	res, err := l.Run(ctx)
	if err != nil {
		return Sample{}, err
	}
	selfAfter := selfCPU()
	after, err := proc.ReadCPU(s.Pid())
	if err != nil {
		return Sample{}, err
	}
	var others time.Duration
	if sysAfter, err := proc.ReadCPUTimes(r.benchCPUs); err == nil && sysErr == nil {
		d := sysAfter.Sub(sysBefore)
		others = max(d.Busy+d.Steal-after.Sub(before)-(selfAfter-selfBefore), 0)
	}
	sum := res.Summary()
	if sum.Totals.Errors > 0 {
		return Sample{}, &benchError{msg: fmt.Sprintf("%d error replies, first: %s", sum.Totals.Errors, strings.Join(sum.ErrorSamples, "; "))}
	}
	if sum.Totals.Ops == 0 {
		return Sample{}, errors.New("no requests completed")
	}
	cpu := after.Sub(before)
	return Sample{
		OpsPerSec:   sum.Totals.OpsPerSec,
		P50Ms:       sum.Totals.P50Ms,
		P99Ms:       sum.Totals.P99Ms,
		P999Ms:      sum.Totals.P999Ms,
		CPUUsPerReq: cpu.Seconds() * 1e6 / float64(sum.Totals.Ops),
		Requests:    sum.Totals.Ops,
		WallSec:     sum.DurationSec,
		ServerCPU:   cpu.Seconds(),
		ClientCPU:   (selfAfter - selfBefore).Seconds(),
		OthersCPU:   others.Seconds(),
	}, nil
}

// clientThreads makes the in-process load generator run on threads Go
// threads at once (runtime.GOMAXPROCS), as memtier_benchmark's -t runs
// that many threads, each an event loop: without it Go's scheduler spreads
// the client's connections over every CPU, and in defaults mode (no
// taskset) the client then takes the servers' CPU as well as its own, which
// no memtier run does. Pinned, the client's one CPU already limits it. The
// returned function gives the runtime back its default.
func clientThreads(threads int) (restore func()) {
	runtime.GOMAXPROCS(max(threads, 1))
	return runtime.SetDefaultGOMAXPROCS
}

// selfCPU returns this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
