package command

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
)

// The golden test compares the table with a real Redis 7.0 server: it sends
// COMMAND INFO and COMMAND DOCS for every command we know, plus a list of
// COMMAND invocations, to redis-server and to Table.Reply, decodes both and
// compares them structurally, under RESP2 and RESP3.
//
// Where Redis iterates a dict (subcommands) entries are matched by name.
// Commands Redis has and we do not (none of the CLIENT subcommands since MONITOR and CLIENT PAUSE came) are ignored; the ones
// we have and Redis 7.0 does not are listed in notIn70.

// notIn70 are entries Redis 7.0 lacks on purpose.
var notIn70 = map[string]string{
	"client|setinfo": "added in Redis 7.2; clients (go-redis, redis-py) send it on connect",
	"status":         "svcdb's own: STATUS JSON is the status document of GET /status/json (svc.go)",
	"status|json":    "svcdb's own, see status",
	"status|help":    "svcdb's own, see status",
}

type redisConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRedis(t *testing.T, addr string, resp3 bool) *redisConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &redisConn{t: t, c: c, r: bufio.NewReader(c)}
	if resp3 {
		if v, _ := rc.do([][]byte{[]byte("HELLO"), []byte("3")}); v.kind != '%' {
			t.Fatalf("HELLO 3: %s", v)
		}
	}
	return rc
}

// do sends one command and returns the decoded reply and its raw bytes.
func (rc *redisConn) do(args [][]byte) (rv, []byte) {
	rc.t.Helper()
	var req []byte
	req = resp.AppendArrayHeader(req, len(args))
	for _, a := range args {
		req = resp.AppendBulk(req, a)
	}
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(req); err != nil {
		rc.t.Fatal(err)
	}
	var raw []byte
	v, err := readRV(rc.r, &raw)
	if err != nil {
		rc.t.Fatalf("%q: %v", args, err)
	}
	return v, raw
}

func TestGoldenRedis(t *testing.T) {
	addr := redistest.Start(t)
	tab := New()
	for _, resp3 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp%d", map[bool]int{false: 2, true: 3}[resp3]), func(t *testing.T) {
			rc := dialRedis(t, addr, resp3)
			g := &golden{t: t, tab: tab, rc: rc, resp3: resp3}
			g.infoAndDocs()
			g.replies()
			g.lists()
		})
	}
}

type golden struct {
	t     *testing.T
	tab   *Table
	rc    *redisConn
	resp3 bool
}

func (g *golden) ours(args [][]byte) rv {
	g.t.Helper()
	out := g.tab.Reply(nil, args, g.resp3)
	v, err := parseOne(out)
	if err != nil {
		g.t.Fatalf("%q: our reply %q does not parse: %v", args, out, err)
	}
	return v
}

func (g *golden) report(what string, diffs []string) {
	g.t.Helper()
	if len(diffs) > 20 {
		diffs = append(diffs[:20], fmt.Sprintf("... and %d more", len(diffs)-20))
	}
	for _, d := range diffs {
		g.t.Errorf("%s: %s", what, d)
	}
}

// infoAndDocs compares COMMAND INFO and COMMAND DOCS of every top-level
// command, subcommands included.
func (g *golden) infoAndDocs() {
	checked := 0
	for _, c := range g.tab.All() {
		if _, ours := notIn70[c.FullName]; ours {
			continue // nothing in Redis to compare with
		}
		args := [][]byte{[]byte("COMMAND"), []byte("INFO"), []byte(c.FullName)}
		want, _ := g.rc.do(args)
		got := g.ours(args)
		if len(want.elems) != 1 || want.elems[0].null {
			g.t.Errorf("redis does not know %q: %s", c.FullName, want)
			continue
		}
		g.report("COMMAND INFO "+c.FullName, g.compareInfo(c.FullName, got.elems[0], want.elems[0]))

		args[1] = []byte("DOCS")
		want, _ = g.rc.do(args)
		got = g.ours(args)
		if len(want.elems) != 2 || len(got.elems) != 2 {
			g.t.Errorf("COMMAND DOCS %s: got %s, want %s", c.FullName, got, want)
			continue
		}
		d := diffRV(c.FullName+".name", got.elems[0], want.elems[0])
		d = append(d, g.compareDocs(c.FullName, got.elems[1], want.elems[1])...)
		g.report("COMMAND DOCS "+c.FullName, d)
		checked++
	}
	g.t.Logf("compared COMMAND INFO and DOCS of %d commands (%d with subcommands)", checked, g.tab.Len())
}

// compareInfo compares one 10-element COMMAND INFO entry; subcommands
// (element 9) are matched by name.
func (g *golden) compareInfo(path string, got, want rv) []string {
	if len(got.elems) != 10 || len(want.elems) != 10 {
		return []string{fmt.Sprintf("%s: got %s, want %s", path, got, want)}
	}
	fields := []string{"name", "arity", "flags", "first", "last", "step", "acl", "tips", "keyspecs"}
	var d []string
	for i, f := range fields {
		d = append(d, diffRV(path+"."+f, got.elems[i], want.elems[i])...)
	}
	name := func(v rv) string {
		if len(v.elems) > 0 {
			return v.elems[0].str
		}
		return ""
	}
	return append(d, g.matchByName(path+".subcommands", got.elems[9], want.elems[9], false, name, g.compareInfo)...)
}

// compareDocs compares one doc map, in order; "subcommands" is matched by
// name.
func (g *golden) compareDocs(path string, got, want rv) []string {
	if got.kind != want.kind {
		return []string{fmt.Sprintf("%s: kind %q, want %q", path, got.kind, want.kind)}
	}
	gp, wp := got.pairs(), want.pairs()
	var gk, wk []string
	for _, p := range gp {
		gk = append(gk, p[0].str)
	}
	for _, p := range wp {
		wk = append(wk, p[0].str)
	}
	if !slices.Equal(gk, wk) {
		return []string{fmt.Sprintf("%s: keys %v, want %v", path, gk, wk)}
	}
	var d []string
	for i := range gp {
		p := path + "." + gk[i]
		if gk[i] == "subcommands" {
			d = append(d, g.matchByName(p, gp[i][1], wp[i][1], true, nil, g.compareDocs)...)
			continue
		}
		d = append(d, diffRV(p, gp[i][1], wp[i][1])...)
	}
	return d
}

// matchByName compares two collections of subcommand entries regardless of
// order: arrays of INFO entries (name taken by name()) or maps name→docs.
// Every entry of ours must exist in Redis (except notIn70); extra Redis
// entries are fine. The aggregate kinds must agree when both are non-empty.
func (g *golden) matchByName(path string, got, want rv, isMap bool, name func(rv) string,
	cmp func(string, rv, rv) []string) []string {
	type entry struct {
		name string
		v    rv
	}
	split := func(v rv) []entry {
		var out []entry
		if isMap {
			for _, p := range v.pairs() {
				out = append(out, entry{p[0].str, p[1]})
			}
			return out
		}
		for _, e := range v.elems {
			out = append(out, entry{name(e), e})
		}
		return out
	}
	ge, we := split(got), split(want)
	if len(ge) == 0 || len(we) == 0 {
		if len(ge) != len(we) || got.kind != want.kind {
			return []string{fmt.Sprintf("%s: got %s, want %s", path, got, want)}
		}
		return nil
	}
	if got.kind != want.kind {
		return []string{fmt.Sprintf("%s: kind %q, want %q", path, got.kind, want.kind)}
	}
	var d []string
	for _, o := range ge {
		i := slices.IndexFunc(we, func(e entry) bool { return e.name == o.name })
		if i < 0 {
			if _, ok := notIn70[o.name]; !ok {
				d = append(d, fmt.Sprintf("%s: %q unknown to redis", path, o.name))
			}
			continue
		}
		d = append(d, cmp(path+"["+o.name+"]", o.v, we[i].v)...)
	}
	return d
}

// replies compares whole COMMAND replies byte for byte: errors, help, and
// key extraction, none of which depend on which other commands exist.
func (g *golden) replies() {
	lines := []string{
		"COMMAND HELP", "command help", "COMMAND foo", "command Foo", "COMMAND COUNT x", "COMMAND HELP x",
		"COMMAND GETKEYS", "COMMAND GETKEYSANDFLAGS",
		"COMMAND INFO nosuch", "COMMAND INFO get nosuch set", "COMMAND INFO get|x client| Client|SetName CONFIG|GET",
		"COMMAND INFO client|setname|x", "COMMAND INFO cluster|nosuch cluster|myshardid",
		"COMMAND DOCS nosuch", "COMMAND DOCS get nosuch GET config|set",
		"COMMAND LIST foo", "COMMAND LIST FILTERBY x y", "COMMAND LIST FILTERBY pattern",
		"COMMAND LIST FILTERBY pattern x FILTERBY pattern y", "COMMAND LIST FILTERBY module foo",
		"COMMAND LIST FILTERBY aclcat nosuch", "COMMAND LIST FILTERBY pattern *|nosuch",
	}
	getkeys := []string{
		"get k", "GET k", "get", "get a b", "nosuch a", "object|encoding a", "object nosuch k", "object encoding k",
		"object freq", "object", "client", "client setname x", "client setname", "config get x", "ping", "ping x",
		"scan 0", "keys *", "set k v", "set k v GET", "set k v ex 10 get", "set k v EX 10", "setnx k v",
		"setex k 10 v", "psetex k 10 v", "getset k v", "getdel k", "getex k", "getex k PERSIST", "mget a b c",
		"mset a 1 b 2", "mset a 1 b", "msetnx a 1 b 2", "incr k", "decr k", "incrby k 1", "decrby k 1",
		"incrbyfloat k 1.5", "append k v", "strlen k", "getrange k 0 1", "setrange k 0 v", "substr k 0 1",
		"del a b c", "unlink a b", "exists a b", "type k", "touch a b", "rename a b", "renamenx a b",
		"copy a b", "copy a b DB 1 REPLACE", "expire k 10", "expire k 10 NX", "pexpire k 10", "expireat k 10",
		"pexpireat k 10", "ttl k", "pttl k", "expiretime k", "pexpiretime k", "persist k", "object refcount k",
		"object idletime k", "object freq k", "object help", "dbsize", "flushdb", "time",
		"cluster", "cluster info", "cluster nosuch", "cluster keyslot k", "cluster countkeysinslot 0",
		"cluster getkeysinslot 0 10", "cluster addslotsrange 0 10", "cluster setslot 0 node x",
	}
	for _, l := range getkeys {
		lines = append(lines, "COMMAND GETKEYS "+l, "COMMAND GETKEYSANDFLAGS "+l)
	}
	for _, l := range lines {
		args := argv(l)
		_, want := g.rc.do(args)
		got := g.tab.Reply(nil, args, g.resp3)
		if !bytes.Equal(got, want) {
			g.t.Errorf("%s:\n got %q\nwant %q", l, got, want)
		}
	}
}

// lists compares COMMAND LIST and COMMAND (all) as sets restricted to our
// table: every name Redis lists that we know must be in our list, and ours
// must all be Redis' (except notIn70).
func (g *golden) lists() {
	for _, l := range []string{
		"COMMAND LIST", "COMMAND LIST FILTERBY PATTERN cl*", "COMMAND LIST FILTERBY pattern *EXPIRE*",
		"COMMAND LIST FILTERBY PATTERN config|[g-r]*", "COMMAND LIST FILTERBY PATTERN ?et",
		"COMMAND LIST FILTERBY PATTERN *[^a-z]*", "COMMAND LIST FILTERBY PATTERN *\\|*",
		"COMMAND LIST FILTERBY ACLCAT keyspace", "COMMAND LIST FILTERBY aclcat STRING",
		"COMMAND LIST FILTERBY ACLCAT connection", "COMMAND LIST FILTERBY ACLCAT fast",
		"COMMAND LIST FILTERBY ACLCAT dangerous", "COMMAND LIST FILTERBY ACLCAT write",
		"COMMAND LIST FILTERBY ACLCAT admin", "COMMAND LIST FILTERBY ACLCAT slow",
		"COMMAND LIST FILTERBY PATTERN cluster|*", "COMMAND LIST FILTERBY PATTERN *-*",
	} {
		args := argv(l)
		want, _ := g.rc.do(args)
		got := g.ours(args)
		g.compareNameSets(l, got.strs(), want.strs())
	}
	want, _ := g.rc.do(argv("COMMAND"))
	got := g.ours(argv("COMMAND"))
	var wn, gn []string
	for _, e := range want.elems {
		wn = append(wn, e.elems[0].str)
	}
	for _, e := range got.elems {
		gn = append(gn, e.elems[0].str)
	}
	g.compareNameSets("COMMAND", gn, wn)
	if n, _ := g.rc.do(argv("COMMAND COUNT")); int(n.n) != len(want.elems) {
		g.t.Errorf("redis COMMAND COUNT %d but COMMAND lists %d", n.n, len(want.elems))
	}
}

func (g *golden) compareNameSets(what string, got, want []string) {
	g.t.Helper()
	var missing, extra []string
	for _, w := range want {
		if g.tab.LookupFullName([]byte(w)) != nil && !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, o := range got {
		if _, ok := notIn70[o]; !ok && !slices.Contains(want, o) {
			extra = append(extra, o)
		}
	}
	if len(missing)+len(extra) > 0 {
		g.t.Errorf("%s: missing %v, not in redis %v", what, missing, extra)
	}
	if len(got) == 0 && len(want) > 0 && !strings.Contains(what, "nosuch") {
		g.t.Errorf("%s: we list nothing, redis lists %d", what, len(want))
	}
}
