// Package tracing sets up OpenTelemetry tracing for svcdb and provides the
// per-command span helper.
//
// # What it owns
//
//   - The tracer provider: an OTLP/HTTP exporter (protobuf) to
//     Options.Endpoint + "/v1/traces", a batch span processor (the SDK's
//     defaults: queue 2048, batches of 512 every 5 s; a full queue drops
//     spans rather than block a command), the sampler
//     ParentBased(TraceIDRatioBased(rate)) with the rate changeable at run time,
//     and the resource service.name / service.version (plus telemetry.sdk.*
//     and OTEL_RESOURCE_ATTRIBUTES).
//   - The per-request switch (per-request-spans) and StartCommand/EndCommand,
//     which make one span per command: name "svc.<command>" in lower case,
//     kind server, attributes db.system.name=redis, db.operation.name (the
//     command in upper case, subcommands as "CLIENT SETNAME", as Redis'
//     documentation and the OTel Redis examples write them), db.namespace
//     (the database index), svc.shard.id, client.address and client.port,
//     and on error the status Error, db.response.status_code and error.type
//     (the Redis error prefix: ERR, WRONGTYPE...).
//
// # Cost
//
// With per-request spans off, the command path pays one atomic load:
//
//	if tr.PerRequest() { ctx, span = tr.StartCommand(...) }
//
// BenchmarkPerRequestOff holds that to 0 allocations and about a
// nanosecond. With it on, the span's name and attributes are built only for
// sampled spans (IsRecording); unsampled spans cost the sampler's decision
// and a non-recording span (BenchmarkStartCommand shows both).
//
// # Concurrency
//
// Every method is safe for concurrent use, and every method is safe on a nil
// *Tracer, which behaves as a disabled one: code that was given no tracer
// needs no branch. A disabled Tracer (Options.Enabled false) makes no
// connection and no spans, and PerRequest stays false even after
// SetPerRequestSpans(true): spans would have nowhere to go.
//
// # What it must never do
//
// Cost more than one atomic load per command when per-request spans are off,
// block a command on the exporter, import other svcdb packages, or set
// process-wide OpenTelemetry state (otel.SetTracerProvider,
// otel.SetErrorHandler): cmd/svcdb decides that.
package tracing
