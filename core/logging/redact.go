package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Redacted replaces every secret value in log output.
const Redacted = "(redacted)"

// redactor knows the current secrets and their encoded forms.
type redactor struct {
	secrets func() []string       // nil: no secrets
	cache   atomic.Pointer[forms] // forms of the last secrets seen
}

// forms caches, for one Secrets() result, the byte patterns to look for in
// formatted output: each secret raw, JSON-escaped (slog's JSON handler) and
// Go-quoted (tint quotes values with strconv.AppendQuote).
type forms struct {
	secrets  []string
	patterns [][]byte
}

func newRedactor(secrets func() []string) *redactor {
	return &redactor{secrets: secrets}
}

// current returns the non-empty secrets, or nil.
func (r *redactor) current() []string {
	if r.secrets == nil {
		return nil
	}
	return r.secrets()
}

// redactString replaces each secret in s.
func redactString(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
}

// patterns returns the byte forms for secrets, recomputing them only when the
// secrets changed since the last call.
func (r *redactor) patterns(secrets []string) [][]byte {
	if f := r.cache.Load(); f != nil && slices.Equal(f.secrets, secrets) {
		return f.patterns
	}
	f := &forms{secrets: slices.Clone(secrets)}
	// Longest first, so a secret that contains another is replaced whole.
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		if sec == "" {
			continue
		}
		for _, p := range encodedForms(sec) {
			if !slices.ContainsFunc(f.patterns, func(q []byte) bool { return bytes.Equal(p, q) }) {
				f.patterns = append(f.patterns, p)
			}
		}
	}
	r.cache.Store(f)
	return f.patterns
}

// encodedForms returns how sec can appear in formatted output.
func encodedForms(sec string) [][]byte {
	out := [][]byte{[]byte(sec)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // slog's JSON handler does not escape <, >, &
	if enc.Encode(sec) == nil {
		j := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		out = append(out, bytes.Clone(j[1:len(j)-1]))
	}
	q := strconv.Quote(sec)
	out = append(out, []byte(q[1:len(q)-1]))
	return out
}

// redactBytes replaces every pattern in p; it returns p itself when nothing
// matched, so the common case does not allocate.
func redactBytes(p []byte, patterns [][]byte) []byte {
	for _, pat := range patterns {
		if bytes.Contains(p, pat) {
			p = bytes.ReplaceAll(p, pat, []byte(Redacted))
		}
	}
	return p
}

// redactHandler replaces secrets in the message and every attribute value
// before the inner handlers format the record. Working on values, before
// encoding, catches secrets whatever escaping the format applies.
type redactHandler struct {
	inner slog.Handler
	red   *redactor
}

func (h *redactHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	secrets := h.red.current()
	if len(secrets) == 0 {
		return h.inner.Handle(ctx, r)
	}
	nr := slog.NewRecord(r.Time, r.Level, redactString(r.Message, secrets), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(redactAttr(a, secrets))
		return true
	})
	return h.inner.Handle(ctx, nr)
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if secrets := h.red.current(); len(secrets) > 0 {
		red := make([]slog.Attr, len(attrs))
		for i, a := range attrs {
			red[i] = redactAttr(a, secrets)
		}
		attrs = red
	}
	return &redactHandler{inner: h.inner.WithAttrs(attrs), red: h.red}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{inner: h.inner.WithGroup(name), red: h.red}
}

// redactAttr returns a with secrets replaced in its value. Strings are
// replaced in place; []byte, errors, Stringers and any other value are
// turned into text (%+v for the rest) and, only when that text contains a
// secret, replaced by the redacted text, so values without secrets keep their
// usual encoding. A value whose JSON encoding shows a secret that %+v does
// not is left to the fanout's byte-level pass.
func redactAttr(a slog.Attr, secrets []string) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redactString(v.String(), secrets))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = redactAttr(ga, secrets)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		case []byte:
			s = string(x)
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", x)
		}
		if containsAny(s, secrets) {
			return slog.String(a.Key, redactString(s, secrets))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func containsAny(s string, secrets []string) bool {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// fanout writes one formatted record to every sink, after the byte-level
// backstop redaction. slog's handlers and tint write a record with a single
// Write call, so a record is never split across calls. An error from one sink
// does not stop the others; the first is returned.
type fanout struct {
	red   *redactor
	sinks []io.Writer
}

func (f *fanout) Write(p []byte) (int, error) {
	n := len(p)
	if secrets := f.red.current(); len(secrets) > 0 {
		p = redactBytes(p, f.red.patterns(secrets))
	}
	var first error
	for _, w := range f.sinks {
		if _, err := w.Write(p); err != nil && first == nil {
			first = err
		}
	}
	return n, first
}
