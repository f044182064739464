// Package cmdstats owns the per-command statistics behind INFO commandstats,
// latencystats and errorstats, LATENCY HISTOGRAM, the command latency
// histogram in /metrics and the latency API: calls, time, rejected and failed
// calls, a latency histogram per command, and error replies by code.
//
// A Recorder has exactly one writer (an event loop, or whoever records for
// it on that loop); it publishes every counter with an atomic store, so any
// goroutine may read while it writes. A Set sums its recorders at read time.
// Recording must never take a lock, allocate in steady state, or wait for a
// reader; reading must never stop a writer.
package cmdstats
