package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// procStatusKB reads a field (VmRSS, VmHWM) of /proc/<pid>/status, in bytes.
func procStatusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestRSSFollowsMaxMemory: with maxmemory 128mb, writing three times that
// much (2,000-byte values) under each eviction policy keeps the process'
// resident size (its high-water mark, VmHWM, so a peak between two reads
// counts) within 15% of maxmemory above what it was before filling; the
// keys do fill maxmemory (used_memory at least 90% of it at the end, keys
// evicted); noeviction refuses writes with Redis' OOM error instead.
//
// What holds RSS: used_memory is what the keys really take (slots, index,
// size classes; shard/keyspace/memory.go) plus the Go heap's fragmentation
// (shard/heapwaste.go), and the Go memory limit follows maxmemory (+10% +
// 8 MiB). Measured: peaks 1.07x maxmemory above the start; without the heap's
// fragmentation 1.13-1.18x; with used_memory made to count 70% of the keys'
// bytes, 1.30x (31-39 MiB over the bound: the test fails). 128 MB rather
// than 64: the runtime's own growth (metadata, about 8 MiB) is a fixed part
// that 15% of 64 MB barely covers. About 35 s for the 8 servers, 2 at a
// time on 2 CPUs.
func TestRSSFollowsMaxMemory(t *testing.T) {
	const (
		maxmemory = 128 << 20
		valueSize = 2000
		batch     = 256
	)
	bin := buildBinary(t)
	val := strings.Repeat("v", valueSize)
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random",
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "noeviction"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			cmd, addr, _ := startProcess(t, bin, "--data-dir", t.TempDir(), "--save", "", "--appendonly", "no",
				"--maxmemory", "128mb", "--maxmemory-policy", policy)
			c := client(t, addr)
			ctx := context.Background()
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if got := infoField(t, c, "memory", "maxmemory"); got != strconv.Itoa(maxmemory) {
				t.Fatalf("maxmemory %s", got)
			}
			pid := cmd.Process.Pid
			base := procStatusKB(t, pid, "VmRSS")
			volatile := strings.HasPrefix(policy, "volatile-")
			oom := 0
			for i := 0; i < 3*maxmemory/valueSize; i += batch {
				cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for j := i; j < i+batch; j++ {
						key := "key:" + strconv.Itoa(j)
						ttl := time.Duration(0)
						if volatile {
							ttl = time.Hour + time.Duration(j)*time.Second // distinct TTLs for volatile-ttl
						}
						p.Set(ctx, key, val, ttl)
					}
					return nil
				})
				for _, r := range cmds {
					if err := r.Err(); err != nil {
						if policy != "noeviction" || !strings.HasPrefix(err.Error(), "OOM command not allowed") {
							t.Fatalf("after %d keys: %s: %v (INFO: used_memory %s, heap waste %s, keys %s)", i, r.Name(), err,
								infoField(t, c, "memory", "used_memory"), infoField(t, c, "memory", "used_memory_heap_waste"), infoField(t, c, "keyspace", "db0"))
						}
						oom++
					}
				}
			}
			info := func(k string) int64 {
				n, err := strconv.ParseInt(infoField(t, c, "memory", k), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			used := info("used_memory")
			peak := procStatusKB(t, pid, "VmHWM")
			limit := base + maxmemory + maxmemory*15/100
			t.Logf("%s: RSS before %.1f MiB, peak %.1f MiB (limit %.1f MiB); used_memory %.1f MiB; evicted %s; OOM replies %d",
				policy, float64(base)/(1<<20), float64(peak)/(1<<20), float64(limit)/(1<<20), float64(used)/(1<<20),
				infoField(t, c, "stats", "evicted_keys"), oom)
			if peak > limit {
				t.Errorf("peak RSS %d B exceeds %d B before filling + maxmemory %d + 15%% (by %.1f MiB)", peak, base, maxmemory, float64(peak-limit)/(1<<20))
			}
			// Under noeviction used_memory may pass maxmemory by what the heap's
			// fragmentation grew after the last write was admitted.
			if used < maxmemory*9/10 || used > maxmemory+maxmemory/20 {
				t.Errorf("used_memory %d at the end; want 90%%..105%% of maxmemory %d", used, maxmemory)
			}
			switch evicted, _ := strconv.ParseInt(infoField(t, c, "stats", "evicted_keys"), 10, 64); {
			case policy == "noeviction" && (oom == 0 || evicted != 0):
				t.Errorf("noeviction: %d OOM replies, %d keys evicted", oom, evicted)
			case policy != "noeviction" && evicted == 0:
				t.Errorf("%s evicted nothing", policy)
			}
		})
	}
}
