package diaghttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/core/lifecycle"
	"github.com/svcdb/svcdb/core/slowlog"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// Source is everything diaghttp reads; each method must be cheap and
// non-blocking for the data path.
type Source interface {
	Lifecycle() lifecycle.State
	Net() netloop.Stats
	Shards() []shard.Snapshot
	MaxMemoryBytes() int64 // 0 = unlimited
	// Config lists every parameter with its value (secrets redacted),
	// default, source and mutability, for /debug/api/config.
	Config() []config.Entry
	// Clients returns up to limit connected clients and the total count.
	Clients(limit int) (total int, list []netloop.ClientInfo)
	// StatusJSON is the rendered status document, the same bytes as STATUS
	// JSON (netloop.Server.StatusJSON). It waits at most
	// netloop.StatusDeadline for the shards' owners, never on a lock.
	StatusJSON() []byte
	// CommandStats returns the per-command statistics (indexed by command
	// ID), and CommandName the full name of a command ID.
	CommandStats() *cmdstats.Snapshot
	CommandName(id int) string
	// CommandCallCounts stores every command ID's executed calls since
	// start in dst (grown as needed) and returns it: atomic loads only, for
	// the once-per-second rate sampler (rates.go).
	CommandCallCounts(dst []int64) []int64
	// RunID is this node's id (INFO run_id); RedisAddr the Redis port's
	// host:port, safe to call while that port is still starting.
	RunID() string
	RedisAddr() string
	// Slowlog and Latency are the slow-command log and the latency
	// monitor, both safe for concurrent use (/debug/api/slowlog, latency).
	Slowlog() *slowlog.Log
	Latency() *latency.Monitor
	// InfoText is INFO's text for the sections (netloop.Server.InfoText),
	// and RecentLogs up to n of the newest log lines, oldest first, secrets
	// already redacted (logging.Logger.Recent): both for bundles.
	InfoText(sections ...string) string
	RecentLogs(n int) []string
}

// Config is the HTTP server's configuration.
type Config struct {
	Bind  string // IP literal (v4 or v6); default 127.0.0.1
	Port  int    // 0: a free port (see Server.Addr)
	Token string // empty: /debug/api/* answers 403
	// ProtectMetrics puts /metrics and /status/json behind the token too
	// ([http] protect-metrics); by default they are public.
	ProtectMetrics bool
	Logger         *slog.Logger
	Version        string
	// Bundles, when set, serves /debug/api/bundle/*; the server then shares
	// its metrics registry and rate sampler (started by Bundles.Start), so
	// /metrics and a bundle's metrics.prom are one exposition. It must read
	// the same Source. Nil: the bundle endpoints answer 503.
	Bundles *Bundles
}

// Limits of the HTTP server (Part B "Authentication and HTTP hygiene").
const (
	readTimeout    = 10 * time.Second
	writeTimeout   = 30 * time.Second
	idleTimeout    = 60 * time.Second
	readBufferSize = 8 << 10 // also the request header size limit
	maxRequestBody = 1       // no request bodies are accepted (see handle)
)

// Server is the diagnostics HTTP server.
type Server struct {
	docs // src, the registry and the rate sampler (api.go)
	cfg  Config
	// loopbackOnly: bound to a loopback address, so only requests for a
	// loopback host name are served (DNS rebinding, see allowedHost).
	loopbackOnly bool
	log          *slog.Logger
	ownRates     bool // rates is this server's: started by Start, stopped by Shutdown
	srv          *fasthttp.Server

	mu   sync.Mutex
	ln   net.Listener
	done chan struct{} // closed when Serve returns
}

// New builds the server and registers every metric (at zero where the value
// is not read from src). It does not listen yet.
func New(cfg Config, src Source) *Server {
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, log: log}
	if ip := net.ParseIP(cfg.Bind); ip != nil && ip.IsLoopback() {
		s.loopbackOnly = true
	}
	if b := cfg.Bundles; b != nil {
		s.docs = b.docs
		s.docs.src = src
	} else {
		s.docs = docs{src: src, version: cfg.Version, metrics: newRegistry(src, cfg.Version), rates: newRateSampler(src)}
		s.ownRates = true
	}
	s.srv = &fasthttp.Server{
		Handler:               s.handle,
		HeaderReceived:        bundleRequestConfig, // longer write deadline for bundle downloads (bundle.go)
		Name:                  "svcdb",
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
		ReadBufferSize:        readBufferSize,
		MaxRequestBodySize:    maxRequestBody,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{log},
	}
	return s
}

// Start listens on Bind:Port and serves in the background.
func (s *Server) Start() error {
	ip := net.ParseIP(s.cfg.Bind)
	if ip == nil {
		return fmt.Errorf("diaghttp: bind %q is not an IP address", s.cfg.Bind)
	}
	if s.cfg.Port < 0 || s.cfg.Port > 65535 {
		return fmt.Errorf("diaghttp: port %d out of range", s.cfg.Port)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return errors.New("diaghttp: already started")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return fmt.Errorf("diaghttp: %w", err)
	}
	s.ln = ln
	s.done = make(chan struct{})
	if s.cfg.Token == "" {
		s.log.Warn("http token not set: /debug/api/* answers 403 (set [http] token, SVC_HTTP_TOKEN or --http-token)")
	}
	s.log.Info("http diagnostics listening", "addr", ln.Addr().String())
	if s.ownRates {
		go s.rates.run()
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil {
			s.log.Error("http diagnostics server stopped", "err", err)
		}
	}()
	return nil
}

// Addr is the address the server listens on ("" before Start).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Shutdown stops accepting, lets in-flight requests finish and closes idle
// connections, until ctx ends. Safe to call when not started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	started := s.ln != nil
	done := s.done
	s.mu.Unlock()
	if !started {
		return nil
	}
	if s.ownRates {
		s.rates.halt()
	}
	err := s.srv.ShutdownWithContext(ctx)
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	f.l.Debug("fasthttp: " + fmt.Sprintf(format, args...))
}
