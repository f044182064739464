// Package latency is svcdb's latency monitor: Redis' src/latency.c (7.0),
// behind LATENCY LATEST|HISTORY|RESET|DOCTOR|GRAPH and the latency events of
// /debug/api/latency.
//
// An event is any name ("command", "fast-command", "expire-cycle",
// "eviction-cycle", "aof-fsync-always", ...). Each has a time series of
// HistoryLen samples, at most one per second (a second that already has a
// sample keeps the larger latency), plus the all-time maximum. Latencies
// are whole milliseconds, as Redis records them.
//
// # Cost on the data path
//
// Nothing is recorded unless a measured duration reaches
// latency-monitor-threshold, so recording is rare: a mutex inside is fine.
// The check before it is not: AddIfNeeded and Enabled are one atomic load
// (and a compare) when the monitor is off or the duration is below the
// threshold, and never allocate.
//
// # Where it differs from Redis
//
//   - Redis lists events in its dict's order; LATEST and DOCTOR list them
//     sorted by name, so the output is stable.
//   - DOCTOR's advice depends on settings Redis reads from its globals
//     (slowlog-log-slower-than, hz, appendfsync, fork rate); here they come
//     from the function given to SetEnv. svcdb never forks, so the fork
//     advice only appears if something records a "fork" event.
package latency
