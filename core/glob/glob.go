// Package glob matches Redis glob-style patterns (KEYS, SCAN MATCH, CONFIG GET,
// COMMAND LIST FILTERBY PATTERN, PSUBSCRIBE) exactly as Redis 7.0's
// stringmatchlen does. It owns nothing else and never allocates.
package glob

// Match reports whether str matches the glob pattern, with Redis'
// stringmatchlen semantics (util.c): '*', '?', '[...]' with '^' negation,
// ranges and '\' escapes, and '\' escaping outside classes.
//
// Like Redis 7.0 it stops retrying longer '*' expansions once the rest of
// the pattern failed to match anywhere, which bounds the work on patterns
// such as "a*a*a*a*b".
func Match(pattern, str []byte, nocase bool) bool {
	skipLonger := false
	return globMatchImpl(pattern, str, nocase, &skipLonger)
}

func globMatchImpl(p, s []byte, nocase bool, skipLonger *bool) bool {
	fold := func(c byte) byte {
		if nocase {
			return lower(c)
		}
		return c
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchImpl(p[1:], s, nocase, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if len(p) == 0 {
					// Unterminated class: Redis steps back so that the
					// shared "advance pattern" below lands at the end.
					break
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					start, end, c := p[0], p[2], s[0]
					if start > end {
						start, end = end, start
					}
					start, end, c = fold(start), fold(end), fold(c)
					p = p[2:]
					if c >= start && c <= end {
						match = true
					}
				} else if fold(p[0]) == fold(s[0]) {
					match = true
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(p) == 0 {
				// Unterminated class consumed the whole pattern.
				return len(s) == 0
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if fold(p[0]) != fold(s[0]) {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
