package vindex

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// MaxDim is the widest vector an Index accepts.
const MaxDim = 4096

// Candidate-set bounds: C = clamp(8·limit, MinCandidates, MaxCandidates).
const (
	MinCandidates = 64
	MaxCandidates = 2048
)

// Errors returned by this package; compare with errors.Is.
var (
	// ErrDim means a vector's width differs from the index's, or an index
	// width is outside 1..MaxDim.
	ErrDim = errors.New("vindex: wrong dimension")
	// ErrNonFinite means a vector holds NaN or ±Inf.
	ErrNonFinite = errors.New("vindex: non-finite value")
)

// Hit is one search result. Score is the exact cosine for Search and the
// approximate (int8) score for Candidates.
type Hit struct {
	ID    uint64
	Score float32
}

// CandidateCount is C for a search of limit results: clamp(8·limit, 64, 2048).
func CandidateCount(limit int) int {
	if limit > MaxCandidates/8 {
		return MaxCandidates
	}
	return max(8*limit, MinCandidates)
}

// Index holds vectors of one width under uint64 ids. It is safe for
// concurrent use; searches run in parallel with each other.
type Index struct {
	dim int

	mu    sync.RWMutex
	ids   []uint64       // position → id
	pos   map[uint64]int // id → position
	unit  []float32      // position·dim: the vector scaled to unit length (zero stays zero)
	q     []int8         // position·dim: int8 copy of unit
	scale []float32      // position: s = max|unit|/127, 0 for a zero vector
}

// New returns an empty index for vectors of width dim.
func New(dim int) (*Index, error) {
	if dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("%w: %d outside 1..%d", ErrDim, dim, MaxDim)
	}
	return &Index{dim: dim, pos: make(map[uint64]int)}, nil
}

// Dim is the index's vector width.
func (ix *Index) Dim() int { return ix.dim }

// Len is the number of vectors held.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids)
}

// Add stores v under id, replacing any vector already there. Only the
// direction matters to cosine, so v is kept scaled to unit length; a zero
// vector is kept and scores 0 against everything.
func (ix *Index) Add(id uint64, v []float32) error {
	if len(v) != ix.dim {
		return fmt.Errorf("%w: vector has %d, index has %d", ErrDim, len(v), ix.dim)
	}
	unit, ok := normalize(v)
	if !ok {
		return ErrNonFinite
	}
	qv := make([]int8, ix.dim)
	s := quantize(unit, qv)

	ix.mu.Lock()
	defer ix.mu.Unlock()
	p, exists := ix.pos[id]
	if !exists {
		p = len(ix.ids)
		ix.pos[id] = p
		ix.ids = append(ix.ids, id)
		ix.unit = append(ix.unit, unit...)
		ix.q = append(ix.q, qv...)
		ix.scale = append(ix.scale, s)
		return nil
	}
	copy(ix.unit[p*ix.dim:], unit)
	copy(ix.q[p*ix.dim:], qv)
	ix.scale[p] = s
	return nil
}

// Remove deletes id and reports whether it was present.
func (ix *Index) Remove(id uint64) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	p, ok := ix.pos[id]
	if !ok {
		return false
	}
	// Move the last vector into the hole so storage stays dense.
	last := len(ix.ids) - 1
	if p != last {
		moved := ix.ids[last]
		ix.ids[p] = moved
		ix.pos[moved] = p
		copy(ix.unit[p*ix.dim:(p+1)*ix.dim], ix.unit[last*ix.dim:])
		copy(ix.q[p*ix.dim:(p+1)*ix.dim], ix.q[last*ix.dim:])
		ix.scale[p] = ix.scale[last]
	}
	delete(ix.pos, id)
	ix.ids = ix.ids[:last]
	ix.unit = ix.unit[:last*ix.dim]
	ix.q = ix.q[:last*ix.dim]
	ix.scale = ix.scale[:last]
	return true
}

// Search returns up to limit ids by exact cosine with query, best first,
// ties by id ascending. It scores every vector by the int8 approximation,
// keeps the top CandidateCount(limit), and reranks only those in float32.
// A query of another width, a zero or non-finite query, or limit < 1 yields
// no hits.
func (ix *Index) Search(query []float32, limit int) []Hit {
	if limit < 1 {
		return nil
	}
	unit, qq, sq, ok := ix.prepare(query)
	if !ok {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	cands := ix.topApprox(qq, sq, CandidateCount(limit))
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = Hit{ID: ix.ids[c.pos], Score: dot(unit, ix.unit[c.pos*ix.dim:(c.pos+1)*ix.dim])}
	}
	slices.SortFunc(hits, byScoreThenID)
	return hits[:min(limit, len(hits))]
}

// Candidates returns up to n ids by the approximate int8 score, best first,
// ties by id ascending: the set Search reranks when n = CandidateCount(limit).
// Callers that merge vector candidates with other sources use it directly.
func (ix *Index) Candidates(query []float32, n int) []Hit {
	if n < 1 {
		return nil
	}
	_, qq, sq, ok := ix.prepare(query)
	if !ok {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	cands := ix.topApprox(qq, sq, n)
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = Hit{ID: c.id, Score: c.score}
	}
	slices.SortFunc(hits, byScoreThenID)
	return hits
}

func byScoreThenID(a, b Hit) int {
	return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
}

// prepare scales and quantizes a query; ok is false for a query that cannot
// rank anything.
func (ix *Index) prepare(query []float32) (unit []float32, q []int8, s float32, ok bool) {
	if len(query) != ix.dim {
		return nil, nil, 0, false
	}
	unit, ok = normalize(query)
	if !ok {
		return nil, nil, 0, false
	}
	q = make([]int8, ix.dim)
	s = quantize(unit, q)
	return unit, q, s, s != 0
}

type cand struct {
	score float32
	id    uint64
	pos   int
}

// worse orders candidates so the heap root is the one to evict first.
func worse(a, b cand) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

type candHeap []cand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// topApprox keeps the c best positions by s_q·s_v·Σq·v. Callers hold mu.
func (ix *Index) topApprox(qq []int8, sq float32, c int) []cand {
	n := len(ix.ids)
	c = min(c, n)
	if c == 0 {
		return nil
	}
	h := make(candHeap, 0, c)
	for p := range n {
		sc := sq * ix.scale[p] * float32(dotInt8(qq, ix.q[p*ix.dim:(p+1)*ix.dim]))
		next := cand{score: sc, id: ix.ids[p], pos: p}
		if len(h) < c {
			heap.Push(&h, next)
			continue
		}
		if worse(h[0], next) {
			h[0] = next
			heap.Fix(&h, 0)
		}
	}
	return h
}

// dotInt8 accumulates in int32: 4096·127·127 < 2^31, so it cannot overflow.
func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// dot of two unit float32 vectors, accumulated in float64 so the rerank is
// exact to float32 precision.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		s += float64(x) * float64(b[i])
	}
	return float32(s)
}

// normalize returns v scaled to unit length (a zero vector stays zero); ok
// is false when v holds NaN or ±Inf.
func normalize(v []float32) ([]float32, bool) {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		sum += f * f
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out, true
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, true
}

// quantize writes q_i = round(x_i/s) with s = max|x|/127 and returns s
// (0 for a zero vector, whose q stays zero).
func quantize(x []float32, q []int8) float32 {
	var m float32
	for _, v := range x {
		m = max(m, abs(v))
	}
	if m == 0 {
		return 0
	}
	s := m / 127
	for i, v := range x {
		r := math.Round(float64(v / s))
		q[i] = int8(max(-127, min(127, r)))
	}
	return s
}

func abs(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// Cosine is the cosine similarity of a and b (of one length), 0 when
// either is zero, accumulated in float64.
func Cosine(a, b []float32) float64 {
	b = b[:len(a)]
	var d, na, nb float64
	for i, x := range a {
		d += float64(x) * float64(b[i])
		na += float64(x) * float64(x)
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}
