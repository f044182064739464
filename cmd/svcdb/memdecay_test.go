package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemDecayAfterALoad: after a burst of writes the server returns the
// heap's freed memory to the OS by itself (core/memdecay: a collection
// forced by the application, gc_forced_cycles, and go_heap_released
// grown), and with jemalloc-bg-thread no it does not.
func TestMemDecayAfterALoad(t *testing.T) {
	bin := buildBinary(t)
	_, addr, _ := startProcess(t, bin)
	c := client(t, addr)
	ctx := context.Background()
	info := func() map[string]int64 {
		m := map[string]int64{}
		for _, l := range strings.Split(c.Info(ctx, "memory", "svc").Val(), "\r\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					m[k] = n
				}
			}
		}
		return m
	}
	if got := c.ConfigGet(ctx, "jemalloc-bg-thread").Val(); got["jemalloc-bg-thread"] != "yes" {
		t.Fatalf("CONFIG GET jemalloc-bg-thread = %v, want yes", got)
	}
	// load writes n keys of 100 bytes in pipelines: about 30 MB of heap
	// with the index growing, well over memdecay's burst of 8 MiB.
	const n = 200_000
	load := func(prefix string) {
		val := strings.Repeat("v", 100)
		for i := 0; i < n; i += 1000 {
			p := c.Pipeline()
			for j := i; j < i+1000; j++ {
				p.Set(ctx, prefix+strconv.Itoa(j), val, 0)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Off: no release (no forced collection) within 3 s of the load.
	if err := c.ConfigSet(ctx, "jemalloc-bg-thread", "no").Err(); err != nil {
		t.Fatal(err)
	}
	start := info()
	load("off:")
	time.Sleep(3 * time.Second)
	if m := info(); m["gc_forced_cycles"] != start["gc_forced_cycles"] {
		t.Fatalf("jemalloc-bg-thread no: gc_forced_cycles %d -> %d after the load", start["gc_forced_cycles"], m["gc_forced_cycles"])
	}

	// On: the next burst is released once it is over.
	if err := c.ConfigSet(ctx, "jemalloc-bg-thread", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	before := info()
	load("on:")
	deadline := time.Now().Add(60 * time.Second)
	for {
		m := info()
		if m["gc_forced_cycles"] > before["gc_forced_cycles"] && m["go_heap_released"] > before["go_heap_released"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no release 60 s after the load: gc_forced_cycles %d -> %d, go_heap_released %d -> %d",
				before["gc_forced_cycles"], m["gc_forced_cycles"], before["go_heap_released"], m["go_heap_released"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}
