package logging

import (
	"context"
	"fmt"
	"log/slog"
)

// GnetAdapter routes gnet's log lines (gnet.WithLogger takes a
// logging.Logger with Debugf, Infof, Warnf, Errorf and Fatalf) into slog,
// tagged component=gnet. It satisfies that interface structurally, so this
// package does not import gnet.
type GnetAdapter struct{ l *slog.Logger }

// NewGnetAdapter returns an adapter writing to l.
func NewGnetAdapter(l *slog.Logger) GnetAdapter { return GnetAdapter{l: l} }

func (g GnetAdapter) logf(level slog.Level, format string, args []any) {
	ctx := context.Background()
	if !g.l.Enabled(ctx, level) {
		return // don't format what is dropped
	}
	g.l.Log(ctx, level, fmt.Sprintf(format, args...), "component", "gnet")
}

// Debugf logs at debug.
func (g GnetAdapter) Debugf(format string, args ...any) { g.logf(slog.LevelDebug, format, args) }

// Infof logs at info.
func (g GnetAdapter) Infof(format string, args ...any) { g.logf(slog.LevelInfo, format, args) }

// Warnf logs at warn.
func (g GnetAdapter) Warnf(format string, args ...any) { g.logf(slog.LevelWarn, format, args) }

// Errorf logs at error.
func (g GnetAdapter) Errorf(format string, args ...any) { g.logf(slog.LevelError, format, args) }

// Fatalf logs at error with fatal=true and returns: ending the process is
// cmd/svcdb's decision, not a library's. (gnet v2.10.0 calls Fatalf only from
// its package-level logger on kqueue platforms, never through
// WithLogger's logger on Linux.)
func (g GnetAdapter) Fatalf(format string, args ...any) {
	g.l.Error(fmt.Sprintf(format, args...), "component", "gnet", "fatal", true)
}

// OTelErrorHandler routes OpenTelemetry's internal errors (export failures,
// dropped spans) into slog at warn, tagged component=otel. It satisfies
// otel.ErrorHandler structurally: cmd/svcdb calls
// otel.SetErrorHandler(logging.NewOTelErrorHandler(lg.Logger)).
type OTelErrorHandler struct{ l *slog.Logger }

// NewOTelErrorHandler returns a handler writing to l.
func NewOTelErrorHandler(l *slog.Logger) OTelErrorHandler { return OTelErrorHandler{l: l} }

// Handle logs err. Warn rather than error: a collector that is down costs
// traces, not data, and must not look like a server failure.
func (h OTelErrorHandler) Handle(err error) {
	if err == nil {
		return
	}
	h.l.Warn("opentelemetry: "+err.Error(), "component", "otel")
}
