//go:build !race

package resp

import "testing"

// The race detector allocates on its own; these run without it.

// TestParseAllocs asserts that a warm parser allocates nothing per
// command, whether the command arrives whole or in pieces.
func TestParseAllocs(t *testing.T) {
	inputs := map[string][]byte{
		"GET":          []byte(mb("GET", "key:000001")),
		"SET":          []byte(mb("SET", "key:000001", "some value of moderate length")),
		"pipeline":     []byte(mb("SET", "k", "v") + mb("GET", "k") + mb("INCR", "n")),
		"inline":       []byte("SET key value\r\n"),
		"inline quote": []byte("SET \"a key\" 'v\\'x'\r\n"),
	}
	for name, in := range inputs {
		var p Parser
		argsbuf := make([][]byte, 0, 8)
		run := func() {
			buf := in
			for len(buf) > 0 {
				args, n, err := p.Parse(buf, argsbuf)
				if err != nil || n == 0 {
					t.Fatalf("%s: n %d err %v", name, n, err)
				}
				argsbuf = args
				buf = buf[n:]
			}
		}
		run() // warm up: scratch and spans reach their size
		if a := testing.AllocsPerRun(1000, run); a != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, a)
		}
		resumed := func() {
			for i := 1; ; i += 7 {
				args, n, err := p.Parse(in[:min(i, len(in))], argsbuf)
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					argsbuf = args
					break
				}
			}
		}
		if name == "pipeline" {
			continue
		}
		resumed()
		p.Reset()
		if a := testing.AllocsPerRun(1000, resumed); a != 0 {
			t.Errorf("%s resumed: %v allocs per run, want 0", name, a)
		}
	}
}

// TestAppendAllocs asserts that encoders write into dst without
// allocating when it has room.
func TestAppendAllocs(t *testing.T) {
	dst := make([]byte, 0, 4096)
	val := []byte("value")
	args := [][]byte{[]byte("a"), []byte("b")}
	a := testing.AllocsPerRun(1000, func() {
		b := dst[:0]
		b = AppendArrayHeader(b, 12)
		b = AppendSimpleString(b, "OK")
		b = AppendError(b, "ERR no")
		b = AppendInt(b, 12345)
		b = AppendBulk(b, val)
		b = AppendBulkString(b, "str")
		b = AppendBulkInt(b, -987654321)
		b = AppendDouble(b, 1.1, false)
		b = AppendDouble(b, 1.1, true)
		b = AppendMapHeader(b, 1, false)
		b = AppendNull(b, false)
		b = AppendVerbatim(b, "txt", val, true)
		b = AppendErrUnknownCommand(b, val, args)
		b = AppendErrWrongArity(b, val)
		b = AppendErrUnknownSubcommand(b, val, "config")
		b = append(b, OK...)
		dst = b
	})
	if a != 0 {
		t.Errorf("%v allocs per run, want 0", a)
	}
}

func TestSkipReplyAllocs(t *testing.T) {
	in := []byte("*5\r\n+OK\r\n:1\r\n$3\r\nfoo\r\n,1.1000000000000001\r\n%1\r\n#t\r\n_\r\n")
	a := testing.AllocsPerRun(1000, func() {
		if n, err := SkipReply(in); n != len(in) || err != nil {
			t.Fatal(n, err)
		}
	})
	if a != 0 {
		t.Errorf("%v allocs per run, want 0", a)
	}
}
