package command

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// rv is a decoded RESP2/RESP3 value, kept close to the wire: the type byte
// is preserved so tests can tell sets from arrays and status from bulk.
type rv struct {
	kind  byte   // '+', '-', ':', '$', '*', '~', '%', '_'
	null  bool   // "$-1" or "*-1"
	str   string // '+', '-', '$'
	n     int64  // ':'
	elems []rv   // '*', '~'; '%' holds key, value, key, value...
}

// readRV reads one value from r. When raw is not nil the exact bytes read
// are appended to it.
func readRV(r *bufio.Reader, raw *[]byte) (rv, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return rv{}, err
	}
	if raw != nil {
		*raw = append(*raw, line...)
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return rv{}, fmt.Errorf("bad line %q", line)
	}
	kind, body := line[0], string(line[1:len(line)-2])
	v := rv{kind: kind}
	switch kind {
	case '+', '-':
		v.str = body
	case ':':
		v.n, err = strconv.ParseInt(body, 10, 64)
	case '_':
	case '$':
		var n int
		if n, err = strconv.Atoi(body); err != nil {
			return v, err
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		buf := make([]byte, n+2)
		if _, err = io.ReadFull(r, buf); err != nil {
			return v, err
		}
		if raw != nil {
			*raw = append(*raw, buf...)
		}
		v.str = string(buf[:n])
	case '*', '~', '%':
		var n int
		if n, err = strconv.Atoi(body); err != nil {
			return v, err
		}
		if n < 0 {
			v.null = true
			return v, nil
		}
		if kind == '%' {
			n *= 2
		}
		for range n {
			e, err := readRV(r, raw)
			if err != nil {
				return v, err
			}
			v.elems = append(v.elems, e)
		}
	default:
		return v, fmt.Errorf("unknown type %q", kind)
	}
	return v, err
}

// parseAll decodes every value in b and fails on trailing garbage.
func parseAll(b []byte) ([]rv, error) {
	r := bufio.NewReader(bytes.NewReader(b))
	var out []rv
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return out, nil
		}
		v, err := readRV(r, nil)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// parseOne decodes b, which must hold exactly one value.
func parseOne(b []byte) (rv, error) {
	vs, err := parseAll(b)
	if err != nil {
		return rv{}, err
	}
	if len(vs) != 1 {
		return rv{}, fmt.Errorf("got %d values, want 1", len(vs))
	}
	return vs[0], nil
}

func (v rv) String() string {
	var sb strings.Builder
	v.format(&sb)
	return sb.String()
}

func (v rv) format(sb *strings.Builder) {
	switch {
	case v.null:
		sb.WriteString("(nil)")
	case v.kind == '_':
		sb.WriteString("(null)")
	case v.kind == ':':
		sb.WriteString(strconv.FormatInt(v.n, 10))
	case v.kind == '+' || v.kind == '-':
		sb.WriteByte(v.kind)
		sb.WriteString(v.str)
	case v.kind == '$':
		sb.WriteString(strconv.Quote(v.str))
	default:
		sb.WriteByte(v.kind)
		sb.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				sb.WriteByte(' ')
			}
			e.format(sb)
		}
		sb.WriteByte(']')
	}
}

// pairs returns the key/value pairs of a RESP3 map or a flat RESP2 array.
func (v rv) pairs() [][2]rv {
	var out [][2]rv
	for i := 0; i+1 < len(v.elems); i += 2 {
		out = append(out, [2]rv{v.elems[i], v.elems[i+1]})
	}
	return out
}

// strs returns the string contents of an aggregate's elements.
func (v rv) strs() []string {
	out := make([]string, 0, len(v.elems))
	for _, e := range v.elems {
		out = append(out, e.str)
	}
	return out
}

// diffRV lists the differences between got and want, prefixed with path.
func diffRV(path string, got, want rv) []string {
	if got.kind != want.kind || got.null != want.null {
		return []string{fmt.Sprintf("%s: got %s, want %s", path, got, want)}
	}
	switch {
	case got.null:
		return nil
	case got.str != want.str || got.n != want.n:
		return []string{fmt.Sprintf("%s: got %s, want %s", path, got, want)}
	case len(got.elems) != len(want.elems):
		return []string{fmt.Sprintf("%s: got %d elements %s, want %d %s", path, len(got.elems), got, len(want.elems), want)}
	}
	var out []string
	for i := range got.elems {
		p := path + "[" + strconv.Itoa(i) + "]"
		if want.kind == '%' && i%2 == 1 {
			p = path + "." + want.elems[i-1].str // name map values by key
		}
		out = append(out, diffRV(p, got.elems[i], want.elems[i])...)
	}
	return out
}
