package logging

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

type credentials struct {
	User, Password string
}

type secretValuer struct{ s string }

func (v secretValuer) LogValue() slog.Value { return slog.StringValue("valuer:" + v.s) }

type secretStringer struct{ s string }

func (v secretStringer) String() string { return "stringer:" + v.s }

// TestSecretsNeverReachAnySink logs records carrying the secrets in every
// place a value can go, in both formats, and greps every sink (console, file,
// ring) for the secrets in every encoding a sink could use.
func TestSecretsNeverReachAnySink(t *testing.T) {
	const (
		pass  = "hunter2-Pa55"
		token = `tok"en\<&>` + "\n" // needs escaping in JSON and in Go quoting
		later = "rotated-token-77"  // becomes a secret after a With() binding
	)
	for _, format := range []string{"json", "pretty"} {
		t.Run(format, func(t *testing.T) {
			var current atomic.Pointer[[]string]
			current.Store(&[]string{pass, token, ""})
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			l, out := newTest(t, Options{
				Level: "trace", Format: format, FilePath: path, MaxSizeMB: 1,
				Secrets: func() []string { return *current.Load() },
			})
			bound := l.With("early", later) // bound while 'later' is not yet a secret
			current.Store(&[]string{pass, token, later})

			l.Info("AUTH "+pass+" failed; token="+token, "pass", pass)
			l.Warn("attrs",
				"err", fmt.Errorf("wrapped: %w", errors.New("bad password "+pass)),
				"bytes", []byte("raw "+pass),
				"creds", credentials{"default", pass},
				"ptr", &credentials{"admin", token},
				"valuer", secretValuer{pass},
				"stringer", secretStringer{token},
				slog.Group("http", "token", token, slog.Group("inner", "p", pass)),
				"list", []string{"a", pass},
				"map", map[string]string{"k": token},
			)
			l.With("conn", pass).WithGroup("g").With("t", token).Error("bound", "x", 1)
			bound.Info("bound-before", "also", later)
			l.Log(t.Context(), LevelTrace, "key-side", pass, "v") // a secret as an attribute key
			l.Info("config", "requirepass", slog.AnyValue(pass))
			l.Debug(strings.ToUpper("no secret here"))
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			sinks := map[string]string{
				"console": out.String(),
				"file":    readFile(t, path),
				"ring":    strings.Join(l.Recent(0), "\n"),
			}
			for name, s := range sinks {
				if n := strings.Count(s, "\n"); name != "ring" && n != 7 {
					t.Errorf("%s: %d lines; want 7:\n%s", name, n, s)
				}
				if !strings.Contains(s, Redacted) {
					t.Errorf("%s: no %s marker:\n%s", name, Redacted, s)
				}
				for _, sec := range []string{pass, token, later} {
					for _, form := range leakForms(sec) {
						if strings.Contains(s, form) {
							t.Errorf("%s (%s) contains secret %q as %q:\n%s", name, format, sec, form, s)
						}
					}
				}
			}
			if len(l.Recent(0)) != 7 {
				t.Errorf("ring holds %d lines; want 7", len(l.Recent(0)))
			}
			if !strings.Contains(sinks["console"], "NO SECRET HERE") {
				t.Error("an ordinary line was lost")
			}
			if format == "json" {
				for _, line := range strings.Split(strings.TrimSpace(sinks["file"]), "\n") {
					if !json.Valid([]byte(line)) {
						t.Errorf("redaction broke JSON: %s", line)
					}
				}
			}
		})
	}
}

// leakForms is every way sec could appear in a sink: raw, each line of it,
// JSON-escaped, Go-quoted, base64 (JSON's []byte encoding).
func leakForms(sec string) []string {
	j, _ := json.Marshal(sec)
	q := strconv.Quote(sec)
	forms := []string{
		string(j[1 : len(j)-1]),
		q[1 : len(q)-1],
		base64.StdEncoding.EncodeToString([]byte(sec)),
	}
	for _, part := range strings.Split(sec, "\n") {
		if len(part) >= 4 {
			forms = append(forms, part)
		}
	}
	return forms
}

func TestNoSecretsLeavesRecordsAlone(t *testing.T) {
	l, out := newTest(t, Options{Format: "json", Secrets: func() []string { return []string{""} }})
	l.Info("plain", "b", []byte("hi"), "n", 3)
	var m map[string]any
	if err := json.Unmarshal([]byte(out.String()), &m); err != nil {
		t.Fatal(err)
	}
	if m["b"] != base64.StdEncoding.EncodeToString([]byte("hi")) || m["n"] != 3.0 {
		t.Errorf("values changed without a secret: %v", m)
	}
}

func TestRedactPatternsCache(t *testing.T) {
	r := newRedactor(nil)
	p1 := r.patterns([]string{"ab", `a"b`})
	p2 := r.patterns([]string{"ab", `a"b`})
	if &p1[0] != &p2[0] {
		t.Error("patterns recomputed for the same secrets")
	}
	p3 := r.patterns([]string{"cd"})
	if len(p3) != 1 || string(p3[0]) != "cd" {
		t.Errorf("patterns for cd = %q", p3)
	}
	// A secret containing another is replaced whole.
	got := string(redactBytes([]byte("x secret-long y"), r.patterns([]string{"secret", "secret-long"})))
	if got != "x "+Redacted+" y" {
		t.Errorf("overlapping secrets: %q", got)
	}
}
