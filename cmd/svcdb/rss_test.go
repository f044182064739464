package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestInfoUsedMemoryRSS: INFO used_memory_rss is the process' resident size
// as the kernel counts it (VmRSS in /proc/<pid>/status, read around it),
// also after 64 MB of values went in; the Go runtime's own figures are
// there under go_* names.
func TestInfoUsedMemoryRSS(t *testing.T) {
	bin := buildBinary(t)
	cmd, addr, _ := startProcess(t, bin)
	c := client(t, addr)
	ctx := context.Background()
	vmRSS := func() int64 {
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				return n << 10
			}
		}
		t.Fatal("no VmRSS")
		return 0
	}
	info := func() map[string]int64 {
		m := map[string]int64{}
		for _, l := range strings.Split(c.Info(ctx, "memory").Val(), "\r\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					m[k] = n
				}
			}
		}
		return m
	}
	check := func(when string) {
		t.Helper()
		before := vmRSS()
		m := info()
		after := vmRSS()
		rss := m["used_memory_rss"]
		// The INFO call itself moves RSS a little: allow 4 MiB around.
		if rss < min(before, after)-4<<20 || rss > max(before, after)+4<<20 {
			t.Errorf("%s: used_memory_rss %d, VmRSS %d..%d", when, rss, before, after)
		}
		for _, k := range []string{"go_sys", "go_heap_alloc", "go_heap_inuse", "go_gc_heap_goal"} {
			if m[k] <= 0 {
				t.Errorf("%s: %s = %d", when, k, m[k])
			}
		}
		t.Logf("%s: used_memory_rss %d, go_sys %d, used_memory %d", when, rss, m["go_sys"], m["used_memory"])
	}
	check("idle")
	val := strings.Repeat("x", 1<<20)
	for i := range 64 {
		if err := c.Set(ctx, fmt.Sprintf("k%d", i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	check("with 64 MB of values")
	_ = cmd.Process.Signal(os.Interrupt)
	waitExit(t, cmd)
}
