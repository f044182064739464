package glob

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, {"*", "abc", true}, // Redis' stringmatchlen never matches an empty string, {"", "", true}, {"", "a", false}, {"a", "", false},
		{"a*", "abc", true}, {"*c", "abc", true}, {"*b*", "abc", true}, {"*d*", "abc", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"???", "abc", true},
		{"[abc]", "b", true}, {"[abc]", "d", false}, {"[^abc]", "d", true}, {"[^abc]", "a", false},
		{"[a-c]x", "bx", true}, {"[c-a]x", "bx", true}, {"[a-c]x", "dx", false},
		{`\*`, "*", true}, {`\*`, "a", false}, {`[\]]`, "]", true}, {`a\`, `a\`, true},
		{"[abc", "a", true}, {"[abc", "ab", false}, // unterminated class, as Redis
		{"A*", "abc", true}, {"[A-C]", "b", true}, {"GET", "get", true},
		{"client|*", "client|setname", true}, {"*|*", "get", false},
		{"a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 60), false},
		{"[^]", "x", true}, {"[]]", "]", false}, {"**", "", false}, // checked against redis-server KEYS
		{"**", "x", true}, {"a**", "a", true}, {"a*?", "a", false},
	} {
		if got := Match([]byte(tc.pat), []byte(tc.s), true); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
	if Match([]byte("A"), []byte("a"), false) {
		t.Error("case-sensitive match folded case")
	}
}

func TestMatchHostilePatternTerminates(t *testing.T) {
	p := []byte("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b")
	s := make([]byte, 60)
	for i := range s {
		s[i] = 'a'
	}
	if Match(p, s, false) {
		t.Fatal("matched")
	}
}

func FuzzMatch(f *testing.F) {
	f.Add([]byte("h[a-z]*o?"), []byte("hello!"))
	f.Add([]byte(`[\`), []byte("x"))
	f.Fuzz(func(t *testing.T, p, s []byte) {
		if len(p) > 64 {
			p = p[:64]
		}
		Match(p, s, false)
		Match(p, s, true)
	})
}
