package command

import (
	"bytes"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
)

// commandHelp is COMMAND HELP's reply text in Redis 7.0.15, header and
// trailing HELP entry included (addReplyHelp adds those).
var commandHelp = [...]string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
	"HELP",
	"    Prints this help.",
}

// Error texts of COMMAND, byte for byte as Redis 7.0 sends them.
const (
	errSyntax            = "ERR syntax error"
	errInvalidCommand    = "ERR Invalid command specified"
	errInvalidArgCount   = "ERR Invalid number of arguments specified for command"
	errNoKeyArguments    = "ERR The command has no key arguments"
	errInvalidArguments  = "ERR Invalid arguments specified for command"
	maxSubcommandInError = 128 // Redis formats the name with %.128s
)

// Reply appends the complete reply to a COMMAND invocation. args[0] is the
// command name as the client sent it (any case) and args[1:] its arguments;
// resp3 is the connection's protocol. It covers every COMMAND form of Redis
// 7.0: no subcommand (all commands), COUNT, INFO [name ...], DOCS
// [name ...], LIST [FILTERBY MODULE|ACLCAT|PATTERN x], GETKEYS cmd args...,
// GETKEYSANDFLAGS cmd args... and HELP, with Redis' error replies for
// unknown subcommands, wrong arity and bad GETKEYS input.
//
// Reply reads args only while it runs and does not retain them. Commands
// are listed in name order where Redis uses its (unordered) dict order; the
// reply tips say clients must not rely on that order.
func (t *Table) Reply(dst []byte, args [][]byte, resp3 bool) []byte {
	if len(args) <= 1 {
		return t.appendAllInfo(dst, resp3)
	}
	self := t.top["command"]
	sub := t.LookupSub(self, args[1])
	if sub == nil {
		return appendUnknownSubcommand(dst, args[0], args[1])
	}
	if !sub.CheckArity(len(args)) {
		dst = append(dst, "-ERR wrong number of arguments for '"...)
		dst = append(dst, sub.FullName...)
		return append(dst, "' command\r\n"...)
	}
	switch sub.Name {
	case "count":
		return appendInt(dst, len(t.all))
	case "info":
		if len(args) == 2 {
			return t.appendAllInfo(dst, resp3)
		}
		dst = resp.AppendArrayHeader(dst, len(args)-2)
		for _, name := range args[2:] {
			dst = t.AppendInfo(dst, t.LookupFullName(name), resp3)
		}
		return dst
	case "docs":
		return t.appendDocsReply(dst, args[2:], resp3)
	case "list":
		return t.appendList(dst, args[2:])
	case "getkeys":
		return t.appendGetKeys(dst, args[2:], false, resp3)
	case "getkeysandflags":
		return t.appendGetKeys(dst, args[2:], true, resp3)
	case "help":
		dst = resp.AppendArrayHeader(dst, len(commandHelp))
		for _, line := range commandHelp {
			dst = resp.AppendSimpleString(dst, line)
		}
		return dst
	}
	// A subcommand in the table without a case above is a bug in this
	// package; answer like an unknown subcommand rather than panicking.
	return appendUnknownSubcommand(dst, args[0], args[1])
}

func (t *Table) appendAllInfo(dst []byte, resp3 bool) []byte {
	dst = resp.AppendArrayHeader(dst, len(t.all))
	for _, c := range t.all {
		dst = t.AppendInfo(dst, c, resp3)
	}
	return dst
}

// appendUnknownSubcommand writes Redis' "unknown subcommand" error:
// "ERR unknown subcommand '<sub>'. Try <CMD> HELP." with the subcommand cut
// at a NUL byte and at 128 bytes (C's %.128s) and CR/LF mapped to spaces,
// as Redis' error formatting does.
func appendUnknownSubcommand(dst, cmd, sub []byte) []byte {
	if i := bytes.IndexByte(sub, 0); i >= 0 {
		sub = sub[:i]
	}
	if len(sub) > maxSubcommandInError {
		sub = sub[:maxSubcommandInError]
	}
	dst = append(dst, "-ERR unknown subcommand '"...)
	for _, c := range sub {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	dst = append(dst, "'. Try "...)
	for _, c := range cmd {
		switch {
		case c == '\r' || c == '\n':
			c = ' '
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return append(dst, " HELP.\r\n"...)
}

// appendDocsReply writes COMMAND DOCS: a map from full name to docs, of all
// top-level commands when names is empty, else of the known names in the
// given order (unknown ones omitted, repeats kept, as Redis does).
func (t *Table) appendDocsReply(dst []byte, names [][]byte, resp3 bool) []byte {
	if len(names) == 0 {
		dst = resp.AppendMapHeader(dst, len(t.all), resp3)
		for _, c := range t.all {
			dst = t.AppendDocs(dst, c, resp3)
		}
		return dst
	}
	n := 0
	for _, name := range names {
		if t.LookupFullName(name) != nil {
			n++
		}
	}
	dst = resp.AppendMapHeader(dst, n, resp3)
	for _, name := range names {
		dst = t.AppendDocs(dst, t.LookupFullName(name), resp3)
	}
	return dst
}

// listFilter is COMMAND LIST's optional FILTERBY clause.
type listFilter struct {
	kind byte // 0 none, 'm' module, 'a' ACL category, 'p' pattern
	arg  []byte
}

func (f *listFilter) match(c *Command) bool {
	switch f.kind {
	case 'm':
		return false // svcdb has no modules
	case 'a':
		for _, cat := range c.ACLCategories {
			// Categories are stored as "@name"; FILTERBY takes the bare name.
			if len(cat) > 1 && resp.EqualFold(f.arg, cat[1:]) {
				return true
			}
		}
		return false
	case 'p':
		return glob.Match(f.arg, []byte(c.FullName), true)
	}
	return true
}

// appendList writes COMMAND LIST: the full names of all commands and
// subcommands, each parent followed by its subcommands. A filter applies to
// parents and subcommands independently, as in Redis.
func (t *Table) appendList(dst []byte, opts [][]byte) []byte {
	var f listFilter
	// Redis accepts exactly "FILTERBY <type> <arg>" as the final three
	// arguments; anything else is a syntax error.
	switch {
	case len(opts) == 0:
	case len(opts) == 3 && resp.EqualFold(opts[0], "filterby"):
		switch {
		case resp.EqualFold(opts[1], "module"):
			f.kind = 'm'
		case resp.EqualFold(opts[1], "aclcat"):
			f.kind = 'a'
		case resp.EqualFold(opts[1], "pattern"):
			f.kind = 'p'
		default:
			return resp.AppendError(dst, errSyntax)
		}
		f.arg = opts[2]
	default:
		return resp.AppendError(dst, errSyntax)
	}
	n := 0
	for _, c := range t.byID {
		if f.match(c) {
			n++
		}
	}
	dst = resp.AppendArrayHeader(dst, n)
	// byID is already "parent, then its subcommands" in name order.
	for _, c := range t.byID {
		if f.match(c) {
			dst = resp.AppendBulkString(dst, c.FullName)
		}
	}
	return dst
}

// appendGetKeys writes COMMAND GETKEYS / GETKEYSANDFLAGS for the command
// line argv (argv[0] is the command name). Checks run in Redis' order:
// unknown command, no key specs, arity, then key extraction.
func (t *Table) appendGetKeys(dst []byte, argv [][]byte, withFlags, resp3 bool) []byte {
	c := t.Lookup(argv[0])
	if c != nil && len(c.Subcommands) > 0 && len(argv) > 1 {
		c = t.LookupSub(c, argv[1])
	}
	switch {
	case c == nil:
		return resp.AppendError(dst, errInvalidCommand)
	case !hasKeys(c):
		return resp.AppendError(dst, errNoKeyArguments)
	case !c.CheckArity(len(argv)):
		return resp.AppendError(dst, errInvalidArgCount)
	}
	var posBuf [16]int
	var flagBuf [16]KeyFlag
	var pos []int
	var flags []KeyFlag
	if withFlags || c.FirstKey == 0 || c.Flags&FlagMovableKeys != 0 {
		// Key specs describe every key and carry the access flags.
		var ok bool
		pos, flags, ok = c.KeysWithFlags(argv, posBuf[:0], flagBuf[:0])
		if !ok {
			pos = pos[:0]
		}
	} else {
		// The legacy first/last/step range, as documented for GETKEYS.
		pos = c.Keys(argv, posBuf[:0])
	}
	if len(pos) == 0 {
		if c.Flags&FlagNoMandatoryKeys != 0 {
			return resp.AppendArrayHeader(dst, 0)
		}
		return resp.AppendError(dst, errInvalidArguments)
	}
	dst = resp.AppendArrayHeader(dst, len(pos))
	for i, p := range pos {
		if !withFlags {
			dst = resp.AppendBulk(dst, argv[p])
			continue
		}
		f := flags[i]
		if f&KeyVariableFlags != 0 {
			f = variableKeyFlags(c, argv, f)
		}
		dst = resp.AppendArrayHeader(dst, 2)
		dst = resp.AppendBulk(dst, argv[p])
		dst = appendKeyFlags(dst, f, resp3)
	}
	return dst
}

// hasKeys is Redis' doesCommandHaveKeys: a command has keys when one of its
// key specs is not flagged not_key. SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH
// describe their shard channels with not_key specs only, and COMMAND GETKEYS
// answers "no key arguments" for them.
func hasKeys(c *Command) bool {
	for i := range c.KeySpecs {
		if c.KeySpecs[i].Flags&KeyNotKey == 0 {
			return true
		}
	}
	return false
}

// variableKeyFlags resolves key specs flagged variable_flags, whose real
// access depends on the other arguments. Redis does this in the command's
// getkeys_proc; SET (setGetKeys) is the only such command in the table: with
// GET the key is read-write, otherwise it is only overwritten.
func variableKeyFlags(c *Command, argv [][]byte, spec KeyFlag) KeyFlag {
	if c.FullName == "set" {
		for _, a := range argv[3:] {
			if resp.EqualFold(a, "get") {
				return KeyRW | KeyAccess | KeyUpdate
			}
		}
		return KeyOW | KeyUpdate
	}
	return spec
}
