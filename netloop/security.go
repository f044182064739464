package netloop

import (
	"net"
	"net/netip"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// Who may do what before any command runs: protected mode (admission in
// OnOpen) and enable-debug-command (the DEBUG gate in process), as Redis 7.0.
// Both decide on whether a client is local: its peer address is a loopback
// address (127.0.0.0/8 or ::1, an IPv4-mapped one included), as Redis 7.0's
// islocalClient. svcdb has no unix socket listener.

// errProtectedMode is Redis 7.0.15's reply to a client refused by protected
// mode (networking.c clientAcceptHandler), byte for byte, typo included ("a
// an"): clients and tools match on it. It is written as soon as the
// connection is accepted, before any command, and the connection is closed.
var errProtectedMode = []byte("-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, " +
	"however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. " +
	"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n")

// errDebugNotAllowed is Redis 7.0's processCommand refusal of DEBUG.
const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", ` +
	"you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// Values of enable-debug-command (Redis' protected_action_enum).
const (
	debugNo uint8 = iota
	debugYes
	debugLocal
)

func parseDebugPolicy(v string) uint8 {
	switch v {
	case "yes":
		return debugYes
	case "local":
		return debugLocal
	}
	return debugNo
}

// isLoopbackPeer is the default Config.LocalPeer: Redis 7.0 counts 127.x.x.x
// and ::1 as local.
func isLoopbackPeer(a netip.Addr) bool { return a.Unmap().IsLoopback() }

// peerIsLocal reports whether a connection's remote address counts as local.
// An address that is not TCP (none today) or cannot be read is not local.
func (s *Server) peerIsLocal(remote net.Addr) bool {
	ta, ok := remote.(*net.TCPAddr)
	if !ok || ta == nil {
		return false
	}
	a, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return false
	}
	return s.cfg.LocalPeer(a)
}

// defaultUserNeedsPassword reports whether the default user has a password
// (it is not nopass), as Redis' protected mode asks of DefaultUser's flags.
// Protected mode applies while it does not.
func (s *Server) defaultUserNeedsPassword() bool { return s.acl.DefaultUserHasPassword() }

// protectedModeRefuses reports whether protected mode refuses a new client:
// protected-mode on, no password for the default user, and a peer that is
// not local, as Redis 7.0 (which no longer looks at bind for this).
func (s *Server) protectedModeRefuses(local bool) bool {
	return !local && s.live.protectedMode.Load() && !s.defaultUserNeedsPassword()
}

// debugRefused reports whether enable-debug-command refuses DEBUG with these
// arguments to c. HOTSHARDS, BUNDLE and HELP are svcdb's operational
// subcommands (SPEC Part A) and read-only: they stay available whatever the
// setting. Everything else (SLEEP, and the subcommands svcdb does not
// implement, which Redis would refuse here too) follows the setting.
func (s *Server) debugRefused(c *client, args [][]byte) bool {
	switch s.debugPolicy {
	case debugYes:
		return false
	case debugLocal:
		if c.local {
			return false
		}
	}
	sub := args[1]
	return !(resp.EqualFold(sub, "hotshards") || resp.EqualFold(sub, "bundle") || resp.EqualFold(sub, "help"))
}

// refuseDebug answers a refused DEBUG as Redis does: the error, counted as a
// rejected call, and a transaction in progress is flagged to abort.
func (s *Server) refuseDebug(c *client, cmd *command.Command, mark int) {
	c.out = resp.AppendError(c.out, errDebugNotAllowed)
	s.rejected(c, cmd, c.out[mark:])
}

// warnExposure logs, at start-up and whenever protected-mode or requirepass
// change, when the Redis port is reachable from other hosts without a
// password: with protected mode on, those clients are refused (say so once);
// with it off, they get everything (FLUSHALL, CONFIG, SHUTDOWN).
func (s *Server) warnExposure() {
	bind, err := netip.ParseAddr(s.cfg.Bind)
	if err != nil || bind.Unmap().IsLoopback() || s.defaultUserNeedsPassword() {
		return
	}
	if s.live.protectedMode.Load() {
		s.log.Warn("protected mode is on and the default user has no password: clients from non-loopback addresses will be refused with -DENIED; set requirepass (or SVC_SERVER_REQUIREPASS), or bind to 127.0.0.1",
			"bind", s.cfg.Bind)
		return
	}
	s.log.Warn("SECURITY: protected mode is off, the default user has no password and the server listens on a non-loopback address: anyone who can reach this port can read, change and delete every key, change the configuration and shut the server down; set requirepass or bind to 127.0.0.1",
		"bind", s.cfg.Bind)
}
