package netloop

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
)

// DEBUG: Redis' DEBUG has many subcommands (OBJECT, SLEEP, RELOAD, ...);
// svcdb implements DEBUG HOTSHARDS (per-shard traffic analysis), SLEEP,
// BUNDLE (diagnostic bundles, bundlecmd.go) and HELP.

const (
	errHotPeriod   = "ERR PERIOD must be a positive integer number of seconds"
	errHotDisabled = "ERR hot-shard tracking is disabled ([hotshards] enabled = false)"
)

var debugHelp = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"HOTSHARDS [PERIOD <seconds>]",
	"    Per-shard traffic over the last <seconds> (default [hotshards] default-period-secs,",
	"    at most 60): ops, reads and writes per second, share, keys, queue depth and",
	"    HOT/WARM/OK status, with recommendations.",
	"BUNDLE GENERATE [DURATION <seconds>]",
	"    Write a diagnostic bundle (a ZIP of status, INFO, configuration, metrics, slow log,",
	"    latency, clients, hot shards, recent logs, goroutines and a heap profile; with DURATION,",
	"    from 1 to 300, also a CPU profile and per-second rates over that many seconds) and",
	"    return its id, created_at, path, size_bytes, duration_secs and files.",
	"BUNDLE LIST",
	"    The stored bundles, newest first, each as BUNDLE GENERATE returns it.",
	"SLEEP <seconds>",
	"    Stop the server's event loop that serves this client for <seconds> (decimals allowed),",
	"    as Redis' DEBUG SLEEP stops Redis; clients of the other loops are still served.",
	"HELP",
	"    Prints this help.",
	"Redis' other DEBUG subcommands are not supported by svcdb.",
}

func (s *Server) cmdDebug(c *client, args [][]byte) {
	sub := args[1]
	switch {
	case resp.EqualFold(sub, "hotshards"):
		s.cmdDebugHotShards(c, args)
	case resp.EqualFold(sub, "bundle"):
		s.cmdDebugBundle(c, args) // bundlecmd.go
	case resp.EqualFold(sub, "sleep") && len(args) == 3:
		// Redis' debugCommand: strtold of the argument, no validation (junk
		// sleeps 0), then +OK.
		secs, err := strconv.ParseFloat(string(args[2]), 64)
		if err != nil || secs < 0 || math.IsNaN(secs) {
			secs = 0
		}
		time.Sleep(time.Duration(secs * float64(time.Second)))
		c.out = append(c.out, resp.OK...)
	case resp.EqualFold(sub, "help") && len(args) == 2:
		c.out = resp.AppendArrayHeader(c.out, len(debugHelp))
		for _, l := range debugHelp {
			c.out = resp.AppendSimpleString(c.out, l)
		}
	default:
		c.out = resp.AppendError(c.out, "ERR DEBUG "+strings.ToUpper(sanitize(sub))+
			" is not supported by svcdb (it implements DEBUG HOTSHARDS, BUNDLE, SLEEP and HELP of Redis' many DEBUG subcommands)")
	}
}

// hotShardDefaults reads the [hotshards] parameters: the default period
// (clamped to 1..HotWindow) and the HOT and WARM thresholds in percent.
func (s *Server) hotShardDefaults() (period, hot, warm int) {
	period = min(max(int(s.params.Int("hotshards-default-period-secs")), 1), shard.HotWindow)
	return period, int(s.params.Int("hotshards-hot-threshold-percent")), int(s.params.Int("hotshards-warm-threshold-percent"))
}

func (s *Server) cmdDebugHotShards(c *client, args [][]byte) {
	period, hot, warm := s.hotShardDefaults()
	opts := args[2:]
	switch {
	case len(opts) == 0:
	case len(opts) == 2 && resp.EqualFold(opts[0], "period"):
		n, ok := resp.ParseInt(opts[1])
		if !ok || n <= 0 {
			c.out = resp.AppendError(c.out, errHotPeriod)
			return
		}
		period = int(min(n, shard.HotWindow))
	default:
		c.out = append(c.out, resp.ErrSyntax...)
		return
	}
	if !s.params.Bool("hotshards-enabled") {
		c.out = resp.AppendError(c.out, errHotDisabled)
		return
	}
	c.out = appendHotShards(c.out, s.rt.HotShards(period, hot, warm), c.ctx.RESP3)
}

// appendHotShards writes DEBUG HOTSHARDS' reply: a map in RESP3, a flat
// name/value array in RESP2.
func appendHotShards(dst []byte, r shard.HotShardReport, r3 bool) []byte {
	key := resp.AppendBulkString
	dst = resp.AppendMapHeader(dst, 8, r3)
	dst = key(dst, "period_secs")
	dst = resp.AppendInt(dst, int64(r.PeriodSecs))
	dst = key(dst, "num_shards")
	dst = resp.AppendInt(dst, int64(r.NumShards))
	dst = key(dst, "total_ops_per_sec")
	dst = resp.AppendDouble(dst, round2(r.TotalOpsPerSec), r3)
	dst = key(dst, "imbalance_ratio")
	dst = resp.AppendDouble(dst, round2(r.ImbalanceRatio), r3)
	dst = key(dst, "hot_count")
	dst = resp.AppendInt(dst, int64(r.HotCount))
	dst = key(dst, "warm_count")
	dst = resp.AppendInt(dst, int64(r.WarmCount))
	dst = key(dst, "shards")
	dst = resp.AppendArrayHeader(dst, len(r.Shards))
	for _, h := range r.Shards {
		dst = resp.AppendMapHeader(dst, 8, r3)
		dst = key(dst, "shard_id")
		dst = resp.AppendInt(dst, int64(h.ID))
		dst = key(dst, "ops_per_sec")
		dst = resp.AppendDouble(dst, round2(h.OpsPerSec), r3)
		dst = key(dst, "reads_per_sec")
		dst = resp.AppendDouble(dst, round2(h.ReadsPerSec), r3)
		dst = key(dst, "writes_per_sec")
		dst = resp.AppendDouble(dst, round2(h.WritesPerSec), r3)
		dst = key(dst, "percentage")
		dst = resp.AppendDouble(dst, round2(h.Percentage), r3)
		dst = key(dst, "keys")
		dst = resp.AppendInt(dst, h.Keys)
		dst = key(dst, "queue_depth")
		dst = resp.AppendInt(dst, int64(h.QueueDepth))
		dst = key(dst, "status")
		dst = key(dst, h.Status)
	}
	dst = key(dst, "recommendations")
	dst = resp.AppendArrayHeader(dst, len(r.Recommendations))
	for _, l := range r.Recommendations {
		dst = key(dst, l)
	}
	return dst
}

// round2 keeps two decimals, so %.17g doubles read as rates, not noise.
func round2(f float64) float64 { return math.Round(f*100) / 100 }

// infoHotshards is INFO's hotshards section, over the default period.
func (s *Server) infoHotshards(_ *infoInput, b *strings.Builder) {
	enabled := s.params.Bool("hotshards-enabled")
	field(b, "hotshards_enabled", boolInt(enabled))
	if !enabled {
		return
	}
	period, hot, warm := s.hotShardDefaults()
	r := s.rt.HotShards(period, hot, warm)
	field(b, "hotshards_period_secs", r.PeriodSecs)
	field(b, "hotshards_total_ops_per_sec", fmt.Sprintf("%.2f", r.TotalOpsPerSec))
	field(b, "hotshards_imbalance_ratio", fmt.Sprintf("%.2f", r.ImbalanceRatio))
	field(b, "hotshards_hot_count", r.HotCount)
	field(b, "hotshards_warm_count", r.WarmCount)
	for _, h := range r.Shards {
		fmt.Fprintf(b, "shard%d:ops_per_sec=%.2f,percentage=%.2f,keys=%d,status=%s\r\n",
			h.ID, h.OpsPerSec, h.Percentage, h.Keys, h.Status)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
