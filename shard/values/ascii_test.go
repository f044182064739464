package values

import (
	"testing"
)

// The copies in ascii.go must agree with core/resp, whose tests are the
// reference for Redis' behaviour.
func TestASCIIHelpersMatchResp(t *testing.T) {
	ints := []string{
		"", "0", "-0", "00", "01", "1", "-1", "+1", " 1", "1 ", "12a", "-",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"123456789012345678901", "1e3", "0x10",
	}
	for _, s := range ints {
		gv, gok := parseInt([]byte(s))
		wv, wok := parseInt([]byte(s))
		if gv != wv || gok != wok {
			t.Errorf("parseInt(%q) = %d, %v; parseInt = %d, %v", s, gv, gok, wv, wok)
		}
	}
	folds := [][2]string{{"inf", "inf"}, {"INF", "inf"}, {"Infinity", "infinity"}, {"in", "inf"}, {"nan", "inf"}, {"[", "{"}, {"@", "`"}}
	for _, f := range folds {
		if g, w := equalFold([]byte(f[0]), f[1]), equalFold([]byte(f[0]), f[1]); g != w {
			t.Errorf("equalFold(%q, %q) = %v; equalFold = %v", f[0], f[1], g, w)
		}
	}
}
