package netloop

import (
	"strconv"
	"sync/atomic"

	"github.com/svcdb/svcdb/core/config"
)

// liveParams are the parameters netloop applies while running. The registry
// is the source of truth; OnChange hooks copy new values here, where the
// loops read them with one atomic load (never the registry's lock).
type liveParams struct {
	maxClients  atomic.Int64
	idleTimeout atomic.Int64 // nanoseconds; 0 = never
	requirePass atomic.Pointer[string]
}

// bindParams makes reg the server's configuration: CONFIG GET/SET/REWRITE
// use it, and changes to maxclients, timeout and requirepass apply at once.
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
		} {
			if err := reg.Set(kv[0], kv[1], config.SourceFlag); err != nil {
				s.log.Warn("parameter not taken over from the netloop config", "param", kv[0], "err", err)
			}
		}
	}
	s.params = reg
	load := func() {
		s.live.maxClients.Store(reg.Int("maxclients"))
		s.live.idleTimeout.Store(int64(reg.Duration("timeout")))
		pass := reg.String("requirepass")
		s.live.requirePass.Store(&pass)
	}
	load()
	for _, name := range []string{"maxclients", "timeout", "requirepass"} {
		reg.OnChange(name, func(string) error { load(); return nil })
	}
}

func (s *Server) requirePass() string { return *s.live.requirePass.Load() }
