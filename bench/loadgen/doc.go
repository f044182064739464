// Package loadgen is a memtier_benchmark-like load generator for
// Redis-protocol servers (memtier is not packaged for Debian; this carries
// its workloads: SET:GET ratio, R/S/G/P key patterns, key range and prefix,
// data size, pipelining, clients × threads, request- or time-bound runs).
//
// It owns:
//   - the workload model (Config, DefaultConfig = memtier's defaults);
//   - one raw TCP connection per client, writing RESP multibulk requests
//     built by appending into reused buffers from pre-built pieces, and
//     reading replies with a zero-allocation reply scanner: nothing is
//     allocated per request in steady state (BenchmarkRequestBuild,
//     TestSteadyStateAllocs);
//   - measurement: per-type ops, hits/misses, error replies (counted, the
//     first few kept), bytes, and a log-linear latency histogram (Histogram)
//     merged from one per connection so the hot path shares nothing.
//
// Pipelining keeps up to Pipeline requests in flight per connection and tops
// the window up after every read, as memtier does (redis-benchmark instead
// waits for the whole batch). Threads only multiplies connections: the Go
// scheduler spreads the Threads × Clients goroutines over GOMAXPROCS threads,
// which svcbench sets to Threads while a load runs, as memtier runs -t
// threads (harness.clientThreads).
//
// It must never: be imported by the server (nothing under bench/ may be),
// define command-line flags or package-level knobs (cmd/svcbench owns the
// flags and fills a Config), or print anything except through the io.Writer
// it is handed.
package loadgen
