package values

// parseInt and equalFold are core/resp's ParseInt and EqualFold, copied so
// that this leaf imports none of our packages (see doc.go); ascii_test.go
// checks that the copies agree with the originals.

// maxIntLen bounds the digits of an int64 with its sign.
const maxIntLen = 21

// parseInt parses b as a base-10 int64 exactly as Redis' string2ll: no
// spaces, no '+', no leading zeros, and no overflow.
func parseInt(b []byte) (int64, bool) {
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

// equalFold reports whether b equals the word w, ignoring ASCII case.
func equalFold(b []byte, w string) bool {
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
