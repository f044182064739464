package values

import (
	"math"
)

// ParseStrtoul reads a SCAN cursor as Redis' parseScanCursorOrReply does with
// strtoul: no leading space, an optional sign ("-1" is the largest value),
// decimal digits, nothing after them, no overflow. strtoul reads "" as 0.
func ParseStrtoul(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	neg := b[0] == '-'
	if b[0] == '+' || b[0] == '-' {
		b = b[1:]
		if len(b) == 0 {
			return 0, false // no digits: strtoul consumes nothing
		}
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// IsCSpace is C's isspace in the C locale (what strtoul, strtold and
// Redis' number parsers skip or refuse).
func IsCSpace(ch byte) bool {
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r'
}

// ListpackBacklenSize is how many bytes Redis' lpEncodeBacklen uses for a
// listpack element of l bytes (shard's stream blocks size themselves with it).
func ListpackBacklenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}
