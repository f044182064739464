package netloop_test

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/netloop"
)

// TestLoopsHoldingEveryPReadAndWriteRaw runs a server with a loop per P, so
// that gnet's loops read and write their sockets with raw system calls
// (third_party/gnet/raw_io_unix.go: only where no P is spare), and checks
// what those calls' results drive: a pipeline's replies in order, a reply
// far larger than the socket buffers to a client that reads late (write
// returns EAGAIN, the rest waits in the outbound buffer and leaves by
// writev), and a client that closes with replies pending (EPIPE or
// ECONNRESET closes it) while another is served.
func TestLoopsHoldingEveryPReadAndWriteRaw(t *testing.T) {
	ts := startServer(t, withNetConfig(func(nc *netloop.Config) { nc.EventLoops = runtime.GOMAXPROCS(0) }))
	c := dialRaw(t, ts.Addr)
	big := bigValue(8 << 20)
	want(t, c.do("SET", "big", string(big)), `+"OK"`)

	var sb strings.Builder
	for i := range 8 {
		sb.WriteString(multibulk("GET", "big"))
		sb.WriteString(multibulk("ECHO", strconv.Itoa(i)))
	}
	wait := c.writeAsync(sb.String())
	time.Sleep(200 * time.Millisecond) // replies pile up unread
	for i := range 8 {
		if v := c.read(); v.Type != '$' || !bytes.Equal(v.Str, big) {
			t.Fatalf("GET %d: %d bytes, type %q", i, len(v.Str), v.Type)
		}
		want(t, c.read(), strconv.Quote(strconv.Itoa(i)))
	}
	wait()

	gone := dialRaw(t, ts.Addr)
	gone.write(strings.Repeat(multibulk("GET", "big"), 4))
	time.Sleep(50 * time.Millisecond)
	_ = gone.c.Close()
	other := dialRaw(t, ts.Addr)
	for range 100 {
		want(t, other.do("PING"), `+"PONG"`)
	}
	want(t, c.do("STRLEN", "big"), "(integer) 8388608")
}
