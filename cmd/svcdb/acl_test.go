package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad users are refused at start (and by --check-config) naming the file,
// the line and the key; an aclfile together with [[acl.user]] is refused as
// Redis refuses it.
func TestACLConfigErrors(t *testing.T) {
	aclFile := writeTemp(t, "users.acl", "user alice on >pw +get\nuser bob +nosuch\n")
	for _, tc := range []struct{ toml, want string }{
		{"[server]\nport = 0\n\n[[acl.user]]\nname = \"ok\"\nrules = \"on >pw +@read\"\n\n[[acl.user]]\nname = \"bad\"\nrules = \"on allkeys ~x\"\n",
			":8: [acl.user] rules: Error loading ACL rule '~x' for the user named 'bad': Adding a pattern after the * pattern"},
		{"[acl]\naclfile = \"" + aclFile + "\"\n\n[[acl.user]]\nname = \"x\"\nrules = \"on\"\n",
			"at the same time an ACL file path (aclfile) is invalid"},
		{"[acl]\naclfile = \"" + aclFile + "\"\n",
			"aborting start-up because of ACL errors: " + aclFile + ":2: Unknown command or category name in ACL. WARNING: ACL errors detected"},
	} {
		cfg := writeTemp(t, "svcdb.toml", tc.toml)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"--config", cfg, "--check-config"}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tc.want)
		}
		if tc.want[0] == ':' && !strings.Contains(stderr.String(), cfg+tc.want) {
			t.Errorf("the error does not name %s: %q", cfg, stderr.String())
		}
	}
}

// Users from the TOML file authenticate on the running binary; the default
// user keeps requirepass.
func TestACLUsersFromConfig(t *testing.T) {
	bin := buildBinary(t)
	cfg := writeTemp(t, "svcdb.toml", "[server]\nrequirepass = \"dpw\"\n\n[http]\nenabled = false\n\n[[acl.user]]\nname = \"app\"\nrules = \"on >apppw ~app:* +@read\"\n")
	_, addr, _ := startProcess(t, bin, "--config", cfg)
	for _, tc := range []struct{ req, want string }{
		{"GET x\r\n", "-NOAUTH Authentication required.\r\n"},
		{"AUTH app apppw\r\nGET app:1\r\nGET other\r\nSET app:1 v\r\n", "+OK\r\n$-1\r\n-NOPERM this user has no permissions to access one of the keys used as arguments\r\n-NOPERM this user has no permissions to run the 'set' command\r\n"},
		{"AUTH dpw\r\nACL WHOAMI\r\n", "+OK\r\n$7\r\ndefault\r\n"},
	} {
		got := readN(t, addr, tc.req, len(tc.want))
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.req, got, tc.want)
		}
	}
}

// readN sends req on a new connection and reads until n bytes arrived or
// 5 s passed.
func readN(t *testing.T, addr, req string, n int) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, n)
	tmp := make([]byte, 4096)
	for len(buf) < n {
		m, err := c.Read(tmp)
		buf = append(buf, tmp[:m]...)
		if err != nil {
			break
		}
	}
	return string(buf)
}
