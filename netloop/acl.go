package netloop

import (
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// ACL wiring: who a client is (client.user), the permission check in
// process, AUTH and HELLO AUTH, the ACL command, the ACL LOG entries and
// the auth-failure counters. The rules themselves live in core/acl.
//
// A client starts as the default user, authenticated when that user needs
// no password (Redis' clientSetDefaultAuth). process checks
// c.user.AllowsAll() first, one atomic load and a bool, and runs the full
// check only for users with restrictions.

// AuthFailure is why a client was refused, for the auth-failure counters.
type AuthFailure int

// Auth-failure reasons (the metric's reason label).
const (
	FailWrongPass     AuthFailure = iota // AUTH / HELLO AUTH with bad credentials
	FailNoAuth                           // a command before authenticating
	FailNoPermCommand                    // NOPERM: command
	FailNoPermKey                        // NOPERM: key
	FailNoPermChannel                    // NOPERM: channel
	numAuthFailures
)

// AuthFailureNames are the metric labels, by AuthFailure.
var AuthFailureNames = [numAuthFailures]string{"wrongpass", "noauth", "noperm_cmd", "noperm_key", "noperm_channel"}

type authFailures [numAuthFailures]atomic.Int64

// AuthFailures returns the number of refusals by reason since start,
// indexed like AuthFailureNames.
func (s *Server) AuthFailures() [numAuthFailures]int64 {
	var out [numAuthFailures]int64
	for i := range out {
		out[i] = s.authFails[i].Load()
	}
	return out
}

// ACL is the server's access control state (users, ACL LOG).
func (s *Server) ACL() *acl.ACL { return s.acl }

// ACLUsers lists the users with their rules, without password hashes (for
// the debug API and bundles).
func (s *Server) ACLUsers() []acl.UserSummary { return s.acl.Redacted() }

// setUser makes u the client's user, for its loop and for readers elsewhere.
func (c *client) setUser(u *acl.User) {
	c.user = u
	c.userPub.Store(u)
}

// userName is the client's user name, from any goroutine.
func (c *client) userName() string {
	if u := c.userPub.Load(); u != nil {
		return u.Name()
	}
	return acl.DefaultUserName
}

// setDefaultAuth is Redis' clientSetDefaultAuth: the default user,
// authenticated when it needs no password.
func (s *Server) setDefaultAuth(c *client) {
	c.setUser(s.acl.DefaultUser())
	c.authed = !s.acl.AuthRequired()
}

// authRequired is Redis' authRequired for c: not authenticated, and the
// default user has a password or is off.
func (s *Server) authRequired(c *client) bool {
	return !c.authed && s.acl.AuthRequired()
}

// aclContext is where a client's refused command was running.
func aclContext(c *client) acl.Context {
	if c.multi.active {
		return acl.CtxMulti
	}
	return acl.CtxTopLevel
}

// aclLog adds an ACL LOG entry for c.
func (s *Server) aclLog(c *client, reason acl.Reason, object, username string) {
	s.acl.Log(acl.LogEntry{
		Reason:     reason,
		Context:    aclContext(c),
		Object:     object,
		Username:   username,
		CTimeMs:    time.Now().UnixMilli(),
		ClientInfo: strings.TrimSuffix(s.clientLine(c, time.Now()), "\n"),
	})
}

// aclDenied checks checked (the subcommand when there is one) against c's
// user. On a denial it replies with Redis' NOPERM text, logs and counts it,
// and reports true. The caller has checked c.user.AllowsAll().
func (s *Server) aclDenied(c *client, checked *command.Command, args [][]byte, mark int) bool {
	if c.multi.active && checked.Flags&command.FlagNoMulti != 0 {
		return false // "not allowed inside a transaction" comes first (queueInMulti)
	}
	r, idx := c.user.Check(checked, args)
	if r == acl.OK {
		return false
	}
	object := checked.FullName
	switch r {
	case acl.DeniedKey:
		object = string(args[idx])
		s.authFails[FailNoPermKey].Add(1)
	case acl.DeniedChannel:
		object = string(args[idx])
		s.authFails[FailNoPermChannel].Add(1)
	default:
		s.authFails[FailNoPermCommand].Add(1)
	}
	s.aclLog(c, r, object, c.user.Name())
	c.out = resp.AppendError(c.out, acl.NoPermError(r, checked))
	s.rejected(c, checked, c.out[mark:])
	return true
}

// joinAllowed reports whether a command may join the open batch as far as
// ACLs go: always for unrestricted users; for others when the check passes
// (a refusal is replied to on the command's own turn, through process).
func (s *Server) joinAllowed(c *client, cmd *command.Command, args [][]byte) bool {
	if c.user.AllowsAll() {
		return true
	}
	if len(cmd.Subcommands) > 0 {
		return false
	}
	r, _ := c.user.Check(cmd, args)
	return r == acl.OK
}

// authenticate is ACLAuthenticateUser: on success c is that user and
// authenticated; on failure an "auth" entry goes to the ACL LOG with the
// command name as typed (AUTH or HELLO) as its object.
func (s *Server) authenticate(c *client, name, pass, cmdName []byte) bool {
	u := s.acl.Authenticate(name, pass)
	if u == nil {
		s.authFails[FailWrongPass].Add(1)
		s.aclLog(c, acl.DeniedAuth, string(cmdName), string(name))
		return false
	}
	c.authed = true
	c.setUser(u)
	return true
}

func (s *Server) cmdAuth(c *client, args [][]byte) {
	var user, pass []byte
	switch len(args) {
	case 2:
		if !s.acl.DefaultUserHasPassword() {
			c.out = resp.AppendError(c.out, errAuthNoPass)
			return
		}
		user, pass = []byte(acl.DefaultUserName), args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		c.out = append(c.out, resp.ErrSyntax...)
		return
	}
	if !s.authenticate(c, user, pass, args[0]) {
		c.out = resp.AppendError(c.out, errWrongPass)
		return
	}
	c.out = append(c.out, resp.OK...)
}

// killUserClients disconnects the clients of users that were deleted (ACL
// DELUSER, ACL LOAD), the calling client after its reply, as Redis'
// ACLFreeUserAndKillClients.
func (s *Server) killUserClients(c *client) {
	for _, cl := range s.clients() {
		if u := cl.userPub.Load(); u != nil && u.Deleted() {
			s.kill(c, cl)
		}
	}
}

var aclHelp = []string{
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Print this help.",
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

// cmdACL is the ACL command (Redis' aclCommand).
func (s *Server) cmdACL(c *client, cmd *command.Command, args [][]byte) {
	sub := s.subcommand(c, cmd, args)
	r3 := c.ctx.RESP3
	switch sub.Name {
	case "setuser":
		rules := make([]string, len(args)-3)
		for i, a := range args[3:] {
			rules[i] = string(a)
		}
		u, shrank, err := s.acl.SetUser(string(args[2]), rules)
		var se *acl.SetUserError
		switch {
		case errors.As(err, &se):
			c.out = resp.AppendError(c.out, "ERR "+sanitize([]byte(se.Error())))
		case errors.Is(err, acl.ErrUnmatchedParen):
			c.out = resp.AppendError(c.out, "ERR Unmatched parenthesis"+strings.TrimPrefix(sanitize([]byte(err.Error())), acl.ErrUnmatchedParen.Error())+".")
		case err != nil:
			c.out = resp.AppendError(c.out, "ERR "+err.Error())
		default:
			if shrank {
				s.recheckChannels(u)
			}
			c.out = append(c.out, resp.OK...)
		}
	case "deluser":
		names := make([]string, len(args)-2)
		for i, a := range args[2:] {
			names[i] = string(a)
		}
		gone, err := s.acl.DelUsers(names)
		if err != nil {
			c.out = resp.AppendError(c.out, "ERR "+err.Error())
			return
		}
		if len(gone) > 0 {
			s.killUserClients(c)
		}
		c.out = resp.AppendInt(c.out, int64(len(gone)))
	case "getuser":
		u := s.acl.User(string(args[2]))
		if u == nil {
			c.out = resp.AppendNull(c.out, r3)
			return
		}
		c.out = s.acl.AppendGetUser(c.out, u, r3)
	case "list", "users":
		var lines []string
		if sub.Name == "list" {
			lines = s.acl.List()
		} else {
			lines = s.acl.UserNames()
		}
		c.out = resp.AppendArrayHeader(c.out, len(lines))
		for _, l := range lines {
			c.out = resp.AppendBulkString(c.out, l)
		}
	case "whoami":
		c.out = resp.AppendBulkString(c.out, c.user.Name())
	case "load", "save":
		path := s.aclFile()
		if path == "" {
			c.out = resp.AppendError(c.out, errNoACLFile)
			return
		}
		if sub.Name == "save" {
			if err := s.acl.SaveFile(path); err != nil {
				s.log.Warn("ACL SAVE failed", "file", path, "err", err)
				c.out = resp.AppendError(c.out, "ERR "+acl.ErrSave)
				return
			}
			c.out = append(c.out, resp.OK...)
			return
		}
		if _, err := s.acl.LoadFile(path); err != nil {
			c.out = resp.AppendError(c.out, "ERR "+sanitize([]byte(err.Error())))
			return
		}
		s.killUserClients(c)
		c.out = append(c.out, resp.OK...)
	case "cat":
		if len(args) == 2 {
			c.out = resp.AppendArrayHeader(c.out, len(acl.Categories))
			for _, cat := range acl.Categories {
				c.out = resp.AppendBulkString(c.out, cat)
			}
			return
		}
		if len(args) != 3 {
			c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], "ACL")
			return
		}
		names, ok := s.acl.CategoryCommands(string(args[2]))
		if !ok {
			c.out = resp.AppendError(c.out, "ERR Unknown category '"+sanitize(truncate(args[2], 128))+"'")
			return
		}
		c.out = resp.AppendArrayHeader(c.out, len(names))
		for _, n := range names {
			c.out = resp.AppendBulkString(c.out, n)
		}
	case "genpass":
		bits := int64(256)
		if len(args) > 3 {
			c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], "ACL")
			return
		}
		if len(args) == 3 {
			n, ok := resp.ParseInt(args[2])
			if !ok {
				c.out = append(c.out, resp.ErrNotInteger...)
				return
			}
			bits = n
		}
		p, ok := acl.GenPass(bits)
		if !ok {
			c.out = resp.AppendError(c.out, "ERR "+acl.ErrGenPassBits)
			return
		}
		c.out = resp.AppendBulkString(c.out, p)
	case "log":
		count := int64(10)
		if len(args) > 3 {
			c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], "ACL")
			return
		}
		if len(args) == 3 {
			if resp.EqualFold(args[2], "reset") {
				s.acl.LogReset()
				c.out = append(c.out, resp.OK...)
				return
			}
			n, ok := resp.ParseInt(args[2])
			if !ok {
				c.out = append(c.out, resp.ErrNotInteger...)
				return
			}
			count = n
		}
		c.out = s.acl.AppendLog(c.out, count, time.Now().UnixMilli(), r3)
	case "dryrun":
		s.aclDryRun(c, args)
	case "help":
		c.out = resp.AppendHelp(c.out, aclHelp)
	default:
		c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], "ACL")
	}
}

// aclDryRun is ACL DRYRUN user command [arg ...] as Redis 7.0.15: a bulk
// string saying why the user may not run it, or OK.
func (s *Server) aclDryRun(c *client, args [][]byte) {
	u := s.acl.User(string(args[2]))
	if u == nil {
		c.out = resp.AppendError(c.out, "ERR User '"+sanitize(args[2])+"' not found")
		return
	}
	argv := args[3:]
	cmd := s.table.Lookup(argv[0])
	if cmd != nil && len(cmd.Subcommands) > 0 && len(argv) >= 2 {
		cmd = s.table.LookupSub(cmd, argv[1])
	}
	if cmd == nil {
		c.out = resp.AppendError(c.out, "ERR Command '"+sanitize(argv[0])+"' not found")
		return
	}
	if !cmd.CheckArity(len(argv)) {
		c.out = resp.AppendError(c.out, "ERR wrong number of arguments for '"+cmd.FullName+"' command")
		return
	}
	r, idx := u.Check(cmd, argv)
	switch r {
	case acl.OK:
		c.out = append(c.out, resp.OK...)
	case acl.DeniedCommand:
		c.out = resp.AppendBulkString(c.out, "This user has no permissions to run the '"+cmd.FullName+"' command")
	case acl.DeniedKey:
		c.out = resp.AppendBulkString(c.out, "This user has no permissions to access the '"+string(argv[idx])+"' key")
	default:
		c.out = resp.AppendBulkString(c.out, "This user has no permissions to access the '"+string(argv[idx])+"' channel")
	}
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// aclFile is the aclfile parameter ("" when unset or without a registry).
func (s *Server) aclFile() string {
	if s.params.Lookup("aclfile") == nil {
		return ""
	}
	return s.params.String("aclfile")
}

// recheckChannels asks u's subscribed clients to check their subscriptions
// against u's new channel rules on their own loops (Redis'
// ACLKillPubsubClientsIfNeeded); those with a revoked one are closed.
func (s *Server) recheckChannels(u *acl.User) {
	for _, cl := range s.clients() {
		if cl.userPub.Load() == u && cl.inPubSub() {
			cl.aclRecheck.Store(true)
			_ = cl.conn.Wake(nil)
		}
	}
}

// channelsRevoked runs on c's loop: whether one of its subscriptions is no
// longer allowed to its user.
func (s *Server) channelsRevoked(c *client) bool {
	ps := c.ps.Load()
	return ps != nil && ps.subs.Revoked(c.user.ChannelAllowed)
}

// aclRecheckFailed runs on c's loop after its user's channels shrank: true
// when c must be closed because a subscription is no longer allowed.
func (s *Server) aclRecheckFailed(c *client) bool {
	c.aclRecheck.Store(false)
	return s.channelsRevoked(c)
}

// aclDeniedInExec re-checks a queued command when EXEC runs it, as Redis
// 7.0's execCommand: rules may have changed since it was queued. A denied
// command is not run; its place in EXEC's reply is Redis' NOPERM error.
func (s *Server) aclDeniedInExec(c *client, checked *command.Command, args [][]byte) bool {
	r, idx := c.user.Check(checked, args)
	if r == acl.OK {
		return false
	}
	var reason, object string
	switch r {
	case acl.DeniedCommand:
		reason, object = "no permission to execute the command or subcommand", checked.FullName
		s.authFails[FailNoPermCommand].Add(1)
	case acl.DeniedKey:
		reason, object = "no permission to touch the specified keys", string(args[idx])
		s.authFails[FailNoPermKey].Add(1)
	default:
		reason, object = "no permission to access one of the channels used as arguments", string(args[idx])
		s.authFails[FailNoPermChannel].Add(1)
	}
	s.aclLog(c, r, object, c.user.Name())
	c.out = resp.AppendError(c.out, "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "+reason)
	return true
}
