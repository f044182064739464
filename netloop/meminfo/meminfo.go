// Package meminfo writes INFO's memory section: the keyspace's bytes (what
// maxmemory holds), the Go heap's, the process' resident size and the
// fragmentation between them, under Redis 7.0.15's field names where Redis
// has the figure and under names of svcdb's own (used_memory_index,
// go_heap_live, ...) where it has not (docs/observability.md, "INFO
// memory").
//
// It owns the mapping from svcdb's figures to Redis' names and nothing
// else: the figures come in (Input) from the shards' published counters,
// the scripting engine and the parameters, or are read here from the Go
// runtime (runtime/metrics, never runtime.ReadMemStats, which stops the
// world) and the kernel (core/procmem). It must never take a shard's token
// or wait for a loop: INFO on one loop must not stall another.
package meminfo

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/svcdb/svcdb/core/hugeheap"
	"github.com/svcdb/svcdb/core/procmem"
	"github.com/svcdb/svcdb/core/scripting"
)

// Keyspace is the shards' memory figures, summed (shard.Snapshot).
type Keyspace struct {
	Used      int64 // used_memory: what maxmemory compares (shard/keyspace/memory.go)
	Structure int64 // its slots, key indexes and expiry lists
	Index     int64 // the key indexes' tables, both while one rehashes
	OffHeap   int64 // strings of 1 MiB and more, mapped outside the Go heap
	// HeapWaste is the Go heap's fragmentation counted in Used: free slots
	// in its spans and the runtime metadata's growth (shard/heapwaste.go).
	HeapWaste int64
}

// Input is what the section shows that is not read here.
type Input struct {
	Keyspace  Keyspace
	MaxMemory int64
	Policy    string
	Scripts   scripting.Memory
}

// Go is the Go runtime's memory, from runtime/metrics.
type Go struct {
	Total    int64 // everything the runtime has mapped (go_sys)
	Objects  int64 // heap objects, garbage not yet swept included (go_heap_alloc)
	Unused   int64 // in-use heap spans' free slots (size-class fragmentation)
	Free     int64 // free heap pages still mapped (go_heap_free; Go's "idle" less released)
	Released int64 // free heap pages returned to the OS
	Live     int64 // heap objects marked live by the last collection (0 before the first)
	Goal     int64 // heap size the next collection is due at
	Limit    int64 // the soft memory limit (GOMEMLIMIT, or maxmemory's)
	Cycles   int64 // collections completed
}

var goSamples = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
	"/gc/gomemlimit:bytes",
	"/gc/cycles/total:gc-cycles",
}

// ReadGo reads the Go runtime's figures (a few microseconds; no pause).
func ReadGo() Go {
	ms := make([]metrics.Sample, len(goSamples))
	for i, name := range goSamples {
		ms[i].Name = name
	}
	metrics.Read(ms)
	v := func(i int) int64 {
		if ms[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(ms[i].Value.Uint64())
	}
	return Go{Total: v(0), Objects: v(1), Unused: v(2), Free: v(3), Released: v(4),
		Live: v(5), Goal: v(6), Limit: v(7), Cycles: v(8)}
}

// Resident is the part of what the runtime mapped that it has not given
// back: Redis' allocator_resident, jemalloc's resident.
func (g Go) Resident() int64 { return g.Total - g.Released }

// Active is the heap's in-use spans: Redis' allocator_active.
func (g Go) Active() int64 { return g.Objects + g.Unused }

// Write appends the section's fields (without its "# Memory" header).
func Write(b *strings.Builder, in Input) {
	g := ReadGo()
	rss, _ := procmem.Resident() // 0 without /proc
	ks := in.Keyspace
	f := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	// used_memory is the keyspace's figure, maxmemory's: Redis' counts every
	// allocation of the process, svcdb's only what the keys hold (their
	// strings and values, slots, index), so used_memory_startup is 0 and
	// the process' own memory shows in the fragmentation below.
	f("used_memory", ks.Used)
	f("used_memory_human", Human(ks.Used))
	f("used_memory_rss", rss)
	f("used_memory_rss_human", Human(rss))
	overhead := ks.Structure + ks.HeapWaste
	f("used_memory_overhead", overhead)
	f("used_memory_startup", 0)
	f("used_memory_dataset", ks.Used-overhead)
	f("used_memory_dataset_perc", percent(ks.Used-overhead, ks.Used))
	f("allocator_allocated", g.Objects)
	f("allocator_active", g.Active())
	f("allocator_resident", g.Resident())
	if total := systemMemory(); total > 0 {
		f("total_system_memory", total)
		f("total_system_memory_human", Human(total))
	}
	// svcdb's own: the keyspace's parts, the Go heap.
	f("used_memory_index", ks.Index)
	f("used_memory_heap_waste", ks.HeapWaste)
	f("used_memory_heap", g.Objects)
	f("used_memory_offheap", ks.OffHeap)
	f("used_memory_offheap_human", Human(ks.OffHeap))
	// The part of used_memory_rss on transparent huge pages
	// (svc-huge-pages), as core/hugeheap's goroutine read it last:
	// smaps_rollup walks the page tables, too slow for INFO's loop.
	f("used_memory_rss_huge", hugeheap.Published())
	// Scripting, under Redis 7.0.15's names and in its order. The Lua
	// VM's sizes are measured by walking what it holds (gopher-lua keeps
	// no allocator count; core/scripting/memory.go), svcdb's one VM split
	// between eval and functions by what reaches what. The cache and
	// library figures are the bodies' and codes' bytes.
	sm := in.Scripts
	f("used_memory_lua", sm.VMEval)
	f("used_memory_vm_eval", sm.VMEval)
	f("used_memory_lua_human", Human(sm.VMEval))
	f("used_memory_scripts_eval", sm.ScriptsBytes)
	f("number_of_cached_scripts", int64(sm.Scripts))
	f("number_of_functions", int64(sm.Functions))
	f("number_of_libraries", int64(sm.Libraries))
	f("used_memory_vm_functions", sm.VMFunctions)
	f("used_memory_vm_total", sm.VMEval+sm.VMFunctions)
	f("used_memory_vm_total_human", Human(sm.VMEval+sm.VMFunctions))
	f("used_memory_functions", sm.FunctionsBytes)
	f("used_memory_scripts", sm.ScriptsBytes+sm.FunctionsBytes)
	f("used_memory_scripts_human", Human(sm.ScriptsBytes+sm.FunctionsBytes))
	f("maxmemory", in.MaxMemory)
	f("maxmemory_human", Human(in.MaxMemory))
	f("maxmemory_policy", in.Policy)
	// Fragmentation, as Redis splits it: within the heap's spans
	// (allocator_frag), spans to what the runtime holds (allocator_rss),
	// what the runtime holds to the process' RSS (rss_overhead: binary,
	// stacks outside the heap, thread stacks), and RSS to used_memory
	// (mem_fragmentation: all of it, the Go heap's garbage and headroom and
	// everything outside the keyspace included).
	f("allocator_frag_ratio", ratio(g.Active(), g.Objects))
	f("allocator_frag_bytes", g.Active()-g.Objects)
	f("allocator_rss_ratio", ratio(g.Resident(), g.Active()))
	f("allocator_rss_bytes", g.Resident()-g.Active())
	f("rss_overhead_ratio", ratio(rss, g.Resident()))
	f("rss_overhead_bytes", rss-g.Resident())
	f("mem_fragmentation_ratio", ratio(rss, ks.Used))
	f("mem_fragmentation_bytes", rss-ks.Used)
	f("mem_not_counted_for_evict", 0)
	f("mem_allocator", "go")
	// The Go runtime's own figures (runtime/metrics).
	f("go_sys", g.Total)
	f("go_sys_human", Human(g.Total))
	f("go_heap_alloc", g.Objects)
	f("go_heap_inuse", g.Active())
	f("go_heap_live", g.Live)
	f("go_heap_free", g.Free)
	f("go_heap_released", g.Released)
	f("go_gc_heap_goal", g.Goal)
	f("go_gc_cycles", g.Cycles)
	f("go_memory_limit", g.Limit)
}

// ratio is a/b with Redis' two decimals; 0 when b is 0 (an empty keyspace
// has no fragmentation ratio).
func ratio(a, b int64) string {
	if b <= 0 {
		return "0.00"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
}

func percent(a, b int64) string {
	if b <= 0 {
		return "0.00%"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 2, 64) + "%"
}

// Human is Redis' bytesToHuman: B, then K, M, G, T with two decimals.
func Human(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "K", "M", "G", "T"} {
		if f < 1024 || u == "T" {
			if u == "B" {
				return fmt.Sprintf("%dB", n)
			}
			return fmt.Sprintf("%.2f%s", f, u)
		}
		f /= 1024
	}
	return ""
}

// systemMemory is MemTotal from /proc/meminfo (Redis' total_system_memory),
// 0 when unreadable.
func systemMemory() int64 {
	fh, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			if fs := strings.Fields(rest); len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
