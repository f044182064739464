package main

import (
	"os"
	"runtime"
)

// spareP gives a process that may run on one CPU only (taskset, a cpuset)
// a second P, unless the environment sets GOMAXPROCS: the Go runtime
// defaults GOMAXPROCS to the CPUs in the affinity mask, so pinned to one
// CPU it would run with one P. The runtime already rounds a cgroup CPU
// quota below 2 up to 2 Ps (defaultGOMAXPROCS, Go 1.25+), for the same
// reason this does it for the affinity case; it returns the GOMAXPROCS
// now in effect. What a spare P changes on one CPU (docs/performance.md,
// "The pinned pipeline-16 tail on the Xeon"):
//   - the collector's mark work: with one P its only background worker is
//     a fractional one (25% of the P), which takes the loop's P whenever it
//     is below its share and keeps it until it is 20% over, pieces of about
//     7% of the mark phase so far (2-6 ms at a 20-30 MB heap, 8-16 ms at
//     170 MB) while the loop waits, ready, in the run queue; with a spare P
//     the idle P marks too, on a thread the kernel time-slices with the
//     loop's, and a mark phase ends about three times sooner;
//   - sysmon neither preempts the busy loop every 10 ms nor retakes its P
//     while it waits in epoll_wait, since a P is idle;
//   - the loop count stays one (netloop.DefaultEventLoops(2)) and that loop
//     takes gnet's no-yield path (third_party/gnet, the second patch).
//
// Call it before anything sizes itself from GOMAXPROCS.
func spareP() int {
	if os.Getenv("GOMAXPROCS") == "" && runtime.NumCPU() == 1 && runtime.GOMAXPROCS(0) == 1 {
		runtime.GOMAXPROCS(2)
	}
	return runtime.GOMAXPROCS(0)
}
