package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// DiagCase is one redis-benchmark case with its samples per side.
type DiagCase struct {
	Name   string   `json:"name"`
	Detail string   `json:"detail"`
	Off    []Sample `json:"off"`
	On     []Sample `json:"on"`
	// Scrapes is how many scrapes (all endpoints together) each On run saw.
	Scrapes []int `json:"scrapes"`
	// Retried counts runs repeated because other processes disturbed them;
	// Off and On hold the attempts kept.
	Retried int `json:"retried,omitempty"`
}

// DiagReport is the outcome of RunDiag.
type DiagReport struct {
	Started time.Time `json:"started"`
	Elapsed float64   `json:"elapsed_sec"`
	// Command is the command line that produced the report, if the caller
	// filled it in (for docs/performance.md).
	Command           string           `json:"command,omitempty"`
	Machine           Machine          `json:"machine"`
	Rounds            int              `json:"rounds"`
	Pinned            bool             `json:"pinned"`
	PinNote           string           `json:"pin_note"`
	OffCmd            string           `json:"off_cmd"`
	OnCmd             string           `json:"on_cmd"`
	DiagAddr          string           `json:"diag_addr"`
	ScrapeIntervalSec float64          `json:"scrape_interval_sec"`
	Endpoints         []EndpointReport `json:"endpoints"`
	MaxCostPct        float64          `json:"max_cost_pct"`
	// IdleOffMsPerSec and IdleOnMsPerSec are the CPU time per second, in
	// milliseconds, each server used while idle and not scraped, measured
	// after the runs: what diagnostics cost when nobody asks.
	IdleOffMsPerSec float64 `json:"idle_off_cpu_ms_per_sec"`
	IdleOnMsPerSec  float64 `json:"idle_on_cpu_ms_per_sec"`
	// MaxOthers is the share of a CPU other processes could take during a
	// run before it was repeated (0: never).
	MaxOthers float64     `json:"max_others"`
	Cases     []*DiagCase `json:"cases"`
}

// DiagRow is one case reduced to medians, on/off ratios and costs.
type DiagRow struct {
	Case    *DiagCase
	Off, On Sample
	// OpsRatio is on/off ops/s; OpsCostPct the throughput lost to
	// diagnostics, (1 - OpsRatio) × 100 (negative: on was faster, noise).
	OpsRatio, OpsCostPct float64
	// CPURatio is on/off server CPU per request; CPUCostPct the extra CPU,
	// (CPURatio - 1) × 100.
	CPURatio, CPUCostPct float64
	// Spread is the larger of the two sides' (max-min)/median of ops/s: a
	// cost smaller than this is within noise.
	Spread float64
	// Scrapes is the median number of scrapes per On run.
	Scrapes int
	// Others is the larger of the two sides' median OthersShare: how much
	// of a CPU other processes took during a typical run.
	Others float64
	// Runs is how many runs of each side (off, on) the medians use.
	Runs [2]int
	// LeftOut counts disturbed runs left out of the medians; Disturbed
	// those used anyway, because one side had no undisturbed run.
	LeftOut, Disturbed int
	// ClientBound: redis-benchmark used over 90% of its CPU in a median run.
	ClientBound bool
}

// Rows computes the table rows. The medians (and spread) leave out
// disturbed runs, those during which other processes took more than
// MaxOthers of a CPU, when both sides of the case have an undisturbed run:
// the disturbed ones measured the neighbours as much as svcdb. Otherwise
// they use every run of both sides, as comparing one side's quiet runs with
// the other's disturbed ones would invent a difference.
func (r *DiagReport) Rows() []DiagRow {
	rows := make([]DiagRow, 0, len(r.Cases))
	for _, c := range r.Cases {
		offIdx, onIdx := cleanPair(c.Off, c.On, r.MaxOthers)
		offS, onS := pick(c.Off, offIdx), pick(c.On, onIdx)
		off, on := Median(offS), Median(onS)
		row := DiagRow{
			Case: c, Off: off, On: on,
			OpsRatio: ratio(on.OpsPerSec, off.OpsPerSec),
			CPURatio: ratio(on.CPUUsPerReq, off.CPUUsPerReq),
			Spread:   max(spread(offS, off.OpsPerSec), spread(onS, on.OpsPerSec)),
			Runs:     [2]int{len(offS), len(onS)},
		}
		if row.OpsRatio > 0 {
			row.OpsCostPct = (1 - row.OpsRatio) * 100
		}
		if row.CPURatio > 0 {
			row.CPUCostPct = (row.CPURatio - 1) * 100
		}
		var sc []Sample
		for _, i := range onIdx {
			if i < len(c.Scrapes) {
				sc = append(sc, Sample{OpsPerSec: float64(c.Scrapes[i])})
			}
		}
		row.Scrapes = int(math.Round(Median(sc).OpsPerSec))
		row.Others, row.Disturbed = othersOf(r.MaxOthers, offS, onS)
		row.LeftOut = len(c.Off) + len(c.On) - len(offS) - len(onS)
		row.ClientBound = clientBound(off, on)
		rows = append(rows, row)
	}
	return rows
}

// disturbed reports whether other processes took more than maxOthers of a
// CPU during s (never when maxOthers is 0).
func disturbed(s Sample, maxOthers float64) bool {
	return maxOthers > 0 && s.OthersShare() > maxOthers
}

// cleanPair returns the indexes of the undisturbed samples of the two sides
// of a case, or of all their samples when either side has none.
func cleanPair(a, b []Sample, maxOthers float64) (aIdx, bIdx []int) {
	clean := func(samples []Sample) []int {
		var idx []int
		for i, s := range samples {
			if !disturbed(s, maxOthers) {
				idx = append(idx, i)
			}
		}
		return idx
	}
	aIdx, bIdx = clean(a), clean(b)
	if len(aIdx) == 0 || len(bIdx) == 0 {
		aIdx, bIdx = all(len(a)), all(len(b))
	}
	return aIdx, bIdx
}

// othersOf returns the largest of the sides' median shares of a CPU other
// processes took, and how many of their samples were disturbed.
func othersOf(maxOthers float64, sides ...[]Sample) (others float64, disturbedRuns int) {
	for _, side := range sides {
		sh := make([]Sample, len(side))
		for i, x := range side {
			sh[i].OpsPerSec = x.OthersShare()
			if disturbed(x, maxOthers) {
				disturbedRuns++
			}
		}
		others = max(others, Median(sh).OpsPerSec)
	}
	return others, disturbedRuns
}

// clientBound reports whether the client used more than 90% of its CPU in
// any of the medians.
func clientBound(medians ...Sample) bool {
	for _, m := range medians {
		if m.WallSec > 0 && m.ClientCPU/m.WallSec > 0.9 {
			return true
		}
	}
	return false
}

func all(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func pick(samples []Sample, idx []int) []Sample {
	out := make([]Sample, len(idx))
	for i, j := range idx {
		out[i] = samples[j]
	}
	return out
}

// DiagSummary condenses the rows into the figure the bar is about.
type DiagSummary struct {
	// OpsRatio is the geometric mean over the cases of on/off ops/s, and
	// OpsCostPct the throughput cost it means, (1 - OpsRatio) × 100.
	OpsRatio, OpsCostPct float64
	// CPURatio and CPUCostPct: the same for server CPU per request.
	CPURatio, CPUCostPct float64
	// Worst is the case with the largest throughput cost, and WorstCostPct
	// that cost.
	Worst        string
	WorstCostPct float64
	// MaxSpread is the largest spread of any case.
	MaxSpread float64
	// WithinBar: OpsCostPct <= the report's MaxCostPct.
	WithinBar bool
	// Noisy: MaxSpread is larger than the bar, so run-to-run noise can
	// hide (or fake) a cost of the bar's size.
	Noisy bool
	// Retried, LeftOut and Disturbed: runs repeated, disturbed runs left
	// out of the medians, and disturbed runs used, over every case.
	Retried, LeftOut, Disturbed int
	// ScrapeCPUMs is the server CPU one round of scrapes (every scraped
	// endpoint once) took on the idle server, and ScrapeCPUPct that per
	// scrape interval, in percent of one CPU: the throughput a server
	// bound by one CPU gives up to answer the scrapes, measured without the
	// runs' noise.
	ScrapeCPUMs, ScrapeCPUPct float64
}

// Summary returns the geometric means, the worst case and the verdict. Cases
// with a zero median (no measurement) are left out of the means.
func (r *DiagReport) Summary() DiagSummary {
	var s DiagSummary
	var logOps, logCPU float64
	var nOps, nCPU int
	s.WorstCostPct = math.Inf(-1)
	for _, row := range r.Rows() {
		if row.OpsRatio > 0 {
			logOps += math.Log(row.OpsRatio)
			nOps++
			if row.OpsCostPct > s.WorstCostPct {
				s.Worst, s.WorstCostPct = row.Case.Name, row.OpsCostPct
			}
		}
		if row.CPURatio > 0 {
			logCPU += math.Log(row.CPURatio)
			nCPU++
		}
		s.MaxSpread = max(s.MaxSpread, row.Spread)
		s.Retried += row.Case.Retried
		s.LeftOut += row.LeftOut
		s.Disturbed += row.Disturbed
	}
	if nOps == 0 {
		s.WorstCostPct = 0
	} else {
		s.OpsRatio = math.Exp(logOps / float64(nOps))
		s.OpsCostPct = (1 - s.OpsRatio) * 100
	}
	if nCPU > 0 {
		s.CPURatio = math.Exp(logCPU / float64(nCPU))
		s.CPUCostPct = (s.CPURatio - 1) * 100
	}
	s.WithinBar = nOps > 0 && s.OpsCostPct <= r.MaxCostPct
	s.Noisy = 100*s.MaxSpread > r.MaxCostPct
	for _, e := range r.Endpoints {
		if e.Scraped {
			s.ScrapeCPUMs += e.IdleCPUMs
		}
	}
	if r.ScrapeIntervalSec > 0 {
		s.ScrapeCPUPct = s.ScrapeCPUMs / (10 * r.ScrapeIntervalSec) // ms per (1000 ms × interval), in %
	}
	return s
}

// Sentence states the summary in words, for the table and the docs.
func (r *DiagReport) Sentence() string {
	s := r.Summary()
	if s.OpsRatio == 0 {
		return "No measurements."
	}
	verdict := "within"
	if !s.WithinBar {
		verdict = "over"
	}
	out := fmt.Sprintf("Throughput cost of diagnostics: %s (geometric mean of the on/off ops/s ratios of %d cases: %.3f; worst case %s, %s); "+
		"server CPU per request: %s",
		signedPct(s.OpsCostPct), len(r.Cases), s.OpsRatio, s.Worst, signedPct(s.WorstCostPct), signedPct(s.CPUCostPct))
	if s.ScrapeCPUMs > 0 {
		out += fmt.Sprintf("; answering the scrapes takes %.2f ms of server CPU per round (idle server), %.2f%% of one CPU at one round per %gs",
			s.ScrapeCPUMs, s.ScrapeCPUPct, r.ScrapeIntervalSec)
	}
	if r.IdleOnMsPerSec > 0 || r.IdleOffMsPerSec > 0 {
		out += fmt.Sprintf("; idle and not scraped, the server used %.2f ms of CPU per second with diagnostics on and %.2f ms off",
			r.IdleOnMsPerSec, r.IdleOffMsPerSec)
	}
	out += fmt.Sprintf(". That is %s the %s bar", verdict, pct(r.MaxCostPct))
	if s.Disturbed > 0 {
		out += fmt.Sprintf(", but %d disturbed run(s) are in the medians: do not trust it, run again on a quieter machine", s.Disturbed)
	}
	out += "."
	if s.Retried > 0 || s.LeftOut > 0 || s.Disturbed > 0 {
		out += fmt.Sprintf(" Other processes took over %.0f%% of a CPU during some runs: %d were repeated, %d more kept in the report but left out of the medians, and %d used in them because a side of their case had no undisturbed run.",
			100*r.MaxOthers, s.Retried, s.LeftOut, s.Disturbed)
	}
	if s.Noisy {
		out += fmt.Sprintf(" Caution: ops/s moved by up to %.0f%% between rounds of one side, more than the bar, so a single case's cost is noise; "+
			"the mean over cases, CPU per request and the per-scrape CPU are the steadier figures (more --rounds or a quieter machine narrow it).",
			100*s.MaxSpread)
	}
	return out
}

func pct(v float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", v), "0"), ".") + "%"
}

// signedPct writes a cost with its sign: "+1.2%", "-0.4%" (negative: the
// diagnostics-on side did better, which is noise).
func signedPct(v float64) string {
	if math.Abs(v) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", v)
}

var diagHeader = []string{
	"case",
	"off ops/s", "on ops/s", "on/off", "ops cost", "spread",
	"off cpu us/req", "on cpu us/req", "on/off", "cpu cost",
	"runs", "scrapes/run", "others",
}

func (row *DiagRow) cells() []string {
	mark := ""
	if row.ClientBound {
		mark = " *"
	}
	spreadCell := "-"
	if row.Runs[0] > 1 || row.Runs[1] > 1 {
		spreadCell = fmt.Sprintf("%.0f%%", 100*row.Spread)
	}
	return []string{
		row.Case.Name + mark,
		fmt.Sprintf("%.0f", row.Off.OpsPerSec), fmt.Sprintf("%.0f", row.On.OpsPerSec), fmt.Sprintf("%.3f", row.OpsRatio), signedPct(row.OpsCostPct), spreadCell,
		fmt.Sprintf("%.2f", row.Off.CPUUsPerReq), fmt.Sprintf("%.2f", row.On.CPUUsPerReq), fmt.Sprintf("%.3f", row.CPURatio), signedPct(row.CPUCostPct),
		fmt.Sprintf("%d+%d", row.Runs[0], row.Runs[1]), fmt.Sprint(row.Scrapes), fmt.Sprintf("%.0f%%", 100*row.Others),
	}
}

const diagLegend = "ops cost: (1 - on/off ops/s) x 100; cpu cost: (on/off cpu us/req - 1) x 100; positive means diagnostics cost that much.\n" +
	"spread: (max-min)/median of ops/s over the rounds, the larger of the two sides; a cost smaller than that is noise.\n" +
	"runs: off+on runs in the medians (runs during which other processes took too much CPU are left out when both sides have others).\n" +
	"others: share of a CPU that other processes (and the hypervisor) took on the benchmark's CPUs during a median run."

func (r *DiagReport) endpointLines() []string {
	out := make([]string, len(r.Endpoints))
	for i := range r.Endpoints {
		out[i] = r.Endpoints[i].summary()
	}
	return out
}

// WriteTable prints the comparison as an aligned text table.
func (r *DiagReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("diagnostics on vs off: medians of %d round(s), ratio = on/off\n", r.Rounds)
	ew.printf("machine: %s\n", r.machineLine())
	ew.printf("pinning: %s\n", r.PinNote)
	ew.printf("off:     %s\n", r.OffCmd)
	ew.printf("on:      %s\n", r.OnCmd)
	ew.printf("scraped: every %gs by svcbench (net/http, on the client CPU) from http://%s:\n", r.ScrapeIntervalSec, r.DiagAddr)
	for _, l := range r.endpointLines() {
		ew.printf("         %s\n", l)
	}
	ew.printf("\n")
	if ew.err != nil {
		return ew.err
	}
	rows := r.Rows()
	cells := make([][]string, len(rows))
	anyBound := false
	for i := range rows {
		cells[i] = rows[i].cells()
		anyBound = anyBound || rows[i].ClientBound
	}
	if err := writeTable(w, diagHeader, cells); err != nil {
		return err
	}
	if anyBound {
		ew.printf("* redis-benchmark used > 90%% of its CPU: the run measured the client as much as the server\n")
	}
	ew.printf("%s\n", diagLegend)
	ew.printf("\n%s\n", r.Sentence())
	return ew.err
}

// WriteMarkdown writes the comparison as the "Diagnostics on vs off"
// section of docs/performance.md.
func (r *DiagReport) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("## Diagnostics on vs off\n\n")
	ew.printf("Measured %s", r.Started.UTC().Format("2006-01-02 15:04 MST"))
	if r.Command != "" {
		ew.printf(" with `%s`", r.Command)
	}
	ew.printf(": the same svcdb binary without its HTTP diagnostics server and with it, scraped every %gs by the harness; ", r.ScrapeIntervalSec)
	ew.printf("medians of %d round(s) per side, runs interleaved (off, on, then on, off, ...). Ratios are on/off.\n\n", r.Rounds)
	ew.printf("- Machine: %s\n", r.machineLine())
	ew.printf("- Pinning: %s\n", r.PinNote)
	ew.printf("- off: `%s`\n", r.OffCmd)
	ew.printf("- on: `%s`\n", r.OnCmd)
	ew.printf("- Scraped by svcbench (Go net/http, keep-alive, bearer token, on the client CPU):\n")
	for _, l := range r.endpointLines() {
		ew.printf("  - %s\n", strings.ReplaceAll(l, "|", `\|`))
	}
	ew.printf("- %s\n\n", strings.ReplaceAll(diagLegend, "\n", "\n- "))
	ew.printf("| %s |\n", strings.Join(diagHeader, " | "))
	ew.printf("|---%s|\n", strings.Repeat("|--:", len(diagHeader)-1))
	rows := r.Rows()
	for i := range rows {
		cells := rows[i].cells()
		cells[0] = strings.ReplaceAll(cells[0], "|", `\|`)
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	for i := range rows {
		if rows[i].ClientBound {
			ew.printf("\n\\* redis-benchmark used > 90%% of its CPU: the run measured the client as much as the server.\n")
			break
		}
	}
	ew.printf("\n%s\n", r.Sentence())
	ew.printf("\n<details><summary>All runs</summary>\n\n")
	ew.printf("| case | diagnostics | round | ops/s | p50 ms | p99 ms | cpu us/req | requests | wall s | server cpu s | client cpu s | others | scrapes |\n")
	ew.printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range r.Cases {
		for _, side := range []struct {
			name    string
			samples []Sample
		}{{SideDiagOff, c.Off}, {SideDiagOn, c.On}} {
			for i, s := range side.samples {
				scrapes := "-"
				if side.name == SideDiagOn && i < len(c.Scrapes) {
					scrapes = fmt.Sprint(c.Scrapes[i])
				}
				ew.printf("| %s | %s | %d | %.0f | %.3f | %.3f | %.2f | %d | %.2f | %.3f | %.3f | %.0f%% | %s |\n",
					c.Name, side.name, i+1, s.OpsPerSec, s.P50Ms, s.P99Ms, s.CPUUsPerReq, s.Requests, s.WallSec, s.ServerCPU, s.ClientCPU, 100*s.OthersShare(), scrapes)
			}
		}
	}
	ew.printf("\nCases:\n\n")
	for _, c := range r.Cases {
		ew.printf("- %s: `%s`\n", c.Name, c.Detail)
	}
	ew.printf("\n</details>\n")
	return ew.err
}

// WriteJSON writes the whole report, every run included.
func (r *DiagReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *DiagReport) machineLine() string { return (&Report{Machine: r.Machine}).machineLine() }
