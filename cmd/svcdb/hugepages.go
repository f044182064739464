package main

import (
	"log/slog"
	"time"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/hugeheap"
)

// startHugePages runs core/hugeheap on its own goroutine: with
// svc-huge-pages yes it collapses the Go heap's fully resident 2 MiB
// blocks into transparent huge pages once a second while it is not busy
// (every block read again once a minute), and either way it reads the process' huge-page
// bytes for INFO memory (used_memory_rss_huge): every second when on,
// every 10 s when off. It starts before the keyspace exists so that a
// load's heap is collapsed as it grows. The returned func stops it.
func startHugePages(reg *config.Registry, logger *slog.Logger) (stop func()) {
	var c *hugeheap.Collapser
	tick := 10 * time.Second
	if reg.Bool("svc-huge-pages") {
		// Collapses wait for a second in which the process used under a
		// quarter of a CPU: each one holds the CPU it runs on for about
		// 7 ms of kernel copying, a stall of the event loop on a busy
		// server (core/hugeheap's package doc).
		c = &hugeheap.Collapser{RescanEvery: 60, MaxBusy: 0.25}
		tick = time.Second
	}
	done := make(chan struct{})
	go hugeheap.Run(done, tick, c, func(err error) {
		logger.Warn("huge pages for the heap", "error", err)
	})
	return func() { close(done) }
}
