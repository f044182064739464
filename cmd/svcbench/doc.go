// Command svcbench benchmarks svcdb against redis-server.
//
//	svcbench compare [flags]   start svcdb and redis-server, run redis-benchmark's
//	                           default suite and the load generator against both,
//	                           interleaved, print medians and svcdb/redis ratios,
//	                           and exit 3 if a case failed or is below the bar
//	                           (--min-ratio, 0.9)
//	svcbench diag [flags]      start svcdb twice, without and with its HTTP
//	                           diagnostics server (scraped every second by
//	                           svcbench), run redis-benchmark against both,
//	                           interleaved, and print medians, on/off ratios
//	                           and the cost of diagnostics in percent
//	svcbench load [flags]      memtier-like load against one server
//	svcbench memory [flags]    start svcdb and redis-server, load N keys of a
//	                           shape (string, hash, set, zset, list) into each,
//	                           and print bytes per key (RSS, used_memory)
//	svcbench repl [flags]      start svcdb and redis-server masters with 0, 1
//	                           and 2 replicas of their kind, print each
//	                           master's throughput and p99, and time full
//	                           syncs of 1M keys (svcdb and redis-server
//	                           replicas of either master)
//	svcbench tail [flags]      start svcdb and redis-server, load 10M keys
//	                           into each, run memtier's 1:10 workload at
//	                           pipeline 1 and 16 and print ops/s, p50, p99,
//	                           p99.9, svcdb's GC over the runs, and p99 and
//	                           p99.9 before and during a BGSAVE
//
// It owns the command line only: it parses flags into harness.Config and
// loadgen.Config values and wires bench/harness and bench/loadgen together.
// Logic that a test could exercise belongs in those packages, not here.
// Like everything under bench/, it must never be imported by the server.
//
// Run "svcbench <command> -h" for the flags.
package main
