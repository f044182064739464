package resp

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fuzzSeeds are added to every parser fuzz target, on top of the files in
// testdata/fuzz.
var fuzzSeeds = []string{
	"*1\r\n$-2\r\n", // redcon's
	"*1\r\n$4\r\nPING\r\n",
	"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
	"*2147483648\r\n",
	"*2147483647\r\n$536870912\r\n",
	"*1\r\n$536870913\r\n",
	"*-1\r\n*0\r\nPING\r\n",
	"*1\r\nfoo\r\n",
	"*1\rX$4\r\nPING\r\n",
	"set \"a b\" 'c\\'d' \"\\x41\\n\"\r\n",
	"set \"a\"b\n",
	"\"unterminated\r\n",
	"a\vb\t\"c\"\v\n",
	"*2\r\n$3\r\n\x00\xff\r\r\n$0\r\n\r\n",
	"\r\n\n \n",
	"*11\r\n$1\r\na\r\n",                       // unauthenticated multibulk length
	"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n", // unauthenticated bulk length
	"*10\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n",
}

// maxFuzzLen bounds FuzzParse inputs; long lines and bulks are reached
// through smallLimits instead.
const maxFuzzLen = 1 << 14

// smallLimits derives tight limits from a fuzz seed, so the limit paths get
// exercised; an even seed keeps the defaults. Bit 1 applies the limits for
// unauthenticated clients; the tight limits then reach 16 KiB bulks and 16
// arguments, so both the unauthenticated and the invalid texts are met.
func smallLimits(seed uint64) Limits {
	unauth := seed&2 != 0
	if seed&1 == 0 {
		return Limits{Unauthenticated: unauth}
	}
	l := Limits{
		MaxBulkLen:      int64(seed>>8%64) + 1,
		MaxInlineLen:    int(seed>>16%64) + 1,
		MaxArgs:         int(seed>>24%16) + 1,
		Unauthenticated: unauth,
	}
	if unauth && seed&4 != 0 {
		l.MaxBulkLen += UnauthMaxBulkLen - 32
	}
	return l
}

// FuzzParse checks that no input panics the parser, and that parsing an
// input as it arrives in random pieces gives exactly what parsing it in one
// piece gives.
func FuzzParse(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		if len(data) > maxFuzzLen {
			t.Skip("feed copies the buffer per chunk: quadratic")
		}
		lim := smallLimits(seed)
		p := Parser{Limits: lim}
		whole := oneShot(t, &p, data)

		rng := rand.New(rand.NewPCG(seed, seed>>32))
		chunks := make([]int, 0, 16)
		for rest := len(data); rest > 0; {
			c := 1 + rng.IntN(min(rest, 1+rng.IntN(32)))
			chunks = append(chunks, c)
			rest -= c
		}
		p2 := Parser{Limits: lim}
		pieces := feed(t, &p2, data, chunks)
		if !equalCmds(whole, pieces) {
			t.Fatalf("limits %+v chunks %v\none shot %v\npieces   %v", lim, chunks, whole, pieces)
		}
		checkLimits(t, lim, whole)
	})
}

func checkLimits(t *testing.T, lim Limits, cmds []cmd) {
	t.Helper()
	for _, c := range cmds {
		if c.inline {
			continue
		}
		if len(c.args) > lim.maxArgs() || lim.Unauthenticated && len(c.args) > UnauthMaxArgs {
			t.Fatalf("%d args over limit %d (unauthenticated %v)", len(c.args), lim.maxArgs(), lim.Unauthenticated)
		}
		for _, a := range c.args {
			if int64(len(a)) > lim.maxBulkLen() || lim.Unauthenticated && len(a) > UnauthMaxBulkLen {
				t.Fatalf("arg of %d bytes over limit %d (unauthenticated %v)", len(a), lim.maxBulkLen(), lim.Unauthenticated)
			}
		}
	}
}

// FuzzParseDifferential compares the parser with refParse below.
func FuzzParseDifferential(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		lim := smallLimits(seed)
		p := Parser{Limits: lim}
		got := oneShot(t, &p, data)
		want := refParseAll(data, lim)
		if !equalCmds(got, want) {
			t.Fatalf("limits %+v input %q\nparser    %v\nreference %v", lim, data, got, want)
		}
	})
}

func refParseAll(data []byte, lim Limits) []cmd {
	var out []cmd
	for len(data) > 0 {
		c, ok := refParse(data, lim)
		if !ok {
			break
		}
		out = append(out, c)
		if c.err != "" {
			break
		}
		data = data[c.n:]
	}
	return out
}

// refInt is what Redis' string2ll accepts, said another way.
var refInt = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)

func refAtoi(b []byte) (int64, bool) {
	if !refInt.Match(b) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// refParse is the reference parser: a direct, allocating, non-resumable
// transcription of Redis' processInlineBuffer / processMultibulkBuffer,
// with the documented differences (line limits judged on the line, NUL an
// ordinary byte). ok is false if data holds no complete command yet.
func refParse(data []byte, lim Limits) (c cmd, ok bool) {
	maxInline, maxBulk, maxArgs := lim.maxInlineLen(), lim.maxBulkLen(), lim.maxArgs()
	if data[0] != '*' {
		nl := bytes.IndexByte(data, '\n')
		if nl > maxInline || nl < 0 && len(data) > maxInline {
			return cmd{err: "Protocol error: too big inline request"}, true
		}
		if nl < 0 {
			return cmd{}, false
		}
		line := data[:nl]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		args, good := refSplitArgs(line)
		if !good {
			return cmd{err: "Protocol error: unbalanced quotes in request"}, true
		}
		return cmd{args: args, n: nl + 1, inline: true}, true
	}

	// header returns the line starting at pos, without its CR, and where
	// the line ends; err is set for an over-long line.
	header := func(pos int, tooBig string) (line []byte, next int, err string, ok bool) {
		cr := bytes.IndexByte(data[pos:], '\r')
		if cr > maxInline || cr < 0 && len(data)-pos > maxInline {
			return nil, 0, tooBig, true
		}
		if cr < 0 || pos+cr+2 > len(data) {
			return nil, 0, "", false
		}
		return data[pos : pos+cr], pos + cr + 2, "", true
	}

	line, pos, e, ok := header(0, "Protocol error: too big mbulk count string")
	if !ok || e != "" {
		return cmd{err: e}, ok
	}
	count, good := refAtoi(line[1:])
	if !good || count > int64(maxArgs) {
		return cmd{err: "Protocol error: invalid multibulk length"}, true
	}
	if count > 10 && lim.Unauthenticated {
		return cmd{err: "Protocol error: unauthenticated multibulk length"}, true
	}
	args := []string{}
	for i := int64(0); i < count; i++ {
		start := pos
		line, pos, e, ok = header(start, "Protocol error: too big bulk count string")
		if !ok || e != "" {
			return cmd{err: e}, ok
		}
		if len(line) == 0 || line[0] != '$' {
			b := data[start]
			if b == '\r' || b == '\n' {
				b = ' '
			}
			return cmd{err: "Protocol error: expected '$', got '" + string([]byte{b}) + "'"}, true
		}
		size, good := refAtoi(line[1:])
		if !good || size < 0 || size > maxBulk {
			return cmd{err: "Protocol error: invalid bulk length"}, true
		}
		if size > 16384 && lim.Unauthenticated {
			return cmd{err: "Protocol error: unauthenticated bulk length"}, true
		}
		if int64(len(data)-pos) < size+2 {
			return cmd{}, false
		}
		args = append(args, string(data[pos:pos+int(size)]))
		pos += int(size) + 2
	}
	return cmd{args: args, n: pos}, true
}

// refSplitArgs transcribes sdssplitargs, reading past the end as -1 where
// C reads the terminating NUL (a NUL byte inside is ordinary here).
func refSplitArgs(line []byte) (args []string, ok bool) {
	at := func(i int) int {
		if i < len(line) {
			return int(line[i])
		}
		return -1
	}
	isspace := func(c int) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	ishex := func(c int) bool {
		return c >= 0 && c < 256 && isHexDigit(byte(c))
	}
	hexval := func(c int) int {
		v, _ := strconv.ParseUint(string(rune(c)), 16, 8)
		return int(v)
	}
	args = []string{}
	p := 0
	for {
		for at(p) != -1 && isspace(at(p)) {
			p++
		}
		if at(p) == -1 {
			return args, true
		}
		inq, insq, done := false, false, false
		var cur []byte
		for !done {
			if inq {
				if at(p) == '\\' && at(p+1) == 'x' && ishex(at(p+2)) && ishex(at(p+3)) {
					cur = append(cur, byte(hexval(at(p+2))*16+hexval(at(p+3))))
					p += 3
				} else if at(p) == '\\' && at(p+1) != -1 {
					p++
					c := at(p)
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					cur = append(cur, byte(c))
				} else if at(p) == '"' {
					if at(p+1) != -1 && !isspace(at(p+1)) {
						return nil, false
					}
					done = true
				} else if at(p) == -1 {
					return nil, false
				} else {
					cur = append(cur, byte(at(p)))
				}
			} else if insq {
				if at(p) == '\\' && at(p+1) == '\'' {
					p++
					cur = append(cur, '\'')
				} else if at(p) == '\'' {
					if at(p+1) != -1 && !isspace(at(p+1)) {
						return nil, false
					}
					done = true
				} else if at(p) == -1 {
					return nil, false
				} else {
					cur = append(cur, byte(at(p)))
				}
			} else {
				switch at(p) {
				case ' ', '\n', '\r', '\t', -1:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, byte(at(p)))
				}
			}
			if at(p) != -1 {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

// FuzzReadReply checks that ReadReply and SkipReply agree on every input,
// that a complete reply has no complete proper prefix, and that encoding
// the decoded value with the Append functions decodes to the same value.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":-12\r\n", "$3\r\nfoo\r\n", "$-1\r\n", "*-1\r\n",
		"*2\r\n$1\r\na\r\n:1\r\n", "_\r\n", ",1.5\r\n", ",-inf\r\n", ",nan\r\n",
		"#t\r\n", "(12345678901234567890\r\n", "=7\r\ntxt:abc\r\n", "!3\r\nERR\r\n",
		"%1\r\n+k\r\n+v\r\n", "~2\r\n:1\r\n:2\r\n", ">2\r\n+message\r\n+x\r\n",
		"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n", "*3\r\n*1\r\n*0\r\n%0\r\n~0\r\n",
		"*9223372036854775807\r\n:1\r\n", "%4611686018427387904\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, n, err := ReadReply(data)
		sn, serr := SkipReply(data)
		deep := err != nil && bytes.Contains([]byte(err.Error()), []byte("nested deeper"))
		if !deep && (n != sn || (err == nil) != (serr == nil)) {
			t.Fatalf("ReadReply = %d, %v; SkipReply = %d, %v", n, err, sn, serr)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformedReply) {
				t.Fatalf("error %v does not wrap ErrMalformedReply", err)
			}
			return
		}
		if n == 0 {
			return
		}
		for _, i := range []int{0, n / 2, n - 1} {
			if _, pn, perr := ReadReply(data[:i]); pn != 0 || perr != nil {
				t.Fatalf("prefix %d of complete reply: n %d err %v", i, pn, perr)
			}
		}
		if !encodable(v) {
			return
		}
		enc := encodeValue(nil, v)
		v2, n2, err := ReadReply(enc)
		if err != nil || n2 != len(enc) || !sameValue(v, v2) {
			t.Fatalf("round trip of %s via %q: %s, %d, %v", v, enc, v2, n2, err)
		}
	})
}

// encodable reports whether the Append functions can reproduce v: line
// replies holding '\n' cannot (the encoders turn it into a space).
func encodable(v Value) bool {
	switch v.Type {
	case '+', '-', '(':
		if bytes.IndexByte(v.Str, '\n') >= 0 {
			return false
		}
	}
	for _, e := range v.Elems {
		if !encodable(e) {
			return false
		}
	}
	for _, e := range v.Attrs {
		if !encodable(e) {
			return false
		}
	}
	return true
}

func encodeValue(dst []byte, v Value) []byte {
	if len(v.Attrs) > 0 {
		dst = appendPrefixed(dst, '|', int64(len(v.Attrs)/2))
		for _, a := range v.Attrs {
			dst = encodeValue(dst, a)
		}
	}
	switch v.Type {
	case '+':
		return append(appendNoCRLF(append(dst, '+'), v.Str), '\r', '\n')
	case '-':
		return AppendError(dst, string(v.Str))
	case ':':
		return AppendInt(dst, v.Int)
	case '$':
		if v.Null {
			return AppendNull(dst, false)
		}
		return AppendBulk(dst, v.Str)
	case '_':
		return AppendNull(dst, true)
	case ',':
		return AppendDouble(dst, v.Float, true)
	case '#':
		if v.Bool {
			return append(dst, "#t\r\n"...)
		}
		return append(dst, "#f\r\n"...)
	case '(':
		return append(appendNoCRLF(append(dst, '('), v.Str), '\r', '\n')
	case '=':
		return AppendVerbatim(dst, string(v.Str[:3]), v.Str[4:], true)
	case '!':
		dst = append(appendPrefixed(dst, '!', int64(len(v.Str))), v.Str...)
		return append(dst, '\r', '\n')
	case '*':
		if v.Null {
			return AppendNullArray(dst, false)
		}
		dst = AppendArrayHeader(dst, len(v.Elems))
	case '%':
		dst = AppendMapHeader(dst, len(v.Elems)/2, true)
	case '~':
		dst = AppendSetHeader(dst, len(v.Elems), true)
	case '>':
		dst = AppendPushHeader(dst, len(v.Elems), true)
	}
	for _, e := range v.Elems {
		dst = encodeValue(dst, e)
	}
	return dst
}

// sameValue compares decoded values, doubles by value (their text is
// re-formatted by AppendDouble) with NaN equal to NaN.
func sameValue(a, b Value) bool {
	if a.Type != b.Type || a.Int != b.Int || a.Bool != b.Bool || a.Null != b.Null ||
		len(a.Elems) != len(b.Elems) || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	if a.Type == ',' {
		if a.Float != b.Float && !(math.IsNaN(a.Float) && math.IsNaN(b.Float)) {
			return false
		}
	} else if !bytes.Equal(a.Str, b.Str) {
		return false
	}
	for i := range a.Elems {
		if !sameValue(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	for i := range a.Attrs {
		if !sameValue(a.Attrs[i], b.Attrs[i]) {
			return false
		}
	}
	return true
}

// FuzzParseWhole: Parse with room for the arguments (where the fast path
// parseWhole may answer) and without (the state machine alone) returns the
// same for every command of every prefix of the input, and leaves the
// parser in the same state.
func FuzzParseWhole(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		checkParseWhole(t, data, smallLimits(seed))
	})
}

func checkParseWhole(t *testing.T, data []byte, lim Limits) {
	t.Helper()
	for end := 1; end <= len(data); end++ {
		slow, fast := Parser{Limits: lim}, Parser{Limits: lim}
		room := make([][]byte, 0, 64)
		for off := 0; off < end; {
			a1, n1, err1 := slow.Parse(data[off:end], nil)
			a2, n2, err2 := fast.Parse(data[off:end], room[:0])
			if n1 != n2 || (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() ||
				len(a1) != len(a2) || slow.state != fast.state || slow.pos != fast.pos || slow.scan != fast.scan ||
				slow.left != fast.left || slow.read != fast.read || slow.argLen != fast.argLen {
				t.Fatalf("limits %+v input %q: without room %q, %d, %v; with room %q, %d, %v", lim, data[off:end], a1, n1, err1, a2, n2, err2)
			}
			for i := range a1 {
				if !bytes.Equal(a1[i], a2[i]) || cap(a2[i]) != len(a2[i]) {
					t.Fatalf("limits %+v input %q: argument %d %q with room, %q without", lim, data[off:end], i, a2[i], a1[i])
				}
			}
			if n1 == 0 || err1 != nil {
				break
			}
			off += n1
		}
	}
}

// TestParseWholeSeeds runs FuzzParseWhole's check over the seeds and the
// valid cases with the default and the unauthenticated limits.
func TestParseWholeSeeds(t *testing.T) {
	inputs := append([]string(nil), fuzzSeeds...)
	for _, c := range validCases {
		inputs = append(inputs, c.in)
	}
	inputs = append(inputs, strings.Repeat(mb("GET", "key:000042"), 16), mb("SET", "k", strings.Repeat("v", UnauthMaxBulkLen+1)))
	for _, in := range inputs {
		for _, lim := range []Limits{{}, {Unauthenticated: true}, {MaxArgs: 2, MaxBulkLen: 3, MaxInlineLen: 4}} {
			checkParseWhole(t, []byte(in), lim)
		}
	}
}
