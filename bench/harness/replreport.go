package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

const replLegend = "ops/s: higher is better; p50, p99 (latency, ms) and cpu us/req (the master's CPU time per request; its replicas' CPU is not counted): lower is better.\n" +
	"Every master and replica runs on the server CPUs: a replica's work competes with its master's, on both sides alike.\n" +
	"spread: (max-min)/median of ops/s over the rounds, the larger of the two servers; an ops ratio closer to 1 than that is noise.\n" +
	"others: share of a CPU other processes took on the benchmark's CPUs during a median run; a ! marks a row that had to use some."

var syncHeader = []string{"master -> replica", "median s", "min s", "max s", "runs", "vs redis -> redis"}

const syncLegend = "A fresh replica process each run; time from REPLICAOF to the replica's INFO replication showing master_link_status:up and master_sync_in_progress:0 (polled every 20 ms): the master's snapshot, the transfer and the replica's load, then its DBSIZE checked.\n" +
	"vs redis -> redis: the pair's median over redis-server -> redis-server's; lower is faster."

// syncRows returns the sync table's rows, in SyncPairs' order.
func (s *SyncReport) syncRows() [][]string {
	var base float64
	for _, r := range s.Results {
		if r.Master == SideRedis && r.Replica == SideRedis {
			base = r.medianSec()
		}
	}
	var rows [][]string
	for _, r := range s.Results {
		if len(r.Runs) == 0 {
			rows = append(rows, []string{r.SyncPair.String(), "-", "-", "-", "0", "-"})
			continue
		}
		lo, hi := r.Runs[0].Sec, r.Runs[0].Sec
		for _, run := range r.Runs[1:] {
			lo, hi = min(lo, run.Sec), max(hi, run.Sec)
		}
		med := r.medianSec()
		vs := "-"
		if base > 0 {
			vs = fmt.Sprintf("%.2f", med/base)
		}
		rows = append(rows, []string{r.SyncPair.String(), fmt.Sprintf("%.2f", med), fmt.Sprintf("%.2f", lo),
			fmt.Sprintf("%.2f", hi), fmt.Sprint(len(r.Runs)), vs})
	}
	return rows
}

func (s *SyncReport) intro() string {
	fill := ""
	if len(s.FillSec) > 0 {
		var parts []string
		for _, side := range []string{SideSvcDB, SideRedis} {
			if v, ok := s.FillSec[side]; ok {
				parts = append(parts, fmt.Sprintf("%s %.1f s", side, v))
			}
		}
		fill = " (loaded with pipelined SETs: " + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprintf("full sync of %d keys of %d bytes from a master that holds them%s, diskless (both masters' default; redis-server with repl-diskless-sync-delay 0)",
		s.Keys, s.ValueSize, fill)
}

// replicaCPURows returns the replicas' CPU table: median us/req per side
// and the ratio.
func (r *ReplReport) replicaCPURows() [][]string {
	med := func(v []float64) float64 {
		s := make([]Sample, len(v))
		for i := range v {
			s[i].OpsPerSec = v[i]
		}
		return Median(s).OpsPerSec
	}
	var rows [][]string
	for _, c := range r.ReplicaCPU {
		s, q := med(c.SvcDB), med(c.Redis)
		ratioCell := "-"
		if s > 0 && q > 0 {
			ratioCell = fmt.Sprintf("%.2f", s/q)
		}
		rows = append(rows, []string{c.Case, cpuCell(s, 0), cpuCell(q, 0), ratioCell})
	}
	return rows
}

var replicaCPUHeader = []string{"case", "svcdb replicas cpu us/req", "redis replicas cpu us/req", "ratio"}

const replicaCPULegend = "The replicas' CPU time during each run (all of the master's replicas summed, /proc schedstat) divided by the requests the master completed; median over the rounds."

// throughputRows returns the throughput table's cells without the bar
// column, and whether a client was the bottleneck of a row.
func (r *ReplReport) throughputRows() (cells [][]string, anyBound bool) {
	rows := r.Throughput.Rows()
	for i := range rows {
		cells = append(cells, throughputColumns(rows[i].cells()))
		anyBound = anyBound || rows[i].ClientBound
	}
	return cells, anyBound
}

// WriteTable prints the comparison as aligned text tables.
func (r *ReplReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("replication: svcdb with svcdb replicas vs redis-server with redis-server replicas, medians of %d round(s), ratio = svcdb/redis\n", r.Rounds)
	ew.printf("machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("pinning: %s\n", r.PinNote)
	if t := r.Throughput; t != nil {
		ew.printf("\nthroughput of the master with replicas attached (fresh servers per count):\n")
		for _, s := range r.Setups {
			ew.printf("  %d replicas: caught up after the runs in svcdb %.2f s, redis %.2f s\n", s.Replicas, s.SvcDBCatchUp, s.RedisCatchUp)
			ew.printf("    svcdb: %s\n    redis: %s\n", s.SvcDBCmd, s.RedisCmd)
		}
		ew.printf("\n")
		if ew.err != nil {
			return ew.err
		}
		cells, anyBound := r.throughputRows()
		if err := writeTable(w, throughputColumns(tableHeader), cells); err != nil {
			return err
		}
		if anyBound {
			ew.printf("* a client used > 90%% of its CPU: the run measured the client as much as the server\n")
		}
		ew.printf("%s\n", replLegend)
		if rows := r.replicaCPURows(); len(rows) > 0 {
			ew.printf("\nwhat the replicas cost:\n\n")
			if ew.err != nil {
				return ew.err
			}
			if err := writeTable(w, replicaCPUHeader, rows); err != nil {
				return err
			}
			ew.printf("%s\n", replicaCPULegend)
		}
	}
	if s := r.Sync; s != nil {
		ew.printf("\n%s\n", s.intro())
		for _, side := range []string{SideSvcDB, SideRedis} {
			if c, ok := s.Masters[side]; ok {
				ew.printf("  %s master: %s\n", side, c)
			}
		}
		ew.printf("\n")
		if ew.err != nil {
			return ew.err
		}
		if err := writeTable(w, syncHeader, s.syncRows()); err != nil {
			return err
		}
		ew.printf("%s\n", syncLegend)
	}
	for _, p := range r.Problems() {
		ew.printf("FAILED %s\n", p)
	}
	return ew.err
}

// WriteMarkdown writes the comparison as a section for docs/performance.md.
func (r *ReplReport) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("## Replication (`make bench`)\n\n")
	cmd := r.Command
	if cmd == "" {
		cmd = "svcbench repl"
	}
	ew.printf("Measured %s with `%s`; medians of %d round(s) per server, runs interleaved (svcdb, redis, svcdb, ...); ratios are svcdb/redis.\n\n",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), cmd, r.Rounds)
	ew.printf("- Machine: %s\n", (&Report{Machine: r.Machine}).machineLine())
	ew.printf("- Pinning: %s\n", r.PinNote)
	if t := r.Throughput; t != nil {
		ew.printf("\n### Throughput with replicas attached\n\n")
		for _, s := range r.Setups {
			ew.printf("- %d replicas: master svcdb `%s`, redis `%s`; replicas caught up after the runs in svcdb %.2f s, redis %.2f s\n",
				s.Replicas, s.SvcDBCmd, s.RedisCmd, s.SvcDBCatchUp, s.RedisCatchUp)
		}
		ew.printf("- %s\n\n", strings.ReplaceAll(replLegend, "\n", "\n- "))
		h := throughputColumns(tableHeader)
		ew.printf("| %s |\n", strings.Join(h, " | "))
		ew.printf("|---%s|\n", strings.Repeat("|--:", len(h)-1))
		cells, anyBound := r.throughputRows()
		for _, c := range cells {
			ew.printf("| %s |\n", strings.Join(c, " | "))
		}
		if anyBound {
			ew.printf("\n\\* a client used > 90%% of its CPU: the run measured the client as much as the server.\n")
		}
		seen := map[string]bool{}
		var cases []string
		for _, c := range t.Cases {
			if !seen[c.Detail] {
				seen[c.Detail] = true
				cases = append(cases, "`"+c.Detail+"`")
			}
		}
		ew.printf("\nWorkloads: %s.\n", strings.Join(cases, "; "))
		if rows := r.replicaCPURows(); len(rows) > 0 {
			ew.printf("\nWhat the replicas cost: %s\n\n", replicaCPULegend)
			ew.printf("| %s |\n", strings.Join(replicaCPUHeader, " | "))
			ew.printf("|---%s|\n", strings.Repeat("|--:", len(replicaCPUHeader)-1))
			for _, row := range rows {
				ew.printf("| %s |\n", strings.Join(row, " | "))
			}
		}
	}
	if s := r.Sync; s != nil {
		ew.printf("\n### Full sync of %d keys\n\n", s.Keys)
		ew.printf("A %s.\n\n", s.intro())
		for _, side := range []string{SideSvcDB, SideRedis} {
			if c, ok := s.Masters[side]; ok {
				ew.printf("- %s master: `%s`\n", side, c)
			}
		}
		ew.printf("- %s\n\n", strings.ReplaceAll(syncLegend, "\n", "\n- "))
		ew.printf("| %s |\n", strings.Join(syncHeader, " | "))
		ew.printf("|---%s|\n", strings.Repeat("|--:", len(syncHeader)-1))
		for _, row := range s.syncRows() {
			ew.printf("| %s |\n", strings.Join(row, " | "))
		}
		var every []string
		for _, res := range s.Results {
			var v []string
			for _, run := range res.Runs {
				v = append(v, fmt.Sprintf("%.2f", run.Sec))
			}
			every = append(every, fmt.Sprintf("%s: %s s", res.SyncPair, strings.Join(v, ", ")))
		}
		ew.printf("\nEvery run: %s.\n", strings.Join(every, "; "))
	}
	if probs := r.Problems(); len(probs) > 0 {
		ew.printf("\nFailed:\n\n")
		for _, p := range probs {
			ew.printf("- %s\n", p)
		}
	}
	return ew.err
}

// WriteJSON writes the whole report, every run included.
func (r *ReplReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
