package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var tailHeader = []string{
	"pipeline",
	"svcdb ops/s", "redis ops/s", "ops ratio",
	"svcdb p50", "redis p50",
	"svcdb p99", "redis p99", "p99 ratio",
	"svcdb p99.9", "redis p99.9", "p99.9 ratio",
	"GC cycles", "GC pause ms", "GC CPU %", "assist CPU %",
}

// tailRows are the steady-state table's rows, one per pipeline: medians
// over the rounds, ratios svcdb/redis, svcdb's GC over all its runs at
// that depth.
func (r *TailReport) tailRows() [][]string {
	var rows [][]string
	for _, p := range r.Pipelines {
		s, ns := r.SvcDB.median(p)
		q, nq := r.Redis.median(p)
		num := func(n int, v float64) string {
			if n == 0 {
				return "-"
			}
			return fmt.Sprintf("%.3f", v)
		}
		ops := func(n int, v float64) string {
			if n == 0 {
				return "-"
			}
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		rat := func(a, b float64) string {
			if ns == 0 || nq == 0 || b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", a/b)
		}
		row := []string{strconv.Itoa(p),
			ops(ns, s.OpsPerSec), ops(nq, q.OpsPerSec), rat(s.OpsPerSec, q.OpsPerSec),
			num(ns, s.P50Ms), num(nq, q.P50Ms),
			num(ns, s.P99Ms), num(nq, q.P99Ms), rat(s.P99Ms, q.P99Ms),
			num(ns, s.P999Ms), num(nq, q.P999Ms), rat(s.P999Ms, q.P999Ms),
		}
		row = append(row, gcCells(s.GC)...)
		rows = append(rows, row)
	}
	return rows
}

// gcCells are a GCDelta's table cells: cycles, total pause in ms, and the
// collector's CPU and its assist part as a percentage of one CPU over the
// span.
func gcCells(g *GCDelta) []string {
	if g == nil || g.WallSec <= 0 {
		return []string{"-", "-", "-", "-"}
	}
	return []string{strconv.FormatInt(g.Cycles, 10), fmt.Sprintf("%.2f", g.PauseMs),
		fmt.Sprintf("%.1f", 100*g.CPUSec/g.WallSec), fmt.Sprintf("%.1f", 100*g.AssistCPUSec/g.WallSec)}
}

var snapHeader = []string{
	"pipeline", "server", "BGSAVE s", "fork ms",
	"p99 before", "p99 during", "p99 x",
	"p99.9 before", "p99.9 during", "p99.9 x",
	"ops/s before", "ops/s during",
	"GC cycles", "GC pause ms", "GC CPU %", "assist CPU %",
}

// snapRows are the snapshot table's rows: each server at each depth, and
// a row of svcdb's p99 and p99.9 growth over redis-server's ("svcdb/redis":
// at or below 1.00, a BGSAVE moves svcdb's tail no more than Redis' fork
// moves Redis').
func (r *TailReport) snapRows() [][]string {
	find := func(side *TailSide, p int) *TailSnapshot {
		for i := range side.Snapshots {
			if side.Snapshots[i].Pipeline == p {
				return &side.Snapshots[i]
			}
		}
		return nil
	}
	var pipes []int
	for _, side := range []*TailSide{&r.SvcDB, &r.Redis} {
		for _, sn := range side.Snapshots {
			if !containsInt(pipes, sn.Pipeline) {
				pipes = append(pipes, sn.Pipeline)
			}
		}
	}
	var rows [][]string
	for _, p := range pipes {
		s, q := find(&r.SvcDB, p), find(&r.Redis, p)
		for _, side := range []struct {
			name string
			sn   *TailSnapshot
		}{{SideSvcDB, s}, {SideRedis, q}} {
			sn := side.sn
			if sn == nil {
				continue
			}
			fork := "-"
			if sn.ForkUsec > 0 {
				fork = fmt.Sprintf("%.1f", float64(sn.ForkUsec)/1000)
			}
			row := []string{strconv.Itoa(p), side.name, fmt.Sprintf("%.1f", sn.DurationSec), fork,
				fmt.Sprintf("%.3f", sn.Baseline.P99Ms), fmt.Sprintf("%.3f", sn.During.P99Ms), growth(sn.Baseline.P99Ms, sn.During.P99Ms),
				fmt.Sprintf("%.3f", sn.Baseline.P999Ms), fmt.Sprintf("%.3f", sn.During.P999Ms), growth(sn.Baseline.P999Ms, sn.During.P999Ms),
				fmt.Sprintf("%.0f", sn.Baseline.OpsPerSec), fmt.Sprintf("%.0f", sn.During.OpsPerSec),
			}
			rows = append(rows, append(row, gcCells(sn.GC)...))
		}
		if s != nil && q != nil {
			g := func(sb, sd, qb, qd float64) string {
				if sb == 0 || qb == 0 || qd == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2f", (sd/sb)/(qd/qb))
			}
			row := []string{strconv.Itoa(p), "svcdb/redis", "", "", "", "",
				g(s.Baseline.P99Ms, s.During.P99Ms, q.Baseline.P99Ms, q.During.P99Ms), "", "",
				g(s.Baseline.P999Ms, s.During.P999Ms, q.Baseline.P999Ms, q.During.P999Ms), "", "", "", "", "", ""}
			rows = append(rows, row)
		}
	}
	return rows
}

var gcPhaseHeader = []string{
	"pipeline", "GC s",
	"p99 before", "p99 during", "p99 x",
	"p99.9 before", "p99.9 during", "p99.9 x",
	"ops/s before", "ops/s during",
	"GC cycles", "GC pause ms", "GC CPU s", "assist CPU s",
}

// gcPhaseRows are svcdb's forced-collection phases, one row per depth.
func (r *TailReport) gcPhaseRows() [][]string {
	var rows [][]string
	for _, ev := range r.SvcDB.ForcedGCs {
		row := []string{strconv.Itoa(ev.Pipeline), fmt.Sprintf("%.2f", ev.DurationSec),
			fmt.Sprintf("%.3f", ev.Baseline.P99Ms), fmt.Sprintf("%.3f", ev.During.P99Ms), growth(ev.Baseline.P99Ms, ev.During.P99Ms),
			fmt.Sprintf("%.3f", ev.Baseline.P999Ms), fmt.Sprintf("%.3f", ev.During.P999Ms), growth(ev.Baseline.P999Ms, ev.During.P999Ms),
			fmt.Sprintf("%.0f", ev.Baseline.OpsPerSec), fmt.Sprintf("%.0f", ev.During.OpsPerSec),
		}
		if g := ev.GC; g != nil {
			row = append(row, strconv.FormatInt(g.Cycles, 10), fmt.Sprintf("%.2f", g.PauseMs), fmt.Sprintf("%.2f", g.CPUSec), fmt.Sprintf("%.2f", g.AssistCPUSec))
		} else {
			row = append(row, "-", "-", "-", "-")
		}
		rows = append(rows, row)
	}
	return rows
}

// growth formats during/before as "1.23x".
func growth(before, during float64) string {
	if before <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", during/before)
}

func containsInt(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

const tailLegend = "Latencies in ms, client-side (write to reply parsed), closed loop; medians over the rounds. Ratios svcdb/redis: ops above 1 and latencies below 1 are better for svcdb.\n" +
	"GC: svcdb's collector over all its runs at that depth, from INFO svc's gc_* fields before and after each run (core/gcstats): cycles, total stop-the-world pause (estimated within ~12%), and the collector's CPU and its mark-assist part as a percentage of one CPU (the Go runtime's estimates).\n" +
	"Snapshot: the workload in back-to-back windows (fresh connections each), before BGSAVE and while it ran (windows started before it finished); x is during/before; the svcdb/redis row is svcdb's growth over Redis' growth (at or below 1.00: the snapshot moves svcdb's tail no more than Redis' fork moves Redis').\n" +
	"Full collection: the same windows around MEMORY PURGE, which svcdb answers after runtime.GC and debug.FreeOSMemory off its event loops (two complete cycles of the loaded heap): what the runtime's periodic collection (one at least every 2 minutes) and each pacer-started cycle do to the tail."

func (r *TailReport) title() string {
	return fmt.Sprintf("tail latency with %d keys of %d bytes, svcdb vs redis-server: %s, %d connections, %.0f s runs, %d round(s)",
		r.Keys, r.ValueSize, r.Workload, r.Connections, r.RunSec, r.Rounds)
}

func (r *TailReport) fillLines() []string {
	var out []string
	for _, s := range []struct {
		name string
		side *TailSide
	}{{SideSvcDB, &r.SvcDB}, {SideRedis, &r.Redis}} {
		if s.side.FillSec == 0 {
			continue
		}
		l := fmt.Sprintf("%s: loaded in %.1f s (%.0f keys/s), RSS %s", s.name, s.side.FillSec, float64(r.Keys)/s.side.FillSec, mib(s.side.RSSBytes))
		if g := s.side.FillGC; g != nil {
			l += fmt.Sprintf("; GC during the load: %d cycles, pauses %.1f ms, CPU %.1f s (assist %.1f s), largest pause since start %d us",
				g.Cycles, g.PauseMs, g.CPUSec, g.AssistCPUSec, g.PauseMaxUs)
		}
		out = append(out, l)
	}
	return out
}

// WriteTable prints the comparison as aligned text tables.
func (r *TailReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", r.title())
	ew.printf("machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("pinning: %s\n", r.PinNote)
	ew.printf("svcdb:   %s\n", r.SvcDBCmd)
	ew.printf("redis:   %s\n", r.RedisCmd)
	for _, l := range r.fillLines() {
		ew.printf("%s\n", l)
	}
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	if err := writeTable(w, tailHeader, r.tailRows()); err != nil {
		return err
	}
	if rows := r.snapRows(); len(rows) > 0 {
		ew.printf("\nBGSAVE during the workload (%.0f s windows):\n", r.WindowSec)
		if ew.err != nil {
			return ew.err
		}
		if err := writeTable(w, snapHeader, rows); err != nil {
			return err
		}
	}
	if rows := r.gcPhaseRows(); len(rows) > 0 {
		ew.printf("\nA full collection of svcdb's heap during the workload (MEMORY PURGE: two forced cycles):\n")
		if ew.err != nil {
			return ew.err
		}
		if err := writeTable(w, gcPhaseHeader, rows); err != nil {
			return err
		}
	}
	ew.printf("%s\n", tailLegend)
	for _, f := range r.Failures() {
		ew.printf("FAILED %s\n", f)
	}
	return ew.err
}

// WriteMarkdown writes the comparison as a Markdown section.
func (r *TailReport) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("## Tail latency with %d keys\n\n", r.Keys)
	cmd := "`svcbench tail`"
	if r.Command != "" {
		cmd = "`" + r.Command + "`"
	}
	ew.printf("Measured %s with %s: %s.\n\n", r.Started.UTC().Format("2006-01-02 15:04 MST"), cmd, r.title())
	ew.printf("- Machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("- Pinning: %s\n", r.PinNote)
	ew.printf("- svcdb: `%s`\n", r.SvcDBCmd)
	ew.printf("- redis: `%s`\n", r.RedisCmd)
	for _, l := range r.fillLines() {
		ew.printf("- %s\n", l)
	}
	ew.printf("- %s\n\n", strings.ReplaceAll(tailLegend, "\n", "\n- "))
	md := func(header []string, rows [][]string) {
		ew.printf("| %s |\n", strings.Join(header, " | "))
		ew.printf("|---%s|\n", strings.Repeat("|--:", len(header)-1))
		for _, row := range rows {
			ew.printf("| %s |\n", strings.Join(row, " | "))
		}
	}
	md(tailHeader, r.tailRows())
	if rows := r.snapRows(); len(rows) > 0 {
		ew.printf("\nBGSAVE during the workload (%.0f s windows):\n\n", r.WindowSec)
		md(snapHeader, rows)
	}
	if rows := r.gcPhaseRows(); len(rows) > 0 {
		ew.printf("\nA full collection of svcdb's heap during the workload (MEMORY PURGE: two forced cycles):\n\n")
		md(gcPhaseHeader, rows)
	}
	if f := r.Failures(); len(f) > 0 {
		ew.printf("\nFailed:\n\n")
		for _, l := range f {
			ew.printf("- %s\n", l)
		}
	}
	return ew.err
}

// WriteJSON writes the whole report, every run included.
func (r *TailReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
