package netloop

import (
	"runtime"
	"runtime/debug"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop/meminfo"
)

// MEMORY DOCTOR, MALLOC-STATS, PURGE, STATS and HELP; MEMORY USAGE runs in
// the shard that owns its key (shard.cmdMemory).

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

func (s *Server) cmdMemory(c *client, cmd *command.Command, args [][]byte) {
	switch s.subcommand(c, cmd, args).Name {
	case "help":
		c.out = resp.AppendHelp(c.out, memoryHelp)
	case "doctor":
		// Redis' memoryDoctor refuses to judge below 5 MB; svcdb has no
		// fragmentation or peak heuristics yet, so above it there is nothing
		// to report, in Redis' words.
		text := "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base."
		if _, used := s.datasetTotals(); used < 5<<20 {
			text = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting."
		}
		c.out = resp.AppendVerbatim(c.out, "txt", []byte(text), c.ctx.RESP3)
	case "malloc-stats":
		c.out = resp.AppendVerbatim(c.out, "txt", []byte("Stats not supported for the current allocator"), c.ctx.RESP3)
	case "purge":
		// A full collection and returning free pages to the OS take the
		// whole heap's time: off the loop, like a bundle.
		s.runAsync(c, func() []byte {
			runtime.GC()
			debug.FreeOSMemory()
			return append([]byte(nil), resp.OK...)
		})
	case "stats":
		s.memoryStats(c)
	}
}

// datasetTotals sums the shards' published key counts and value memory.
func (s *Server) datasetTotals() (keys, bytes int64) {
	for _, sn := range s.rt.Snapshots() {
		keys += sn.TotalKeys()
		bytes += sn.MemoryUsed
	}
	return keys, bytes
}

// goMemory reads what the Go runtime has mapped and what its heap objects
// take (runtime/metrics: no stop-the-world).
func goMemory() (sys, heap int64) {
	m := meminfo.ReadGo()
	return m.Total, m.Objects
}

// memoryStats replies with the MEMORY STATS fields svcdb can fill truthfully,
// in Redis' order and names; allocator fields come from the Go runtime.
func (s *Server) memoryStats(c *client) {
	sys, heap := goMemory()
	keys, dataset := s.datasetTotals()
	perKey := int64(0)
	if keys > 0 {
		perKey = dataset / keys
	}
	fields := []struct {
		name string
		val  int64
	}{
		{"total.allocated", heap},
		{"replication.backlog", 0},
		{"clients.slaves", 0},
		{"aof.buffer", 0},
		{"keys.count", keys},
		{"keys.bytes-per-key", perKey},
		{"dataset.bytes", dataset},
		{"allocator.allocated", heap},
		{"allocator.resident", sys},
	}
	c.out = resp.AppendMapHeader(c.out, len(fields), c.ctx.RESP3)
	for _, f := range fields {
		c.out = resp.AppendBulkString(c.out, f.name)
		c.out = resp.AppendInt(c.out, f.val)
	}
}
