// Package harness runs svcdb and redis-server side by side and reports how
// they compare: throughput, p50/p99 latency and server CPU time per request.
//
// It owns the comparison procedure:
//   - start both servers on free 127.0.0.1 ports, in temporary directories,
//     pinned to the server CPU (taskset) when the machine has two or more
//     usable CPUs, with the clients pinned to another CPU;
//   - run redis-benchmark's default suite (DefaultSuite: the 20 tests of a
//     plain redis-benchmark run, PING_INLINE to MSET) at each pipeline
//     depth, as four redis-benchmark invocations per round and server
//     (single-key commands, the LPUSH that LRANGE needs, LRANGE, MSET: one
//     -n would give PING milliseconds where LRANGE_600 gets a second), each
//     test a case read from its CSV row (the LPUSH that redis-benchmark
//     runs before LRANGE, from a -t lpush run of its own); and, one test
//     per invocation, any -t tests, the EVALSHA cases (Scripts, SCRIPT LOAD
//     first) and the command cases (Commands: bitmaps, HyperLogLog, geo,
//     with their setup sent first);
//   - for each of those and each workload of our own load generator
//     (bench/loadgen), run every round against svcdb and then
//     redis-server, alternating, so drift (thermal, noisy neighbours) hits
//     both alike;
//   - in a comparison's load generator workloads, draw keys from the key
//     space redis-benchmark gets (LoadKeyRange: -r N is keys 1..N, no -r
//     is one key) unless a workload names its own range;
//   - size redis-benchmark's -n per case (per suite group) from an
//     unrecorded calibration run on each server (which also warms both up),
//     so every run (every suite test) lasts about TargetTime
//     (SuiteTestTime) whatever the command's cost or the machine's speed;
//   - read each server's CPU time from /proc before and after each run
//     (bench/proc) and divide by the requests completed; in a suite run,
//     read it as each CSV row arrives (redis-benchmark line-buffered by
//     stdbuf) to split it between the tests;
//   - fail a case, not the comparison, when a server answers with an error
//     (redis-benchmark 7 exits at the first one, naming it: the failed test
//     is the first without a CSV row, and the group runs again without it),
//     breaks the connection or stops answering; and check the servers' own
//     error counts (INFO total_error_replies, commandstats failed_calls) so
//     that a test cannot pass by receiving errors fast;
//   - report medians per server, svcdb/redis ratios and the bar (MinRatio,
//     0.9: every redis-benchmark case's ops/s ratio at least that, and no
//     failure; Report.Problems) as a text table, Markdown (for
//     docs/performance.md) or JSON, with a description of the machine and
//     the exact commands.
//
// RunMemory is the memory comparison: for each MemoryShape (string, small
// hash, set, sorted set, list), fresh svcdb and redis-server processes,
// N keys loaded over pipelined connections, and the growth per key of each
// server's RSS (/proc/<pid>/status VmRSS) and INFO memory used_memory, and
// of svcdb's Go heap (used_memory_heap).
//
// RunDiag is the second comparison, svcdb against itself: the same binary
// started twice, without its HTTP diagnostics server and with it
// (--http-port 0 and a bearer token), measured with the same redis-benchmark
// cases, interleaved (off, on, then on, off: ABBA), while a plain net/http
// client in this process, pinned to the client CPU, scrapes the
// diagnostics-on server every second (/metrics, and /status/json and
// /debug/api/metrics when they answer 200; a 404 skips an endpoint and the
// report says so). Its report gives on/off ratios of ops/s and of CPU per
// request, the cost in percent against a bar (3%), and the server CPU one
// scrape takes, measured on the idle server after the runs. A 3% effect
// drowns in a neighbour's compile on a shared machine, so it reads
// /proc/stat around each run: a run during which other processes took more
// than a tenth of a CPU on the benchmark's CPUs is repeated (a bounded
// number of times) and left out of the medians when both sides have quiet
// runs.
//
// RunRepl is the replication comparison (svcbench repl): for each replica
// count (0, 1, 2), a svcdb master with that many svcdb replicas and a
// redis-server master with as many redis-server replicas, every one on the
// server CPUs, measured with load generator workloads interleaved as Run
// does (the replicas must be online and at the master's offset before and
// after the runs; their CPU per request is reported beside the master's);
// then the time of a full sync of 1M keys into a fresh replica, svcdb ->
// svcdb, redis -> redis and both crossings, the replica's DBSIZE checked.
//
// RunTail is the tail-latency comparison with a large dataset (svcbench
// tail, issue 20 part 4): 10M keys loaded into svcdb and redis-server, then
// memtier's 1:10 workload at pipeline 1 and 16 (p50, p99, p99.9 and
// svcdb's GC over the runs from INFO svc's gc_* fields), then the workload in 1 s windows
// before and during a BGSAVE on each server, and around a forced full
// collection (MEMORY PURGE) on svcdb.
//
// The harness does not care which binary plays "svcdb": any server that takes
// "--port N --bind 127.0.0.1" and speaks RESP will do (its tests use a
// second redis-server).
//
// It must never: be imported by the server (nothing under bench/ may be),
// define flags (cmd/svcbench does), or leave a process running: every
// process it starts belongs to a proc.Group stopped before Run returns,
// including on error and cancellation.
package harness
