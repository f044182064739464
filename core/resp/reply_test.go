package resp

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
)

func TestReadReplyValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"+OK\r\n", `+"OK"`},
		{"-ERR bad\r\n", `(error) "ERR bad"`},
		{":-9223372036854775808\r\n", "(integer) -9223372036854775808"},
		{"$0\r\n\r\n", `""`},
		{"$-1\r\n", "(nil bulk)"},
		{"*-1\r\n", "(nil array)"},
		{"*0\r\n", "[]"},
		{"_\r\n", "(nil)"},
		{",-1.5e-3\r\n", "(double) -1.5e-3"},
		{",inf\r\n", "(double) inf"},
		{"#f\r\n", "(boolean) false"},
		{"(-123\r\n", "(big number) -123"},
		{"=8\r\nmkd:a\r\nb\r\n", `(verbatim) "mkd:a\r\nb"`},
		{"!5\r\nERR x\r\n", `(blob error) "ERR x"`},
		{"%0\r\n", "{}"},
		{"~1\r\n_\r\n", "~[(nil)]"},
		{">1\r\n:1\r\n", ">[(integer) 1]"},
		{"|1\r\n+a\r\n:1\r\n|1\r\n+b\r\n:2\r\n+v\r\n", `|{+"a": (integer) 1, +"b": (integer) 2} +"v"`},
		{"*2\r\n|1\r\n+a\r\n:1\r\n:5\r\n:6\r\n", `[|{+"a": (integer) 1} (integer) 5 (integer) 6]`},
	} {
		v, n, err := ReadReply([]byte(tc.in + "trailing"))
		if err != nil || n != len(tc.in) {
			t.Errorf("ReadReply(%q) n %d err %v", tc.in, n, err)
			continue
		}
		if got := v.String(); got != tc.want {
			t.Errorf("ReadReply(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if sn, err := SkipReply([]byte(tc.in + "trailing")); sn != n || err != nil {
			t.Errorf("SkipReply(%q) = %d %v, want %d", tc.in, sn, err, n)
		}
		for i := 0; i < len(tc.in); i++ {
			if _, pn, perr := ReadReply([]byte(tc.in[:i])); pn != 0 || perr != nil {
				t.Errorf("ReadReply(%q) prefix: n %d err %v", tc.in[:i], pn, perr)
			}
			if sn, serr := SkipReply([]byte(tc.in[:i])); sn != 0 || serr != nil {
				t.Errorf("SkipReply(%q) prefix: n %d err %v", tc.in[:i], sn, serr)
			}
		}
	}
	v, _, _ := ReadReply([]byte(",nan\r\n"))
	if !math.IsNaN(v.Float) {
		t.Errorf("nan parsed as %v", v.Float)
	}
}

func TestReadReplyMalformed(t *testing.T) {
	for _, in := range []string{
		"?\r\n", "+OK\rX", "$3\r\nfooXY", "$-2\r\n", "=-1\r\n", "!-1\r\n", "%-1\r\n",
		"~-1\r\n", ">-1\r\n", "|-1\r\n", ":1.5\r\n", ":\r\n", ":+1\r\n", ":01\r\n",
		"_x\r\n", "#x\r\n", "#\r\n", ",abc\r\n", ",\r\n", "=3\r\ntxt\r\n", "=4\r\ntxtx\r\n",
		"*2\r\n:1\r\n?\r\n", "$01\r\nx\r\n", "*1\r\n$1\r\nx\n\n",
		strings.Repeat("*1\r\n", maxReplyDepth+2) + ":1\r\n",
	} {
		_, n, err := ReadReply([]byte(in))
		if n != 0 || !errors.Is(err, ErrMalformedReply) {
			t.Errorf("ReadReply(%q) = %d, %v; want ErrMalformedReply", in, n, err)
		}
		if strings.HasPrefix(in, "*1\r\n*1") {
			continue // SkipReply has no depth limit
		}
		if n, err := SkipReply([]byte(in)); n != 0 || !errors.Is(err, ErrMalformedReply) {
			t.Errorf("SkipReply(%q) = %d, %v; want ErrMalformedReply", in, n, err)
		}
	}
}

// TestReadReplyHugeCounts checks that announced sizes are not trusted.
func TestReadReplyHugeCounts(t *testing.T) {
	for _, in := range []string{
		"*9223372036854775807\r\n:1\r\n",
		"%9223372036854775807\r\n:1\r\n",
		"|9223372036854775807\r\n",
		"$9223372036854775807\r\nabc",
		"~1000000000\r\n" + strings.Repeat(":1\r\n", 100),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, n, err := ReadReply([]byte(in))
		sn, serr := SkipReply([]byte(in))
		runtime.ReadMemStats(&after)
		if n != 0 || err != nil || sn != 0 || serr != nil {
			t.Errorf("%q: ReadReply %d %v SkipReply %d %v, want incomplete", in, n, err, sn, serr)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<17 {
			t.Errorf("%q: allocated %d bytes", in, d)
		}
	}
}

// TestReadReplyCopies checks that a Value does not alias its input.
func TestReadReplyCopies(t *testing.T) {
	in := []byte("*2\r\n$3\r\nfoo\r\n+bar\r\n")
	v, _, err := ReadReply(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'X'
	}
	if got := v.String(); got != `["foo" +"bar"]` {
		t.Errorf("after overwriting the input: %s", got)
	}
}
