package netloop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/logging"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/core/scripting"
	"github.com/svcdb/svcdb/core/slowlog"
	"github.com/svcdb/svcdb/core/tracing"
	"github.com/svcdb/svcdb/netloop/clientmem"
	"github.com/svcdb/svcdb/netloop/pubsub"
	"github.com/svcdb/svcdb/shard"
)

// Config is what the network side needs. Zero values mean the documented default.
type Config struct {
	Bind        string        // listen address; default 127.0.0.1
	Port        int           // TCP port; 0 picks a free one (see Server.Addr)
	EventLoops  int           // default: DefaultEventLoops(runtime.GOMAXPROCS(0))
	LoopSpin    time.Duration // svc-loop-spin-us: a loop's longest spin before it sleeps; 0 = none
	MaxClients  int           // default 10000, as Redis
	RequirePass string        // empty: no AUTH needed
	IdleTimeout time.Duration // close clients idle this long; 0 = never (Redis' timeout 0)
	// EnableDebugCommand is enable-debug-command without a registry: "no"
	// (default), "yes" or "local".
	EnableDebugCommand string
	// ProtectedMode is protected-mode without a registry: "yes" (default) or
	// "no".
	ProtectedMode string
	// LocalPeer decides which client addresses count as local for protected
	// mode and enable-debug-command local. nil: loopback addresses, as Redis.
	// Tests set it to see a 127.0.0.1 client as a remote one.
	LocalPeer func(netip.Addr) bool
	// OutputSoftLimit pauses parsing while this many reply bytes wait to be
	// written to one client; default 1 MiB.
	OutputSoftLimit int
	// QueryBufferLimit closes a client whose unparsed input exceeds it, as
	// Redis' client-query-buffer-limit; default 1 GiB.
	QueryBufferLimit int
	// MaxBatch caps the commands queued in one batch (the in-flight cap);
	// default 128.
	MaxBatch    int
	ProtoLimits resp.Limits
	Version     string // svcdb's version, for INFO
	ConfigFile  string // for INFO server
	// Params is the parameter registry behind CONFIG GET/SET/REWRITE. When set,
	// maxclients, timeout, requirepass, client-query-buffer-limit and
	// proto-max-bulk-len come from it (and follow CONFIG SET) and the
	// MaxClients, RequirePass, IdleTimeout, QueryBufferLimit and
	// ProtoLimits.MaxBulkLen fields are ignored.
	Params *config.Registry
	// ACL holds the users, loaded by the caller (aclfile, configured users)
	// after the default user took requirepass. nil: a fresh ACL whose
	// default user takes requirepass here.
	ACL       *acl.ACL
	Logger    *slog.Logger
	Lifecycle *lifecycle.Tracker
	// Tracer makes per-request spans when its per-request switch is on; nil
	// means no tracing.
	Tracer *tracing.Tracer
	// Persistence runs SAVE, BGSAVE, BGREWRITEAOF and LASTSAVE, fills INFO
	// persistence, and makes commands wait (-LOADING) or refuses writes
	// (-MISCONF) as it says. nil: a server without files (tests).
	Persistence Persistence
	// Replication is this node's replication role: REPLICAOF, ROLE, INFO
	// replication and a replica's refusals (-READONLY ...). nil: a
	// standalone master that refuses REPLICAOF (tests).
	Replication Replication
	// OnPanic is told about a panic in loop-side code (always a bug; the
	// connection is closed and the server keeps running). May be nil.
	OnPanic func(recovered any)
}

// DefaultEventLoops is the loop count for procs CPUs (GOMAXPROCS, which
// follows taskset and the cgroup quota): one per CPU less one, at least one.
// The CPU left over runs what the loops wake (the Go runtime's threads, the
// garbage collector, the kernel's loopback path) and, where the clients run
// on the same machine, the client. With a loop on every CPU, loops and
// client are more runnable threads than CPUs, and a loop waits kernel time
// slices for one: on 2 CPUs with redis-benchmark beside the server, one loop
// against two had the lower p99 in 11 of 12 cases, 3-12x fewer voluntary
// switches and a third to a half of the run-queue wait per request, and two
// loops more ops/s only where the server is the bottleneck
// (docs/performance.md, "The defaults mode's tail"). Redis' advice for
// io-threads is the same: leave a core spare.
func DefaultEventLoops(procs int) int { return max(1, procs-1) }

func (c *Config) setDefaults() {
	if c.Bind == "" {
		c.Bind = "127.0.0.1"
	}
	if c.EventLoops <= 0 {
		c.EventLoops = DefaultEventLoops(runtime.GOMAXPROCS(0))
	}
	if c.MaxClients <= 0 {
		c.MaxClients = 10000
	}
	if c.OutputSoftLimit <= 0 {
		c.OutputSoftLimit = 1 << 20
	}
	if c.QueryBufferLimit <= 0 {
		c.QueryBufferLimit = 1 << 30
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 128
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LocalPeer == nil {
		c.LocalPeer = isLoopbackPeer
	}
	if c.Lifecycle == nil {
		c.Lifecycle = new(lifecycle.Tracker)
	}
}

// RedisVersion is the Redis version svcdb is compatible with; HELLO and INFO
// report it as redis_version so clients enable the features they expect.
const RedisVersion = "7.0.15"

// Server runs the event loops.
type Server struct {
	gnet.BuiltinEventEngine

	cfg   Config
	table *command.Table
	rt    *shard.Runtime
	log   *slog.Logger
	life  *lifecycle.Tracker

	engine  gnet.Engine
	addr    string
	port    int
	started time.Time
	runID   string
	replID  string // INFO replication master_replid: random per start, as Redis
	booted  chan struct{}
	stopped chan struct{}
	runErr  error

	nextID    atomic.Int64
	connected atomic.Int64

	registryMu sync.Mutex
	registry   map[int64]*client

	pausedMu   sync.Mutex
	paused     map[*client]struct{}
	resumeKick chan struct{}

	// dropped counts the bytes of large query buffers let go since the last
	// collection; releaseKick wakes memoryReleaser (querybuf.go).
	dropped     atomic.Int64
	releaseKick chan struct{}

	stats    serverStats
	cmem     *clientmem.Tracker // client eviction, maxmemory-clients (clientcmd.go)
	pubsub   pubsub.Registry    // Pub/Sub registry (pubsub.go, netloop/pubsub)
	psLimits pubsub.Limits      // client-output-buffer-limit's pubsub class (pubsub.go)
	track    trackGlue          // client-side caching's tables (tracking.go, netloop/tracking)
	mon      monitorHub         // MONITOR's clients (monitor.go)
	// clientPause is CLIENT PAUSE's state (pause.go).
	clientPause pauseState
	// notifyOn is notify-keyspace-events' classes (notify.go).
	notifyOn atomic.Uint32
	params   *config.Registry

	// cmdStats holds one recorder per event loop (loopState.rec).
	cmdStats *cmdstats.Set
	loops    loops // per event loop: command statistics, deferred replies (writeback.go)
	live     liveParams
	// localByID runs connection and server commands by command ID
	// (connection.go); localErr is why it could not be built, returned by
	// Start.
	localByID []localHandler
	localErr  error
	// debugCmd is the table's DEBUG, compared by pointer in process;
	// debugPolicy is enable-debug-command (immutable, read at start).
	debugCmd    *command.Command
	debugPolicy uint8

	// slowlog and latency are written by every loop (SLOWLOG, LATENCY);
	// their settings follow the registry (bindParams).
	slowlog *slowlog.Log
	latency *latency.Monitor

	shutdownOnce sync.Once
	shutdownReq  chan struct{}
	shutdownSave atomic.Int32 // SHUTDOWN SAVE: 1, NOSAVE: -1, neither: 0

	acl       *acl.ACL     // users, permissions, ACL LOG (acl.go)
	authFails authFailures // refusals by reason (acl.go)

	// scripts is the Lua engine and script cache (scripting.go).
	scripts     *scripting.Engine
	scriptClock scriptClock // the running script, for -BUSY and SCRIPT KILL

	// bundles is DEBUG BUNDLE's service, set by SetBundles (bundlecmd.go).
	bundles atomic.Pointer[bundleMakerBox]
}

// serverStats are totals that outlive connections: a closing client adds its
// counters here; live clients' counters are summed at read time.
type serverStats struct {
	connectionsReceived atomic.Int64
	rejected            atomic.Int64 // every refused connection
	rejectedShutdown    atomic.Int64 // those refused because the server was shutting down
	commands            atomic.Int64
	netIn               atomic.Int64
	netOut              atomic.Int64
	protocolErrors      atomic.Int64
	panics              atomic.Int64
	opsSampler          opsSampler
	base                atomic.Pointer[statTotals] // CONFIG RESETSTAT's baseline
}

// New builds a server over an existing shard runtime.
func New(cfg Config, table *command.Table, rt *shard.Runtime) *Server {
	cfg.setDefaults()
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	s := &Server{
		cfg:         cfg,
		table:       table,
		rt:          rt,
		log:         cfg.Logger,
		life:        cfg.Lifecycle,
		runID:       hex.EncodeToString(id),
		replID:      randomHex(20),
		booted:      make(chan struct{}),
		stopped:     make(chan struct{}),
		registry:    make(map[int64]*client),
		paused:      make(map[*client]struct{}),
		resumeKick:  make(chan struct{}, 1),
		releaseKick: make(chan struct{}, 1),
		cmdStats:    cmdstats.NewSet(table.Len()),
		loops:       loops{m: make(map[gnet.EventLoop]*loopState)},
		shutdownReq: make(chan struct{}),
	}
	// Built with defaults; bindParams applies the registry's values and
	// keeps them current.
	s.slowlog = slowlog.New(128, 10*time.Millisecond, slowlog.DefaultMaxArgLen)
	s.latency = latency.New(0)
	s.acl = cfg.ACL
	if s.acl == nil {
		s.acl = acl.New(table)
		s.acl.SetRequirePass(requirePassOf(cfg))
	}
	rt.ReportLatency(s.latency)
	s.localByID, s.localErr = buildLocal(table, rt, localHandlers())
	s.debugCmd = table.Lookup([]byte("debug"))
	s.cmem = clientmem.New(s.evictClient)
	s.bindParams(cfg.Params)
	s.initPubSub()
	s.initMonitor()
	s.scripts = newScriptEngine(s)
	rt.SetFunctionLibraries(functionLibraries{s}) // functions_persist.go
	s.initTracking()
	return s
}

// Slowlog is the server's slow-command log (SLOWLOG, /debug/api/slowlog).
// Safe for concurrent use.
func (s *Server) Slowlog() *slowlog.Log { return s.slowlog }

// Latency is the server's latency monitor (LATENCY, /debug/api/latency).
// Safe for concurrent use.
func (s *Server) Latency() *latency.Monitor { return s.latency }

// Start listens and runs the loops in the background; it returns once the
// port accepts connections, or with the error that stopped it.
func (s *Server) Start() error {
	if s.localErr != nil {
		return s.localErr // a command without a handler (connection.go)
	}
	port := s.cfg.Port
	if port == 0 {
		// Every loop binds its own reuse-port socket, so port 0 would give each
		// a different port: pick one free port first.
		ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Bind, "0"))
		if err != nil {
			return err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		// CONFIG GET port reports the port really bound.
		if err := s.params.Set("port", strconv.Itoa(port), config.SourceFlag); err != nil {
			return err
		}
	}
	s.port = port
	s.addr = net.JoinHostPort(s.cfg.Bind, strconv.Itoa(port))
	s.started = time.Now()
	go s.resumer()
	go s.memoryReleaser()
	go s.cmem.Run(s.stopped)
	go func() {
		defer close(s.stopped)
		s.runErr = gnet.Run(s, "tcp://"+s.addr,
			gnet.WithMulticore(true),
			gnet.WithNumEventLoop(s.cfg.EventLoops),
			gnet.WithReusePort(runtime.GOOS == "linux"),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithReadBufferCap(64<<10),
			gnet.WithLogger(logging.NewGnetAdapter(s.log)),
			gnet.WithTicker(true),
			gnet.WithLoopSpin(s.cfg.LoopSpin), // bounded by the loop's busy time (third_party/gnet, patch 4)
		)
	}()
	select {
	case <-s.booted:
		s.warnExposure() // security.go
		// While the dataset loads the server stays Starting (clients get
		// -LOADING); the caller marks it Ready once loaded.
		if s.cfg.Persistence == nil || !s.cfg.Persistence.Loading() {
			s.life.Set(lifecycle.Ready)
		}
		return nil
	case <-s.stopped:
		if s.runErr == nil {
			s.runErr = errors.New("netloop: engine stopped during start-up")
		}
		return fmt.Errorf("listen on %s: %w", s.addr, s.runErr)
	}
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// ShutdownSave says whether the SHUTDOWN that was requested wants a final
// snapshot: true for SAVE, false for NOSAVE, dflt (Redis: when save rules
// are set) for neither or a signal.
func (s *Server) ShutdownSave(dflt bool) bool {
	switch s.shutdownSave.Load() {
	case 1:
		return true
	case -1:
		return false
	}
	return dflt
}

// ShutdownRequested is closed when a client sends SHUTDOWN.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdownReq }

// Stop stops accepting, lets in-flight commands finish and their replies go
// out, then closes every connection. The lifecycle turns Draining at once;
// moving on to ShuttingDown is the caller's (after persisting).
func (s *Server) Stop(ctx context.Context) error {
	s.life.Set(lifecycle.Draining)
	var err error
	select {
	case <-s.booted:
		err = s.engine.Stop(ctx)
	default:
	}
	select {
	case <-s.stopped:
	case <-ctx.Done():
		return ctx.Err()
	}
	return err
}

// OnBoot records the engine so Stop can reach it.
func (s *Server) OnBoot(eng gnet.Engine) gnet.Action {
	s.engine = eng
	close(s.booted)
	return gnet.None
}

// OnTick runs on one loop's ticker goroutine: idle timeouts and the ops/sec
// sampler. It resumes nobody: clients paused by output back-pressure are
// woken by the resumer (client.go), those waiting for a shard by the shard.
func (s *Server) OnTick() (time.Duration, gnet.Action) {
	s.stats.opsSampler.sample(s.totalCommands())
	if s.track.Pending() {
		s.track.Broadcast() // keys expiry removed with no loop turn after it
	}
	if s.live.idleTimeout.Load() > 0 {
		s.closeIdle()
	}
	s.cmem.Kick() // over maxmemory-clients with no client turn since
	return 100 * time.Millisecond, gnet.None
}

// opsSampler computes instantaneous_ops_per_sec as Redis does: the average of
// the last 16 samples of the per-second rate, sampled every 100 ms.
type opsSampler struct {
	mu      sync.Mutex
	lastT   time.Time
	lastN   int64
	samples [16]float64
	idx     int
}

func (o *opsSampler) sample(total int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if !o.lastT.IsZero() {
		dt := now.Sub(o.lastT).Seconds()
		if dt > 0 {
			o.samples[o.idx%len(o.samples)] = float64(total-o.lastN) / dt
			o.idx++
		}
	}
	o.lastT, o.lastN = now, total
}

func (o *opsSampler) rate() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(o.idx, len(o.samples))
	if n == 0 {
		return 0
	}
	var sum float64
	for _, v := range o.samples[:n] {
		sum += v
	}
	return int64(sum / float64(n))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
