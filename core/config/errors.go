package config

import (
	"strconv"
	"strings"
)

// ConfigError is one bad start-up input: a TOML file entry, an environment
// variable, a flag, or a rule between parameters. It never contains a secret.
//
// Error() reads, by origin:
//
//	svcdb.toml:12:8: [server] port: value 70000 out of range; allowed 0..65535
//	environment SVC_SERVER_PORT: [server] port: value 70000 out of range; allowed 0..65535
//	flag --port: [server] port: value 70000 out of range; allowed 0..65535
type ConfigError struct {
	File         string // the file as named to LoadFile/LoadTOML; "" when not from a file
	Line, Column int    // 1-based position in File (of the value, key or table); 0 if unknown
	Env          string // the environment variable, when from the environment
	Flag         string // the flag ("--port"), when from the command line
	Table, Key   string // TOML location; Key "" for a table-level problem
	Msg          string // what is wrong
	Allowed      string // what would be accepted; may be ""
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Env != "":
		b.WriteString("environment " + e.Env + ": ")
	case e.Flag != "":
		b.WriteString("flag " + e.Flag + ": ")
	}
	switch {
	case e.Table != "" && e.Key != "":
		b.WriteString("[" + e.Table + "] " + e.Key + ": ")
	case e.Table != "":
		b.WriteString("[" + e.Table + "]: ")
	case e.Key != "":
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	if e.Allowed != "" {
		b.WriteString("; allowed ")
		b.WriteString(e.Allowed)
	}
	return b.String()
}

// ErrorList is every problem found in one load, in input order. Error()
// prints one per line; errors.As finds each *ConfigError.
type ErrorList []*ConfigError

func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// errOrNil returns nil for an empty list (a nil ErrorList in an error
// interface would not be == nil).
func (l ErrorList) errOrNil() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// SetErrorKind classifies a CONFIG SET failure.
type SetErrorKind int

const (
	SetUnknown   SetErrorKind = iota // no such parameter
	SetImmutable                     // not changeable at runtime
	SetDuplicate                     // the same parameter twice in one CONFIG SET
	SetInvalid                       // the value was rejected (also cross-field rules)
	SetApply                         // an OnChange hook failed; everything was rolled back
)

// SetError is a CONFIG SET failure. Error() is Redis 7.0's text without the
// leading '-', so a caller replies "-" + err.Error() + "\r\n":
//
//	ERR Unknown option or number of arguments for CONFIG SET - 'foo'
//	ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config
//	ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value
//	ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter
type SetError struct {
	Kind SetErrorKind
	// Arg is the parameter as Redis names it in the message: the argument
	// as the client typed it for unknown, immutable and duplicate, the
	// registered name (lower case) for invalid values and failed hooks.
	Arg string
	// Reason is the text after " - " (empty for SetUnknown).
	Reason string
}

func (e *SetError) Error() string {
	if e.Kind == SetUnknown {
		return "ERR Unknown option or number of arguments for CONFIG SET - '" + e.Arg + "'"
	}
	return "ERR CONFIG SET failed (possibly related to argument '" + e.Arg + "') - " + e.Reason
}
