package netloop

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// Per-command statistics (INFO commandstats/latencystats/errorstats, LATENCY
// HISTOGRAM, svc_commands_duration_seconds), the slow log and the latency
// monitor's command events are recorded by each event loop into its own
// cmdstats.Recorder, so no counter is shared between cores. They report the
// latency the client sees, from the command's parse to its reply being ready
// to write:
//   - a command run on the loop (inline on a free shard, coordinated across
//     shards, or a connection command) is timed from the end of the previous
//     command of the same read (or the start of the read) to the end of its
//     reply: parse, dispatch, token waits, execution and encoding, with one
//     clock read per command (lap);
//   - a command queued in a batch is timed from the parse of the batch's
//     first command (the lap's start, batchStart) to the batch's completion
//     (Batch.Finished, read by the executor after its last command): its
//     wait in the shard's queue and for the token included, and no clock read
//     added on either side.
// The execution-only figure stays available under its own name: the
// executor's per-command time of a queued command (the time since the
// previous command of the batch ended), and the whole time of a command run
// on the loop (it waited for nothing, but a coordinated command's wait for
// its shards' tokens is in it: telling them apart would cost a second clock
// read). It feeds cmdstats' Exec figures (svc_commands_execution_seconds,
// Command.Exec); the difference is the time spent waiting for a shard.

// executed records a command that ran on this loop (inline on a shard,
// coordinated, or loop-local) and whose reply was just appended at
// c.out[mark:].
func (s *Server) executed(c *client, cmd *command.Command, args [][]byte, mark int) {
	s.account(c, cmd, args, c.out[mark:], c.lap())
}

// lap returns the nanoseconds since the end of the previous command (or the
// start of the read, whose time.Now OnTraffic takes anyway) and starts the
// next lap: one monotonic clock read per command.
func (c *client) lap() int64 {
	now := cmdstats.Now()
	d := now - c.tick
	c.tick = now
	return d
}

// account records one executed command that waited for nothing.
func (s *Server) account(c *client, cmd *command.Command, args [][]byte, reply []byte, ns int64) {
	s.accountWaited(c, cmd, args, reply, ns, ns)
}

// accountWaited records one executed command that took ns from its parse to
// its reply, exec of it executing (see above).
func (s *Server) accountWaited(c *client, cmd *command.Command, args [][]byte, reply []byte, ns, exec int64) {
	s.accountCall(c, cmd, args, reply, ns, exec, false)
}

// accountCall is accountWaited for a command c ran itself or, byScript, one
// a script running on c called (redis.call): counted the same, logged in
// the slow log under the script's client as Redis does (address "?:0", no
// name).
func (s *Server) accountCall(c *client, cmd *command.Command, args [][]byte, reply []byte, ns, exec int64, byScript bool) {
	c.loop.rec.CallAfterWait(cmd.ID, ns, exec)
	if s.monitoring() {
		s.feedMonitorsAfter(c, cmd, args) // monitor.go
	}
	if cmd == s.track.flushall || cmd == s.track.flushdb {
		s.trackEmptyFlush(c, reply) // tracking.go
	}
	if len(reply) > 0 && (reply[0] == '-' || reply[0] == '!') {
		c.loop.rec.Failed(cmd.ID)
		c.loop.rec.ErrorReply(reply)
	}
	s.observeSlow(c, cmd, args, ns, byScript)
}

// rejected records a command refused before it ran; reply is its error.
func (s *Server) rejected(c *client, cmd *command.Command, reply []byte) {
	if c.multi.active {
		c.multi.failed = true // as Redis' flagTransaction: EXEC will abort
	}
	if cmd != nil {
		c.loop.rec.Rejected(cmd.ID)
	}
	c.loop.rec.ErrorReply(reply)
	c.lap() // the next command's time starts here
}

// CommandStats returns the per-command statistics since start (or the last
// CONFIG RESETSTAT), indexed by command ID (see command.Table.ByID).
func (s *Server) CommandStats() *cmdstats.Snapshot { return s.cmdStats.Snapshot() }

// CommandCallCounts stores every command ID's executed calls since start
// (CONFIG RESETSTAT does not rewind them) in dst and returns it: the cheap
// read behind the diagnostics' per-command rates (cmdstats.Set.CallCounts).
func (s *Server) CommandCallCounts(dst []int64) []int64 { return s.cmdStats.CallCounts(dst) }

// ---- INFO sections -----------------------------------------------------------

// statsByName lists the commands that were called, by full name.
func (s *Server) statsByName(snap *cmdstats.Snapshot) []namedStats {
	var out []namedStats
	for id, st := range snap.Commands {
		if st != nil {
			out = append(out, namedStats{s.table.ByID(id).FullName, st})
		}
	}
	slices.SortFunc(out, func(a, b namedStats) int { return strings.Compare(a.name, b.name) })
	return out
}

type namedStats struct {
	name string
	*cmdstats.Command
}

func (s *Server) infoCommandstats(in *infoInput, b *strings.Builder) {
	for _, c := range s.statsByName(in.cmds()) {
		usec := c.Total.Microseconds()
		perCall := 0.0
		if c.Calls > 0 {
			perCall = float64(c.Total.Nanoseconds()) / 1000 / float64(c.Calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			c.name, c.Calls, usec, perCall, c.Rejected, c.Failed)
	}
}

// latencyPercentiles are Redis' default latency-tracking-info-percentiles.
var latencyPercentiles = []struct {
	label string
	q     float64
}{{"p50", 0.50}, {"p99", 0.99}, {"p99.9", 0.999}}

func (s *Server) infoLatencystats(in *infoInput, b *strings.Builder) {
	for _, c := range s.statsByName(in.cmds()) {
		if c.Latency.Count == 0 {
			continue
		}
		fmt.Fprintf(b, "latency_percentiles_usec_%s:", c.name)
		for i, p := range latencyPercentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%s=%.3f", p.label, float64(c.Latency.Percentile(p.q).Nanoseconds())/1000)
		}
		b.WriteString("\r\n")
	}
}

func (s *Server) infoErrorstats(in *infoInput, b *strings.Builder) {
	snap := in.cmds()
	for i, code := range cmdstats.ErrorCodes() {
		if n := snap.Errors[i]; n > 0 {
			fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", code, n)
		}
	}
}

// ---- LATENCY HISTOGRAM -------------------------------------------------------

// latencyHistogram is LATENCY HISTOGRAM [command ...]: for each command with
// calls (all of them without arguments; a container command stands for its
// subcommands), its calls and the cumulative count at each power-of-two
// microsecond bound where the count grows, as Redis reports its hdr
// histogram.
func (s *Server) latencyHistogram(c *client, args [][]byte) {
	snap := s.cmdStats.Snapshot()
	var list []namedStats
	if len(args) <= 2 {
		list = s.statsByName(snap)
	} else {
		seen := map[int]bool{}
		add := func(cmd *command.Command) {
			if st := snap.Commands[cmd.ID]; st != nil && st.Latency.Count > 0 && !seen[cmd.ID] {
				seen[cmd.ID] = true
				list = append(list, namedStats{cmd.FullName, st})
			}
		}
		for _, name := range args[2:] {
			cmd := s.table.LookupFullName(name)
			if cmd == nil {
				continue
			}
			if len(cmd.Subcommands) > 0 {
				for _, sub := range cmd.Subcommands {
					add(sub)
				}
				continue
			}
			add(cmd)
		}
	}
	list = slices.DeleteFunc(list, func(n namedStats) bool { return n.Latency.Count == 0 })
	resp3 := c.ctx.RESP3
	c.out = resp.AppendMapHeader(c.out, len(list), resp3)
	for _, n := range list {
		c.out = resp.AppendBulkString(c.out, n.name)
		c.out = resp.AppendMapHeader(c.out, 2, resp3)
		c.out = resp.AppendBulkString(c.out, "calls")
		c.out = resp.AppendInt(c.out, n.Calls)
		c.out = resp.AppendBulkString(c.out, "histogram_usec")
		type point struct{ us, count int64 }
		var points []point
		var prev int64
		for k := 0; k <= cmdstats.Pow2Bounds; k++ {
			// Redis labels each bucket with its highest value in whole µs:
			// "1" counts samples up to 1.024 µs, "2" up to 2.048 µs, and so
			// on; Cumulative(k) counts samples below 2^k µs.
			cum := n.Latency.Count // past the last bound: everything
			if k < cmdstats.Pow2Bounds {
				cum = n.Latency.Cumulative(k)
			}
			if cum > prev {
				points = append(points, point{1 << k, cum})
			}
			prev = cum
		}
		c.out = resp.AppendMapHeader(c.out, len(points), resp3)
		for _, p := range points {
			c.out = resp.AppendInt(c.out, p.us)
			c.out = resp.AppendInt(c.out, p.count)
		}
	}
}

// scriptClientAddr is the slow log's client address of a command a script
// called: Redis' Lua client has no connection, and its address prints as
// "?:0".
const scriptClientAddr = "?:0"

// observeSlow feeds the slowlog and the latency monitor ("command" and
// "fast-command" events, as Redis' call() does) with ns, the latency the
// client saw (parse to reply ready, waits for the shard included: see the
// top of this file). Both checks are one atomic load when the command is
// not slow.
func (s *Server) observeSlow(c *client, cmd *command.Command, args [][]byte, ns int64, byScript bool) {
	d := time.Duration(ns)
	if s.slowlog.SlowerThan(d) && cmd.Flags&command.FlagSkipSlowlog == 0 {
		if byScript {
			s.slowlog.Add(args, d, time.Now(), scriptClientAddr, "")
		} else {
			s.slowlog.Add(args, d, time.Now(), c.addr, c.stringField(&c.name))
		}
	}
	if s.latency.Enabled() { // one load, inlined (AddIfNeeded is a call)
		event := "command"
		if cmd.Flags&command.FlagFast != 0 {
			event = "fast-command"
		}
		s.latency.AddIfNeeded(event, d)
	}
}
