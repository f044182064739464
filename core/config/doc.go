// Package config is svcdb's parameter registry: the one place that knows every
// configuration parameter.
//
// # What it owns
//
// For each parameter (one entry in the table in params.go): its CONFIG GET/SET
// name and Redis alias names, its TOML table and key, its environment variable
// (SVC_<TABLE>_<KEY>), its kind (bool, int, float, size, duration, string,
// enum, ip, url, save), default, unit, range or allowed values, whether it may
// change at runtime (CONFIG SET), whether it is a secret, and a one-line
// description. From that table it derives everything else:
//
//   - loading: a TOML file (LoadFile, strict: unknown tables and keys, wrong
//     types and out-of-range values are errors naming file, line, column,
//     table, key and the allowed values), the environment (LoadEnv) and
//     command-line flags (Flags, ApplyFlag); LoadStartup does all three in
//     order and adds Validate, for cmd/svcdb and --check-config;
//   - precedence: default < file < env < flag, then runtime (CONFIG SET);
//     every value remembers its Source;
//   - CONFIG GET (Get: Redis glob patterns, secrets redacted), CONFIG SET
//     (SetMany: all-or-nothing, Redis 7.0's error texts), CONFIG REWRITE
//     (Rewrite: values written back in place, comments kept);
//   - rendering: GenerateTOML (--generate-config, profiles/default.toml) and
//     Markdown (docs/configuration.md);
//   - cross-field rules (Validate), e.g. log rotation needs a log file.
//
// How a change is applied is not decided here: the wiring registers an
// OnChange hook per mutable parameter (loglevel → slog.LevelVar, maxclients →
// netloop, ...). A hook runs before CONFIG SET replies; when one fails, every
// change of that CONFIG SET is rolled back, hooks included.
//
// # What it must never do
//
//   - Import other svcdb packages (only core/glob): it sits at the bottom of
//     the dependency graph and everyone may import it.
//   - Show a secret (requirepass, http-token): Get, Entries, GenerateTOML,
//     Markdown and every error message print "(redacted)" or nothing instead.
//     Only Value and String return the real text, for the wiring.
//   - Be on the per-command hot path. Every accessor takes a lock and parses
//     text; readers cache typed values at start-up and subscribe to changes
//     with OnChange (typically storing into an atomic).
//
// # Concurrency
//
// A Registry is safe for concurrent use. Reads take a read lock; setters are
// serialised by a second mutex so that hooks run in CONFIG SET order, and
// hooks run without the read/write lock held (a hook may call the getters).
package config
