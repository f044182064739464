package acl

import (
	"errors"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/command"
)

var table = command.New()

func args(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func mustSet(t *testing.T, a *ACL, name, rules string) *User {
	t.Helper()
	u, _, err := a.SetUser(name, strings.Fields(rules))
	if err != nil {
		t.Fatalf("SETUSER %s %s: %v", name, rules, err)
	}
	return u
}

// The expected lines are what redis-server 7.0.15 answers to ACL LIST after
// the same ACL SETUSER.
func TestDescribeMatchesRedis(t *testing.T) {
	for _, tc := range []struct{ rules, want string }{
		{"on nopass -@all +set ~a* &ch", "on nopass ~a* resetchannels &ch -@all +set"},
		{"on nopass +@all -@dangerous %R~r* %W~w* (+get ~x)", "on nopass %R~r* %W~w* resetchannels +@all -@dangerous (~x resetchannels -@all +get)"},
		{"reset", "off sanitize-payload resetchannels -@all"},
		{"-@all +select|0 +config|get", "off resetchannels -@all +config|get +select|0"},
		{"", "off resetchannels -@all"},
		{"on >a >b <a allkeys allchannels allcommands", "on #3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d ~* &* +@all"},
		{"%RW~k* %R~k* ~* -@all", "off ~* resetchannels -@all"},
		{"+@all -config|set", "off resetchannels +@all -config|set"},
	} {
		a := New(table)
		u := mustSet(t, a, "u", tc.rules)
		if got := a.DescribeUser(u); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.rules, got, tc.want)
		}
	}
	a := New(table)
	if got := a.List(); len(got) != 1 || got[0] != "user default on nopass ~* &* +@all" {
		t.Errorf("initial ACL LIST = %q", got)
	}
}

func TestRuleErrors(t *testing.T) {
	a := New(table)
	for _, tc := range []struct {
		rules string
		want  error
	}{
		{"+nosuch", ErrUnknownCommand},
		{"+@nosuch", ErrUnknownCommand},
		{"-select|0", ErrUnknownCommand},
		{"+config|get|x", ErrFirstArgOfSub},
		{"+select|", ErrSyntax},
		{"bogus", ErrSyntax},
		{"%X~a", ErrSyntax},
		{"allkeys ~a", ErrKeyAfterAll},
		{"allchannels &a", ErrChannelAfterAll},
		{"<nosuch", ErrNoSuchPassword},
		{"#abc", ErrBadHash},
		{"!" + strings.Repeat("A", 64), ErrBadHash},
		{"(~a +nosuch)", ErrUnknownCommand},
	} {
		_, _, err := a.SetUser("e", strings.Fields(tc.rules))
		if !errors.Is(err, tc.want) {
			t.Errorf("%q: err %v, want %v", tc.rules, err, tc.want)
		}
	}
	if a.User("e") != nil {
		t.Error("a refused SETUSER created the user")
	}
	_, _, err := a.SetUser("e", []string{"(~a", "+get"})
	if err == nil || err.Error() != "unmatched parenthesis in acl selector starting at '(~a'" {
		t.Errorf("unmatched: %v", err)
	}
}

func TestCheckMatchesRedisDryrun(t *testing.T) {
	a := New(table)
	u := mustSet(t, a, "u", "on nopass -@all +set +get +publish +subscribe +psubscribe ~a* %R~r* %W~w* &ch*")
	for _, tc := range []struct {
		cmd    string
		reason Reason
		idx    int
	}{
		{"get a1", OK, 0},
		{"get b", DeniedKey, 1},
		{"del a", DeniedCommand, 0},
		{"get r1", OK, 0},
		{"set r1 x", DeniedKey, 1},
		{"set w1 x", OK, 0},
		{"get w1", DeniedKey, 1},
		{"publish chan x", OK, 0},
		{"publish other x", DeniedChannel, 1},
		{"subscribe ch1 ch2 zz", DeniedChannel, 3},
		{"psubscribe ch*", OK, 0},
		{"psubscribe ch1*", DeniedChannel, 1},
		{"auth x", OK, 0}, // no_auth commands are always allowed
	} {
		argv := args(tc.cmd)
		cmd := table.Lookup(argv[0])
		r, idx := u.Check(cmd, argv)
		if r != tc.reason || idx != tc.idx {
			t.Errorf("%s: %v %d, want %v %d", tc.cmd, r, idx, tc.reason, tc.idx)
		}
	}
	if !a.DefaultUser().AllowsAll() || u.AllowsAll() {
		t.Error("AllowsAll wrong")
	}
}

func TestAuthenticate(t *testing.T) {
	a := New(table)
	if a.AuthRequired() || a.DefaultUserHasPassword() {
		t.Fatal("fresh ACL needs a password")
	}
	a.SetRequirePass("secret")
	if !a.AuthRequired() || !a.DefaultUserHasPassword() {
		t.Fatal("requirepass not applied")
	}
	if a.Authenticate([]byte("default"), []byte("secret")) == nil || a.Authenticate([]byte("default"), []byte("secre")) != nil {
		t.Error("default password check")
	}
	mustSet(t, a, "off1", ">pw")
	if a.Authenticate([]byte("off1"), []byte("pw")) != nil {
		t.Error("an off user authenticated")
	}
	mustSet(t, a, "np", "on nopass")
	if a.Authenticate([]byte("np"), []byte("anything")) == nil {
		t.Error("nopass user refused")
	}
	a.SetRequirePass("")
	if a.AuthRequired() {
		t.Error("empty requirepass still requires auth")
	}
}

func TestLogGroupsAndTrims(t *testing.T) {
	a := New(table)
	a.SetLogMaxLen(3)
	for i := range 5 {
		a.Log(LogEntry{Reason: DeniedKey, Object: "k" + string(rune('0'+i)), Username: "u", CTimeMs: 1000})
	}
	a.Log(LogEntry{Reason: DeniedKey, Object: "k3", Username: "u", CTimeMs: 2000, ClientInfo: "last"})
	e := a.LogEntries(-1)
	if len(e) != 3 || e[0].Object != "k3" || e[0].Count != 2 || e[0].ClientInfo != "last" || e[1].Object != "k4" {
		t.Errorf("log = %+v", e)
	}
}

func TestGenPass(t *testing.T) {
	for _, bits := range []int64{1, 4, 5, 256, 4096} {
		p, ok := GenPass(bits)
		if !ok || int64(len(p)) != (bits+3)/4 {
			t.Errorf("GenPass(%d) = %q", bits, p)
		}
	}
	if _, ok := GenPass(0); ok {
		t.Error("0 bits accepted")
	}
}
