package cmdstats

import (
	"time"
	_ "unsafe" // go:linkname
)

// epoch is the origin of Now, and epochMono the same instant on the
// runtime's monotonic clock.
var (
	epoch     = time.Now()
	epochMono = nanotime()
)

// nanotime is the runtime's monotonic clock, the one time.Since reads (one
// vDSO call: 25 ns on the 2-vCPU test machine, against 37 ns for time.Now,
// which reads the wall clock as well). The runtime keeps this name for
// linkname (go.dev/issue/67401). Calling it directly rather than through
// time.Since keeps Now a direct call on every command's path: time.Since was
// a function of its own there, three more cache lines of code and about 20
// more instructions per command (docs/performance.md, "Instruction-cache
// misses on the hot path").
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now is the monotonic clock in nanoseconds since the process started. Only
// differences mean anything.
func Now() int64 { return nanotime() - epochMono }

// At puts t, a time.Now reading the caller took anyway, on Now's scale
// without reading the clock again.
func At(t time.Time) int64 { return int64(t.Sub(epoch)) }
