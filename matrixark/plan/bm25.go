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
// generate candidates. Each document belongs to a group (a user, say), and
// its postings are kept by group, so a search within one group walks that
// group's postings alone while scoring with the whole index's statistics:
// a scoped search ranks as a search of everything filtered to the group
// would. It is not persisted: the owner rebuilds it from the store. An
// Index is safe for concurrent use; the zero value is not, use NewIndex.
type Index struct {
	mu       sync.RWMutex
	docs     map[uint64]indexedDoc
	groups   map[string]map[string]*postingList // group → term → postings
	df       map[string]int                     // documents holding each term
	totalLen int                                // Σ document lengths, in terms
}

// postingList is a term's documents of one group in parallel slices, which
// a search walks without a map lookup a posting. A long list also keeps
// each document's place for a removal in O(1) (the last takes its place);
// most lists are short (one user's documents with the term) and a removal
// finds its place by a scan.
type postingList struct {
	ids  []uint64
	tfs  []uint32 // the term's frequency in the document
	lens []uint32 // the document's length in terms
	at   map[uint64]int32
}

// indexAbove is the length from which a posting list keeps its places.
const indexAbove = 64

func (p *postingList) add(id uint64, tf, length uint32) {
	if p.at != nil {
		p.at[id] = int32(len(p.ids))
	}
	p.ids, p.tfs, p.lens = append(p.ids, id), append(p.tfs, tf), append(p.lens, length)
	if p.at == nil && len(p.ids) > indexAbove {
		p.at = make(map[uint64]int32, len(p.ids))
		for i, d := range p.ids {
			p.at[d] = int32(i)
		}
	}
}

func (p *postingList) remove(id uint64) {
	i := -1
	if p.at != nil {
		if j, ok := p.at[id]; ok {
			i = int(j)
		}
	} else {
		i = slices.Index(p.ids, id)
	}
	if i < 0 {
		return
	}
	last := len(p.ids) - 1
	if i != last {
		p.ids[i], p.tfs[i], p.lens[i] = p.ids[last], p.tfs[last], p.lens[last]
		if p.at != nil {
			p.at[p.ids[i]] = int32(i)
		}
	}
	p.ids, p.tfs, p.lens = p.ids[:last], p.tfs[:last], p.lens[:last]
	if p.at != nil {
		delete(p.at, id)
	}
}

type indexedDoc struct {
	length int
	group  string
	terms  []string // distinct terms, to unlink postings on removal
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{docs: map[uint64]indexedDoc{}, groups: map[string]map[string]*postingList{}, df: map[string]int{}}
}

// Add indexes text under id in the group "", replacing whatever id held
// before. A text with no terms still counts as a document of length 0.
func (x *Index) Add(id uint64, text string) { x.AddIn(id, "", text) }

// AddIn indexes text under id in group, replacing whatever id held before
// (in any group).
func (x *Index) AddIn(id uint64, group, text string) {
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
	g := x.groups[group]
	if g == nil {
		g = map[string]*postingList{}
		x.groups[group] = g
	}
	for t, n := range tf {
		p := g[t]
		if p == nil {
			p = &postingList{}
			g[t] = p
		}
		p.add(id, n, uint32(len(terms)))
		x.df[t]++
	}
	x.docs[id] = indexedDoc{length: len(terms), group: group, terms: distinct}
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
	g := x.groups[d.group]
	for _, t := range d.terms {
		p := g[t]
		p.remove(id)
		if len(p.ids) == 0 {
			delete(g, t)
		}
		if x.df[t]--; x.df[t] == 0 {
			delete(x.df, t)
		}
	}
	if len(g) == 0 {
		delete(x.groups, d.group)
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
	return idf(len(x.docs), x.df[term])
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
	return x.search(query, k, nil, keep)
}

// SearchIn is SearchFunc over group's documents: it walks only their
// postings, and scores as SearchFunc does.
func (x *Index) SearchIn(query string, k int, group string, keep func(id uint64) bool) []Hit {
	return x.search(query, k, &group, keep)
}

func (x *Index) search(query string, k int, group *string, keep func(id uint64) bool) []Hit {
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
		df := x.df[t]
		if df == 0 {
			continue
		}
		w := idf(n, df)
		if group != nil {
			x.score(scores, x.groups[*group][t], w, avgdl, keep)
			continue
		}
		for _, g := range x.groups {
			x.score(scores, g[t], w, avgdl, keep)
		}
	}
	return topK(scores, k)
}

// score adds each posting's BM25 term score to scores.
func (x *Index) score(scores map[uint64]float64, p *postingList, w, avgdl float64, keep func(uint64) bool) {
	if p == nil {
		return
	}
	for i, id := range p.ids {
		if keep != nil && !keep(id) {
			continue
		}
		tf := float64(p.tfs[i])
		norm := 1 - B
		if avgdl > 0 {
			norm += B * float64(p.lens[i]) / avgdl
		}
		scores[id] += w * tf * (K1 + 1) / (tf + K1*norm)
	}
}

// hitOrder is the result order: score descending, then ID ascending.
func hitOrder(a, b Hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID)) }

// topK is the k best of scores in hitOrder, kept in a heap of k (the
// worst at its root) rather than by sorting every hit.
func topK(scores map[uint64]float64, k int) []Hit {
	h := make([]Hit, 0, min(k, len(scores)))
	worse := func(i, j int) bool { return hitOrder(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && worse(l, w) {
				w = l
			}
			if r < len(h) && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for id, s := range scores {
		hit := Hit{ID: id, Score: s}
		switch {
		case len(h) < k:
			h = append(h, hit)
			for i := len(h) - 1; i > 0 && worse(i, (i-1)/2); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case hitOrder(hit, h[0]) < 0:
			h[0] = hit
			down(0)
		}
	}
	slices.SortFunc(h, hitOrder)
	return h
}
