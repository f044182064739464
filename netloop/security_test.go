package netloop_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/netloop"
)

const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", ` +
	"you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// TestDebugCommandGateMatchesRedis: with enable-debug-command no (the
// default of both), the same DEBUG scripts give the same replies from svcdb
// and a real redis-server 7.0: refused before AUTH, inside MULTI (which then
// aborts), counted as rejected; CONFIG SET cannot turn it on.
func TestDebugCommandGateMatchesRedis(t *testing.T) {
	raddr := redistest.Start(t)
	want(t, dialRaw(t, raddr).do("CONFIG", "SET", "requirepass", "pw"), `+"OK"`)
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.RequirePass = "pw" }))
	scripts := [][][]string{
		// Refused before authentication, as Redis' processCommand.
		{{"DEBUG", "SLEEP", "0"}, {"DEBUG", "RELOAD"}, {"debug", "object", "k"}, {"DEBUG"}},
		{{"AUTH", "pw"}, {"DEBUG", "SLEEP", "0"}, {"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, {"DEBUG", "JMAP"},
			{"CONFIG", "GET", "enable-debug-command"},
			{"CONFIG", "SET", "enable-debug-command", "yes"},
			{"CONFIG", "SET", "enable-debug-command", "local"},
			{"MULTI"}, {"SET", "k", "v"}, {"DEBUG", "SLEEP", "0"}, {"EXEC"}, {"EXISTS", "k"}},
	}
	for _, script := range scripts {
		rc, sc := dialRaw(t, raddr), dialRaw(t, ts.Addr)
		for _, cmd := range script {
			r, s := rc.do(cmd...), sc.do(cmd...)
			if r.String() != s.String() {
				t.Errorf("%q: redis %s, svcdb %s", cmd, r, s)
			}
		}
	}
	// Exactly the text above, for the other tests of this file.
	wantErr(t, dialRaw(t, ts.Addr).do("DEBUG", "SLEEP", "0"), errDebugNotAllowed)
	// As Redis: a refused DEBUG is a rejected call in INFO commandstats.
	c := dialRaw(t, ts.Addr)
	c.do("AUTH", "pw")
	if info := text(t, c.do("INFO", "commandstats")); !strings.Contains(info, "cmdstat_debug:calls=0,") || !strings.Contains(info, "rejected_calls=") {
		t.Errorf("INFO commandstats: %s", info)
	}

	// redis-cli prints the same for both.
	cli := needTool(t, "redis-cli")
	run := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		out, _ := exec.Command(cli, "-h", host, "-p", port, "-a", "pw", "--no-auth-warning", "DEBUG", "SLEEP", "0").CombinedOutput()
		return string(out)
	}
	if r, s := run(raddr), run(ts.Addr); r != s || !strings.Contains(s, "DEBUG command not allowed") {
		t.Errorf("redis-cli DEBUG SLEEP 0: redis %q, svcdb %q", r, s)
	}
}

// TestDebugOperationalSubcommandsStayAvailable: DEBUG HOTSHARDS, BUNDLE and
// HELP are svcdb's published operational subcommands and answer whatever
// enable-debug-command says (Redis has no such subcommands).
func TestDebugOperationalSubcommandsStayAvailable(t *testing.T) {
	ts := startServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer rdb.Close()
	ctx := context.Background()
	if v, err := rdb.Do(ctx, "DEBUG", "HOTSHARDS").Result(); err != nil || v == nil {
		t.Errorf("DEBUG HOTSHARDS: %v %v", v, err)
	}
	if err := rdb.Do(ctx, "DEBUG", "BUNDLE", "LIST").Err(); err == nil || err.Error() != "ERR no diagnostic bundle service in this process" {
		t.Errorf("DEBUG BUNDLE LIST reached the gate or the wrong handler: %v", err)
	}
	if v, err := rdb.Do(ctx, "DEBUG", "HELP").StringSlice(); err != nil || len(v) < 2 {
		t.Errorf("DEBUG HELP: %v %v", v, err)
	}
	for _, args := range [][]any{{"DEBUG", "SLEEP", "0"}, {"DEBUG", "OBJECT", "k"}, {"DEBUG", "RELOAD"}} {
		if err := rdb.Do(ctx, args...).Err(); err == nil || err.Error() != errDebugNotAllowed {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestDebugCommandYesAndLocal: yes lets every client run DEBUG SLEEP; local
// only clients whose peer is a loopback address. The remote client here
// dials from 127.0.0.2 and the server's LocalPeer hook counts only
// 127.0.0.1 as local (the real-network version is in cmd/svcdb).
func TestDebugCommandYesAndLocal(t *testing.T) {
	ctx := context.Background()
	yes := startServer(t, withDebugCommand("yes"))
	if err := redis.NewClient(&redis.Options{Addr: yes.Addr}).Do(ctx, "DEBUG", "SLEEP", "0").Err(); err != nil {
		t.Errorf("yes: DEBUG SLEEP 0: %v", err)
	}
	only1 := func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	local := startServer(t, withDebugCommand("local"), withNetConfig(func(c *netloop.Config) {
		c.LocalPeer = only1
		c.ProtectedMode = "no"
	}))
	if err := redis.NewClient(&redis.Options{Addr: local.Addr}).Do(ctx, "DEBUG", "SLEEP", "0").Err(); err != nil {
		t.Errorf("local from 127.0.0.1: DEBUG SLEEP 0: %v", err)
	}
	remote := remoteClient(t, local.Addr)
	if err := remote.Do(ctx, "DEBUG", "SLEEP", "0").Err(); err == nil || err.Error() != errDebugNotAllowed {
		t.Errorf("local from 127.0.0.2: DEBUG SLEEP 0: %v", err)
	}
	if err := remote.Do(ctx, "DEBUG", "HOTSHARDS").Err(); err != nil {
		t.Errorf("local from 127.0.0.2: DEBUG HOTSHARDS: %v", err)
	}
	// Against Redis with enable-debug-command local, from 127.0.0.1.
	raddr := redistest.StartServer(t, t.TempDir(), "--save", "", "--enable-debug-command", "local").Addr
	if err := redis.NewClient(&redis.Options{Addr: raddr}).Do(ctx, "DEBUG", "SLEEP", "0").Err(); err != nil {
		t.Errorf("redis, local from 127.0.0.1: %v", err)
	}
}

// remoteClient is a go-redis client whose connections come from 127.0.0.2,
// which a server with LocalPeer only1 sees as a remote peer.
func remoteClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1,
		Dialer: d.DialContext})
	t.Cleanup(func() { c.Close() })
	return c
}

// errProtectedMode is Redis 7.0.15's -DENIED text as redis-server sent it
// to a client from a non-loopback address (captured from the real server;
// cmd/svcdb's TestProtectedModeOverRealNetwork compares the two live).
const errProtectedMode = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."

// TestProtectedMode: with no password, a remote client (127.0.0.2 here, see
// remoteClient) gets the -DENIED line as soon as it connects, then EOF; a
// local one is served. A password, or CONFIG SET protected-mode no from a
// local client, admits remote clients at once; setting them back refuses
// new ones again.
func TestProtectedMode(t *testing.T) {
	ctx := context.Background()
	only1 := func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.LocalPeer = only1 }))
	admin := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer admin.Close()
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatalf("local client: %v", err)
	}
	denied := func(when string) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		c, err := d.Dial("tcp", ts.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c) // the server writes without being asked, then closes
		if err != nil || string(got) != "-"+errProtectedMode+"\r\n" {
			t.Fatalf("%s: raw client read %q, %v", when, got, err)
		}
		// go-redis sends HELLO, reads -DENIED, goes on to its next
		// command and finds the connection closed, as with redis-server.
		if err := remoteClient(t, ts.Addr).Ping(ctx).Err(); err == nil {
			t.Fatalf("%s: go-redis PING succeeded", when)
		}
	}
	denied("no password")

	if err := admin.ConfigSet(ctx, "protected-mode", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := remoteClient(t, ts.Addr).Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Fatalf("protected-mode no: %v %v", v, err)
	}
	if err := admin.ConfigSet(ctx, "protected-mode", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	denied("protected-mode back on")

	if err := admin.ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	remote := remoteClient(t, ts.Addr)
	if err := remote.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Fatalf("with a password, an unauthenticated remote PING: %v, want NOAUTH", err)
	}
	authed := redis.NewClient(&redis.Options{Addr: ts.Addr, Password: "s3cret", PoolSize: 1,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
			return d.DialContext(ctx, network, addr)
		}})
	defer authed.Close()
	if err := authed.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("with a password, an authenticated remote SET: %v", err)
	}
	// The refused connections never became clients.
	if n := len(strings.Split(strings.TrimSpace(admin.ClientList(ctx).Val()), "\n")); n > 4 {
		t.Errorf("CLIENT LIST has %d clients", n)
	}
	var ne net.Error
	if errors.As(remote.Ping(ctx).Err(), &ne) {
		t.Errorf("the NOAUTH client was disconnected: %v", ne)
	}
}
