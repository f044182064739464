package netloop_test

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
)

// rawExchanger sends commands and returns each reply's exact bytes, for
// byte-for-byte comparisons with redis-server.
type rawExchanger struct {
	t   *testing.T
	c   net.Conn
	rd  *bufio.Reader
	buf []byte
}

func dialExchanger(t *testing.T, addr string) *rawExchanger {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawExchanger{t: t, c: c, rd: bufio.NewReader(c)}
}

func (x *rawExchanger) do(args ...string) []byte {
	x.t.Helper()
	x.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := x.c.Write([]byte(multibulk(args...))); err != nil {
		x.t.Fatal(err)
	}
	for {
		if len(x.buf) > 0 {
			_, n, err := resp.ReadReply(x.buf)
			if err != nil {
				x.t.Fatalf("%q: %v in %q", args, err, x.buf)
			}
			if n > 0 {
				out := slices.Clone(x.buf[:n])
				x.buf = x.buf[n:]
				return out
			}
		}
		chunk := make([]byte, 64<<10)
		n, err := x.rd.Read(chunk)
		x.buf = append(x.buf, chunk[:n]...)
		if err != nil && n == 0 {
			x.t.Fatalf("%q: %v", args, err)
		}
	}
}

// TestSlowlogMatchesRedis compares SLOWLOG's help, errors and empty-log
// replies with a real redis-server byte for byte, in RESP2 and RESP3.
func TestSlowlogMatchesRedis(t *testing.T) {
	ts := startServer(t)
	raddr := redistest.Start(t)
	for _, proto := range []string{"2", "3"} {
		ours, theirs := dialExchanger(t, ts.Addr), dialExchanger(t, raddr)
		ours.do("HELLO", proto)
		theirs.do("HELLO", proto)
		for _, cmd := range [][]string{
			// Nothing of this test may be logged, on either side.
			{"CONFIG", "SET", "slowlog-log-slower-than", "-1"},
			{"SLOWLOG", "RESET"},
			{"SLOWLOG", "HELP"},
			{"slowlog", "help"},
			{"SLOWLOG", "HELP", "x"},
			{"SLOWLOG"},
			{"SLOWLOG", "foo"},
			{"SLOWLOG", "LEN", "x"},
			{"SLOWLOG", "RESET", "x"},
			{"SLOWLOG", "GET", "-2"},
			{"SLOWLOG", "GET", "abc"},
			{"SLOWLOG", "GET", "-0"},
			{"SLOWLOG", "GET", "1.5"},
			{"SLOWLOG", "GET", "99999999999999999999"},
			{"SLOWLOG", "GET", "1", "2"},
			{"SLOWLOG", "GeT", "1", "2"},
			{"SLOWLOG", "GET", "0"},
			{"SLOWLOG", "GET", "-1"},
			{"SLOWLOG", "GET", "9223372036854775807"},
			{"SLOWLOG", "GET"},
			{"SLOWLOG", "LEN"},
		} {
			if got, want := ours.do(cmd...), theirs.do(cmd...); string(got) != string(want) {
				t.Errorf("RESP%s %q:\n got %q\nwant %q", proto, cmd, got, want)
			}
		}
	}
}

// TestSlowlogReplies fills the server's log directly (the recording side
// is tested end to end by TestSlowlogRecordsCommands) and checks SLOWLOG
// GET/LEN/RESET over TCP, and that CONFIG SET reaches the log.
func TestSlowlogReplies(t *testing.T) {
	ts := startServer(t)
	sl := ts.Srv.Slowlog()
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr})
	t.Cleanup(func() { rdb.Close() })
	ctx := testCtx(t, 30*time.Second)

	// Nothing recorded while the test sets up: only what it adds.
	if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err(); err != nil {
		t.Fatal(err)
	}
	if sl.SlowerThan(time.Hour) {
		t.Fatal("CONFIG SET slowlog-log-slower-than -1 did not disable the log")
	}
	if err := rdb.SlowLogReset(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 0)
	sl.Add([][]byte{[]byte("set"), []byte("k1"), []byte("v1")}, 1500*time.Microsecond, at, "10.1.2.3:4567", "alpha")
	sl.Add([][]byte{[]byte("get"), []byte("k1")}, 20*time.Millisecond, at.Add(time.Second), "10.1.2.3:4568", "")

	got, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("SLOWLOG GET -1: %d entries", len(got))
	}
	e0, e1 := got[0], got[1]
	if e0.ID != e1.ID+1 || !slices.Equal(e0.Args, []string{"get", "k1"}) || e0.Duration != 20*time.Millisecond ||
		e0.Time.Unix() != at.Unix()+1 || e0.ClientAddr != "10.1.2.3:4568" || e0.ClientName != "" {
		t.Errorf("newest entry: %+v", e0)
	}
	if !slices.Equal(e1.Args, []string{"set", "k1", "v1"}) || e1.Duration != 1500*time.Microsecond ||
		e1.ClientAddr != "10.1.2.3:4567" || e1.ClientName != "alpha" {
		t.Errorf("oldest entry: %+v", e1)
	}

	// Raw reply shape: [id, time, µs, [args], addr, name].
	c := dialRaw(t, ts.Addr)
	v := c.do("SLOWLOG", "GET", "1")
	want := fmt.Sprintf("[[%d %d 20000 [get k1] 10.1.2.3:4568 ]]", e0.ID, at.Unix()+1)
	if s := valueString(v); s != want {
		t.Errorf("SLOWLOG GET 1 = %s, want %s", s, want)
	}
	if v := c.do("SLOWLOG", "LEN"); v.Type != ':' || v.Int != 2 {
		t.Errorf("SLOWLOG LEN = %s", valueString(v))
	}

	// Default count is 10.
	for i := range 15 {
		sl.Add([][]byte{[]byte("incr"), fmt.Appendf(nil, "n%d", i)}, time.Millisecond, at, "a:1", "")
	}
	if v := c.do("SLOWLOG", "GET"); len(v.Elems) != 10 || valueString(v.Elems[0].Elems[3]) != "[incr n14]" {
		t.Errorf("SLOWLOG GET: %d entries, first %s", len(v.Elems), valueString(v.Elems[0]))
	}
	if v := c.do("SLOWLOG", "GET", "-1"); len(v.Elems) != 17 {
		t.Errorf("SLOWLOG GET -1: %d entries, want 17", len(v.Elems))
	}

	// CONFIG SET slowlog-max-len trims to the newest.
	if err := rdb.ConfigSet(ctx, "slowlog-max-len", "3").Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.SlowLogLen(ctx).Result(); n != 3 {
		t.Errorf("LEN after max-len 3 = %d", n)
	}
	if v := c.do("SLOWLOG", "GET", "-1"); len(v.Elems) != 3 || valueString(v.Elems[2].Elems[3]) != "[incr n12]" {
		t.Errorf("after max-len 3: %s", valueString(v))
	}

	// CONFIG SET slowlog-max-arg-len cuts new entries.
	if err := rdb.ConfigSet(ctx, "slowlog-max-arg-len", "5").Err(); err != nil {
		t.Fatal(err)
	}
	sl.Add([][]byte{[]byte("set"), []byte("key"), []byte("0123456789")}, time.Millisecond, at, "a:1", "")
	if v := c.do("SLOWLOG", "GET", "1"); valueString(v.Elems[0].Elems[3]) != "[set key 01234... (5 more bytes)]" {
		t.Errorf("max-arg-len 5: %s", valueString(v.Elems[0].Elems[3]))
	}

	// RESET empties it; ids go on.
	if v := c.do("SLOWLOG", "RESET"); v.Type != '+' || string(v.Str) != "OK" {
		t.Errorf("RESET = %s", valueString(v))
	}
	if v := c.do("SLOWLOG", "LEN"); v.Int != 0 {
		t.Errorf("LEN after RESET = %d", v.Int)
	}
	sl.Add([][]byte{[]byte("ping")}, time.Millisecond, at, "a:1", "")
	if got, _ := rdb.SlowLogGet(ctx, 10).Result(); len(got) != 1 || got[0].ID != e0.ID+17 {
		t.Errorf("after RESET: %+v, want one entry with id %d", got, e0.ID+17)
	}

	// The threshold follows CONFIG SET, in microseconds.
	for _, tc := range []struct {
		val  string
		d    time.Duration
		want bool
	}{
		{"0", 0, true},
		{"1500", 1499 * time.Microsecond, false},
		{"1500", 1500 * time.Microsecond, true},
		{"-1", time.Hour, false},
	} {
		if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", tc.val).Err(); err != nil {
			t.Fatal(err)
		}
		if got := sl.SlowerThan(tc.d); got != tc.want {
			t.Errorf("slowlog-log-slower-than %s: SlowerThan(%v) = %v", tc.val, tc.d, got)
		}
	}
}

// valueString formats a reply compactly: arrays as [a b], strings bare.
func valueString(v resp.Value) string {
	switch v.Type {
	case '*', '~', '>':
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = valueString(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case ':':
		return fmt.Sprint(v.Int)
	case '-':
		return "-" + string(v.Str)
	default:
		return string(v.Str)
	}
}

// TestSlowlogRecordsCommands is the end-to-end test: with
// slowlog-log-slower-than 0 every command is logged with its client's
// address and name, truncated as Redis truncates, and the arguments match
// what a real redis-server logs for the same commands.
func TestSlowlogRecordsCommands(t *testing.T) {
	ts := startServer(t)
	raddr := redistest.Start(t)
	ctx := testCtx(t, 30*time.Second)

	longVal := strings.Repeat("v", 300)
	var msetArgs []any
	for i := range 20 {
		msetArgs = append(msetArgs, fmt.Sprintf("{t}k%d", i), fmt.Sprintf("val%d", i))
	}
	run := func(addr string) (entries []redis.SlowLog, local string) {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1})
		t.Cleanup(func() { rdb.Close() })
		conn := rdb.Conn()
		t.Cleanup(func() { conn.Close() })
		for _, cmd := range [][]any{
			{"config", "set", "slowlog-log-slower-than", "0"},
			{"config", "set", "slowlog-max-len", "128"},
			{"client", "setname", "slowpoke"},
			{"slowlog", "reset"},
			// Secrets are logged "(redacted)".
			{"auth", "default", "hunter2"},
			{"hello", "2", "auth", "default", "hunter2"},
			{"config", "set", "requirepass", ""},
			{"set", "k", "v"},
			{"set", "k", longVal},
			append([]any{"mset"}, msetArgs...),
		} {
			if err := conn.Do(ctx, cmd...).Err(); err != nil {
				t.Fatalf("%v: %v", cmd, err)
			}
		}
		// The client's own address as the server sees it.
		info, err := conn.ClientInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		entries, err = conn.SlowLogGet(ctx, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		return entries, info.Addr
	}
	pick := func(es []redis.SlowLog) (out []redis.SlowLog) {
		for _, e := range es {
			if len(e.Args) > 0 && slices.Contains([]string{"set", "mset", "auth", "hello", "config"}, e.Args[0]) {
				out = append(out, e)
			}
		}
		return out
	}

	ours, ourAddr := run(ts.Addr)
	if len(pick(ours)) == 0 {
		t.Fatalf("svcdb logged none of the commands (SLOWLOG GET -1: %d entries)", len(ours))
	}
	theirs, _ := run(raddr)
	o, r := pick(ours), pick(theirs)
	if len(o) != len(r) {
		t.Fatalf("svcdb logged %d of the entries, Redis %d:\n%+v\n%+v", len(o), len(r), o, r)
	}
	for i := range o {
		if !slices.Equal(o[i].Args, r[i].Args) {
			t.Errorf("entry %d args:\n got %q\nwant %q", i, o[i].Args, r[i].Args)
		}
		if o[i].ClientAddr != ourAddr || o[i].ClientName != "slowpoke" {
			t.Errorf("entry %d client = %q %q, want %q slowpoke", i, o[i].ClientAddr, o[i].ClientName, ourAddr)
		}
	}
	// The two truncations Redis applies, and the redactions, as they appear.
	if len(o) != 6 {
		t.Fatalf("%d entries, want 6 (mset, set, set, config, hello, auth)", len(o))
	}
	for i, want := range [][]string{
		{"config", "set", "requirepass", "(redacted)"},
		{"hello", "2", "auth", "(redacted)", "(redacted)"},
		{"auth", "(redacted)", "(redacted)"},
	} {
		if !slices.Equal(o[3+i].Args, want) {
			t.Errorf("secret logged as %q, want %q", o[3+i].Args, want)
		}
	}
	if a := o[0].Args; len(a) != 32 || a[31] != "... (10 more arguments)" {
		t.Errorf("MSET of 41 args: %d args, last %q", len(a), a[len(a)-1])
	}
	if a := o[1].Args; a[2] != strings.Repeat("v", 128)+"... (172 more bytes)" {
		t.Errorf("SET of a 300-byte value: %q", a[2])
	}
}
