package resp

// noCopy makes go vet's copylocks check report copies of the structs that
// embed it (fasthttp's nocopy.go). It has no runtime cost.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// maxIntLen is Redis' LONG_STR_SIZE: string2ll rejects strings this long.
const maxIntLen = 21

// ParseInt is Redis' string2ll, the parser behind every integer argument
// ("value is not an integer or out of range"): an optional '-', then digits without
// leading zeros ("0" alone is fine), no '+', no spaces, at most 20 bytes,
// within int64. It reports false for anything else, including "" and "-0".
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) >= maxIntLen {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1)/10 || v*10 > 1<<64-1-d {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to itself: math.MinInt64
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// EqualFold reports whether b equals the word w, ignoring ASCII case: how
// option keywords (NX, EX, COUNT, SKIPME ...) are matched, without
// allocating or converting b to a string.
func EqualFold(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], w[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// AppendRepr appends s as Redis' sdscatrepr writes it: in double quotes,
// with \\ \" \n \r \t \a \b escaped and other bytes outside printable
// ASCII as \xHH (MONITOR lines, the AOF manifest's quoted names).
func AppendRepr[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c >= ' ' && c <= '~' {
				dst = append(dst, c)
			} else {
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(dst, '"')
}
