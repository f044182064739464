package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGCHeapFloorSetting: a server started with svc-gc-heap-floor 128mb
// reports it in CONFIG GET, and INFO svc shows the collector's goal at the
// floor (a GOGC percent over 100 on its small heap); CONFIG SET 0 gives
// the runtime's own pacing back (gc_gogc 100, a goal under the floor). It
// is off by default. With GOGC=off in the environment the collector stays
// off whatever the floor.
func TestGCHeapFloorSetting(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	const floor = 128 << 20
	info := func(c *redis.Client, key string) int64 {
		for _, l := range strings.Split(c.Info(ctx, "svc").Val(), "\r\n") {
			if v, ok := strings.CutPrefix(l, key+":"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("%s: %q", key, v)
				}
				return n
			}
		}
		t.Fatalf("INFO svc has no %s", key)
		return 0
	}
	t.Run("floor", func(t *testing.T) {
		_, addr, _, _ := startProcessEnv(t, bin, []string{"SVC_MEMORY_GC_HEAP_FLOOR=128mb", "GOGC="})
		c := client(t, addr)
		if got := c.ConfigGet(ctx, "svc-gc-heap-floor").Val()["svc-gc-heap-floor"]; got != strconv.Itoa(floor) {
			t.Errorf("CONFIG GET svc-gc-heap-floor = %q, want %d", got, floor)
		}
		if g, p := info(c, "gc_heap_goal"), info(c, "gc_gogc"); g < floor*95/100 || g > floor*105/100 || p <= 100 {
			t.Errorf("floor %d: gc_heap_goal %d, gc_gogc %d", floor, g, p)
		}
		if err := c.ConfigSet(ctx, "svc-gc-heap-floor", "0").Err(); err != nil {
			t.Fatal(err)
		}
		if g, p := info(c, "gc_heap_goal"), info(c, "gc_gogc"); g >= 64<<20 || p != 100 {
			t.Errorf("no floor: gc_heap_goal %d, gc_gogc %d, want the runtime's (100)", g, p)
		}
		if err := c.ConfigSet(ctx, "svc-gc-heap-floor", "-1").Err(); err == nil {
			t.Error("CONFIG SET svc-gc-heap-floor -1 accepted")
		}
	})
	t.Run("default off", func(t *testing.T) {
		_, addr, _, _ := startProcessEnv(t, bin, []string{"GOGC="})
		c := client(t, addr)
		if got := c.ConfigGet(ctx, "svc-gc-heap-floor").Val()["svc-gc-heap-floor"]; got != "0" {
			t.Errorf("CONFIG GET svc-gc-heap-floor = %q, want 0 (off by default)", got)
		}
		if p := info(c, "gc_gogc"); p != 100 {
			t.Errorf("no floor: gc_gogc %d, want 100", p)
		}
	})
	t.Run("GOGC=off", func(t *testing.T) {
		_, addr, _, _ := startProcessEnv(t, bin, []string{"SVC_MEMORY_GC_HEAP_FLOOR=128mb", "GOGC=off"})
		c := client(t, addr)
		if p := info(c, "gc_gogc"); p != -1 {
			t.Errorf("GOGC=off with a floor: gc_gogc %d, want -1", p)
		}
	})
}
