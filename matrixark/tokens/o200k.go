package tokens

import (
	"math"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A direct o200k_base counter. tiktoken-go splits text with its pattern
// through regexp2, a backtracking engine that took about nine tenths of a
// count; pieces splits it by hand, alternative by alternative as the
// pattern's leftmost-first matching does, and mergeCount runs the same
// byte-pair merge over the same ranks. FuzzO200kMatchesTiktoken holds the
// two to the same count. The pattern, one alternative a line:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+

// The classes of ASCII runes, looked up rather than searched for in the
// Unicode tables: most text a pack counts is ASCII.
const (
	clUpper  = 1 << iota // A-Z: Lu
	clLower              // a-z: Ll
	clNumber             // 0-9: Nd
	clSpace              // unicode.IsSpace
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		r := rune(c)
		switch {
		case r >= 'A' && r <= 'Z':
			t[c] = clUpper
		case r >= 'a' && r <= 'z':
			t[c] = clLower
		case r >= '0' && r <= '9':
			t[c] = clNumber
		case unicode.IsSpace(r):
			t[c] = clSpace
		}
	}
	return t
}()

func isUpperish(r rune) bool { // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	if r < utf8.RuneSelf {
		return asciiClass[r]&clUpper != 0
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

func isLowerish(r rune) bool { // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	if r < utf8.RuneSelf {
		return asciiClass[r]&clLower != 0
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clNumber != 0
	}
	return unicode.IsNumber(r)
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&clSpace != 0
	}
	return unicode.IsSpace(r)
}

func isLetterOrNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&(clUpper|clLower|clNumber) != 0
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isLead is [^\r\n\p{L}\p{N}]: what may precede a word.
func isLead(r rune) bool { return r != '\r' && r != '\n' && !isLetterOrNumber(r) }

// isSymbol is [^\s\p{L}\p{N}].
func isSymbol(r rune) bool { return !isSpace(r) && !isLetterOrNumber(r) }

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at rs[i:], or 0.
func contraction(rs []rune, i int) int {
	if i >= len(rs) || rs[i] != '\'' || i+1 >= len(rs) {
		return 0
	}
	lower := func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	a := lower(rs[i+1])
	switch a {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < len(rs) {
		b := lower(rs[i+2])
		if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
			return 3
		}
	}
	return 0
}

// run is how many runes from rs[i] in satisfy.
func run(rs []rune, i int, in func(rune) bool) int {
	n := 0
	for i+n < len(rs) && in(rs[i+n]) {
		n++
	}
	return n
}

// wordAt matches the first alternative at j (after its optional lead):
// Upperish* greedy, giving back until a Lowerish+ run can start, that run
// greedy, then an optional contraction. It returns the end, or -1.
func wordAt(rs []rune, j int) int {
	for t := run(rs, j, isUpperish); t >= 0; t-- {
		if j+t < len(rs) && isLowerish(rs[j+t]) {
			end := j + t + run(rs, j+t, isLowerish)
			return end + contraction(rs, end)
		}
	}
	return -1
}

// capitalAt matches the second alternative at j: Upperish+ then
// Lowerish*, then an optional contraction; -1 when no Upperish is there.
func capitalAt(rs []rune, j int) int {
	t := run(rs, j, isUpperish)
	if t == 0 {
		return -1
	}
	end := j + t + run(rs, j+t, isLowerish)
	return end + contraction(rs, end)
}

// wordAlternatives are the pattern's first two alternatives, in order.
var wordAlternatives = [...]func([]rune, int) int{wordAt, capitalAt}

// pieceEnd is the end of the piece the pattern matches at rs[i], or -1
// when none does (the rune is then skipped, as a regex scan skips it).
func pieceEnd(rs []rune, i int) int {
	lead := isLead(rs[i])
	for _, at := range wordAlternatives {
		if lead {
			if end := at(rs, i+1); end >= 0 {
				return end
			}
		}
		if end := at(rs, i); end >= 0 {
			return end
		}
	}
	if n := run(rs, i, isNumber); n > 0 {
		return i + min(n, 3)
	}
	j := i
	if rs[j] == ' ' && j+1 < len(rs) && isSymbol(rs[j+1]) {
		j++
	}
	if n := run(rs, j, isSymbol); n > 0 {
		end := j + n
		return end + run(rs, end, func(r rune) bool { return isCRLF(r) || r == '/' })
	}
	w := run(rs, i, isSpace)
	if w == 0 {
		return -1
	}
	// \s*[\r\n]+: the whitespace run given back to its last CR or LF.
	for t := w - 1; t >= 0; t-- {
		if isCRLF(rs[i+t]) {
			return i + t + 1
		}
	}
	// \s+(?!\S), else \s+.
	if i+w == len(rs) || w == 1 {
		return i + w
	}
	return i + w - 1
}

// o200k counts o200k_base tokens over its ranks. Safe for concurrent use.
type o200k struct {
	ranks map[string]int
	bufs  sync.Pool // *runeBuf: a count's runes, reused
}

// runeBuf is a text's runes and their offsets, kept between counts of
// texts up to maxKeptRunes.
type runeBuf struct {
	rs   []rune
	offs []int
}

const maxKeptRunes = 64 << 10

// count is the number of o200k_base tokens in s.
func (o *o200k) count(s string) int {
	if !utf8.ValidString(s) {
		// As tiktoken-go reads text: each invalid byte a U+FFFD.
		s = string([]rune(s))
	}
	buf, _ := o.bufs.Get().(*runeBuf)
	if buf == nil {
		buf = &runeBuf{}
	}
	defer o.bufs.Put(buf)
	rs, offs := buf.rs[:0], buf.offs[:0] // each rune, and its byte offset then len(s)
	for off, r := range s {
		rs, offs = append(rs, r), append(offs, off)
	}
	offs = append(offs, len(s))
	if cap(rs) <= maxKeptRunes {
		buf.rs, buf.offs = rs, offs
	}
	n := 0
	for i := 0; i < len(rs); {
		end := pieceEnd(rs, i)
		if end < 0 {
			i++
			continue
		}
		piece := s[offs[i]:offs[end]]
		if _, ok := o.ranks[piece]; ok {
			n++
		} else {
			n += mergeCount(piece, o.ranks)
		}
		i = end
	}
	return n
}

// mergeCount is how many tokens the byte-pair merge of piece leaves:
// tiktoken's merge (the lowest-ranked adjacent pair first, leftmost on a
// tie), counting the parts rather than returning them.
func mergeCount(piece string, ranks map[string]int) int {
	if len(piece) == 1 {
		return 1
	}
	type part struct{ start, rank int }
	parts := make([]part, len(piece)+1)
	for i := range parts {
		parts[i] = part{i, math.MaxInt}
	}
	rank := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		best, at := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}
