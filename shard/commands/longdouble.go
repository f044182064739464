package commands

import (
	"math/big"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
)

// longDoublePrec is the mantissa width of x86-64's C long double (80-bit
// extended precision), in which Redis computes INCRBYFLOAT.
const longDoublePrec = 64

// Exponents of 2 bounding the long double range: values at or above
// 2^longDoubleMaxExp overflow to infinity, values below 2^longDoubleMinExp
// (half the smallest denormal) round to zero.
const (
	longDoubleMaxExp = 16384
	longDoubleMinExp = -16446
)

// maxLongDoubleChars is Redis' MAX_LONG_DOUBLE_CHARS: string2ld rejects
// longer input.
const maxLongDoubleChars = 5 * 1024

// parseLongDouble parses b into z (whose precision should be longDoublePrec)
// as Redis' string2ld does with strtold: no leading space, all of b consumed
// (so no NUL either), decimal or 0x hexadecimal (p exponent)
// floats and inf/infinity; NaN, and values that overflow or underflow to zero
// (strtold's ERANGE), are rejected.
func parseLongDouble(z *big.Float, b []byte) bool {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return false
	}
	if values.IsCSpace(b[0]) {
		return false
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if resp.EqualFold(s, "inf") || resp.EqualFold(s, "infinity") {
		z.SetInf(neg)
		return true
	}
	mag, zero, ok := scanCFloat(s)
	if !ok {
		return false
	}
	if zero {
		z.SetInt64(0)
		return true
	}
	// mag bounds the binary exponent, so hostile exponents cost nothing.
	if mag > longDoubleMaxExp+64 || mag < longDoubleMinExp-64 {
		return false // ERANGE: overflow to HUGE_VAL or underflow to zero
	}
	if _, _, err := z.Parse(string(b), 0); err != nil {
		return false
	}
	exp := z.MantExp(nil)
	return exp <= longDoubleMaxExp && exp > longDoubleMinExp
}

// scanCFloat checks that s (after the sign) is entirely a strtold decimal or
// hexadecimal number and returns an estimate of its binary exponent (within a
// few units) and whether its mantissa is zero.
func scanCFloat(s []byte) (mag int64, zero, ok bool) {
	hex := len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x'
	if hex {
		s = s[2:]
	}
	isDigit := func(ch byte) bool {
		return '0' <= ch && ch <= '9' || hex && ('a' <= ch|0x20 && ch|0x20 <= 'f')
	}
	// Mantissa: digits, optionally a point and more digits; at least one digit.
	digits := 0
	first := int64(-1) // position of the first non-zero digit from the point (1 = units)
	pos := int64(0)    // digits before the point
	i := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
		pos++
		if first < 0 && s[i] != '0' {
			first = pos
		}
	}
	intDigits := pos
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && isDigit(s[i]); i++ {
			digits++
			pos++
			if first < 0 && s[i] != '0' {
				first = pos
			}
		}
	}
	if digits == 0 {
		return 0, false, false
	}
	// Exponent: e (decimal) or p (hex), optional sign, at least one digit.
	var exp int64
	if i < len(s) && (!hex && s[i]|0x20 == 'e' || hex && s[i]|0x20 == 'p') {
		j := i + 1
		eneg := false
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			eneg = s[j] == '-'
			j++
		}
		if j == len(s) || s[j] < '0' || s[j] > '9' {
			return 0, false, false // strtold would stop before the e: trailing garbage
		}
		for ; j < len(s) && '0' <= s[j] && s[j] <= '9'; j++ {
			if exp < 1<<40 { // saturate: anything this large over- or underflows
				exp = exp*10 + int64(s[j]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
		i = j
	}
	if i != len(s) {
		return 0, false, false
	}
	if first < 0 {
		return 0, true, true
	}
	// The first non-zero digit has weight base^(intDigits-first).
	if hex {
		return exp + 4*(intDigits-first+1), false, true
	}
	// log2(10) < 3.33; a coarse bound is all the caller needs.
	return (exp + intDigits - first + 1) * 332 / 100, false, true
}

// longDoubleOverflows reports whether f is beyond the long double range.
func longDoubleOverflows(f *big.Float) bool {
	return f.IsInf() || f.MantExp(nil) > longDoubleMaxExp
}

// appendLongDoubleHuman appends f as Redis' ld2string(LD_STR_HUMAN): %.17Lf,
// then trailing zeros and a trailing point removed, and "-0" printed as "0".
func appendLongDoubleHuman(dst []byte, f *big.Float) []byte {
	if f.MantExp(nil) <= -58 { // |f| < 2^-58 < 0.5e-17: rounds to 0 (and skips an exact expansion of up to 16445 digits)
		return append(dst, '0')
	}
	start := len(dst)
	dst = f.Append(dst, 'f', 17)
	n := len(dst)
	for n > start && dst[n-1] == '0' {
		n--
	}
	if n > start && dst[n-1] == '.' {
		n--
	}
	dst = dst[:n]
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
