package pubsub

// MaxPatternLen is the longest pattern that can match: a longer one
// never does, so that a subscription cannot make every publish slow.
const MaxPatternLen = 1024

// Match reports whether s matches the glob pattern as Redis's
// stringmatchlen matches it: '*' any run, '?' any byte, "[abc]", "[^e]",
// "[a-c]" classes (bytes compared as C's signed chars), '\' escaping the
// next byte, and an unterminated class ending at the pattern's end.
func Match(pattern, s string) bool {
	if len(pattern) > MaxPatternLen {
		return false
	}
	skip := false
	return match(pattern, s, &skip, 0)
}

func match(p, s string, skipLonger *bool, nesting int) bool {
	if nesting > 1000 {
		return false
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
				if match(p[1:], s, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			// No match for the rest of the pattern anywhere in the rest
			// of the string: a longer match of an earlier '*' cannot help.
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
			matched := false
			for {
				if len(p) == 0 {
					// Unterminated: the class ends with the pattern; the
					// loop's step below consumes nothing more.
					p = "]"
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						matched = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi, c := int8(p[0]), int8(p[2]), int8(s[0])
					if lo > hi {
						lo, hi = hi, lo
					}
					p = p[2:]
					if c >= lo && c <= hi {
						matched = true
					}
				} else if p[0] == s[0] {
					matched = true
				}
				p = p[1:]
			}
			if not {
				matched = !matched
			}
			if !matched {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
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
