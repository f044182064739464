package command

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func reply(t *testing.T, tab *Table, line string, resp3 bool) rv {
	t.Helper()
	out := tab.Reply(nil, argv(line), resp3)
	v, err := parseOne(out)
	if err != nil {
		t.Fatalf("%s: reply %q does not parse: %v", line, out, err)
	}
	return v
}

func TestReplyErrors(t *testing.T) {
	tab := New()
	for _, tc := range []struct{ line, want string }{
		{"COMMAND foo", "-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n"},
		{"command Foo", "-ERR unknown subcommand 'Foo'. Try COMMAND HELP.\r\n"},
		{"COMMAND COUNT x", "-ERR wrong number of arguments for 'command|count' command\r\n"},
		{"COMMAND GETKEYS", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND GETKEYS get", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND HELP x", "-ERR wrong number of arguments for 'command|help' command\r\n"},
		{"COMMAND GETKEYS nosuch a", "-ERR Invalid command specified\r\n"},
		{"COMMAND GETKEYS object|encoding a", "-ERR Invalid command specified\r\n"},
		{"COMMAND GETKEYS object nosuch k", "-ERR Invalid command specified\r\n"},
		{"COMMAND GETKEYS get a b", "-ERR Invalid number of arguments specified for command\r\n"},
		{"COMMAND GETKEYS object freq", "-ERR Invalid number of arguments specified for command\r\n"},
		{"COMMAND GETKEYS ping x", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYS client setname x", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYS client setname", "-ERR The command has no key arguments\r\n"},
		{"COMMAND LIST foo", "-ERR syntax error\r\n"},
		{"COMMAND LIST FILTERBY x y", "-ERR syntax error\r\n"},
		{"COMMAND LIST FILTERBY pattern", "-ERR syntax error\r\n"},
		{"COMMAND LIST FILTERBY pattern x FILTERBY pattern y", "-ERR syntax error\r\n"},
	} {
		if got := string(tab.Reply(nil, argv(tc.line), false)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.line, got, tc.want)
		}
	}

	// The subcommand is cut at 128 bytes and at NUL, CR/LF become spaces.
	long := strings.Repeat("x", 200)
	got := string(tab.Reply(nil, [][]byte{[]byte("command"), []byte(long)}, false))
	if want := "-ERR unknown subcommand '" + long[:128] + "'. Try COMMAND HELP.\r\n"; got != want {
		t.Errorf("long subcommand: got %q", got)
	}
	got = string(tab.Reply(nil, [][]byte{[]byte("command"), []byte("a\r\nb\x00c")}, false))
	if want := "-ERR unknown subcommand 'a  b'. Try COMMAND HELP.\r\n"; got != want {
		t.Errorf("CRLF subcommand: got %q, want %q", got, want)
	}
}

func TestReplyCountAndAll(t *testing.T) {
	tab := New()
	// The number of top-level commands, as listed in table_test.go.
	if got, want := string(tab.Reply(nil, argv("COMMAND COUNT"), false)), fmt.Sprintf(":%d\r\n", len(wantNames)); got != want {
		t.Errorf("COUNT = %q, want %q (the number of top-level commands)", got, want)
	}
	for _, resp3 := range []bool{false, true} {
		all := reply(t, tab, "COMMAND", resp3)
		info := reply(t, tab, "COMMAND INFO", resp3)
		if len(all.elems) != len(tab.All()) || diffRV("", all, info) != nil {
			t.Errorf("resp3=%v: COMMAND has %d entries; COMMAND INFO differs: %v", resp3, len(all.elems), diffRV("", all, info))
		}
		for i, c := range tab.All() {
			if all.elems[i].elems[0].str != c.FullName {
				t.Errorf("entry %d is %s, want %s", i, all.elems[i].elems[0].str, c.FullName)
			}
		}
	}
}

func TestReplyInfo(t *testing.T) {
	tab := New()
	// RESP2: unknown names are null bulk strings, maps are flat arrays.
	if got := string(tab.Reply(nil, argv("COMMAND INFO nosuch"), false)); got != "*1\r\n$-1\r\n" {
		t.Errorf("INFO nosuch RESP2 = %q", got)
	}
	if got := string(tab.Reply(nil, argv("COMMAND INFO nosuch"), true)); got != "*1\r\n_\r\n" {
		t.Errorf("INFO nosuch RESP3 = %q", got)
	}
	want := "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n" +
		"*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n" +
		"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n" +
		"$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n" +
		"*0\r\n"
	if got := string(tab.Reply(nil, argv("COMMAND INFO GET"), false)); got != want {
		t.Errorf("INFO GET RESP2:\n got %q\nwant %q", got, want)
	}
	// RESP3: sets for flags/categories/tips/specs, maps for specs, an empty
	// set (not array) for "no subcommands", as Redis 7.0.
	v := reply(t, tab, "COMMAND INFO get client|setname", true)
	get := v.elems[0]
	for i, k := range []byte{'$', ':', '~', ':', ':', ':', '~', '~', '~', '~'} {
		if get.elems[i].kind != k {
			t.Errorf("get element %d kind %q, want %q", i, get.elems[i].kind, k)
		}
	}
	if ks := get.elems[8].elems[0]; ks.kind != '%' || len(ks.elems) != 6 {
		t.Errorf("get key spec = %s", ks)
	}
	if got := v.elems[1].elems[0].str; got != "client|setname" {
		t.Errorf("INFO client|setname name = %q", got)
	}
	client := reply(t, tab, "COMMAND INFO client", true).elems[0]
	if subs := client.elems[9]; subs.kind != '*' || len(subs.elems) != 17 {
		t.Errorf("client subcommands = %s", subs)
	}
}

func TestReplyDocs(t *testing.T) {
	tab := New()
	if got := string(tab.Reply(nil, argv("COMMAND DOCS nosuch"), false)); got != "*0\r\n" {
		t.Errorf("DOCS nosuch RESP2 = %q", got)
	}
	if got := string(tab.Reply(nil, argv("COMMAND DOCS nosuch"), true)); got != "%0\r\n" {
		t.Errorf("DOCS nosuch RESP3 = %q", got)
	}
	v := reply(t, tab, "COMMAND DOCS get nosuch GET substr", true)
	if v.kind != '%' || len(v.elems) != 6 {
		t.Fatalf("DOCS = %s", v)
	}
	if got := []string{v.elems[0].str, v.elems[2].str, v.elems[4].str}; !slices.Equal(got, []string{"get", "get", "substr"}) {
		t.Errorf("DOCS names = %v", got)
	}
	var keys []string
	for _, p := range v.elems[5].pairs() {
		keys = append(keys, p[0].str)
	}
	if want := []string{"summary", "since", "group", "complexity", "doc_flags", "deprecated_since", "replaced_by", "arguments"}; !slices.Equal(keys, want) {
		t.Errorf("substr doc keys = %v, want %v", keys, want)
	}
	all := reply(t, tab, "COMMAND DOCS", false)
	if len(all.elems) != 2*len(tab.All()) {
		t.Errorf("DOCS (all) has %d elements, want %d", len(all.elems), 2*len(tab.All()))
	}
	client := reply(t, tab, "COMMAND DOCS client", false).elems[1]
	for _, p := range client.pairs() {
		if p[0].str == "subcommands" && (p[1].kind != '*' || len(p[1].elems) != 34 || p[1].elems[0].str != "client|caching") {
			t.Errorf("client doc subcommands = %s", p[1])
		}
	}
}

func TestReplyList(t *testing.T) {
	tab := New()
	list := func(line string) []string { return reply(t, tab, line, false).strs() }

	all := list("COMMAND LIST")
	if len(all) != tab.Len() {
		t.Errorf("LIST has %d names, want %d", len(all), tab.Len())
	}
	if !slices.Contains(all, "client|setname") || !slices.Contains(all, "get") {
		t.Errorf("LIST lacks names: %v", all)
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"COMMAND LIST FILTERBY PATTERN cl*", []string{"client", "client|caching", "client|getname", "client|getredir", "client|help", "client|id", "client|info",
			"client|kill", "client|list", "client|no-evict", "client|pause", "client|reply", "client|setinfo", "client|setname", "client|tracking", "client|trackinginfo",
			"client|unblock", "client|unpause",
			"cluster", "cluster|addslots", "cluster|addslotsrange", "cluster|bumpepoch", "cluster|count-failure-reports",
			"cluster|countkeysinslot", "cluster|delslots", "cluster|delslotsrange", "cluster|failover", "cluster|flushslots",
			"cluster|forget", "cluster|getkeysinslot", "cluster|help", "cluster|info", "cluster|keyslot", "cluster|links",
			"cluster|meet", "cluster|myid", "cluster|nodes", "cluster|replicas", "cluster|replicate", "cluster|reset",
			"cluster|saveconfig", "cluster|set-config-epoch", "cluster|setslot", "cluster|shards", "cluster|slaves",
			"cluster|slots"}},
		{"COMMAND LIST FILTERBY pattern *EXPIRE*", []string{"expire", "expireat", "expiretime", "pexpire", "pexpireat", "pexpiretime"}},
		{"COMMAND LIST FILTERBY PATTERN config|[g-r]*", []string{"config|get", "config|help", "config|resetstat", "config|rewrite"}},
		{"COMMAND LIST FILTERBY PATTERN ?et", []string{"get", "set"}},
		{"COMMAND LIST FILTERBY ACLCAT keyspace", []string{"copy", "del", "exists", "expire", "expireat", "expiretime",
			"keys", "object|encoding", "object|freq", "object|help", "object|idletime", "object|refcount", "persist", "pexpire", "pexpireat",
			"pexpiretime", "pttl", "randomkey", "rename", "renamenx", "scan", "touch", "ttl", "type", "unlink", "dbsize", "flushall", "flushdb",
			"move", "swapdb", "dump", "restore", "migrate"}},
		{"COMMAND LIST FILTERBY aclcat nosuch", nil},
		{"COMMAND LIST FILTERBY MODULE foo", nil},
	} {
		got := list(tc.line)
		a, b := slices.Clone(got), slices.Clone(tc.want)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%s:\n got %v\nwant %v", tc.line, got, tc.want)
		}
	}
}

func TestReplyGetKeys(t *testing.T) {
	tab := New()
	for _, tc := range []struct{ line, want string }{
		{"COMMAND GETKEYS GET k", "*1\r\n$1\r\nk\r\n"},
		{"COMMAND GETKEYS mset a 1 b 2", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS object encoding k", "*1\r\n$1\r\nk\r\n"},
		{"COMMAND GETKEYS copy a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYSANDFLAGS set k v", "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS set k v get", "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS copy a b", "*2\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2\r\n+OW\r\n+update\r\n"},
	} {
		if got := string(tab.Reply(nil, argv(tc.line), false)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.line, got, tc.want)
		}
	}
	got := string(tab.Reply(nil, argv("COMMAND GETKEYSANDFLAGS del a"), true))
	if want := "*1\r\n*2\r\n$1\r\na\r\n~2\r\n+RM\r\n+delete\r\n"; got != want {
		t.Errorf("GETKEYSANDFLAGS del RESP3:\n got %q\nwant %q", got, want)
	}
}

func TestReplyHelp(t *testing.T) {
	v := reply(t, New(), "COMMAND HELP", true)
	if len(v.elems) != 21 || v.elems[0].kind != '+' || v.elems[20].str != "    Prints this help." {
		t.Errorf("HELP = %s", v)
	}
}

func TestReplyAppends(t *testing.T) {
	tab := New()
	out := tab.Reply([]byte("+OK\r\n"), argv("COMMAND COUNT"), false)
	if vs, err := parseAll(out); err != nil || len(vs) != 2 || vs[0].str != "OK" {
		t.Errorf("Reply did not append: %q %v", out, err)
	}
}
