package benchtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/proc"
)

// NeedTool returns the path of the executable name. If it is missing the
// test fails when the environment has CI=true (CI must not silently skip the
// benchmarks' tests) and is skipped otherwise, with the install hint.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found in PATH; install it with: apt-get install -y redis-server redis-tools (%v)", name, err)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: %s", msg)
	}
	t.Skip(msg)
	return ""
}

// RedisArgs are the arguments after --port/--bind that keep a test or
// baseline redis-server from touching the disk.
var RedisArgs = []string{"--save", "", "--appendonly", "no", "--daemonize", "no"}

// StartRedis starts a redis-server on a free 127.0.0.1 port, in a temporary
// directory, and stops it (process group) in t.Cleanup.
func StartRedis(t testing.TB) *proc.Server {
	t.Helper()
	path := NeedTool(t, "redis-server")
	var g proc.Group
	t.Cleanup(func() {
		if err := g.StopAll(5 * time.Second); err != nil {
			t.Errorf("stopping redis-server: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := proc.StartServer(ctx, &g, proc.ServerSpec{
		Name: "redis-server", Path: path, Args: RedisArgs, Dir: t.TempDir(),
	}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Command sends one command to addr and returns its reply in a compact text
// form: status and integer replies as their text ("OK", "42"), errors with a
// leading '-', bulk strings as their content, null as "(nil)". Arrays are
// not supported; tests here do not need them.
func Command(t testing.TB, addr string, args ...string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("%v: reading reply: %v", args, err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		t.Fatalf("%v: empty reply line", args)
	}
	switch line[0] {
	case '+', ':':
		return line[1:]
	case '-':
		return line
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			t.Fatalf("%v: bad bulk header %q", args, line)
		}
		if n < 0 {
			return "(nil)"
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatalf("%v: reading bulk: %v", args, err)
		}
		return string(buf[:n])
	}
	t.Fatalf("%v: unsupported reply %q", args, line)
	return ""
}
