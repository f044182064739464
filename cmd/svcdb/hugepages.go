package main

import (
	"log/slog"
	"time"

	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/hugeheap"
)

// startHugePages runs core/hugeheap on its own goroutine: with
// svc-huge-pages yes it advises the Go heap's mappings for transparent
// huge pages once a second (and collapses what is already resident), and
// either way it reads the process' huge-page bytes for INFO memory
// (used_memory_rss_huge): every second when on, every 10 s when off. It
// starts before the keyspace exists so that a load's heap is advised as it
// grows. The returned func stops it.
func startHugePages(reg *config.Registry, logger *slog.Logger) (stop func()) {
	var a *hugeheap.Advisor
	tick := 10 * time.Second
	if reg.Bool("svc-huge-pages") {
		a = &hugeheap.Advisor{Collapse: true}
		tick = time.Second
	}
	done := make(chan struct{})
	go hugeheap.Run(done, tick, a, func(err error) {
		logger.Warn("huge pages for the heap", "error", err)
	})
	return func() { close(done) }
}
