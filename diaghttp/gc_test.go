package diaghttp_test

import (
	"runtime"
	"strings"
	"testing"
)

// TestGCMetrics: the svc_gc_* series follow the Go collector of the
// process serving /metrics (this test's, where the server runs): two forced
// cycles between scrapes show as two more forced cycles and at least four
// more stop-the-world pauses; the pause histogram is cumulative and ends at
// its count; the scrape passes promtool.
func TestGCMetrics(t *testing.T) {
	f := start(t, "")
	text, before := f.scrape(t)
	for fam, typ := range map[string]string{
		"svc_gc_cycles_total": "counter", "svc_gc_forced_cycles_total": "counter", "svc_gc_pause_seconds": "histogram",
		"svc_gc_cpu_seconds_total": "counter", "svc_gc_assist_cpu_seconds_total": "counter",
		"svc_gc_process_cpu_seconds_total": "counter", "svc_gc_heap_goal_bytes": "gauge",
		"svc_gc_heap_live_bytes": "gauge", "svc_gc_scan_heap_bytes": "gauge", "svc_gc_heap_objects": "gauge", "svc_gc_gogc_percent": "gauge",
	} {
		if !strings.Contains(text, "# TYPE "+fam+" "+typ+"\n") {
			t.Errorf("no TYPE %s %s", fam, typ)
		}
	}
	runtime.GC()
	runtime.GC()
	text, after := f.scrape(t)
	checkMetrics(t, text)
	if d := after["svc_gc_forced_cycles_total"] - before["svc_gc_forced_cycles_total"]; d != 2 {
		t.Errorf("svc_gc_forced_cycles_total grew by %v over two runtime.GC calls, want 2", d)
	}
	if d := after["svc_gc_cycles_total"] - before["svc_gc_cycles_total"]; d < 2 {
		t.Errorf("svc_gc_cycles_total grew by %v, want >= 2", d)
	}
	if d := after["svc_gc_pause_seconds_count"] - before["svc_gc_pause_seconds_count"]; d < 4 {
		t.Errorf("svc_gc_pause_seconds_count grew by %v, want >= 4 (two pauses per cycle)", d)
	}
	if after[`svc_gc_pause_seconds_bucket{le="+Inf"}`] != after["svc_gc_pause_seconds_count"] {
		t.Errorf("+Inf bucket %v != count %v", after[`svc_gc_pause_seconds_bucket{le="+Inf"}`], after["svc_gc_pause_seconds_count"])
	}
	if lo, hi := after[`svc_gc_pause_seconds_bucket{le="1.024e-06"}`], after[`svc_gc_pause_seconds_bucket{le="17.179869184"}`]; lo > hi || hi > after["svc_gc_pause_seconds_count"] {
		t.Errorf("pause buckets not cumulative: first %v, last %v, count %v", lo, hi, after["svc_gc_pause_seconds_count"])
	}
	for _, k := range []string{"svc_gc_heap_goal_bytes", "svc_gc_heap_live_bytes", "svc_gc_process_cpu_seconds_total", "svc_gc_pause_seconds_sum"} {
		if after[k] <= 0 {
			t.Errorf("%s = %v, want > 0", k, after[k])
		}
	}
	if after["svc_gc_gogc_percent"] != 100 {
		t.Errorf("svc_gc_gogc_percent = %v, want 100", after["svc_gc_gogc_percent"])
	}
}
