package harness

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Mode is one way of running the whole comparison: where the processes run
// and which keys the requests hit. `make bench` runs four (issue 21): a user
// meets svcdb unpinned with its defaults and often with one hot key, while
// the pinned runs with -r 100000 are what the older tables measured.
type Mode struct {
	// Pin: servers and clients on separate CPUs (taskset); false is the
	// defaults mode, no taskset, the way the README's tour runs.
	Pin bool `json:"pinned"`
	// KeySpace is redis-benchmark's -r; 0 is no -r, one key per test.
	KeySpace int `json:"keyspace"`
}

// Label names the mode in reports: "pinned, -r 100000", "defaults, one key".
func (m Mode) Label() string {
	where := "defaults"
	if m.Pin {
		where = "pinned"
	}
	if m.KeySpace == 0 {
		return where + ", one key"
	}
	return where + ", -r " + strconv.Itoa(m.KeySpace)
}

// keysLabel names the keys of m's redis-benchmark runs: "-r 100000", "no -r".
func (m Mode) keysLabel() string {
	if m.KeySpace == 0 {
		return "no -r"
	}
	return "-r " + strconv.Itoa(m.KeySpace)
}

// ParseModes reads a list of modes ("pinned", "defaults") and of key spaces
// (numbers, 0 for one key), each comma-separated, into every combination,
// modes outermost.
func ParseModes(modes string, keyspaces []int) ([]Mode, error) {
	var out []Mode
	for _, f := range strings.Split(modes, ",") {
		var pin bool
		switch strings.TrimSpace(f) {
		case "pinned":
			pin = true
		case "defaults":
		case "":
			continue
		default:
			return nil, fmt.Errorf("mode %q: want pinned or defaults", strings.TrimSpace(f))
		}
		for _, k := range keyspaces {
			if k < 0 {
				return nil, fmt.Errorf("key space %d: want >= 0 (0: one key)", k)
			}
			out = append(out, Mode{Pin: pin, KeySpace: k})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("modes %q with key spaces %v: no combination", modes, keyspaces)
	}
	return out, nil
}

// Apply returns cfg set for m.
func (m Mode) Apply(cfg Config) Config {
	cfg.Pin, cfg.KeySpace = m.Pin, m.KeySpace
	return cfg
}

// Variant is the comparison run in one Mode.
type Variant struct {
	Mode   Mode    `json:"mode"`
	Report *Report `json:"report"`
}

// sideBySide is the table of WriteSideBySide: one row per case name, in the
// order the cases first appear, and for each variant the ops/s ratio, the
// CPU per request ratio and the verdict ("-" where the variant lacks the
// case).
func sideBySide(vs []Variant) (header []string, rows [][]string, pass, total int) {
	header = []string{"case"}
	for _, v := range vs {
		l := v.Mode.Label()
		header = append(header, l+" ops ratio", "spread", "cpu ratio", "bar")
	}
	index := map[string]int{}
	for vi, v := range vs {
		for _, row := range v.Report.Rows() {
			ri := rowOf(index, &rows, row.Case.Name, 1+4*len(vs))
			cells := row.cells()
			// cells: name, svcdb ops, redis ops, ratio, spread, others, bar, ... cpu ratio last.
			rows[ri][1+4*vi] = cells[3]
			rows[ri][2+4*vi] = cells[4]
			rows[ri][3+4*vi] = cells[len(cells)-1]
			rows[ri][4+4*vi] = cells[6]
			if row.Case.Gated {
				total++
				if row.Verdict == VerdictOK {
					pass++
				}
			}
		}
	}
	return header, rows, pass, total
}

// rowOf returns the index in rows of the case named name, appending a row
// of width cells ("-" but the name) the first time a mode reports it, so a
// case missing from some modes keeps its place.
func rowOf(index map[string]int, rows *[][]string, name string, width int) int {
	if ri, ok := index[name]; ok {
		return ri
	}
	r := make([]string, width)
	for i := range r {
		r[i] = "-"
	}
	r[0] = name
	index[name] = len(*rows)
	*rows = append(*rows, r)
	return len(*rows) - 1
}

// sideBySideTail is the load generator cases' tail in each mode: the p99
// and p99.9 ratios of the medians with the range of their per-round pairs
// (Row.P99Pairs); no rows when no variant ran the load generator.
func sideBySideTail(vs []Variant) (header []string, rows [][]string) {
	header = []string{"case"}
	for _, v := range vs {
		header = append(header, v.Mode.Label()+" p99 ratio", "pairs", "p99.9 ratio", "pairs")
	}
	index := map[string]int{}
	for vi, v := range vs {
		for _, row := range v.Report.Rows() {
			cells, ok := row.tailCells()
			if !ok {
				continue
			}
			ri := rowOf(index, &rows, row.Case.Name, 1+4*len(vs))
			// tailCells: name, p50 x3, p99 svcdb, redis, ratio, pairs, p99.9 svcdb, redis, ratio, pairs.
			copy(rows[ri][1+4*vi:], []string{cells[6], cells[7], cells[10], cells[11]})
		}
	}
	return header, rows
}

// WriteSideBySide prints the variants' medians next to each other: per
// case, each mode's svcdb/redis ops/s ratio, its spread, the CPU per
// request ratio and the verdict, then how many gated cases met the bar in
// all modes together. Each variant's own table (WriteTable) has the
// absolute numbers.
func WriteSideBySide(w io.Writer, vs []Variant) error {
	header, rows, pass, total := sideBySide(vs)
	ew := &errWriter{w: w}
	ew.printf("side by side: svcdb/redis ratios in each mode (ops: higher is better; cpu us/req: lower is better)\n\n")
	if ew.err != nil {
		return ew.err
	}
	if err := writeTable(w, header, rows); err != nil {
		return err
	}
	ew.printf("\nbar, all modes: %d of %d cases pass\n", pass, total)
	if n := loadKeysNote(vs); n != "" {
		ew.printf("%s\n", n)
	}
	if th, tr := sideBySideTail(vs); len(tr) > 0 && ew.err == nil {
		ew.printf("\nthe load generator's tail, svcdb/redis in each mode (lower is better; pairs: the range of one round's ratio)\n\n")
		if err := writeTable(w, th, tr); err != nil {
			return err
		}
	}
	return ew.err
}

// WriteSideBySideMarkdown is WriteSideBySide as a Markdown table.
func WriteSideBySideMarkdown(w io.Writer, vs []Variant) error {
	header, rows, pass, total := sideBySide(vs)
	ew := &errWriter{w: w}
	ew.printf("## svcdb vs redis-server, every mode side by side\n\n")
	ew.printf("svcdb/redis ratios of the medians; `spread` as in the tables below; `bar`: ok, LOW or FAILED.\n\n")
	ew.printf("| %s |\n|---%s|\n", strings.Join(header, " | "), strings.Repeat("|--:", len(header)-1))
	for _, r := range rows {
		ew.printf("| %s |\n", strings.Join(r, " | "))
	}
	ew.printf("\nBar, all modes: %d of %d cases pass.\n\n", pass, total)
	if n := loadKeysNote(vs); n != "" {
		ew.printf("%s.\n\n", n)
	}
	if th, tr := sideBySideTail(vs); len(tr) > 0 {
		ew.printf("The load generator's tail: svcdb/redis ratios of the medians' p99 and p99.9 in each mode, lower is better; `pairs`: the smallest and largest ratio of one round's svcdb run to the same round's redis run.\n\n")
		ew.printf("| %s |\n|---%s|\n", strings.Join(th, " | "), strings.Repeat("|--:", len(th)-1))
		for _, r := range tr {
			ew.printf("| %s |\n", strings.Join(r, " | "))
		}
		ew.printf("\n")
	}
	return ew.err
}

// loadKeysNote says which keys the load generator rows hit in each mode
// (the rows' names leave the range out so that one row holds every mode),
// "" when no variant ran the load generator: each mode's distinct key
// ranges from its cases' Detail ("R:R 1..100000"). A --load naming its own
// range keeps it in every mode.
func loadKeysNote(vs []Variant) string {
	var parts []string
	for _, v := range vs {
		var ranges []string
		for _, c := range v.Report.Cases {
			if c.Tool != "loadgen" {
				continue
			}
			_, keys, _ := strings.Cut(c.Detail, "keys ")
			keys, _, _ = strings.Cut(keys, ",")
			if !slices.Contains(ranges, keys) {
				ranges = append(ranges, keys)
			}
		}
		if len(ranges) > 0 {
			parts = append(parts, v.Mode.Label()+": "+strings.Join(ranges, " and "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "load generator keys (pattern, range) per mode: " + strings.Join(parts, "; ")
}
