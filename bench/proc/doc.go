// Package proc starts, pins, watches and stops the server and client
// processes that the benchmarks run, and reads their CPU time from /proc.
//
// It owns:
//   - starting a process in its own process group, optionally pinned to a CPU
//     list with taskset(1), with its output kept in a bounded tail buffer;
//   - stopping it, always by process group (SIGTERM, then SIGKILL), so that
//     nothing a benchmark starts outlives it, also on error or Ctrl-C; a
//     Group stops everything it started in one call, and every child also
//     gets PR_SET_PDEATHSIG so it dies with svcbench even after a SIGKILL;
//   - waiting until a Redis-protocol server answers PING;
//   - CPU accounting of a running process (schedstat, falling back to
//     /proc/<pid>/stat ticks), of whole CPUs (/proc/stat, to see what other
//     processes took during a run) and CPU affinity of the calling process.
//
// It must never be imported by the server (nothing under bench/ may be), and
// it never kills anything it did not start itself: no lookups by name.
//
// Linux only in practice: on other systems CPU accounting and pinning
// return errors and the harness reports them.
package proc
