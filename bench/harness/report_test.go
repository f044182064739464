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
