package harness

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// benchRow is what the harness reads from one redis-benchmark CSV row.
type benchRow struct {
	OpsPerSec, P50Ms, P99Ms float64
}

// namedRow is a CSV row with its test name as printed ("MSET (10 keys)").
type namedRow struct {
	Name string
	benchRow
}

// parseBenchRows reads every row of redis-benchmark --csv output (7.x
// layout: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
// "p95_latency_ms","p99_latency_ms","max_latency_ms"), in order. Columns are
// found by header name, so a reordering is harmless and a missing column is
// an error, not a zero. Output with no rows (empty, or the header only: a
// run that failed in its first test) gives none and no error.
func parseBenchRows(out []byte) ([]namedRow, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark CSV: %w; output: %q", err, out)
	}
	if len(recs) < 2 {
		return nil, nil
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	rows := make([]namedRow, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		row := namedRow{Name: rec[0]}
		for _, f := range []struct {
			col string
			dst *float64
		}{{"rps", &row.OpsPerSec}, {"p50_latency_ms", &row.P50Ms}, {"p99_latency_ms", &row.P99Ms}} {
			i, ok := col[f.col]
			if !ok || i >= len(rec) {
				return nil, fmt.Errorf("redis-benchmark CSV: no %q column (redis-benchmark older than 7.0?); header %q", f.col, recs[0])
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return nil, fmt.Errorf("redis-benchmark CSV: %s %s = %q: %w", row.Name, f.col, rec[i], err)
			}
			*f.dst = v
		}
		if row.OpsPerSec <= 0 {
			return nil, fmt.Errorf("redis-benchmark CSV: %s rps = %v", row.Name, row.OpsPerSec)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// parseBenchCSV returns the row of test (a -t name) from redis-benchmark
// --csv output. Test names in the output carry details ("MSET (10 keys)"),
// so rows are matched on their first word.
func parseBenchCSV(out []byte, test string) (benchRow, error) {
	rows, err := parseBenchRows(out)
	if err != nil {
		return benchRow{}, err
	}
	if len(rows) == 0 {
		return benchRow{}, fmt.Errorf("redis-benchmark CSV: want a header and a row; output: %q", out)
	}
	want := strings.ToUpper(test)
	for _, row := range rows {
		if name, _, _ := strings.Cut(row.Name, " "); name == want {
			return row.benchRow, nil
		}
	}
	return benchRow{}, fmt.Errorf("redis-benchmark CSV: no %s row; output: %q", want, out)
}

// benchFailure extracts why a redis-benchmark run failed from its standard
// error: redis-benchmark 7 exits with status 1 at the first error reply,
// after "Error from server: ERR ..." (its -e flag no longer exists, hence
// the WARNING it prints when given), or after "Error: ..." when the
// connection breaks. Without such a line it returns the last lines.
func benchFailure(stderr string) string {
	var last []string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "WARNING: -e option") {
			continue
		}
		if strings.HasPrefix(line, "Error") {
			return line
		}
		last = append(last, line)
	}
	if len(last) > 3 {
		last = last[len(last)-3:]
	}
	return strings.Join(last, " / ")
}

// benchError is a redis-benchmark run that failed because of the server's
// replies (an error reply, a closed connection, no reply in time), as
// opposed to the harness failing to run it: the case fails, the comparison
// goes on.
type benchError struct{ msg string }

func (e *benchError) Error() string { return e.msg }

// errorCounts is what a server says about the error replies it sent: in
// total (INFO stats total_error_replies, Redis 6.2 and later) and per
// command (failed_calls + rejected_calls in INFO commandstats). A
// redis-benchmark older than 7 counts error replies as answers, and any
// version could miss some: these are the check that does not depend on it.
type errorCounts struct {
	Known     bool // the server reports total_error_replies
	Total     int64
	ByCommand map[string]int64
}

// readErrorCounts asks addr; a server that cannot say gives Known false.
func readErrorCounts(ctx context.Context, addr string) errorCounts {
	st, err := info(ctx, addr, "stats")
	if err != nil {
		return errorCounts{}
	}
	total, ok := infoInt(st, "total_error_replies")
	if !ok {
		return errorCounts{}
	}
	ec := errorCounts{Known: true, Total: total, ByCommand: map[string]int64{}}
	if cs, err := info(ctx, addr, "commandstats"); err == nil {
		ec.ByCommand = parseCommandErrors(cs)
	}
	return ec
}

// parseCommandErrors reads failed_calls + rejected_calls per command from
// INFO commandstats fields ("cmdstat_lpush" -> "calls=4050,...,
// rejected_calls=0,failed_calls=50").
func parseCommandErrors(fields map[string]string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range fields {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		var n int64
		for _, kv := range strings.Split(v, ",") {
			key, val, _ := strings.Cut(kv, "=")
			if key == "failed_calls" || key == "rejected_calls" {
				x, _ := strconv.ParseInt(val, 10, 64)
				n += x
			}
		}
		out[strings.ToLower(name)] = n
	}
	return out
}

// since returns the errors counted between before and c.
func (c errorCounts) since(before errorCounts) errorCounts {
	if !c.Known || !before.Known {
		return errorCounts{}
	}
	d := errorCounts{Known: true, Total: c.Total - before.Total, ByCommand: map[string]int64{}}
	for k, v := range c.ByCommand {
		if n := v - before.ByCommand[k]; n > 0 {
			d.ByCommand[k] = n
		}
	}
	return d
}

// benchArgs returns redis-benchmark's arguments for one run; tests is -t's
// value (one test, or several separated by commas).
func benchArgs(port, clients, requests, keyspace int, tests string, pipeline int) []string {
	args := []string{
		"-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", strconv.Itoa(clients), "-n", strconv.Itoa(requests),
	}
	args = append(keySpaceArgs(args, keyspace), "-t", tests, "-P", strconv.Itoa(pipeline), "--csv", "-q")
	return args
}

// keySpaceArgs appends -r keyspace, or nothing for keyspace 0: redis-benchmark
// without -r sends every request of a test to one key (key:__rand_int__
// stays as it is), the hot-key case a user's first run measures.
func keySpaceArgs(args []string, keyspace int) []string {
	if keyspace == 0 {
		return args
	}
	return append(args, "-r", strconv.Itoa(keyspace))
}

// benchWork is what one redis-benchmark run sends: a test of its own (-t),
// or a command line given after the options (EVALSHA <sha> 1
// key:__rand_int__, where redis-benchmark puts a random number below -r
// in place of __rand_int__).
type benchWork struct {
	test    string   // -t name, when command is empty
	command []string // the command and its arguments
}

// args are redis-benchmark's arguments for w.
func (w benchWork) args(port, clients, requests, keyspace, pipeline int) []string {
	if len(w.command) == 0 {
		return benchArgs(port, clients, requests, keyspace, w.test, pipeline)
	}
	args := keySpaceArgs([]string{
		"-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", strconv.Itoa(clients), "-n", strconv.Itoa(requests),
	}, keyspace)
	return append(append(args, "-P", strconv.Itoa(pipeline), "--csv", "-q"), w.command...)
}

// row is the first word of w's CSV row: the test's name, or the command's
// (redis-benchmark names a command line's row after the whole line).
func (w benchWork) row() string {
	if len(w.command) == 0 {
		return w.test
	}
	return w.command[0]
}
