package scripting

import (
	"testing"

	"github.com/svcdb/svcdb/core/resp"
)

// echoCaller replies to every command with its argv as an array of bulk
// strings, and refuses "nosuch" as Redis refuses an unknown command.
type echoCaller struct{}

func (echoCaller) Call(argv [][]byte, resp3 bool, repl int, dst []byte) ([]byte, string) {
	if string(argv[0]) == "nosuch" {
		return dst, "Unknown Redis command called from script"
	}
	if string(argv[0]) == "fail" {
		return append(dst, "-WRONGTYPE bad\r\n"...), ""
	}
	dst = resp.AppendArrayHeader(dst, len(argv))
	for _, a := range argv {
		dst = resp.AppendBulk(dst, a)
	}
	return dst, ""
}

func (echoCaller) CheckACL(argv [][]byte) (bool, bool) { return true, true }

func TestRunReplies(t *testing.T) {
	e := New(Options{})
	for _, tc := range []struct{ src, want string }{
		{"return 1", ":1\r\n"},
		{"return 3.99", ":3\r\n"},
		{"return 'x'", "$1\r\nx\r\n"},
		{"return {1,2,nil,4}", "*2\r\n:1\r\n:2\r\n"},
		{"return true", ":1\r\n"},
		{"return false", "$-1\r\n"},
		{"return nil", "$-1\r\n"},
		{"return {ok='fine'}", "+fine\r\n"},
		{"return redis.call('set', 'k', 1.5)", "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$3\r\n1.5\r\n"},
		{"return a", "-ERR user_script:1: Script attempted to access nonexistent global variable 'a' script: bbfcd1ececc90deec823f7fb730e4bfb2a4ba625, on @user_script:1.\r\n"},
		{"a = 5", "-ERR user_script:1: Attempt to modify a readonly table script: 18caf8c012aa13c49942060b9653c687e0dcabec, on @user_script:1.\r\n"},
		{"redis.call = nil", "-ERR user_script:1: Attempt to modify a readonly table script: 2786c35ed73d3860851cf52e0b5dfbbc0bdb4803, on @user_script:1.\r\n"},
		{"return redis.call('nosuch')", "-ERR Unknown Redis command called from script script: 206396248e12c6e742fd7296250433c8d7343b74, on @user_script:1.\r\n"},
		{"error({err='MY boom'})", "-MY boom script: 4c2ee35ef37c857625d6ec6d812eab72377cfa97, on @user_script:1.\r\n"},
		{"error('boom')", "-ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on @user_script:1.\r\n"},
		{"return redis.error_reply('x y')", "-x y\r\n"},
		{"return tostring(math.random())", "$16\r\n0.39646477363839\r\n"},
		{"return redis.pcall('fail')", "-WRONGTYPE bad\r\n"},
		{"local ok, e = pcall(redis.call, 'fail') return e", "$13\r\nWRONGTYPE bad\r\n"},
		{"return os", "-ERR user_script:1: Script attempted to access nonexistent global variable 'os' script: f03b5ad6e7d58786b6a5e879efbea4a4408f5c2f, on @user_script:1.\r\n"},
	} {
		s, err := e.Load([]byte(tc.src))
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		got := string(e.Run(s, nil, nil, echoCaller{}, false, nil))
		if got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
}

func TestRunDeepRecursion(t *testing.T) {
	e := New(Options{})
	s, err := e.Load([]byte("local function f() return f() + 1 end return f()"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(e.Run(s, nil, nil, echoCaller{}, false, nil))
	want := "-ERR user_script:1: stack overflow script: 6ab18391d60e7e7bcbf4a881fd9b0c865dade0c6, on @user_script:1.\r\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// the VM is usable afterwards
	s, _ = e.Load([]byte("return 7"))
	if got := string(e.Run(s, nil, nil, echoCaller{}, false, nil)); got != ":7\r\n" {
		t.Fatalf("after overflow: %q", got)
	}
}
