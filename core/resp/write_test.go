package resp

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
)

// f checks one encoder call: with a nil dst, and appended after existing
// bytes (which must be kept), both against want.
func f(t *testing.T, enc func(dst []byte) []byte, want string) {
	t.Helper()
	if got := string(enc(nil)); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	prefix := []byte("prefix")
	if got := string(enc(prefix)); got != "prefix"+want {
		t.Errorf("after a prefix: got %q, want %q", got, "prefix"+want)
	}
}

func TestAppendScalars(t *testing.T) {
	f(t, func(b []byte) []byte { return AppendSimpleString(b, "OK") }, "+OK\r\n")
	f(t, func(b []byte) []byte { return AppendSimpleString(b, "") }, "+\r\n")
	f(t, func(b []byte) []byte { return AppendSimpleString(b, "a\r\nb") }, "+a  b\r\n")

	f(t, func(b []byte) []byte { return AppendError(b, "ERR syntax error") }, "-ERR syntax error\r\n")
	f(t, func(b []byte) []byte { return AppendError(b, "ERR bad\r\nthing\n") }, "-ERR bad  thing\r\n")
	f(t, func(b []byte) []byte { return AppendError(b, "\r\nERR x\ry") }, "-ERR x y\r\n")
	f(t, func(b []byte) []byte { return AppendError(b, "") }, "-\r\n")

	f(t, func(b []byte) []byte { return AppendInt(b, 0) }, ":0\r\n")
	f(t, func(b []byte) []byte { return AppendInt(b, -42) }, ":-42\r\n")
	f(t, func(b []byte) []byte { return AppendInt(b, math.MaxInt64) }, ":9223372036854775807\r\n")
	f(t, func(b []byte) []byte { return AppendInt(b, math.MinInt64) }, ":-9223372036854775808\r\n")

	f(t, func(b []byte) []byte { return AppendBulk(b, []byte("foo")) }, "$3\r\nfoo\r\n")
	f(t, func(b []byte) []byte { return AppendBulk(b, nil) }, "$0\r\n\r\n")
	f(t, func(b []byte) []byte { return AppendBulk(b, []byte("a\r\n\x00")) }, "$4\r\na\r\n\x00\r\n")
	f(t, func(b []byte) []byte { return AppendBulkString(b, "hello") }, "$5\r\nhello\r\n")
	f(t, func(b []byte) []byte { return AppendBulkString(b, "") }, "$0\r\n\r\n")
	long := strings.Repeat("x", 1000)
	f(t, func(b []byte) []byte { return AppendBulkString(b, long) }, "$1000\r\n"+long+"\r\n")

	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "$1\r\n0\r\n"}, {7, "$1\r\n7\r\n"}, {9, "$1\r\n9\r\n"}, {10, "$2\r\n10\r\n"},
		{-1, "$2\r\n-1\r\n"}, {-10, "$3\r\n-10\r\n"}, {99999, "$5\r\n99999\r\n"},
		{100000, "$6\r\n100000\r\n"}, {math.MaxInt64, "$19\r\n9223372036854775807\r\n"},
		{math.MinInt64, "$20\r\n-9223372036854775808\r\n"},
	} {
		f(t, func(b []byte) []byte { return AppendBulkInt(b, tc.n) }, tc.want)
	}
}

func TestAppendNulls(t *testing.T) {
	f(t, func(b []byte) []byte { return AppendNull(b, true) }, "_\r\n")
	f(t, func(b []byte) []byte { return AppendNull(b, false) }, "$-1\r\n")
	f(t, func(b []byte) []byte { return AppendNullArray(b, true) }, "_\r\n")
	f(t, func(b []byte) []byte { return AppendNullArray(b, false) }, "*-1\r\n")
}

func TestAppendAggregateHeaders(t *testing.T) {
	f(t, func(b []byte) []byte { return AppendArrayHeader(b, 0) }, "*0\r\n")
	f(t, func(b []byte) []byte { return AppendArrayHeader(b, 3) }, "*3\r\n")
	f(t, func(b []byte) []byte { return AppendMapHeader(b, 2, true) }, "%2\r\n")
	f(t, func(b []byte) []byte { return AppendMapHeader(b, 2, false) }, "*4\r\n")
	f(t, func(b []byte) []byte { return AppendMapHeader(b, 0, false) }, "*0\r\n")
	f(t, func(b []byte) []byte { return AppendSetHeader(b, 5, true) }, "~5\r\n")
	f(t, func(b []byte) []byte { return AppendSetHeader(b, 5, false) }, "*5\r\n")
	f(t, func(b []byte) []byte { return AppendPushHeader(b, 3, true) }, ">3\r\n")
	f(t, func(b []byte) []byte { return AppendPushHeader(b, 3, false) }, "*3\r\n")
}

func TestAppendVerbatim(t *testing.T) {
	f(t, func(b []byte) []byte { return AppendVerbatim(b, "txt", []byte("Some string"), true) }, "=15\r\ntxt:Some string\r\n")
	f(t, func(b []byte) []byte { return AppendVerbatim(b, "mkd", []byte("a\r\nb"), true) }, "=8\r\nmkd:a\r\nb\r\n")
	f(t, func(b []byte) []byte { return AppendVerbatim(b, "txt", []byte("Some string"), false) }, "$11\r\nSome string\r\n")
	f(t, func(b []byte) []byte { return AppendVerbatim(b, "txt", nil, true) }, "=4\r\ntxt:\r\n")
}

// g17Cases are C printf("%.17g") results (Python's "%.17g", which follows
// C, and ZSCORE on redis-server 7.0.15 for the first ones).
var g17Cases = []struct {
	f    float64
	want string
}{
	{1.1, "1.1000000000000001"},
	{3000.0, "3000"},
	{1e+20, "1e+20"},
	{1e-05, "1.0000000000000001e-05"},
	{0.1, "0.10000000000000001"},
	{math.Copysign(0, -1), "-0"},
	{0.0, "0"},
	{1.2345678901234568e+17, "1.2345678901234568e+17"},
	{1e+16, "10000000000000000"},
	{1e+17, "1e+17"},
	{0.0001, "0.0001"},
	{1.5, "1.5"},
	{-2.5, "-2.5"},
	{5e-324, "4.9406564584124654e-324"},
	{1.7976931348623157e+308, "1.7976931348623157e+308"},
	{100.0, "100"},
	{1000000000000000.0, "1000000000000000"},
	{1.2345678901234567e+19, "1.2345678901234567e+19"},
	{9007199254740992.0, "9007199254740992"},
	{0.3, "0.29999999999999999"},
	{0.3333333333333333, "0.33333333333333331"},
	{-1e-300, "-1e-300"},
	{3.14159, "3.1415899999999999"},
	{1e+21, "1e+21"},
	{123456789.0, "123456789"},
	{-1.989032661366619e+244, "-1.989032661366619e+244"},
	{7.761117632285041e+178, "7.761117632285041e+178"},
	{3.980498358697587e-249, "3.980498358697587e-249"},
	{-1.5432835417340557e+88, "-1.5432835417340557e+88"},
	{6.294675241195386e-44, "6.2946752411953861e-44"},
	{4.708325160387546e+207, "4.7083251603875462e+207"},
	{6.387016158513563e-12, "6.3870161585135632e-12"},
	{-9.973130378568733e-246, "-9.9731303785687331e-246"},
	{math.Inf(1), "inf"},
	{math.Inf(-1), "-inf"},
	{math.NaN(), "nan"},
}

func TestAppendDouble(t *testing.T) {
	for _, tc := range g17Cases {
		f(t, func(b []byte) []byte { return AppendDouble(b, tc.f, true) }, ","+tc.want+"\r\n")
		f(t, func(b []byte) []byte { return AppendDouble(b, tc.f, false) }, string(AppendBulkString(nil, tc.want)))
	}
}

// TestBulkifyHeaderSizes crosses the payload lengths where the "$<len>"
// header grows a digit, since bulkify moves the payload to make room.
func TestBulkifyHeaderSizes(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 99, 100, 999, 1000, 10000} {
		payload := strings.Repeat("7", n)
		dst := append([]byte("xy"), payload...)
		got := string(bulkify(dst, 2))
		if want := "xy" + string(AppendBulkString(nil, payload)); got != want {
			t.Errorf("n=%d: got %q, want %q", n, got, want)
		}
	}
}

func TestConstants(t *testing.T) {
	for _, tc := range []struct {
		got  []byte
		want string
	}{
		{OK, "+OK\r\n"}, {PONG, "+PONG\r\n"}, {QUEUED, "+QUEUED\r\n"},
		{NullBulk, "$-1\r\n"}, {NullArray, "*-1\r\n"}, {Null3, "_\r\n"},
		{EmptyArray, "*0\r\n"}, {Zero, ":0\r\n"}, {One, ":1\r\n"}, {CRLF, "\r\n"},
		{ErrSyntax, "-ERR syntax error\r\n"},
		{ErrNotInteger, "-ERR value is not an integer or out of range\r\n"},
		{ErrNotFloat, "-ERR value is not a valid float\r\n"},
		{ErrWrongType, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{ErrNoAuth, "-NOAUTH Authentication required.\r\n"},
		{ErrOverflow, "-ERR increment or decrement would overflow\r\n"},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
		if n, err := SkipReply(tc.got); tc.want != "\r\n" && (err != nil || n != len(tc.got)) {
			t.Errorf("%q is not one reply: %d %v", tc.got, n, err)
		}
	}
	// Encoders and constants agree.
	pairs := [][2][]byte{
		{OK, AppendSimpleString(nil, "OK")}, {NullBulk, AppendNull(nil, false)},
		{NullArray, AppendNullArray(nil, false)}, {Null3, AppendNull(nil, true)},
		{EmptyArray, AppendArrayHeader(nil, 0)}, {Zero, AppendInt(nil, 0)}, {One, AppendInt(nil, 1)},
		{ErrSyntax, AppendError(nil, "ERR syntax error")},
	}
	for _, p := range pairs {
		if !bytes.Equal(p[0], p[1]) {
			t.Errorf("constant %q != encoded %q", p[0], p[1])
		}
	}
}

func TestAppendErrUnknownCommand(t *testing.T) {
	args := func(s ...string) [][]byte {
		b := make([][]byte, len(s))
		for i := range s {
			b[i] = []byte(s[i])
		}
		return b
	}
	// The first cases are replies of redis-server 7.0.15.
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("zzz"), args("\xff", "a", "b")) },
		"-ERR unknown command 'zzz', with args beginning with: '\xff' 'a' 'b' \r\n")
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("CONFIG|GET"), nil) },
		"-ERR unknown command 'CONFIG|GET', with args beginning with: \r\n")
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("a\r\nb"), args("x\ny")) },
		"-ERR unknown command 'a  b', with args beginning with: 'x y' \r\n")
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("a\x00b"), args("c\x00d", "")) },
		"-ERR unknown command 'a', with args beginning with: 'c' '' \r\n")
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, nil, nil) },
		"-ERR unknown command '', with args beginning with: \r\n")

	// The name is cut to 128 bytes; the arguments share a 128-byte budget
	// that counts quotes and spaces: printf("'%.*s' ", 128-len) while the
	// args text is under 128 bytes.
	name := strings.Repeat("n", 200)
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte(name), nil) },
		"-ERR unknown command '"+name[:128]+"', with args beginning with: \r\n")
	a100 := strings.Repeat("a", 100)
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("x"), args(a100, a100, "c")) },
		"-ERR unknown command 'x', with args beginning with: '"+a100+"' '"+a100[:25]+"' \r\n")
	f(t, func(b []byte) []byte {
		return AppendErrUnknownCommand(b, []byte("x"), args(strings.Repeat("b", 300), "c"))
	}, "-ERR unknown command 'x', with args beginning with: '"+strings.Repeat("b", 128)+"' \r\n")
	// Each "'k' " takes four bytes: 32 of them reach 128 and stop the list.
	many := make([][]byte, 50)
	for i := range many {
		many[i] = []byte("k")
	}
	want := "-ERR unknown command 'x', with args beginning with: " + strings.Repeat("'k' ", 32) + "\r\n"
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("x"), many) }, want)
	abc := make([][]byte, 50)
	for i := range abc {
		abc[i] = []byte("abcdef")
	}
	// 14 args of 9 bytes = 126; the 15th gets precision 2: 'ab' .
	want = "-ERR unknown command 'x', with args beginning with: " + strings.Repeat("'abcdef' ", 14) + "'ab' \r\n"
	f(t, func(b []byte) []byte { return AppendErrUnknownCommand(b, []byte("x"), abc) }, want)
}

func TestAppendErrArityAndSubcommand(t *testing.T) {
	f(t, func(b []byte) []byte { return AppendErrWrongArity(b, []byte("GET")) },
		"-ERR wrong number of arguments for 'get' command\r\n")
	f(t, func(b []byte) []byte { return AppendErrWrongArity(b, []byte("config|Get")) },
		"-ERR wrong number of arguments for 'config|get' command\r\n")
	f(t, func(b []byte) []byte { return AppendErrWrongArity(b, []byte("a\r\nB\xc3\x89")) },
		"-ERR wrong number of arguments for 'a  b\xc3\x89' command\r\n")
	f(t, func(b []byte) []byte { return AppendErrUnknownSubcommand(b, []byte("foo"), "config") },
		"-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n")
	f(t, func(b []byte) []byte {
		return AppendErrUnknownSubcommand(b, []byte(strings.Repeat("s", 130)+"\r\n"), "Client")
	}, "-ERR unknown subcommand '"+strings.Repeat("s", 128)+"'. Try CLIENT HELP.\r\n")
	f(t, func(b []byte) []byte { return AppendErrUnknownSubcommand(b, []byte("a\nb\x00c"), "xinfo") },
		"-ERR unknown subcommand 'a b'. Try XINFO HELP.\r\n")
	f(t, func(b []byte) []byte { return AppendErrSubcommandSyntax(b, []byte("foo"), "object") },
		"-ERR unknown subcommand or wrong number of arguments for 'foo'. Try OBJECT HELP.\r\n")
}

// TestRoundTrip encodes replies of every type in both protocols and reads
// them back.
func TestRoundTrip(t *testing.T) {
	for _, resp3 := range []bool{false, true} {
		var b []byte
		b = AppendArrayHeader(b, 15)
		b = AppendSimpleString(b, "OK")
		b = AppendError(b, "ERR oops")
		b = AppendInt(b, -7)
		b = AppendBulk(b, []byte("bin\r\n\x00"))
		b = AppendBulkInt(b, 1234)
		b = AppendBulkString(b, "10.5")
		b = AppendDouble(b, 1.1, resp3)
		// Boolean, big number and attribute frames the server never sends:
		// written by hand, for the reader.
		if resp3 {
			b = append(b, "#t\r\n"...)
		} else {
			b = append(b, ":1\r\n"...)
		}
		b = AppendNull(b, resp3)
		b = AppendNullArray(b, resp3)
		if resp3 {
			b = append(b, "(123456789012345678901234567890\r\n"...)
		} else {
			b = append(b, "$30\r\n123456789012345678901234567890\r\n"...)
		}
		b = AppendVerbatim(b, "txt", []byte("hi"), resp3)
		b = AppendMapHeader(b, 1, resp3)
		b = AppendBulkString(b, "k")
		b = AppendSetHeader(b, 2, resp3)
		b = AppendInt(b, 1)
		b = AppendInt(b, 2)
		b = AppendPushHeader(b, 1, resp3)
		b = AppendBulkString(b, "msg")
		if resp3 {
			b = append(b, "|1\r\n"...)
			b = AppendSimpleString(b, "ttl")
			b = AppendInt(b, 3)
		}
		b = AppendBulkString(b, "annotated")

		v, n, err := ReadReply(b)
		if err != nil || n != len(b) {
			t.Fatalf("resp3=%v: n %d of %d, err %v", resp3, n, len(b), err)
		}
		if sn, err := SkipReply(b); sn != n || err != nil {
			t.Fatalf("SkipReply = %d, %v", sn, err)
		}
		want := `[+"OK" (error) "ERR oops" (integer) -7 "bin\r\n\x00" "1234" "10.5" "1.1000000000000001" (integer) 1 (nil bulk) (nil array) "123456789012345678901234567890" "hi" ["k" [(integer) 1 (integer) 2]] ["msg"] "annotated"]`
		if resp3 {
			want = `[+"OK" (error) "ERR oops" (integer) -7 "bin\r\n\x00" "1234" "10.5" (double) 1.1000000000000001 (boolean) true (nil) (nil) (big number) 123456789012345678901234567890 (verbatim) "txt:hi" {"k": ~[(integer) 1 (integer) 2]} >["msg"] |{+"ttl": (integer) 3} "annotated"]`
		}
		if got := v.String(); got != want {
			t.Errorf("resp3=%v:\ngot  %s\nwant %s", resp3, got, want)
		}
	}
}

// TestAppendPrefixedAgainstStrconv: the one-append path below 100 writes
// what strconv writes, at and around its bounds and for negatives.
func TestAppendPrefixedAgainstStrconv(t *testing.T) {
	ns := []int64{math.MinInt64, math.MaxInt64, -101, -100, -99, -10, -9, -1}
	for n := int64(0); n <= 1001; n++ {
		ns = append(ns, n)
	}
	for _, n := range ns {
		want := ":" + strconv.FormatInt(n, 10) + "\r\n"
		if got := string(AppendInt([]byte("x"), n)); got != "x"+want {
			t.Fatalf("AppendInt(%d) = %q; want %q", n, got, "x"+want)
		}
	}
}
