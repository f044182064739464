package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHugePagesSetting: with svc-huge-pages yes, a server loaded with
// 400,000 keys (about 50 MB of heap) has part of its resident memory on
// transparent huge pages, and INFO memory's used_memory_rss_huge shows it;
// with no, it stays at zero. Where the kernel gives no THP to advised
// memory (mode never, or no THP at all) only the "no" half runs. CONFIG
// GET shows the setting; CONFIG SET refuses it (it is read at start).
func TestHugePagesSetting(t *testing.T) {
	bin := buildBinary(t)
	b, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	thp := strings.Contains(string(b), "[madvise]") || strings.Contains(string(b), "[always]")
	ctx := context.Background()
	huge := func(c *redis.Client) int64 {
		for _, l := range strings.Split(c.Info(ctx, "memory").Val(), "\r\n") {
			if v, ok := strings.CutPrefix(l, "used_memory_rss_huge:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("used_memory_rss_huge: %q", v)
				}
				return n
			}
		}
		t.Fatal("INFO memory has no used_memory_rss_huge")
		return 0
	}
	load := func(c *redis.Client) {
		val := strings.Repeat("v", 32)
		for i := 0; i < 400_000; i += 1000 {
			if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for j := i; j < i+1000; j++ {
					p.Set(ctx, "memtier-"+strconv.Itoa(j), val, 0)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, on := range []string{"no", "yes"} {
		t.Run(on, func(t *testing.T) {
			if on == "yes" && !thp {
				t.Skipf("the kernel gives no THP to advised memory: %q", strings.TrimSpace(string(b)))
			}
			cmd, addr, _, _ := startProcessEnv(t, bin, []string{"SVC_MEMORY_HUGE_PAGES=" + on})
			c := client(t, addr)
			if got := c.ConfigGet(ctx, "svc-huge-pages").Val()["svc-huge-pages"]; got != on {
				t.Errorf("CONFIG GET svc-huge-pages = %q, want %q", got, on)
			}
			if err := c.ConfigSet(ctx, "svc-huge-pages", "no").Err(); err == nil {
				t.Error("CONFIG SET svc-huge-pages accepted; it is read at start")
			}
			load(c)
			if on == "no" {
				// The measurement runs every 10 s when off: wait for one
				// reading after the load.
				time.Sleep(11 * time.Second)
				if n := huge(c); n != 0 {
					t.Errorf("svc-huge-pages no: used_memory_rss_huge = %d, want 0", n)
				}
			} else {
				// Advised and collapsed once a second: the heap's 2 MiB
				// blocks are huge pages within a few passes.
				deadline := time.Now().Add(30 * time.Second)
				n := huge(c)
				for n < 8<<20 && time.Now().Before(deadline) {
					time.Sleep(200 * time.Millisecond)
					n = huge(c)
				}
				if n < 8<<20 {
					t.Errorf("svc-huge-pages yes: used_memory_rss_huge = %d after 30 s, want at least 8 MiB", n)
				}
				t.Logf("used_memory_rss_huge %d MiB", n>>20)
			}
			_ = cmd.Process.Signal(os.Interrupt)
			waitExit(t, cmd)
		})
	}
}
