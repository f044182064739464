package config

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a parameter's value. It decides how text is parsed
// (CONFIG SET, environment, flags), which TOML types a file may use, and how
// the value is printed.
type Kind int

const (
	// Bool: CONFIG SET, env and flags accept yes/no/true/false (any case);
	// CONFIG GET prints yes/no as Redis does; TOML wants true/false.
	Bool Kind = iota
	// Int: a decimal integer; TOML integer.
	Int
	// Float: a decimal number; TOML float or integer.
	Float
	// Size: bytes. Accepts Redis' units like its memtoull: b, k (1000),
	// kb (1024), m, mb, g, gb, case-insensitive ("100mb", "1GB"); prints
	// bytes. TOML integer (bytes) or string with a unit.
	Size
	// Duration: Go syntax ("30s", "1h30m"). Parameters with Seconds set (the
	// Redis names timeout, tcp-keepalive) also accept a plain integer of
	// seconds and print whole seconds, as Redis does. TOML string, or
	// integer seconds for Seconds parameters.
	Duration
	// String: free text (a parameter may add its own check). TOML string.
	String
	// Enum: one of Param.Enum (or an alias in Param.EnumAliases),
	// case-insensitive; prints the lower-case canonical name.
	Enum
	// IP: one IPv4 or IPv6 literal (netip.ParseAddr), no host names.
	IP
	// URL: an absolute http:// or https:// URL with a host.
	URL
	// Save: Redis save rules, "<seconds> <changes> ..." pairs, or "" for none.
	Save
)

var kindNames = [...]string{"bool", "int", "float", "size", "duration", "string", "enum", "ip", "url", "save"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText makes a Kind a JSON string ("size").
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Source says where a parameter's current value came from. Later sources win
// at start-up: default < file < env < flag; runtime is CONFIG SET.
type Source int

const (
	SourceDefault Source = iota
	SourceFile
	SourceEnv
	SourceFlag
	SourceRuntime
)

var sourceNames = [...]string{"default", "file", "env", "flag", "runtime"}

// String returns "default", "file", "env", "flag" or "runtime" (the names the
// /debug/api/config document uses).
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText makes a Source a JSON string ("file"), as /debug/api/config
// shows it.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Redacted is what every output shows instead of a secret's value.
const Redacted = "(redacted)"

// Param describes one configuration parameter. The registry's table (params.go)
// holds one Param per parameter; everything else is derived from it. Treat a
// *Param returned by the registry as read-only.
type Param struct {
	// Name is the CONFIG GET/SET name: Redis' name where Redis has the
	// parameter, else <table>-<key> (tables [server], [memory], [redis] and
	// [persistence] use the bare key). Lower case, unique.
	Name string
	// Aliases are other names CONFIG GET/SET and Lookup accept (Redis 7.0's
	// aliases such as hash-max-ziplist-entries, lua-time-limit).
	Aliases []string
	// Table and Key locate the parameter in the TOML file: [Table] Key.
	// Table may be dotted ("logging.rotation").
	Table, Key string
	Kind       Kind
	// Default is the canonical text of the default value (as CONFIG GET
	// prints it).
	Default string
	// Enum lists the allowed values of an Enum, canonical lower case, in the
	// order error messages list them.
	Enum []string
	// EnumAliases maps accepted alternative spellings onto Enum values
	// (loglevel: verbose → debug, notice → info, warning → warn).
	EnumAliases map[string]string
	// Min and Max bound Int, Float, Size and Duration values (Duration in
	// seconds) when HasRange.
	Min, Max float64
	HasRange bool
	// Percent: a Size that also takes "<n>%" (0..100), a percentage of
	// maxmemory, as Redis' PERCENT_CONFIG (maxmemory-clients); its
	// canonical text is then "<n>%" ("0%" is 0). Read with SizeOrPercent.
	Percent bool
	// Seconds: a Duration that prints whole seconds and accepts plain
	// integers as seconds (Redis' timeout, tcp-keepalive).
	Seconds bool
	// Unit is shown in the docs ("bytes", "microseconds", "percent", ...).
	Unit string
	// Mutable: CONFIG SET may change it at runtime. Immutable parameters are
	// set only at start-up (file, env, flags).
	Mutable bool
	// Secret values are never shown: "(redacted)" in CONFIG GET, the config
	// API and bundles; never in generated TOML, docs, errors or logs.
	Secret bool
	// Doc is one line for --generate-config comments and the docs.
	Doc string
	// EnvName is derived: SVC_<TABLE>_<KEY>, upper case, dots and dashes
	// turned into '_' (SVC_HTTP_TOKEN, SVC_LOGGING_ROTATION_MAX_SIZE_MB).
	EnvName string

	// check, when set, validates and canonicalises the text after the kind's
	// own parsing; old is the current canonical value (client-output-buffer-
	// limit merges into it, as Redis does).
	check func(old, v string) (string, *valueError)
	// allowed overrides the generated "allowed ..." text.
	allowed string
}

// valueError is a rejected value: redis is Redis' CONFIG SET reason (the text
// after " - "), msg and allowed make the start-up message
// "<msg>; allowed <allowed>".
type valueError struct {
	redis, msg, allowed string
}

// Allowed describes the accepted values in words, as error messages and the
// docs show them.
func (p *Param) Allowed() string {
	if p.allowed != "" {
		return p.allowed
	}
	switch p.Kind {
	case Bool:
		return "true or false (CONFIG SET, env, flags: yes, no, true, false)"
	case Enum:
		s := strings.Join(p.Enum, ", ")
		if al := p.enumAliasList(); len(al) > 0 {
			for i, a := range al {
				al[i] = a + "=" + p.EnumAliases[a]
			}
			s += " (also " + strings.Join(al, ", ") + ")"
		}
		return s
	case IP:
		return "an IPv4 or IPv6 literal such as 127.0.0.1, 0.0.0.0 or ::1"
	case URL:
		return "an http:// or https:// URL with a host, e.g. http://127.0.0.1:4318"
	case Save:
		return `"" (no snapshots) or "<seconds> <changes>" pairs, e.g. "3600 1 300 100"`
	case Size:
		r := "bytes"
		if p.HasRange {
			r = p.rangeText() + " bytes"
		}
		r += ", as a byte count or with a unit b, k (1000), kb (1024), m, mb, g, gb, e.g. 100mb"
		if p.Percent {
			r += ", or a percentage of maxmemory, 0% to 100%, e.g. 10%"
		}
		return r
	case Duration:
		if p.Seconds {
			return p.rangeText() + ` seconds, as whole seconds or a Go duration such as "30s"`
		}
		r := `a Go duration such as "30s", "5m", "24h"`
		if p.HasRange {
			r = p.rangeText() + ", " + r
		}
		return r
	case Int, Float:
		if p.HasRange {
			return p.rangeText()
		}
	}
	return ""
}

// enumAliasList returns the alias spellings ordered by their target's place
// in Enum, then by name, so messages are deterministic.
func (p *Param) enumAliasList() []string {
	var out []string
	for _, e := range p.Enum {
		var group []string
		for a, t := range p.EnumAliases {
			if t == e {
				group = append(group, a)
			}
		}
		sort.Strings(group)
		out = append(out, group...)
	}
	return out
}

// rangeText is "min..max" in the parameter's own notation.
func (p *Param) rangeText() string {
	return p.fmtBound(p.Min) + ".." + p.fmtBound(p.Max)
}

func (p *Param) fmtBound(f float64) string {
	if p.Kind == Duration && !p.Seconds {
		return formatDuration(time.Duration(f * float64(time.Second)))
	}
	return fmtNum(f)
}

// fmtNum prints a bound exactly: float64(math.MaxInt64) is 2^63, which would
// otherwise print as 9.223372036854776e+18.
func fmtNum(f float64) string {
	switch {
	case f >= float64(math.MaxInt64):
		return strconv.FormatInt(math.MaxInt64, 10)
	case f <= float64(math.MinInt64):
		return strconv.FormatInt(math.MinInt64, 10)
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// parse validates text for p and returns its canonical form. old is the
// current canonical value.
func (p *Param) parse(old, v string) (string, *valueError) {
	c, ve := p.parseKind(v)
	if ve != nil {
		return "", ve
	}
	if p.check != nil {
		return p.check(old, c)
	}
	return c, nil
}

func (p *Param) parseKind(v string) (string, *valueError) {
	switch p.Kind {
	case Bool:
		switch strings.ToLower(v) {
		case "yes", "true":
			return "yes", nil
		case "no", "false":
			return "no", nil
		}
		return "", p.bad("argument must be 'yes' or 'no'", "invalid boolean %s", v)
	case Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", p.bad("argument couldn't be parsed into an integer", "invalid integer %s", v)
		}
		if ve := p.inRange(float64(n), v); ve != nil {
			return "", ve
		}
		return strconv.FormatInt(n, 10), nil
	case Float:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", p.bad("argument couldn't be parsed into a number", "invalid number %s", v)
		}
		if ve := p.inRange(f, v); ve != nil {
			return "", ve
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case Size:
		if p.Percent {
			return p.parsePercent(v)
		}
		n, ok := parseSize(v)
		if !ok {
			return "", p.bad("argument must be a memory value", "invalid size %s", v)
		}
		if ve := p.inRange(float64(n), v); ve != nil {
			return "", ve
		}
		return strconv.FormatInt(n, 10), nil
	case Duration:
		return p.parseDuration(v)
	case String:
		return v, nil
	case Enum:
		l := strings.ToLower(v)
		for _, e := range p.Enum {
			if l == e {
				return e, nil
			}
		}
		if t, ok := p.EnumAliases[l]; ok {
			return t, nil
		}
		list := append(append([]string(nil), p.Enum...), p.enumAliasList()...)
		return "", p.bad("argument(s) must be one of the following: "+strings.Join(list, ", "), "invalid value %s", v)
	case IP:
		a, err := netip.ParseAddr(v)
		if err != nil {
			return "", p.bad("Failed to bind to specified addresses.", "%s is not an IP address", v)
		}
		return a.String(), nil
	case URL:
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
			return "", p.bad("argument must be an http:// or https:// URL", "invalid URL %s", v)
		}
		return v, nil
	case Save:
		return p.parseSave(v)
	}
	panic("config: BUG: unhandled kind " + p.Kind.String())
}

// parsePercent parses a Percent Size as Redis' PERCENT_CONFIG: "<n>%" with
// n a plain integer up to 100 (canonical "<n>%", or "0"), else a memory
// value in range; Redis' error texts.
func (p *Param) parsePercent(v string) (string, *valueError) {
	digits, isPercent := strings.CutSuffix(v, "%")
	if !isPercent {
		n, ok := parseSize(v)
		if !ok {
			return "", p.bad("argument must be a memory or percent value", "invalid size or percentage %s", v)
		}
		if ve := p.inRange(float64(n), v); ve != nil {
			return "", ve
		}
		return strconv.FormatInt(n, 10), nil
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || len(digits) > 1 && digits[0] == '0' { // Redis' string2ll: no leading zeros
		return "", p.bad("argument must be a memory or percent value", "invalid size or percentage %s", v)
	}
	if n > 100 {
		return "", p.bad("percentage argument must be less or equal to 100", "percentage %s over 100", v)
	}
	if n == 0 {
		return "0", nil
	}
	return strconv.FormatUint(n, 10) + "%", nil
}

// bad builds a valueError; the offending value is quoted in msg, or replaced
// by "(redacted)" for a secret.
func (p *Param) bad(redis, format, v string) *valueError {
	return &valueError{redis: redis, msg: fmt.Sprintf(format, p.quote(v)), allowed: p.Allowed()}
}

// quote prints a value for an error message: quoted, and never a secret.
func (p *Param) quote(v string) string {
	if p.Secret {
		return Redacted
	}
	return strconv.Quote(v)
}

func (p *Param) inRange(f float64, v string) *valueError {
	if !p.HasRange || (f >= p.Min && f <= p.Max) {
		return nil
	}
	shown := v
	if p.Secret {
		shown = Redacted
	}
	return &valueError{
		redis:   "argument must be between " + fmtNum(p.Min) + " and " + fmtNum(p.Max) + " inclusive",
		msg:     "value " + shown + " out of range",
		allowed: p.Allowed(),
	}
}

func (p *Param) parseDuration(v string) (string, *valueError) {
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && p.Seconds {
		// Plain integer seconds, as Redis' timeout and tcp-keepalive.
		if ve := p.inRange(float64(n), v); ve != nil {
			return "", ve
		}
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return "", p.bad("argument couldn't be parsed into an integer", "duration %s overflows", v)
		}
		d = time.Duration(n) * time.Second
	} else {
		var perr error
		d, perr = time.ParseDuration(v)
		if perr != nil {
			if p.Seconds {
				return "", p.bad("argument couldn't be parsed into an integer", "invalid duration %s", v)
			}
			return "", p.bad("argument must be a duration such as 30s, 5m or 24h", "invalid duration %s", v)
		}
		if ve := p.inRange(d.Seconds(), v); ve != nil {
			return "", ve
		}
	}
	if p.Seconds {
		if d%time.Second != 0 {
			return "", p.bad("argument must be a whole number of seconds", "duration %s is not a whole number of seconds", v)
		}
		return strconv.FormatInt(int64(d/time.Second), 10), nil
	}
	return formatDuration(d), nil
}

// parseSave checks Redis' save rules as config.c setConfigSaveOption does:
// an even number of integers, seconds >= 1, changes >= 0; "" means none.
func (p *Param) parseSave(v string) (string, *valueError) {
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return "", p.bad("Invalid save parameters", "invalid save rules %s", v)
	}
	out := make([]string, len(f))
	for i, s := range f {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || (i%2 == 0 && n < 1) || (i%2 == 1 && n < 0) {
			return "", p.bad("Invalid save parameters", "invalid save rules %s", v)
		}
		out[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(out, " "), nil
}

// parseSize is Redis' memtoull (util.c): digits, then an optional unit b, k,
// kb, m, mb, g, gb in any case; no sign, no spaces, no fraction. Unlike Redis
// an empty string is not 0 but an error.
func parseSize(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	var mul uint64
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mul {
		return 0, false
	}
	return int64(n * mul), true
}

// formatSize prints bytes with the largest binary unit that divides them
// exactly ("512mb", "1gb"), for generated TOML; parseSize reads it back.
func formatSize(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "gb"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "mb"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "kb"
	}
	return strconv.FormatInt(n, 10)
}

// formatDuration is time.Duration.String without the zero tails: "24h"
// rather than "24h0m0s", "1h30m", "90s" stays "1m30s".
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// envName derives SVC_<TABLE>_<KEY>.
func envName(table, key string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return "SVC_" + strings.ToUpper(r.Replace(table)+"_"+r.Replace(key))
}
