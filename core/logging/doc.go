// Package logging sets up svcdb's log/slog logger: level, format, outputs,
// file rotation, the in-memory ring of recent lines, and secret redaction.
//
// # What it owns
//
//   - The level, held in a slog.LevelVar so CONFIG SET loglevel takes effect
//     for the next record, on every goroutine, without a lock. Levels are
//     trace (LevelTrace, -8), debug, info, warn and error; Redis' names
//     verbose, notice and warning are accepted as debug, info and warn.
//   - The format: pretty (lmittmann/tint; colour only when the console is a
//     terminal) or json (slog.JSONHandler). TRACE is written "TRACE" in both.
//   - The outputs: the console (stdout, stderr or none), an optional file
//     rotated by DeRuina/timberjack, and a ring of the last RingLines
//     formatted lines that diagnostic bundles read with Recent. The ring
//     records even with output none.
//   - Secret redaction: every current secret value (Options.Secrets) is
//     replaced by "(redacted)" before any sink or the ring sees the record.
//
// # Pipeline
//
//	slog.Logger
//	   │
//	redactHandler      message and attribute values (strings, errors, structs,
//	   │               []byte, groups, LogValuers) with secrets replaced
//	   │
//	   ├─ plain handler (json, or pretty without colour) ──► fanout ──► file, ring[, console]
//	   └─ colour handler (pretty on a terminal only)     ──► fanout ──► console
//
// Each fanout also replaces the secrets' raw, JSON-escaped and Go-quoted
// forms in the formatted bytes, a backstop for what the record-level pass
// cannot see: attributes bound with Logger.With before a secret was set,
// attribute keys and group names. Replacement is literal and case-sensitive,
// so a secret that is also a common word redacts that word everywhere:
// safety over readability.
//
// # Rotation
//
// With FilePath set, lines go to a timberjack.Logger (MaxSize = MaxSizeMB,
// MaxBackups = MaxFiles, LocalTime) in addition to the console. Size rotation
// and pruning are timberjack's. Time rotation (daily at local midnight,
// hourly at :00) is decided here, on the first write at or after the
// boundary, and carried out with timberjack's RotateWithReason("time"). Why
// not timberjack's RotateAt/RotateAtMinutes:
//
//   - its clock is an unexported package variable (currentTime), so a test
//     cannot move it; Options.Now can;
//   - its scheduler goroutine rotates at every mark even when nothing was
//     written, and MaxBackups counts rotations, so an idle server with
//     frequency hourly and max-files 7 would replace its last useful logs
//     with seven empty files in seven hours. Rotating on the first write after
//     the boundary (as logback's TimeBasedRollingPolicy does) keeps them.
//
// A file left by a previous run whose modification time lies before the
// current period is rotated on the first write. MaxSizeMB 0 means no size
// limit (timberjack would read 0 as 100 MB, so a huge MaxSize is passed).
// MaxFiles 0 keeps every backup (timberjack's meaning).
//
// # Concurrency and cost
//
// Logger and its *slog.Logger are safe for concurrent use. A record is
// formatted once per handler (once, unless the console gets colour) and
// written synchronously to each of that handler's sinks in turn, under the
// handler's mutex (slog's and tint's, shared by With clones), so records
// never interleave. The caller therefore waits for its own writes and, at
// worst, for another goroutine's record in progress; there is no queue, no
// background goroutine of ours, and no other lock. A record below the level
// costs one atomic load (BenchmarkInfo/filtered: ~12 ns, 0 allocations); an
// enabled record about 2 µs and 2 allocations (the ring's line is one).
// Options.Secrets is called for every record and must be cheap and
// goroutine-safe (an atomic load, not a lock held elsewhere). Logging is not
// meant for the per-command path: hot code does not log, or checks Enabled.
//
// # What it must never do
//
// Import other svcdb packages (it takes plain option structs; the parameter
// registry lives in core/config), write a secret to any sink, or set
// process-wide state (slog.SetDefault, otel.SetErrorHandler): cmd/svcdb does
// that with the adapters provided here (GnetAdapter, OTelErrorHandler).
package logging
