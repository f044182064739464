package harness

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// benchRow is what the harness reads from one redis-benchmark CSV row.
type benchRow struct {
	OpsPerSec, P50Ms, P99Ms float64
}

// parseBenchCSV reads redis-benchmark --csv output (7.x layout:
// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
// "p95_latency_ms","p99_latency_ms","max_latency_ms") and returns the row of
// test. Test names in the output carry details ("MSET (10 keys)"), so rows
// are matched on their first word. Columns are found by header name, so a
// reordering is harmless and a missing column is an error, not a zero.
func parseBenchCSV(out []byte, test string) (benchRow, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return benchRow{}, fmt.Errorf("redis-benchmark CSV: %w; output: %q", err, out)
	}
	if len(recs) < 2 {
		return benchRow{}, fmt.Errorf("redis-benchmark CSV: want a header and a row; output: %q", out)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	want := strings.ToUpper(test)
	for _, rec := range recs[1:] {
		name, _, _ := strings.Cut(rec[0], " ")
		if name != want {
			continue
		}
		var row benchRow
		for _, f := range []struct {
			col string
			dst *float64
		}{{"rps", &row.OpsPerSec}, {"p50_latency_ms", &row.P50Ms}, {"p99_latency_ms", &row.P99Ms}} {
			i, ok := col[f.col]
			if !ok || i >= len(rec) {
				return benchRow{}, fmt.Errorf("redis-benchmark CSV: no %q column (redis-benchmark older than 7.0?); header %q", f.col, recs[0])
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return benchRow{}, fmt.Errorf("redis-benchmark CSV: %s = %q: %w", f.col, rec[i], err)
			}
			*f.dst = v
		}
		if row.OpsPerSec <= 0 {
			return benchRow{}, fmt.Errorf("redis-benchmark CSV: %s rps = %v", want, row.OpsPerSec)
		}
		return row, nil
	}
	return benchRow{}, fmt.Errorf("redis-benchmark CSV: no %s row; output: %q", want, out)
}

// benchArgs returns redis-benchmark's arguments for one run.
func benchArgs(port, clients, requests, keyspace int, test string, pipeline int) []string {
	return []string{
		"-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", strconv.Itoa(clients), "-n", strconv.Itoa(requests),
		"-r", strconv.Itoa(keyspace), "-t", test, "-P", strconv.Itoa(pipeline),
		"--csv", "-q",
	}
}
