package netloop_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// testServer is a real svcdb (shard runtime + event loops) on 127.0.0.1 with
// an ephemeral port, stopped by t.Cleanup. A command handler panic fails the
// test: a panic is always a bug.
type testServer struct {
	t      testing.TB
	Addr   string
	Port   int
	Srv    *netloop.Server
	RT     *shard.Runtime
	panics atomic.Int64
}

type serverOpt func(*netloop.Config, *shard.Config)

func withStrategy(s shard.Strategy) serverOpt {
	return func(_ *netloop.Config, sc *shard.Config) { sc.Strategy = s }
}
func withShards(n int) serverOpt {
	return func(_ *netloop.Config, sc *shard.Config) { sc.Shards = n }
}
func withNetConfig(f func(*netloop.Config)) serverOpt {
	return func(nc *netloop.Config, _ *shard.Config) { f(nc) }
}

// withDebugCommand sets enable-debug-command ("yes" for tests that stall a
// loop with DEBUG SLEEP).
func withDebugCommand(v string) serverOpt {
	return func(nc *netloop.Config, _ *shard.Config) { nc.EnableDebugCommand = v }
}

func startServer(t testing.TB, opts ...serverOpt) *testServer {
	t.Helper()
	ts := &testServer{t: t}
	// LoopSpin: svc-loop-spin-us's default, so the tests run with the
	// loops' spin on, as the server does.
	nc := netloop.Config{Bind: "127.0.0.1", Port: 0, EventLoops: 2, Version: "test", LoopSpin: 50 * time.Microsecond}
	sc := shard.Config{Shards: 4, Strategy: shard.RunToCompletion}
	for _, o := range opts {
		o(&nc, &sc)
	}
	nc.OnPanic = func(r any) {
		ts.panics.Add(1)
		t.Errorf("BUG: loop-side panic: %v", r)
	}
	sc.OnPanic = func(cmd string, r any, stack []byte) {
		ts.panics.Add(1)
		t.Errorf("BUG: handler for %s panicked: %v\n%s", cmd, r, stack)
	}
	table := command.New()
	rt, err := shard.New(sc, table)
	if err != nil {
		t.Fatal(err)
	}
	rt.Start()
	srv := netloop.New(nc, table, rt)
	if err := srv.Start(); err != nil {
		rt.Close()
		t.Fatal(err)
	}
	ts.Srv, ts.RT, ts.Addr, ts.Port = srv, rt, srv.Addr(), srv.Port()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stopping server: %v", err)
		}
		rt.Close()
	})
	return ts
}

// rawConn speaks RESP by hand: for exact bytes, protocol errors and pipelines.
type rawConn struct {
	t   testing.TB
	c   net.Conn
	rd  *bufio.Reader
	buf []byte
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, rd: bufio.NewReaderSize(c, 1<<16)}
}

func (r *rawConn) write(s string) {
	r.t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// do sends args as a multibulk command and returns the decoded reply.
func (r *rawConn) do(args ...string) resp.Value {
	r.t.Helper()
	r.write(multibulk(args...))
	return r.read()
}

func multibulk(args ...string) string {
	s := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	return s
}

// read returns the next reply, failing the test after 10s.
func (r *rawConn) read() resp.Value {
	r.t.Helper()
	v, err := r.tryRead(10 * time.Second)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return v
}

func (r *rawConn) tryRead(timeout time.Duration) (resp.Value, error) {
	r.c.SetReadDeadline(time.Now().Add(timeout))
	for {
		if len(r.buf) > 0 {
			v, n, err := resp.ReadReply(r.buf)
			if err != nil {
				return resp.Value{}, err
			}
			if n > 0 {
				r.buf = r.buf[n:]
				return v, nil
			}
		}
		chunk := make([]byte, 64<<10)
		n, err := r.rd.Read(chunk)
		r.buf = append(r.buf, chunk[:n]...)
		if err != nil && n == 0 {
			return resp.Value{}, err
		}
	}
}

// expectClosed waits for the server to close the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 1)
	if n, err := r.rd.Read(b); err == nil {
		r.t.Fatalf("connection still open; read %q", b[:n])
	}
}

// needTool returns the path of a real component the test needs. It fails the
// test when the tool is missing and CI=true, and skips otherwise.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required (make test installs it: apt-get install redis-tools redis-server)", name)
	}
	t.Skipf("%s not installed (set CI=true to make this a failure)", name)
	return ""
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: "+msg, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
