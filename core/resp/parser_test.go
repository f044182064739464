package resp

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mb encodes args as a multibulk request.
func mb(args ...string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", len(a), a)
	}
	return sb.String()
}

// cmd is one parse outcome: a command, or a protocol error text.
type cmd struct {
	args   []string
	n      int
	inline bool
	err    string
}

func (c cmd) String() string {
	if c.err != "" {
		return fmt.Sprintf("error %q", c.err)
	}
	return fmt.Sprintf("%q n=%d inline=%v", c.args, c.n, c.inline)
}

func toStrings(args [][]byte) []string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = string(a)
	}
	return s
}

// parseOne calls p.Parse once and converts the outcome. ok is false when
// the parse is incomplete.
func parseOne(t testing.TB, p *Parser, buf []byte) (c cmd, ok bool) {
	t.Helper()
	args, n, err := p.Parse(buf, nil)
	if err != nil {
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Fatalf("Parse(%q) error %T %v, want *ProtocolError", buf, err, err)
		}
		if args != nil || n != 0 {
			t.Fatalf("Parse(%q) = %q, %d with error %v", buf, args, n, err)
		}
		if pe.Offset < 0 || pe.Offset > len(buf) {
			t.Fatalf("Parse(%q) error offset %d out of range", buf, pe.Offset)
		}
		return cmd{err: pe.Msg}, true
	}
	if n == 0 {
		if args != nil {
			t.Fatalf("Parse(%q) = %q with n == 0", buf, args)
		}
		return cmd{}, false
	}
	if n > len(buf) {
		t.Fatalf("Parse(%q) n = %d > len %d", buf, n, len(buf))
	}
	for _, a := range args {
		if cap(a) != len(a) {
			t.Fatalf("Parse(%q) arg %q has cap %d > len", buf, a, cap(a))
		}
	}
	// Redis' rule (processInputBuffer): a command is multibulk when its
	// first byte is '*', inline otherwise; buf starts at the command.
	return cmd{args: toStrings(args), n: n, inline: buf[0] != '*'}, true
}

// feed simulates a connection that receives in in the given chunk sizes
// (the last chunk takes the rest) and parses all it can after each one,
// as netloop will. Each buffer handed to Parse is a fresh copy, so a
// parser that kept pointers into an old buffer instead of offsets fails.
func feed(t testing.TB, p *Parser, in []byte, chunks []int) []cmd {
	t.Helper()
	var out []cmd
	var pending []byte
	off := 0
	for ci := 0; off < len(in); ci++ {
		size := len(in) - off
		if ci < len(chunks) && chunks[ci] < size {
			size = max(chunks[ci], 1)
		}
		pending = append(bytes.Clone(pending), in[off:off+size]...)
		off += size
		for len(pending) > 0 {
			c, ok := parseOne(t, p, pending)
			if !ok {
				if need := p.Need(); need != 0 && need <= len(pending) {
					t.Fatalf("incomplete with %d bytes but Need() = %d", len(pending), need)
				}
				break
			}
			out = append(out, c)
			if c.err != "" {
				return out
			}
			pending = pending[c.n:]
		}
	}
	return out
}

func oneShot(t testing.TB, p *Parser, in []byte) []cmd {
	return feed(t, p, in, nil)
}

func equalCmds(a, b []cmd) bool {
	if len(a) != len(b) {
		return false
	}
	for i, x := range a {
		y := b[i]
		if x.err != y.err || x.n != y.n || x.inline != y.inline || !slices.Equal(x.args, y.args) {
			return false
		}
	}
	return true
}

var validCases = []struct {
	name   string
	in     string
	want   []string
	inline bool
}{
	{"ping", mb("PING"), []string{"PING"}, false},
	{"get", mb("GET", "key"), []string{"GET", "key"}, false},
	{"set", mb("SET", "key", "value"), []string{"SET", "key", "value"}, false},
	{"empty bulk", mb("GET", ""), []string{"GET", ""}, false},
	{"all empty bulks", mb("", "", ""), []string{"", "", ""}, false},
	{"binary payload", mb("SET", "k\x00\r\n", "\r\n$3\r\n*1\xff"), []string{"SET", "k\x00\r\n", "\r\n$3\r\n*1\xff"}, false},
	{"payload of CRs", mb("\r\r\r\r"), []string{"\r\r\r\r"}, false},
	{"big bulk", mb("SET", "k", strings.Repeat("abcdefghi\r\n", 6000)), []string{"SET", "k", strings.Repeat("abcdefghi\r\n", 6000)}, false},
	{"many args", mb(strings.Split(strings.Repeat("a,bb,", 300), ",")...), strings.Split(strings.Repeat("a,bb,", 300), ","), false},
	{"zero count", "*0\r\n", []string{}, false},
	{"null count", "*-1\r\n", []string{}, false},
	{"negative count", "*-5\r\n", []string{}, false},
	{"min int64 count", "*-9223372036854775808\r\n", []string{}, false},
	// Redis skips the byte after a header's CR and the two after a payload
	// without looking at them.
	{"unchecked LF after count", "*1\rX$4\r\nPING\r\n", []string{"PING"}, false},
	{"unchecked LF after length", "*1\r\n$4\r!PING\r\n", []string{"PING"}, false},
	{"unchecked payload trailer", "*1\r\n$4\r\nPINGxy", []string{"PING"}, false},

	{"inline", "PING\r\n", []string{"PING"}, true},
	{"inline LF only", "PING\n", []string{"PING"}, true},
	{"inline empty CRLF", "\r\n", []string{}, true},
	{"inline empty LF", "\n", []string{}, true},
	{"inline blank", " \t \v\f \r\n", []string{}, true},
	{"inline spaces", "  set   a\tb  \r\n", []string{"set", "a", "b"}, true},
	{"inline inner CR", "a\rb\r\r\n", []string{"a", "b"}, true},
	{"inline only one CR stripped", "PING\r\r\n", []string{"PING"}, true},
	{"inline VT inside arg", "a\vb c\n", []string{"a\vb", "c"}, true},
	{"inline leading VT skipped", "\va\f\n", []string{"a\f"}, true},
	{"inline dollar is inline", "$3\r\n", []string{"$3"}, true},
	{"inline colon", ":1\r\n", []string{":1"}, true},
	{"inline NUL is ordinary", "a\x00b c\n", []string{"a\x00b", "c"}, true},
	{"inline high bytes", "\xff\xfe a\n", []string{"\xff\xfe", "a"}, true},
	{"double quotes", `set "hello world" x` + "\r\n", []string{"set", "hello world", "x"}, true},
	{"escapes", `"a\n\r\t\b\a\\\"\q\'z"` + "\n", []string{"a\n\r\t\b\a\\\"q'z"}, true},
	{"hex escapes", `"\x41\x4a\xff\x0A\xzz\x4"` + "\n", []string{"AJ\xff\nxzzx4"}, true},
	{"hex escape NUL", `"\x00"` + "\n", []string{"\x00"}, true},
	{"single quotes", `'it\'s' 'a\nb' '"'` + "\n", []string{"it's", `a\nb`, `"`}, true},
	{"quote mid arg", `a"b c" d'e f'` + "\n", []string{"ab c", "de f"}, true},
	{"empty quotes", `"" '' ""` + "\n", []string{"", "", ""}, true},
	{"quote then tab", "\"a\"\tb\n", []string{"a", "b"}, true},
	{"quote then VT", "\"a\"\v\n", []string{"a"}, true},
	{"quote then CR", "\"a\"\r\r\n", []string{"a"}, true},
	{"quoted CR", "\"a\rb\"\r\n", []string{"a\rb"}, true},
	{"quoted NUL", "\"a\x00b\"\n", []string{"a\x00b"}, true},
	{"backslash outside quotes", `a\nb` + "\n", []string{`a\nb`}, true},
	{"quote after plain", `foo"bar"` + "\n", []string{"foobar"}, true},
}

// TestParseValid parses every valid case in one piece, resumed after every
// split offset, and one byte at a time; all must give the same command.
func TestParseValid(t *testing.T) {
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			want := []cmd{{args: tc.want, n: len(in), inline: tc.inline}}

			var p Parser
			if got := oneShot(t, &p, in); !equalCmds(got, want) {
				t.Fatalf("one shot: got %v, want %v", got, want)
			}

			// Every split: the prefix must be incomplete, and resuming with
			// the whole (freshly copied) buffer must give the command. For
			// big inputs: every split near the ends, a stride in between.
			for i := 0; i < len(in); i = nextSplit(i, len(in)) {
				var p Parser
				if c, ok := parseOne(t, &p, in[:i]); ok {
					t.Fatalf("split %d: prefix %q parsed as %v", i, in[:i], c)
				}
				if need := p.Need(); need != 0 && (need <= i || need > len(in)) {
					t.Fatalf("split %d: Need() = %d, want in (%d, %d]", i, need, i, len(in))
				}
				full := in
				if len(in) <= 1<<12 {
					full = bytes.Clone(in)
				}
				c, ok := parseOne(t, &p, full)
				if !ok || !equalCmds([]cmd{c}, want) {
					t.Fatalf("split %d: got %v (complete %v), want %v", i, c, ok, want)
				}
			}

			// Byte at a time, with a fresh copy of the buffer on every call
			// when that is cheap.
			if len(in) <= 1<<12 {
				ones := make([]int, len(in))
				for i := range ones {
					ones[i] = 1
				}
				var p Parser
				if got := feed(t, &p, in, ones); !equalCmds(got, want) {
					t.Fatalf("byte at a time: got %v, want %v", got, want)
				}
			} else {
				var p Parser
				for i := 1; i < len(in); i++ {
					if c, ok := parseOne(t, &p, in[:i]); ok {
						t.Fatalf("byte %d: prefix parsed as %v", i, c)
					}
				}
				if c, ok := parseOne(t, &p, in); !ok || !equalCmds([]cmd{c}, want) {
					t.Fatalf("byte at a time: got %v, want %v", c, want)
				}
			}
		})
	}
}

// nextSplit returns the split offset to try after i in an input of n
// bytes: all of them for small inputs, otherwise all within 512 bytes of
// either end and every 97th in between.
func nextSplit(i, n int) int {
	if n <= 1<<12 || i < 512 || i >= n-512 {
		return i + 1
	}
	return min(i+97, n-512)
}

var errorCases = []struct {
	name   string
	limits Limits
	in     string
	want   string
}{
	{"redcon negative bulk", Limits{}, "*1\r\n$-2\r\n", msgInvalidBulk},
	{"null bulk in request", Limits{}, "*1\r\n$-1\r\n", msgInvalidBulk},
	{"bulk length not a number", Limits{}, "*1\r\n$x\r\n", msgInvalidBulk},
	{"bulk length empty", Limits{}, "*1\r\n$\r\n", msgInvalidBulk},
	{"bulk length leading zero", Limits{}, "*1\r\n$01\r\n", msgInvalidBulk},
	{"bulk length plus", Limits{}, "*1\r\n$+1\r\n", msgInvalidBulk},
	{"bulk length space", Limits{}, "*1\r\n$ 1\r\n", msgInvalidBulk},
	{"bulk length minus zero", Limits{}, "*1\r\n$-0\r\n", msgInvalidBulk},
	{"bulk length LF terminated", Limits{}, "*1\r\n$3\nfoo\r\n", msgInvalidBulk},
	{"bulk length over default", Limits{}, "*1\r\n$536870913\r\n", msgInvalidBulk},
	{"bulk length overflow", Limits{}, "*1\r\n$9223372036854775808\r\n", msgInvalidBulk},
	{"bulk length over limit", Limits{MaxBulkLen: 10}, "*1\r\n$11\r\n", msgInvalidBulk},
	{"second bulk bad", Limits{}, "*2\r\n$3\r\nGET\r\n$-3\r\n", msgInvalidBulk},

	{"count not a number", Limits{}, "*x\r\n", msgInvalidMbulk},
	{"count empty", Limits{}, "*\r\n", msgInvalidMbulk},
	{"count leading zero", Limits{}, "*01\r\n", msgInvalidMbulk},
	{"count plus", Limits{}, "*+1\r\n", msgInvalidMbulk},
	{"count minus zero", Limits{}, "*-0\r\n", msgInvalidMbulk},
	{"count minus only", Limits{}, "*-\r\n", msgInvalidMbulk},
	{"count trailing space", Limits{}, "*1 \r\n", msgInvalidMbulk},
	{"count LF terminated", Limits{}, "*1\n$4\r\nPING\r\n", msgInvalidMbulk},
	{"count NUL", Limits{}, "*1\x00\r\n", msgInvalidMbulk},
	{"count over int64", Limits{}, "*9223372036854775808\r\n", msgInvalidMbulk},
	{"count 21 bytes", Limits{}, "*-00000000000000000001\r\n", msgInvalidMbulk},
	{"count over INT_MAX", Limits{}, "*2147483648\r\n", msgInvalidMbulk},
	{"count over limit", Limits{MaxArgs: 2}, mb("a", "b", "c"), msgInvalidMbulk},

	{"expected dollar", Limits{}, "*1\r\nfoo\r\n", msgExpectedDollar + "f'"},
	{"expected dollar colon", Limits{}, "*2\r\n$3\r\nGET\r\n:1\r\n", msgExpectedDollar + ":'"},
	{"expected dollar star", Limits{}, "*1\r\n*1\r\n", msgExpectedDollar + "*'"},
	{"expected dollar CR", Limits{}, "*1\r\n\r\n\r\n", msgExpectedDollar + " '"},
	{"expected dollar LF", Limits{}, "*1\r\n\n\r\n", msgExpectedDollar + " '"},
	{"expected dollar NUL", Limits{}, "*1\r\n\x00\r\n", msgExpectedDollar + "\x00'"},
	{"expected dollar high byte", Limits{}, "*1\r\n\xff\r\n", msgExpectedDollar + "\xff'"},
	{"payload trailer is next header", Limits{}, "*2\r\n$1\r\nab\r\n$1\r\nc\r\n", msgExpectedDollar + " '"},

	{"too big mbulk default", Limits{}, "*" + strings.Repeat("1", DefaultMaxInlineLen), msgTooBigMbulk},
	{"too big mbulk", Limits{MaxInlineLen: 8}, "*12345678", msgTooBigMbulk},
	{"too big mbulk before CR", Limits{MaxInlineLen: 8}, "*12345678\r\n", msgTooBigMbulk},
	{"mbulk at limit is parsed", Limits{MaxInlineLen: 8}, "*0000000\r\n", msgInvalidMbulk},
	{"too big bulk default", Limits{}, "*1\r\n$" + strings.Repeat("1", DefaultMaxInlineLen), msgTooBigBulk},
	{"too big bulk before dollar check", Limits{}, "*1\r\n" + strings.Repeat("X", 70000), msgTooBigBulk},
	{"too big bulk", Limits{MaxInlineLen: 8}, "*1\r\n$12345678", msgTooBigBulk},
	{"bulk at limit is parsed", Limits{MaxInlineLen: 8}, "*1\r\n$0000000\r\n", msgInvalidBulk},
	{"too big inline default", Limits{}, strings.Repeat("a", DefaultMaxInlineLen+1), msgTooBigInline},
	{"too big inline", Limits{MaxInlineLen: 8}, "123456789", msgTooBigInline},
	{"too big inline CR counts", Limits{MaxInlineLen: 8}, "12345678\r\n", msgTooBigInline},

	{"unterminated double", Limits{}, "set \"abc\r\n", msgUnbalancedQuotes},
	{"unterminated single", Limits{}, "set 'abc\n", msgUnbalancedQuotes},
	{"text after double", Limits{}, "set \"a\"b\n", msgUnbalancedQuotes},
	{"text after single", Limits{}, "set 'a'b\n", msgUnbalancedQuotes},
	{"quote after quote", Limits{}, "\"a\"'b'\n", msgUnbalancedQuotes},
	{"escaped closing quote", Limits{}, "\"a\\\"\n", msgUnbalancedQuotes},
	{"trailing backslash", Limits{}, "\"a\\\n", msgUnbalancedQuotes},
	{"lone quote", Limits{}, "\"\n", msgUnbalancedQuotes},
	{"quote mid arg unterminated", Limits{}, "a\"b\n", msgUnbalancedQuotes},
	{"single escape at end", Limits{}, "'a\\'\n", msgUnbalancedQuotes},

	{"unauthenticated count", unauth, "*11\r\n", msgUnauthMbulk},
	{"unauthenticated huge count", unauth, "*1000000\r\n", msgUnauthMbulk},
	{"unauthenticated count over INT_MAX is invalid", unauth, "*2147483648\r\n", msgInvalidMbulk},
	{"unauthenticated count over MaxArgs is invalid", Limits{MaxArgs: 5, Unauthenticated: true}, "*11\r\n", msgInvalidMbulk},
	{"unauthenticated bulk", unauth, "*1\r\n$16385\r\n", msgUnauthBulk},
	{"unauthenticated huge bulk", unauth, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n", msgUnauthBulk},
	{"unauthenticated bulk over max is invalid", unauth, "*1\r\n$536870913\r\n", msgInvalidBulk},
	{"unauthenticated bulk over MaxBulkLen is invalid", Limits{MaxBulkLen: 100, Unauthenticated: true}, "*1\r\n$16385\r\n", msgInvalidBulk},
	{"unauthenticated negative bulk is invalid", unauth, "*1\r\n$-1\r\n", msgInvalidBulk},
	{"unauthenticated inline is only too big", unauth, strings.Repeat("a", DefaultMaxInlineLen+1), msgTooBigInline},
}

// unauth is the parser's setting for a client that has not authenticated.
var unauth = Limits{Unauthenticated: true}

// TestParseErrors checks every protocol error's exact text, in one piece
// and after every split: a prefix may be incomplete or already fail the
// same way, nothing else.
func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			want := []cmd{{err: tc.want}}
			p := Parser{Limits: tc.limits}
			if got := oneShot(t, &p, in); !equalCmds(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			if p.state != stStart || p.Need() != 0 {
				t.Fatalf("parser not reset after error: state %d need %d", p.state, p.Need())
			}
			step := 1
			if len(in) > 1<<12 {
				step = 997
			}
			for i := 0; i < len(in); i += step {
				p := Parser{Limits: tc.limits}
				c, ok := parseOne(t, &p, in[:i])
				if ok {
					if !equalCmds([]cmd{c}, want) {
						t.Fatalf("split %d: prefix gave %v, want incomplete or %v", i, c, want)
					}
					continue
				}
				if c, ok := parseOne(t, &p, bytes.Clone(in)); !ok || !equalCmds([]cmd{c}, want) {
					t.Fatalf("split %d: got %v (complete %v), want %v", i, c, ok, want)
				}
			}
		})
	}
}

func TestProtocolErrorReply(t *testing.T) {
	var p Parser
	_, _, err := p.Parse([]byte("*1\r\n\r\nabc"), nil)
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if got, want := string(pe.AppendReply(nil)), "-ERR Protocol error: expected '$', got ' '\r\n"; got != want {
		t.Errorf("AppendReply = %q, want %q", got, want)
	}
	if pe.Offset != 4 || pe.Snippet != strconv.Quote("\r\nabc") {
		t.Errorf("Offset %d Snippet %s", pe.Offset, pe.Snippet)
	}
	if pe.Error() != pe.Msg {
		t.Errorf("Error() = %q", pe.Error())
	}
}

// TestParsePipeline parses several commands, of both kinds, in one buffer,
// split at every offset, byte at a time and in uneven chunks.
func TestParsePipeline(t *testing.T) {
	parts := []struct {
		in     string
		args   []string
		inline bool
	}{
		{mb("SET", "a", "1"), []string{"SET", "a", "1"}, false},
		{"GET a\r\n", []string{"GET", "a"}, true},
		{"*0\r\n", []string{}, false},
		{"\r\n", []string{}, true},
		{mb("ECHO", "x\r\ny"), []string{"ECHO", "x\r\ny"}, false},
		{"PING\n", []string{"PING"}, true},
		{"*-1\r\n", []string{}, false},
		{mb("MSET", "k1", "", "k2", "v2"), []string{"MSET", "k1", "", "k2", "v2"}, false},
		{"echo \"q \\x41\"\r\n", []string{"echo", "q A"}, true},
	}
	var in []byte
	var want []cmd
	for _, p := range parts {
		in = append(in, p.in...)
		want = append(want, cmd{args: p.args, n: len(p.in), inline: p.inline})
	}
	var p Parser
	if got := oneShot(t, &p, in); !equalCmds(got, want) {
		t.Fatalf("one shot:\ngot  %v\nwant %v", got, want)
	}
	for i := 1; i < len(in); i++ {
		var p Parser
		if got := feed(t, &p, in, []int{i}); !equalCmds(got, want) {
			t.Fatalf("split %d:\ngot  %v\nwant %v", i, got, want)
		}
	}
	for _, chunk := range []int{1, 2, 3, 5, 7, 13} {
		chunks := make([]int, len(in))
		for i := range chunks {
			chunks[i] = chunk
		}
		var p Parser
		if got := feed(t, &p, in, chunks); !equalCmds(got, want) {
			t.Fatalf("chunks of %d:\ngot  %v\nwant %v", chunk, got, want)
		}
	}
}

// TestParseJumpsPayload feeds a 1 MiB bulk one byte at a time. Once the
// header is read the parser must wait on Need() without scanning: a parser
// that rescanned would take minutes here.
func TestParseJumpsPayload(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcde\r"), 1<<16)
	in := []byte(mb("SET", "k", string(payload)))
	header := len(in) - len(payload) - 2
	var p Parser
	for i := 1; i < len(in); i++ {
		args, n, err := p.Parse(in[:i], nil)
		if args != nil || n != 0 || err != nil {
			t.Fatalf("prefix %d: %q %d %v", i, args, n, err)
		}
		if i >= header && (p.state != stBulkBody || p.Need() != len(in)) {
			t.Fatalf("prefix %d: state %d Need %d, want %d %d", i, p.state, p.Need(), stBulkBody, len(in))
		}
	}
	args, n, err := p.Parse(in, nil)
	if err != nil || n != len(in) || len(args) != 3 || !bytes.Equal(args[2], payload) {
		t.Fatalf("complete: %d args, n %d, err %v", len(args), n, err)
	}
	if p.Need() != 0 {
		t.Fatalf("Need after command = %d", p.Need())
	}
}

// TestParseHugeAnnouncements checks that counts and lengths at the limits
// are accepted without allocating anything like their size.
func TestParseHugeAnnouncements(t *testing.T) {
	check := func(in string, wantNeed int) {
		t.Helper()
		var p Parser
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		args, n, err := p.Parse([]byte(in), nil)
		runtime.ReadMemStats(&after)
		if args != nil || n != 0 || err != nil {
			t.Fatalf("Parse(%q) = %q %d %v, want incomplete", in, args, n, err)
		}
		if p.Need() != wantNeed {
			t.Fatalf("Parse(%q): Need() = %d, want %d", in, p.Need(), wantNeed)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<16 {
			t.Fatalf("Parse(%q) allocated %d bytes", in, d)
		}
	}
	check("*2147483647\r\n", 0)
	check("*2147483647\r\n$536870912\r\n", len("*2147483647\r\n$536870912\r\n")+536870912+2)
	check("*1\r\n$536870912\r\nabc", len("*1\r\n$536870912\r\n")+536870912+2)
	huge := Limits{MaxBulkLen: 1 << 62, MaxArgs: 1 << 62}
	p := Parser{Limits: huge}
	in := "*4611686018427387904\r\n$4611686018427387904\r\n"
	if args, n, err := p.Parse([]byte(in), nil); args != nil || n != 0 || err != nil {
		t.Fatalf("huge limits: %q %d %v", args, n, err)
	}
	if p.Need() != len(in)+1<<62+2 {
		t.Fatalf("huge limits: Need() = %d", p.Need())
	}
}

func TestParseArgsbufReuse(t *testing.T) {
	var p Parser
	argsbuf := make([][]byte, 0, 8)
	in := []byte(mb("SET", "k", "v") + mb("GET", "k"))
	args, n, err := p.Parse(in, argsbuf)
	if err != nil || len(args) != 3 || &args[:1][0] != &argsbuf[:1][0] {
		t.Fatalf("args not in argsbuf: %q %v", args, err)
	}
	// Arguments alias the input buffer.
	if &args[1][0] != &in[len("*3\r\n$3\r\nSET\r\n$1\r\n")] {
		t.Fatalf("args do not alias buf")
	}
	args, _, err = p.Parse(in[n:], args)
	if err != nil || len(args) != 2 || string(args[0]) != "GET" {
		t.Fatalf("second command: %q %v", args, err)
	}
}

// TestParseShorterBuffer gives the parser a buffer shorter than what it
// had already seen, which breaks the contract; it must start over, not
// panic.
func TestParseShorterBuffer(t *testing.T) {
	var p Parser
	in := []byte(mb("SET", "key", "value"))
	if _, n, _ := p.Parse(in[:len(in)-3], nil); n != 0 {
		t.Fatal("prefix parsed")
	}
	other := []byte(mb("GET", "k"))
	args, n, err := p.Parse(other[:5], nil)
	if args != nil || n != 0 || err != nil {
		t.Fatalf("short buffer: %q %d %v", args, n, err)
	}
	args, n, err = p.Parse(other, nil)
	if err != nil || n != len(other) || len(args) != 2 || string(args[1]) != "k" {
		t.Fatalf("after restart: %q %d %v", args, n, err)
	}
	_, _, _ = p.Parse(in[:len(in)-3], nil) // leaves a partial command for Reset to forget
	p.Reset()
	if args, n, err := p.Parse(other, nil); err != nil || n != len(other) || len(args) != 2 {
		t.Fatalf("after Reset: %q %d %v", args, n, err)
	}
}

// TestParseScratchReuse checks that quoted inline arguments survive in
// scratch within one command and that scratch is reused across commands.
func TestParseScratchReuse(t *testing.T) {
	var p Parser
	in := []byte(`"a b" plain 'c d' "e\x46"` + "\n")
	args, _, err := p.Parse(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toStrings(args); strings.Join(got, "|") != "a b|plain|c d|eF" {
		t.Fatalf("args = %q", got)
	}
	if &args[1][0] != &in[6] {
		t.Fatalf("plain argument was copied")
	}
	args2, _, err := p.Parse([]byte(`"x"`+"\n"), args)
	if err != nil || len(args2) != 1 || string(args2[0]) != "x" || &args2[0][0] != &p.scratch[:1][0] {
		t.Fatalf("second command: %q %v", args2, err)
	}
}

func TestParseInt(t *testing.T) {
	valid := map[string]int64{
		"0": 0, "1": 1, "-1": -1, "10": 10, "123456789": 123456789,
		"9223372036854775807":  1<<63 - 1,
		"-9223372036854775808": -1 << 63,
	}
	for s, want := range valid {
		if got, ok := ParseInt([]byte(s)); !ok || got != want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", "-0", "00", "01", "+1", " 1", "1 ", "1a", "a",
		"9223372036854775808", "-9223372036854775809", "18446744073709551616",
		"99999999999999999999", "100000000000000000000", "0x10", "1.0", "1e3"} {
		if got, ok := ParseInt([]byte(s)); ok {
			t.Errorf("ParseInt(%q) = %d, want invalid", s, got)
		}
	}
}

// TestParseLimitsLowered lowers MaxInlineLen in the middle of a line; the
// parser must apply it, not slice past its window.
func TestParseLimitsLowered(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"*1\r\n$1234567", msgTooBigBulk},
		{"*1234567", msgTooBigMbulk},
		{"GET abcdefgh", msgTooBigInline},
	} {
		var p Parser
		if _, n, err := p.Parse([]byte(tc.in), nil); n != 0 || err != nil {
			t.Fatalf("%q: n %d err %v", tc.in, n, err)
		}
		p.Limits.MaxInlineLen = 4
		_, _, err := p.Parse([]byte(tc.in+"89"), nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestParseUnauthenticatedAtLimits: Redis 7.0 accepts exactly 10 arguments
// and bulks of exactly 16384 bytes from a client that has not
// authenticated, in one piece and after every split.
func TestParseUnauthenticatedAtLimits(t *testing.T) {
	ten := make([]string, UnauthMaxArgs)
	for i := range ten {
		ten[i] = strconv.Itoa(i)
	}
	big := strings.Repeat("x", UnauthMaxBulkLen)
	for _, args := range [][]string{ten, {"SET", "k", big}, {"AUTH", big}} {
		in := []byte(mb(args...))
		want := []cmd{{args: args, n: len(in)}}
		p := Parser{Limits: unauth}
		if got := oneShot(t, &p, in); !equalCmds(got, want) {
			t.Fatalf("one shot: got %v, want %v", got, want)
		}
		for i := 0; i < len(in); i = nextSplit(i, len(in)) {
			p := Parser{Limits: unauth}
			if c, ok := parseOne(t, &p, in[:i]); ok {
				t.Fatalf("split %d: prefix parsed as %v", i, c)
			}
			if c, ok := parseOne(t, &p, in); !ok || !equalCmds([]cmd{c}, want) {
				t.Fatalf("split %d: got %v (complete %v), want %v", i, c, ok, want)
			}
		}
	}
}

// TestParseLimitsChangeBetweenCommands: a client that authenticates in a
// pipeline gets the full limits for the commands after AUTH, as in Redis,
// where authRequired is asked for each command as it is parsed.
func TestParseLimitsChangeBetweenCommands(t *testing.T) {
	big := strings.Repeat("v", UnauthMaxBulkLen+1)
	in := []byte(mb("AUTH", "pw") + mb("SET", "k", big))
	p := Parser{Limits: unauth}
	args, n, err := p.Parse(in, nil)
	if err != nil || len(args) != 2 {
		t.Fatalf("AUTH: %v %v", args, err)
	}
	p.Limits.Unauthenticated = false
	if args, _, err = p.Parse(in[n:], nil); err != nil || len(args) != 3 || string(args[2]) != big {
		t.Fatalf("SET after AUTH: %d args, %v", len(args), err)
	}
	p.Limits.Unauthenticated = true
	if _, _, err = p.Parse(in[n:], nil); err == nil || err.Error() != msgUnauthBulk {
		t.Fatalf("SET before AUTH: %v", err)
	}
}

// TestPendingArgBytes: the arguments of a command still arriving are
// counted (CLIENT LIST argv-mem), and nothing once it is complete.
func TestPendingArgBytes(t *testing.T) {
	in := []byte(mb("SET", "key", strings.Repeat("v", 100)))
	var p Parser
	for i, want := range map[int]int{0: 0, 10: 0, 18: 3, 30: 6} {
		p.Reset()
		if _, _, err := p.Parse(in[:i], nil); err != nil {
			t.Fatal(err)
		}
		if got := p.PendingArgBytes(); got != want {
			t.Errorf("after %d bytes (%q): %d, want %d", i, in[:i], got, want)
		}
	}
	if _, n, err := p.Parse(in, nil); err != nil || n != len(in) || p.PendingArgBytes() != 0 {
		t.Fatalf("complete: n %d err %v pending %d", n, err, p.PendingArgBytes())
	}
}

// TestParseManyArgsRescan parses commands with more arguments than the
// parser records as spans (maxSpans), so that the rest are found again by
// rescan: empty arguments (whose "$0" header takes the long path), payloads
// holding '\r', '\n' and '$', and a header whose CR is followed by a byte
// other than '\n' (skipped unchecked, as Redis). Each is parsed whole, then
// fed in chunks of several sizes (each a fresh buffer), then in a pipeline
// after a small command; every argument must come back as sent.
func TestParseManyArgsRescan(t *testing.T) {
	for _, n := range []int{maxSpans - 1, maxSpans, maxSpans + 1, 3*maxSpans + 7} {
		want := make([]string, n)
		var sb strings.Builder
		fmt.Fprintf(&sb, "*%d\r\n", n)
		for i := range want {
			switch i % 5 {
			case 0:
				want[i] = ""
			case 1:
				want[i] = strconv.Itoa(i)
			case 2:
				want[i] = "a\r\nb$3\r\n" + strings.Repeat("x", i%37)
			case 3:
				want[i] = strings.Repeat("\r", 1+i%3)
			default:
				want[i] = strings.Repeat("y", 100+i%300)
			}
			sep := "\r\n"
			if i%7 == 3 {
				sep = "\rX" // the byte after the header's CR is not looked at
			}
			fmt.Fprintf(&sb, "$%d%s%s\r\n", len(want[i]), sep, want[i])
		}
		in := []byte(sb.String())

		var p Parser
		args, used, err := p.Parse(in, nil)
		if err != nil || used != len(in) {
			t.Fatalf("n=%d whole: used %d of %d, err %v", n, used, len(in), err)
		}
		if got := toStrings(args); !slices.Equal(got, want) {
			t.Fatalf("n=%d whole: arguments differ", n)
		}
		for _, chunk := range []int{1 << 10, 7919, 64 << 10} {
			var chunks []int
			for range len(in)/chunk + 1 {
				chunks = append(chunks, chunk)
			}
			got := feed(t, &p, []byte(mb("PING")+string(in)), chunks)
			if len(got) != 2 || !slices.Equal(got[0].args, []string{"PING"}) || !slices.Equal(got[1].args, want) {
				t.Fatalf("n=%d chunks of %d: %d commands, arguments differ", n, chunk, len(got))
			}
		}
	}
}
