package cmdstats

import "time"

// epoch is the origin of Now. time.Since on a time.Now reading reads only the
// monotonic clock: one vDSO call (25 ns on the 2-vCPU test machine, against
// 37 ns for time.Now, which reads the wall clock as well).
var epoch = time.Now()

// Now is the monotonic clock in nanoseconds since the process started. Only
// differences mean anything.
func Now() int64 { return int64(time.Since(epoch)) }

// At puts t, a time.Now reading the caller took anyway, on Now's scale
// without reading the clock again.
func At(t time.Time) int64 { return int64(t.Sub(epoch)) }
