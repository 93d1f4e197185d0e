package vindex

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var sum float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		sum += x * x
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// near is base plus noise, so a query has genuine neighbours.
func near(r *rand.Rand, base []float32, noise float64) []float32 {
	v := make([]float32, len(base))
	for i := range v {
		v[i] = base[i] + float32(noise*r.NormFloat64()/math.Sqrt(float64(len(base))))
	}
	return v
}

// bruteForce ranks every vector by cosine computed in float64 from the raw
// vectors, independently of the index's normalisation and quantization.
func bruteForce(vecs map[uint64][]float32, q []float32, limit int) []Hit {
	type scored struct {
		id  uint64
		cos float64
	}
	all := make([]scored, 0, len(vecs))
	for id, v := range vecs {
		all = append(all, scored{id, Cosine(q, v)})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.cos, a.cos); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	out := make([]Hit, 0, limit)
	for _, s := range all[:min(limit, len(all))] {
		out = append(out, Hit{ID: s.id, Score: float32(s.cos)})
	}
	return out
}

func ids(h []Hit) []uint64 {
	out := make([]uint64, len(h))
	for i, x := range h {
		out[i] = x.ID
	}
	return out
}

func TestCandidateCount(t *testing.T) {
	tests := []struct{ limit, want int }{
		{-5, 64}, {0, 64}, {1, 64}, {8, 64}, {9, 72}, {10, 80}, {100, 800},
		{255, 2040}, {256, 2048}, {257, 2048}, {1000, 2048}, {math.MaxInt, 2048},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, CandidateCount(tt.limit), "limit %d", tt.limit)
	}
}

func TestNew(t *testing.T) {
	for _, dim := range []int{0, -1, MaxDim + 1} {
		_, err := New(dim)
		require.ErrorIs(t, err, ErrDim, "dim %d", dim)
	}
	for _, dim := range []int{1, 384, MaxDim} {
		ix, err := New(dim)
		require.NoError(t, err)
		require.Equal(t, dim, ix.Dim())
		require.Zero(t, ix.Len())
	}
}

func TestAddRefuses(t *testing.T) {
	ix, err := New(4)
	require.NoError(t, err)
	tests := []struct {
		name string
		v    []float32
		want error
	}{
		{"short", []float32{1, 2, 3}, ErrDim},
		{"long", []float32{1, 2, 3, 4, 5}, ErrDim},
		{"nil", nil, ErrDim},
		{"NaN", []float32{1, float32(math.NaN()), 0, 0}, ErrNonFinite},
		{"Inf", []float32{1, 0, float32(math.Inf(1)), 0}, ErrNonFinite},
	}
	for _, tt := range tests {
		require.ErrorIs(t, ix.Add(1, tt.v), tt.want, tt.name)
	}
	require.Zero(t, ix.Len())
}

func TestQuantize(t *testing.T) {
	q := make([]int8, 4)
	s := quantize([]float32{1, -0.5, 0.25, 0}, q)
	require.InDelta(t, 1.0/127, float64(s), 1e-9)
	require.Equal(t, []int8{127, -64, 32, 0}, q, "round half away from zero: -63.5 → -64, 31.75 → 32")

	zero := []int8{9, 9}
	require.Zero(t, quantize([]float32{0, 0}, zero))

	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		x := randomUnit(r, 64)
		q := make([]int8, 64)
		s := quantize(x, q)
		for i := range x {
			require.LessOrEqual(t, math.Abs(float64(x[i])-float64(s)*float64(q[i])), float64(s)/2+1e-7)
		}
	}
}

func TestDotInt8NoOverflow(t *testing.T) {
	neg := make([]int8, MaxDim)
	pos := make([]int8, MaxDim)
	for i := range neg {
		neg[i], pos[i] = -127, 127
	}
	require.Equal(t, int32(MaxDim*127*127), dotInt8(neg, neg))
	require.Equal(t, int32(-MaxDim*127*127), dotInt8(neg, pos))
	require.Equal(t, int32(1*2+3*4+5*6), dotInt8([]int8{1, 3, 5}, []int8{2, 4, 6}), "tail past the unrolled loop")
}

// §13.6: the int8 top-C covers ≥0.99 of the exact top-10, and the final
// order equals the exact brute-force order.
func TestRecallAndExactOrder(t *testing.T) {
	tests := []struct{ dim, n, queries int }{
		{384, 3000, 30},
		{768, 2000, 24},
		{1536, 2000, 24},
	}
	const limit = 10
	for _, tt := range tests {
		t.Run("dim="+itoa(tt.dim), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tt.dim), 7))
			ix, err := New(tt.dim)
			require.NoError(t, err)
			vecs := make(map[uint64][]float32, tt.n)
			order := make([][]float32, 0, tt.n)
			for len(vecs) < tt.n {
				id := r.Uint64()
				if _, dup := vecs[id]; dup {
					continue
				}
				v := randomUnit(r, tt.dim)
				vecs[id] = v
				order = append(order, v)
				require.NoError(t, ix.Add(id, v))
			}
			require.Equal(t, tt.n, ix.Len())

			covered, total := 0, 0
			for qi := range tt.queries {
				// Half the queries sit near stored vectors, half are random.
				q := randomUnit(r, tt.dim)
				if qi%2 == 0 {
					q = near(r, order[r.IntN(len(order))], 0.8)
				}
				exact := bruteForce(vecs, q, limit)

				cands := ix.Candidates(q, CandidateCount(limit))
				require.Len(t, cands, CandidateCount(limit))
				in := make(map[uint64]bool, len(cands))
				for _, c := range cands {
					in[c.ID] = true
					// The int8 score tracks the cosine closely (unit vectors).
					require.InDelta(t, Cosine(q, vecs[c.ID]), float64(c.Score), 0.01)
				}
				for _, e := range exact {
					total++
					if in[e.ID] {
						covered++
					}
				}

				got := ix.Search(q, limit)
				require.Equal(t, ids(exact), ids(got), "query %d", qi)
				for i := range got {
					require.InDelta(t, exact[i].Score, got[i].Score, 1e-5, "query %d rank %d", qi, i)
				}
			}
			coverage := float64(covered) / float64(total)
			t.Logf("dim %d: top-%d coverage by int8 top-%d = %.4f", tt.dim, limit, CandidateCount(limit), coverage)
			require.GreaterOrEqual(t, coverage, 0.99)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSearchEdges(t *testing.T) {
	ix, err := New(3)
	require.NoError(t, err)
	require.Empty(t, ix.Search([]float32{1, 0, 0}, 10), "empty index")
	require.Empty(t, ix.Candidates([]float32{1, 0, 0}, 10), "empty index")

	vecs := map[uint64][]float32{
		7:  {1, 0, 0},
		3:  {2, 0, 0}, // same direction, other length: cosine ties with 7
		9:  {0, 5, 0},
		4:  {-1, -1, 0},
		11: {0, 0, 0}, // zero vector: stored, cosine 0
		2:  {1, 1, 1},
	}
	for id, v := range vecs {
		require.NoError(t, ix.Add(id, v))
	}
	q := []float32{3, 1, 0}

	all := ix.Search(q, 100) // limit > n returns everything
	require.Len(t, all, len(vecs))
	require.Equal(t, ids(bruteForce(vecs, q, 100)), ids(all))
	require.Equal(t, []uint64{3, 7}, ids(all[:2]), "equal cosine: id ascending")
	require.Equal(t, all[0].Score, all[1].Score)
	for _, h := range all {
		if h.ID == 11 {
			require.Zero(t, h.Score)
		}
	}
	require.Equal(t, ids(all[:3]), ids(ix.Search(q, 3)))

	tests := []struct {
		name  string
		q     []float32
		limit int
	}{
		{"limit 0", q, 0},
		{"negative limit", q, -1},
		{"zero query", []float32{0, 0, 0}, 5},
		{"short query", []float32{1, 0}, 5},
		{"long query", []float32{1, 0, 0, 0}, 5},
		{"NaN query", []float32{float32(math.NaN()), 0, 0}, 5},
	}
	for _, tt := range tests {
		require.Empty(t, ix.Search(tt.q, tt.limit), tt.name)
		require.Empty(t, ix.Candidates(tt.q, tt.limit), tt.name)
	}
}

// Stored vectors of very different lengths rank by cosine, not dot product.
func TestSearchIsCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim = 64
	ix, err := New(dim)
	require.NoError(t, err)
	vecs := map[uint64][]float32{}
	for id := range uint64(500) {
		v := randomUnit(r, dim)
		scale := float32(math.Pow(10, r.Float64()*6-3))
		for i := range v {
			v[i] *= scale
		}
		vecs[id] = v
		require.NoError(t, ix.Add(id, v))
	}
	for range 20 {
		q := randomUnit(r, dim)
		require.Equal(t, ids(bruteForce(vecs, q, 10)), ids(ix.Search(q, 10)))
	}
}

func TestAddReplaceRemove(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim = 32
	ix, err := New(dim)
	require.NoError(t, err)
	vecs := map[uint64][]float32{}
	for id := range uint64(200) {
		vecs[id] = randomUnit(r, dim)
		require.NoError(t, ix.Add(id, vecs[id]))
	}

	// Replacing keeps the count and changes what the id answers to.
	q := randomUnit(r, dim)
	vecs[42] = slices.Clone(q)
	require.NoError(t, ix.Add(42, q))
	require.Equal(t, 200, ix.Len())
	top := ix.Search(q, 1)
	require.Equal(t, uint64(42), top[0].ID)
	require.InDelta(t, 1, top[0].Score, 1e-6)

	// Remove from the front, middle and end; the moved vectors keep their ids.
	for _, id := range []uint64{0, 100, 199, 42} {
		require.True(t, ix.Remove(id))
		require.False(t, ix.Remove(id), "already gone")
		delete(vecs, id)
	}
	require.False(t, ix.Remove(12345))
	require.Equal(t, len(vecs), ix.Len())
	for range 10 {
		q := randomUnit(r, dim)
		got := ix.Search(q, 300)
		require.Equal(t, ids(bruteForce(vecs, q, 300)), ids(got))
	}

	for id := range vecs {
		require.True(t, ix.Remove(id))
	}
	require.Zero(t, ix.Len())
	require.Empty(t, ix.Search(q, 10))
	require.NoError(t, ix.Add(7, q), "usable after emptying")
	require.Equal(t, []uint64{7}, ids(ix.Search(q, 10)))
}

func TestConcurrent(t *testing.T) {
	const dim = 48
	ix, err := New(dim)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 200 {
				id := uint64(w*1000 + i)
				if err := ix.Add(id, randomUnit(r, dim)); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					ix.Remove(id)
				}
			}
		})
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for range 100 {
				hits := ix.Search(randomUnit(r, dim), 5)
				if !slices.IsSortedFunc(hits, byScoreThenID) {
					t.Error("unsorted hits")
					return
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, 4*(200-67), ix.Len())
}

func BenchmarkSearch(b *testing.B) {
	const dim, n, limit = 384, 10_000, 10
	r := rand.New(rand.NewPCG(9, 9))
	ix, err := New(dim)
	require.NoError(b, err)
	for id := range uint64(n) {
		require.NoError(b, ix.Add(id, randomUnit(r, dim)))
	}
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = randomUnit(r, dim)
	}
	i := 0
	for b.Loop() {
		if len(ix.Search(queries[i%len(queries)], limit)) != limit {
			b.Fatal("short result")
		}
		i++
	}
	b.ReportMetric(float64(min(CandidateCount(limit), n)), "candidates")
}
