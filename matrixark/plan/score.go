package plan

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Score points, from the spec's plan_score.
const (
	topicBonus    = 1000
	allGroupBonus = 100
	perGroupBonus = 12
	bigramBonus   = 50
)

// needle is a word or phrase to look for, with its normalised form computed
// once at New.
type needle struct {
	raw  string // as written, lowercase
	norm string // Normalize(raw) without surrounding spaces; "" never matches
	// word is set when raw is only ASCII letters and digits. Such a needle
	// is in the normalised text exactly when it is in the lowercased text
	// (runs of alphanumerics are the same in both), so one search suffices.
	word bool
}

func newNeedle(s string) needle {
	n := needle{raw: s, norm: strings.TrimSpace(Normalize(s)), word: s != ""}
	for i := 0; i < len(s); i++ {
		if !isASCIIAlnum(s[i]) || s[i] >= 'A' && s[i] <= 'Z' {
			n.word = false
		}
	}
	return n
}

// Text is a text prepared for scoring, in the two forms the match rule
// reads: a text scored under many plans (a node's summary, which every
// query that finds the node scores) is prepared once.
type Text struct {
	lower string // ASCII-lowercased, byte for byte
	norm  string // Normalize(text)
}

// Prepare prepares s for ScoreText.
func Prepare(s string) Text {
	return Text{lower: asciiLower(s), norm: Normalize(s)}
}

func (t Text) has(n needle) bool {
	if strings.Contains(t.lower, n.raw) {
		return true
	}
	return !n.word && n.norm != "" && strings.Contains(t.norm, n.norm)
}

func (t Text) hasDigit() bool {
	for i := 0; i < len(t.lower); i++ {
		if t.lower[i] >= '0' && t.lower[i] <= '9' {
			return true
		}
	}
	return false
}

// Normalize lowercases the ASCII letters of s and turns every other
// character (not byte) into one space: "Topic-3…" becomes "topic 3 ".
func Normalize(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			b = append(b, normalByte[c])
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b = append(b, ' ')
		i += size
	}
	// b is not written again: the string can share it (a query scores
	// every candidate's text, so the copy would be a third of the work).
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// normalByte is Normalize's image of each ASCII byte.
var normalByte = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		switch b := byte(c); {
		case b >= 'A' && b <= 'Z':
			t[c] = b + 'a' - 'A'
		case isASCIIAlnum(b):
			t[c] = b
		default:
			t[c] = ' '
		}
	}
	return t
}()

// Contains applies the plan's match rule: term matches text when it is a
// substring of the ASCII-lowercased text, or when its normalised form
// (trimmed) is a substring of the normalised text. Matching is by substring,
// not by word, so "now" matches inside "know"; term is expected lowercase.
func Contains(text, term string) bool {
	return Prepare(text).has(newNeedle(term))
}

// Match reports whether text is relevant at all: its topic matches, the
// plan has no groups, or at least one group matches.
func (p *Plan) Match(text string) bool {
	t := Prepare(text)
	if p.Topic != "" && t.has(p.topic) {
		return true
	}
	if len(p.members) == 0 {
		return true
	}
	for i := range p.members {
		if groupBest(p.members[i], t) > 0 {
			return true
		}
	}
	return false
}

// MatchTopic reports whether the plan has a topic and text contains it.
func (p *Plan) MatchTopic(text string) bool {
	return p.Topic != "" && Prepare(text).has(p.topic)
}

// MatchedGroups returns how many of the plan's groups match text.
func (p *Plan) MatchedGroups(text string) int {
	t := Prepare(text)
	n := 0
	for i := range p.members {
		if groupBest(p.members[i], t) > 0 {
			n++
		}
	}
	return n
}

// Score is plan_score: how well text answers the plan, applying in order
//
//  1. no groups: 0;
//  2. topic match: +1000;
//  3. each group: + the byte length of its longest matching member;
//  4. all groups matched: +100, else if more than one matched: +12·matched;
//  5. each matching bigram: +50;
//  6. each set intent in table order: its bonus when a reward cue matches,
//     then its penalty when a penalty cue matches, saturating at 0.
//
// Because a penalty saturates when it is applied, 10 − 25 is 0 and a later
// intent's bonus adds to 0, not to −15.
func (p *Plan) Score(s string) uint32 {
	score, _ := p.ScoreGroups(s)
	return score
}

// ScoreGroups is Score and MatchedGroups of s at the cost of one: a
// ranking that needs both prepares the text once.
func (p *Plan) ScoreGroups(s string) (score uint32, matched int) {
	if len(p.members) == 0 {
		return 0, 0
	}
	return p.ScoreText(Prepare(s))
}

// ScoreText is ScoreGroups of a prepared text.
func (p *Plan) ScoreText(t Text) (score uint32, matched int) {
	if len(p.members) == 0 {
		return 0, 0
	}
	if p.Topic != "" && t.has(p.topic) {
		score = satAdd(score, topicBonus)
	}
	for i := range p.members {
		if best := groupBest(p.members[i], t); best > 0 {
			matched++
			score = satAdd(score, uint32(best))
		}
	}
	switch {
	case matched == len(p.members):
		score = satAdd(score, allGroupBonus)
	case matched > 1:
		score = satAdd(score, perGroupBonus*uint32(matched))
	}
	for _, b := range p.bigrams {
		if t.has(b) {
			score = satAdd(score, bigramBonus)
		}
	}
	for i := range p.rules {
		r := &p.rules[i]
		if r.digit && t.hasDigit() || hasAny(t, r.reward) {
			score = satAdd(score, r.bonus)
		}
		if r.penalty > 0 && hasAny(t, r.punish) {
			score = satSub(score, r.penalty)
		}
	}
	return score, matched
}

// groupBest returns the byte length of the longest member in ms found in
// t, or 0 when none is.
func groupBest(ms []needle, t Text) int {
	best := 0
	for _, m := range ms {
		if len(m.raw) > best && t.has(m) {
			best = len(m.raw)
		}
	}
	return best
}

func hasAny(t Text, ns []needle) bool {
	for _, n := range ns {
		if t.has(n) {
			return true
		}
	}
	return false
}

func satAdd(a, b uint32) uint32 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint32(0)
}

func satSub(a, b uint32) uint32 {
	if a < b {
		return 0
	}
	return a - b
}
