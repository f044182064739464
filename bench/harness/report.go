package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Median returns the per-field medians of samples (each field on its own, so
// the result need not be one of the runs). The median of an even count is
// the mean of the middle two.
func Median(samples []Sample) Sample {
	field := func(get func(Sample) float64) float64 {
		if len(samples) == 0 {
			return 0
		}
		v := make([]float64, len(samples))
		for i, s := range samples {
			v[i] = get(s)
		}
		slices.Sort(v)
		m := len(v) / 2
		if len(v)%2 == 0 {
			return (v[m-1] + v[m]) / 2
		}
		return v[m]
	}
	return Sample{
		OpsPerSec:   field(func(s Sample) float64 { return s.OpsPerSec }),
		P50Ms:       field(func(s Sample) float64 { return s.P50Ms }),
		P99Ms:       field(func(s Sample) float64 { return s.P99Ms }),
		P999Ms:      field(func(s Sample) float64 { return s.P999Ms }),
		CPUUsPerReq: field(func(s Sample) float64 { return s.CPUUsPerReq }),
		Requests:    uint64(field(func(s Sample) float64 { return float64(s.Requests) })),
		WallSec:     field(func(s Sample) float64 { return s.WallSec }),
		ServerCPU:   field(func(s Sample) float64 { return s.ServerCPU }),
		ClientCPU:   field(func(s Sample) float64 { return s.ClientCPU }),
	}
}

// Row is one case reduced to medians and svcdb/redis ratios.
type Row struct {
	Case         *Case
	SvcDB, Redis Sample
	// Ratios svcdb/redis: above 1 is better for svcdb in OpsRatio, worse in
	// the others. NaN-free: 0 when the redis value is 0.
	OpsRatio, P50Ratio, P99Ratio, P999Ratio, CPURatio float64
	// P99Pairs and P999Pairs are the smallest and largest svcdb/redis
	// ratio of one round's p99 (p99.9) to the same round's on the other
	// server (rounds run back to back: svcdb's round i, then redis'),
	// over every round: how far one pair of runs strays from the medians'
	// ratio. A tail percentile of one short run moves with a single stall
	// of either server or of the client, so a median ratio inside this
	// range says less than the ops/s ratio inside its spread. Zero with
	// fewer than two pairs.
	P99Pairs, P999Pairs [2]float64
	// Spread is the larger of the two servers' (max-min)/median of ops/s
	// over the rounds: a ratio closer to 1 than this is within noise.
	Spread float64
	// ClientBound is set when a client used over 90% of a CPU during the
	// median run: the ratio then understates the faster server.
	ClientBound bool
	// Others is the larger of the two servers' median OthersShare over the
	// runs the medians use: how much of a CPU other processes took.
	Others float64
	// LeftOut counts disturbed runs left out of the medians; Disturbed
	// those used anyway, because one server had no undisturbed run.
	LeftOut, Disturbed int
	// Verdict is the case against the bar: VerdictOK, VerdictLow (ops/s
	// ratio below Report.MinRatio) or VerdictFailed (an error, or no
	// samples) for gated cases; "" for the others, unless they failed.
	Verdict string
}

// Verdicts of Row.
const (
	VerdictOK     = "ok"
	VerdictLow    = "LOW"
	VerdictFailed = "FAILED"
)

func (r *Report) verdict(row *Row) string {
	c := row.Case
	switch {
	case c.Failure != "" || (c.Gated && (len(c.SvcDB) == 0 || len(c.Redis) == 0)):
		return VerdictFailed
	case !c.Gated:
		return ""
	case r.MinRatio > 0 && row.OpsRatio < r.MinRatio:
		return VerdictLow
	default:
		return VerdictOK
	}
}

// Problems lists, one line each, the cases that miss the bar: failed ones
// (any case) and gated ones whose ops/s ratio is below MinRatio. Empty
// means the comparison passed.
func (r *Report) Problems() []string {
	var out []string
	rows := r.Rows()
	for i := range rows {
		row := &rows[i]
		switch row.Verdict {
		case VerdictFailed:
			why := row.Case.Failure
			if why == "" {
				why = "no samples"
			}
			out = append(out, fmt.Sprintf("%s: FAILED: %s", row.Case.Name, why))
		case VerdictLow:
			line := fmt.Sprintf("%s: ops/s ratio %.2f < %.2f (svcdb %.0f, redis %.0f ops/s; spread %.0f%%)",
				row.Case.Name, row.OpsRatio, r.MinRatio, row.SvcDB.OpsPerSec, row.Redis.OpsPerSec, 100*row.Spread)
			if row.Disturbed > 0 {
				line += fmt.Sprintf("; disturbed: other processes took %.0f%% of a CPU", 100*row.Others)
			}
			out = append(out, line)
		}
	}
	return out
}

// barLine sums the gated cases up against the bar.
func (r *Report) barLine() string {
	var gated, ok int
	rows := r.Rows()
	for i := range rows {
		if rows[i].Case.Gated {
			gated++
			if rows[i].Verdict == VerdictOK {
				ok++
			}
		}
	}
	if gated == 0 {
		return ""
	}
	return fmt.Sprintf("bar: svcdb ops/s >= %.2f × redis-server's and no error, for every redis-benchmark case: %d of %d pass", r.MinRatio, ok, gated)
}

// spread returns (max-min)/median of the samples' ops/s.
func spread(samples []Sample, median float64) float64 {
	if len(samples) < 2 || median == 0 {
		return 0
	}
	lo, hi := samples[0].OpsPerSec, samples[0].OpsPerSec
	for _, s := range samples[1:] {
		lo, hi = min(lo, s.OpsPerSec), max(hi, s.OpsPerSec)
	}
	return (hi - lo) / median
}

// loadRoundsNote says how many rounds the load generator's cases ran when
// that differs from Rounds: ", N for the load generator", or "".
func (r *Report) loadRoundsNote() string {
	if r.LoadRounds == 0 || r.LoadRounds == r.Rounds {
		return ""
	}
	for _, c := range r.Cases {
		if c.Tool == "loadgen" {
			return fmt.Sprintf(", %d for the load generator", r.LoadRounds)
		}
	}
	return ""
}

// pairRange returns the smallest and largest ratio get(a[i])/get(b[i]) over
// the rounds both sides ran and have the value of, or zeros with fewer than
// two such pairs.
func pairRange(a, b []Sample, get func(Sample) float64) [2]float64 {
	var lo, hi float64
	n := 0
	for i := range min(len(a), len(b)) {
		x, y := get(a[i]), get(b[i])
		if x <= 0 || y <= 0 {
			continue
		}
		r := x / y
		if n == 0 || r < lo {
			lo = r
		}
		if n == 0 || r > hi {
			hi = r
		}
		n++
	}
	if n < 2 {
		return [2]float64{}
	}
	return [2]float64{lo, hi}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Rows computes the table rows. As in the diagnostics comparison, the
// medians (and spread) leave out disturbed runs, those during which other
// processes took more than MaxOthers of a CPU, when both servers have an
// undisturbed run of the case: the disturbed ones measured the neighbours
// as much as the server. Otherwise they use every run of both, as comparing
// one server's quiet runs with the other's disturbed ones would invent a
// difference.
func (r *Report) Rows() []Row {
	rows := make([]Row, 0, len(r.Cases))
	for _, c := range r.Cases {
		sIdx, qIdx := cleanPair(c.SvcDB, c.Redis, r.MaxOthers)
		sS, qS := pick(c.SvcDB, sIdx), pick(c.Redis, qIdx)
		s, q := Median(sS), Median(qS)
		row := Row{
			Case: c, SvcDB: s, Redis: q,
			OpsRatio:  ratio(s.OpsPerSec, q.OpsPerSec),
			P50Ratio:  ratio(s.P50Ms, q.P50Ms),
			P99Ratio:  ratio(s.P99Ms, q.P99Ms),
			P999Ratio: ratio(s.P999Ms, q.P999Ms),
			CPURatio:  ratio(s.CPUUsPerReq, q.CPUUsPerReq),
		}
		row.P99Pairs = pairRange(c.SvcDB, c.Redis, func(s Sample) float64 { return s.P99Ms })
		row.P999Pairs = pairRange(c.SvcDB, c.Redis, func(s Sample) float64 { return s.P999Ms })
		row.Spread = max(spread(sS, s.OpsPerSec), spread(qS, q.OpsPerSec))
		row.Others, row.Disturbed = othersOf(r.MaxOthers, sS, qS)
		row.LeftOut = len(c.SvcDB) + len(c.Redis) - len(sS) - len(qS)
		row.ClientBound = clientBound(s, q)
		row.Verdict = r.verdict(&row)
		rows = append(rows, row)
	}
	return rows
}

func (r *Report) machineLine() string {
	m := r.Machine
	s := fmt.Sprintf("%s, %d CPUs (%d usable), %s, %s", m.CPUModel, m.OnlineCPUs, m.UsableCPUs, m.Kernel, m.GoVersion)
	if m.SvcDBGoVersion != "" && m.SvcDBGoVersion != m.GoVersion {
		s += " (svcdb built with " + m.SvcDBGoVersion + ")"
	}
	if m.RedisVersion != "" {
		s += ", redis-server " + m.RedisVersion
	}
	if m.RedisBenchmarkVersion != "" {
		s += ", " + m.RedisBenchmarkVersion
	}
	return s
}

const legend = "ops/s: higher is better; p50, p99 (latency, ms) and cpu us/req (server CPU time per request): lower is better.\n" +
	"spread: (max-min)/median of ops/s over the rounds, the larger of the two servers; an ops ratio closer to 1 than that is noise.\n" +
	"others: share of a CPU other processes took on the benchmark's CPUs during a median run; runs over the limit are left out of the medians when both servers have others, and a ! marks a row that had to use some.\n" +
	"bar: ok, LOW (ops/s ratio below the bar) or FAILED (an error reply, a broken connection or no reply: see below) for redis-benchmark cases; - for the load generator's, which are not held to the bar.\n" +
	"suite rows: one redis-benchmark run per group of tests; a test's cpu us/req is the server CPU time between its CSV row and the previous one."

var tableHeader = []string{
	"case",
	"svcdb ops/s", "redis ops/s", "ratio", "spread", "others", "bar",
	"svcdb p50 ms", "redis p50 ms", "ratio",
	"svcdb p99 ms", "redis p99 ms", "ratio",
	"svcdb cpu us/req", "redis cpu us/req", "ratio",
}

func (row *Row) cells() []string {
	mark := ""
	if row.ClientBound {
		mark = " *"
	}
	spreadCell := "-" // one round: no spread to show
	if len(row.Case.SvcDB) > 1 || len(row.Case.Redis) > 1 {
		spreadCell = fmt.Sprintf("%.0f%%", 100*row.Spread)
	}
	bar := row.Verdict
	if bar == "" {
		bar = "-"
	}
	others := fmt.Sprintf("%.0f%%", 100*row.Others)
	if row.Disturbed > 0 {
		others += "!"
	}
	// A side without samples (a failed case) has no numbers, not zeros.
	hasS, hasR := len(row.Case.SvcDB) > 0, len(row.Case.Redis) > 0
	num := func(ok bool, format string, v float64) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf(format, v)
	}
	both := hasS && hasR
	cpuKnown := row.SvcDB.CPUUsPerReq > 0 && row.Redis.CPUUsPerReq > 0
	return []string{
		row.Case.Name + mark,
		num(hasS, "%.0f", row.SvcDB.OpsPerSec), num(hasR, "%.0f", row.Redis.OpsPerSec), num(both, "%.2f", row.OpsRatio), spreadCell, others, bar,
		num(hasS, "%.3f", row.SvcDB.P50Ms), num(hasR, "%.3f", row.Redis.P50Ms), num(both, "%.2f", row.P50Ratio),
		num(hasS, "%.3f", row.SvcDB.P99Ms), num(hasR, "%.3f", row.Redis.P99Ms), num(both, "%.2f", row.P99Ratio),
		cpuCell(row.SvcDB.CPUUsPerReq, 0), cpuCell(row.Redis.CPUUsPerReq, 0), num(both && cpuKnown, "%.2f", row.CPURatio),
	}
}

// loadTailHeader heads the load generator's tail table: its cases' latency
// percentiles, each tail ratio with the range of its per-round pairs
// (Row.P99Pairs, P999Pairs).
var loadTailHeader = []string{
	"case",
	"svcdb p50 ms", "redis p50 ms", "ratio",
	"svcdb p99 ms", "redis p99 ms", "ratio", "pairs",
	"svcdb p99.9 ms", "redis p99.9 ms", "ratio", "pairs",
}

const loadTailLegend = "load generator tail: medians of the rounds as above; pairs: the smallest and largest svcdb/redis ratio of one round's run to the same round's run on the other server. " +
	"A tail ratio whose pairs straddle 1 is not a difference between the servers."

// tailCells is the row's line of the tail table; ok is false for cases
// without a p99.9 (redis-benchmark's).
func (row *Row) tailCells() (cells []string, ok bool) {
	if row.Case.Tool != "loadgen" || len(row.Case.SvcDB) == 0 || len(row.Case.Redis) == 0 {
		return nil, false
	}
	s, q := &row.SvcDB, &row.Redis
	return []string{
		row.Case.Name,
		fmt.Sprintf("%.3f", s.P50Ms), fmt.Sprintf("%.3f", q.P50Ms), fmt.Sprintf("%.2f", row.P50Ratio),
		fmt.Sprintf("%.3f", s.P99Ms), fmt.Sprintf("%.3f", q.P99Ms), fmt.Sprintf("%.2f", row.P99Ratio), pairCell(row.P99Pairs),
		fmt.Sprintf("%.3f", s.P999Ms), fmt.Sprintf("%.3f", q.P999Ms), fmt.Sprintf("%.2f", row.P999Ratio), pairCell(row.P999Pairs),
	}, true
}

// pairCell formats a range of per-round ratios, "-" when there is none.
func pairCell(r [2]float64) string {
	if r[1] == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f-%.2f", r[0], r[1])
}

// loadTailTable returns the tail table's rows, none without load generator cases.
func loadTailTable(rows []Row) [][]string {
	var out [][]string
	for i := range rows {
		if cells, ok := rows[i].tailCells(); ok {
			out = append(out, cells)
		}
	}
	return out
}

// cpuCell formats a CPU time per request, "-" when unknown (0), right-aligned
// to width.
func cpuCell(us float64, width int) string {
	if us <= 0 {
		return fmt.Sprintf("%*s", width, "-")
	}
	return fmt.Sprintf("%*.2f", width, us)
}

// WriteTable prints the comparison as an aligned text table.
func (r *Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("svcdb vs redis-server: medians of %d round(s)%s, ratio = svcdb/redis\n", r.Rounds, r.loadRoundsNote())
	ew.printf("machine: %s\n", r.machineLine())
	ew.printf("pinning: %s\n", r.PinNote)
	ew.printf("svcdb:   %s\n", r.SvcDBCmd)
	ew.printf("redis:   %s\n", r.RedisCmd)
	for _, n := range r.Notes {
		ew.printf("note:    %s\n", n)
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
	if err := writeTable(w, tableHeader, cells); err != nil {
		return err
	}
	if anyBound {
		ew.printf("* a client used > 90%% of its CPU: the run measured the client as much as the server\n")
	}
	ew.printf("%s\n", legend)
	if line := r.barLine(); line != "" {
		ew.printf("\n%s\n", line)
	}
	for _, p := range r.Problems() {
		ew.printf("  %s\n", p)
	}
	if tail := loadTailTable(rows); len(tail) > 0 && ew.err == nil {
		ew.printf("\n")
		if err := writeTable(w, loadTailHeader, tail); err != nil {
			return err
		}
		ew.printf("%s\n", loadTailLegend)
	}
	return ew.err
}

// WriteMarkdown writes the comparison as a Markdown section for
// docs/performance.md: machine, commands, the median table, and every run.
func (r *Report) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("## svcdb vs redis-server\n\n")
	ew.printf("Measured %s with `svcbench compare`; medians of %d round(s) per server, runs interleaved (svcdb, redis, svcdb, ...). ",
		r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Rounds)
	if note := r.loadRoundsNote(); note != "" {
		ew.printf("(%s). ", note[2:])
	}
	ew.printf("Ratios are svcdb/redis.\n\n")
	ew.printf("- Machine: %s\n", r.machineLine())
	ew.printf("- Pinning: %s\n", r.PinNote)
	ew.printf("- svcdb: `%s`\n", r.SvcDBCmd)
	ew.printf("- redis: `%s`\n", r.RedisCmd)
	for _, n := range r.Notes {
		ew.printf("- Note: %s\n", n)
	}
	ew.printf("- CPU us/req: the server's CPU time (sum of its threads' /proc schedstat) during the run divided by the requests completed.\n")
	ew.printf("- %s\n\n", strings.ReplaceAll(legend, "\n", "\n- "))
	ew.printf("| %s |\n", strings.Join(tableHeader, " | "))
	ew.printf("|---%s|\n", strings.Repeat("|--:", len(tableHeader)-1))
	rows := r.Rows()
	for i := range rows {
		cells := rows[i].cells()
		cells[0] = strings.ReplaceAll(cells[0], "|", `\|`)
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	for i := range rows {
		if rows[i].ClientBound {
			ew.printf("\n\\* a client used > 90%% of its CPU: the run measured the client as much as the server.\n")
			break
		}
	}
	if line := r.barLine(); line != "" {
		ew.printf("\n%s.\n", strings.Replace(line, "bar: ", "Bar: ", 1))
		if probs := r.Problems(); len(probs) > 0 {
			ew.printf("\n")
			for _, p := range probs {
				ew.printf("- %s\n", p)
			}
		}
	}
	if tail := loadTailTable(rows); len(tail) > 0 {
		ew.printf("\n%s\n\n", loadTailLegend)
		ew.printf("| %s |\n|---%s|\n", strings.Join(loadTailHeader, " | "), strings.Repeat("|--:", len(loadTailHeader)-1))
		for _, cells := range tail {
			cells[0] = strings.ReplaceAll(cells[0], "|", `\|`)
			ew.printf("| %s |\n", strings.Join(cells, " | "))
		}
	}
	ew.printf("\n<details><summary>All runs</summary>\n\n")
	ew.printf("| case | server | round | ops/s | p50 ms | p99 ms | p99.9 ms | cpu us/req | requests | wall s | server cpu s | client cpu s | others |\n")
	ew.printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range r.Cases {
		for _, side := range []struct {
			name    string
			samples []Sample
		}{{SideSvcDB, c.SvcDB}, {SideRedis, c.Redis}} {
			for i, s := range side.samples {
				p999 := "-"
				if s.P999Ms > 0 {
					p999 = fmt.Sprintf("%.3f", s.P999Ms)
				}
				ew.printf("| %s | %s | %d | %.0f | %.3f | %.3f | %s | %.2f | %d | %.2f | %.3f | %.3f | %.0f%% |\n",
					c.Name, side.name, i+1, s.OpsPerSec, s.P50Ms, s.P99Ms, p999, s.CPUUsPerReq, s.Requests, s.WallSec, s.ServerCPU, s.ClientCPU, 100*s.OthersShare())
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
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// writeTable writes header and rows right-aligned in columns.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}
