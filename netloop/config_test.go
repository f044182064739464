package netloop_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/netloop"
)

// TestConfigSet: CONFIG SET applies at once through the registry's hooks,
// all or nothing, with Redis' error texts; secrets never come back.
func TestConfigSet(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)

	wantErr(t, c.do("CONFIG", "SET", "nosuch", "1"), "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")
	wantErr(t, c.do("CONFIG", "SET", "port", "1234"), "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config")
	wantErr(t, c.do("CONFIG", "SET", "maxclients"), "ERR wrong number of arguments for 'config|set' command")
	wantErr(t, c.do("CONFIG", "SET", "maxclients", "5", "timeout"), "ERR syntax error")
	// All or nothing: a bad second pair leaves the first unchanged.
	if v := c.do("CONFIG", "SET", "maxclients", "5", "maxmemory", "lots"); v.Type != '-' {
		t.Fatalf("bad maxmemory accepted: %v", v)
	}
	want(t, c.do("CONFIG", "GET", "maxclients"), `["maxclients" "10000"]`)

	// maxclients applies to the next connection.
	want(t, c.do("CONFIG", "SET", "maxclients", "1"), `+"OK"`)
	over := dialRaw(t, ts.Addr)
	if v, _ := over.tryRead(5e9); v.Type != '-' || string(v.Str) != "ERR max number of clients reached" {
		t.Fatalf("second client with maxclients 1: %v", v)
	}
	want(t, c.do("CONFIG", "SET", "maxclients", "100"), `+"OK"`)

	// requirepass applies to new connections; CONFIG GET never shows it.
	want(t, c.do("CONFIG", "SET", "requirepass", "s3cret-pass"), `+"OK"`)
	want(t, c.do("CONFIG", "GET", "requirepass"), `["requirepass" "(redacted)"]`)
	n := dialRaw(t, ts.Addr)
	wantErr(t, n.do("GET", "k"), "NOAUTH Authentication required.")
	want(t, n.do("AUTH", "s3cret-pass"), `+"OK"`)
	want(t, n.do("GET", "k"), "(nil bulk)")
	all := c.do("CONFIG", "GET", "*")
	if s := all.String(); strings.Contains(s, "s3cret-pass") {
		t.Fatalf("CONFIG GET * shows the password: %s", s)
	}
	wantErr(t, c.do("CONFIG", "REWRITE"), "ERR The server is running without a config file")
}

// TestDefaultEventLoops: event-loops 0 leaves one CPU of GOMAXPROCS to the
// runtime and the clients (at least one loop), and INFO reports the count
// the server really runs.
func TestDefaultEventLoops(t *testing.T) {
	for procs, want := range map[int]int{1: 1, 2: 1, 3: 2, 4: 3, 16: 15} {
		if got := netloop.DefaultEventLoops(procs); got != want {
			t.Errorf("DefaultEventLoops(%d) = %d; want %d", procs, got, want)
		}
	}
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.EventLoops = 0 }))
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer rdb.Close()
	if got, want := infoField(t, rdb, "svc", "svc_event_loops"), netloop.DefaultEventLoops(runtime.GOMAXPROCS(0)); got != int64(want) {
		t.Fatalf("svc_event_loops = %d; want %d", got, want)
	}
}
