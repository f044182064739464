package config

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcdb/svcdb/core/glob"
)

// origin is where a value was set, for messages about it.
type origin struct {
	file      string
	line, col int
	env       string
	flag      string
}

type state struct {
	val string // canonical text
	src Source
	at  origin
}

// Registry holds every parameter's definition, current value and source.
// Create it with New. It is safe for concurrent use; see the package doc for
// the locking and the hot-path rule.
type Registry struct {
	params []*Param
	idx    map[*Param]int
	byName map[string]*Param // lower-case names and aliases
	byEnv  map[string]*Param
	byPath map[string]*Param // table + "\x1f" + key
	tables map[string]bool   // dotted table names

	// setMu serialises every change (loads, flags, CONFIG SET, Rewrite) and
	// guards hooks; hooks run with setMu held and mu released.
	setMu sync.Mutex
	hooks map[*Param][]func(string) error

	mu   sync.RWMutex
	vals []state
	file string // last file loaded successfully with LoadFile
	// aclUsers are the [[acl.user]] tables of the files loaded.
	aclUsers []ACLUser
}

// ACLUsers returns the users given as [[acl.user]] tables, in file order.
func (r *Registry) ACLUsers() []ACLUser {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]ACLUser(nil), r.aclUsers...)
}

// New returns a registry holding every parameter at its default. It panics if
// the parameter table itself is inconsistent (a bug caught by any test).
func New() *Registry {
	r := &Registry{
		params: defs(),
		idx:    map[*Param]int{},
		byName: map[string]*Param{},
		byEnv:  map[string]*Param{},
		byPath: map[string]*Param{},
		tables: map[string]bool{},
		hooks:  map[*Param][]func(string) error{},
	}
	for _, t := range tableDocs {
		r.tables[t.name] = true
	}
	r.vals = make([]state, len(r.params))
	for i, p := range r.params {
		p.EnvName = envName(p.Table, p.Key)
		r.idx[p] = i
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if n != strings.ToLower(n) || r.byName[n] != nil {
				panic("config: BUG: parameter name " + strconv.Quote(n) + " is not lower case or not unique")
			}
			r.byName[n] = p
		}
		if r.byEnv[p.EnvName] != nil || r.byPath[p.Table+"\x1f"+p.Key] != nil || !r.tables[p.Table] {
			panic("config: BUG: parameter " + p.Name + ": duplicate env/TOML location or unknown table " + p.Table)
		}
		r.byEnv[p.EnvName] = p
		r.byPath[p.Table+"\x1f"+p.Key] = p
		if c, ve := p.parse(p.Default, p.Default); ve != nil || c != p.Default {
			panic("config: BUG: parameter " + p.Name + ": default " + strconv.Quote(p.Default) + " is not canonical")
		}
		r.vals[i] = state{val: p.Default, src: SourceDefault}
	}
	return r
}

// Params returns every parameter in table order. The Params are shared:
// do not modify them.
func (r *Registry) Params() []*Param { return r.params }

// Lookup finds a parameter by CONFIG name or alias, case-insensitively;
// nil if there is none.
func (r *Registry) Lookup(name string) *Param {
	if p := r.byName[name]; p != nil {
		return p
	}
	return r.byName[strings.ToLower(name)]
}

func (r *Registry) must(name string) *Param {
	p := r.Lookup(name)
	if p == nil {
		panic("config: BUG: unknown parameter " + strconv.Quote(name))
	}
	return p
}

// Value returns a parameter's current canonical text, secrets included, and
// where it came from. It panics on an unknown name (a programming error).
func (r *Registry) Value(name string) (text string, src Source) {
	p := r.must(name)
	r.mu.RLock()
	s := r.vals[r.idx[p]]
	r.mu.RUnlock()
	return s.val, s.src
}

func (r *Registry) text(name string) (string, *Param) {
	p := r.must(name)
	r.mu.RLock()
	v := r.vals[r.idx[p]].val
	r.mu.RUnlock()
	return v, p
}

// String returns the current text (a secret's real value: for the wiring
// only, never for output).
func (r *Registry) String(name string) string { v, _ := r.text(name); return v }

// Int returns an Int, Size or Seconds-Duration parameter as an integer (bytes,
// seconds). Panics on another kind.
func (r *Registry) Int(name string) int64 {
	v, p := r.text(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic("config: BUG: Int(" + p.Name + ") on a " + p.Kind.String() + " parameter")
	}
	return n
}

// Size returns a Size parameter in bytes.
func (r *Registry) Size(name string) int64 { return r.Int(name) }

// SizeOrPercent returns a Percent Size parameter: bytes, or, when it is
// set as a percentage of maxmemory, that percentage (bytes 0).
func (r *Registry) SizeOrPercent(name string) (bytes, percent int64) {
	v, _ := r.text(name)
	if d, ok := strings.CutSuffix(v, "%"); ok {
		n, _ := strconv.ParseInt(d, 10, 64)
		return 0, n
	}
	return r.Int(name), 0
}

// Bool returns a Bool parameter.
func (r *Registry) Bool(name string) bool {
	v, p := r.text(name)
	if p.Kind != Bool {
		panic("config: BUG: Bool(" + p.Name + ") on a " + p.Kind.String() + " parameter")
	}
	return v == "yes"
}

// Float returns a Float (or Int) parameter.
func (r *Registry) Float(name string) float64 {
	v, p := r.text(name)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		panic("config: BUG: Float(" + p.Name + ") on a " + p.Kind.String() + " parameter")
	}
	return f
}

// Duration returns a Duration parameter.
func (r *Registry) Duration(name string) time.Duration {
	v, p := r.text(name)
	if p.Kind != Duration {
		panic("config: BUG: Duration(" + p.Name + ") on a " + p.Kind.String() + " parameter")
	}
	if p.Seconds {
		n, _ := strconv.ParseInt(v, 10, 64)
		return time.Duration(n) * time.Second
	}
	d, _ := time.ParseDuration(v)
	return d
}

// shown is the text output may show: secrets are "(redacted)" when set and
// "" when not (which reveals only that none is configured).
func shown(p *Param, v string) string {
	if p.Secret && v != "" {
		return Redacted
	}
	return v
}

// OnChange registers fn to apply a new value of the parameter: fn gets the
// canonical text and returns an error to refuse it (CONFIG SET then rolls
// back every change it made and replies the error). Hooks run for every
// source whenever the value actually changes, in registration order, before
// Set/SetMany return. A hook may read the registry but must not change it
// (Set, SetMany, ApplyFlag, Load*, Rewrite, OnChange): that would deadlock.
// Panics on an unknown name.
func (r *Registry) OnChange(name string, fn func(newValue string) error) {
	p := r.must(name)
	r.setMu.Lock()
	r.hooks[p] = append(r.hooks[p], fn)
	r.setMu.Unlock()
}

// Unhooked lists the mutable parameters no OnChange hook is registered for:
// CONFIG SET would store their new value but nothing would apply it unless
// their reader polls. The wiring's tests can assert it is empty (or list
// the ones read on demand).
func (r *Registry) Unhooked() []string {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	var out []string
	for _, p := range r.params {
		if p.Mutable && len(r.hooks[p]) == 0 {
			out = append(out, p.Name)
		}
	}
	return out
}

// change is one validated assignment.
type change struct {
	p   *Param
	val string
	at  origin
}

// apply stores the changes and runs their hooks; on a hook error it restores
// every old value, re-runs the hooks of the changes already applied with
// their old values, and returns the failing change's index and error.
// Caller holds setMu.
func (r *Registry) apply(cs []change, src Source) (int, error) {
	old := make([]state, len(cs))
	r.mu.Lock()
	for i, c := range cs {
		j := r.idx[c.p]
		old[i] = r.vals[j]
		r.vals[j] = state{val: c.val, src: src, at: c.at}
	}
	r.mu.Unlock()
	for i, c := range cs {
		if old[i].val == c.val {
			continue
		}
		for _, h := range r.hooks[c.p] {
			if err := h(c.val); err != nil {
				r.mu.Lock()
				for k := range cs {
					r.vals[r.idx[cs[k].p]] = old[k]
				}
				r.mu.Unlock()
				// Undo in reverse order; the failing parameter's earlier
				// hooks may have applied too.
				for k := i; k >= 0; k-- {
					if old[k].val == cs[k].val {
						continue
					}
					for _, h := range r.hooks[cs[k].p] {
						_ = h(old[k].val) // best effort: restoring a value that was accepted before
					}
				}
				return i, err
			}
		}
	}
	return -1, nil
}

// Record stores a value a command, not CONFIG SET, changed (replicaof, by
// REPLICAOF) as a run-time value, so CONFIG GET shows it and CONFIG REWRITE
// persists it. The value is checked; no hook runs: the command applied it.
func (r *Registry) Record(name, value string) error {
	p := r.must(name)
	r.setMu.Lock()
	defer r.setMu.Unlock()
	old, _ := r.Value(p.Name)
	c, ve := p.parse(old, value)
	if ve != nil {
		return errors.New(ve.msg)
	}
	r.mu.Lock()
	j := r.idx[p]
	r.vals[j] = state{val: c, src: SourceRuntime}
	r.mu.Unlock()
	return nil
}

// Set assigns one parameter from a source.
//
// With SourceRuntime it is SetMany with one pair: Redis semantics (mutable
// only, cross-field rules) and *SetError errors. With the start-up sources
// (SourceFile, SourceEnv, SourceFlag) any parameter may be set, cross-field
// rules wait for Validate, and errors are *ConfigError (ApplyFlag adds the
// flag's name to them).
func (r *Registry) Set(name, value string, src Source) error {
	if src == SourceRuntime {
		return r.SetMany([][2]string{{name, value}}, src)
	}
	return r.setStartup(name, value, src, origin{})
}

func (r *Registry) setStartup(name, value string, src Source, at origin) error {
	p := r.Lookup(name)
	if p == nil {
		return &ConfigError{Flag: at.flag, Env: at.env, Key: name, Msg: "unknown parameter" + r.suggestName(name)}
	}
	r.setMu.Lock()
	defer r.setMu.Unlock()
	old, _ := r.Value(p.Name)
	c, ve := p.parse(old, value)
	if ve != nil {
		return &ConfigError{Flag: at.flag, Env: at.env, Table: p.Table, Key: p.Key, Msg: ve.msg, Allowed: ve.allowed}
	}
	if _, err := r.apply([]change{{p, c, at}}, src); err != nil {
		return &ConfigError{Flag: at.flag, Env: at.env, Table: p.Table, Key: p.Key, Msg: "cannot apply: " + err.Error()}
	}
	return nil
}

// SetMany is CONFIG SET name value [name value ...]: all or nothing, with
// Redis 7.0's checks in Redis' order (unknown, immutable, duplicate, then the
// values), then svcdb's cross-field rules, then the hooks; a failing hook
// rolls everything back. Errors are *SetError. With a start-up source the
// mutability and cross-field checks are skipped.
func (r *Registry) SetMany(pairs [][2]string, src Source) error {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	ps := make([]*Param, len(pairs))
	for i, kv := range pairs {
		p := r.Lookup(kv[0])
		switch {
		case p == nil:
			return &SetError{Kind: SetUnknown, Arg: kv[0]}
		case src == SourceRuntime && !p.Mutable:
			return &SetError{Kind: SetImmutable, Arg: kv[0], Reason: "can't set immutable config"}
		}
		for j := 0; j < i; j++ {
			if ps[j] == p {
				return &SetError{Kind: SetDuplicate, Arg: kv[0], Reason: "duplicate parameter"}
			}
		}
		ps[i] = p
	}
	cs := make([]change, len(pairs))
	for i, kv := range pairs {
		old, _ := r.Value(ps[i].Name)
		c, ve := ps[i].parse(old, kv[1])
		if ve != nil {
			return &SetError{Kind: SetInvalid, Arg: strings.ToLower(kv[0]), Reason: ve.redis}
		}
		cs[i] = change{p: ps[i], val: c}
	}
	if src == SourceRuntime {
		next := map[string]string{}
		for _, c := range cs {
			next[c.p.Name] = c.val
		}
		if rule, blame, msg, bad := r.checkRules(next, true); bad {
			// Name a parameter of this command: the blamed one if the
			// client set it, else the first one the rule involves.
			arg := ""
			for i, p := range ps {
				if p.Name == blame {
					arg = strings.ToLower(pairs[i][0])
				}
			}
			for i, p := range ps {
				if arg == "" && slices.Contains(rule.params, p.Name) {
					arg = strings.ToLower(pairs[i][0])
				}
			}
			return &SetError{Kind: SetInvalid, Arg: arg, Reason: msg}
		}
	}
	if i, err := r.apply(cs, src); err != nil {
		return &SetError{Kind: SetApply, Arg: strings.ToLower(pairs[i][0]), Reason: err.Error()}
	}
	return nil
}

// checkRules evaluates the cross-field rules with next overriding the current
// values; onlyTouched limits it to rules involving a parameter in next.
func (r *Registry) checkRules(next map[string]string, onlyTouched bool) (rule *crossRule, blame, msg string, bad bool) {
	get := func(n string) string {
		if v, ok := next[n]; ok {
			return v
		}
		v, _ := r.Value(n)
		return v
	}
	def := func(n string) string { return r.must(n).Default }
	for i := range crossRules {
		rule := &crossRules[i]
		touched := !onlyTouched
		for _, n := range rule.params {
			if _, ok := next[n]; ok {
				touched = true
			}
		}
		if !touched {
			continue
		}
		if b, m, _, bad := rule.check(get, def); bad {
			return rule, b, m, true
		}
	}
	return nil, "", "", false
}

// Validate checks the rules between parameters on the current configuration
// and returns every violation as a *ConfigError located where the blamed
// value was set. Call it after all start-up sources are loaded (they may fix
// each other: a file's rotation settings and an env's file-path);
// --check-config prints these after the load errors.
func (r *Registry) Validate() []error {
	var out []error
	get := func(n string) string { v, _ := r.Value(n); return v }
	def := func(n string) string { return r.must(n).Default }
	for _, rule := range crossRules {
		blame, msg, allowed, bad := rule.check(get, def)
		if !bad {
			continue
		}
		// Point at a value someone set: a default has no location.
		p := r.must(blame)
		r.mu.RLock()
		if r.vals[r.idx[p]].src == SourceDefault {
			for _, n := range rule.params {
				if q := r.must(n); r.vals[r.idx[q]].src != SourceDefault {
					p = q
					break
				}
			}
		}
		at := r.vals[r.idx[p]].at
		r.mu.RUnlock()
		out = append(out, &ConfigError{File: at.file, Line: at.line, Column: at.col, Env: at.env, Flag: at.flag,
			Table: p.Table, Key: p.Key, Msg: msg, Allowed: allowed})
	}
	return out
}

// Get is CONFIG GET pattern [pattern ...]: for a pattern without glob
// characters, the parameter of that name or alias, answered under the name as
// given; for a glob pattern (Redis' rules, case-insensitive), every parameter
// name and alias that matches, in table order. Each name appears once.
// Secrets read "(redacted)" (or "" when unset).
func (r *Registry) Get(patterns []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	add := func(name string, p *Param) {
		l := strings.ToLower(name)
		if seen[l] {
			return
		}
		seen[l] = true
		v, _ := r.Value(p.Name)
		out = append(out, [2]string{name, shown(p, v)})
	}
	for _, pat := range patterns {
		if !strings.ContainsAny(pat, "[*?") {
			if p := r.Lookup(pat); p != nil {
				add(pat, p)
			}
			continue
		}
		for _, p := range r.params {
			for _, n := range append([]string{p.Name}, p.Aliases...) {
				if glob.Match([]byte(pat), []byte(n), true) {
					add(n, p)
				}
			}
		}
	}
	return out
}

// Entry is one parameter as the config API (/debug/api/config), bundles and
// the docs show it. Value and Default are redacted for secrets. It marshals
// to the snake_case JSON object the SPEC asks for.
type Entry struct {
	Name    string `json:"name"`
	Table   string `json:"table"`
	Key     string `json:"key"`
	Kind    Kind   `json:"type"`
	Value   string `json:"value"`
	Default string `json:"default"`
	Source  Source `json:"source"` // "default", "file", "env", "flag", "runtime"
	Mutable bool   `json:"mutable"`
	Secret  bool   `json:"secret"`
	Unit    string `json:"unit,omitempty"`
	Doc     string `json:"doc"`
	EnvName string `json:"env"`
}

// Entries returns every parameter with its current (redacted) value and
// source, in table order.
func (r *Registry) Entries() []Entry {
	out := make([]Entry, len(r.params))
	r.mu.RLock()
	defer r.mu.RUnlock()
	for i, p := range r.params {
		s := r.vals[i]
		out[i] = Entry{Name: p.Name, Table: p.Table, Key: p.Key, Kind: p.Kind, Value: shown(p, s.val),
			Default: shown(p, p.Default), Source: s.src, Mutable: p.Mutable, Secret: p.Secret,
			Unit: p.Unit, Doc: p.Doc, EnvName: p.EnvName}
	}
	return out
}

// ConfigFile is the path of the last file LoadFile loaded without error (""
// if none): what CONFIG REWRITE rewrites and INFO server's config_file shows.
func (r *Registry) ConfigFile() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.file
}

// suggestName returns ` (did you mean "x"?)` for a near miss among names.
func (r *Registry) suggestName(name string) string {
	var names []string
	for n := range r.byName {
		names = append(names, n)
	}
	if s := closest(strings.ToLower(name), names); s != "" {
		return " (did you mean " + strconv.Quote(s) + "?)"
	}
	return ""
}

// closest returns the candidate within edit distance 2 of s (the smallest,
// ties broken alphabetically), or "".
func closest(s string, cands []string) string {
	sort.Strings(cands)
	best, bestD := "", 3
	for _, c := range cands {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
