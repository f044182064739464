package cmdstats

import _ "unsafe" // go:linkname

// Now is the runtime's monotonic clock in nanoseconds: one vDSO read, where
// time.Now reads both the wall and the monotonic clock (about 24 ns against
// 37 ns a read on the 2-vCPU test machine). Only differences mean anything.
//
//go:linkname Now runtime.nanotime
func Now() int64
