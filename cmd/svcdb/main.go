// Command svcdb is the server: it parses flags, loads the configuration
// (defaults < preset < TOML file < environment < flags), wires the shard
// runtime, the event loops, logging and tracing together, and turns signals
// and SHUTDOWN into a graceful stop. Logic lives in the packages it wires;
// this file only connects them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/logging"
	"github.com/svcdb/svcdb/core/replication"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/scripting"
	"github.com/svcdb/svcdb/core/slowlog"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/core/tracing"
	"github.com/svcdb/svcdb/diaghttp"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/profiles"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/persist"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// Exit codes: 0 clean stop, 1 runtime failure (e.g. the port is taken),
// 2 bad command line or configuration.
func run(args, environ []string, stdout, stderr io.Writer) int {
	reg := config.New()
	fs := flag.NewFlagSet("svcdb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgPath, profile, strategyName, cpuprofile string
		generate, check, showVersion               bool
		flagVals                                   [][2]string
	)
	fs.StringVar(&cfgPath, "config", "", "TOML configuration file (see --generate-config)")
	fs.StringVar(&profile, "profile", "", "embedded preset loaded before --config: dev, production or benchmark")
	fs.BoolVar(&generate, "generate-config", false, "print the full default configuration as TOML, one comment per key, and exit")
	fs.BoolVar(&check, "check-config", false, "validate the configuration, print what is wrong, exit 0 (valid) or 2")
	for _, f := range reg.Flags() {
		name := f.Flag
		fs.Func(name, f.Usage, func(v string) error {
			flagVals = append(flagVals, [2]string{name, v})
			return nil
		})
	}
	fs.StringVar(&strategyName, "drain-strategy", "run-to-completion", "who executes shard queues: run-to-completion or dedicated")
	fs.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file (for performance work)")
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "svcdb %s: a Redis-protocol database server\n\nUsage: svcdb [flags]\n\nFlags:\n", version)
		fs.VisitAll(func(f *flag.Flag) {
			kind, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(stderr, "  --%s %s\n    \t%s", f.Name, kind, usage)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				fmt.Fprintf(stderr, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(stderr)
		})
		fmt.Fprintln(stderr, "\nEvery parameter can also be set in the TOML file or as SVC_<TABLE>_<KEY>; see docs/configuration.md.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "svcdb: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	if showVersion {
		fmt.Fprintf(stdout, "svcdb %s (%s, Redis %s compatible)\n", version, runtime.Version(), netloop.RedisVersion)
		return 0
	}
	if generate {
		fmt.Fprint(stdout, reg.GenerateTOML())
		return 0
	}
	strategy, err := shard.ParseStrategy(strategyName)
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: --drain-strategy: %v\n", err)
		return 2
	}

	// Configuration: defaults < preset < file < environment < flags.
	var errs []error
	if profile != "" {
		data, err := profiles.FS.ReadFile(profile + ".toml")
		if err != nil {
			fmt.Fprintf(stderr, "svcdb: --profile %q: no such preset (dev, production, benchmark)\n", profile)
			return 2
		}
		if err := reg.LoadTOML("profile "+profile, data); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, reg.LoadStartup(cfgPath, environ, flagVals)...)
	if len(errs) == 0 { // the users, checked now so that --check-config sees them
		if _, err := buildACL(reg, command.New()); err != nil {
			errs = append(errs, err)
		}
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "svcdb: %v\n", e)
	}
	if check {
		if len(errs) > 0 {
			return 2
		}
		fmt.Fprintln(stdout, "configuration OK")
		return 0
	}
	if len(errs) > 0 {
		return 2
	}

	// Logging and tracing first, so everything after can report.
	var secrets atomic.Pointer[[]string]
	loadSecrets := func(string) error {
		var s []string
		for _, name := range []string{"requirepass", "http-token"} {
			if v := reg.String(name); v != "" {
				s = append(s, v)
			}
		}
		secrets.Store(&s)
		return nil
	}
	_ = loadSecrets("")
	reg.OnChange("requirepass", loadSecrets)
	reg.OnChange("http-token", loadSecrets)
	lg, err := logging.New(logging.Options{
		Level:     reg.String("loglevel"),
		Format:    reg.String("logging-format"),
		Output:    reg.String("logging-output"),
		FilePath:  reg.String("logging-file-path"),
		MaxSizeMB: int(reg.Int("logging-rotation-max-size-mb")),
		Frequency: reg.String("logging-rotation-frequency"),
		MaxFiles:  int(reg.Int("logging-rotation-max-files")),
		Stdout:    stdout,
		Stderr:    stderr,
		Secrets:   func() []string { return *secrets.Load() },
	})
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: logging: %v\n", err)
		return 2
	}
	defer lg.Close()
	logger := lg.Logger
	reg.OnChange("loglevel", lg.SetLevel)
	otel.SetErrorHandler(logging.NewOTelErrorHandler(logger))
	warnSecretExposure(reg, logger)
	tracer, err := tracing.New(context.Background(), tracing.Options{
		Enabled:         reg.Bool("tracing-enabled"),
		Endpoint:        reg.String("tracing-otlp-endpoint"),
		SamplingRate:    reg.Float("tracing-sampling-rate"),
		ServiceName:     reg.String("tracing-service-name"),
		ServiceVersion:  version,
		PerRequestSpans: reg.Bool("logging-per-request-spans"),
	})
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: tracing: %v\n", err)
		return 2
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracer.Shutdown(ctx); err != nil {
			logger.Warn("flushing traces", "err", err)
		}
	}()
	reg.OnChange("tracing-sampling-rate", func(string) error { return tracer.SetSamplingRate(reg.Float("tracing-sampling-rate")) })
	reg.OnChange("logging-per-request-spans", func(string) error {
		tracer.SetPerRequestSpans(reg.Bool("logging-per-request-spans"))
		return nil
	})

	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "svcdb: --cpuprofile: %v\n", err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "svcdb: --cpuprofile: %v\n", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	procs := spareP()                   // before the loops and the shards size themselves
	defer startGCFloor(reg)()           // before the keyspace grows: the first goal is the floor
	defer startHugePages(reg, logger)() // before the keyspace: its heap is advised as it grows
	table := command.New()
	users, err := buildACL(reg, table) // checked above; files may have changed since
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: %v\n", err)
		return 2
	}
	rt, err := shard.New(shard.Config{
		Shards:         int(reg.Int("shards")),
		Strategy:       strategy,
		CountHeapWaste: true, // this process is the server: its heap is the keyspace's (shard/heapwaste.go)
		OnPanic: func(cmd string, r any, stack []byte) {
			logger.Error("BUG: command handler panicked", "command", cmd, "panic", fmt.Sprint(r), "stack", string(stack))
		},
	}, table)
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: %v\n", err)
		return 2
	}
	rt.Start()
	defer startMemDecay(reg, rt, logger)()
	life := new(lifecycle.Tracker)
	// Persistence: the dataset loads after the port opens, so clients get
	// -LOADING meanwhile (Load below), as Redis.
	pm := persist.New(rt, reg, logger)
	pm.BeginLoading()
	for _, name := range []string{"save", "stop-writes-on-bgsave-error"} {
		reg.OnChange(name, func(string) error { pm.Refresh(); return nil })
	}
	reg.OnChange("appendonly", func(string) error { return pm.SetAppendOnly(reg.Bool("appendonly")) })
	reg.OnChange("appendfsync", func(string) error { pm.SetFsyncPolicy(); return nil })
	// Replication: a master until REPLICAOF; the link's goroutine drives
	// the runtime through a ReplicaTarget (docs/replication.md).
	var srv *netloop.Server
	repl := replication.New(replication.Config{
		Target:        rt.NewReplicaTarget(),
		Logger:        logger,
		Dir:           reg.String("data-dir"),
		ListeningPort: func() int { return srv.Port() },
		Auth:          func() (string, string) { return reg.String("masteruser"), reg.String("masterauth") },
		MaxBulkLen:    func() int64 { return reg.Size("proto-max-bulk-len") },
		Source:        rt, // the master side: full syncs from the point-in-time snapshot
		BacklogSize:   int(reg.Size("repl-backlog-size")),
		DisklessSync:  func() bool { return reg.Bool("repl-diskless-sync") },
		NewClientID:   func() int64 { return srv.NewClientID() },
		Priority:      func() int { return int(reg.Int("replica-priority")) },
		Announced:     func() bool { return reg.Bool("replica-announced") },
		Announce: func() (string, int) {
			return reg.String("replica-announce-ip"), int(reg.Int("replica-announce-port"))
		},
		AfterFullSync: func() {
			// The replica's own append-only file holds a FLUSHALL and not the
			// loaded keys: rewrite it from the dataset, as Redis restarts AOF
			// after a sync.
			// A rewrite already running (the one appendonly yes starts at
			// boot, or an earlier sync's) holds a base from before the
			// FLUSHALL: a new one starts once it is done.
			if reg.Bool("appendonly") {
				go func() {
					for range 36000 { // an hour, at 100 ms
						_, err := pm.BGRewriteAOF()
						if err == nil || !strings.Contains(err.Error(), "already in progress") {
							if err != nil {
								logger.Warn("rewriting the append-only file after a full sync", "err", err)
							}
							return
						}
						time.Sleep(100 * time.Millisecond)
					}
				}()
			}
		},
	})
	replicaLimit := func(v string) error { // client-output-buffer-limit's replica class
		_, l, _ := config.OutputBufferLimits(v)
		repl.SetReplicaBufferLimit(l.Hard, l.Soft, l.SoftSeconds)
		return nil
	}
	_ = replicaLimit(reg.String("client-output-buffer-limit"))
	reg.OnChange("client-output-buffer-limit", replicaLimit)
	reg.OnChange("repl-backlog-size", func(string) error { repl.SetBacklogSize(int(reg.Size("repl-backlog-size"))); return nil })
	masterCron := func(string) error { // the master side's cron and shared full syncs
		repl.SetBacklogTTL(reg.Int("repl-backlog-ttl"))
		repl.SetPingPeriod(reg.Int("repl-ping-replica-period"))
		repl.SetDisklessSyncDelay(time.Duration(reg.Int("repl-diskless-sync-delay"))*time.Second,
			int(reg.Int("repl-diskless-sync-max-replicas")))
		return nil
	}
	_ = masterCron("")
	for _, name := range []string{"repl-backlog-ttl", "repl-ping-replica-period", "repl-diskless-sync-delay", "repl-diskless-sync-max-replicas"} {
		reg.OnChange(name, masterCron)
	}
	minReplicas := func(string) error {
		repl.SetMinReplicas(reg.Int("min-replicas-to-write"), reg.Int("min-replicas-max-lag"))
		return nil
	}
	_ = minReplicas("")
	reg.OnChange("min-replicas-to-write", minReplicas)
	reg.OnChange("min-replicas-max-lag", minReplicas)
	repl.SetReadOnly(reg.Bool("replica-read-only"))
	repl.SetServeStale(reg.Bool("replica-serve-stale-data"))
	reg.OnChange("replica-read-only", func(string) error { repl.SetReadOnly(reg.Bool("replica-read-only")); return nil })
	reg.OnChange("replica-serve-stale-data", func(string) error {
		repl.SetServeStale(reg.Bool("replica-serve-stale-data"))
		return nil
	})
	srv = netloop.New(netloop.Config{
		Bind:             reg.String("bind"),
		Port:             int(reg.Int("port")),
		EventLoops:       int(reg.Int("event-loops")), // 0: netloop.DefaultEventLoops(GOMAXPROCS)
		LoopSpin:         time.Duration(reg.Int("svc-loop-spin-us")) * time.Microsecond,
		QueryBufferLimit: int(reg.Size("client-query-buffer-limit")),
		ProtoLimits:      resp.Limits{MaxBulkLen: reg.Size("proto-max-bulk-len")},
		Params:           reg,
		ACL:              users,
		ConfigFile:       reg.ConfigFile(),
		Version:          version,
		Logger:           logger,
		Lifecycle:        life,
		Tracer:           tracer,
		Persistence:      pm,
		Replication:      repl,
	}, table, rt)
	// Diagnostic bundles exist with or without the HTTP server: DEBUG BUNDLE
	// uses them too.
	src := diagSource{life: life, srv: srv, rt: rt, reg: reg, table: table, logs: lg, repl: repl}
	bundles := diaghttp.NewBundles(diaghttp.BundleConfig{
		Dir:        bundleDir(reg),
		MaxBundles: int(reg.Int("debug-bundle-max-bundles")),
		TTL:        reg.Duration("debug-bundle-ttl"),
		Version:    version,
		Logger:     logger,
		Secrets:    func() []string { return *secrets.Load() },
	}, src)
	reg.OnChange("debug-bundle-max-bundles", func(string) error {
		bundles.SetMaxBundles(int(reg.Int("debug-bundle-max-bundles")))
		return nil
	})
	reg.OnChange("debug-bundle-ttl", func(string) error {
		bundles.SetTTL(reg.Duration("debug-bundle-ttl"))
		return nil
	})
	bundles.Start()
	defer bundles.Stop() // on the early returns; the shutdown below stops it first
	srv.SetBundles(bundles)
	if unapplied := unappliedParams(reg); len(unapplied) > 0 {
		logger.Error("BUG: mutable parameters that CONFIG SET would accept and nothing applies", "params", unapplied)
	}
	// Signals are caught before anything announces itself: a SIGTERM sent as
	// soon as "listening on" is printed must shut down gracefully, not kill.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	// The diagnostics server starts first, so probes see "starting" (503 on
	// readiness) until the Redis port accepts.
	var diag *diaghttp.Server
	if reg.Bool("http-enabled") {
		diag = diaghttp.New(diaghttp.Config{
			Bind:  reg.String("http-bind"),
			Port:  int(reg.Int("http-port")),
			Token: reg.String("http-token"),
			// ProtectMetrics: /metrics and /status/json need the token too.
			ProtectMetrics: reg.Bool("http-protect-metrics"),
			Logger:         logger,
			Version:        version,
			Bundles:        bundles,
		}, src)
		if err := diag.Start(); err != nil {
			fmt.Fprintf(stderr, "svcdb: http: %v\n", err)
			rt.Close()
			return 1
		}
		logger.Info("diagnostics HTTP server listening", "addr", diag.Addr())
		fmt.Fprintf(stdout, "svcdb diagnostics on http://%s\n", diag.Addr())
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintf(stderr, "svcdb: %v\n", err)
		rt.Close()
		if diag != nil {
			_ = diag.Shutdown(context.Background())
		}
		return 1
	}
	if err := pm.Load(); err != nil {
		logger.Error("fatal error loading the dataset", "err", err)
		fmt.Fprintf(stderr, "svcdb: %v\n", err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Stop(ctx)
		cancel()
		rt.Close()
		if diag != nil {
			_ = diag.Shutdown(context.Background())
		}
		return 1
	}
	// replicaof from the file, the environment or a CONFIG REWRITE after
	// REPLICAOF: follow that master once our own data is loaded, as Redis.
	if host, port, ok := strings.Cut(reg.String("replicaof"), " "); ok {
		p, _ := strconv.Atoi(port) // checked by the registry
		_ = repl.SetMaster(host, p)
	}
	life.Set(lifecycle.Ready)
	pm.Start()
	logger.Info("svcdb ready to accept connections", "addr", srv.Addr(), "version", version,
		"shards", rt.NumShards(), "drain_strategy", strategy.String(), "gomaxprocs", procs, "config_file", reg.ConfigFile(), "pid", os.Getpid())
	fmt.Fprintf(stdout, "svcdb listening on %s\n", srv.Addr())

	select {
	case sig := <-sigs:
		logger.Warn("received signal, shutting down", "signal", sig.String())
	case <-srv.ShutdownRequested():
	}
	go func() { // a second signal exits at once
		<-sigs
		os.Exit(1)
	}()
	// A bundle being generated (up to 300 s) is cancelled first, so its
	// client gets an error reply before the connections close.
	bundles.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Stop(ctx); err != nil { // readiness 503 from here on (Draining)
		logger.Error("stopping the network side", "err", err)
	}
	// In-flight commands are done and their replies flushed: the final
	// snapshot (when save rules are set, or SHUTDOWN SAVE) and the
	// append-only file's last fsync happen here, then liveness turns 503 too.
	repl.Close() // the link stops before the final save: no command lands after it
	if err := pm.Close(srv.ShutdownSave(pm.SaveRulesSet())); err != nil {
		logger.Error("error saving the dataset before exiting", "err", err)
	}
	rt.Close()
	life.Set(lifecycle.ShuttingDown)
	if diag != nil { // last, so liveness answers 503 until the very end
		if err := diag.Shutdown(ctx); err != nil {
			logger.Warn("stopping the diagnostics server", "err", err)
		}
	}
	logger.Info("svcdb is now ready to exit, bye bye")
	return 0
}

// diagSource is what the diagnostics server reads: snapshots only.
type diagSource struct {
	life  *lifecycle.Tracker
	srv   *netloop.Server
	rt    *shard.Runtime
	reg   *config.Registry
	table *command.Table
	logs  *logging.Logger
	repl  *replication.Replica
}

func (d diagSource) Replication() replication.Status { return d.repl.Status() }
func (d diagSource) Lifecycle() lifecycle.State      { return d.life.Load() }
func (d diagSource) Net() netloop.Stats              { return d.srv.Stats() }
func (d diagSource) Shards() []shard.Snapshot        { return d.rt.Snapshots() }
func (d diagSource) MaxMemoryBytes() int64           { return d.reg.Size("maxmemory") } // follows CONFIG SET
func (d diagSource) Config() []config.Entry          { return d.reg.Entries() }
func (d diagSource) ACLUsers() []acl.UserSummary     { return d.srv.ACLUsers() }
func (d diagSource) Clients(limit int) (int, []netloop.ClientInfo) {
	return d.srv.Clients(limit)
}

// WatchKeyspace and NotifyKeyspaceEvents serve the debug UI's Keyspace
// events panel (diaghttp.KeyspaceWatcher).
func (d diagSource) WatchKeyspace(pattern string, dur time.Duration, limit int, stop <-chan struct{}) ([]netloop.KeyspaceEvent, int64, error) {
	return d.srv.WatchKeyspace(pattern, dur, limit, stop)
}
func (d diagSource) NotifyKeyspaceEvents() string     { return d.srv.NotifyKeyspaceEvents() }
func (d diagSource) CommandStats() *cmdstats.Snapshot { return d.srv.CommandStats() }
func (d diagSource) CommandName(id int) string        { return d.table.ByID(id).FullName }
func (d diagSource) StatusJSON() []byte               { return d.srv.StatusJSON() }

func (d diagSource) CommandCallCounts(dst []int64) []int64 { return d.srv.CommandCallCounts(dst) }
func (d diagSource) RunID() string                         { return d.srv.RunID() }
func (d diagSource) RedisAddr() string                     { return d.srv.Addr() } // safe while starting
func (d diagSource) Slowlog() *slowlog.Log                 { return d.srv.Slowlog() }
func (d diagSource) Latency() *latency.Monitor             { return d.srv.Latency() }
func (d diagSource) InfoText(sections ...string) string    { return d.srv.InfoText(sections...) }
func (d diagSource) SlowScripts(n int) []scripting.RunStat { return d.srv.SlowScripts(n) }
func (d diagSource) RecentLogs(n int) []string             { return d.logs.Recent(n) }

// Persistence is the persistence manager's state (through the status
// collector, so /metrics and /status/json agree), read at scrape time.
func (d diagSource) Persistence() status.Persistence { return d.srv.PersistenceStatus() }

var _ diaghttp.PersistenceSource = diagSource{} // /metrics must see persistence

// bundleDir is [debug-bundle] dir, or <[server] data-dir>/bundles, made
// absolute so DEBUG BUNDLE and the logs show where the files are.
func bundleDir(reg *config.Registry) string {
	dir := reg.String("debug-bundle-dir")
	if dir == "" {
		dir = filepath.Join(reg.String("data-dir"), "bundles")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

// appliedLater are mutable parameters without an OnChange hook: the
// hotshards-* values are read on demand by DEBUG HOTSHARDS and INFO, the
// status-* ones by the status collector (STATUS JSON, /status/json);
// client-output-buffer-limit is read when the server starts; the rest belong to features of
// later issues (persistence), which CONFIG SET
// records for them. Every other mutable parameter must have an OnChange hook;
// the process tests fail on the "BUG:" line otherwise.
var appliedLater = []string{
	"tcp-keepalive",
	"hotshards-enabled", "hotshards-hot-threshold-percent", "hotshards-warm-threshold-percent", "hotshards-default-period-secs",
	"status-memory-warning-percent", "status-connection-warning-percent",
	"client-output-buffer-limit",
	"set-max-listpack-entries", // Redis 7.2's; 7.0 sets are intset or hashtable
	"hz",
	"aof-load-truncated", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "rdbcompression", // read when used
	"masteruser", "masterauth", // read at each connection to the master
	"repl-diskless-sync",                    // read at each full sync
	"replica-priority", "replica-announced", // read at each INFO
	"replica-announce-ip", "replica-announce-port", // read at each connection to the master
	// Its one accepted value, yes, is what RESTORE always does: nothing to apply.
	"sanitize-dump-payload",
}

// unappliedParams lists mutable parameters without a hook that are not in
// appliedLater: a parameter CONFIG SET would accept and silently ignore.
func unappliedParams(reg *config.Registry) []string {
	var out []string
	for _, name := range reg.Unhooked() {
		if !slices.Contains(appliedLater, name) {
			out = append(out, name)
		}
	}
	return out
}

// warnSecretExposure logs where a secret is easier to read than it should
// be: given as a flag (every user sees it in ps and /proc/<pid>/cmdline,
// while the environment is readable only by the process owner), or in a
// configuration file that group or others may read. Names only, never values.
func warnSecretExposure(reg *config.Registry, logger *slog.Logger) {
	if names := reg.SecretsFrom(config.SourceFlag); len(names) > 0 {
		logger.Warn("secrets given as command-line flags are visible to every user of this machine (ps, /proc/<pid>/cmdline); "+
			"pass them in the environment (SVC_SERVER_REQUIREPASS, SVC_HTTP_TOKEN) or in a configuration file only its owner can read",
			"params", names)
	}
	path := reg.ConfigFile()
	if path == "" || len(reg.SecretsFrom(config.SourceFile)) == 0 {
		return
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		logger.Warn("the configuration file holds secrets and other users may read it; chmod 600 it (CONFIG REWRITE writes it 0600)",
			"file", path, "mode", fmt.Sprintf("%#o", st.Mode().Perm()), "params", reg.SecretsFrom(config.SourceFile))
	}
}
