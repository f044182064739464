package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// throughputColumns drops compare's "bar" column: the persistence
// comparison holds no case to a bar.
func throughputColumns(cells []string) []string {
	i := slices.Index(tableHeader, "bar")
	return slices.Delete(slices.Clone(cells), i, i+1)
}

const throughputLegend = "ops/s: higher is better; p50, p99 (latency, ms) and cpu us/req (server CPU time per request, the fsync threads included): lower is better.\n" +
	"spread: (max-min)/median of ops/s over the rounds, the larger of the two servers; an ops ratio closer to 1 than that is noise.\n" +
	"others: share of a CPU other processes took on the benchmark's CPUs during a median run; runs over the limit are left out of the medians when both servers have others, and a ! marks a row that had to use some."

var snapshotHeader = []string{
	"server", "BGSAVE s", "rdb MiB",
	"baseline p50 ms", "p99 ms", "p99.9 ms", "max ms",
	"during p50 ms", "p99 ms", "p99.9 ms", "max ms",
	"p99 during/baseline", "max during/baseline",
}

const snapshotLegend = "baseline: the requests due in the window before BGSAVE; during: those due from BGSAVE until INFO persistence rdb_bgsave_in_progress is 0 again (polled every 20 ms). Every request due is sent, late or not.\n" +
	"Latency is timed from when a request was due at the fixed rate when it went out late (the previous reply was late), from its write otherwise.\n" +
	"Every figure is the median over the rounds; ratios are each run's during/baseline, then the median."

// cells is the snapshot table's row for one server ("-" when it has no
// runs).
func (s *SnapshotSide) cells(name string) []string {
	if len(s.Runs) == 0 {
		out := []string{name}
		for range snapshotHeader[1:] {
			out = append(out, "-")
		}
		return out
	}
	f := func(format string, get func(*SnapshotRun) float64) string { return fmt.Sprintf(format, s.median(get)) }
	return []string{
		name,
		f("%.2f", func(r *SnapshotRun) float64 { return r.BGSaveSec }),
		f("%.1f", func(r *SnapshotRun) float64 { return float64(r.RDBBytes) / (1 << 20) }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.Baseline.P50Ms }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.Baseline.P99Ms }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.Baseline.P999Ms }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.Baseline.MaxMs }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.During.P50Ms }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.During.P99Ms }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.During.P999Ms }),
		f("%.3f", func(r *SnapshotRun) float64 { return r.During.MaxMs }),
		f("%.2f", func(r *SnapshotRun) float64 { return ratio(r.During.P99Ms, r.Baseline.P99Ms) }),
		f("%.2f", func(r *SnapshotRun) float64 { return ratio(r.During.MaxMs, r.Baseline.MaxMs) }),
	}
}

// rows returns the snapshot table's rows: svcdb, then redis.
func (s *SnapshotReport) rows() [][]string {
	return [][]string{s.SvcDB.cells(SideSvcDB), s.Redis.cells(SideRedis)}
}

// forkLine describes redis-server's fork, "" when no run reported one.
func (s *SnapshotReport) forkLine() string {
	var v []Sample
	for _, r := range s.Redis.Runs {
		if r.ForkUsec > 0 {
			v = append(v, Sample{OpsPerSec: float64(r.ForkUsec)})
		}
	}
	if len(v) == 0 {
		return ""
	}
	return fmt.Sprintf("redis-server's fork (INFO stats latest_fork_usec, median): %.1f ms", Median(v).OpsPerSec/1000)
}

func (s *SnapshotReport) intro() string {
	return fmt.Sprintf("%d keys of %d bytes per server (append-only file off); a fixed-rate SET:GET 1:1 load at %.0f ops/s (%.0f%% of the lower closed-loop rate: svcdb %.0f, redis %.0f ops/s) on %d connections, one request in flight each; %.0f s baseline, then BGSAVE",
		s.Keys, s.ValueSize, s.Rate, 100*s.RateShare, s.SvcDB.MaxOpsPerSec, s.Redis.MaxOpsPerSec, s.Connections, s.BaselineSec)
}

// WriteTable prints the comparison as aligned text tables.
func (r *PersistReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("persistence: svcdb vs redis-server, medians of %d round(s), ratio = svcdb/redis\n", r.Rounds)
	ew.printf("machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("pinning: %s\n", r.PinNote)
	if t := r.Throughput; t != nil {
		ew.printf("\nthroughput with the append-only file (appendonly yes), fresh servers per appendfsync policy:\n")
		for _, m := range r.Modes {
			ew.printf("  %s: append-only files at the end: svcdb %s, redis %s\n", m.Fsync, mib(m.SvcDBAOFBytes), mib(m.RedisAOFBytes))
			ew.printf("    svcdb: %s\n    redis: %s\n", m.SvcDBCmd, m.RedisCmd)
		}
		for _, n := range t.Notes {
			ew.printf("note: %s\n", n)
		}
		ew.printf("\n")
		if ew.err != nil {
			return ew.err
		}
		rows := t.Rows()
		cells := make([][]string, len(rows))
		anyBound := false
		for i := range rows {
			cells[i] = throughputColumns(rows[i].cells())
			anyBound = anyBound || rows[i].ClientBound
		}
		if err := writeTable(w, throughputColumns(tableHeader), cells); err != nil {
			return err
		}
		if anyBound {
			ew.printf("* a client used > 90%% of its CPU: the run measured the client as much as the server\n")
		}
		ew.printf("%s\n", throughputLegend)
	}
	if s := r.Snapshot; s != nil {
		ew.printf("\nlatency during a snapshot: %s\n", s.intro())
		ew.printf("  svcdb: %s\n  redis: %s\n\n", s.SvcDBCmd, s.RedisCmd)
		if ew.err != nil {
			return ew.err
		}
		if err := writeTable(w, snapshotHeader, s.rows()); err != nil {
			return err
		}
		if l := s.forkLine(); l != "" {
			ew.printf("%s\n", l)
		}
		ew.printf("%s\n", snapshotLegend)
	}
	for _, p := range r.Problems() {
		ew.printf("FAILED %s\n", p)
	}
	return ew.err
}

// WriteMarkdown writes the comparison as a section for docs/performance.md:
// both tables, the commands, and every run.
func (r *PersistReport) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("## Persistence (`make bench`)\n\n")
	ew.printf("Measured %s with `%s`; medians of %d round(s) per server, runs interleaved (svcdb, redis, svcdb, ...); ratios are svcdb/redis.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.command(), r.Rounds)
	ew.printf("- Machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("- Pinning: %s\n", r.PinNote)
	if t := r.Throughput; t != nil {
		ew.printf("\n### Throughput with the append-only file\n\n")
		ew.printf("Fresh servers for each appendfsync policy, each in its own data directory:\n\n")
		for _, m := range r.Modes {
			ew.printf("- %s: svcdb `%s`; redis `%s`; append-only files at the end: svcdb %s, redis %s\n",
				m.Fsync, m.SvcDBCmd, m.RedisCmd, mib(m.SvcDBAOFBytes), mib(m.RedisAOFBytes))
		}
		for _, n := range t.Notes {
			ew.printf("- Note: %s\n", n)
		}
		ew.printf("- %s\n\n", strings.ReplaceAll(throughputLegend, "\n", "\n- "))
		h := throughputColumns(tableHeader)
		ew.printf("| %s |\n", strings.Join(h, " | "))
		ew.printf("|---%s|\n", strings.Repeat("|--:", len(h)-1))
		rows := t.Rows()
		anyBound := false
		for i := range rows {
			ew.printf("| %s |\n", strings.Join(throughputColumns(rows[i].cells()), " | "))
			anyBound = anyBound || rows[i].ClientBound
		}
		if anyBound {
			ew.printf("\n\\* a client used > 90%% of its CPU: the run measured the client as much as the server.\n")
		}
		ew.printf("\nCases: ")
		var cases []string
		seen := map[string]bool{}
		for _, c := range t.Cases {
			name := c.Name[strings.Index(c.Name, " ")+1:] // without the policy
			if !seen[name] {
				seen[name] = true
				cases = append(cases, fmt.Sprintf("%s: `%s`", name, c.Detail))
			}
		}
		ew.printf("%s.\n", strings.Join(cases, "; "))
	}
	if s := r.Snapshot; s != nil {
		ew.printf("\n### Latency during a snapshot\n\n")
		ew.printf("%s.\n\n", s.intro())
		ew.printf("- svcdb: `%s`\n- redis: `%s`\n", s.SvcDBCmd, s.RedisCmd)
		if l := s.forkLine(); l != "" {
			ew.printf("- %s\n", l)
		}
		ew.printf("- %s\n\n", strings.ReplaceAll(snapshotLegend, "\n", "\n- "))
		ew.printf("| %s |\n", strings.Join(snapshotHeader, " | "))
		ew.printf("|---%s|\n", strings.Repeat("|--:", len(snapshotHeader)-1))
		for _, row := range s.rows() {
			ew.printf("| %s |\n", strings.Join(row, " | "))
		}
		ew.printf("\n<details><summary>Every second of every BGSAVE run</summary>\n\n")
		ew.printf("| server | round | second | phase | requests | p50 ms | p99 ms | p99.9 ms | max ms |\n")
		ew.printf("|---|--:|--:|---|--:|--:|--:|--:|--:|\n")
		for _, side := range []struct {
			name string
			s    *SnapshotSide
		}{{SideSvcDB, &s.SvcDB}, {SideRedis, &s.Redis}} {
			for _, run := range side.s.Runs {
				for _, sec := range run.Seconds {
					ew.printf("| %s | %d | %d | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", side.name, run.Round, sec.Second, sec.Phase,
						sec.Requests, sec.P50Ms, sec.P99Ms, sec.P999Ms, sec.MaxMs)
				}
			}
		}
		ew.printf("\n</details>\n")
	}
	if probs := r.Problems(); len(probs) > 0 {
		ew.printf("\nFailed:\n\n")
		for _, p := range probs {
			ew.printf("- %s\n", p)
		}
	}
	return ew.err
}

func (r *PersistReport) command() string {
	if r.Command != "" {
		return r.Command
	}
	return "svcbench persist"
}

// WriteJSON writes the whole report, every run and second included.
func (r *PersistReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
