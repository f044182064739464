package netloop

import (
	"bytes"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// SLOWLOG and LATENCY: the operators' view of s.slowlog and s.latency, with
// Redis 7.0.15's replies and error texts (src/slowlog.c, src/latency.c).
// Both run on the client's loop; the log and the monitor are safe to read
// from any loop while others record.

// slowlogHelp is Redis 7.0's SLOWLOG HELP (addReplyHelp adds the first line
// and the HELP entry).
var slowlogHelp = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}

// latencyHelp is Redis 7.0's LATENCY HELP.
var latencyHelp = []string{
	"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
	"HELP",
	"    Prints this help.",
}

const errSlowlogCount = "ERR count should be greater than or equal to -1"

// cmdSlowlog is Redis' slowlogCommand. process has checked that the
// subcommand exists and its arity.
func (s *Server) cmdSlowlog(c *client, cmd *command.Command, args [][]byte) {
	switch s.subcommand(c, cmd, args).Name {
	case "help":
		c.out = resp.AppendHelp(c.out, slowlogHelp)
	case "reset":
		s.slowlog.Reset()
		c.out = append(c.out, resp.OK...)
	case "len":
		c.out = resp.AppendInt(c.out, int64(s.slowlog.Len()))
	case "get":
		if len(args) > 3 { // slowlog|get's arity is -2, but Redis takes one count at most
			c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], cmd.Name)
			return
		}
		count := int64(10)
		if len(args) == 3 {
			n, ok := resp.ParseInt(args[2])
			if !ok || n < -1 {
				c.out = resp.AppendError(c.out, errSlowlogCount)
				return
			}
			count = n
		}
		entries := s.slowlog.Get(int(min(count, int64(^uint(0)>>1))))
		c.out = resp.AppendArrayHeader(c.out, len(entries))
		for _, e := range entries {
			c.out = resp.AppendArrayHeader(c.out, 6)
			c.out = resp.AppendInt(c.out, e.ID)
			c.out = resp.AppendInt(c.out, e.Time.Unix())
			c.out = resp.AppendInt(c.out, e.Duration.Microseconds())
			c.out = resp.AppendArrayHeader(c.out, len(e.Args))
			for _, a := range e.Args {
				c.out = resp.AppendBulkString(c.out, a)
			}
			c.out = resp.AppendBulkString(c.out, e.ClientAddr)
			c.out = resp.AppendBulkString(c.out, e.ClientName)
		}
	default:
		c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], cmd.Name)
	}
}

// cmdLatency is Redis' latencyCommand. process has checked that the
// subcommand exists and its arity, which covers every argument-count check
// latencyCommand makes.
func (s *Server) cmdLatency(c *client, cmd *command.Command, args [][]byte) {
	switch s.subcommand(c, cmd, args).Name {
	case "history":
		samples := s.latency.History(cstr(args[2]))
		c.out = resp.AppendArrayHeader(c.out, len(samples))
		for _, sm := range samples {
			c.out = resp.AppendArrayHeader(c.out, 2)
			c.out = resp.AppendInt(c.out, sm.Time.Unix())
			c.out = resp.AppendInt(c.out, sm.Millis)
		}
	case "graph":
		event := cstr(args[2])
		graph, ok := s.latency.Graph(event)
		if !ok {
			c.out = resp.AppendError(c.out, "ERR No samples available for event '"+event+"'")
			return
		}
		c.out = appendText(c.out, graph, c.ctx.RESP3)
	case "latest":
		latest := s.latency.Latest()
		c.out = resp.AppendArrayHeader(c.out, len(latest))
		for _, l := range latest {
			c.out = resp.AppendArrayHeader(c.out, 4)
			c.out = resp.AppendBulkString(c.out, l.Event)
			c.out = resp.AppendInt(c.out, l.Time.Unix())
			c.out = resp.AppendInt(c.out, l.LatestMillis)
			c.out = resp.AppendInt(c.out, l.MaxMillis)
		}
	case "doctor":
		c.out = appendText(c.out, s.latency.Doctor(), c.ctx.RESP3)
	case "reset":
		if len(args) == 2 {
			c.out = resp.AppendInt(c.out, int64(s.latency.Reset()))
			return
		}
		resets := 0
		for _, a := range args[2:] {
			resets += s.latency.Reset(cstr(a))
		}
		c.out = resp.AppendInt(c.out, int64(resets))
	case "histogram":
		s.latencyHistogram(c, args)
	case "help":
		c.out = resp.AppendHelp(c.out, latencyHelp)
	default:
		c.out = resp.AppendErrSubcommandSyntax(c.out, args[1], cmd.Name)
	}
}

// cstr is b as Redis' latency code sees an argument: a C string, ending at
// the first NUL byte.
func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
