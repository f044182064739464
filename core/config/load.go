package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Why not go-toml's Decoder.DisallowUnknownFields: strict mode checks a
// document against a Go struct, and our schema is this registry, not a struct.
// So a file is read in two passes with the same library: toml.Unmarshal into
// a map does the TOML itself (syntax, duplicate keys and tables, value types,
// with line and column on error), and go-toml's unstable.Parser, the parser
// its decoder is built on, gives the position of every key and value so that
// our own errors (unknown table or key, wrong type, bad value) carry them too.

// pos is a 1-based line and column.
type pos struct{ line, col int }

// tomlDoc is a parsed file: values by path, and where each path appears.
type tomlDoc struct {
	values  map[string]any
	keyPos  map[string]pos // path → position of its key (or table header)
	valPos  map[string]pos // path → position of its value
	inline  map[string]bool
	entries []tomlEntry // every key-value, in file order (for Rewrite)
	headers []tomlHeader
	// aclUsers are the [[acl.user]] tables found by collect.
	aclUsers []ACLUser
}

// ACLUser is one [[acl.user]] table: a user and its rules as ACL SETUSER
// takes them, with where it was written. The registry only reads them; the
// rules are checked by core/acl when the server builds its users.
type ACLUser struct {
	Name  string
	Rules string
	File  string
	Line  int // line of the [[acl.user]] header
}

// aclUsers reads the [[acl.user]] array of tables: each needs a string
// name and a string rules, nothing else.
func aclUsers(file string, d *tomlDoc, v any, kp pos) ([]ACLUser, ErrorList) {
	var errs ErrorList
	arr, ok := v.([]any)
	if !ok || !isArrayOfTables(v) {
		return nil, ErrorList{&ConfigError{File: file, Line: kp.line, Column: kp.col, Table: "acl", Key: "user",
			Msg: "must be an array of tables ([[acl.user]]), got " + tomlType(v)}}
	}
	var lines []int
	for _, h := range d.headers {
		if h.array && h.path == "acl.user" {
			lines = append(lines, h.line)
		}
	}
	var out []ACLUser
	for i, e := range arr {
		line := kp.line
		if i < len(lines) {
			line = lines[i]
		}
		m, _ := e.(map[string]any)
		u := ACLUser{File: file, Line: line}
		bad := false
		for k, val := range m {
			s, isStr := val.(string)
			switch {
			case (k == "name" || k == "rules") && !isStr:
				errs = append(errs, &ConfigError{File: file, Line: line, Column: 1, Table: "acl.user", Key: k, Msg: "must be a string, got " + tomlType(val)})
				bad = true
			case k == "name":
				u.Name = s
			case k == "rules":
				u.Rules = s
			default:
				errs = append(errs, &ConfigError{File: file, Line: line, Column: 1, Table: "acl.user", Key: k, Msg: "unknown key", Allowed: "name, rules"})
				bad = true
			}
		}
		if u.Name == "" && !bad {
			errs = append(errs, &ConfigError{File: file, Line: line, Column: 1, Table: "acl.user", Key: "name", Msg: "missing or empty: every [[acl.user]] needs a name"})
			bad = true
		}
		if !bad {
			out = append(out, u)
		}
	}
	return out, errs
}

type tomlEntry struct {
	path    []string // full path, table parts then key
	section string   // joined path of the [header] it is under ("" = root)
	inline  bool     // inside an inline table
	val     unstable.Range
	valOK   bool  // val is a real range (arrays have none)
	end     int64 // offset just past the line the entry ends on
}

type tomlHeader struct {
	path  string // joined with '.'
	line  int
	array bool
	end   int64 // offset just past the header line
}

func joinPath(parts []string) string { return strings.Join(parts, "\x1f") }

// parseTOML runs both passes. A TOML error comes back as one ConfigError.
func parseTOML(name string, data []byte) (*tomlDoc, *ConfigError) {
	d := &tomlDoc{values: map[string]any{}, keyPos: map[string]pos{}, valPos: map[string]pos{}, inline: map[string]bool{}}
	if err := toml.Unmarshal(data, &d.values); err != nil {
		ce := &ConfigError{File: name, Msg: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			ce.Line, ce.Column = de.Position()
		}
		return nil, ce
	}
	var p unstable.Parser
	p.Reset(data)
	position := func(r unstable.Range) pos {
		s := p.Shape(r).Start
		return pos{s.Line, s.Column}
	}
	lineEnd := func(off int64) int64 {
		i := strings.IndexByte(string(data[off:]), '\n')
		if i < 0 {
			return int64(len(data))
		}
		return off + int64(i) + 1
	}
	section := ""
	var walk func(prefix []string, kv *unstable.Node, inline bool)
	walk = func(prefix []string, kv *unstable.Node, inline bool) {
		parts := append([]string(nil), prefix...)
		var last unstable.Range
		it := kv.Key()
		for it.Next() {
			n := it.Node()
			last = n.Raw
			parts = append(parts, string(n.Data))
			if _, ok := d.keyPos[joinPath(parts)]; !ok {
				d.keyPos[joinPath(parts)] = position(n.Raw)
			}
		}
		path := joinPath(parts)
		d.keyPos[path] = position(last) // point at the part that is wrong
		v := kv.Value()
		e := tomlEntry{path: parts, section: section, inline: inline, end: lineEnd(int64(kv.Raw.Offset + kv.Raw.Length))}
		if v.Raw.Length > 0 {
			d.valPos[path] = position(v.Raw)
			e.val, e.valOK = v.Raw, true
		} else {
			d.valPos[path] = d.keyPos[path]
		}
		if inline {
			d.inline[path] = true
		}
		if v.Kind == unstable.InlineTable {
			d.inline[path] = true
			c := v.Children()
			for c.Next() {
				if c.Node().Kind == unstable.KeyValue {
					walk(parts, c.Node(), true)
				}
			}
			return
		}
		d.entries = append(d.entries, e)
	}
	var cur []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			cur = cur[:0]
			var last unstable.Range
			it := e.Key()
			for it.Next() {
				last = it.Node().Raw
				cur = append(cur, string(it.Node().Data))
				if _, ok := d.keyPos[joinPath(cur)]; !ok {
					d.keyPos[joinPath(cur)] = position(last)
				}
			}
			d.keyPos[joinPath(cur)] = position(last)
			section = strings.Join(cur, ".")
			d.headers = append(d.headers, tomlHeader{path: section, line: position(last).line, array: e.Kind == unstable.ArrayTable, end: lineEnd(int64(last.Offset))})
		case unstable.KeyValue:
			walk(cur, e, false)
		}
	}
	if err := p.Error(); err != nil { // cannot happen after Unmarshal accepted the data
		return nil, &ConfigError{File: name, Msg: "invalid TOML: " + err.Error()}
	}
	return d, nil
}

// loaded is one value read from a file or the environment.
type loaded struct {
	p   *Param
	val string // canonical
	at  origin
}

// collect checks a parsed document against the registry: every value found
// (canonical) and every problem, sorted by position.
func (r *Registry) collect(name string, d *tomlDoc) ([]loaded, ErrorList) {
	var out []loaded
	var errs ErrorList
	var walk func(path []string, m map[string]any)
	walk = func(path []string, m map[string]any) {
		table := strings.Join(path, ".")
		for k, v := range m {
			full := append(append([]string(nil), path...), k)
			fp := joinPath(full)
			kp, vp := d.keyPos[fp], d.valPos[fp]
			sub := strings.Join(full, ".")
			if r.tables[sub] {
				if mm, ok := v.(map[string]any); ok {
					walk(full, mm)
				} else {
					errs = append(errs, &ConfigError{File: name, Line: kp.line, Column: kp.col, Table: sub,
						Msg: "must be a table, got " + tomlType(v)})
				}
				continue
			}
			if sub == "acl.user" {
				users, uerrs := aclUsers(name, d, v, kp)
				d.aclUsers = append(d.aclUsers, users...)
				errs = append(errs, uerrs...)
				continue
			}
			p := r.byPath[table+"\x1f"+k]
			if p == nil || len(path) == 0 {
				if _, isTable := v.(map[string]any); isTable || isArrayOfTables(v) {
					errs = append(errs, &ConfigError{File: name, Line: kp.line, Column: kp.col, Table: sub,
						Msg: "unknown table" + suggest(sub, r.tableNames()), Allowed: strings.Join(r.tableNames(), ", ")})
				} else if len(path) == 0 {
					errs = append(errs, &ConfigError{File: name, Line: kp.line, Column: kp.col, Key: k,
						Msg: "key outside any table", Allowed: "keys inside the tables " + strings.Join(r.tableNames(), ", ")})
				} else {
					keys := r.tableKeys(table)
					errs = append(errs, &ConfigError{File: name, Line: kp.line, Column: kp.col, Table: table, Key: k,
						Msg: "unknown key" + suggest(k, keys), Allowed: strings.Join(keys, ", ")})
				}
				continue
			}
			text, ve := tomlText(p, v)
			if ve == nil {
				old, _ := r.Value(p.Name)
				text, ve = p.parse(old, text)
			}
			if ve != nil {
				errs = append(errs, &ConfigError{File: name, Line: vp.line, Column: vp.col, Table: p.Table, Key: p.Key, Msg: ve.msg, Allowed: ve.allowed})
				continue
			}
			out = append(out, loaded{p: p, val: text, at: origin{file: name, line: vp.line, col: vp.col}})
		}
	}
	walk(nil, d.values)
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
	})
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].at, out[j].at
		return a.line < b.line || (a.line == b.line && a.col < b.col)
	})
	return out, errs
}

func isArrayOfTables(v any) bool {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return false
	}
	_, ok = a[0].(map[string]any)
	return ok
}

func (r *Registry) tableNames() []string {
	out := make([]string, len(tableDocs))
	for i, t := range tableDocs {
		out[i] = t.name
	}
	return out
}

func (r *Registry) tableKeys(table string) []string {
	var out []string
	for _, p := range r.params {
		if p.Table == table {
			out = append(out, p.Key)
		}
	}
	for _, t := range tableDocs { // sub-tables may be written as keys too
		if rest, ok := strings.CutPrefix(t.name, table+"."); ok && !strings.Contains(rest, ".") {
			out = append(out, rest)
		}
	}
	return out
}

func suggest(s string, cands []string) string {
	if c := closest(s, append([]string(nil), cands...)); c != "" {
		return " (did you mean " + strconv.Quote(c) + "?)"
	}
	return ""
}

// tomlType names a decoded TOML value's type for messages.
func tomlType(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "float"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "date/time"
	}
	return fmt.Sprintf("%T", v)
}

// tomlText turns a decoded TOML value into the text p.parse reads, checking
// that its TOML type suits the parameter's kind.
func tomlText(p *Param, v any) (string, *valueError) {
	var want string
	switch p.Kind {
	case Bool:
		if b, ok := v.(bool); ok {
			if b {
				return "yes", nil
			}
			return "no", nil
		}
		want = "boolean (true or false)"
	case Int:
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10), nil
		}
		want = "integer"
	case Float:
		switch n := v.(type) {
		case float64:
			return strconv.FormatFloat(n, 'g', -1, 64), nil
		case int64:
			return strconv.FormatInt(n, 10), nil
		}
		want = "number"
	case Size:
		switch n := v.(type) {
		case int64:
			if n < 0 {
				return "", &valueError{msg: "value " + strconv.FormatInt(n, 10) + " out of range", allowed: p.Allowed()}
			}
			return strconv.FormatInt(n, 10), nil
		case string:
			return n, nil
		}
		want = `integer (bytes) or string with a unit such as "100mb"`
	case Duration:
		switch n := v.(type) {
		case string:
			return n, nil
		case int64:
			if p.Seconds {
				return strconv.FormatInt(n, 10), nil
			}
		}
		want = `string such as "30s"`
		if p.Seconds {
			want = `integer (seconds) or string such as "30s"`
		}
	default:
		if s, ok := v.(string); ok {
			return s, nil
		}
		want = "string"
	}
	got := tomlType(v)
	if !p.Secret {
		switch v.(type) {
		case bool, int64, float64, string:
			got += " " + fmtTOMLScalar(v)
		}
	}
	return "", &valueError{msg: "wrong type: got " + got + ", want " + want, allowed: p.Allowed()}
}

func fmtTOMLScalar(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// LoadFile reads a TOML configuration file (LoadTOML) and remembers its path
// for ConfigFile and CONFIG REWRITE.
func (r *Registry) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := r.LoadTOML(path, data); err != nil {
		return err
	}
	r.mu.Lock()
	r.file = path
	r.mu.Unlock()
	return nil
}

// LoadTOML loads a TOML document (name is used in messages; profiles are
// loaded this way from embedded bytes). It is strict: an unknown table or
// key, a value of the wrong TOML type, an out-of-range or malformed value are
// errors. It returns every problem as an ErrorList of *ConfigError, each
// naming file, line, column, table and key and the allowed values; a TOML
// syntax error is a single *ConfigError and changes nothing. The valid values
// are applied (SourceFile) even when others are bad, so that --check-config
// can evaluate the cross-field rules as far as possible; start-up must stop
// on any error.
func (r *Registry) LoadTOML(name string, data []byte) error {
	d, perr := parseTOML(name, data)
	if perr != nil {
		return ErrorList{perr}
	}
	r.setMu.Lock()
	defer r.setMu.Unlock()
	vals, errs := r.collect(name, d)
	r.mu.Lock()
	r.aclUsers = append(r.aclUsers, d.aclUsers...)
	r.mu.Unlock()
	return r.applyLoaded(vals, SourceFile, errs)
}

// applyLoaded applies loaded values one by one (so one refused by a hook does
// not undo the others) and returns errs plus any hook failures. Caller holds
// setMu.
func (r *Registry) applyLoaded(vals []loaded, src Source, errs ErrorList) error {
	for _, l := range vals {
		if _, err := r.apply([]change{{l.p, l.val, l.at}}, src); err != nil {
			errs = append(errs, &ConfigError{File: l.at.file, Line: l.at.line, Column: l.at.col, Env: l.at.env,
				Table: l.p.Table, Key: l.p.Key, Msg: "cannot apply: " + err.Error()})
		}
	}
	return errs.errOrNil()
}

// LoadEnv applies the SVC_* variables of environ (os.Environ() form): each
// is SVC_<TABLE>_<KEY> of a parameter (see Param.EnvName) and holds text as
// CONFIG SET takes it. An SVC_ variable that names no parameter is an error,
// as is a bad value; like LoadTOML, every problem is returned (ErrorList)
// and the valid values are applied (SourceEnv).
func (r *Registry) LoadEnv(environ []string) error {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	var vals []loaded
	var errs ErrorList
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "SVC_") {
			continue
		}
		p := r.byEnv[k]
		if p == nil {
			var names []string
			for n := range r.byEnv {
				names = append(names, n)
			}
			errs = append(errs, &ConfigError{Env: k, Msg: "unknown variable" + suggest(k, names),
				Allowed: "SVC_<TABLE>_<KEY> of a parameter, e.g. SVC_HTTP_TOKEN (see docs/configuration.md)"})
			continue
		}
		old, _ := r.Value(p.Name)
		c, ve := p.parse(old, v)
		if ve != nil {
			errs = append(errs, &ConfigError{Env: k, Table: p.Table, Key: p.Key, Msg: ve.msg, Allowed: ve.allowed})
			continue
		}
		vals = append(vals, loaded{p: p, val: c, at: origin{env: k}})
	}
	return r.applyLoaded(vals, SourceEnv, errs)
}

// LoadStartup reads the start-up sources in precedence order and returns
// every problem found, one error per problem, for cmd/svcdb to print before
// exiting 2 (or, with --check-config, exiting 0 when there are none):
// the TOML file at path (skipped when ""), then environ (os.Environ()), then
// the flags as (flag name without dashes, value) pairs in command-line order
// (see Flags and ApplyFlag), then Validate's rules between parameters.
// Load an embedded preset with LoadTOML before calling it.
func (r *Registry) LoadStartup(path string, environ []string, flags [][2]string) []error {
	var out []error
	add := func(err error) {
		var list ErrorList
		switch {
		case err == nil:
		case errors.As(err, &list):
			for _, e := range list {
				out = append(out, e)
			}
		default:
			out = append(out, err)
		}
	}
	if path != "" {
		add(r.LoadFile(path))
	}
	add(r.LoadEnv(environ))
	for _, f := range flags {
		add(r.ApplyFlag(f[0], f[1]))
	}
	out = append(out, r.Validate()...)
	return out
}
