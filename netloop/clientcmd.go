package netloop

import (
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

const errClientName = "ERR Client names cannot contain spaces, newlines or special characters."

// validClientName follows Redis' validateClientAttr: printable ASCII without spaces.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func (c *client) setName(b []byte) {
	if len(b) == 0 {
		c.name.Store(nil)
		return
	}
	n := string(b)
	c.name.Store(&n)
}

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"    * ID <client-id>",
	"      Kill connections by client id.",
	"    * MAXAGE <maxage>",
	"      Kill connections older than the specified age.",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <option> <value>",
	"    Set client meta attr. Options are:",
	"    * LIB-NAME: the client lib name.",
	"    * LIB-VER: the client lib version.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Print this help.",
}

func (s *Server) cmdClient(c *client, cmd *command.Command, args [][]byte) {
	sub := s.subcommand(c, cmd, args)
	switch sub.Name {
	case "id":
		c.out = resp.AppendInt(c.out, c.id)
	case "getname":
		if n := c.name.Load(); n != nil {
			c.out = resp.AppendBulkString(c.out, *n)
		} else {
			c.out = resp.AppendNull(c.out, c.ctx.RESP3)
		}
	case "setname":
		if !validClientName(args[2]) {
			c.out = resp.AppendError(c.out, errClientName)
			return
		}
		c.setName(args[2])
		c.out = append(c.out, resp.OK...)
	case "setinfo":
		var target = &c.libName
		switch {
		case resp.EqualFold(args[2], "lib-name"):
		case resp.EqualFold(args[2], "lib-ver"):
			target = &c.libVer
		default:
			c.out = resp.AppendError(c.out, "ERR Unrecognized option '"+sanitize(args[2])+"'")
			return
		}
		if !validClientName(args[3]) {
			c.out = resp.AppendError(c.out, "ERR "+strings.ToLower(string(args[2]))+" cannot contain spaces, newlines or special characters.")
			return
		}
		v := string(args[3])
		target.Store(&v)
		c.out = append(c.out, resp.OK...)
	case "no-evict":
		if !resp.EqualFold(args[2], "on") && !resp.EqualFold(args[2], "off") {
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
		// Client eviction reads it at the client's next Update (after this
		// reply's flush), as Redis' next updateClientMemUsageAndBucket.
		c.noEvict.Store(resp.EqualFold(args[2], "on"))
		c.out = append(c.out, resp.OK...)
	case "tracking":
		s.cmdTracking(c, args) // tracking.go
	case "caching":
		s.cmdCaching(c, args)
	case "getredir":
		c.out = resp.AppendInt(c.out, trackingRedirect(c))
	case "trackinginfo":
		s.cmdTrackingInfo(c)
	case "info":
		c.out = appendText(c.out, s.clientLine(c, time.Now()), c.ctx.RESP3)
	case "pause":
		s.cmdClientPause(c, args) // pause.go
	case "unpause":
		s.cmdClientUnpause(c)
	case "unblock":
		s.cmdClientUnblock(c, args)
	case "reply":
		s.cmdClientReply(c, args)
	case "list":
		s.clientList(c, args[2:])
	case "kill":
		s.clientKill(c, args[2:])
	case "help":
		c.out = resp.AppendArrayHeader(c.out, len(clientHelp))
		for _, l := range clientHelp {
			c.out = resp.AppendSimpleString(c.out, l)
		}
	default:
		c.out = resp.AppendError(c.out, "ERR CLIENT "+strings.ToUpper(sub.Name)+" is not supported by svcdb yet")
	}
}

// clientLine formats one client as CLIENT LIST does (Redis 7.2 fields). Only
// atomics of other loops' clients are read.
func (s *Server) clientLine(c *client, now time.Time) string {
	var b strings.Builder
	idle := (now.UnixMilli() - c.lastInteraction.Load()) / 1000
	cmd := "NULL"
	if p := c.lastCmd.Load(); p != nil {
		cmd = *p
	}
	resp := 2
	if c.resp3.Load() {
		resp = 3
	}
	b.WriteString("id=" + strconv.FormatInt(c.id, 10))
	b.WriteString(" addr=" + c.addr)
	b.WriteString(" laddr=" + c.lad)
	b.WriteString(" fd=" + strconv.Itoa(c.fd))
	b.WriteString(" name=" + c.stringField(&c.name))
	b.WriteString(" age=" + strconv.FormatInt(int64(now.Sub(c.created)/time.Second), 10))
	b.WriteString(" idle=" + strconv.FormatInt(max(idle, 0), 10))
	sub, psub, ssub := pubsubCounts(c)
	flags := clientFlags(c)
	b.WriteString(" flags=" + flags + " db=" + strconv.Itoa(int(c.db.Load())))
	b.WriteString(" sub=" + strconv.Itoa(int(sub)) + " psub=" + strconv.Itoa(int(psub)) + " ssub=" + strconv.Itoa(int(ssub)) + " multi=-1")
	// The query buffer as querybuf.go publishes it; argv-mem (the arguments
	// of a command still arriving) is part of qbuf, as the arguments alias
	// the buffer, so tot-mem does not count it twice.
	qbuf, qfree := c.qbuf.Load(), c.qbufFree.Load()
	omem := c.obl.Load() + pubsubQueued(c)
	totMem := c.memUsage()
	b.WriteString(" qbuf=" + strconv.FormatInt(qbuf, 10) + " qbuf-free=" + strconv.FormatInt(qfree, 10))
	b.WriteString(" argv-mem=" + strconv.FormatInt(c.argvMem.Load(), 10) + " multi-mem=" + strconv.FormatInt(c.multiMem.Load(), 10) + " rbs=0 rbp=0")
	b.WriteString(" obl=" + strconv.FormatInt(c.obl.Load(), 10) + " oll=0 omem=" + strconv.FormatInt(omem, 10))
	b.WriteString(" tot-mem=" + strconv.FormatInt(totMem, 10) + " events=r cmd=" + cmd + " user=" + c.userName() + " redir=" + strconv.FormatInt(trackingRedirect(c), 10) + " resp=" + strconv.Itoa(resp))
	b.WriteString(" lib-name=" + c.stringField(&c.libName) + " lib-ver=" + c.stringField(&c.libVer))
	b.WriteString("\n")
	return b.String()
}

func (s *Server) clientList(c *client, opts [][]byte) {
	var ids map[int64]bool
	typ := "" // "normal" or "pubsub" (clientType); "master", "replica" or "slave": replication links
	for i := 0; i < len(opts); i++ {
		switch {
		case resp.EqualFold(opts[i], "type") && i+1 < len(opts):
			t := opts[i+1]
			i++
			if !(resp.EqualFold(t, "normal") || resp.EqualFold(t, "master") || resp.EqualFold(t, "replica") || resp.EqualFold(t, "slave") || resp.EqualFold(t, "pubsub")) {
				c.out = resp.AppendError(c.out, "ERR Unknown client type '"+sanitize(t)+"'")
				return
			}
			typ = strings.ToLower(string(t)) // replication links: appendLinkLines (replcmd.go)
		case resp.EqualFold(opts[i], "id") && i+1 < len(opts):
			ids = map[int64]bool{}
			for i++; i < len(opts); i++ {
				// Any integer, as Redis: ids that match no client select nothing.
				id, ok := resp.ParseInt(opts[i])
				if !ok {
					c.out = resp.AppendError(c.out, "ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
	}
	now := time.Now()
	var b strings.Builder
	for _, cl := range s.clients() {
		if (ids != nil && !ids[cl.id]) || (typ != "" && clientType(cl) != typ) {
			continue
		}
		b.WriteString(s.clientLine(cl, now))
	}
	s.appendLinkLines(&b, typ, ids, now)
	c.out = appendText(c.out, b.String(), c.ctx.RESP3)
}

// clientKill serves both forms: CLIENT KILL ip:port (reply OK or an error) and
// CLIENT KILL <filter> <value> ... (reply the number killed).
func (s *Server) clientKill(c *client, opts [][]byte) {
	if len(opts) == 1 {
		for _, cl := range s.clients() {
			if cl.addr == string(opts[0]) {
				s.kill(c, cl)
				c.out = append(c.out, resp.OK...)
				return
			}
		}
		c.out = resp.AppendError(c.out, "ERR No such client")
		return
	}
	if len(opts)%2 != 0 {
		c.out = append(c.out, resp.ErrSyntax...)
		return
	}
	var (
		id          int64
		addr, laddr string
		user        string
		hasUser     bool
		skipMe      = true
		maxAge      int64
		killType    string // "normal" or "pubsub" (clientType); "master", "replica" or "slave": replication links
	)
	for i := 0; i < len(opts); i += 2 {
		k, v := opts[i], opts[i+1]
		switch {
		case resp.EqualFold(k, "id"):
			n, ok := resp.ParseInt(v)
			if !ok || n <= 0 {
				c.out = resp.AppendError(c.out, "ERR client-id should be greater than 0")
				return
			}
			id = n
		case resp.EqualFold(k, "addr"):
			addr = string(v)
		case resp.EqualFold(k, "laddr"):
			laddr = string(v)
		case resp.EqualFold(k, "user"):
			if s.acl.User(string(v)) == nil {
				c.out = resp.AppendError(c.out, "ERR No such user '"+sanitize(v)+"'")
				return
			}
			user, hasUser = string(v), true
		case resp.EqualFold(k, "skipme"):
			switch {
			case resp.EqualFold(v, "yes"):
				skipMe = true
			case resp.EqualFold(v, "no"):
				skipMe = false
			default:
				c.out = append(c.out, resp.ErrSyntax...)
				return
			}
		case resp.EqualFold(k, "maxage"):
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n <= 0 {
				c.out = append(c.out, resp.ErrSyntax...)
				return
			}
			maxAge = n
		case resp.EqualFold(k, "type"):
			switch {
			case resp.EqualFold(v, "normal"), resp.EqualFold(v, "pubsub"):
				killType = strings.ToLower(string(v))
			case resp.EqualFold(v, "master"), resp.EqualFold(v, "replica"), resp.EqualFold(v, "slave"):
				killType = strings.ToLower(string(v)) // replication links: killLinks (replcmd.go)
			default:
				c.out = resp.AppendError(c.out, "ERR Unknown client type '"+sanitize(v)+"'")
				return
			}
		default:
			c.out = append(c.out, resp.ErrSyntax...)
			return
		}
	}
	killed := int64(0)
	now := time.Now()
	for _, cl := range s.clients() {
		switch {
		case killType != "" && clientType(cl) != killType,
			id != 0 && cl.id != id,
			addr != "" && cl.addr != addr,
			laddr != "" && cl.lad != laddr,
			hasUser && cl.userName() != user,
			maxAge != 0 && int64(now.Sub(cl.created)/time.Second) < maxAge,
			skipMe && cl == c:
			continue
		}
		s.kill(c, cl)
		killed++
	}
	if !hasUser || user == "default" { // replication links are the default user's
		killed += s.killLinks(killType, id, addr, laddr, maxAge)
	}
	c.out = resp.AppendInt(c.out, killed)
}

// kill closes cl: itself after this turn's replies, another client through
// its own loop.
func (s *Server) kill(c, cl *client) {
	if cl == c {
		c.to(connClosing)
		return
	}
	cl.killed.Store(true)
	_ = cl.conn.Wake(nil)
}

// errUnblocked is what CLIENT UNBLOCK ... ERROR makes a blocked command
// reply, as Redis 7.0.
var errUnblocked = []byte("-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")

// cmdClientUnblock is CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: a client parked
// in a blocking command (BLPOP, XREAD BLOCK ...) gets its timeout reply or
// the UNBLOCKED error, through its waiter (goroutine-safe: the waiter's
// first ending wins, a shard serving it meanwhile included). A client
// postponed by CLIENT PAUSE counts as blocked, as in Redis: it is woken and
// postponed again while the pause lasts.
func (s *Server) cmdClientUnblock(c *client, args [][]byte) {
	var reply []byte // nil: the timeout reply
	if len(args) == 4 {
		switch {
		case resp.EqualFold(args[3], "timeout"):
		case resp.EqualFold(args[3], "error"):
			reply = errUnblocked
		default:
			c.out = resp.AppendError(c.out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(args) > 4 {
		c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], "client")
		return
	}
	id, ok := resp.ParseInt(args[2])
	if !ok {
		c.out = append(c.out, resp.ErrNotInteger...)
		return
	}
	s.registryMu.Lock()
	target := s.registry[id]
	s.registryMu.Unlock()
	done := false
	if target != nil {
		if w := target.blockedPub.Load(); w != nil {
			done = w.Unblock(reply)
		} else if w := target.waitAck.Load(); w != nil {
			done = w.Unblock(reply)
		} else if target.pausedFlag.Load() {
			_ = target.conn.Wake(nil)
			done = true
		}
	}
	if done {
		c.out = resp.AppendInt(c.out, 1)
	} else {
		c.out = resp.AppendInt(c.out, 0)
	}
}

// CLIENT REPLY modes (client.replyMode, owned by the client's loop).
const (
	replyOn       uint8 = iota // every reply is sent (the zero value)
	replyOff                   // no reply until CLIENT REPLY ON
	replySkipNext              // CLIENT REPLY SKIP ran: the next command's reply is dropped
	replySkipThis              // the command running now is the skipped one
)

// cmdClientReply is CLIENT REPLY ON|OFF|SKIP, as Redis: ON answers OK, OFF
// and SKIP answer nothing (SKIP does nothing under OFF), a bad mode is a
// syntax error (itself dropped under OFF).
func (s *Server) cmdClientReply(c *client, args [][]byte) {
	switch {
	case resp.EqualFold(args[2], "on"):
		c.replyMode = replyOn
		c.out = append(c.out, resp.OK...)
	case resp.EqualFold(args[2], "off"):
		c.replyMode = replyOff
	case resp.EqualFold(args[2], "skip"):
		if c.replyMode != replyOff {
			c.replyMode = replySkipNext
		}
	default:
		c.out = append(c.out, resp.ErrSyntax...)
	}
}

// processQuiet is process for a client whose replies CLIENT REPLY OFF or
// SKIP drops: the command runs as always and its reply is cut from c.out,
// or, for a reply that comes later (a queued batch, a parked blocking
// command), dropped when it arrives (client.dropReply). Such a client's
// commands never share a batch (process), so a batch's replies are all of
// one command.
func (s *Server) processQuiet(c *client, args [][]byte) bool {
	mark := len(c.out)
	before := c.replyMode
	if before == replySkipNext {
		c.replyMode = replySkipThis
	}
	if !s.process(c, args) {
		c.replyMode = before // not run: it comes again
		return false
	}
	switch c.replyMode {
	case replyOn:
		return true // CLIENT REPLY ON ran: its OK goes out
	case replySkipThis:
		c.replyMode = replyOn
	case replySkipNext:
		if before == replySkipNext { // CLIENT REPLY SKIP was itself skipped
			break
		}
	}
	switch c.state {
	case connFilling, connBlocked, connAwaiting:
		c.dropReply = true
	default:
		c.out = c.out[:mark]
	}
	return true
}

// memUsage is c's memory as CLIENT LIST's tot-mem shows it and client
// eviction counts it: the client's state, its query buffer with its free
// room, its unsent replies and its mailbox (Pub/Sub, invalidations,
// MONITOR), its MULTI queue, and subOverhead per subscription (its own
// and the registry's map entries, as Redis counts its dict entries but
// not the names). Atomics only.
func (c *client) memUsage() int64 {
	sub, psub, ssub := pubsubCounts(c)
	return int64(unsafe.Sizeof(*c)) + c.qbuf.Load() + c.qbufFree.Load() + c.obl.Load() + pubsubQueued(c) +
		c.multiMem.Load() + int64(sub+psub+ssub)*subOverhead
}

const subOverhead = 96

// evictClient is client eviction's close request (netloop/clientmem), run
// on its goroutine: logged as Redis logs it, then closed by its own loop,
// as CLIENT KILL.
func (s *Server) evictClient(owner any, used int64) {
	c := owner.(*client)
	s.log.Info("Evicting client", "client", strings.TrimSuffix(s.clientLine(c, time.Now()), "\n"), "tot_mem", used)
	c.killed.Store(true)
	_ = c.conn.Wake(nil)
}

// clientFlags are CLIENT LIST's flags for c, in Redis' order; from any
// goroutine (atomics only).
func clientFlags(c *client) string {
	sub, psub, ssub := pubsubCounts(c)
	flags := ""
	if c.monitor.Load() {
		flags = "O"
	}
	if sub+psub+ssub > 0 {
		flags += "P"
	}
	if c.blockedPub.Load() != nil || c.waitAck.Load() != nil || c.pausedFlag.Load() {
		flags += "b" // blocked, or postponed by CLIENT PAUSE, as Redis
	}
	flags += trackingFlagLetters(c) // t, R, B (tracking.go)
	if c.noEvict.Load() {
		flags += "e"
	}
	if flags == "" {
		flags = "N"
	}
	return flags
}
