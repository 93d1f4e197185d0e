package extract

import (
	"sort"
	"strings"
	"unicode"
)

// Summary bounds, in words.
const (
	L0Words      = 18 // an L0 line
	FactWords    = 32 // each fact of an L1
	L1OtherFacts = 7  // facts of an L1 besides the lead
	// An L1 is written on the live single-source path only for texts of
	// at least L1MinSentences sentences or L1MinWords words; batch ingest
	// always writes one.
	L1MinSentences = 3
	L1MinWords     = 180
)

// markers are the words and phrases of a change of fact: a sentence with
// one is likelier to matter later ("moved", "no longer", "instead").
var markers = []string{"now", "changed", "updated", "corrected", "correction", "instead", "no longer",
	"moved", "switched", "rescheduled", "deadline", "because", "after", "before"}

// Summary is a node's L0 and L1 and the sentences they were cut from.
type Summary struct {
	L0, L1    string
	Sentences []string
	Words     int
}

// WantsL1 says whether the live single-source path writes s's L1.
func (s Summary) WantsL1() bool {
	return len(s.Sentences) >= L1MinSentences || s.Words >= L1MinWords
}

// Summarize builds the L0 and L1 of a text of kind (doc, chat, ...) titled
// title. L0 is "{title}: {first sentence}" (the body when it has none) cut
// to 18 words; L1 is "kind={kind}; title={title}; key_facts={facts}" with
// the lead and up to seven other sentences by fact score, " | " between.
func Summarize(kind, title, body string) Summary {
	sents := Sentences(body)
	lead := strings.TrimSpace(body)
	if len(sents) > 0 {
		lead = sents[0]
	}
	s := Summary{Sentences: sents, Words: len(strings.Fields(body))}
	s.L0 = truncateWords(title+": "+lead, L0Words)
	facts := []string{truncateWords(lead, FactWords)}
	if len(sents) > 1 {
		others := make([]int, len(sents)-1)
		for i := range others {
			others[i] = i + 1
		}
		// Stable: equal scores keep the text's order.
		sort.SliceStable(others, func(a, b int) bool { return FactScore(sents[others[a]]) > FactScore(sents[others[b]]) })
		for _, i := range others[:min(len(others), L1OtherFacts)] {
			facts = append(facts, truncateWords(sents[i], FactWords))
		}
	}
	s.L1 = "kind=" + kind + "; title=" + title + "; key_facts=" + strings.Join(facts, " | ")
	return s
}

// Sentences splits text on '.', '!', '?' and newlines, trimmed, empty
// pieces dropped.
func Sentences(text string) []string {
	parts := strings.FieldsFunc(text, func(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '\n' })
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// FactScore rates how much a sentence states: +3 when it has a digit, +1
// for each capitalised word after the first, +2 for each change marker it
// holds.
func FactScore(sentence string) int {
	score := 0
	if strings.ContainsFunc(sentence, unicode.IsDigit) {
		score += 3
	}
	for i, w := range strings.Fields(sentence) {
		if i > 0 && startsUpper(w) {
			score++
		}
	}
	lower := " " + strings.ToLower(normalizeSpace(sentence)) + " "
	for _, m := range markers {
		if strings.Contains(lower, " "+m+" ") {
			score += 2
		}
	}
	return score
}

func startsUpper(w string) bool {
	for _, r := range w {
		return unicode.IsUpper(r)
	}
	return false
}

// normalizeSpace turns every non-letter, non-digit into a space, so that
// markers match as whole words beside punctuation.
func normalizeSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return ' '
	}, s)
}

func truncateWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(len(w), n)], " ")
}
