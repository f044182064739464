package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"
)

// LevelTrace is below slog.LevelDebug; it is written "TRACE".
const LevelTrace = slog.Level(-8)

// DefaultRingLines is the ring's size when Options.RingLines is 0.
const DefaultRingLines = 1000

// ErrUnknownLevel is wrapped by ParseLevel and SetLevel for a name that is
// not a level.
var ErrUnknownLevel = errors.New("unknown log level")

// Options configures New. The zero value logs at info, pretty, to stdout, with
// no file. Field names follow the [logging] and [logging.rotation] tables.
type Options struct {
	// Level: trace, debug, info, warn or error (or Redis' verbose, notice,
	// warning), case-insensitive. Empty means info.
	Level string
	// Format: pretty or json. Empty means pretty.
	Format string
	// Output is the console: stdout, stderr or none. Empty means stdout.
	Output string

	// FilePath, when not empty, also writes every line to this file.
	FilePath string
	// MaxSizeMB rotates the file when it would grow beyond this many MiB;
	// 0 means no size limit. Only with FilePath.
	MaxSizeMB int
	// Frequency rotates the file by time: daily (local midnight), hourly
	// (at :00) or never. Empty means daily. Only with FilePath.
	Frequency string
	// MaxFiles is how many rotated files are kept; 0 keeps all.
	MaxFiles int

	// Stdout and Stderr are the console writers; nil means os.Stdout and
	// os.Stderr. Tests set them.
	Stdout, Stderr io.Writer
	// IsTerminal reports whether the console writer is a terminal, which is
	// the only case where pretty output is coloured. Nil means: an *os.File
	// that is a character device.
	IsTerminal func(io.Writer) bool
	// Secrets returns the current secret values (requirepass, the HTTP
	// token); each is replaced by "(redacted)" in every record. Called for
	// every record: it must be cheap and safe for concurrent use. Empty
	// strings are ignored. Nil means no secrets.
	Secrets func() []string
	// RingLines is how many recent formatted lines Recent can return; 0
	// means DefaultRingLines.
	RingLines int
	// Now is the clock for time-based rotation; nil means time.Now. Its
	// Location decides where midnight is.
	Now func() time.Time
}

// Validate checks every name and number without creating anything, for
// --check-config.
func (o Options) Validate() error {
	_, err := o.normalized()
	return err
}

// normalized fills the defaults and checks every field.
func (o Options) normalized() (Options, error) {
	if o.Level == "" {
		o.Level = "info"
	}
	if _, err := ParseLevel(o.Level); err != nil {
		return o, fmt.Errorf("logging: level: %w", err)
	}
	switch f := strings.ToLower(o.Format); f {
	case "":
		o.Format = "pretty"
	case "pretty", "json":
		o.Format = f
	default:
		return o, fmt.Errorf("logging: format: got %q; want pretty or json", o.Format)
	}
	switch out := strings.ToLower(o.Output); out {
	case "":
		o.Output = "stdout"
	case "stdout", "stderr", "none":
		o.Output = out
	default:
		return o, fmt.Errorf("logging: output: got %q; want stdout, stderr or none", o.Output)
	}
	switch f := strings.ToLower(o.Frequency); f {
	case "":
		o.Frequency = "daily"
	case "daily", "hourly", "never":
		o.Frequency = f
	default:
		return o, fmt.Errorf("logging: rotation frequency: got %q; want daily, hourly or never", o.Frequency)
	}
	if o.MaxSizeMB < 0 {
		return o, fmt.Errorf("logging: rotation max-size-mb: got %d; want >= 0", o.MaxSizeMB)
	}
	if o.MaxFiles < 0 {
		return o, fmt.Errorf("logging: rotation max-files: got %d; want >= 0", o.MaxFiles)
	}
	if o.FilePath != "" && o.MaxSizeMB == 0 && o.Frequency == "never" {
		return o, errors.New("logging: rotation: max-size-mb 0 with frequency never would never rotate; set one of them")
	}
	if o.RingLines < 0 {
		return o, fmt.Errorf("logging: ring lines: got %d; want >= 0", o.RingLines)
	}
	if o.RingLines == 0 {
		o.RingLines = DefaultRingLines
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.IsTerminal == nil {
		o.IsTerminal = isCharDevice
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Logger is svcdb's logger: use the embedded *slog.Logger to log. Its
// methods are safe for concurrent use.
type Logger struct {
	*slog.Logger

	level *slog.LevelVar
	ring  *ring
	file  *fileSink // nil without FilePath
}

// New builds the logger. It returns an error naming the field for an unknown
// level, format, output or frequency, or inconsistent rotation settings. The
// log file is opened on the first line written.
func New(o Options) (*Logger, error) {
	o, err := o.normalized()
	if err != nil {
		return nil, err
	}
	lv := new(slog.LevelVar)
	level, _ := ParseLevel(o.Level)
	lv.Set(level)

	l := &Logger{level: lv, ring: newRing(o.RingLines)}
	red := newRedactor(o.Secrets)

	plain := []io.Writer{l.ring}
	if o.FilePath != "" {
		l.file = newFileSink(o)
		plain = append(plain, l.file)
	}
	var console io.Writer
	switch o.Output {
	case "stdout":
		console = o.Stdout
	case "stderr":
		console = o.Stderr
	}
	colour := console != nil && o.Format == "pretty" && o.IsTerminal(console)
	if console != nil && !colour {
		plain = append(plain, console)
	}
	handlers := []slog.Handler{newFormatHandler(o.Format, false, lv, &fanout{red: red, sinks: plain})}
	if colour {
		handlers = append(handlers, newFormatHandler(o.Format, true, lv, &fanout{red: red, sinks: []io.Writer{console}}))
	}
	inner := handlers[0]
	if len(handlers) > 1 {
		inner = slog.NewMultiHandler(handlers...)
	}
	l.Logger = slog.New(&redactHandler{inner: inner, red: red})
	return l, nil
}

// SetLevel changes the level at once for every goroutine: the next record is
// filtered by it. It accepts what ParseLevel accepts.
func (l *Logger) SetLevel(name string) error {
	level, err := ParseLevel(name)
	if err != nil {
		return err
	}
	l.level.Set(level)
	return nil
}

// Level returns the current level.
func (l *Logger) Level() slog.Level { return l.level.Level() }

// LevelName returns the canonical name of the current level (trace, debug,
// info, warn or error), for CONFIG GET loglevel.
func (l *Logger) LevelName() string { return LevelName(l.level.Level()) }

// Recent returns up to n of the most recent formatted lines, oldest first,
// without trailing newlines; n <= 0 returns all the ring holds. Secrets are
// already redacted. Safe for concurrent use; the slice is the caller's.
func (l *Logger) Recent(n int) []string { return l.ring.recent(n) }

// Close closes the log file, if any; the console writers are the caller's.
// Lines logged after Close still reach the file (timberjack opens, writes
// and closes it each time) but are no longer rotated.
func (l *Logger) Close() error {
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}

// levelNames maps every accepted name to its level; the first five are the
// canonical names.
var levelNames = [...]struct {
	name  string
	level slog.Level
}{
	{"trace", LevelTrace},
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"warn", slog.LevelWarn},
	{"error", slog.LevelError},
	{"verbose", slog.LevelDebug},
	{"notice", slog.LevelInfo},
	{"warning", slog.LevelWarn},
}

// ParseLevel returns the level for a name: trace, debug, info, warn, error,
// or Redis' verbose (debug), notice (info) and warning (warn), in any case.
// Any other name returns an error wrapping ErrUnknownLevel.
func ParseLevel(name string) (slog.Level, error) {
	for _, n := range levelNames {
		if strings.EqualFold(name, n.name) {
			return n.level, nil
		}
	}
	return 0, fmt.Errorf("%w %q; want trace, debug, info, warn or error (or Redis' verbose, notice, warning)", ErrUnknownLevel, name)
}

// LevelName returns the canonical name for a level: the name of the highest
// canonical level at or below it (so slog.LevelInfo+2 is "info").
func LevelName(level slog.Level) string {
	switch {
	case level < slog.LevelDebug:
		return "trace"
	case level < slog.LevelInfo:
		return "debug"
	case level < slog.LevelWarn:
		return "info"
	case level < slog.LevelError:
		return "warn"
	}
	return "error"
}

// prettyTimeFormat carries the date, unlike tint's default (time.StampMilli):
// the file and the ring outlive the day the line was written.
const prettyTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// newFormatHandler returns the json or pretty handler writing to w.
func newFormatHandler(format string, colour bool, lv *slog.LevelVar, w io.Writer) slog.Handler {
	if format == "json" {
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv, ReplaceAttr: jsonTraceName})
	}
	return tint.NewTextHandler(w, &tint.Options{
		Level:       lv,
		ReplaceAttr: prettyTraceName,
		TimeFormat:  prettyTimeFormat,
		NoColor:     !colour,
	})
}

// jsonTraceName names LevelTrace "TRACE" (slog would write "DEBUG-4").
func jsonTraceName(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey && len(groups) == 0 {
		if lvl, ok := a.Value.Any().(slog.Level); ok && lvl <= LevelTrace {
			a.Value = slog.StringValue("TRACE")
		}
	}
	return a
}

// prettyTraceName names LevelTrace "TRACE" (tint would write "DBG-4"). tint
// calls ReplaceAttr for every attribute, so this stays a two-comparison
// check.
func prettyTraceName(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey && len(groups) == 0 {
		if lvl, ok := a.Value.Any().(slog.Level); ok && lvl <= LevelTrace {
			return slog.String(slog.LevelKey, "TRACE")
		}
	}
	return a
}

// isCharDevice is the default IsTerminal: a character device is a terminal
// for our purpose (it is also true for /dev/null, where colour is harmless).
// It avoids a dependency on golang.org/x/term.
func isCharDevice(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
