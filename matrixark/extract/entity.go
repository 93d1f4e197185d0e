package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

// Entity types.
const (
	Person   = "person"
	Place    = "place"
	Org      = "org"
	Quantity = "quantity"
	Date     = "date"
	State    = "state"
)

// MaxStateWords bounds the value of a state ("X is Y": Y).
const MaxStateWords = 6

// Entity is a thing a text names, with its value where it has one (a
// state's Y). Key identifies it within a node: FNV-1a of
// "{type}:{lower(name)}".
type Entity struct {
	Type, Name, Value string
	Key               uint64
}

func entity(typ, name, value string) Entity {
	return Entity{Type: typ, Name: name, Value: value, Key: h64.Sum(typ + ":" + strings.ToLower(name))}
}

var (
	// starters are capitalised only because they open a sentence.
	starters = set("the a an i we he she it they you this that these those my our your his her their " +
		"yes no hi hello hey thanks thank ok okay sure great good please so and but or if when where what " +
		"who why how also then there here just well can could would should will did do does is was are")
	placeWords = set("in at to from near via")
	orgEnds    = set("inc corp llc ltd co company bank university labs group")
	units      = set("kg g km m cm mm mi mile miles km/h mph % percent hour hours h minute minutes min " +
		"second seconds s day days week weeks month months year years usd eur gbp dollars euros pounds " +
		"people users items tokens ms gb mb tb")
	months = set("january february march april may june july august september october november december " +
		"jan feb mar apr jun jul aug sep sept oct nov dec")
	weekdays = set("monday tuesday wednesday thursday friday saturday sunday")
	copulas  = set("is was now are were")
	dets     = set("my our your his her their the a an")
	// joins end a state's value: "the budget is $40 and ..." states $40.
	joins = set("and but because so while although")
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Entities finds the entities of text by rule, each once (by Key, the
// first occurrence kept; a later state of the same subject replaces the
// value, as the latest statement wins).
func Entities(text string) []Entity {
	var out []Entity
	at := map[uint64]int{}
	add := func(e Entity) {
		if i, ok := at[e.Key]; ok {
			if e.Value != "" {
				out[i].Value = e.Value
			}
			return
		}
		at[e.Key] = len(out)
		out = append(out, e)
	}
	sents := Sentences(text)
	// A capitalised word opening a sentence is a name only when the text
	// also capitalises it elsewhere ("Sounds good" names nobody).
	midCaps := map[string]bool{}
	for _, s := range sents {
		for i, w := range strings.Fields(s) {
			if w = clean(w); i > 0 && startsUpper(w) {
				midCaps[strings.ToLower(w)] = true
			}
		}
	}
	for _, s := range sents {
		words := strings.Fields(s)
		names(words, midCaps, add)
		quantities(words, add)
		dates(words, add)
		states(words, add)
	}
	return out
}

// clean strips the punctuation around a word.
func clean(w string) string {
	return strings.TrimFunc(w, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '%' && r != '$' && r != '€' && r != '£'
	})
}

// names finds runs of capitalised words: a place after in/at/to/from, an
// organisation when it ends in Inc, Bank and the like, a person otherwise.
func names(words []string, midCaps map[string]bool, add func(Entity)) {
	for i := 0; i < len(words); {
		w := clean(words[i])
		lw := strings.ToLower(w)
		if !startsUpper(w) || (i == 0 && starters[lw]) || months[lw] || weekdays[lw] {
			i++
			continue
		}
		j := i + 1
		for j < len(words) && startsUpper(clean(words[j])) && !months[strings.ToLower(clean(words[j]))] {
			j++
		}
		if i == 0 && j == 1 && !midCaps[lw] {
			i++
			continue
		}
		span := make([]string, 0, j-i)
		for _, x := range words[i:j] {
			span = append(span, clean(x))
		}
		name := strings.Join(span, " ")
		typ := Person
		switch {
		case orgEnds[strings.ToLower(span[len(span)-1])]:
			typ = Org
		case i > 0 && placeWords[strings.ToLower(clean(words[i-1]))]:
			typ = Place
		}
		add(entity(typ, name, ""))
		i = j
	}
}

// quantities finds a number with a unit after it, or a currency before it
// ("$40", "12 kg", "30%").
func quantities(words []string, add func(Entity)) {
	for i, raw := range words {
		w := clean(raw)
		if w == "" {
			continue
		}
		r0, size := utf8.DecodeRuneInString(w)
		switch {
		case strings.ContainsRune("$€£", r0) && isNumber(w[size:]):
			add(entity(Quantity, w, w))
		case strings.HasSuffix(w, "%") && isNumber(strings.TrimSuffix(w, "%")):
			add(entity(Quantity, w, w))
		case isNumber(w) && i+1 < len(words) && units[strings.ToLower(clean(words[i+1]))]:
			q := w + " " + strings.ToLower(clean(words[i+1]))
			add(entity(Quantity, q, q))
		}
	}
}

// dates finds "March 3", "3 March", ISO dates (2026-03-04) and weekdays.
func dates(words []string, add func(Entity)) {
	for i, raw := range words {
		w := clean(raw)
		lw := strings.ToLower(w)
		switch {
		case isISODate(w):
			add(entity(Date, w, w))
		case weekdays[lw]:
			add(entity(Date, w, w))
		case months[lw] && i+1 < len(words) && isNumber(clean(words[i+1])):
			d := w + " " + clean(words[i+1])
			add(entity(Date, d, d))
		case months[lw] && i > 0 && isNumber(clean(words[i-1])):
			d := clean(words[i-1]) + " " + w
			add(entity(Date, d, d))
		}
	}
}

// states finds "X is/was/now Y": X the words before the verb (up to three,
// a leading determiner dropped), Y up to six words after it.
func states(words []string, add func(Entity)) {
	for i := 1; i+1 < len(words); i++ {
		if !copulas[strings.ToLower(clean(words[i]))] {
			continue
		}
		from := max(0, i-3)
		subj := make([]string, 0, 3)
		for _, x := range words[from:i] {
			if c := clean(x); c != "" {
				subj = append(subj, c)
			}
		}
		for len(subj) > 0 && dets[strings.ToLower(subj[0])] {
			subj = subj[1:]
		}
		if len(subj) == 0 || starters[strings.ToLower(subj[len(subj)-1])] {
			continue
		}
		from = i + 1
		for from < len(words) && copulas[strings.ToLower(clean(words[from]))] {
			from++ // "is now in Lisbon": the value is "in Lisbon"
		}
		end := min(len(words), from+MaxStateWords)
		val := make([]string, 0, MaxStateWords)
		for _, x := range words[from:end] {
			c := clean(x)
			if c == "" || joins[strings.ToLower(c)] {
				break
			}
			val = append(val, c)
			if strings.ContainsAny(x[len(x)-1:], ",;:") {
				break
			}
		}
		if len(val) == 0 {
			continue
		}
		add(entity(State, strings.Join(subj, " "), strings.Join(val, " ")))
	}
}

func isNumber(s string) bool {
	digits := 0
	for i, r := range s {
		switch {
		case unicode.IsDigit(r):
			digits++
		case (r == '.' || r == ',') && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return digits > 0
}

func isISODate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	return isNumber(s[:4]) && isNumber(s[5:7]) && isNumber(s[8:])
}
