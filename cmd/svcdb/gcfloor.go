package main

import (
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/gcfloor"
)

// startGCFloor runs core/gcfloor, the floor under the collector's heap
// goal (svc-gc-heap-floor, off by default; applied now and on every CONFIG SET), over the
// GOGC percent the process started with (the environment's, or 100). The
// returned func stops it and restores that percent.
func startGCFloor(reg *config.Registry) (stop func()) {
	t := gcfloor.New()
	apply := func(string) error { t.SetFloor(reg.Size("svc-gc-heap-floor")); return nil }
	_ = apply("")
	reg.OnChange("svc-gc-heap-floor", apply)
	t.Start()
	return t.Stop
}
