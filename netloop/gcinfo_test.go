package netloop_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestInfoGc: INFO's default sections and INFO svc carry the collector's
// gc_* fields in the "# Svc" section (core/gcstats), and they follow the
// collector: two forced cycles show.
func TestInfoGc(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	forced := func(info string) int {
		t.Helper()
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, "gc_forced_cycles:"); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("gc_forced_cycles:%q", v)
				}
				return n
			}
		}
		t.Fatalf("no gc_forced_cycles in\n%s", info)
		return 0
	}
	before := forced(string(c.do("INFO", "svc").Str))
	runtime.GC()
	runtime.GC()
	for _, args := range [][]string{{"INFO"}, {"INFO", "svc"}, {"INFO", "everything"}} {
		info := string(c.do(args...).Str)
		for _, want := range []string{"# Svc\r\n", "gc_cycles:", "gc_pause_p99_usec:", "gc_cpu_seconds:", "gc_assist_cpu_seconds:", "gc_heap_goal:", "gc_gogc:"} {
			if !strings.Contains(info, want) {
				t.Errorf("%v: no %q in\n%s", args, want, info)
			}
		}
		if got := forced(info); got != before+2 {
			t.Errorf("%v: gc_forced_cycles %d after two runtime.GC, want %d", args, got, before+2)
		}
	}
}
