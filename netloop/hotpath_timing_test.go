package netloop

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard"
)

// hotPath is the per-command path without the socket: parse → command lookup →
// route → shard token → execute → encode, exactly as OnTraffic runs it.
type hotPath struct {
	srv *Server
	c   *client
	rt  *shard.Runtime
}

func newHotPath(tb testing.TB) *hotPath {
	tb.Helper()
	table := command.New()
	rt, err := shard.New(shard.Config{Shards: 16}, table)
	if err != nil {
		tb.Fatal(err)
	}
	srv := New(Config{}, table, rt)
	c := srv.newClient(nil)
	c.ctx.Now = time.Now().UnixMilli()
	return &hotPath{srv: srv, c: c, rt: rt}
}

// run feeds one buffer of pipelined commands and returns the replies.
func (h *hotPath) run(tb testing.TB, in []byte) []byte {
	h.c.out = h.c.out[:0]
	off, closeNow := h.srv.consume(h.c, in)
	if closeNow || off != len(in) || h.c.state != connReading {
		tb.Fatalf("consume: off=%d of %d closeNow=%v state=%v out=%q", off, len(in), closeNow, h.c.state, h.c.out)
	}
	return h.c.out
}

func mb(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

var hotCommands = []struct {
	name string
	in   string
	want string
}{
	{"GET", mb("GET", "key:000042"), "$10\r\nvalue:0042\r\n"},
	// A GET of a missing key: what redis-benchmark's GET test measures
	// when it runs before anything set its keys (svcbench compare's order).
	{"GETmiss", mb("GET", "key:missing"), "$-1\r\n"},
	{"SET", mb("SET", "key:000042", "value:0042"), "+OK\r\n"},
	// A ZPOPMIN of a missing key: what svcbench compare's ZPOPMIN rounds
	// measure once its calibration has emptied the set.
	{"ZPOPMINmiss", mb("ZPOPMIN", "zset:missing"), "*0\r\n"},
	{"INCR", mb("INCR", "counter:7"), ""},
	// The data types in steady state (the value keeps its size), on the
	// values hotSetup builds: what redis-benchmark's HSET, SADD, ZADD,
	// LPUSH/RPOP and LRANGE tests do once their keys exist.
	{"HSET", mb("HSET", "myhash", "element:42", "v"), ":0\r\n"},
	{"HGET", mb("HGET", "myhash", "element:42"), "$1\r\nv\r\n"},
	{"SADD", mb("SADD", "myset", "element:42"), ":0\r\n"},
	{"SISMEMBER", mb("SISMEMBER", "myset", "element:42"), ":1\r\n"},
	{"ZADD", mb("ZADD", "myzset", "42", "element:42"), ":0\r\n"},
	{"ZSCORE", mb("ZSCORE", "myzset", "element:42"), "$2\r\n42\r\n"},
	{"LPUSH+RPOP", mb("LPUSH", "mylist", "x") + mb("RPOP", "mylist"), ""},
	{"LRANGE_100", mb("LRANGE", "mylist", "0", "99"), ""},
}

// hotSetup builds the values the data-type hot commands work on.
var hotSetup = func() string {
	var b strings.Builder
	b.WriteString(mb("SET", "key:000042", "value:0042"))
	for i := range 600 {
		e := fmt.Sprint("element:", i)
		b.WriteString(mb("HSET", "myhash", e, "v"))
		b.WriteString(mb("SADD", "myset", e))
		b.WriteString(mb("ZADD", "myzset", fmt.Sprint(i), e))
		b.WriteString(mb("RPUSH", "mylist", e))
	}
	return b.String()
}()

// TestHotPathAllocs asserts what BenchmarkHotPath reports: steady-state
// commands allocate nothing, one command at a time and pipelined.
func TestHotPathAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; BenchmarkHotPath and this test run without -race in make test")
	}
	h := newHotPath(t)
	h.run(t, []byte(hotSetup))
	for _, hc := range hotCommands {
		in := []byte(hc.in)
		pipelined := []byte(strings.Repeat(hc.in, 16))
		for _, buf := range [][]byte{in, pipelined} {
			h.run(t, buf) // warm: buffers grow once
			if n := testing.AllocsPerRun(1000, func() { h.run(t, buf) }); n != 0 {
				t.Errorf("%s (%d bytes): %v allocs per run; want 0", hc.name, len(buf), n)
			}
		}
		if hc.want != "" {
			if got := string(h.run(t, in)); got != hc.want {
				t.Errorf("%s reply %q; want %q", hc.name, got, hc.want)
			}
		}
	}
}

func BenchmarkHotPath(b *testing.B) {
	for _, hc := range hotCommands {
		for _, depth := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/pipeline=%d", hc.name, depth), func(b *testing.B) {
				h := newHotPath(b)
				h.run(b, []byte(hotSetup))
				buf := []byte(strings.Repeat(hc.in, depth))
				h.run(b, buf)
				b.ReportAllocs()
				b.SetBytes(int64(len(buf)))
				b.ResetTimer()
				cpu := processCPU()
				for range b.N {
					h.run(b, buf)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/cmd")
				// CPU time per command: on the shared machine the wall time
				// mostly measures the waits for a CPU (processCPU).
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*depth), "cpu-ns/cmd")
			})
		}
	}
}
