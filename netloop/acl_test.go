package netloop_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/netloop"
)

// A user's clients show it in CLIENT LIST and are disconnected by ACL
// DELUSER; AUTH and HELLO AUTH failures are logged and counted.
func TestACLClientsOfAUser(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@all", "-flushall"), `+"OK"`)

	a := dialRaw(t, ts.Addr)
	aID := a.id()
	wantErr(t, a.do("AUTH", "alice", "nope"), "WRONGPASS invalid username-password pair or user is disabled.")
	wantErr(t, a.do("HELLO", "3", "AUTH", "alice", "nope"), "WRONGPASS invalid username-password pair or user is disabled.")
	if v := a.do("HELLO", "3", "AUTH", "alice", "pw"); v.Type != '%' {
		t.Fatalf("HELLO 3 AUTH: %s", v)
	}
	if got := text(t, a.do("ACL", "WHOAMI")); got != "alice" {
		t.Fatalf("WHOAMI = %q", got)
	}
	wantErr(t, a.do("FLUSHALL"), "NOPERM this user has no permissions to run the 'flushall' command")
	if u := admin.clientList()[aID]["user"]; u != "alice" {
		t.Errorf("CLIENT LIST user=%q, want alice", u)
	}
	if u := admin.clientList()[admin.id()]["user"]; u != "default" {
		t.Errorf("CLIENT LIST of the admin: user=%q", u)
	}

	// The log: newest first, HELLO's failure then AUTH's, each with the
	// command as typed and the user it tried.
	log := admin.do("ACL", "LOG")
	if len(log.Elems) != 3 {
		t.Fatalf("ACL LOG has %d entries: %s", len(log.Elems), log)
	}
	for i, w := range []string{"command/flushall/alice", "auth/HELLO/alice", "auth/AUTH/alice"} {
		e := log.Elems[i].Elems
		if got := string(e[3].Str) + "/" + string(e[7].Str) + "/" + string(e[9].Str); got != w || string(e[5].Str) != "toplevel" {
			t.Errorf("ACL LOG entry %d: %s, want %s", i, log.Elems[i], w)
		}
	}
	fails := ts.Srv.AuthFailures()
	if fails[netloop.FailWrongPass] != 2 || fails[netloop.FailNoPermCommand] != 1 {
		t.Errorf("auth failures %v", fails)
	}

	wantErr(t, admin.do("CLIENT", "KILL", "USER", "nosuch"), "ERR No such user 'nosuch'")
	want(t, admin.do("CLIENT", "KILL", "USER", "alice"), "(integer) 1")
	a.expectClosed()

	b := dialRaw(t, ts.Addr)
	want(t, b.do("AUTH", "alice", "pw"), `+"OK"`)
	want(t, admin.do("ACL", "DELUSER", "alice"), "(integer) 1")
	b.expectClosed()
}

// requirepass is the default user's password: CONFIG SET changes it for new
// connections, and clearing it lets unauthenticated connections in.
func TestACLRequirePassIsDefaultUser(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("CONFIG", "SET", "requirepass", "s3cret"), `+"OK"`)
	c := dialRaw(t, ts.Addr)
	wantErr(t, c.do("GET", "x"), "NOAUTH Authentication required.")
	g := admin.do("ACL", "GETUSER", "default")
	if got := g.Elems[3].String(); !strings.Contains(got, acl.HashPassword("s3cret")) {
		t.Errorf("default user's passwords %s", got)
	}
	want(t, c.do("AUTH", "default", "s3cret"), `+"OK"`)
	want(t, admin.do("CONFIG", "SET", "requirepass", ""), `+"OK"`)
	d := dialRaw(t, ts.Addr)
	want(t, d.do("GET", "x"), "(nil bulk)")
	if ts.Srv.ACL().AuthRequired() {
		t.Error("auth still required")
	}
}

// Revoking a channel disconnects the user's subscribers to it, as Redis'
// ACLKillPubsubClientsIfNeeded; others stay.
func TestACLRevokedChannelClosesSubscriber(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("ACL", "SETUSER", "sub", "on", "nopass", "+@all", "~*", "&news.*", "&other"), `+"OK"`)
	s1 := dialRaw(t, ts.Addr)
	want(t, s1.do("AUTH", "sub", "x"), `+"OK"`)
	s1.do("SUBSCRIBE", "news.a")
	s2 := dialRaw(t, ts.Addr)
	want(t, s2.do("AUTH", "sub", "x"), `+"OK"`)
	s2.do("SUBSCRIBE", "other")
	wantErr(t, s2.do("SUBSCRIBE", "secret"), "NOPERM this user has no permissions to access one of the channels used as arguments")
	want(t, admin.do("ACL", "SETUSER", "sub", "resetchannels", "&other"), `+"OK"`)
	s1.expectClosed()
	want(t, admin.do("PUBLISH", "other", "hi"), "(integer) 1")
}

// ACL SAVE writes the aclfile and ACL LOAD reads it back, disconnecting the
// clients of the users it replaced.
func TestACLSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.acl")
	reg := config.New()
	if err := reg.Set("aclfile", path, config.SourceFlag); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.Params = reg }))
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("ACL", "SETUSER", "bob", "on", ">pw", "~b*", "+get"), `+"OK"`)
	want(t, admin.do("ACL", "SAVE"), `+"OK"`)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "user bob on #" + acl.HashPassword("pw") + " ~b* resetchannels -@all +get\nuser default on nopass ~* &* +@all\n"; string(data) != want {
		t.Errorf("saved %q, want %q", data, want)
	}
	b := dialRaw(t, ts.Addr)
	want(t, b.do("AUTH", "bob", "pw"), `+"OK"`)
	if err := os.WriteFile(path, []byte("user carol on nopass +@all\nuser bob on >pw2 +@all ~*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want(t, admin.do("ACL", "LOAD"), `+"OK"`)
	b.expectClosed()
	want(t, admin.do("ACL", "USERS"), `["bob" "carol" "default"]`)
	if err := os.WriteFile(path, []byte("user dave +nosuch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantErr(t, admin.do("ACL", "LOAD"), "ERR "+path+":1: Unknown command or category name in ACL. WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
}

// EXEC re-checks queued commands against rules changed since they were
// queued, with Redis 7.0's texts (compared with redis-server by hand).
func TestACLExecRechecks(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("ACL", "SETUSER", "m", "on", "nopass", "+@all", "~*", "&*"), `+"OK"`)
	a := dialRaw(t, ts.Addr)
	want(t, a.do("AUTH", "m", "x"), `+"OK"`)
	want(t, a.do("MULTI"), `+"OK"`)
	for _, cmd := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"PUBLISH", "c", "v"}, {"INCR", "j"}} {
		want(t, a.do(cmd...), `+"QUEUED"`)
	}
	want(t, admin.do("ACL", "SETUSER", "m", "-get", "resetkeys", "~j", "resetchannels"), `+"OK"`)
	v := a.do("EXEC")
	const pre = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "
	wants := []string{pre + "no permission to execute the command or subcommand", pre + "no permission to touch the specified keys", pre + "no permission to access one of the channels used as arguments", ""}
	if len(v.Elems) != 4 {
		t.Fatalf("EXEC: %s", v)
	}
	for i, w := range wants {
		if w == "" {
			if v.Elems[i].Type != ':' || v.Elems[i].Int != 1 {
				t.Errorf("EXEC[%d] = %s, want 1", i, v.Elems[i])
			}
		} else if v.Elems[i].Type != '-' || string(v.Elems[i].Str) != w {
			t.Errorf("EXEC[%d] = %s, want -%s", i, v.Elems[i], w)
		}
	}
	log := admin.do("ACL", "LOG")
	if len(log.Elems) != 3 || string(log.Elems[0].Elems[7].Str) != "c" || string(log.Elems[2].Elems[7].Str) != "get" || string(log.Elems[0].Elems[5].Str) != "multi" {
		t.Errorf("ACL LOG: %s", log)
	}
}

// A restricted user's pipeline mixes allowed and denied commands across
// shards: each gets its own reply, in order (denied commands never join a
// shard batch; they are answered on their own turn).
func TestACLPipelinedDenials(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	want(t, admin.do("ACL", "SETUSER", "p", "on", "nopass", "+@all", "-del", "~a*"), `+"OK"`)
	c := dialRaw(t, ts.Addr)
	want(t, c.do("AUTH", "p", "x"), `+"OK"`)
	var req strings.Builder
	const n = 300
	for i := range n {
		switch i % 3 {
		case 0:
			req.WriteString(multibulk("SET", fmt.Sprintf("a%d", i), "v"))
		case 1:
			req.WriteString(multibulk("SET", fmt.Sprintf("b%d", i), "v"))
		default:
			req.WriteString(multibulk("DEL", fmt.Sprintf("a%d", i-2)))
		}
	}
	c.write(req.String())
	for i := range n {
		v := c.read()
		var w string
		switch i % 3 {
		case 0:
			w = "+OK"
		case 1:
			w = "-NOPERM this user has no permissions to access one of the keys used as arguments"
		default:
			w = "-NOPERM this user has no permissions to run the 'del' command"
		}
		if got := string(v.Type) + string(v.Str); got != w {
			t.Fatalf("reply %d: %q, want %q", i, got, w)
		}
	}
	want(t, admin.do("DBSIZE"), "(integer) 100")
}
