package pubsub

import (
	"slices"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
)

// Allowed reports whether a RESP2 client may run the command named name
// while subscribed.
func Allowed(name string) bool {
	switch name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// AppendDenied appends Redis' error for a command (its full name) a RESP2
// client in Pub/Sub mode may not run.
func AppendDenied(dst []byte, name string) []byte {
	return resp.AppendError(dst, "ERR Can't execute '"+name+
		"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
}

// AppendPong appends PING's reply in RESP2 Pub/Sub mode: ["pong", message].
func AppendPong(dst []byte, args [][]byte) []byte {
	dst = resp.AppendArrayHeader(dst, 2)
	dst = resp.AppendBulkString(dst, "pong")
	if len(args) > 1 {
		return resp.AppendBulk(dst, args[1])
	}
	return resp.AppendBulkString(dst, "")
}

// help is Redis 7.0.15's PUBSUB HELP text.
var help = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

// Introspect is PUBSUB's subcommands: sub is the resolved subcommand's
// name ("" when unknown), cmd PUBSUB's name for errors; the reply is
// appended to dst.
func (r *Registry) Introspect(dst []byte, cmd, sub string, args [][]byte) []byte {
	switch sub {
	case "channels", "shardchannels":
		if len(args) > 3 {
			return resp.AppendErrSubcommandSyntax(dst, args[1], cmd)
		}
		var pat []byte
		if len(args) == 3 {
			pat = args[2]
		}
		mu, m := &r.mu, r.channels
		if sub == "shardchannels" {
			mu, m = &r.shardMu, r.shard
		}
		var names []string
		mu.RLock()
		for n := range m {
			if pat == nil || glob.Match(pat, []byte(n), false) {
				names = append(names, n)
			}
		}
		mu.RUnlock()
		slices.Sort(names) // Redis lists them in hash order; any order is valid
		dst = resp.AppendArrayHeader(dst, len(names))
		for _, n := range names {
			dst = resp.AppendBulkString(dst, n)
		}
		return dst
	case "numsub", "shardnumsub":
		mu, m := &r.mu, r.channels
		if sub == "shardnumsub" {
			mu, m = &r.shardMu, r.shard
		}
		dst = resp.AppendArrayHeader(dst, 2*(len(args)-2))
		mu.RLock()
		for _, n := range args[2:] {
			dst = resp.AppendBulk(dst, n)
			dst = resp.AppendInt(dst, int64(len(m[string(n)])))
		}
		mu.RUnlock()
		return dst
	case "numpat":
		r.mu.RLock()
		n := len(r.patterns)
		r.mu.RUnlock()
		return resp.AppendInt(dst, int64(n))
	case "help":
		return resp.AppendHelp(dst, help)
	}
	return resp.AppendErrSubcommandSyntax(dst, args[1], cmd)
}
