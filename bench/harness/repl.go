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
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/bench/proc"
)

// ReplConfig is one replication comparison (svcbench repl): svcdb with
// svcdb replicas against redis-server with redis-server replicas, in two
// parts.
//
// The throughput part runs, for each count in Replicas, a master and that
// many replicas of each kind (fresh processes, every one on the server
// CPUs), waits until every replica is online, then runs Loads against
// both masters, Rounds times each, alternating, as Run does. After the
// runs each replica must have caught up with its master's offset: a
// master that shed its replicas would otherwise look fast. No bar: it is a
// measurement, and only a failed run or a replica that fell off fails it.
//
// The sync part fills a svcdb master and a redis-server master with
// SyncKeys keys of ValueSize bytes, then, SyncRounds times, for each of
// SyncPairs starts a fresh replica, sends it REPLICAOF and times until its
// INFO replication shows master_link_status:up and
// master_sync_in_progress:0 (the transfer and the replica's load), then
// checks its DBSIZE. Both masters sync diskless (their default;
// redis-server with repl-diskless-sync-delay 0, svcdb has no delay).
//
// DefaultReplConfig fills everything except SvcDB.Path.
type ReplConfig struct {
	// SvcDB and Redis are the servers; every master and replica of a
	// kind is started with its Args (the harness adds a data directory).
	SvcDB, Redis Server
	// Bench gives the pinning, Rounds (runs per case and server) and
	// RunTimeout; its redis-benchmark fields are not used.
	Bench

	// Replicas are the replica counts of the throughput part, each on
	// fresh servers. Default 0, 1, 2. Empty: no throughput part.
	Replicas []int
	// Loads are the load generator workloads run against each master.
	// Default SET:GET 1:1 (memtier's other defaults, 50 connections) at
	// pipeline 1 and 16, 2 s each.
	Loads []loadgen.Config
	// MaxOthers and QuietBudget are Config's: runs disturbed by other
	// processes are left out of medians, and each replica count waits at
	// most QuietBudget for quiet CPUs. Defaults 0.1 and 10 s.
	MaxOthers   float64
	QuietBudget time.Duration

	// SyncKeys is how many keys the sync part loads into each master
	// ("memtier-0" ...), ValueSize their size in bytes. Defaults 1,000,000
	// and 32. SyncKeys 0: no sync part.
	SyncKeys, ValueSize int
	// FillConnections and FillPipeline: the load generator's connections
	// and SETs in flight each while filling. Defaults 4 and 64.
	FillConnections, FillPipeline int
	// SyncRounds is the number of full syncs per pair. Default 3.
	SyncRounds int
	// SyncPairs are the master -> replica kinds timed. Default svcdb ->
	// svcdb, redis -> redis, svcdb -> redis, redis -> svcdb.
	SyncPairs []SyncPair
	// SyncTimeout bounds one full sync; OnlineTimeout the wait for the
	// throughput part's replicas to come online and to catch up. Defaults
	// 2 minutes and 60 s.
	SyncTimeout, OnlineTimeout time.Duration

	// Progress receives one line per run; nil discards them.
	Progress io.Writer
	// WorkDir holds the servers' data directories; "" means a temporary
	// directory removed at the end.
	WorkDir string
}

// SyncPair is a master kind and a replica kind (SideSvcDB or SideRedis).
type SyncPair struct {
	Master  string `json:"master"`
	Replica string `json:"replica"`
}

func (p SyncPair) String() string { return p.Master + " -> " + p.Replica }

// DefaultSyncPairs are ReplConfig's default SyncPairs.
var DefaultSyncPairs = []SyncPair{
	{SideSvcDB, SideSvcDB}, {SideRedis, SideRedis}, {SideSvcDB, SideRedis}, {SideRedis, SideSvcDB},
}

// ParseSyncPair reads "svcdb>redis" (master>replica).
func ParseSyncPair(s string) (SyncPair, error) {
	m, r, ok := strings.Cut(strings.TrimSpace(s), ">")
	p := SyncPair{Master: strings.TrimSpace(m), Replica: strings.TrimSpace(r)}
	sides := []string{SideSvcDB, SideRedis}
	if !ok || !slices.Contains(sides, p.Master) || !slices.Contains(sides, p.Replica) {
		return SyncPair{}, fmt.Errorf("sync pair %q: want master>replica, each svcdb or redis", s)
	}
	return p, nil
}

// DefaultReplConfig returns the defaults described on each field: about 3
// to 4 minutes on a 2-CPU machine.
func DefaultReplConfig() ReplConfig {
	b := defaultBench()
	b.Tests, b.Pipelines = nil, nil
	return ReplConfig{
		Redis:           Server{Path: "/usr/bin/redis-server", Args: slices.Clone(RedisBaselineArgs)},
		Bench:           b,
		Replicas:        []int{0, 1, 2},
		Loads:           DefaultPersistLoads(),
		MaxOthers:       0.1,
		QuietBudget:     10 * time.Second,
		SyncKeys:        1_000_000,
		ValueSize:       32,
		FillConnections: 4,
		FillPipeline:    64,
		SyncRounds:      3,
		SyncPairs:       slices.Clone(DefaultSyncPairs),
		SyncTimeout:     2 * time.Minute,
		OnlineTimeout:   time.Minute,
	}
}

// QuickReplConfig is DefaultReplConfig shrunk to a smoke run of about half
// a minute (svcbench repl --quick, and the tests): one round, short runs,
// 20,000 keys.
func QuickReplConfig() ReplConfig {
	c := DefaultReplConfig()
	c.Rounds = 1
	for i := range c.Loads {
		c.Loads[i].TestTime = 500 * time.Millisecond
		c.Loads[i].Clients = 10
	}
	c.QuietBudget = 2 * time.Second
	c.SyncKeys = 20_000
	c.SyncRounds = 1
	c.SyncTimeout = 30 * time.Second
	c.OnlineTimeout = 30 * time.Second
	return c
}

// Validate checks c and returns every problem found.
func (c *ReplConfig) Validate() error {
	var errs []error
	if c.SvcDB.Path == "" || c.Redis.Path == "" {
		errs = append(errs, errors.New("both servers need a path"))
	}
	if c.Rounds < 1 || c.RunTimeout <= 0 {
		errs = append(errs, fmt.Errorf("rounds %d, run timeout %v: want >= 1 and > 0", c.Rounds, c.RunTimeout))
	}
	for _, n := range c.Replicas {
		if n < 0 || n > 8 {
			errs = append(errs, fmt.Errorf("replicas %d: want 0 to 8", n))
		}
	}
	if len(c.Replicas) > 0 && len(c.Loads) == 0 {
		errs = append(errs, errors.New("replica counts but no load workloads"))
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
	if c.SyncKeys < 0 {
		errs = append(errs, fmt.Errorf("sync keys %d: want >= 0", c.SyncKeys))
	}
	if c.SyncKeys > 0 {
		if c.ValueSize < 1 || c.FillConnections < 1 || c.FillPipeline < 1 || c.SyncRounds < 1 {
			errs = append(errs, fmt.Errorf("value size %d, fill connections %d, fill pipeline %d, sync rounds %d: want >= 1 each",
				c.ValueSize, c.FillConnections, c.FillPipeline, c.SyncRounds))
		}
		if len(c.SyncPairs) == 0 {
			errs = append(errs, errors.New("sync keys but no sync pairs"))
		}
		for _, p := range c.SyncPairs {
			if _, err := ParseSyncPair(p.Master + ">" + p.Replica); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.SyncTimeout <= 0 || c.OnlineTimeout <= 0 {
		errs = append(errs, fmt.Errorf("sync timeout %v, online timeout %v: want > 0", c.SyncTimeout, c.OnlineTimeout))
	}
	if len(c.Replicas) == 0 && c.SyncKeys == 0 {
		errs = append(errs, errors.New("nothing to run: no replica counts and no keys for the sync part"))
	}
	return errors.Join(errs...)
}

// server returns the Server of a side.
func (c *ReplConfig) server(side string) Server {
	if side == SideSvcDB {
		return c.SvcDB
	}
	return c.Redis
}

// replServerArgs are the arguments the harness adds for a master or
// replica of side: redis-server's full sync starts at once
// (repl-diskless-sync-delay 0; its default waits 5 s for more replicas,
// svcdb never waits). Each server's working directory is its own, and
// both keep their files there by default (svcdb's data-dir and
// redis-server's dir are "."), so no directory argument is needed and any
// Redis-protocol server can play svcdb.
func replServerArgs(side string) []string {
	if side == SideSvcDB {
		return nil
	}
	return []string{"--repl-diskless-sync-delay", "0"}
}

// ReplSetup is one replica count of the throughput part: how the masters
// were started and whether their replicas kept up.
type ReplSetup struct {
	Replicas int    `json:"replicas"`
	SvcDBCmd string `json:"svcdb_cmd"`
	RedisCmd string `json:"redis_cmd"`
	// SvcDBCatchUp and RedisCatchUp are the seconds the replicas took,
	// after the last run, to reach their master's offset (as their ACKs
	// show: replicas ACK once a second). Not a comparison: the last run
	// of a round is redis-server's, so svcdb's master has been idle.
	SvcDBCatchUp float64 `json:"svcdb_catch_up_sec"`
	RedisCatchUp float64 `json:"redis_catch_up_sec"`
	// Failure says why the count's results cannot be trusted (a replica
	// that never came online or fell off).
	Failure string `json:"failure,omitempty"`
}

// ReplicaCPU is what a throughput case cost the replicas: their CPU time
// (all of a master's replicas summed) during each run divided by the
// requests the master completed, in microseconds, per run.
type ReplicaCPU struct {
	Case  string    `json:"case"`
	SvcDB []float64 `json:"svcdb_us_per_req"`
	Redis []float64 `json:"redis_us_per_req"`
}

// SyncRun is one timed full sync.
type SyncRun struct {
	Round int     `json:"round"`
	Sec   float64 `json:"sec"`
}

// SyncResult is the full syncs of one pair.
type SyncResult struct {
	SyncPair
	ReplicaCmd string    `json:"replica_cmd"`
	Runs       []SyncRun `json:"runs"`
	Failure    string    `json:"failure,omitempty"`
}

// medianSec is the median sync time, 0 with no runs.
func (s *SyncResult) medianSec() float64 {
	v := make([]Sample, len(s.Runs))
	for i, r := range s.Runs {
		v[i].OpsPerSec = r.Sec
	}
	return Median(v).OpsPerSec
}

// SyncReport is the sync part.
type SyncReport struct {
	Keys      int `json:"keys"`
	ValueSize int `json:"value_size"`
	// FillSec is the time each master took to load the keys.
	FillSec  map[string]float64 `json:"fill_sec"`
	Masters  map[string]string  `json:"master_cmds"`
	Results  []*SyncResult      `json:"results"`
	Failures []string           `json:"failures,omitempty"`
}

// ReplReport is the outcome of RunRepl.
type ReplReport struct {
	Started time.Time    `json:"started"`
	Elapsed float64      `json:"elapsed_sec"`
	Machine Machine      `json:"machine"`
	Rounds  int          `json:"rounds"`
	PinNote string       `json:"pin_note"`
	Setups  []*ReplSetup `json:"setups"`
	// Throughput holds the throughput part's cases of every replica count,
	// named "<n> replicas <case>", ungated.
	Throughput *Report `json:"throughput,omitempty"`
	// ReplicaCPU holds, for each throughput case with replicas, the
	// replicas' CPU per request (the table's cpu column is the master's).
	ReplicaCPU []*ReplicaCPU `json:"replica_cpu,omitempty"`
	Sync       *SyncReport   `json:"sync,omitempty"`
	// Command is the svcbench command line, for the Markdown report.
	Command string `json:"command,omitempty"`
}

// Problems lists what failed, one line each. Empty means every run worked;
// the numbers themselves are never a problem.
func (r *ReplReport) Problems() []string {
	var out []string
	for _, s := range r.Setups {
		if s.Failure != "" {
			out = append(out, fmt.Sprintf("%d replicas: %s", s.Replicas, s.Failure))
		}
	}
	if r.Throughput != nil {
		out = append(out, r.Throughput.Problems()...)
	}
	if s := r.Sync; s != nil {
		out = append(out, s.Failures...)
		for _, p := range s.Results {
			if p.Failure != "" {
				out = append(out, fmt.Sprintf("full sync %s: %s", p.SyncPair, p.Failure))
			}
		}
	}
	return out
}

// RunRepl performs the replication comparison described by cfg. Every
// process it starts is stopped before it returns, on success, error or
// cancellation. A replica that does not come online, falls off or fails a
// sync fails that part (ReplReport.Problems); an error means the
// comparison itself broke, with the partial report.
func RunRepl(ctx context.Context, cfg ReplConfig) (rep *ReplReport, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep = &ReplReport{Started: time.Now(), Rounds: cfg.Rounds}
	defer func() { rep.Elapsed = time.Since(rep.Started).Seconds() }()
	serverCPUs, clientCPUs, note := pinning(cfg.Pin, cfg.ServerCPUs, cfg.ClientCPUs)
	rep.PinNote = note
	rep.Machine = describeMachine(ctx, &Config{SvcDB: cfg.SvcDB, Redis: cfg.Redis, Bench: cfg.Bench})

	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "svcbench-repl-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(workDir)
	}
	restore, err := pinSelf(clientCPUs)
	if err != nil {
		return rep, err
	}
	defer restore()
	cpus, err := benchCPUs(serverCPUs, clientCPUs)
	if err != nil {
		return rep, err
	}
	for _, n := range cfg.Replicas {
		dir := filepath.Join(workDir, "replicas-"+strconv.Itoa(n))
		if err := runReplCount(ctx, &cfg, rep, n, dir, serverCPUs, cpus, progress); err != nil {
			return rep, err
		}
		_ = os.RemoveAll(dir)
	}
	if cfg.SyncKeys > 0 {
		if err := runSync(ctx, &cfg, rep, filepath.Join(workDir, "sync"), serverCPUs, progress); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// replNode starts one server of side in its own directory under dir and
// says so on progress.
func replNode(ctx context.Context, g *proc.Group, cfg *ReplConfig, side, name, dir, cpus string, progress io.Writer) (*proc.Server, error) {
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	srv := cfg.server(side)
	s, err := proc.StartServer(ctx, g, proc.ServerSpec{
		Name: name, Path: srv.Path, Args: append(slices.Clone(srv.Args), replServerArgs(side)...), CPUs: cpus, Dir: d,
	}, 30*time.Second)
	if err == nil {
		fmt.Fprintf(progress, "started %s (pid %d) on %s\n", name, s.Pid(), s.Addr)
	}
	return s, err
}

// replicaOf sends REPLICAOF to the master at port.
func replicaOf(ctx context.Context, addr string, port int) error {
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.do("REPLICAOF", "127.0.0.1", strconv.Itoa(port)); err != nil {
		return fmt.Errorf("REPLICAOF: %w", err)
	}
	return nil
}

// runReplCount is the throughput part for one replica count: a master and
// n replicas of each kind, the loads against both masters, and the
// replicas' catch-up at the end.
func runReplCount(ctx context.Context, cfg *ReplConfig, rep *ReplReport, n int, dir, serverCPUs string, cpus []int, progress io.Writer) (err error) {
	var group proc.Group
	defer func() {
		if serr := group.StopAll(10 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()
	setup := &ReplSetup{Replicas: n}
	rep.Setups = append(rep.Setups, setup)
	masters := map[string]*proc.Server{}
	replicas := map[string][]*proc.Server{}
	for _, side := range []string{SideSvcDB, SideRedis} {
		m, err := replNode(ctx, &group, cfg, side, side+"-master", dir, serverCPUs, progress)
		if err != nil {
			return err
		}
		masters[side] = m
		for i := 1; i <= n; i++ {
			r, err := replNode(ctx, &group, cfg, side, fmt.Sprintf("%s-replica%d", side, i), dir, serverCPUs, progress)
			if err != nil {
				return err
			}
			if err := replicaOf(ctx, r.Addr, m.Port); err != nil {
				return fmt.Errorf("%s replica %d: %w", side, i, err)
			}
			replicas[side] = append(replicas[side], r)
		}
	}
	setup.SvcDBCmd, setup.RedisCmd = masters[SideSvcDB].CommandLine(), masters[SideRedis].CommandLine()
	fmt.Fprintf(progress, "[repl]  %d replicas: svcdb master %s, redis master %s\n", n, masters[SideSvcDB].Addr, masters[SideRedis].Addr)
	for _, side := range []string{SideSvcDB, SideRedis} {
		if _, failure, err := waitCaughtUp(ctx, masters[side], replicas[side], cfg.OnlineTimeout); err != nil {
			return err
		} else if failure != "" {
			setup.Failure = side + ": " + failure
			fmt.Fprintf(progress, "[repl]  %d replicas FAILED: %s\n", n, setup.Failure)
			return nil
		}
	}

	if rep.Throughput == nil {
		rep.Throughput = &Report{Started: rep.Started, Machine: rep.Machine, Rounds: cfg.Rounds,
			Pinned: serverCPUs != "", PinNote: rep.PinNote, MaxOthers: cfg.MaxOthers}
	}
	bc := &Config{Bench: cfg.Bench}
	r := &runner{cfg: bc, progress: progress, servers: masters, failCases: true, benchCPUs: cpus,
		maxOthers: cfg.MaxOthers, quietLeft: cfg.QuietBudget, total: 2 * cfg.Rounds * len(cfg.Loads)}
	for i := range cfg.Loads {
		lc := cfg.Loads[i]
		c := &Case{Name: fmt.Sprintf("%d replicas %s", n, loadName(&lc)), Tool: "loadgen", Detail: lc.String()}
		rep.Throughput.Cases = append(rep.Throughput.Cases, c)
		rc := &ReplicaCPU{Case: c.Name}
		if err := r.rounds(ctx, c, func(ctx context.Context, s *proc.Server) (Sample, error) {
			side := SideRedis
			if s == masters[SideSvcDB] {
				side = SideSvcDB
			}
			before, err := cpuOf(replicas[side])
			if err != nil {
				return Sample{}, err
			}
			sample, err := r.load(ctx, s, lc)
			if err != nil || n == 0 {
				return sample, err
			}
			after, err := cpuOf(replicas[side])
			if err != nil {
				return Sample{}, err
			}
			us := (after - before).Seconds() * 1e6 / float64(sample.Requests)
			if side == SideSvcDB {
				rc.SvcDB = append(rc.SvcDB, us)
			} else {
				rc.Redis = append(rc.Redis, us)
			}
			return sample, nil
		}); err != nil {
			return err
		}
		if n > 0 {
			rep.ReplicaCPU = append(rep.ReplicaCPU, rc)
		}
	}
	for _, side := range []string{SideSvcDB, SideRedis} {
		sec, failure, err := waitCaughtUp(ctx, masters[side], replicas[side], cfg.OnlineTimeout)
		if err != nil {
			return err
		}
		if failure != "" && setup.Failure == "" {
			setup.Failure = side + " after the runs: " + failure
		}
		if side == SideSvcDB {
			setup.SvcDBCatchUp = sec
		} else {
			setup.RedisCatchUp = sec
		}
	}
	if n > 0 {
		fmt.Fprintf(progress, "[repl]  %d replicas caught up after the runs: svcdb in %.2f s, redis in %.2f s\n", n, setup.SvcDBCatchUp, setup.RedisCatchUp)
	}
	return nil
}

// cpuOf is the CPU time the servers used so far, summed.
func cpuOf(servers []*proc.Server) (time.Duration, error) {
	var total time.Duration
	for _, s := range servers {
		c, err := proc.ReadCPU(s.Pid())
		if err != nil {
			return 0, err
		}
		total += c.Total()
	}
	return total, nil
}

// waitCaughtUp waits until master has exactly the replicas given, every
// one online (INFO replication's slaveN state) with an ACK offset at the
// master's master_repl_offset, and every replica reports
// master_link_status:up. It returns the seconds that took, or the failure
// when timeout passed first (with what was last seen).
func waitCaughtUp(ctx context.Context, master *proc.Server, replicas []*proc.Server, timeout time.Duration) (sec float64, failure string, err error) {
	start := time.Now()
	var last string
	for {
		ok, seen, err := caughtUp(ctx, master, replicas)
		if err != nil {
			return 0, "", err
		}
		if ok {
			return time.Since(start).Seconds(), "", nil
		}
		last = seen
		if time.Since(start) > timeout {
			return 0, fmt.Sprintf("replicas not online and caught up within %v: %s", timeout, last), nil
		}
		select {
		case <-ctx.Done():
			return 0, "", context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// caughtUp is one look of waitCaughtUp; seen describes what it found.
func caughtUp(ctx context.Context, master *proc.Server, replicas []*proc.Server) (ok bool, seen string, err error) {
	if exited, werr := master.Exited(); exited {
		return false, "", fmt.Errorf("master %s exited: %v; output:\n%s", master.Addr, werr, master.Output())
	}
	m, err := info(ctx, master.Addr, "replication")
	if err != nil {
		return false, "", err
	}
	offset, _ := infoInt(m, "master_repl_offset")
	if c, _ := infoInt(m, "connected_slaves"); c != int64(len(replicas)) {
		return false, fmt.Sprintf("connected_slaves:%d, want %d", c, len(replicas)), nil
	}
	for i := range replicas {
		line := m["slave"+strconv.Itoa(i)]
		f := parseInfoFields(line)
		if f["state"] != "online" || f["offset"] != strconv.FormatInt(offset, 10) {
			return false, fmt.Sprintf("slave%d:%s (master_repl_offset %d)", i, line, offset), nil
		}
	}
	for _, r := range replicas {
		if exited, werr := r.Exited(); exited {
			return false, "", fmt.Errorf("replica %s exited: %v; output:\n%s", r.Addr, werr, r.Output())
		}
		ri, err := info(ctx, r.Addr, "replication")
		if err != nil {
			return false, "", err
		}
		if ri["master_link_status"] != "up" {
			return false, fmt.Sprintf("replica %s master_link_status:%s", r.Addr, ri["master_link_status"]), nil
		}
	}
	return true, "", nil
}

// parseInfoFields reads "k=v,k=v" (an INFO slaveN value).
func parseInfoFields(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// runSync is the sync part: both masters filled, then each pair's full
// syncs, the pairs interleaved round by round.
func runSync(ctx context.Context, cfg *ReplConfig, rep *ReplReport, dir, serverCPUs string, progress io.Writer) (err error) {
	var group proc.Group
	defer func() {
		if serr := group.StopAll(10 * time.Second); serr != nil && err == nil {
			err = fmt.Errorf("stopping servers: %w", serr)
		}
	}()
	sr := &SyncReport{Keys: cfg.SyncKeys, ValueSize: cfg.ValueSize, FillSec: map[string]float64{}, Masters: map[string]string{}}
	rep.Sync = sr
	masters := map[string]*proc.Server{}
	for _, side := range []string{SideSvcDB, SideRedis} {
		needed := slices.ContainsFunc(cfg.SyncPairs, func(p SyncPair) bool { return p.Master == side })
		if !needed {
			continue
		}
		m, err := replNode(ctx, &group, cfg, side, side+"-master", dir, serverCPUs, progress)
		if err != nil {
			return err
		}
		sr.Masters[side] = m.CommandLine()
		sec, failure, err := fillKeys(ctx, m.Addr, cfg.SyncKeys, cfg.ValueSize, cfg.FillConnections, cfg.FillPipeline)
		if err != nil {
			return fmt.Errorf("%s master: %w", side, err)
		}
		if failure != "" {
			sr.Failures = append(sr.Failures, side+" master: "+failure)
			fmt.Fprintf(progress, "[sync]  %s master FAILED: %s\n", side, failure)
			continue
		}
		sr.FillSec[side] = sec
		masters[side] = m
		fmt.Fprintf(progress, "[sync]  %s master: %d keys of %d bytes in %.2f s\n", side, cfg.SyncKeys, cfg.ValueSize, sec)
	}
	for _, p := range cfg.SyncPairs {
		sr.Results = append(sr.Results, &SyncResult{SyncPair: p})
	}
	for round := 1; round <= cfg.SyncRounds; round++ {
		for i, res := range sr.Results {
			m := masters[res.Master]
			if m == nil || res.Failure != "" {
				continue
			}
			sec, failure, cmd, err := syncOnce(ctx, cfg, m, res.Replica, filepath.Join(dir, fmt.Sprintf("r%d-%d", round, i)), serverCPUs, progress)
			if err != nil {
				return fmt.Errorf("full sync %s, round %d: %w", res.SyncPair, round, err)
			}
			res.ReplicaCmd = cmd
			if failure != "" {
				res.Failure = fmt.Sprintf("round %d: %s", round, failure)
				fmt.Fprintf(progress, "[sync]  %-16s round %d/%d FAILED: %s\n", res.SyncPair, round, cfg.SyncRounds, failure)
				continue
			}
			res.Runs = append(res.Runs, SyncRun{Round: round, Sec: sec})
			fmt.Fprintf(progress, "[sync]  %-16s round %d/%d: %.2f s\n", res.SyncPair, round, cfg.SyncRounds, sec)
		}
	}
	return nil
}

// syncPoll is how often a syncing replica's INFO replication is read.
const syncPoll = 20 * time.Millisecond

// syncOnce starts a fresh replica of kind side in dir, sends REPLICAOF
// master and times the full sync; the replica is stopped before it
// returns. failure is the servers' doing; err means the measurement broke.
func syncOnce(ctx context.Context, cfg *ReplConfig, master *proc.Server, side, dir, cpus string, progress io.Writer) (sec float64, failure, cmd string, err error) {
	var group proc.Group
	defer func() {
		_ = group.StopAll(10 * time.Second)
		_ = os.RemoveAll(dir)
	}()
	r, err := replNode(ctx, &group, cfg, side, side+"-replica", dir, cpus, progress)
	if err != nil {
		return 0, "", "", err
	}
	cmd = r.CommandLine()
	c, err := dialRESP(ctx, r.Addr)
	if err != nil {
		return 0, "", cmd, err
	}
	defer c.Close()
	start := time.Now()
	if _, err := c.do("REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port)); err != nil {
		return 0, "REPLICAOF: " + err.Error(), cmd, nil
	}
	for {
		select {
		case <-ctx.Done():
			return 0, "", cmd, context.Cause(ctx)
		case <-time.After(syncPoll):
		}
		if exited, werr := r.Exited(); exited {
			return 0, fmt.Sprintf("the replica exited: %v; output:\n%s", werr, r.Output()), cmd, nil
		}
		rp, err := c.do("INFO", "replication")
		if err != nil {
			// -LOADING is fine: INFO is allowed while loading in Redis,
			// but a server may refuse it; look again.
			var er errReply
			if errors.As(err, &er) {
				continue
			}
			return 0, "", cmd, err
		}
		m := parseInfo(string(rp.Str))
		if m["master_link_status"] == "up" && m["master_sync_in_progress"] == "0" {
			break
		}
		if time.Since(start) > cfg.SyncTimeout {
			return 0, fmt.Sprintf("not in sync after %v (master_link_status:%s, master_sync_in_progress:%s)",
				cfg.SyncTimeout, m["master_link_status"], m["master_sync_in_progress"]), cmd, nil
		}
	}
	sec = time.Since(start).Seconds()
	keys, err := dbsize(ctx, r.Addr)
	if err != nil {
		return 0, "", cmd, err
	}
	if keys != int64(cfg.SyncKeys) {
		return 0, fmt.Sprintf("DBSIZE %d on the replica after the sync, want %d", keys, cfg.SyncKeys), cmd, nil
	}
	return sec, "", cmd, nil
}

// fillKeys loads keys keys of valueSize bytes into addr with the load
// generator (SETs only, each connection its own slice of the key range,
// pipelined) and checks DBSIZE. failure is the server's doing (error
// replies, a wrong count).
func fillKeys(ctx context.Context, addr string, keys, valueSize, conns, pipeline int) (sec float64, failure string, err error) {
	fill := loadgen.DefaultConfig()
	fill.Addr = addr
	fill.Ratio = loadgen.Ratio{Set: 1, Get: 0}
	fill.SetPattern, fill.GetPattern = loadgen.Parallel, loadgen.Parallel
	fill.KeyMin, fill.KeyMax = 0, uint64(keys-1)
	fill.DataSize = valueSize
	fill.Pipeline = pipeline
	fill.Clients, fill.Threads = conns, 1
	fill.Requests = (keys + conns - 1) / conns
	start := time.Now()
	res, err := loadgen.RunOnce(ctx, fill)
	sec = time.Since(start).Seconds()
	if err != nil {
		return 0, "", fmt.Errorf("filling: %w", err)
	}
	failure, err = checkFilled(ctx, addr, res, keys, "filling")
	if err != nil || failure != "" {
		return 0, failure, err
	}
	return sec, "", nil
}
