package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformedReply is wrapped by the errors ReadReply and SkipReply return
// for bytes that are not a RESP2/RESP3 reply.
var ErrMalformedReply = errors.New("resp: malformed reply")

// maxReplyDepth bounds how deeply ReadReply follows nested aggregates, so a
// hostile peer cannot exhaust the stack. SkipReply is iterative and has no
// such bound.
const maxReplyDepth = 1000

// Value is a decoded RESP2/RESP3 reply. ReadReply allocates it, copying
// every string, so it stays valid after the input buffer is reused. It is
// for tests and tools, not for the server's hot path.
type Value struct {
	// Type is the reply's type byte: '+' simple string, '-' error,
	// ':' integer, '$' bulk string, '*' array, '_' null, ',' double,
	// '#' boolean, '(' big number, '=' verbatim string, '%' map, '~' set,
	// '>' push, '!' blob error. Attributes ('|') are not values of their
	// own: they are attached to the value they precede, in Attrs.
	Type byte
	// Str holds the text of '+', '-', '$', '(', '!' and '=' replies, the
	// latter with its "txt:" prefix as sent, and the raw text of ',' doubles.
	Str []byte
	// Int is the value of ':' replies, and the element count of aggregates
	// as announced (pairs, for '%').
	Int int64
	// Float is the value of ',' replies.
	Float float64
	// Bool is the value of '#' replies.
	Bool bool
	// Null is set for "_\r\n", and for RESP2's "$-1\r\n" and "*-1\r\n"
	// (Type '$' and '*').
	Null bool
	// Elems are the elements of '*', '~' and '>' replies, and of '%' maps
	// flattened as key, value, key, value.
	Elems []Value
	// Attrs are the key, value pairs of a RESP3 attribute ('|') that came
	// before this value, flattened like map elements.
	Attrs []Value
}

// errIncomplete is internal: the reply continues past the buffer.
var errIncomplete = errors.New("incomplete")

func malformed(off int, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrMalformedReply, off, fmt.Sprintf(format, args...))
}

// replyLine returns the line that starts after the type byte at pos and the
// offset following its "\r\n". Reply lines must end in exactly "\r\n".
func replyLine(buf []byte, pos int) (line []byte, next int, err error) {
	i := bytes.IndexByte(buf[pos+1:], '\r')
	if i < 0 {
		return nil, 0, errIncomplete
	}
	cr := pos + 1 + i
	if cr+1 >= len(buf) {
		return nil, 0, errIncomplete
	}
	if buf[cr+1] != '\n' {
		return nil, 0, malformed(cr, "line ends in %q, want \"\\r\\n\"", buf[cr:cr+2])
	}
	return buf[pos+1 : cr], cr + 2, nil
}

// replyHeader reads one reply's type byte and line at pos and checks it.
// For length-prefixed types it also checks the payload: body is the
// payload (nil for other types) and next is the offset after the reply's
// own bytes (after the payload, but before any aggregate elements). n is
// the integer on the line for ':' and the length/count types.
func replyHeader(buf []byte, pos int) (typ byte, line, body []byte, n int64, next int, err error) {
	typ = buf[pos]
	line, next, err = replyLine(buf, pos)
	if err != nil {
		return typ, nil, nil, 0, 0, err
	}
	switch typ {
	case '+', '-', '(':
		return typ, line, nil, 0, next, nil
	case ':':
		if n, ok := ParseInt(line); ok {
			return typ, line, nil, n, next, nil
		}
		return typ, nil, nil, 0, 0, malformed(pos, "bad integer %q", line)
	case '_':
		if len(line) != 0 {
			return typ, nil, nil, 0, 0, malformed(pos, "null with text %q", line)
		}
		return typ, line, nil, 0, next, nil
	case '#':
		if len(line) != 1 || line[0] != 't' && line[0] != 'f' {
			return typ, nil, nil, 0, 0, malformed(pos, "bad boolean %q", line)
		}
		return typ, line, nil, 0, next, nil
	case ',':
		if _, ok := parseDouble(line); !ok {
			return typ, nil, nil, 0, 0, malformed(pos, "bad double %q", line)
		}
		return typ, line, nil, 0, next, nil
	case '$', '=', '!':
		n, ok := ParseInt(line)
		if !ok || n < -1 || n == -1 && typ != '$' {
			return typ, nil, nil, 0, 0, malformed(pos, "bad length %q", line)
		}
		if n == -1 {
			return typ, line, nil, n, next, nil
		}
		if int64(len(buf)-next-2) < n { // no overflow: n is checked first
			return typ, nil, nil, 0, 0, errIncomplete
		}
		end := next + int(n)
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return typ, nil, nil, 0, 0, malformed(end, "payload ends in %q, want \"\\r\\n\"", buf[end:end+2])
		}
		if typ == '=' && (n < 4 || buf[next+3] != ':') {
			return typ, nil, nil, 0, 0, malformed(pos, "verbatim string without format")
		}
		return typ, line, buf[next:end], n, end + 2, nil
	case '*', '%', '~', '>', '|':
		n, ok := ParseInt(line)
		if !ok || n < -1 || n == -1 && typ != '*' {
			return typ, nil, nil, 0, 0, malformed(pos, "bad count %q", line)
		}
		return typ, line, nil, n, next, nil
	}
	return typ, nil, nil, 0, 0, malformed(pos, "bad type byte %q", typ)
}

// parseDouble parses a RESP3 double: what strconv accepts, plus Redis'
// "inf", "-inf" and "nan" spellings (which strconv accepts too).
func parseDouble(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// SkipReply returns the length of the first complete reply in buf, 0 if
// buf ends before it does, or an error wrapping ErrMalformedReply. An
// attribute counts as part of the reply it precedes. It accepts exactly
// what ReadReply accepts (ReadReply also limits nesting depth) and does not
// allocate.
func SkipReply(buf []byte) (n int, err error) {
	pos := 0
	// pending counts the values still to skip. Every value takes at least
	// three bytes, so once pending exceeds len(buf) the reply cannot be
	// complete; clamping it there keeps the arithmetic from overflowing.
	pending := int64(1)
	for pending > 0 {
		if pos >= len(buf) {
			return 0, nil
		}
		typ, _, _, cnt, next, err := replyHeader(buf, pos)
		if err == errIncomplete {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		pos = next
		pending--
		cnt = min(cnt, int64(len(buf))+1)
		switch typ {
		case '*', '~', '>':
			if cnt > 0 {
				pending += cnt
			}
		case '%':
			pending += 2 * cnt
		case '|':
			pending += 2*cnt + 1 // the pairs, then the annotated value
		}
		pending = min(pending, int64(len(buf))+1)
	}
	return pos, nil
}

// ReadReply decodes the first reply in buf. It returns the value and the
// number of bytes it took; n == 0 and err == nil when buf ends before the
// reply does. Errors wrap ErrMalformedReply. A reply error ("-ERR ...") is a
// Value of Type '-', not an error.
func ReadReply(buf []byte) (v Value, n int, err error) {
	v, n, err = readValue(buf, 0, 0)
	if err == errIncomplete {
		return Value{}, 0, nil
	}
	if err != nil {
		return Value{}, 0, err
	}
	return v, n, nil
}

func readValue(buf []byte, pos, depth int) (Value, int, error) {
	if depth > maxReplyDepth {
		return Value{}, 0, malformed(pos, "nested deeper than %d", maxReplyDepth)
	}
	if pos >= len(buf) {
		return Value{}, 0, errIncomplete
	}
	typ, line, body, cnt, next, err := replyHeader(buf, pos)
	if err != nil {
		return Value{}, 0, err
	}
	v := Value{Type: typ}
	switch typ {
	case '+', '-', '(':
		v.Str = clone(line)
	case ':':
		v.Int = cnt
	case '_':
		v.Null = true
	case '#':
		v.Bool = line[0] == 't'
	case ',':
		v.Str = clone(line)
		v.Float, _ = parseDouble(line)
	case '$', '=', '!':
		if cnt == -1 {
			v.Null = true
		} else {
			v.Str = clone(body)
		}
	case '*', '%', '~', '>', '|':
		if cnt == -1 {
			v.Null = true
			break
		}
		v.Int = cnt
		// A count beyond what buf could hold is clamped (it cannot
		// complete either way), so the multiplication cannot overflow and
		// errors are found in the same order as SkipReply finds them.
		elems := min(cnt, int64(len(buf))+1)
		if typ == '%' || typ == '|' {
			elems *= 2
		}
		// Never size from the peer's count: at most what the remaining
		// bytes could hold (three per element), and at most 1024.
		if c := min(elems, int64(len(buf)-next)/3, maxPresize); c > 0 {
			v.Elems = make([]Value, 0, c)
		}
		for i := int64(0); i < elems; i++ {
			e, after, err := readValue(buf, next, depth+1)
			if err != nil {
				return Value{}, 0, err
			}
			v.Elems = append(v.Elems, e)
			next = after
		}
		if typ == '|' {
			// An attribute annotates the value that follows it.
			attrs := v.Elems
			v, next, err = readValue(buf, next, depth+1)
			if err != nil {
				return Value{}, 0, err
			}
			v.Attrs = append(attrs, v.Attrs...)
		}
	}
	return v, next, nil
}

func clone(b []byte) []byte {
	return append([]byte{}, b...)
}

// String renders v on one line for test failure messages, in a redis-cli
// like notation: "OK" for '+', (error) ERR x, (integer) 5, "bulk" quoted,
// (nil), [a b] for arrays, {k: v} for maps, ~[...] sets, >[...] pushes.
func (v Value) String() string {
	var sb strings.Builder
	v.format(&sb)
	return sb.String()
}

func (v Value) format(sb *strings.Builder) {
	if len(v.Attrs) > 0 {
		sb.WriteString("|")
		formatPairs(sb, v.Attrs)
		sb.WriteString(" ")
	}
	switch v.Type {
	case '+':
		sb.WriteString("+")
		sb.WriteString(strconv.Quote(string(v.Str)))
	case '-':
		sb.WriteString("(error) ")
		sb.WriteString(strconv.Quote(string(v.Str)))
	case '!':
		sb.WriteString("(blob error) ")
		sb.WriteString(strconv.Quote(string(v.Str)))
	case ':':
		sb.WriteString("(integer) ")
		sb.WriteString(strconv.FormatInt(v.Int, 10))
	case ',':
		sb.WriteString("(double) ")
		sb.Write(v.Str)
	case '#':
		sb.WriteString("(boolean) ")
		sb.WriteString(strconv.FormatBool(v.Bool))
	case '(':
		sb.WriteString("(big number) ")
		sb.Write(v.Str)
	case '=':
		sb.WriteString("(verbatim) ")
		sb.WriteString(strconv.Quote(string(v.Str)))
	case '_':
		sb.WriteString("(nil)")
	case '$':
		if v.Null {
			sb.WriteString("(nil bulk)")
			return
		}
		sb.WriteString(strconv.Quote(string(v.Str)))
	case '*', '~', '>':
		if v.Null {
			sb.WriteString("(nil array)")
			return
		}
		if v.Type != '*' {
			sb.WriteByte(v.Type)
		}
		sb.WriteString("[")
		for i, e := range v.Elems {
			if i > 0 {
				sb.WriteString(" ")
			}
			e.format(sb)
		}
		sb.WriteString("]")
	case '%':
		formatPairs(sb, v.Elems)
	default:
		fmt.Fprintf(sb, "(type %q)", v.Type)
	}
}

func formatPairs(sb *strings.Builder, elems []Value) {
	sb.WriteString("{")
	for i := 0; i+1 < len(elems); i += 2 {
		if i > 0 {
			sb.WriteString(", ")
		}
		elems[i].format(sb)
		sb.WriteString(": ")
		elems[i+1].format(sb)
	}
	sb.WriteString("}")
}
