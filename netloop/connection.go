package netloop

import (
	"fmt"
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// localHandler runs a connection or server command on the client's loop.
type localHandler func(s *Server, c *client, cmd *command.Command, args [][]byte)

// localHandlers names the handler of every command that is not the shards'
// business, or not always (MEMORY's subcommands without a key). buildLocal
// turns it into a table by command ID and checks it against the command
// table and the shard routes at start-up.
func localHandlers() map[string]localHandler {
	pubsub := func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdPubSub(c, cmd, args) } // pubsub.go
	persistence := func(s *Server, c *client, cmd *command.Command, args [][]byte) {
		s.cmdPersistence(c, cmd, args) // persistcmd.go
	}
	h := map[string]localHandler{
		"ping": func(s *Server, c *client, cmd *command.Command, args [][]byte) {
			if len(args) > 2 {
				// PING's arity is -1, but Redis' pingCommand takes one message at most.
				c.out = resp.AppendErrWrongArity(c.out, []byte(cmd.FullName))
			} else if s.pubsubPing(c, args) { // RESP2 subscribed: ["pong", msg]
			} else if len(args) == 1 {
				c.out = append(c.out, resp.PONG...)
			} else {
				c.out = resp.AppendBulk(c.out, args[1])
			}
		},
		"echo": func(s *Server, c *client, _ *command.Command, args [][]byte) { c.out = resp.AppendBulk(c.out, args[1]) },
		"quit": func(s *Server, c *client, _ *command.Command, _ [][]byte) {
			c.out = append(c.out, resp.OK...)
			c.to(connClosing)
		},
		"multi":   func(s *Server, c *client, _ *command.Command, _ [][]byte) { s.cmdMulti(c) },
		"exec":    func(s *Server, c *client, _ *command.Command, _ [][]byte) { s.cmdExec(c) },
		"discard": func(s *Server, c *client, _ *command.Command, _ [][]byte) { s.cmdDiscard(c) },
		"watch":   func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdWatch(c, args) },
		"unwatch": func(s *Server, c *client, _ *command.Command, _ [][]byte) { s.cmdUnwatch(c) },
		"reset": func(s *Server, c *client, _ *command.Command, _ [][]byte) {
			if c.multi.active || c.multi.watch.Watching() {
				s.endMulti(c)
			}
			c.ctx.DB = 0
			c.db.Store(0)
			c.setRESP3(false)
			s.setDefaultAuth(c) // acl.go
			c.name.Store(nil)   // as Redis' clearClientConnectionState; lib-name/lib-ver stay
			s.pubsubReset(c)
			s.stopMonitor(c) // monitor.go
			s.disableTracking(c)
			c.out = append(c.out, "+RESET\r\n"...)
		},
		"select": func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdSelect(c, args) },
		"auth":   func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdAuth(c, args) },       // acl.go
		"acl":    func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdACL(c, cmd, args) }, // acl.go
		"hello":  func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdHello(c, args) },
		"client": func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdClient(c, cmd, args) },
		"command": func(s *Server, c *client, _ *command.Command, args [][]byte) {
			c.out = s.table.Reply(c.out, args, c.ctx.RESP3)
		},
		"info": func(s *Server, c *client, _ *command.Command, args [][]byte) {
			c.out = appendText(c.out, s.info(args[1:]), c.ctx.RESP3)
		},
		"config":  func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdConfig(c, cmd, args) },
		"slowlog": func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdSlowlog(c, cmd, args) },
		"latency": func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdLatency(c, cmd, args) },
		"time": func(s *Server, c *client, _ *command.Command, _ [][]byte) {
			now := time.Now()
			c.out = resp.AppendArrayHeader(c.out, 2)
			c.out = resp.AppendBulkInt(c.out, now.Unix())
			c.out = resp.AppendBulkInt(c.out, int64(now.Nanosecond()/1000))
		},
		"shutdown": func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdShutdown(c, args) },
		"cluster": func(s *Server, c *client, _ *command.Command, _ [][]byte) {
			// Standalone, as Redis without cluster-enabled: every CLUSTER
			// subcommand (HELP included) is refused with this text. rueidis
			// relies on it (the word CLUSTER) to fall back to a single-node client.
			c.out = resp.AppendError(c.out, "ERR This instance has cluster support disabled")
		},
		"debug":     func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdDebug(c, args) },
		"status":    func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdStatus(c, cmd, args) },
		"replicaof": func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdReplicaOf(c, args) }, // replcmd.go
		"slaveof":   func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdReplicaOf(c, args) },
		"replconf":  func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdReplconf(c, args) },
		"sync":      func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdSync(c, args) },
		"psync":     func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdSync(c, args) },
		"wait":      func(s *Server, c *client, _ *command.Command, args [][]byte) { s.cmdWait(c, args) },
		"role": func(s *Server, c *client, _ *command.Command, _ [][]byte) {
			if s.cfg.Replication == nil {
				c.out = append(c.out, "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"...)
				return
			}
			c.out = s.cfg.Replication.AppendRole(c.out)
		},
		"monitor": func(s *Server, c *client, _ *command.Command, _ [][]byte) { s.cmdMonitor(c) }, // monitor.go
		"memory": func(s *Server, c *client, cmd *command.Command, args [][]byte) {
			s.cmdMemory(c, cmd, args) // memorycmd.go; USAGE runs in the shards
		},
	}
	for _, name := range []string{"subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "publish", "spublish", "pubsub"} {
		h[name] = pubsub
	}
	for _, name := range []string{"eval", "evalsha", "eval_ro", "evalsha_ro"} {
		h[name] = func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdEval(c, cmd, args) } // scripting.go
	}
	h["script"] = func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdScript(c, cmd, args) }
	h["fcall"] = func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdFcall(c, cmd, args) } // functions.go
	h["fcall_ro"] = h["fcall"]
	h["function"] = func(s *Server, c *client, cmd *command.Command, args [][]byte) { s.cmdFunction(c, cmd, args) }
	for _, name := range []string{"lastsave", "save", "bgsave", "bgrewriteaof"} {
		h[name] = persistence
	}
	return h
}

// buildLocal makes the table of local handlers by command ID from named,
// and checks it: every name must be a top-level command of table, and every
// top-level command must either always run in the shards or have a local
// handler. So a command the table knows can never reach a client without
// something to run it; New reports the error and Start refuses to start.
func buildLocal(table *command.Table, rt *shard.Runtime, named map[string]localHandler) ([]localHandler, error) {
	local := make([]localHandler, table.Len())
	for name, h := range named {
		cmd := table.Lookup([]byte(name))
		if cmd == nil {
			return nil, fmt.Errorf("netloop: local handler for %q has no command table entry", name)
		}
		local[cmd.ID] = h
	}
	var missing []string
	for _, cmd := range table.All() {
		if local[cmd.ID] == nil && rt.MayRouteLocal(cmd) {
			missing = append(missing, cmd.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("netloop: commands in the command table with neither a shard route nor a local handler: %s", strings.Join(missing, ", "))
	}
	return local, nil
}

// local runs a command that is not the shards' business: connection state and
// server-wide commands, dispatched by command ID through the table buildLocal
// checked at start-up. It runs on the client's loop.
// sub is the subcommand process resolved (nil when cmd has none); handlers
// read it through subcommand instead of looking it up again.
func (s *Server) local(c *client, cmd, sub *command.Command, args [][]byte) {
	c.sub = sub
	if s.monitoring() {
		s.feedMonitorsBefore(c, cmd, args) // EVAL and FCALL show before their commands (monitor.go)
	}
	s.localByID[cmd.ID](s, c, cmd, args)
	c.sub = nil
}

// subcommand returns the subcommand args[1] of a container command (CLIENT,
// CONFIG, CLUSTER): the one process resolved, which has already refused
// unknown subcommands and wrong argument counts with Redis' errors, in
// Redis' order.
func (s *Server) subcommand(c *client, cmd *command.Command, args [][]byte) *command.Command {
	if c.sub != nil && c.sub.Parent == cmd {
		return c.sub
	}
	return s.table.LookupSub(cmd, args[1]) // a handler called outside process (tests, bundles)
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
	if n < 0 || n >= keyspace.NumDatabases {
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
	if s.cfg.Replication != nil && s.cfg.Replication.IsReplica() {
		c.out = resp.AppendBulkString(c.out, "replica") // as Redis' helloCommand
	} else {
		c.out = resp.AppendBulkString(c.out, "master")
	}
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
