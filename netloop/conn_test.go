package netloop_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop"
)

// Connection-level behaviour over real TCP. Every expected text below is what
// redis-server 7.0.15 sends for the same input (checked against the Debian
// build); the few svcdb additions (CLIENT SETINFO, lib-name=, the svc INFO
// section) are Redis 7.2's or svcdb's own and say so.

// ---- helpers shared by this package's tests ---------------------------------

// want fails unless v renders (resp.Value.String) as s.
func want(t testing.TB, v resp.Value, s string) {
	t.Helper()
	if got := v.String(); got != s {
		t.Fatalf("got %s\nwant %s", got, s)
	}
}

// wantErr fails unless v is the error reply msg (without '-' and CRLF).
func wantErr(t testing.TB, v resp.Value, msg string) {
	t.Helper()
	if v.Type != '-' || string(v.Str) != msg {
		t.Fatalf("got %s\nwant (error) %q", v, msg)
	}
}

// text returns the string of a simple, bulk or verbatim reply (without the
// verbatim "txt:" prefix).
func text(t testing.TB, v resp.Value) string {
	t.Helper()
	switch v.Type {
	case '+', '$':
		if v.Null {
			t.Fatalf("want a string, got %s", v)
		}
		return string(v.Str)
	case '=':
		s := string(v.Str)
		if !strings.HasPrefix(s, "txt:") {
			t.Fatalf("verbatim string without txt: prefix: %q", s)
		}
		return s[4:]
	}
	t.Fatalf("want a string reply, got %s", v)
	return ""
}

// pairs turns a RESP3 map or a RESP2 flat array of pairs into a Go map.
func pairs(t testing.TB, v resp.Value) map[string]resp.Value {
	t.Helper()
	if (v.Type != '%' && v.Type != '*') || len(v.Elems)%2 != 0 {
		t.Fatalf("want a map or flat array of pairs, got %s", v)
	}
	m := map[string]resp.Value{}
	for i := 0; i < len(v.Elems); i += 2 {
		m[string(v.Elems[i].Str)] = v.Elems[i+1]
	}
	return m
}

// parseInfo splits INFO text into its sections ("server", ...) and fields.
func parseInfo(t testing.TB, s string) (sections []string, fields map[string]string) {
	t.Helper()
	fields = map[string]string{}
	if s != "" && !strings.HasSuffix(s, "\r\n") {
		t.Fatalf("INFO text does not end in CRLF: %q", s)
	}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "# "):
			sections = append(sections, strings.ToLower(line[2:]))
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("INFO line without ':' %q", line)
			}
			fields[k] = v
		}
	}
	return sections, fields
}

func (r *rawConn) info(sections ...string) map[string]string {
	r.t.Helper()
	_, f := parseInfo(r.t, text(r.t, r.do(append([]string{"INFO"}, sections...)...)))
	return f
}

func infoInt(t testing.TB, f map[string]string, k string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(f[k], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s=%q: %v", k, f[k], err)
	}
	return n
}

// readUntilClosed returns everything the server sends until it closes the
// connection; it fails the test if the connection is still open after 5s.
func (r *rawConn) readUntilClosed() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(io.MultiReader(strings.NewReader(string(r.buf)), r.rd))
	r.buf = nil
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.t.Fatalf("connection still open after 5s; read so far %q", b)
	}
	return string(b)
}

// clientLine parses one CLIENT LIST / CLIENT INFO line into its fields.
func clientLine(line string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

// clientList returns CLIENT LIST's lines by id.
func (r *rawConn) clientList(args ...string) map[string]map[string]string {
	r.t.Helper()
	s := text(r.t, r.do(append([]string{"CLIENT", "LIST"}, args...)...))
	out := map[string]map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		f := clientLine(line)
		out[f["id"]] = f
	}
	return out
}

func (r *rawConn) id() string {
	r.t.Helper()
	v := r.do("CLIENT", "ID")
	if v.Type != ':' {
		r.t.Fatalf("CLIENT ID: %s", v)
	}
	return strconv.FormatInt(v.Int, 10)
}

// ---- PING, ECHO, QUIT, RESET, SELECT ----------------------------------------

func TestConnPingEchoQuit(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	want(t, c.do("PING"), `+"PONG"`)
	want(t, c.do("ping", "hello world"), `"hello world"`)
	wantErr(t, c.do("PING", "a", "b"), "ERR wrong number of arguments for 'ping' command")
	want(t, c.do("ECHO", "x\r\ny"), `"x\r\ny"`)
	want(t, c.do("ECHO", ""), `""`)
	wantErr(t, c.do("ECHO"), "ERR wrong number of arguments for 'echo' command")
	wantErr(t, c.do("ECHO", "a", "b"), "ERR wrong number of arguments for 'echo' command")

	// QUIT replies OK and closes; what follows it in the same write is not run.
	c.write("PING\r\n" + multibulk("QUIT") + multibulk("SET", "afterquit", "1"))
	if got := c.readUntilClosed(); got != "+PONG\r\n+OK\r\n" {
		t.Fatalf("QUIT: got %q", got)
	}
	d := dialRaw(t, ts.Addr)
	want(t, d.do("EXISTS", "afterquit"), "(integer) 0")
	// QUIT with arguments is still QUIT (arity -1), as in Redis.
	d.write(multibulk("QUIT", "now"))
	if got := d.readUntilClosed(); got != "+OK\r\n" {
		t.Fatalf("QUIT now: got %q", got)
	}
}

// TestConnQuitAfterPipeline: keyed commands before QUIT in the same write
// (queued to shards under the dedicated strategy) answer first; nothing after
// QUIT runs.
func TestConnQuitAfterPipeline(t *testing.T) {
	for _, st := range strategies() {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st))
			c := dialRaw(t, ts.Addr)
			c.write(multibulk("SET", "q", "1") + multibulk("INCR", "q") + multibulk("MGET", "q", "q2", "q3") +
				multibulk("GET", "q") + multibulk("QUIT") + multibulk("SET", "q", "100") + multibulk("SET", "q4", "x"))
			if got := c.readUntilClosed(); got != "+OK\r\n:2\r\n*3\r\n$1\r\n2\r\n$-1\r\n$-1\r\n$1\r\n2\r\n+OK\r\n" {
				t.Fatalf("got %q", got)
			}
			d := dialRaw(t, ts.Addr)
			want(t, d.do("MGET", "q", "q4"), `["2" (nil bulk)]`)
		})
	}
}

func TestConnReset(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	want(t, c.do("SELECT", "3"), `+"OK"`)
	want(t, c.do("SET", "k", "in3"), `+"OK"`)
	want(t, c.do("CLIENT", "SETNAME", "before-reset"), `+"OK"`)
	if v := c.do("HELLO", "3"); v.Type != '%' {
		t.Fatalf("HELLO 3: %s", v)
	}
	want(t, c.do("GET", "missing"), "(nil)") // RESP3 null
	want(t, c.do("RESET"), `+"RESET"`)
	// Back to db 0, RESP2 and no name (Redis' clearClientConnectionState).
	want(t, c.do("GET", "missing"), "(nil bulk)")
	want(t, c.do("GET", "k"), "(nil bulk)")
	want(t, c.do("CLIENT", "GETNAME"), "(nil bulk)")
	f := c.clientList()[c.id()]
	if f["db"] != "0" || f["resp"] != "2" || f["name"] != "" {
		t.Fatalf("CLIENT LIST after RESET: %v", f)
	}
	want(t, c.do("SELECT", "3"), `+"OK"`)
	want(t, c.do("GET", "k"), `"in3"`)
	wantErr(t, c.do("RESET", "x"), "ERR wrong number of arguments for 'reset' command")
}

func TestConnSelect(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	for _, bad := range []string{"abc", "1.5", "", " 1", "+1", "00", "01", "-0", "0x1", "99999999999999999999"} {
		wantErr(t, c.do("SELECT", bad), "ERR value is not an integer or out of range")
	}
	for _, bad := range []string{"16", "-1", "1000"} {
		wantErr(t, c.do("SELECT", bad), "ERR DB index is out of range")
	}
	wantErr(t, c.do("SELECT"), "ERR wrong number of arguments for 'select' command")
	want(t, c.do("SELECT", "15"), `+"OK"`)
	want(t, c.do("SET", "k", "15"), `+"OK"`)
	want(t, c.do("SELECT", "0"), `+"OK"`)
	want(t, c.do("GET", "k"), "(nil bulk)")
	want(t, c.do("SET", "k", "0"), `+"OK"`)
	want(t, c.do("SELECT", "15"), `+"OK"`)
	want(t, c.do("GET", "k"), `"15"`)
	// A failed SELECT leaves the database as it was.
	wantErr(t, c.do("SELECT", "16"), "ERR DB index is out of range")
	want(t, c.do("GET", "k"), `"15"`)
	if f := c.clientList()[c.id()]; f["db"] != "15" {
		t.Fatalf("CLIENT LIST db=%s, want 15", f["db"])
	}
	_, ks := parseInfo(t, text(t, c.do("INFO", "keyspace")))
	if ks["db0"] != "keys=1,expires=0,avg_ttl=0" || ks["db15"] != "keys=1,expires=0,avg_ttl=0" {
		t.Fatalf("INFO keyspace: %v", ks)
	}
}

// ---- HELLO and AUTH ----------------------------------------------------------

func checkHello(t testing.TB, v resp.Value, proto int64, id string) {
	t.Helper()
	wantType := byte('*')
	if proto == 3 {
		wantType = '%'
	}
	if v.Type != wantType || len(v.Elems) != 14 {
		t.Fatalf("HELLO reply type %q with %d elements, want %q with 14: %s", v.Type, len(v.Elems), wantType, v)
	}
	// Redis' order: server version proto id mode role modules.
	keys := []string{"server", "version", "proto", "id", "mode", "role", "modules"}
	for i, k := range keys {
		if string(v.Elems[2*i].Str) != k {
			t.Fatalf("HELLO field %d is %s, want %q: %s", i, v.Elems[2*i], k, v)
		}
	}
	m := pairs(t, v)
	want(t, m["server"], `"redis"`)
	want(t, m["version"], `"`+netloop.RedisVersion+`"`)
	want(t, m["proto"], fmt.Sprintf("(integer) %d", proto))
	want(t, m["id"], "(integer) "+id)
	want(t, m["mode"], `"standalone"`)
	want(t, m["role"], `"master"`)
	want(t, m["modules"], "[]")
}

func TestConnHello(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	id := c.id()
	checkHello(t, c.do("HELLO"), 2, id)
	checkHello(t, c.do("HELLO", "3"), 3, id)
	want(t, c.do("GET", "nokey"), "(nil)")
	checkHello(t, c.do("HELLO"), 3, id) // no argument: reports the current protocol
	checkHello(t, c.do("HELLO", "2"), 2, id)
	want(t, c.do("GET", "nokey"), "(nil bulk)")

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"HELLO", "4"}, "NOPROTO unsupported protocol version"},
		{[]string{"HELLO", "1"}, "NOPROTO unsupported protocol version"},
		{[]string{"HELLO", "-3"}, "NOPROTO unsupported protocol version"},
		{[]string{"HELLO", "abc"}, "ERR Protocol version is not an integer or out of range"},
		{[]string{"HELLO", "3.0"}, "ERR Protocol version is not an integer or out of range"},
		{[]string{"HELLO", "03"}, "ERR Protocol version is not an integer or out of range"},
		{[]string{"HELLO", "+3"}, "ERR Protocol version is not an integer or out of range"},
		{[]string{"HELLO", "3", "FOO"}, "ERR Syntax error in HELLO option 'FOO'"},
		{[]string{"HELLO", "3", "AUTH", "a"}, "ERR Syntax error in HELLO option 'AUTH'"},
		{[]string{"HELLO", "3", "SETNAME"}, "ERR Syntax error in HELLO option 'SETNAME'"},
		{[]string{"HELLO", "3", "SETNAME", "a b"}, "ERR Client names cannot contain spaces, newlines or special characters."},
		{[]string{"HELLO", "3", "AUTH", "nobody", "x"}, "WRONGPASS invalid username-password pair or user is disabled."},
	} {
		wantErr(t, c.do(tc.args...), tc.err)
	}
	// None of the failed HELLOs changed the protocol.
	want(t, c.do("GET", "nokey"), "(nil bulk)")

	checkHello(t, c.do("hello", "3", "setname", "hello-name"), 3, id)
	want(t, c.do("CLIENT", "GETNAME"), `"hello-name"`)
	// Without requirepass the default user is nopass: any password works.
	checkHello(t, c.do("HELLO", "2", "AUTH", "default", "whatever", "SETNAME", "n2"), 2, id)
	want(t, c.do("CLIENT", "GETNAME"), `"n2"`)
	if f := c.clientList()[id]; f["resp"] != "2" || f["name"] != "n2" {
		t.Fatalf("CLIENT LIST after HELLO: %v", f)
	}
}

func TestConnAuth(t *testing.T) {
	const pass = "s3cret pass"
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.RequirePass = pass }))
	c := dialRaw(t, ts.Addr)
	const noauth = "NOAUTH Authentication required."
	wantErr(t, c.do("GET", "a"), noauth)
	wantErr(t, c.do("SET", "a", "b"), noauth)
	wantErr(t, c.do("PING"), noauth)
	wantErr(t, c.do("CLIENT", "ID"), noauth)
	wantErr(t, c.do("INFO"), noauth)
	// Unknown commands are reported as unknown before authentication.
	wantErr(t, c.do("NOSUCH", "x"), "ERR unknown command 'NOSUCH', with args beginning with: 'x' ")
	const helloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	wantErr(t, c.do("HELLO"), helloNoAuth)
	wantErr(t, c.do("HELLO", "3"), helloNoAuth)
	wantErr(t, c.do("HELLO", "3", "SETNAME", "x"), helloNoAuth)
	const wrongpass = "WRONGPASS invalid username-password pair or user is disabled."
	wantErr(t, c.do("AUTH", "wrong"), wrongpass)
	wantErr(t, c.do("AUTH", "default", "wrong"), wrongpass)
	wantErr(t, c.do("AUTH", "someone", pass), wrongpass)
	wantErr(t, c.do("HELLO", "3", "AUTH", "default", "wrong"), wrongpass)
	wantErr(t, c.do("AUTH", "a", "b", "c"), "ERR syntax error")
	wantErr(t, c.do("AUTH"), "ERR wrong number of arguments for 'auth' command")
	wantErr(t, c.do("GET", "a"), noauth) // still not authenticated

	want(t, c.do("AUTH", pass), `+"OK"`)
	want(t, c.do("GET", "a"), "(nil bulk)")
	want(t, c.do("SET", "a", "1"), `+"OK"`)
	// A failed AUTH does not log an authenticated client out.
	wantErr(t, c.do("AUTH", "wrong"), wrongpass)
	want(t, c.do("GET", "a"), `"1"`)
	// RESET logs out.
	want(t, c.do("RESET"), `+"RESET"`)
	wantErr(t, c.do("GET", "a"), noauth)
	want(t, c.do("AUTH", "default", pass), `+"OK"`)
	want(t, c.do("GET", "a"), `"1"`)

	// HELLO AUTH authenticates, switches protocol and names in one step.
	d := dialRaw(t, ts.Addr)
	checkHello(t, d.do("HELLO", "3", "AUTH", "default", pass, "SETNAME", "authed"), 3, d.id())
	want(t, d.do("CLIENT", "GETNAME"), `"authed"`)
	want(t, d.do("GET", "a"), `"1"`)

	// QUIT needs no authentication.
	e := dialRaw(t, ts.Addr)
	e.write(multibulk("QUIT"))
	if got := e.readUntilClosed(); got != "+OK\r\n" {
		t.Fatalf("QUIT before AUTH: %q", got)
	}
}

// TestConnAuthCheckOrder: Redis' processCommand rejects an unknown command,
// an unknown subcommand and a wrong argument count before it looks at
// authentication.
func TestConnAuthCheckOrder(t *testing.T) {
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.RequirePass = "pw" }))
	c := dialRaw(t, ts.Addr)
	wantErr(t, c.do("NOSUCH"), "ERR unknown command 'NOSUCH', with args beginning with: ")
	wantErr(t, c.do("GET"), "ERR wrong number of arguments for 'get' command")
	wantErr(t, c.do("SET", "a"), "ERR wrong number of arguments for 'set' command")
	wantErr(t, c.do("CLIENT", "FOO"), "ERR unknown subcommand 'FOO'. Try CLIENT HELP.")
	wantErr(t, c.do("CLIENT", "ID", "x"), "ERR wrong number of arguments for 'client|id' command")
	wantErr(t, c.do("GET", "a"), "NOAUTH Authentication required.")
}

func TestConnAuthWithoutPassword(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	wantErr(t, c.do("AUTH", "x"), "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	want(t, c.do("AUTH", "default", "anything"), `+"OK"`) // default user is nopass
	wantErr(t, c.do("AUTH", "other", "x"), "WRONGPASS invalid username-password pair or user is disabled.")
	want(t, c.do("PING"), `+"PONG"`)
}

// ---- CLIENT ------------------------------------------------------------------

func TestConnClientNameAndInfo(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	id := c.id()
	want(t, c.do("CLIENT", "GETNAME"), "(nil bulk)")
	for _, bad := range []string{"a b", "a\nb", "tab\there", "é", "\x7f"} {
		wantErr(t, c.do("CLIENT", "SETNAME", bad), "ERR Client names cannot contain spaces, newlines or special characters.")
	}
	want(t, c.do("CLIENT", "SETNAME", "my-conn_1"), `+"OK"`)
	want(t, c.do("client", "getname"), `"my-conn_1"`)
	want(t, c.do("CLIENT", "SETNAME", ""), `+"OK"`) // empty clears the name
	want(t, c.do("CLIENT", "GETNAME"), "(nil bulk)")
	want(t, c.do("CLIENT", "SETNAME", "named"), `+"OK"`)

	// CLIENT SETINFO (Redis 7.2, sent by current clients on connect).
	want(t, c.do("CLIENT", "SETINFO", "LIB-NAME", "mylib"), `+"OK"`)
	want(t, c.do("CLIENT", "SETINFO", "lib-ver", "1.2.3"), `+"OK"`)
	wantErr(t, c.do("CLIENT", "SETINFO", "FOO", "x"), "ERR Unrecognized option 'FOO'")
	if v := c.do("CLIENT", "SETINFO", "LIB-NAME", "a b"); v.Type != '-' || !strings.HasSuffix(string(v.Str), "cannot contain spaces, newlines or special characters.") {
		t.Fatalf("SETINFO with a space: %s", v)
	}

	want(t, c.do("SELECT", "2"), `+"OK"`)
	v := c.do("CLIENT", "INFO")
	line := text(t, v)
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("CLIENT INFO is not one line: %q", line)
	}
	f := clientLine(line)
	for k, w := range map[string]string{
		"id": id, "name": "named", "db": "2", "cmd": "client|info", "resp": "2",
		"lib-name": "mylib", "lib-ver": "1.2.3", "laddr": ts.Addr, "flags": "N", "user": "default",
	} {
		if f[k] != w {
			t.Errorf("CLIENT INFO %s=%q, want %q (%q)", k, f[k], w, line)
		}
	}
	if f["addr"] != c.c.LocalAddr().String() {
		t.Errorf("CLIENT INFO addr=%q, want %q", f["addr"], c.c.LocalAddr())
	}
	if _, err := strconv.Atoi(f["fd"]); err != nil {
		t.Errorf("CLIENT INFO fd=%q", f["fd"])
	}
	// In RESP3 it is a verbatim string, as in Redis.
	c.do("HELLO", "3")
	if v := c.do("CLIENT", "INFO"); v.Type != '=' || clientLine(text(t, v))["resp"] != "3" {
		t.Fatalf("CLIENT INFO in RESP3: %s", v)
	}
	if v := c.do("CLIENT", "LIST"); v.Type != '=' {
		t.Fatalf("CLIENT LIST in RESP3: %s", v)
	}
}

func TestConnClientErrors(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"CLIENT"}, "ERR wrong number of arguments for 'client' command"},
		{[]string{"CLIENT", "FOO"}, "ERR unknown subcommand 'FOO'. Try CLIENT HELP."},
		{[]string{"CLIENT", "foo", "bar"}, "ERR unknown subcommand 'foo'. Try CLIENT HELP."},
		{[]string{"CLIENT", "ID", "x"}, "ERR wrong number of arguments for 'client|id' command"},
		{[]string{"CLIENT", "GETNAME", "x"}, "ERR wrong number of arguments for 'client|getname' command"},
		{[]string{"CLIENT", "SETNAME"}, "ERR wrong number of arguments for 'client|setname' command"},
		{[]string{"CLIENT", "NO-EVICT"}, "ERR wrong number of arguments for 'client|no-evict' command"},
		{[]string{"CLIENT", "HELP", "x"}, "ERR wrong number of arguments for 'client|help' command"},
		{[]string{"CLIENT", "NO-EVICT", "maybe"}, "ERR syntax error"},
		{[]string{"CLIENT", "LIST", "foo"}, "ERR syntax error"},
		{[]string{"CLIENT", "LIST", "ID"}, "ERR syntax error"},
		{[]string{"CLIENT", "LIST", "ID", "abc"}, "ERR Invalid client ID"},
		{[]string{"CLIENT", "LIST", "TYPE", "foo"}, "ERR Unknown client type 'foo'"},
		{[]string{"CLIENT", "KILL", "ID", "0"}, "ERR client-id should be greater than 0"},
		{[]string{"CLIENT", "KILL", "ID", "abc"}, "ERR client-id should be greater than 0"},
		{[]string{"CLIENT", "KILL", "ID", "+1"}, "ERR client-id should be greater than 0"},
		{[]string{"CLIENT", "LIST", "ID", "+1"}, "ERR Invalid client ID"},
		{[]string{"CLIENT", "LIST", "ID", "01"}, "ERR Invalid client ID"},
		{[]string{"CLIENT", "KILL", "ID", "01"}, "ERR client-id should be greater than 0"},
		{[]string{"CLIENT", "KILL", "TYPE", "foo"}, "ERR Unknown client type 'foo'"},
		{[]string{"CLIENT", "KILL", "SKIPME", "maybe"}, "ERR syntax error"},
		{[]string{"CLIENT", "KILL", "ADDR"}, "ERR No such client"}, // old form: "ADDR" is an address
		{[]string{"CLIENT", "KILL", "1.2.3.4:5"}, "ERR No such client"},
		{[]string{"CLIENT", "KILL", "ID", "1", "FOO"}, "ERR syntax error"},
		{[]string{"CLIENT", "KILL", "FOO", "bar"}, "ERR syntax error"},
		{[]string{"CLIENT", "KILL", "USER", "nosuch"}, "ERR No such user 'nosuch'"},
	} {
		wantErr(t, c.do(tc.args...), tc.err)
	}
	want(t, c.do("CLIENT", "NO-EVICT", "on"), `+"OK"`)
	want(t, c.do("CLIENT", "NO-EVICT", "OFF"), `+"OK"`)
	// CLIENT LIST ID takes any integer; unknown ids just match nothing.
	want(t, c.do("CLIENT", "LIST", "ID", "0", "-5", "999999"), `""`)
	want(t, c.do("CLIENT", "LIST", "TYPE", "pubsub"), `""`)
	want(t, c.do("CLIENT", "KILL", "ID", "999999"), "(integer) 0")
	want(t, c.do("CLIENT", "KILL", "ADDR", "1.2.3.4:5"), "(integer) 0")

	h := c.do("CLIENT", "HELP")
	if h.Type != '*' || len(h.Elems) < 10 {
		t.Fatalf("CLIENT HELP: %s", h)
	}
	var lines []string
	for _, e := range h.Elems {
		if e.Type != '+' {
			t.Fatalf("CLIENT HELP line %s is not a status reply", e)
		}
		lines = append(lines, string(e.Str))
	}
	all := strings.Join(lines, "\n")
	if lines[0] != "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" ||
		lines[len(lines)-2] != "HELP" || lines[len(lines)-1] != "    Print this help." ||
		!strings.Contains(all, "\nNO-EVICT (ON|OFF)\n") || !strings.Contains(all, "\nKILL <ip:port>\n") {
		t.Fatalf("CLIENT HELP:\n%s", all)
	}
}

func TestConnClientListAndKill(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	adminID := admin.id()

	other := dialRaw(t, ts.Addr)
	otherID := other.id()
	want(t, other.do("CLIENT", "SETNAME", "other"), `+"OK"`)
	want(t, other.do("CLIENT", "SETINFO", "LIB-NAME", "otherlib"), `+"OK"`)
	want(t, other.do("SELECT", "5"), `+"OK"`)
	if v := other.do("HELLO", "3"); v.Type != '%' {
		t.Fatalf("HELLO 3: %s", v)
	}
	want(t, other.do("GET", "x"), "(nil)")

	list := admin.clientList()
	if len(list) != 2 {
		t.Fatalf("CLIENT LIST has %d clients, want 2: %v", len(list), list)
	}
	o := list[otherID]
	for k, w := range map[string]string{
		"id": otherID, "addr": other.c.LocalAddr().String(), "laddr": ts.Addr,
		"name": "other", "db": "5", "cmd": "get", "resp": "3", "lib-name": "otherlib", "lib-ver": "",
	} {
		if o[k] != w {
			t.Errorf("CLIENT LIST other %s=%q, want %q (%v)", k, o[k], w, o)
		}
	}
	if a := list[adminID]; a["cmd"] != "client|list" || a["name"] != "" || a["db"] != "0" || a["resp"] != "2" {
		t.Errorf("CLIENT LIST self: %v", a)
	}
	// Redis' field order.
	s := text(t, admin.do("CLIENT", "LIST", "ID", otherID))
	var keys []string
	for _, f := range strings.Fields(s) {
		k, _, _ := strings.Cut(f, "=")
		keys = append(keys, k)
	}
	if got := strings.Join(keys, " "); !strings.HasPrefix(got, "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp") {
		t.Errorf("CLIENT LIST fields: %s", got)
	}
	if l := admin.clientList("ID", otherID, "424242"); len(l) != 1 || l[otherID] == nil {
		t.Fatalf("CLIENT LIST ID %s: %v", otherID, l)
	}
	if l := admin.clientList("TYPE", "normal"); len(l) != 2 {
		t.Fatalf("CLIENT LIST TYPE normal: %v", l)
	}

	// KILL ID: the victim is closed, the killer gets the count.
	want(t, admin.do("CLIENT", "KILL", "ID", otherID), "(integer) 1")
	other.expectClosed()
	eventually(t, 5*time.Second, func() bool { return admin.clientList()[otherID] == nil },
		"killed client %s still in CLIENT LIST", otherID)

	// KILL ADDR (new form, reply is a count) and KILL ip:port (old form, reply OK).
	v1 := dialRaw(t, ts.Addr)
	v1.do("PING")
	want(t, admin.do("CLIENT", "KILL", "ADDR", v1.c.LocalAddr().String()), "(integer) 1")
	v1.expectClosed()
	v2 := dialRaw(t, ts.Addr)
	v2.do("PING")
	want(t, admin.do("CLIENT", "KILL", v2.c.LocalAddr().String()), `+"OK"`)
	v2.expectClosed()
	// LADDR matches every client of this listener except the caller (SKIPME).
	v3 := dialRaw(t, ts.Addr)
	v3.do("PING")
	want(t, admin.do("CLIENT", "KILL", "LADDR", ts.Addr), "(integer) 1")
	v3.expectClosed()

	// USER default matches every client but the caller.
	v4, v5 := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	v4.do("PING")
	v5.do("PING")
	want(t, admin.do("CLIENT", "KILL", "USER", "default"), "(integer) 2")
	v4.expectClosed()
	v5.expectClosed()

	// SKIPME: by default the caller is not killed by filters that match it.
	want(t, admin.do("CLIENT", "KILL", "ID", adminID), "(integer) 0")
	want(t, admin.do("CLIENT", "KILL", "ID", adminID, "SKIPME", "yes"), "(integer) 0")
	want(t, admin.do("PING"), `+"PONG"`)
	admin.write(multibulk("CLIENT", "KILL", "ID", adminID, "SKIPME", "no") + multibulk("PING"))
	if got := admin.readUntilClosed(); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL self SKIPME no: %q", got)
	}
	// Old form on itself: OK, then closed.
	self := dialRaw(t, ts.Addr)
	self.write(multibulk("CLIENT", "KILL", self.c.LocalAddr().String()))
	if got := self.readUntilClosed(); got != "+OK\r\n" {
		t.Fatalf("CLIENT KILL own addr: %q", got)
	}
	last := dialRaw(t, ts.Addr)
	eventually(t, 5*time.Second, func() bool { return len(last.clientList()) == 1 }, "killed clients still listed")
}

// ---- maxclients and idle timeout --------------------------------------------

func TestConnMaxClients(t *testing.T) {
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.MaxClients = 3 }))
	var cs []*rawConn
	for range 3 {
		c := dialRaw(t, ts.Addr)
		want(t, c.do("PING"), `+"PONG"`)
		cs = append(cs, c)
	}
	if f := cs[0].info("clients"); f["connected_clients"] != "3" || f["maxclients"] != "3" {
		t.Fatalf("INFO clients: %v", f)
	}
	if f := cs[0].info("stats"); f["total_connections_received"] != "3" || f["rejected_connections"] != "0" {
		t.Fatalf("INFO stats: total_connections_received=%s rejected_connections=%s", f["total_connections_received"], f["rejected_connections"])
	}
	fourth := dialRaw(t, ts.Addr)
	if got := fourth.readUntilClosed(); got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("4th connection got %q", got)
	}
	// As in Redis, a refused connection counts in rejected_connections only.
	f := cs[0].info("stats", "clients")
	if f["rejected_connections"] != "1" || f["connected_clients"] != "3" || f["total_connections_received"] != "3" {
		t.Fatalf("after a rejection: rejected_connections=%s connected_clients=%s total_connections_received=%s",
			f["rejected_connections"], f["connected_clients"], f["total_connections_received"])
	}
	want(t, cs[1].do("PING"), `+"PONG"`) // the others are unaffected

	// Once a client leaves, a new one is admitted.
	cs[2].c.Close()
	eventually(t, 5*time.Second, func() bool {
		return cs[0].info("clients")["connected_clients"] == "2"
	}, "closed client still counted")
	n := dialRaw(t, ts.Addr)
	want(t, n.do("PING"), `+"PONG"`)
	if f := cs[0].info("stats", "clients"); f["rejected_connections"] != "1" || f["connected_clients"] != "3" || f["total_connections_received"] != "4" {
		t.Fatalf("after re-admission: %v", f)
	}
}

func TestConnIdleTimeout(t *testing.T) {
	const idle = time.Second // Redis' timeout is whole seconds
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.IdleTimeout = idle }))
	start := time.Now()
	quiet := dialRaw(t, ts.Addr)
	busy := dialRaw(t, ts.Addr)
	want(t, busy.do("PING"), `+"PONG"`)
	closed := make(chan time.Duration, 1)
	go func() {
		quiet.c.SetReadDeadline(time.Now().Add(6 * time.Second))
		_, err := quiet.rd.ReadByte()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			closed <- -1
			return
		}
		closed <- time.Since(start)
	}()
	// The busy client talks every 50ms for two idle periods and survives.
	for time.Since(start) < 2*idle+300*time.Millisecond {
		want(t, busy.do("PING"), `+"PONG"`)
		time.Sleep(50 * time.Millisecond) // the busy client's pace, not a wait for the server
	}
	want(t, busy.do("SET", "k", "v"), `+"OK"`)
	quietAfter := <-closed
	if quietAfter < 0 {
		t.Fatal("idle client not closed within 6s")
	}
	if quietAfter < idle-50*time.Millisecond {
		t.Fatalf("idle client closed after %v, before the %v timeout", quietAfter, idle)
	}
	if v := busy.clientList(); len(v) != 1 {
		t.Fatalf("CLIENT LIST after the idle client was closed: %v", v)
	}
	want(t, busy.do("GET", "k"), `"v"`)
}

// ---- protocol errors, inline commands, unknown commands ----------------------

func TestConnProtocolErrors(t *testing.T) {
	for _, st := range strategies() {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st))
			bystander := dialRaw(t, ts.Addr)
			want(t, bystander.do("SET", "by", "stander"), `+"OK"`)
			for _, tc := range []struct {
				name, in, err string
			}{
				{"count not integer", "*abc\r\n", "Protocol error: invalid multibulk length"},
				{"count too big", "*3000000000\r\n", "Protocol error: invalid multibulk length"},
				{"expected dollar", "*1\r\nfoo\r\n", "Protocol error: expected '$', got 'f'"},
				{"expected dollar mid-command", "*2\r\n$3\r\nGET\r\n:1\r\n", "Protocol error: expected '$', got ':'"},
				{"bulk -2", "*1\r\n$-2\r\n", "Protocol error: invalid bulk length"},
				{"bulk -2 second arg", "*2\r\n$3\r\nGET\r\n$-2\r\nxx\r\n", "Protocol error: invalid bulk length"},
				{"bulk -1", "*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
				{"bulk not integer", "*1\r\n$abc\r\n", "Protocol error: invalid bulk length"},
				{"bulk too long", "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$600000000\r\n", "Protocol error: invalid bulk length"},
				{"count line too long", "*" + strings.Repeat("1", 70000), "Protocol error: too big mbulk count string"},
				{"inline too long", strings.Repeat("a", 70000), "Protocol error: too big inline request"},
				{"unbalanced double quote", "SET \"a b\r\n", "Protocol error: unbalanced quotes in request"},
				{"unbalanced single quote", "SET 'a b\r\n", "Protocol error: unbalanced quotes in request"},
				{"text after closing quote", "SET \"a\"b c\r\n", "Protocol error: unbalanced quotes in request"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := dialRaw(t, ts.Addr)
					key := "pe:" + tc.name
					// Commands before the bad bytes in the same write answer first.
					c.write("PING\r\n" + multibulk("SET", key, "v") + multibulk("GET", key) + multibulk("INCR", key+":n") + tc.in)
					wantOut := "+PONG\r\n+OK\r\n$1\r\nv\r\n:1\r\n-ERR " + tc.err + "\r\n"
					if got := c.readUntilClosed(); got != wantOut {
						t.Fatalf("got  %q\nwant %q", got, wantOut)
					}
					// A fresh connection: alone, the bad input gets the same reply.
					d := dialRaw(t, ts.Addr)
					d.write(tc.in)
					if got := d.readUntilClosed(); got != "-ERR "+tc.err+"\r\n" {
						t.Fatalf("alone: got %q", got)
					}
					// The server keeps serving everyone else.
					want(t, bystander.do("GET", "by"), `"stander"`)
					want(t, dialRaw(t, ts.Addr).do("GET", key), `"v"`)
				})
			}
			// Bad input split across writes gets the same reply.
			c := dialRaw(t, ts.Addr)
			c.write("*2\r\n$3\r\nGET\r\n")
			want(t, bystander.do("PING"), `+"PONG"`)
			c.write("$-2\r\n")
			if got := c.readUntilClosed(); got != "-ERR Protocol error: invalid bulk length\r\n" {
				t.Fatalf("split: got %q", got)
			}
			pe := infoInt(t, bystander.info("stats"), "total_protocol_errors")
			if pe < 29 {
				t.Fatalf("total_protocol_errors = %d, want >= 29", pe)
			}
		})
	}
}

func TestConnInline(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	c.write("PING\r\n")
	want(t, c.read(), `+"PONG"`)
	c.write("PING\n") // LF alone ends an inline command too
	want(t, c.read(), `+"PONG"`)
	c.write("\r\n\r\n  \r\n\n")
	c.write(`SET a "b c"` + "\r\n")
	want(t, c.read(), `+"OK"`)
	c.write("GET a\r\n")
	want(t, c.read(), `"b c"`)
	c.write(`set   'q"x'   "esc\x41\n"` + "\r\n" + `get 'q"x'` + "\r\n")
	want(t, c.read(), `+"OK"`)
	want(t, c.read(), `"escA\n"`)
	// Inline and multibulk mixed in one write, with empty lines in between.
	c.write("\r\nPING\r\n" + multibulk("ECHO", "m") + "\r\nECHO i\r\n*0\r\n*-1\r\n" + multibulk("PING"))
	want(t, c.read(), `+"PONG"`)
	want(t, c.read(), `"m"`)
	want(t, c.read(), `"i"`)
	want(t, c.read(), `+"PONG"`)
	// An inline command split across writes.
	c.write("EC")
	want(t, dialRaw(t, ts.Addr).do("PING"), `+"PONG"`)
	c.write("HO split\r\n")
	want(t, c.read(), `"split"`)
	// Nothing but empty lines were sent since: no stray replies.
	if v, err := c.tryRead(100 * time.Millisecond); err == nil {
		t.Fatalf("unexpected reply %s", v)
	}
}

// TestConnCommandSplitAcrossWrites sends commands in pieces, with a round trip
// on another connection between the pieces so each arrives in its own read:
// the server must keep the partial command, whatever the split point.
func TestConnCommandSplitAcrossWrites(t *testing.T) {
	for _, st := range strategies() {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st))
			other := dialRaw(t, ts.Addr)
			c := dialRaw(t, ts.Addr)
			cmd := multibulk("SET", "split", "value") + multibulk("GET", "split") + "ECHO inline\r\n"
			for _, cut := range []int{1, 2, 4, 5, 8, 13, 14, 20, len(multibulk("SET", "split", "value")) - 1, len(multibulk("SET", "split", "value")) + 3, len(cmd) - 3} {
				c.write(cmd[:cut])
				want(t, other.do("PING"), `+"PONG"`) // the first piece has been read by now, most likely
				c.write(cmd[cut:])
				want(t, c.read(), `+"OK"`)
				want(t, c.read(), `"value"`)
				want(t, c.read(), `"inline"`)
			}
		})
	}
}

func TestConnUnknownCommandAndArity(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"FOO", "a", "b"}, "ERR unknown command 'FOO', with args beginning with: 'a' 'b' "},
		{[]string{"foo"}, "ERR unknown command 'foo', with args beginning with: "},
		{[]string{"FOO", "a\r\nb"}, "ERR unknown command 'FOO', with args beginning with: 'a  b' "},
		{[]string{"GET"}, "ERR wrong number of arguments for 'get' command"},
		{[]string{"GeT", "a", "b"}, "ERR wrong number of arguments for 'get' command"},
		{[]string{"SET", "a"}, "ERR wrong number of arguments for 'set' command"},
		{[]string{"MSET", "a", "1", "b"}, "ERR wrong number of arguments for 'mset' command"},
		{[]string{"TIME", "x"}, "ERR wrong number of arguments for 'time' command"},
		{[]string{"CONFIG"}, "ERR wrong number of arguments for 'config' command"},
		{[]string{"CONFIG", "GET"}, "ERR wrong number of arguments for 'config|get' command"},
		{[]string{"CONFIG", "FOO"}, "ERR unknown subcommand 'FOO'. Try CONFIG HELP."},
		{[]string{"CONFIG", "REWRITE"}, "ERR The server is running without a config file"},
		{[]string{"CONFIG", "REWRITE", "x"}, "ERR wrong number of arguments for 'config|rewrite' command"},
		{[]string{"CONFIG", "HELP", "x"}, "ERR wrong number of arguments for 'config|help' command"},
		{[]string{"LASTSAVE", "x"}, "ERR wrong number of arguments for 'lastsave' command"},
		{[]string{"COMMAND", "COUNT", "x"}, "ERR wrong number of arguments for 'command|count' command"},
		{[]string{"COMMAND", "FOO"}, "ERR unknown subcommand 'FOO'. Try COMMAND HELP."},
		// Standalone, as Redis without cluster-enabled.
		{[]string{"CLUSTER"}, "ERR wrong number of arguments for 'cluster' command"},
		{[]string{"CLUSTER", "FOO"}, "ERR unknown subcommand 'FOO'. Try CLUSTER HELP."},
		{[]string{"CLUSTER", "SLOTS", "x"}, "ERR wrong number of arguments for 'cluster|slots' command"},
		{[]string{"CLUSTER", "KEYSLOT"}, "ERR wrong number of arguments for 'cluster|keyslot' command"},
		{[]string{"CLUSTER", "KEYSLOT", "a"}, "ERR This instance has cluster support disabled"},
		{[]string{"cluster", "help"}, "ERR This instance has cluster support disabled"},
		{[]string{"CLUSTER", "SLOTS"}, "ERR This instance has cluster support disabled"},
		{[]string{"CLUSTER", "SHARDS"}, "ERR This instance has cluster support disabled"},
	} {
		wantErr(t, c.do(tc.args...), tc.err)
	}
	// Inline too.
	c.write("FOO a b\r\n")
	wantErr(t, c.read(), "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")
	want(t, c.do("PING"), `+"PONG"`)
}

// ---- INFO, CONFIG, TIME, COMMAND ---------------------------------------------

func TestConnInfo(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	want(t, c.do("SET", "a", "1"), `+"OK"`)
	want(t, c.do("SET", "b", "2"), `+"OK"`)
	dflt := []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "keyspace", "hotshards", "svc"}
	all := []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu",
		"commandstats", "errorstats", "latencystats", "keyspace", "hotshards", "svc"}
	for _, tc := range []struct {
		args     []string
		sections []string
	}{
		{nil, dflt},
		{[]string{"default"}, dflt},
		{[]string{"all"}, all},
		{[]string{"everything"}, all},
		{[]string{"persistence"}, []string{"persistence"}},
		{[]string{"replication"}, []string{"replication"}},
		{[]string{"commandstats"}, []string{"commandstats"}},
		{[]string{"server"}, []string{"server"}},
		{[]string{"SERVER"}, []string{"server"}},
		{[]string{"clients"}, []string{"clients"}},
		{[]string{"stats"}, []string{"stats"}},
		{[]string{"keyspace"}, []string{"keyspace"}},
		{[]string{"memory"}, []string{"memory"}},
		{[]string{"cpu"}, []string{"cpu"}},
		{[]string{"svc"}, []string{"svc"}},
		{[]string{"hotshards"}, []string{"hotshards"}},
		{[]string{"keyspace", "server"}, []string{"server", "keyspace"}}, // Redis' order, not the caller's
		{[]string{"server", "nosuch"}, []string{"server"}},
		{[]string{"nosuch"}, nil},
	} {
		v := c.do(append([]string{"INFO"}, tc.args...)...)
		if v.Type != '$' {
			t.Fatalf("INFO %v in RESP2: %s", tc.args, v)
		}
		s := text(t, v)
		secs, _ := parseInfo(t, s)
		if strings.Join(secs, ",") != strings.Join(tc.sections, ",") {
			t.Errorf("INFO %v sections %v, want %v", tc.args, secs, tc.sections)
		}
		if len(tc.sections) == 0 && s != "" {
			t.Errorf("INFO %v = %q, want empty", tc.args, s)
		}
		if strings.Contains(s, "\r\n\r\n\r\n") || strings.HasPrefix(s, "\r\n") {
			t.Errorf("INFO %v: blank line layout %q", tc.args, s)
		}
	}

	f := c.info()
	for k, w := range map[string]string{
		"redis_version": netloop.RedisVersion, "redis_mode": "standalone", "tcp_port": strconv.Itoa(ts.Port),
		"connected_clients": "1", "maxclients": "10000", "db0": "keys=2,expires=0,avg_ttl=0",
		"svc_shards": "4", "svc_drain_strategy": "run-to-completion",
	} {
		if f[k] != w {
			t.Errorf("INFO %s=%q, want %q", k, f[k], w)
		}
	}
	for _, k := range []string{"used_memory", "total_commands_processed", "total_connections_received",
		"instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes", "uptime_in_seconds", "process_id"} {
		infoInt(t, f, k)
	}
	if f["used_cpu_sys"] == "" || f["run_id"] == "" || len(f["run_id"]) != 40 {
		t.Errorf("INFO used_cpu_sys=%q run_id=%q", f["used_cpu_sys"], f["run_id"])
	}
	before := infoInt(t, f, "total_commands_processed")
	for range 10 {
		c.do("PING")
	}
	if after := infoInt(t, c.info("stats"), "total_commands_processed"); after < before+10 {
		t.Errorf("total_commands_processed %d -> %d after 10 PINGs", before, after)
	}

	// RESP3: a verbatim string.
	c.do("HELLO", "3")
	v := c.do("INFO", "server")
	if v.Type != '=' || !strings.HasPrefix(string(v.Str), "txt:# Server\r\n") {
		t.Fatalf("INFO in RESP3: %s", v)
	}
	if v := c.do("INFO", "nosuch"); v.Type != '=' || string(v.Str) != "txt:" {
		t.Fatalf("INFO nosuch in RESP3: %s", v)
	}
}

// TestConnCommandsProcessed: as in Redis, total_commands_processed counts
// commands that ran, not those refused before running (unknown command, wrong
// arity, NOAUTH).
func TestConnCommandsProcessed(t *testing.T) {
	ts := startServer(t)
	a, b := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	before := infoInt(t, b.info("stats"), "total_commands_processed")
	wantErr(t, a.do("NOSUCH"), "ERR unknown command 'NOSUCH', with args beginning with: ")
	wantErr(t, a.do("GET"), "ERR wrong number of arguments for 'get' command")
	want(t, a.do("PING"), `+"PONG"`)
	after := infoInt(t, b.info("stats"), "total_commands_processed")
	if after-before != 2 { // the first INFO and the PING
		t.Fatalf("total_commands_processed grew by %d, want 2 (INFO, PING)", after-before)
	}
}

func TestConnConfigGet(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	want(t, c.do("CONFIG", "GET", "save"), `["save" ""]`)
	want(t, c.do("CONFIG", "GET", "appendonly"), `["appendonly" "no"]`)
	want(t, c.do("config", "get", "MAXCLIENTS"), `["MAXCLIENTS" "10000"]`) // Redis 7.0 echoes the name as typed
	want(t, c.do("CONFIG", "GET", "nosuch"), `[]`)
	want(t, c.do("CONFIG", "RESETSTAT"), `+"OK"`)
	want(t, c.do("CONFIG", "HELP"), `[+"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" +"GET <pattern>" `+
		`+"    Return parameters matching the glob-like <pattern> and their values." +"SET <directive> <value>" `+
		`+"    Set the configuration <directive> to <value>." +"RESETSTAT" +"    Reset statistics reported by the INFO command." `+
		`+"REWRITE" +"    Rewrite the configuration file." +"HELP" +"    Prints this help."]`)
	m := pairs(t, c.do("CONFIG", "GET", "port", "maxclients", "max*"))
	if len(m) < 4 || text(t, m["port"]) != strconv.Itoa(ts.Port) || text(t, m["maxmemory"]) != "0" {
		t.Fatalf("CONFIG GET port maxclients max*: %v", m)
	}
	all := c.do("CONFIG", "GET", "*")
	m = pairs(t, all)
	for _, k := range []string{"save", "appendonly", "maxclients", "port", "databases", "timeout", "bind"} {
		if _, ok := m[k]; !ok {
			t.Errorf("CONFIG GET * lacks %s: %s", k, all)
		}
	}
	if text(t, m["databases"]) != "16" {
		t.Errorf("databases=%s", m["databases"])
	}
	// RESP3: a map.
	c.do("HELLO", "3")
	want(t, c.do("CONFIG", "GET", "save"), `{"save": ""}`)
	if v := c.do("CONFIG", "GET", "*"); v.Type != '%' || len(v.Elems) != len(all.Elems) {
		t.Fatalf("CONFIG GET * in RESP3: %s", v)
	}
	want(t, c.do("CONFIG", "GET", "nosuch"), `{}`)
}

func TestConnTimeAndCommand(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	v := c.do("TIME")
	if v.Type != '*' || len(v.Elems) != 2 || v.Elems[0].Type != '$' || v.Elems[1].Type != '$' {
		t.Fatalf("TIME: %s", v)
	}
	sec, err1 := strconv.ParseInt(string(v.Elems[0].Str), 10, 64)
	usec, err2 := strconv.ParseInt(string(v.Elems[1].Str), 10, 64)
	if err1 != nil || err2 != nil || usec < 0 || usec >= 1e6 {
		t.Fatalf("TIME: %s", v)
	}
	if d := time.Since(time.Unix(sec, usec*1000)); d < -2*time.Second || d > 2*time.Second {
		t.Fatalf("TIME is %v off", d)
	}

	cnt := c.do("COMMAND", "COUNT")
	all := c.do("COMMAND")
	if cnt.Type != ':' || cnt.Int < 30 || all.Type != '*' || int64(len(all.Elems)) != cnt.Int {
		t.Fatalf("COMMAND COUNT %s, COMMAND has %d entries", cnt, len(all.Elems))
	}
	// Byte for byte what redis-server 7.0.15 answers.
	c.write(multibulk("COMMAND", "INFO", "GET"))
	wantInfo := "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"
	c.expectBytes(wantInfo)
	c.write(multibulk("COMMAND", "DOCS", "GET"))
	c.expectBytes("*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n")
	want(t, c.do("COMMAND", "INFO", "nosuch"), "[(nil bulk)]")

	// LASTSAVE: nothing is saved, so the start time, as a Redis that has not
	// saved since it started.
	ls := c.do("LASTSAVE")
	if ls.Type != ':' || ls.Int > time.Now().Unix() || ls.Int < time.Now().Unix()-60 {
		t.Fatalf("LASTSAVE: %s", ls)
	}
	if up := infoInt(t, c.info("server"), "uptime_in_seconds"); time.Now().Unix()-ls.Int > up+1 {
		t.Fatalf("LASTSAVE %d is before the server started (uptime %d)", ls.Int, up)
	}
}

// expectBytes reads exactly len(s) bytes and compares them with s.
func (r *rawConn) expectBytes(s string) {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(s))
	n := copy(got, r.buf)
	r.buf = r.buf[n:]
	if _, err := io.ReadFull(r.rd, got[n:]); err != nil {
		r.t.Fatalf("reading %d bytes: %v (got %q)", len(s), err, got)
	}
	if string(got) != s {
		r.t.Fatalf("got  %q\nwant %q", got, s)
	}
}
