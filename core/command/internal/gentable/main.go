// Command gentable writes one family file of the core/command table (the
// Go literals of hash.go, list.go, ...) from what a live redis-server 7.0
// reports through COMMAND INFO and COMMAND DOCS, so that no entry is
// transcribed by hand.
//
// Usage, from the module root (redis-server must be on PATH):
//
//	go run ./core/command/internal/gentable -family hash -out core/command/hash.go hdel hexists hget ...
//
// or, for every generated family at once, `go generate ./core/command/`:
// each generated file carries the //go:generate line that rebuilds it.
//
// gentable starts its own redis-server on a free 127.0.0.1 port (no
// persistence, a temporary directory) and stops it when done. It refuses a
// server that is not 7.0.x, since the table describes Redis 7.0. Commands
// are written in the order given; subcommands (all that Redis reports) are
// sorted by name. -family names the function: "sorted-set" gives
// sortedSetCommands. Without -out the source goes to stdout.
//
// Anything Redis reports that the table's types cannot express (an unknown
// command flag, key-spec flag, argument type...) is an error: extend
// command.go and the reply encoders first, then this generator.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

func main() {
	family := flag.String("family", "", "family name; the function is <family>Commands (required)")
	out := flag.String("out", "", "output file (default stdout)")
	server := flag.String("redis-server", "redis-server", "redis-server binary")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: gentable -family name [-out file.go] command...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *family == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*server, *family, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gentable:", err)
		os.Exit(1)
	}
}

func run(bin, family, out string, names []string) error {
	addr, stop, err := startRedis(bin)
	if err != nil {
		return err
	}
	defer stop()
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.conn.Close()

	info, err := c.do("INFO", "server")
	if err != nil {
		return err
	}
	version := ""
	for _, line := range strings.Split(info.str, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			version = v
		}
	}
	if !strings.HasPrefix(version, "7.0.") {
		return fmt.Errorf("redis-server %q is not 7.0.x; the table describes Redis 7.0", version)
	}

	var cmds []*command
	for _, name := range names {
		name = strings.ToLower(name)
		cmd, err := c.load(name)
		if err != nil {
			return err
		}
		cmds = append(cmds, cmd)
	}

	src, err := render(family, version, out, names, cmds)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(src)
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// startRedis runs redis-server on a free port and returns its address and a
// function that stops it and removes its directory.
func startRedis(bin string) (string, func(), error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", nil, fmt.Errorf("redis-server 7.0 is required: %w", err)
	}
	dir, err := os.MkdirTemp("", "gentable")
	if err != nil {
		return "", nil, err
	}
	var lastLog string
	for attempt := 0; attempt < 3; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		var log bytes.Buffer
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop := func() {
			cmd.Process.Kill()
			<-exited
		}
		if waitUp(addr, exited) {
			return addr, func() { stop(); os.RemoveAll(dir) }, nil
		}
		stop()
		lastLog = log.String()
	}
	os.RemoveAll(dir)
	return "", nil, fmt.Errorf("could not start redis-server; last log:\n%s", lastLog)
}

func waitUp(addr string, exited <-chan struct{}) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := dial(addr)
		if err != nil {
			continue
		}
		v, err := c.do("PING")
		c.conn.Close()
		if err == nil && v.str == "PONG" {
			return true
		}
	}
	return false
}

// ---- a minimal RESP3 client ----

type value struct {
	kind  byte // RESP3 type byte: * % ~ + - : $ _ , # >
	str   string
	n     int64
	elems []value // arrays and sets; maps hold key, value, key, value...
}

type client struct {
	conn net.Conn
	r    *bufio.Reader
}

func dial(addr string) (*client, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	c := &client{conn: conn, r: bufio.NewReader(conn)}
	if v, err := c.do("HELLO", "3"); err != nil || v.kind != '%' {
		conn.Close()
		return nil, fmt.Errorf("HELLO 3: %v %v", v, err)
	}
	return c, nil
}

func (c *client) do(args ...string) (value, error) {
	var req bytes.Buffer
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(req.Bytes()); err != nil {
		return value{}, err
	}
	v, err := readValue(c.r)
	if err == nil && v.kind == '-' {
		err = fmt.Errorf("%q: %s", args, v.str)
	}
	return v, err
}

func readValue(r *bufio.Reader) (value, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return value{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return value{}, fmt.Errorf("bad RESP line %q", line)
	}
	v := value{kind: line[0]}
	body := line[1 : len(line)-2]
	switch v.kind {
	case '+', '-', ',', '#':
		v.str = body
	case ':':
		v.n, err = strconv.ParseInt(body, 10, 64)
	case '_':
	case '$', '=':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return value{}, fmt.Errorf("bad bulk length %q", body)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return value{}, err
		}
		v.str = string(buf[:n])
	case '*', '~', '>', '%':
		n, err := strconv.Atoi(body)
		if err != nil {
			return value{}, fmt.Errorf("bad aggregate length %q", body)
		}
		if v.kind == '%' {
			n *= 2
		}
		for range max(n, 0) {
			e, err := readValue(r)
			if err != nil {
				return value{}, err
			}
			v.elems = append(v.elems, e)
		}
	default:
		return value{}, fmt.Errorf("unsupported RESP type %q", v.kind)
	}
	return v, err
}

// get returns the value of key in a map.
func (v value) get(key string) (value, bool) {
	if v.kind != '%' {
		return value{}, false
	}
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == key {
			return v.elems[i+1], true
		}
	}
	return value{}, false
}

// keys returns a map's keys in reply order.
func (v value) keys() []string {
	var out []string
	for i := 0; i+1 < len(v.elems); i += 2 {
		out = append(out, v.elems[i].str)
	}
	return out
}

func (v value) strs() []string {
	var out []string
	for _, e := range v.elems {
		out = append(out, e.str)
	}
	return out
}

// ---- the model: what COMMAND INFO and COMMAND DOCS report ----

type command struct {
	name                    string // the part after '|' for subcommands
	arity                   int64
	flags                   []string
	first, last, step       int64
	acl, tips               []string
	keySpecs                []keySpec
	subs                    []*command
	summary, since, group   string
	complexity              string
	docFlags                []string
	deprecatedSince, replBy string
	history                 [][2]string
	args                    []arg
}

type keySpec struct {
	notes     string
	flags     []string
	beginType string
	index     int64
	keyword   string
	startFrom int64
	findType  string
	lastKey   int64
	keyStep   int64
	limit     int64
	keyNumIdx int64
	firstKey  int64
}

type arg struct {
	name, typ, token, summary, since, deprecatedSince string
	keySpecIndex                                      int64
	hasKeySpec                                        bool
	flags                                             []string
	args                                              []arg
}

// load reads COMMAND INFO and COMMAND DOCS of name and its subcommands.
func (c *client) load(name string) (*command, error) {
	info, err := c.do("COMMAND", "INFO", name)
	if err != nil {
		return nil, err
	}
	if len(info.elems) != 1 || info.elems[0].kind == '_' {
		return nil, fmt.Errorf("redis does not know %q", name)
	}
	docs, err := c.do("COMMAND", "DOCS", name)
	if err != nil {
		return nil, err
	}
	d, ok := docs.get(name)
	if !ok {
		return nil, fmt.Errorf("COMMAND DOCS %s: no entry", name)
	}
	return parseCommand(info.elems[0], d)
}

func parseCommand(info, docs value) (*command, error) {
	if len(info.elems) != 10 {
		return nil, fmt.Errorf("COMMAND INFO: %d elements, want 10", len(info.elems))
	}
	e := info.elems
	full := e[0].str
	cmd := &command{
		name:  full[strings.IndexByte(full, '|')+1:],
		arity: e[1].n, flags: e[2].strs(),
		first: e[3].n, last: e[4].n, step: e[5].n,
		acl: e[6].strs(), tips: e[7].strs(),
	}
	for _, ks := range e[8].elems {
		spec, err := parseKeySpec(ks)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", full, err)
		}
		cmd.keySpecs = append(cmd.keySpecs, spec)
	}

	known := map[string]bool{}
	for _, k := range docs.keys() {
		known[k] = true
	}
	for _, k := range []string{"summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
		"replaced_by", "history", "arguments", "subcommands"} {
		delete(known, k)
	}
	if len(known) > 0 {
		return nil, fmt.Errorf("%s: unsupported COMMAND DOCS fields %v", full, known)
	}
	str := func(k string) string { v, _ := docs.get(k); return v.str }
	cmd.summary, cmd.since, cmd.group = str("summary"), str("since"), str("group")
	cmd.complexity, cmd.deprecatedSince, cmd.replBy = str("complexity"), str("deprecated_since"), str("replaced_by")
	if v, ok := docs.get("doc_flags"); ok {
		cmd.docFlags = v.strs()
	}
	if v, ok := docs.get("history"); ok {
		for _, h := range v.elems {
			if len(h.elems) != 2 {
				return nil, fmt.Errorf("%s: bad history entry", full)
			}
			cmd.history = append(cmd.history, [2]string{h.elems[0].str, h.elems[1].str})
		}
	}
	if v, ok := docs.get("arguments"); ok {
		args, err := parseArgs(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", full, err)
		}
		cmd.args = args
	}

	subDocs, _ := docs.get("subcommands")
	for _, si := range e[9].elems {
		subFull := si.elems[0].str
		sd, ok := subDocs.get(subFull)
		if !ok {
			return nil, fmt.Errorf("COMMAND DOCS: no docs for %s", subFull)
		}
		sub, err := parseCommand(si, sd)
		if err != nil {
			return nil, err
		}
		cmd.subs = append(cmd.subs, sub)
	}
	sort.Slice(cmd.subs, func(i, j int) bool { return cmd.subs[i].name < cmd.subs[j].name })
	return cmd, nil
}

func parseKeySpec(v value) (keySpec, error) {
	var ks keySpec
	for i, k := range v.keys() {
		val := v.elems[2*i+1]
		switch k {
		case "notes":
			ks.notes = val.str
		case "flags":
			ks.flags = val.strs()
		case "begin_search":
			t, _ := val.get("type")
			spec, _ := val.get("spec")
			ks.beginType = t.str
			switch t.str {
			case "index":
				x, _ := spec.get("index")
				ks.index = x.n
			case "keyword":
				kw, _ := spec.get("keyword")
				sf, _ := spec.get("startfrom")
				ks.keyword, ks.startFrom = kw.str, sf.n
			case "unknown":
			default:
				return ks, fmt.Errorf("unsupported begin_search type %q", t.str)
			}
		case "find_keys":
			t, _ := val.get("type")
			spec, _ := val.get("spec")
			ks.findType = t.str
			n := func(k string) int64 { x, _ := spec.get(k); return x.n }
			switch t.str {
			case "range":
				ks.lastKey, ks.keyStep, ks.limit = n("lastkey"), n("keystep"), n("limit")
			case "keynum":
				ks.keyNumIdx, ks.firstKey, ks.keyStep = n("keynumidx"), n("firstkey"), n("keystep")
			case "unknown":
			default:
				return ks, fmt.Errorf("unsupported find_keys type %q", t.str)
			}
		default:
			return ks, fmt.Errorf("unsupported key spec field %q", k)
		}
	}
	return ks, nil
}

func parseArgs(v value) ([]arg, error) {
	var out []arg
	for _, m := range v.elems {
		var a arg
		for i, k := range m.keys() {
			val := m.elems[2*i+1]
			switch k {
			case "name":
				a.name = val.str
			case "type":
				a.typ = val.str
			case "key_spec_index":
				a.keySpecIndex, a.hasKeySpec = val.n, true
			case "token":
				a.token = val.str
			case "summary":
				a.summary = val.str
			case "since":
				a.since = val.str
			case "deprecated_since":
				a.deprecatedSince = val.str
			case "flags":
				a.flags = val.strs()
			case "arguments":
				sub, err := parseArgs(val)
				if err != nil {
					return nil, err
				}
				a.args = sub
			default:
				return nil, fmt.Errorf("argument %q: unsupported field %q", a.name, k)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// ---- Go source ----

// Redis names → the identifiers of core/command (command.go). A name not
// listed here is an error: the table cannot express it yet.
var (
	cmdFlags = map[string]string{
		"write": "FlagWrite", "readonly": "FlagReadonly", "denyoom": "FlagDenyOOM", "admin": "FlagAdmin",
		"pubsub": "FlagPubSub", "noscript": "FlagNoScript", "blocking": "FlagBlocking", "loading": "FlagLoading",
		"stale": "FlagStale", "skip_monitor": "FlagSkipMonitor", "skip_slowlog": "FlagSkipSlowlog",
		"asking": "FlagAsking", "fast": "FlagFast", "no_auth": "FlagNoAuth", "may_replicate": "FlagMayReplicate",
		"no_mandatory_keys": "FlagNoMandatoryKeys", "no_async_loading": "FlagNoAsyncLoading",
		"no_multi": "FlagNoMulti", "movablekeys": "FlagMovableKeys", "allow_busy": "FlagAllowBusy",
	}
	keyFlags = map[string]string{
		"RO": "KeyRO", "RW": "KeyRW", "OW": "KeyOW", "RM": "KeyRM", "access": "KeyAccess",
		"update": "KeyUpdate", "insert": "KeyInsert", "delete": "KeyDelete", "not_key": "KeyNotKey",
		"incomplete": "KeyIncomplete", "variable_flags": "KeyVariableFlags",
	}
	argTypes = map[string]string{
		"string": "ArgString", "integer": "ArgInteger", "double": "ArgDouble", "key": "ArgKey",
		"pattern": "ArgPattern", "unix-time": "ArgUnixTime", "pure-token": "ArgPureToken",
		"oneof": "ArgOneOf", "block": "ArgBlock",
	}
	argFlags = map[string]string{"optional": "ArgOptional", "multiple": "ArgMultiple", "multiple_token": "ArgMultipleToken"}
	docFlags = map[string]string{"deprecated": "DocDeprecated", "syscmd": "DocSyscmd"}
)

// bits joins the identifiers of names with " | "; Redis already sends them
// in the order the table's reply uses.
func bits(what string, m map[string]string, names []string) (string, error) {
	var ids []string
	for _, n := range names {
		id, ok := m[n]
		if !ok {
			return "", fmt.Errorf("unsupported %s %q: extend core/command first", what, n)
		}
		ids = append(ids, id)
	}
	return strings.Join(ids, " | "), nil
}

func funcName(family string) string {
	var b strings.Builder
	up := false
	for i, r := range family {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			up = true
		case up && i > 0:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String() + "Commands"
}

func render(family, version, out string, names []string, cmds []*command) ([]byte, error) {
	var b bytes.Buffer
	genArgs := []string{"-family", family}
	if out != "" {
		genArgs = append(genArgs, "-out", filepath.Base(out))
	}
	fmt.Fprintf(&b, "// Code generated by core/command/internal/gentable from redis-server %s\n", version)
	fmt.Fprintf(&b, "// (COMMAND INFO and COMMAND DOCS); DO NOT EDIT.\n")
	fmt.Fprintf(&b, "// golden_test.go compares every entry with a live redis-server.\n\n")
	fmt.Fprintf(&b, "//go:generate go run ./internal/gentable %s %s\n\n", strings.Join(genArgs, " "), strings.Join(names, " "))
	fmt.Fprintf(&b, "package command\n\n")
	fn := funcName(family)
	fmt.Fprintf(&b, "// %s returns fresh entries for the %s family.\n", fn, family)
	fmt.Fprintf(&b, "func %s() []*Command {\n\treturn []*Command{\n", fn)
	for _, c := range cmds {
		if err := writeCommand(&b, c); err != nil {
			return nil, err
		}
	}
	b.WriteString("\t}\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gofmt: %w\n%s", err, b.Bytes())
	}
	return src, nil
}

func q(s string) string { return strconv.Quote(s) }

func writeCommand(b *bytes.Buffer, c *command) error {
	b.WriteString("{\n")
	fmt.Fprintf(b, "Name: %s,\n", q(c.name))
	fmt.Fprintf(b, "Arity: %d,\n", c.arity)
	fl, err := bits("command flag", cmdFlags, c.flags)
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if fl == "" {
		fl = "0"
	}
	fmt.Fprintf(b, "Flags: %s,\n", fl)
	if c.first != 0 || c.last != 0 || c.step != 0 {
		fmt.Fprintf(b, "FirstKey: %d, LastKey: %d, Step: %d,\n", c.first, c.last, c.step)
	}
	writeStrings(b, "ACLCategories", c.acl)
	writeStrings(b, "Tips", c.tips)
	fmt.Fprintf(b, "Group: %s,\n", q(c.group))
	fmt.Fprintf(b, "Since: %s,\n", q(c.since))
	fmt.Fprintf(b, "Summary: %s,\n", q(c.summary))
	if c.complexity != "" {
		fmt.Fprintf(b, "Complexity: %s,\n", q(c.complexity))
	}
	if len(c.docFlags) > 0 {
		df, err := bits("doc flag", docFlags, c.docFlags)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		fmt.Fprintf(b, "DocFlags: %s,\n", df)
	}
	if c.deprecatedSince != "" {
		fmt.Fprintf(b, "DeprecatedSince: %s,\n", q(c.deprecatedSince))
	}
	if c.replBy != "" {
		fmt.Fprintf(b, "ReplacedBy: %s,\n", q(c.replBy))
	}
	if len(c.history) > 0 {
		b.WriteString("History: []History{\n")
		for _, h := range c.history {
			fmt.Fprintf(b, "{%s, %s},\n", q(h[0]), q(h[1]))
		}
		b.WriteString("},\n")
	}
	if len(c.keySpecs) > 0 {
		b.WriteString("KeySpecs: []KeySpec{\n")
		for _, ks := range c.keySpecs {
			if err := writeKeySpec(b, ks); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		b.WriteString("},\n")
	}
	if len(c.args) > 0 {
		b.WriteString("Args: []Arg{\n")
		if err := writeArgs(b, c.args); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		b.WriteString("},\n")
	}
	if len(c.subs) > 0 {
		b.WriteString("Subcommands: []*Command{\n")
		for _, s := range c.subs {
			if err := writeCommand(b, s); err != nil {
				return err
			}
		}
		b.WriteString("},\n")
	}
	b.WriteString("},\n")
	return nil
}

func writeStrings(b *bytes.Buffer, field string, ss []string) {
	if len(ss) == 0 {
		return
	}
	var qs []string
	for _, s := range ss {
		qs = append(qs, q(s))
	}
	fmt.Fprintf(b, "%s: []string{%s},\n", field, strings.Join(qs, ", "))
}

func writeKeySpec(b *bytes.Buffer, ks keySpec) error {
	b.WriteString("{\n")
	if ks.notes != "" {
		fmt.Fprintf(b, "Notes: %s,\n", q(ks.notes))
	}
	fl, err := bits("key-spec flag", keyFlags, ks.flags)
	if err != nil {
		return err
	}
	if fl == "" {
		return errors.New("key spec without flags")
	}
	fmt.Fprintf(b, "Flags: %s,\n", fl)
	switch ks.beginType {
	case "index":
		fmt.Fprintf(b, "BeginSearch: BeginSearch{Type: BeginIndex, Index: %d},\n", ks.index)
	case "keyword":
		fmt.Fprintf(b, "BeginSearch: BeginSearch{Type: BeginKeyword, Keyword: %s, StartFrom: %d},\n", q(ks.keyword), ks.startFrom)
	case "unknown":
		b.WriteString("BeginSearch: BeginSearch{Type: BeginUnknown},\n")
	default:
		return fmt.Errorf("key spec without begin_search")
	}
	switch ks.findType {
	case "range":
		fmt.Fprintf(b, "FindKeys: FindKeys{Type: FindRange, LastKey: %d, KeyStep: %d, Limit: %d},\n", ks.lastKey, ks.keyStep, ks.limit)
	case "keynum":
		fmt.Fprintf(b, "FindKeys: FindKeys{Type: FindKeyNum, KeyNumIdx: %d, FirstKey: %d, KeyStep: %d},\n", ks.keyNumIdx, ks.firstKey, ks.keyStep)
	case "unknown":
		b.WriteString("FindKeys: FindKeys{Type: FindUnknown},\n")
	default:
		return fmt.Errorf("key spec without find_keys")
	}
	b.WriteString("},\n")
	return nil
}

func writeArgs(b *bytes.Buffer, args []arg) error {
	for _, a := range args {
		typ, ok := argTypes[a.typ]
		if !ok {
			return fmt.Errorf("argument %q: unsupported type %q: extend core/command first", a.name, a.typ)
		}
		fields := []string{"Name: " + q(a.name), "Type: " + typ}
		if a.typ == "key" {
			fields = append(fields, fmt.Sprintf("KeySpecIndex: %d", a.keySpecIndex))
		} else if a.hasKeySpec && a.typ == "pattern" {
			fields = append(fields, fmt.Sprintf("KeySpecIndex: %d, PatternKeys: true", a.keySpecIndex))
		} else if a.hasKeySpec {
			return fmt.Errorf("argument %q: key_spec_index on type %q: extend core/command first", a.name, a.typ)
		}
		for _, f := range []struct{ name, v string }{
			{"Token", a.token}, {"Summary", a.summary}, {"Since", a.since}, {"DeprecatedSince", a.deprecatedSince},
		} {
			if f.v != "" {
				fields = append(fields, f.name+": "+q(f.v))
			}
		}
		if len(a.flags) > 0 {
			fl, err := bits("argument flag", argFlags, a.flags)
			if err != nil {
				return fmt.Errorf("argument %q: %w", a.name, err)
			}
			fields = append(fields, "Flags: "+fl)
		}
		if len(a.args) == 0 {
			fmt.Fprintf(b, "{%s},\n", strings.Join(fields, ", "))
			continue
		}
		fmt.Fprintf(b, "{%s, Args: []Arg{\n", strings.Join(fields, ", "))
		if err := writeArgs(b, a.args); err != nil {
			return err
		}
		b.WriteString("}},\n")
	}
	return nil
}
