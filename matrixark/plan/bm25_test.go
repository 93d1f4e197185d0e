package plan_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"The Cats' payments, ÜBER-cool 42!", []string{"cat", "payment", "über", "cool", "42"}},
		{"what about the memory", nil},
		{"Stories\tand\nboxes", []string{"story", "box"}},
		{"a b", []string{"a", "b"}}, // no length filter, unlike plan terms
	}
	for _, tc := range tests {
		got := plan.Analyze(tc.text)
		if len(tc.want) == 0 {
			require.Empty(t, got, tc.text)
			continue
		}
		require.Equal(t, tc.want, got, tc.text)
	}
}

func ids(hits []plan.Hit) []uint64 {
	out := make([]uint64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	x := plan.NewIndex()
	x.Add(1, "The customer checkout failed")
	x.Add(2, "Weather is sunny today")
	x.Add(3, "Checkout error")
	x.Add(4, "Checkout error seen in the payment service during peak traffic hours yesterday evening")
	require.Equal(t, 4, x.Len())

	hits := x.Search("checkout", 10)
	require.NotContains(t, ids(hits), uint64(2), "an unrelated document is no candidate")
	require.Equal(t, []uint64{3, 1, 4}, ids(hits), "same tf: the shorter document ranks higher")
	for i := 1; i < len(hits); i++ {
		require.Greater(t, hits[i-1].Score, hits[i].Score)
	}

	require.Equal(t, []uint64{3}, ids(x.Search("checkout", 1)))
	require.Nil(t, x.Search("checkout", 0))
	require.Nil(t, x.Search("the and what", 10), "stopwords only")
	require.Nil(t, x.Search("", 10))
	require.Empty(t, x.Search("absent", 10))
}

func TestSearchScoreFormula(t *testing.T) {
	x := plan.NewIndex()
	x.Add(1, "alpha beta")
	x.Add(2, "gamma")
	// N=2, df=1, avgdl=1.5, dl=2, tf=1.
	idf := math.Log(1 + (2-1+0.5)/(1+0.5))
	want := idf * 1 * (plan.K1 + 1) / (1 + plan.K1*(1-plan.B+plan.B*2/1.5))
	hits := x.Search("alpha", 5)
	require.Len(t, hits, 1)
	require.InDelta(t, want, hits[0].Score, 1e-12)
	require.InDelta(t, idf, x.IDF("alpha"), 1e-12)
	// Repeating a query term does not change the score.
	require.Equal(t, hits, x.Search("alpha ALPHA alphas", 5))
}

func TestIDFRareAboveCommon(t *testing.T) {
	x := plan.NewIndex()
	for i := range 10 {
		x.Add(uint64(i), "common words here")
	}
	x.Add(10, "common rare")
	require.Greater(t, x.IDF("rare"), x.IDF("common"))
	require.Positive(t, x.IDF("common"), "idf stays positive even when every document has the term")
	hits := x.Search("rare common", 3)
	require.Equal(t, uint64(10), hits[0].ID)
}

func TestSearchTiesByID(t *testing.T) {
	x := plan.NewIndex()
	for _, id := range []uint64{7, 3, 9} {
		x.Add(id, "same text")
	}
	hits := x.Search("text", 10)
	require.Equal(t, []uint64{3, 7, 9}, ids(hits))
	require.Equal(t, hits[0].Score, hits[2].Score)
}

func TestAddReplacesAndRemove(t *testing.T) {
	x := plan.NewIndex()
	x.Add(1, "alpha")
	x.Add(1, "beta")
	require.Equal(t, 1, x.Len())
	require.Empty(t, x.Search("alpha", 10))
	require.Equal(t, []uint64{1}, ids(x.Search("beta", 10)))

	x.Add(2, "beta gamma")
	require.True(t, x.Remove(1))
	require.False(t, x.Remove(1))
	require.Equal(t, []uint64{2}, ids(x.Search("beta", 10)))
	require.InDelta(t, math.Log(1+0.5/1.5), x.IDF("beta"), 1e-12, "df and N follow removals")

	require.True(t, x.Remove(2))
	require.Zero(t, x.Len())
	require.Nil(t, x.Search("beta", 10))
}

func TestIndexConcurrent(t *testing.T) {
	x := plan.NewIndex()
	var wg sync.WaitGroup
	var bad atomic.Int64 // require must not be called off the test goroutine
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := uint64(w*1000 + i)
				x.Add(id, fmt.Sprintf("writer %d note %d checkout", w, i))
				if i%3 == 0 {
					x.Remove(id)
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				for _, h := range x.Search("checkout note", 5) {
					if math.IsNaN(h.Score) || h.Score <= 0 {
						bad.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, bad.Load())
	require.Equal(t, 4*(200-67), x.Len())
}

func TestSearchFuncScopesBeforeTopK(t *testing.T) {
	x := plan.NewIndex()
	for id := uint64(1); id <= 50; id++ {
		text := "checkout payment checkout"
		if id%10 == 0 {
			text = "checkout" // weaker, and the only ones kept
		}
		x.Add(id, text)
	}
	got := x.SearchFunc("checkout payment", 3, func(id uint64) bool { return id%10 == 0 })
	require.Len(t, got, 3)
	for _, h := range got {
		require.Zero(t, h.ID%10)
	}
	require.Equal(t, x.Search("checkout payment", 3), x.SearchFunc("checkout payment", 3, nil))
}

// Random adds (in one of three groups), replacements and removals, then
// searches of every k: the index answers as BM25 computed from scratch over
// what it holds does, and a group's search as that filtered to the group.
func TestSearchMatchesScratchBM25(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa"}
	groups := []string{"", "u1", "u2"}
	docs := map[uint64][]string{}
	groupOf := map[uint64]string{}
	x := plan.NewIndex()
	for step := range 6000 {
		id := uint64(rng.IntN(400)) // lists past 64 keep their places
		if rng.IntN(5) == 0 {
			require.Equal(t, docs[id] != nil, x.Remove(id))
			delete(docs, id)
			delete(groupOf, id)
		} else {
			n := rng.IntN(12)
			text := make([]string, n)
			for i := range text {
				text[i] = words[rng.IntN(len(words))]
			}
			g := groups[rng.IntN(len(groups))]
			x.AddIn(id, g, strings.Join(text, " "))
			docs[id], groupOf[id] = plan.Analyze(strings.Join(text, " ")), g
		}
		if step%100 != 0 {
			continue
		}
		query := []string{words[rng.IntN(len(words))], words[rng.IntN(len(words))]}
		k := 1 + rng.IntN(60)
		g := groups[rng.IntN(len(groups))]
		in := func(id uint64) bool { return groupOf[id] == g }
		for _, c := range []struct {
			want, got []plan.Hit
		}{
			{scratchBM25(docs, query, k, nil), x.Search(strings.Join(query, " "), k)},
			{scratchBM25(docs, query, k, in), x.SearchIn(strings.Join(query, " "), k, g, nil)},
		} {
			if len(c.want) == 0 {
				require.Empty(t, c.got, "step %d", step)
				continue
			}
			require.Equal(t, c.want, c.got, "step %d", step)
		}
	}
}

// scratchBM25 is Search's contract computed directly, over the documents
// keep accepts (all when nil) with the statistics of all.
func scratchBM25(docs map[uint64][]string, query []string, k int, keep func(uint64) bool) []plan.Hit {
	slices.Sort(query)
	query = slices.Compact(query)
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	if len(docs) == 0 {
		return nil
	}
	avgdl := float64(total) / float64(len(docs))
	scores := map[uint64]float64{}
	for _, term := range query {
		df := 0
		for _, d := range docs {
			if slices.Contains(d, term) {
				df++
			}
		}
		if df == 0 {
			continue
		}
		w := math.Log(1 + (float64(len(docs))-float64(df)+0.5)/(float64(df)+0.5))
		for id, d := range docs {
			if keep != nil && !keep(id) {
				continue
			}
			tf := float64(0)
			for _, w := range d {
				if w == term {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			norm := 1 - plan.B
			if avgdl > 0 {
				norm += plan.B * float64(len(d)) / avgdl
			}
			scores[id] += w * tf * (plan.K1 + 1) / (tf + plan.K1*norm)
		}
	}
	var hits []plan.Hit
	for id, s := range scores {
		hits = append(hits, plan.Hit{ID: id, Score: s})
	}
	slices.SortFunc(hits, func(a, b plan.Hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID)) })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}
