package netloop_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/redistest"
)

// redisMemoryFieldsNotShown are redis-server 7.0.15's INFO memory fields
// svcdb leaves out, each because it has no such figure (docs/observability.md,
// "INFO memory"): a peak it does not track, replication and AOF buffers,
// client memory kept only while client eviction is on, and jemalloc's
// defragmentation and lazy freeing.
var redisMemoryFieldsNotShown = map[string]bool{
	"used_memory_peak": true, "used_memory_peak_human": true, "used_memory_peak_perc": true,
	"mem_replication_backlog": true, "mem_total_replication_buffers": true,
	"mem_clients_slaves": true, "mem_clients_normal": true, "mem_cluster_links": true,
	"mem_aof_buffer": true, "active_defrag_running": true,
	"lazyfree_pending_objects": true, "lazyfreed_objects": true,
}

func infoFieldNames(t *testing.T, r *rawConn) []string {
	t.Helper()
	var names []string
	for _, l := range strings.Split(text(t, r.do("INFO", "memory")), "\r\n") {
		if k, _, ok := strings.Cut(l, ":"); ok {
			names = append(names, k)
		}
	}
	return names
}

// TestInfoMemoryFieldsAsRedis: every INFO memory field of a real
// redis-server 7.0.15 is in svcdb's, in Redis' order, but the few svcdb has
// no figure for; and svcdb's own fields add up: dataset + overhead =
// used_memory, the index is part of the overhead, fragmentation is RSS less
// used_memory.
func TestInfoMemoryFieldsAsRedis(t *testing.T) {
	redisNames := infoFieldNames(t, dialRaw(t, redistest.Start(t)))
	ts := startServer(t, withShards(4))
	r := dialRaw(t, ts.Addr)
	ours := infoFieldNames(t, r)
	at := map[string]int{}
	for i, k := range ours {
		if _, dup := at[k]; dup {
			t.Errorf("INFO memory shows %s twice", k)
		}
		at[k] = i
	}
	last, lastName := -1, ""
	for _, k := range redisNames {
		i, ok := at[k]
		switch {
		case !ok && !redisMemoryFieldsNotShown[k]:
			t.Errorf("redis-server's INFO memory field %s is missing", k)
		case ok && redisMemoryFieldsNotShown[k]:
			t.Errorf("%s is shown; take it off redisMemoryFieldsNotShown", k)
		case ok && i < last:
			t.Errorf("%s comes before %s; redis-server has it after", k, lastName)
		case ok:
			last, lastName = i, k
		}
	}

	for i := range 20000 {
		r.do("SET", "key:"+strconv.Itoa(i), strings.Repeat("v", 32), "EX", "1000")
	}
	f := r.info("memory")
	used, overhead, dataset := infoInt(t, f, "used_memory"), infoInt(t, f, "used_memory_overhead"), infoInt(t, f, "used_memory_dataset")
	if dataset+overhead != used || dataset < 20000*(9+32) {
		t.Errorf("used_memory %d; dataset %d + overhead %d", used, dataset, overhead)
	}
	// 20,000 keys over 4 shards: 5,000 a table, 8,192 buckets of 4 bytes
	// (the width while every slot position fits in 24 bits; keyindex).
	if idx := infoInt(t, f, "used_memory_index"); idx < 4*8192*4 || idx > overhead {
		t.Errorf("used_memory_index %d (overhead %d)", idx, overhead)
	}
	// The slots alone: 20,000 of at least 40 bytes.
	if overhead < infoInt(t, f, "used_memory_index")+20000*40 {
		t.Errorf("used_memory_overhead %d leaves under 40 B a slot", overhead)
	}
	rss := infoInt(t, f, "used_memory_rss")
	if got := infoInt(t, f, "mem_fragmentation_bytes"); got != rss-used {
		t.Errorf("mem_fragmentation_bytes %d; rss %d - used %d", got, rss, used)
	}
	if got, want := f["mem_fragmentation_ratio"], fmt.Sprintf("%.2f", float64(rss)/float64(used)); got != want {
		t.Errorf("mem_fragmentation_ratio %s; want %s", got, want)
	}
	if a, act := infoInt(t, f, "allocator_allocated"), infoInt(t, f, "allocator_active"); a <= 0 || act < a || infoInt(t, f, "allocator_resident") < act {
		t.Errorf("allocator_allocated %d, active %d, resident %s", a, act, f["allocator_resident"])
	}
	if infoInt(t, f, "go_heap_live") <= 0 || infoInt(t, f, "go_gc_cycles") <= 0 {
		t.Errorf("go_heap_live %s, go_gc_cycles %s", f["go_heap_live"], f["go_gc_cycles"])
	}
}
