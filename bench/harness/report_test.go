package harness

import (
	"bytes"
	"strings"
	"testing"
)

const redis7CSV = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","68965.52","0.381","0.112","0.375","0.479","0.775","1.751"
"MSET (10 keys)","58997.05","0.703","0.104","0.663","1.199","1.671","2.575"
`

func TestParseBenchCSV(t *testing.T) {
	f := func(out, test string, want benchRow, wantErr string) {
		t.Helper()
		got, err := parseBenchCSV([]byte(out), test)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("test %s: err %v; want one containing %q", test, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("test %s: got %+v, %v; want %+v", test, got, err, want)
		}
	}
	f(redis7CSV, "set", benchRow{68965.52, 0.375, 0.775}, "")
	f(redis7CSV, "mset", benchRow{58997.05, 0.663, 1.671}, "")
	f(redis7CSV, "get", benchRow{}, "no GET row")
	f(`"test","rps"`+"\n"+`"SET","1000.00"`+"\n", "set", benchRow{}, `no "p50_latency_ms" column`)
	f(strings.Replace(redis7CSV, "68965.52", "0.00", 1), "set", benchRow{}, "rps = 0")
	f(strings.Replace(redis7CSV, "0.775", "n/a", 1), "set", benchRow{}, "p99_latency_ms")
	f("", "set", benchRow{}, "want a header and a row")
}

func TestMedian(t *testing.T) {
	f := func(ops []float64, want float64) {
		t.Helper()
		var s []Sample
		for _, o := range ops {
			s = append(s, Sample{OpsPerSec: o, P99Ms: -o})
		}
		m := Median(s)
		if m.OpsPerSec != want || m.P99Ms != -want {
			t.Errorf("Median(%v) = %v / %v; want %v / %v", ops, m.OpsPerSec, m.P99Ms, want, -want)
		}
	}
	f(nil, 0)
	f([]float64{5}, 5)
	f([]float64{3, 1, 2}, 2)
	f([]float64{4, 1, 3, 2}, 2.5)
	f([]float64{100, 1, 1, 1, 100}, 1)
}

func TestRequestsFor(t *testing.T) {
	c := DefaultConfig()
	for p, want := range map[int]int{1: 200_000, 4: 800_000, 16: 2_000_000, 0: 200_000} {
		if got := c.RequestsFor(p); got != want {
			t.Errorf("RequestsFor(%d) = %d; want %d", p, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	c := DefaultConfig()
	c.SvcDB.Path = "bin/svcdb"
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	c.Tests = []string{"lpushx"}
	c.Rounds = 0
	c.Loads[0].Pipeline = 0
	err := c.Validate()
	for _, want := range []string{`test "lpushx"`, "rounds 0", "load workload 1: pipeline 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

func TestTableAndMarkdown(t *testing.T) {
	rep := &Report{
		Rounds:   2,
		Machine:  Machine{CPUModel: "Test CPU", OnlineCPUs: 2, UsableCPUs: 2, Kernel: "linux 6.1", GoVersion: "go1.26", RedisVersion: "7.0.15"},
		PinNote:  "servers pinned to CPU 0, clients to CPU 1 (taskset)",
		SvcDBCmd: "bin/svcdb --port 1", RedisCmd: "redis-server --port 2",
		Cases: []*Case{{
			Name: "SET -P 1", Tool: "redis-benchmark", Detail: "redis-benchmark -t set",
			SvcDB: []Sample{{OpsPerSec: 120, P50Ms: 0.2, P99Ms: 1, CPUUsPerReq: 4, WallSec: 1, ClientCPU: 0.95}, {OpsPerSec: 100, P50Ms: 0.4, P99Ms: 1, CPUUsPerReq: 6, WallSec: 1}},
			Redis: []Sample{{OpsPerSec: 100, P50Ms: 0.3, P99Ms: 2, CPUUsPerReq: 10, WallSec: 1, ClientCPU: 0.95}},
		}},
	}
	rows := rep.Rows()
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if r := rows[0]; !near(r.OpsRatio, 1.1) || !near(r.P50Ratio, 1) || !near(r.P99Ratio, 0.5) || !near(r.CPURatio, 0.5) || !r.ClientBound {
		t.Errorf("ratios %+v", r)
	}
	var tb, md, js bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Test CPU", "svcdb ops/s", "SET -P 1 *", "1.10", "0.50", "18%", "a client used > 90%"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## svcdb vs redis-server", "| case | svcdb ops/s |", "|---|--:|", "| SET -P 1 * | 110 | 100 | 1.10 | 18% |", "<details>", "| SET -P 1 | redis | 1 | 100 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"cpu_us_per_req": 4`) {
		t.Errorf("json: %v\n%s", err, js.String())
	}
}

func TestTwoDigits(t *testing.T) {
	for in, want := range map[float64]int{0: 0, 99: 99, 123456: 120000, 79365.2: 79000, 1e6: 1000000, 155: 160, 9960: 10000} {
		if got := twoDigits(in); got != want {
			t.Errorf("twoDigits(%v) = %d; want %d", in, got, want)
		}
	}
}

// TestLoadTail: the load generator's cases get a tail table with p99.9 and
// the range of the per-round ratios, in the text table, the Markdown and
// side by side; redis-benchmark's cases (no p99.9) do not.
func TestLoadTail(t *testing.T) {
	run := func(p99, p999 float64) Sample {
		return Sample{OpsPerSec: 100, P50Ms: 0.5, P99Ms: p99, P999Ms: p999, CPUUsPerReq: 1, WallSec: 1}
	}
	rep := &Report{Rounds: 3, Cases: []*Case{
		{Name: "SET -P 1", Tool: "redis-benchmark", SvcDB: []Sample{run(1, 0), run(1, 0)}, Redis: []Sample{run(2, 0), run(2, 0)}},
		{Name: "loadgen 1:10 R:R -P 16", Tool: "loadgen",
			// Round by round: 0.8, 1.5 and 0.9 at p99; 2, 0.5 and 1 at p99.9.
			SvcDB: []Sample{run(0.8, 4), run(1.5, 1), run(0.9, 2)},
			Redis: []Sample{run(1, 2), run(1, 2), run(1, 2)}},
	}}
	rows := rep.Rows()
	if r := rows[1]; r.P99Ratio != 0.9 || r.P999Ratio != 1 || r.P99Pairs != [2]float64{0.8, 1.5} || r.P999Pairs != [2]float64{0.5, 2} {
		t.Errorf("loadgen row: p99 %v %v, p99.9 %v %v", r.P99Ratio, r.P99Pairs, r.P999Ratio, r.P999Pairs)
	}
	if r := rows[0]; r.P999Ratio != 0 || r.P999Pairs != [2]float64{} || r.P99Pairs != [2]float64{0.5, 0.5} {
		t.Errorf("redis-benchmark row: p99.9 %v %v, p99 pairs %v", r.P999Ratio, r.P999Pairs, r.P99Pairs)
	}
	if got := pairRange([]Sample{run(1, 1)}, []Sample{run(2, 2)}, func(s Sample) float64 { return s.P99Ms }); got != [2]float64{} {
		t.Errorf("one pair: %v; want no range", got)
	}
	var tb, md, sb, sbmd bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	vs := []Variant{{Mode: Mode{Pin: true, KeySpace: 0}, Report: rep}}
	if err := WriteSideBySide(&sb, vs); err != nil {
		t.Fatal(err)
	}
	if err := WriteSideBySideMarkdown(&sbmd, vs); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": tb.String(), "markdown": md.String(), "side by side": sb.String(), "side by side markdown": sbmd.String()} {
		for _, want := range []string{"0.80-1.50", "0.50-2.00", "p99.9"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	for _, want := range []string{"| loadgen 1:10 R:R -P 16 | 0.500 | 0.500 | 1.00 | 0.900 | 1.000 | 0.90 | 0.80-1.50 | 2.000 | 2.000 | 1.00 | 0.50-2.00 |",
		"| loadgen 1:10 R:R -P 16 | svcdb | 1 | 100 | 0.500 | 0.800 | 4.000 |", "| SET -P 1 | svcdb | 1 | 100 | 0.500 | 1.000 | - |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(sbmd.String(), "| loadgen 1:10 R:R -P 16 | 0.90 | 0.80-1.50 | 1.00 | 0.50-2.00 |") {
		t.Errorf("side by side markdown lacks the tail row:\n%s", sbmd.String())
	}
	if strings.Count(tb.String(), "SET -P 1") != 1 {
		t.Errorf("redis-benchmark case in the tail table:\n%s", tb.String())
	}
}
