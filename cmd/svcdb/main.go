// Command svcdb is the server: it parses flags, wires the shard runtime and the
// event loops together, and turns signals and SHUTDOWN into a graceful stop.
// Logic lives in the packages it wires; this file only connects them.
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
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// DefaultShards is the shard count when --shards is not given. Measured on
// 2 cores (docs/performance.md): 1, 4 and 16 shards perform alike within
// noise under the run-to-completion strategy; 16 keeps token contention
// between loops rare on larger machines at no measurable cost.
const DefaultShards = 16

type options struct {
	port        int
	bind        string
	shards      int
	eventLoops  int
	strategy    string
	requirepass string
	maxclients  int
	timeout     time.Duration
	loglevel    string
	cpuprofile  string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("svcdb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var showVersion bool
	fs.IntVar(&o.port, "port", 6379, "TCP port to listen on (0 picks a free port and prints it)")
	fs.StringVar(&o.bind, "bind", "127.0.0.1", "address to listen on")
	fs.IntVar(&o.shards, "shards", DefaultShards, fmt.Sprintf("number of keyspace shards (1..%d)", shard.MaxShards))
	fs.IntVar(&o.eventLoops, "event-loops", runtime.GOMAXPROCS(0), "number of network event loops; the default is the number of CPUs this process may use")
	fs.StringVar(&o.strategy, "drain-strategy", "run-to-completion", "who executes shard queues: run-to-completion or dedicated")
	fs.StringVar(&o.requirepass, "requirepass", "", "password clients must AUTH with (empty: none)")
	fs.IntVar(&o.maxclients, "maxclients", 10000, "maximum number of connected clients")
	fs.DurationVar(&o.timeout, "timeout", 0, "close clients idle for this long (0: never)")
	fs.StringVar(&o.loglevel, "loglevel", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file (for performance work)")
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
	strategy, err := shard.ParseStrategy(o.strategy)
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: --drain-strategy: %v\n", err)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.loglevel)); err != nil {
		fmt.Fprintf(stderr, "svcdb: --loglevel: %v\n", err)
		return 2
	}
	if o.eventLoops < 1 || o.port < 0 || o.port > 65535 || o.maxclients < 1 {
		fmt.Fprintf(stderr, "svcdb: --event-loops and --maxclients must be >= 1 and --port within 0..65535\n")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
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

	table := command.New()
	rt, err := shard.New(shard.Config{
		Shards:   o.shards,
		Strategy: strategy,
		OnPanic: func(cmd string, r any, stack []byte) {
			logger.Error("BUG: command handler panicked", "command", cmd, "panic", fmt.Sprint(r), "stack", string(stack))
		},
	}, table)
	if err != nil {
		fmt.Fprintf(stderr, "svcdb: %v\n", err)
		return 2
	}
	rt.Start()
	life := new(lifecycle.Tracker)
	srv := netloop.New(netloop.Config{
		Bind:        o.bind,
		Port:        o.port,
		EventLoops:  o.eventLoops,
		MaxClients:  o.maxclients,
		RequirePass: o.requirepass,
		IdleTimeout: o.timeout,
		Version:     version,
		Logger:      logger,
		Lifecycle:   life,
	}, table, rt)
	if err := srv.Start(); err != nil {
		fmt.Fprintf(stderr, "svcdb: %v\n", err)
		rt.Close()
		return 1
	}
	logger.Info("svcdb ready to accept connections", "addr", srv.Addr(), "version", version,
		"shards", o.shards, "event_loops", o.eventLoops, "drain_strategy", strategy.String(), "pid", os.Getpid())
	fmt.Fprintf(stdout, "svcdb listening on %s\n", srv.Addr())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-sigs:
		logger.Warn("received signal, shutting down", "signal", sig.String())
	case <-srv.ShutdownRequested():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Stop(ctx); err != nil {
		logger.Error("stopping the network side", "err", err)
	}
	rt.Close()
	logger.Info("svcdb is now ready to exit, bye bye")
	return 0
}
