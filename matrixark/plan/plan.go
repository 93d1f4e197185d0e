package plan

import (
	"slices"
	"strings"
)

// MinTermLen is the shortest query token kept as a term. Shorter tokens
// ("is", "3") still count when looking for a topic.
const MinTermLen = 3

// Plan is the lexical reading of one query. Build it once with New and score
// many texts with it; a Plan is read-only after New and safe for concurrent
// use.
type Plan struct {
	// Terms are the query's tokens after lowercasing, the length filter and
	// stopword removal, in query order, duplicates kept.
	Terms []string
	// Groups holds one group per term, in the same order as Terms.
	Groups []Group
	// Bigrams are adjacent terms joined by one space.
	Bigrams []string
	// Topic holds the digits of the first "topic <digits>" among the
	// unfiltered query tokens, or "" when there is none.
	Topic string
	// Intents are the flags the query's terms set (see Intent).
	Intents Intent

	members [][]needle // Groups[i].Members as needles
	topic   needle     // "topic <digits>", when Topic != ""
	bigrams []needle   // Bigrams as needles
	rules   []rule     // the set intents, in table order
}

// Group is one query term with the words that stand in for it. The group
// matches a text when any of its Members does.
type Group struct {
	// Term is the query term itself.
	Term string
	// Stem is Stem(Term), or "" when the stem rule does not apply.
	Stem string
	// Synonyms are the term's entries in the synonym table, in table order.
	Synonyms []string
	// Members is the sorted, deduplicated union of Term, Stem and Synonyms.
	Members []string
}

// New compiles query into a Plan. Any string is a valid query; one without
// terms yields a Plan whose Score is always 0.
func New(query string) *Plan {
	raw := tokens(query)
	p := &Plan{}
	for _, tok := range raw {
		if len(tok) >= MinTermLen && !IsStopword(tok) {
			p.Terms = append(p.Terms, tok)
		}
	}
	p.Groups = make([]Group, len(p.Terms))
	for i, term := range p.Terms {
		p.Groups[i] = newGroup(term)
		p.members = append(p.members, needles(p.Groups[i].Members...))
		p.Intents |= triggers(term)
	}
	for i := 1; i < len(p.Terms); i++ {
		b := p.Terms[i-1] + " " + p.Terms[i]
		p.Bigrams = append(p.Bigrams, b)
		p.bigrams = append(p.bigrams, newNeedle(b))
	}
	for i := 1; i < len(raw); i++ {
		if raw[i-1] == "topic" && allDigits(raw[i]) {
			p.Topic = raw[i]
			p.topic = newNeedle("topic " + raw[i])
			break
		}
	}
	for _, in := range intentOrder() {
		if p.Intents&in != 0 {
			p.rules = append(p.rules, ruleFor(in))
		}
	}
	return p
}

// TopicPhrase returns "topic <digits>" for a plan with a topic, else "".
func (p *Plan) TopicPhrase() string {
	return p.topic.raw
}

func newGroup(term string) Group {
	g := Group{Term: term, Synonyms: synonyms(term)}
	members := append(make([]string, 0, 2+len(g.Synonyms)), term)
	if s := Stem(term); s != term {
		g.Stem = s
		members = append(members, s)
	}
	members = append(members, g.Synonyms...)
	g.Members = sortedUnique(members)
	return g
}

// Stem applies the plan's one suffix rule: a term longer than 4 bytes ending
// in "ies" ends in "y" instead; else a term longer than 4 ending in "es"
// loses it; else a term longer than 3 ending in "s" loses it. Any other term
// is returned unchanged.
func Stem(term string) string {
	switch {
	case len(term) > 4 && strings.HasSuffix(term, "ies"):
		return term[:len(term)-3] + "y"
	case len(term) > 4 && strings.HasSuffix(term, "es"):
		return term[:len(term)-2]
	case len(term) > 3 && strings.HasSuffix(term, "s"):
		return term[:len(term)-1]
	}
	return term
}

// IsStopword reports whether term (lowercase) is one of the words the plan
// and the analyzer drop. The list is the original's, kept for conformance:
// it includes when, where, who and why, so those never reach a group or an
// intent.
func IsStopword(term string) bool {
	switch term {
	case "the", "and", "for", "with", "that", "this", "what", "when", "where",
		"which", "who", "why", "how", "about", "would", "likely", "still",
		"considered", "consider", "more", "benchmark", "context", "memory",
		"conversation", "dialogue", "question":
		return true
	}
	return false
}

// tokens splits s on every byte that is not an ASCII letter or digit and
// lowercases the pieces. Bytes of multi-byte UTF-8 sequences are all ≥0x80,
// so splitting bytewise equals splitting on non-ASCII characters.
func tokens(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isASCIIAlnum(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, asciiLower(s[start:i]))
			start = -1
		}
	}
	return out
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// asciiLower lowercases ASCII letters only, leaving every other byte as is,
// so byte offsets and lengths are preserved.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func sortedUnique(xs []string) []string {
	slices.Sort(xs)
	return slices.Compact(xs)
}
