package plan

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Okapi BM25 parameters (spec §5).
const (
	K1 = 1.2
	B  = 0.75
)

// Analyze turns text into index terms: lowercase, split on every character
// that is not a Unicode letter or digit, drop stopwords, apply Stem. Unlike
// a plan's terms it keeps short tokens and non-ASCII words, since the index
// only generates candidates and Score decides their order.
func Analyze(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if !IsStopword(f) {
			out = append(out, Stem(f))
		}
	}
	return out
}

// Hit is one Search result.
type Hit struct {
	ID    uint64
	Score float64
}

// Index is an in-memory Okapi BM25 index over one tenant's texts, used to
// generate candidates. It is not persisted: the owner rebuilds it from the
// store. An Index is safe for concurrent use; the zero value is not, use
// NewIndex.
type Index struct {
	mu       sync.RWMutex
	docs     map[uint64]indexedDoc
	postings map[string]map[uint64]uint32 // term → doc → term frequency
	totalLen int                          // Σ document lengths, in terms
}

type indexedDoc struct {
	length int
	terms  []string // distinct terms, to unlink postings on removal
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{docs: map[uint64]indexedDoc{}, postings: map[string]map[uint64]uint32{}}
}

// Add indexes text under id, replacing whatever id held before. A text
// with no terms still counts as a document of length 0.
func (x *Index) Add(id uint64, text string) {
	terms := Analyze(text)
	tf := make(map[string]uint32, len(terms))
	for _, t := range terms {
		tf[t]++
	}
	distinct := make([]string, 0, len(tf))
	for t := range tf {
		distinct = append(distinct, t)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
	for t, n := range tf {
		p := x.postings[t]
		if p == nil {
			p = map[uint64]uint32{}
			x.postings[t] = p
		}
		p[id] = n
	}
	x.docs[id] = indexedDoc{length: len(terms), terms: distinct}
	x.totalLen += len(terms)
}

// Remove drops id from the index and reports whether it was there.
func (x *Index) Remove(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.removeLocked(id)
}

func (x *Index) removeLocked(id uint64) bool {
	d, ok := x.docs[id]
	if !ok {
		return false
	}
	for _, t := range d.terms {
		p := x.postings[t]
		delete(p, id)
		if len(p) == 0 {
			delete(x.postings, t)
		}
	}
	x.totalLen -= d.length
	delete(x.docs, id)
	return true
}

// Len returns the number of indexed documents.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.docs)
}

// IDF returns ln(1 + (N − df + 0.5)/(df + 0.5)) for an analyzed term (as
// Analyze produces it), where N is the number of documents and df the number
// holding the term. It is positive for every df ≤ N.
func (x *Index) IDF(term string) float64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return idf(len(x.docs), len(x.postings[term]))
}

func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Search returns up to k documents matching at least one of query's terms,
// by BM25 score descending, then ID ascending. Each distinct query term
// counts once. k ≤ 0 returns nil.
func (x *Index) Search(query string, k int) []Hit {
	return x.SearchFunc(query, k, nil)
}

// SearchFunc is Search over the documents keep accepts (all when keep is
// nil): a scope applied before the top k is taken, so that a narrow scope
// still gets k hits of its own.
func (x *Index) SearchFunc(query string, k int, keep func(id uint64) bool) []Hit {
	if k <= 0 {
		return nil
	}
	terms := Analyze(query)
	slices.Sort(terms)
	terms = slices.Compact(terms)

	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.docs)
	if n == 0 || len(terms) == 0 {
		return nil
	}
	avgdl := float64(x.totalLen) / float64(n)
	scores := map[uint64]float64{}
	// Terms are visited in sorted order, so each document's sum is formed
	// in the same order every time and scores are reproducible.
	for _, t := range terms {
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		w := idf(n, len(p))
		for id, f := range p {
			if keep != nil && !keep(id) {
				continue
			}
			tf := float64(f)
			norm := 1 - B
			if avgdl > 0 {
				norm += B * float64(x.docs[id].length) / avgdl
			}
			scores[id] += w * tf * (K1 + 1) / (tf + K1*norm)
		}
	}
	hits := make([]Hit, 0, len(scores))
	for id, s := range scores {
		hits = append(hits, Hit{ID: id, Score: s})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
	if len(hits) > k {
		hits = slices.Clone(hits[:k]) // release the rest of a large result
	}
	return hits
}
