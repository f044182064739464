// Package profiles holds svcdb's configuration presets as TOML files, embedded
// so that cmd/svcdb can offer them without files on disk:
//
//   - default.toml: every parameter at its default, with a comment per key;
//     byte for byte what `svcdb --generate-config` prints (a test in
//     core/config keeps it so).
//   - dev.toml: local development (debug logs, HTTP diagnostics on, a
//     sensitive slowlog, few shards).
//   - production.toml: a server on the network (memory limit and eviction,
//     JSON logs to a rotated file, tracing sampled at 5%, diagnostics on
//     loopback; secrets come from SVC_* variables).
//   - benchmark.toml: nothing that costs per command (slowlog, hot-shard
//     counters, spans, HTTP and tracing off; warnings only).
//
// The presets are plain configuration files: load one with
// config.Registry.LoadTOML(name, data), then the user's --config file, the
// environment and the flags, which override it. The parameters themselves
// (meaning, unit, default, allowed values) are documented by the registry in
// core/config and in docs/configuration.md; this package only carries data
// and imports nothing of ours.
package profiles

import "embed"

// FS holds every preset, named <profile>.toml.
//
//go:embed *.toml
var FS embed.FS

// Default is default.toml: the full default configuration.
//
//go:embed default.toml
var Default []byte
