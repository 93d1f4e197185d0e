// Package plan is matrixark's lexical query understanding: it compiles a
// query into a Plan, scores texts against it (plan_score), and keeps a BM25
// index that proposes candidates for that scoring.
//
//	p := plan.New("latest payment fraud status topic 3")
//	p.Terms   // [latest payment fraud status topic]
//	p.Topic   // "3"
//	p.Intents // latest
//	p.Score("…checkout payment risk score changed after a fraud review…")
//
// # The plan
//
// The query is split on every character that is not an ASCII letter or
// digit and lowercased. Terms are the tokens of at least three bytes that
// are not stopwords, duplicates kept. Each term becomes a Group: the term,
// its Stem (ies→y, else -es, else -s, by length) and its synonyms; a group
// matches when any member does. Bigrams are adjacent terms. Topic is the
// first "topic <digits>" among the unfiltered tokens, so "topic 3" is found
// although "3" is too short to be a term. Intents are flags a term sets
// ("after" sets temporal and after). When, where, who and why are
// stopwords, so their triggers and synonym keys never fire: that is the
// original engine's behaviour, kept for conformance.
//
// # Matching
//
// A word or phrase matches a text when it is a substring of the
// ASCII-lowercased text, or when its normalised form (each non-alphanumeric
// character turned into a space, trimmed) is a substring of the normalised
// text. Matching is by substring: "now" matches inside "know", and the
// schedule cue "at " matches any "at" once trimmed. Contains applies the rule.
//
// # Scoring
//
// Score returns a uint32, applying in order: no groups gives 0; a topic
// match adds 1000; each group adds the byte length of its longest matching
// member; all groups matched adds 100, else more than one adds 12 per
// matched group; each matching bigram adds 50; then each set intent, in
// table order, adds its bonus when the text has one of its cues. The after
// and before intents also subtract 25 when the text has a cue of the other
// direction, saturating at 0 when applied, so a query asking what happened
// "after" prefers texts saying "later" or "new" over "before" or "earlier".
//
// # Candidates
//
// Index is a per-tenant, in-memory Okapi BM25 index (k1 1.2, b 0.75) over
// Analyze's terms: lowercase, split on non-letters and non-digits, drop
// stopwords, stem. It only generates candidates; Score orders them. A
// document belongs to a group (AddIn, SearchIn: a user), whose search walks
// that group's postings alone with the whole index's statistics. It is
// safe for concurrent use and not persisted: its owner rebuilds it from
// the store.
//
//	x := plan.NewIndex()
//	x.Add(42, "Customer checkout failed.")
//	hits := x.Search("checkout", 64) // []Hit{{ID: 42, Score: …}}
package plan
