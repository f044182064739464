// Package diaghttp owns the HTTP diagnostics server: health probes, the
// Prometheus exposition and the Bearer-protected /debug/api/* surface.
//
// It never touches keyspace data and never takes a lock the data path could
// wait on: everything it shows comes from the snapshots its Source hands out
// (netloop.Stats, shard.Snapshot, the lifecycle state), which are built from
// atomics, or from a control message with a deadline (the status document).
// Its own locks (one scrape at a time, the rate sampler's ring) are held only
// by HTTP goroutines and the once-per-second rate sampler, never by an event
// loop or a shard.
package diaghttp
