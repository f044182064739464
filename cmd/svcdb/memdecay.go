package main

import (
	"log/slog"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/memdecay"
	"github.com/svcdb/svcdb/shard"
)

// startMemDecay runs core/memdecay, the return of the Go heap's freed
// memory after a burst of writes, on its own goroutine, switched by
// jemalloc-bg-thread (Redis' switch of jemalloc's background purging
// thread; docs/performance.md, "Hashes under 0.8"). Each release is
// logged at debug level. A release waits while a shard's key index
// rehashes (its old table is garbage at the end). The returned func stops
// it.
func startMemDecay(reg *config.Registry, rt *shard.Runtime, logger *slog.Logger) (stop func()) {
	cfg := memdecay.Default()
	cfg.Busy = rt.Rehashing // an old index table is garbage once drained: return it too
	cfg.OnRelease = func(r memdecay.Release) {
		logger.Debug("freed heap memory returned to the OS",
			"duration", r.Duration, "burst_bytes", r.Burst, "heap_before", r.HeapBefore,
			"heap_after", r.HeapAfter, "returned_bytes", r.Returned)
	}
	d := memdecay.New(cfg)
	apply := func(string) error { d.SetEnabled(reg.Bool("jemalloc-bg-thread")); return nil }
	_ = apply("")
	reg.OnChange("jemalloc-bg-thread", apply)
	done := make(chan struct{})
	go d.Run(done)
	return func() { close(done) }
}
