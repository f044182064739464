package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	gnetlogging "github.com/panjf2000/gnet/v2/pkg/logging"
	"go.opentelemetry.io/otel"
)

// Compile-time proof that the adapters fit the interfaces they are for.
var (
	_ gnetlogging.Logger = GnetAdapter{}
	_ otel.ErrorHandler  = OTelErrorHandler{}
)

// syncBuffer is a bytes.Buffer safe for the concurrent test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTest(t *testing.T, o Options) (*Logger, *syncBuffer) {
	t.Helper()
	out := new(syncBuffer)
	if o.Stdout == nil {
		o.Stdout = out
	}
	l, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	t.Cleanup(func() { l.Close() })
	return l, out
}

func TestLevelsFilter(t *testing.T) {
	for _, tc := range []struct {
		level string
		want  []string // messages that must appear; the rest must not
	}{
		{"trace", []string{"t", "d", "i", "w", "e"}},
		{"debug", []string{"d", "i", "w", "e"}},
		{"info", []string{"i", "w", "e"}},
		{"warn", []string{"w", "e"}},
		{"error", []string{"e"}},
	} {
		t.Run(tc.level, func(t *testing.T) {
			l, out := newTest(t, Options{Level: tc.level, Format: "json"})
			l.Log(t.Context(), LevelTrace, "t")
			l.Debug("d")
			l.Info("i")
			l.Warn("w")
			l.Error("e")
			got := messages(t, out.String())
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("level %s logged %v; want %v", tc.level, got, tc.want)
			}
		})
	}
}

// messages decodes JSON lines and returns their msg fields.
func messages(t *testing.T, s string) []string {
	t.Helper()
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		msgs = append(msgs, m["msg"].(string))
	}
	return msgs
}

func TestSetLevelTakesEffectAtOnce(t *testing.T) {
	l, out := newTest(t, Options{Format: "json"}) // default info
	l.Debug("hidden-debug")
	if strings.Contains(out.String(), "hidden-debug") {
		t.Fatal("debug line written at level info")
	}
	if err := l.SetLevel("debug"); err != nil {
		t.Fatal(err)
	}
	l.Debug("shown-debug")
	if !strings.Contains(out.String(), "shown-debug") {
		t.Fatal(`debug line missing after SetLevel("debug")`)
	}
	if err := l.SetLevel("warn"); err != nil {
		t.Fatal(err)
	}
	l.Info("hidden-info")
	l.Warn("shown-warn")
	if s := out.String(); strings.Contains(s, "hidden-info") || !strings.Contains(s, "shown-warn") {
		t.Fatalf(`after SetLevel("warn"): %s`, s)
	}
	if got := l.LevelName(); got != "warn" {
		t.Errorf("LevelName = %q; want warn", got)
	}
	if err := l.SetLevel("loud"); !errors.Is(err, ErrUnknownLevel) {
		t.Errorf("SetLevel(loud) = %v; want ErrUnknownLevel", err)
	}
	if got := l.LevelName(); got != "warn" {
		t.Errorf("a rejected SetLevel changed the level to %q", got)
	}
}

func TestParseLevelNames(t *testing.T) {
	for name, want := range map[string]string{
		"trace": "trace", "TRACE": "trace",
		"debug": "debug", "verbose": "debug", "Verbose": "debug",
		"info": "info", "notice": "info", "NOTICE": "info",
		"warn": "warn", "warning": "warn", "WARNING": "warn",
		"error": "error", "Error": "error",
	} {
		level, err := ParseLevel(name)
		if err != nil {
			t.Errorf("ParseLevel(%q): %v", name, err)
			continue
		}
		if got := LevelName(level); got != want {
			t.Errorf("ParseLevel(%q) is %q; want %q", name, got, want)
		}
		l, _ := newTest(t, Options{})
		if err := l.SetLevel(name); err != nil || l.LevelName() != want {
			t.Errorf("SetLevel(%q): err %v, LevelName %q; want %q", name, err, l.LevelName(), want)
		}
	}
	for _, bad := range []string{"", "nothing", "fatal", " info", "inf"} {
		if _, err := ParseLevel(bad); !errors.Is(err, ErrUnknownLevel) {
			t.Errorf("ParseLevel(%q) = %v; want ErrUnknownLevel", bad, err)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Level: "loud"}, "level"},
		{Options{Format: "xml"}, "format"},
		{Options{Output: "syslog"}, "output"},
		{Options{Frequency: "weekly"}, "frequency"},
		{Options{MaxSizeMB: -1}, "max-size-mb"},
		{Options{MaxFiles: -1}, "max-files"},
		{Options{RingLines: -1}, "ring"},
		{Options{FilePath: "x.log", Frequency: "never"}, "never rotate"},
	} {
		_, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error mentioning %q", tc.o, err, tc.want)
		}
		if verr := tc.o.Validate(); (verr == nil) != (err == nil) {
			t.Errorf("Validate and New disagree on %+v: %v vs %v", tc.o, verr, err)
		}
	}
	if _, err := New(Options{Level: "NOTICE", Format: "JSON", Output: "None"}); err != nil {
		t.Errorf("names are case-insensitive: %v", err)
	}
}

func TestJSONOutputParses(t *testing.T) {
	l, out := newTest(t, Options{Level: "trace", Format: "json"})
	l.Log(t.Context(), LevelTrace, "tracing", "n", 1)
	l.Info("hello", "key", "va\"lue\n", slog.Group("g", "x", 2))
	l.With("conn", 7).Error("bad", "err", errors.New("boom"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines; want 3:\n%s", len(lines), out)
	}
	var recs []map[string]any
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	if recs[0]["level"] != "TRACE" || recs[0]["msg"] != "tracing" {
		t.Errorf("trace record: %v", recs[0])
	}
	if recs[1]["level"] != "INFO" || recs[1]["key"] != "va\"lue\n" || recs[1]["g"].(map[string]any)["x"] != 2.0 {
		t.Errorf("info record: %v", recs[1])
	}
	if recs[2]["level"] != "ERROR" || recs[2]["err"] != "boom" || recs[2]["conn"] != 7.0 {
		t.Errorf("error record: %v", recs[2])
	}
	for _, r := range recs {
		if _, ok := r["time"].(string); !ok {
			t.Errorf("record without time: %v", r)
		}
	}
}

func TestPrettyColourOnlyOnTerminal(t *testing.T) {
	const esc = "\x1b["
	dir := t.TempDir()
	// Not a terminal: no escape codes anywhere.
	l, out := newTest(t, Options{Level: "trace", FilePath: dir + "/plain.log"})
	l.Log(t.Context(), LevelTrace, "t-line")
	l.Info("i-line", "k", "v")
	l.Error("e-line", "err", errors.New("x"))
	l.Close()
	s := out.String()
	if strings.Contains(s, esc) {
		t.Errorf("ANSI codes on a non-terminal: %q", s)
	}
	if !strings.Contains(s, "TRACE t-line") || !strings.Contains(s, "INF i-line k=v") {
		t.Errorf("pretty output: %q", s)
	}
	// A terminal: colour on the console, none in the file and the ring.
	l2, out2 := newTest(t, Options{FilePath: dir + "/tty.log", IsTerminal: func(io.Writer) bool { return true }})
	l2.Error("coloured", "err", errors.New("x"))
	l2.Close()
	if !strings.Contains(out2.String(), esc) {
		t.Errorf("no colour on a terminal: %q", out2.String())
	}
	file := readFile(t, dir+"/tty.log")
	if strings.Contains(file, esc) || !strings.Contains(file, "coloured") {
		t.Errorf("file: %q", file)
	}
	if r := strings.Join(l2.Recent(0), "\n"); strings.Contains(r, esc) || !strings.Contains(r, "coloured") {
		t.Errorf("ring: %q", r)
	}
	// json never gets colour, terminal or not.
	l3, out3 := newTest(t, Options{Format: "json", IsTerminal: func(io.Writer) bool { return true }})
	l3.Info("j")
	if strings.Contains(out3.String(), esc) {
		t.Errorf("json output coloured: %q", out3)
	}
}

func TestOutputs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	l, err := New(Options{Output: "stderr", Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	l.Info("to-stderr")
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "to-stderr") {
		t.Errorf("output stderr: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	l, err = New(Options{Output: "none", Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	l.Info("to-nowhere")
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("output none wrote: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	if r := l.Recent(0); len(r) != 1 || !strings.Contains(r[0], "to-nowhere") {
		t.Errorf("output none: the ring must still record; got %q", r)
	}
}

func TestRecent(t *testing.T) {
	l, _ := newTest(t, Options{Format: "json", RingLines: 3})
	if got := l.Recent(5); len(got) != 0 {
		t.Fatalf("empty ring returned %q", got)
	}
	l.Info("m1")
	l.Info("m2")
	if got := recentMsgs(t, l, 0); got != "m1,m2" {
		t.Errorf("Recent(0) before wrap = %s", got)
	}
	for _, m := range []string{"m3", "m4", "m5"} {
		l.Info(m)
	}
	for n, want := range map[int]string{0: "m3,m4,m5", 1: "m5", 2: "m4,m5", 3: "m3,m4,m5", 10: "m3,m4,m5", -1: "m3,m4,m5"} {
		if got := recentMsgs(t, l, n); got != want {
			t.Errorf("Recent(%d) = %s; want %s", n, got, want)
		}
	}
	l.Debug("not-recorded") // below the level: not in the ring either
	if got := recentMsgs(t, l, 1); got != "m5" {
		t.Errorf("a filtered record reached the ring: %s", got)
	}
	if l2, _ := newTest(t, Options{}); len(l2.ring.lines) != DefaultRingLines {
		t.Errorf("default ring size %d; want %d", len(l2.ring.lines), DefaultRingLines)
	}
}

func recentMsgs(t *testing.T, l *Logger, n int) string {
	t.Helper()
	lines := l.Recent(n)
	for _, line := range lines {
		if strings.HasSuffix(line, "\n") {
			t.Errorf("ring line keeps its newline: %q", line)
		}
	}
	return strings.Join(messages(t, strings.Join(lines, "\n")), ",")
}

func TestConcurrentUse(t *testing.T) {
	l, out := newTest(t, Options{Format: "json", RingLines: 50, Secrets: func() []string { return []string{"pw"} }})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				switch i % 50 {
				case 0:
					_ = l.SetLevel([]string{"debug", "info"}[g%2])
				case 1:
					_ = l.Recent(10)
				case 2:
					_ = l.LevelName()
				}
				l.With("g", g).Info("line", "i", i, "pw", "pw")
			}
		})
	}
	wg.Wait()
	if n := strings.Count(out.String(), "\n"); n != 8*200 {
		t.Errorf("%d lines; want %d", n, 8*200)
	}
	if strings.Contains(out.String(), "pw") {
		t.Error("secret written")
	}
}

type countingStringer struct{ n *int }

func (c countingStringer) String() string { *c.n++; return "s" }

func TestGnetAdapter(t *testing.T) {
	l, out := newTest(t, Options{Format: "json"})
	g := NewGnetAdapter(l.Logger)
	calls := 0
	g.Debugf("dropped %v", countingStringer{&calls})
	if calls != 0 {
		t.Error("Debugf formatted its arguments below the level")
	}
	g.Infof("engine started with %d loops", 4)
	g.Warnf("w %s", "x")
	g.Errorf("e %d", 1)
	g.Fatalf("f %d", 2) // must return
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	want := [][2]string{{"INFO", "engine started with 4 loops"}, {"WARN", "w x"}, {"ERROR", "e 1"}, {"ERROR", "f 2"}}
	if len(recs) != len(want) {
		t.Fatalf("got %d records: %s", len(recs), out)
	}
	for i, w := range want {
		if recs[i]["level"] != w[0] || recs[i]["msg"] != w[1] || recs[i]["component"] != "gnet" {
			t.Errorf("record %d = %v; want %v", i, recs[i], w)
		}
	}
	if recs[3]["fatal"] != true {
		t.Errorf("Fatalf record lacks fatal=true: %v", recs[3])
	}
}

func TestOTelErrorHandler(t *testing.T) {
	l, out := newTest(t, Options{Format: "json"})
	h := NewOTelErrorHandler(l.Logger)
	h.Handle(nil)
	h.Handle(errors.New("export failed"))
	got := out.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, `"level":"WARN"`) ||
		!strings.Contains(got, "opentelemetry: export failed") || !strings.Contains(got, `"component":"otel"`) {
		t.Errorf("otel error log: %s", got)
	}
}

func BenchmarkInfo(b *testing.B) {
	for _, bc := range []struct {
		name    string
		secrets func() []string
	}{
		{"no-secrets", nil},
		{"two-secrets", func() []string { return []string{"requirepass-value", "http-token-value"} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := New(Options{Format: "json", Stdout: io.Discard, Secrets: bc.secrets})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				l.Info("client connected", "id", 42, "addr", "127.0.0.1:50000")
			}
		})
	}
	b.Run("filtered", func(b *testing.B) {
		l, _ := New(Options{Format: "json", Stdout: io.Discard})
		b.ReportAllocs()
		for b.Loop() {
			l.Debug("dropped", "id", 42)
		}
	})
}
