package netloop

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/latency"
	"github.com/svcdb/svcdb/netloop/clientmem"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// liveParams are the parameters netloop applies while running. The registry
// is the source of truth; OnChange hooks copy new values here, where the
// loops read them with one atomic load (never the registry's lock).
type liveParams struct {
	maxClients  atomic.Int64
	idleTimeout atomic.Int64 // nanoseconds; 0 = never
	// protectedMode is protected-mode (security.go).
	protectedMode atomic.Bool
	// maxBulkLen is proto-max-bulk-len, queryBufferLimit
	// client-query-buffer-limit: read by every connection at its next turn.
	maxBulkLen       atomic.Int64
	queryBufferLimit atomic.Int64
	// requirepass lives in the ACL: it is the default user's password.
}

// bindParams makes reg the server's configuration: CONFIG GET/SET/REWRITE
// use it, and changes to maxclients, timeout, requirepass,
// proto-max-bulk-len and client-query-buffer-limit apply at once (the last
// two to every connection's next command and next read).
// Without a registry (tests, tools) one is built from the Config fields.
func (s *Server) bindParams(reg *config.Registry) {
	if reg == nil {
		reg = config.New()
		for _, kv := range [][2]string{
			{"bind", s.cfg.Bind},
			{"port", strconv.Itoa(s.cfg.Port)},
			{"event-loops", strconv.Itoa(s.cfg.EventLoops)},
			{"maxclients", strconv.Itoa(s.cfg.MaxClients)},
			{"timeout", s.cfg.IdleTimeout.String()},
			{"requirepass", s.cfg.RequirePass},
			{"enable-debug-command", s.cfg.EnableDebugCommand},
			{"protected-mode", s.cfg.ProtectedMode},
			{"client-query-buffer-limit", strconv.Itoa(s.cfg.QueryBufferLimit)},
		} {
			if kv[1] == "" && (kv[0] == "enable-debug-command" || kv[0] == "protected-mode") {
				continue // the registry's default
			}
			if err := reg.Set(kv[0], kv[1], config.SourceFlag); err != nil {
				s.log.Warn("parameter not taken over from the netloop config", "param", kv[0], "err", err)
			}
		}
		if n := s.cfg.ProtoLimits.MaxBulkLen; n > 0 {
			if err := reg.Set("proto-max-bulk-len", strconv.FormatInt(n, 10), config.SourceFlag); err != nil {
				s.log.Warn("parameter not taken over from the netloop config", "param", "proto-max-bulk-len", "err", err)
			}
		}
	}
	s.params = reg
	load := func() {
		s.live.maxClients.Store(reg.Int("maxclients"))
		s.live.idleTimeout.Store(int64(reg.Duration("timeout")))
		s.live.protectedMode.Store(reg.Bool("protected-mode"))
		s.live.maxBulkLen.Store(reg.Size("proto-max-bulk-len"))
		s.live.queryBufferLimit.Store(reg.Size("client-query-buffer-limit"))
	}
	load()
	s.debugPolicy = parseDebugPolicy(reg.String("enable-debug-command"))
	for _, name := range []string{"maxclients", "timeout", "protected-mode", "proto-max-bulk-len", "client-query-buffer-limit"} {
		reg.OnChange(name, func(string) error { load(); return nil })
	}
	// requirepass is the default user's password (Redis'
	// ACLUpdateDefaultUserPassword); the start-up value was applied when the
	// ACL was made (New), before any aclfile or configured users.
	reg.OnChange("requirepass", func(v string) error { s.acl.SetRequirePass(v); return nil })
	// A change that exposes the port (protected-mode no, requirepass "")
	// is logged as it happens, as at start-up (Start). Registered after the
	// ACL's hook, so it sees the new password.
	for _, name := range []string{"requirepass", "protected-mode"} {
		reg.OnChange(name, func(string) error { s.warnExposure(); return nil })
	}
	s.acl.SetLogMaxLen(int(reg.Int("acllog-max-len")))
	s.acl.SetPubSubDefault(reg.String("acl-pubsub-default") == "allchannels")
	reg.OnChange("acl-pubsub-default", func(v string) error { s.acl.SetPubSubDefault(v == "allchannels"); return nil })
	reg.OnChange("acllog-max-len", func(string) error { s.acl.SetLogMaxLen(int(reg.Int("acllog-max-len"))); return nil })
	s.bindDiagParams(reg)
	if reg.Lookup("busy-reply-threshold") != nil { // scripting.go
		apply := func(string) error { s.scriptClock.threshold.Store(reg.Int("busy-reply-threshold")); return nil }
		_ = apply("")
		reg.OnChange("busy-reply-threshold", apply)
	}
	s.bindEncodingParams(reg)
	s.bindMemoryParams(reg)
	s.bindNotifyParams(reg) // notify.go
}

// goMemoryLimitAtStart is the Go runtime's memory limit before maxmemory set
// one: GOMEMLIMIT's, or none (math.MaxInt64); goMemLimitEnv whether the
// environment set it, in which case maxmemory leaves it alone.
var (
	goMemoryLimitAtStart = debug.SetMemoryLimit(-1)
	goMemLimitEnv        = os.Getenv("GOMEMLIMIT") != ""
)

// GoMemoryLimit is the Go runtime's soft memory limit for a maxmemory:
// maxmemory plus a tenth for garbage not yet collected and 8 MiB for the
// runtime and the server's own buffers, so that the process stays within
// 15% of maxmemory above its size at start (docs/persistence.md, "Memory
// limits"; TestRSSFollowsMaxMemory). With maxmemory 0, or GOMEMLIMIT in the
// environment, the limit the process started with (GOMEMLIMIT's, else none).
func GoMemoryLimit(maxmemory int64) int64 {
	if maxmemory <= 0 || goMemLimitEnv {
		return goMemoryLimitAtStart
	}
	const buffers = 8 << 20
	if maxmemory > (math.MaxInt64-buffers)/11*10 {
		return math.MaxInt64
	}
	return maxmemory + maxmemory/10 + buffers
}

// bindMemoryParams applies maxmemory and maxmemory-policy to the shards and
// the Go runtime's memory limit, now and on every change.
func (s *Server) bindMemoryParams(reg *config.Registry) {
	apply := func(string) error {
		policy, err := keyspace.ParsePolicy(reg.String("maxmemory-policy"))
		if err != nil {
			return err
		}
		limit := reg.Size("maxmemory")
		s.rt.SetMaxMemory(limit, policy)
		goLimit := GoMemoryLimit(limit)
		debug.SetMemoryLimit(goLimit)
		s.log.Info("memory limits applied", "maxmemory", limit, "maxmemory_policy", policy.String(), "go_memory_limit", goLimit)
		if used := s.rt.MemoryUsed(); limit > 0 && used > limit {
			// Redis' warning; the shards evict within 100 ms (or refuse writes).
			s.log.Warn("the new maxmemory value is smaller than the current memory usage: this will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy",
				"maxmemory", limit, "used_memory", used)
		}
		return nil
	}
	// Client eviction's limit: bytes, or a percentage of maxmemory
	// (netloop/clientmem, as Redis' getClientEvictionLimit).
	clients := func(string) error {
		b, pct := reg.SizeOrPercent("maxmemory-clients")
		s.cmem.SetLimit(clientmem.Limit(b, pct, reg.Size("maxmemory")))
		return nil
	}
	_, _ = apply(""), clients("")
	reg.OnChange("maxmemory", apply)
	reg.OnChange("maxmemory", clients)
	reg.OnChange("maxmemory-clients", clients)
	reg.OnChange("maxmemory-policy", apply)
}

// encodingParams are the thresholds past which compact values convert to
// their full structures (keyspace.EncodingLimits).
var encodingParams = []string{
	"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
	"set-max-listpack-entries", "set-max-listpack-value",
	"zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size", "list-compress-depth",
	"stream-node-max-entries", "hll-sparse-max-bytes",
}

// bindEncodingParams hands the encoding thresholds to the shards now and on
// every change.
func (s *Server) bindEncodingParams(reg *config.Registry) {
	apply := func(string) error {
		s.rt.SetEncodingLimits(keyspace.EncodingLimits{
			HashMaxListpackEntries: reg.Int("hash-max-listpack-entries"),
			HashMaxListpackValue:   reg.Int("hash-max-listpack-value"),
			SetMaxIntsetEntries:    reg.Int("set-max-intset-entries"),
			SetMaxListpackEntries:  reg.Int("set-max-listpack-entries"),
			SetMaxListpackValue:    reg.Int("set-max-listpack-value"),
			ZSetMaxListpackEntries: reg.Int("zset-max-listpack-entries"),
			ZSetMaxListpackValue:   reg.Int("zset-max-listpack-value"),
			ListMaxListpackSize:    reg.Int("list-max-listpack-size"),
			ListCompressDepth:      reg.Int("list-compress-depth"),
			StreamNodeMaxEntries:   reg.Int("stream-node-max-entries"),
			HLLSparseMaxBytes:      reg.Int("hll-sparse-max-bytes"),
		})
		return nil
	}
	_ = apply("")
	for _, name := range encodingParams {
		reg.OnChange(name, apply)
	}
}

// bindDiagParams applies the slowlog and latency-monitor parameters to
// s.slowlog and s.latency (built by New before bindParams) now and on every
// change. Each hook touches only its own setting: resizing the slowlog
// copies its ring, which a change of the threshold must not do.
func (s *Server) bindDiagParams(reg *config.Registry) {
	hooks := []struct {
		name  string
		apply func()
	}{
		{"slowlog-log-slower-than", func() { s.slowlog.SetSlowerThan(scaled(reg.Int("slowlog-log-slower-than"), time.Microsecond)) }},
		{"slowlog-max-len", func() { s.slowlog.SetMaxLen(int(min(reg.Int("slowlog-max-len"), math.MaxInt32))) }},
		{"slowlog-max-arg-len", func() { s.slowlog.SetMaxArgLen(int(reg.Int("slowlog-max-arg-len"))) }},
		{"latency-monitor-threshold", func() { s.latency.SetThreshold(scaled(reg.Int("latency-monitor-threshold"), time.Millisecond)) }},
	}
	for _, h := range hooks {
		h.apply()
		reg.OnChange(h.name, func(string) error { h.apply(); return nil })
	}
	// CONFIG SET of a secret parameter is logged with its value redacted.
	s.slowlog.SetSecretParams(func(name string) bool {
		p := reg.Lookup(name)
		return p != nil && p.Secret
	})
	// LATENCY DOCTOR's advice depends on these, as Redis' reads its globals.
	s.latency.SetEnv(func() latency.Env {
		return latency.Env{
			SlowlogSlowerThan: s.slowlog.Threshold(),
			Hz:                int(reg.Int("hz")),
			AppendFsyncAlways: reg.String("appendfsync") == "always",
		}
	})
}

// scaled returns n units as a Duration, saturating instead of overflowing
// (the registry accepts values up to 2^63-1 of either unit).
func scaled(n int64, unit time.Duration) time.Duration {
	if n > math.MaxInt64/int64(unit) {
		return math.MaxInt64
	}
	return time.Duration(n) * unit
}

// requirePassOf is the requirepass a server starts with.
func requirePassOf(cfg Config) string {
	if cfg.Params != nil {
		return cfg.Params.String("requirepass")
	}
	return cfg.RequirePass
}
