package netloop

import (
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
)

// local runs a command that is not the shards' business: connection state and
// server-wide commands. It runs on the client's loop.
func (s *Server) local(c *client, cmd *command.Command, args [][]byte) {
	switch cmd.Name {
	case "ping":
		if len(args) > 2 {
			// PING's arity is -1, but Redis' pingCommand takes one message at most.
			c.out = resp.AppendErrWrongArity(c.out, []byte(cmd.FullName))
		} else if s.pubsubPing(c, args) { // RESP2 subscribed: ["pong", msg]
		} else if len(args) == 1 {
			c.out = append(c.out, resp.PONG...)
		} else {
			c.out = resp.AppendBulk(c.out, args[1])
		}
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "publish", "spublish", "pubsub":
		s.cmdPubSub(c, cmd, args) // pubsub.go
	case "echo":
		c.out = resp.AppendBulk(c.out, args[1])
	case "quit":
		c.out = append(c.out, resp.OK...)
		c.to(connClosing)
	case "multi":
		s.cmdMulti(c)
	case "exec":
		s.cmdExec(c)
	case "discard":
		s.cmdDiscard(c)
	case "watch":
		s.cmdWatch(c, args)
	case "unwatch":
		s.cmdUnwatch(c)
	case "reset":
		if c.multi.active || c.multi.watch.Watching() {
			s.endMulti(c)
		}
		c.ctx.DB = 0
		c.db.Store(0)
		c.setRESP3(false)
		s.setDefaultAuth(c) // acl.go
		c.name.Store(nil)   // as Redis' clearClientConnectionState; lib-name/lib-ver stay
		s.pubsubReset(c)
		c.out = append(c.out, "+RESET\r\n"...)
	case "select":
		s.cmdSelect(c, args)
	case "auth":
		s.cmdAuth(c, args) // acl.go
	case "acl":
		s.cmdACL(c, cmd, args) // acl.go
	case "hello":
		s.cmdHello(c, args)
	case "client":
		s.cmdClient(c, cmd, args)
	case "command":
		c.out = s.table.Reply(c.out, args, c.ctx.RESP3)
	case "info":
		c.out = appendText(c.out, s.info(args[1:]), c.ctx.RESP3)
	case "config":
		s.cmdConfig(c, cmd, args)
	case "slowlog":
		s.cmdSlowlog(c, cmd, args)
	case "latency":
		s.cmdLatency(c, cmd, args)
	case "time":
		now := time.Now()
		c.out = resp.AppendArrayHeader(c.out, 2)
		c.out = resp.AppendBulkInt(c.out, now.Unix())
		c.out = resp.AppendBulkInt(c.out, int64(now.Nanosecond()/1000))
	case "shutdown":
		s.cmdShutdown(c, args)
	case "cluster":
		// Standalone, as Redis without cluster-enabled: every CLUSTER
		// subcommand (HELP included) is refused with this text. rueidis
		// relies on it (the word CLUSTER) to fall back to a single-node client.
		c.out = resp.AppendError(c.out, "ERR This instance has cluster support disabled")
	case "debug":
		s.cmdDebug(c, args)
	case "status":
		s.cmdStatus(c, cmd, args)
	case "memory":
		s.cmdMemory(c, cmd, args) // memorycmd.go; USAGE runs in the shards
	case "lastsave", "save", "bgsave", "bgrewriteaof":
		s.cmdPersistence(c, cmd, args) // persistcmd.go
	default:
		c.out = resp.AppendError(c.out, "ERR command '"+cmd.FullName+"' is known but not implemented by svcdb yet")
	}
}

// subcommand returns the subcommand args[1] of a container command (CLIENT,
// CONFIG, CLUSTER). process has already refused unknown subcommands and wrong
// argument counts with Redis' errors, in Redis' order.
func (s *Server) subcommand(cmd *command.Command, args [][]byte) *command.Command {
	return s.table.LookupSub(cmd, args[1]) // process checked it exists and its arity
}

func (c *client) setRESP3(on bool) {
	c.ctx.RESP3 = on
	c.resp3.Store(on)
}

// appendText replies with a block of text: a bulk string in RESP2, a verbatim
// "txt" string in RESP3, as Redis does for INFO and CLIENT LIST.
func appendText(dst []byte, text string, resp3 bool) []byte {
	return resp.AppendVerbatim(dst, "txt", []byte(text), resp3)
}

func (s *Server) cmdSelect(c *client, args [][]byte) {
	n, ok := resp.ParseInt(args[1])
	if !ok {
		c.out = append(c.out, resp.ErrNotInteger...)
		return
	}
	if n < 0 || n >= shard.NumDatabases {
		c.out = resp.AppendError(c.out, "ERR DB index is out of range")
		return
	}
	c.ctx.DB = int(n)
	c.db.Store(int32(n))
	c.out = append(c.out, resp.OK...)
}

const (
	errWrongPass    = "WRONGPASS invalid username-password pair or user is disabled."
	errAuthNoPass   = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errHelloNoAuth  = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errBadProto     = "NOPROTO unsupported protocol version"
	errProtoVersion = "ERR Protocol version is not an integer or out of range"
)

func (s *Server) cmdHello(c *client, args [][]byte) {
	proto := 2
	if c.ctx.RESP3 {
		proto = 3
	}
	if len(args) >= 2 {
		v, ok := resp.ParseInt(args[1])
		if !ok {
			c.out = resp.AppendError(c.out, errProtoVersion)
			return
		}
		if v < 2 || v > 3 {
			c.out = resp.AppendError(c.out, errBadProto)
			return
		}
		proto = int(v)
	}
	// As Redis' helloCommand: options are handled in order, AUTH authenticates
	// and SETNAME is validated as soon as it is read, then the client must be
	// authenticated.
	var name []byte
	hasName := false
	for i := 2; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case resp.EqualFold(args[i], "auth") && more >= 2:
			if !s.authenticate(c, args[i+1], args[i+2], args[0]) { // acl.go
				c.out = resp.AppendError(c.out, errWrongPass)
				return
			}
			i += 2
		case resp.EqualFold(args[i], "setname") && more >= 1:
			name = args[i+1]
			if !validClientName(name) {
				c.out = resp.AppendError(c.out, errClientName)
				return
			}
			hasName = true
			i++
		default:
			c.out = resp.AppendError(c.out, "ERR Syntax error in HELLO option '"+sanitize(args[i])+"'")
			return
		}
	}
	if s.authRequired(c) {
		c.out = resp.AppendError(c.out, errHelloNoAuth)
		return
	}
	if hasName {
		c.setName(name)
	}
	c.setRESP3(proto == 3)
	r3 := c.ctx.RESP3
	c.out = resp.AppendMapHeader(c.out, 7, r3)
	c.out = resp.AppendBulkString(c.out, "server")
	c.out = resp.AppendBulkString(c.out, "redis")
	c.out = resp.AppendBulkString(c.out, "version")
	c.out = resp.AppendBulkString(c.out, RedisVersion)
	c.out = resp.AppendBulkString(c.out, "proto")
	c.out = resp.AppendInt(c.out, int64(proto))
	c.out = resp.AppendBulkString(c.out, "id")
	c.out = resp.AppendInt(c.out, c.id)
	c.out = resp.AppendBulkString(c.out, "mode")
	c.out = resp.AppendBulkString(c.out, "standalone")
	c.out = resp.AppendBulkString(c.out, "role")
	c.out = resp.AppendBulkString(c.out, "master")
	c.out = resp.AppendBulkString(c.out, "modules")
	c.out = resp.AppendArrayHeader(c.out, 0)
}

func (s *Server) cmdShutdown(c *client, args [][]byte) {
	for _, a := range args[1:] {
		if !(resp.EqualFold(a, "nosave") || resp.EqualFold(a, "save") || resp.EqualFold(a, "now") || resp.EqualFold(a, "force") || resp.EqualFold(a, "abort")) {
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
		if resp.EqualFold(a, "abort") {
			c.out = resp.AppendError(c.out, "ERR No shutdown in progress.")
			return
		}
	}
	for _, a := range args[1:] { // NOSAVE wins over SAVE, as Redis' flags
		if resp.EqualFold(a, "save") && s.shutdownSave.Load() == 0 {
			s.shutdownSave.Store(1)
		}
		if resp.EqualFold(a, "nosave") {
			s.shutdownSave.Store(-1)
		}
	}
	s.log.Warn("user requested shutdown", "client", c.addr, "id", c.id)
	s.shutdownOnce.Do(func() { close(s.shutdownReq) })
	c.to(connClosing) // Redis sends no reply: the connection closes with the server
}

// sanitize makes client bytes safe inside a one-line error reply.
func sanitize(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, string(b))
}
