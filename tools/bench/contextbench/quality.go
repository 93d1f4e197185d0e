package contextbench

import (
	"math"
	"slices"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// cutoffs are the k of recall@k.
var cutoffs = [3]int{1, 5, 10}

// Quality is how well one system found the planted evidence, averaged
// over the queries. Recall is the fraction of a query's evidence refs in
// its top k (frac@k), Any the share of queries with at least one of them
// there, All the share with every one. MRR is the mean reciprocal rank of
// the first evidence ref (0 when none is ranked). Retention is the
// fraction of evidence refs that made it into the packed prompt, and
// RetentionAll the share of queries whose whole evidence did. Figures a
// system does not produce are NaN (null in the JSON).
type Quality struct {
	Queries      int             `json:"queries"`
	Recall1      benchkit.Float  `json:"recall_at_1"`
	Recall5      benchkit.Float  `json:"recall_at_5"`
	Recall10     benchkit.Float  `json:"recall_at_10"`
	Any1         benchkit.Float  `json:"any_at_1"`
	Any5         benchkit.Float  `json:"any_at_5"`
	Any10        benchkit.Float  `json:"any_at_10"`
	All1         benchkit.Float  `json:"all_at_1"`
	All5         benchkit.Float  `json:"all_at_5"`
	All10        benchkit.Float  `json:"all_at_10"`
	MRR          benchkit.Float  `json:"mrr"`
	Retention    benchkit.Float  `json:"pack_retention"`
	RetentionAll benchkit.Float  `json:"pack_retention_all"`
	ByKind       map[string]Kind `json:"by_kind"`
	// StaleFirst is, over the updated facts, the share whose older value's
	// message ranks above the newer one (or is ranked while the newer one
	// is not): the answer a reader would most likely take is out of date.
	StaleFirst benchkit.Float `json:"stale_first"`
}

// Kind is recall@10 and pack retention over the queries of one kind.
type Kind struct {
	Queries   int            `json:"queries"`
	Recall10  benchkit.Float `json:"recall_at_10"`
	Retention benchkit.Float `json:"pack_retention"`
}

// tally accumulates Quality over queries.
type tally struct {
	n                 int
	frac, anyK, allK  [3]float64
	rr                float64
	ranked, packed    int
	ret, retAll       float64
	staleN, staleHits int
	kinds             map[string]*kindTally
}

type kindTally struct {
	n, packed   int
	recall, ret float64
}

func newTally() *tally { return &tally{kinds: map[string]*kindTally{}} }

// add scores one query: ranked is the system's refs in rank order (nil:
// it does not rank), packed the refs in its packed prompt (nil: it does
// not pack).
func (t *tally) add(q Query, ranked, packed []string) {
	t.n++
	k := t.kinds[q.Kind]
	if k == nil {
		k = &kindTally{}
		t.kinds[q.Kind] = k
	}
	k.n++
	if ranked != nil {
		t.ranked++
		for i, c := range cutoffs {
			f := found(q.Evidence, ranked[:min(c, len(ranked))])
			t.frac[i] += f
			if f > 0 {
				t.anyK[i]++
			}
			if f == 1 {
				t.allK[i]++
			}
			if c == 10 {
				k.recall += f
			}
		}
		if r := firstRank(q.Evidence, ranked); r > 0 {
			t.rr += 1 / float64(r)
		}
		if len(q.Stale) > 0 {
			t.staleN++
			s, e := firstRank(q.Stale, ranked), firstRank(q.Evidence, ranked)
			if s > 0 && (e == 0 || s < e) {
				t.staleHits++
			}
		}
	}
	if packed != nil {
		t.packed++
		k.packed++
		f := found(q.Evidence, packed)
		t.ret += f
		k.ret += f
		if f == 1 {
			t.retAll++
		}
	}
}

func (t *tally) quality() Quality {
	nan := benchkit.Float(math.NaN())
	div := func(x float64, n int) benchkit.Float {
		if n == 0 {
			return nan
		}
		return benchkit.Float(x / float64(n))
	}
	q := Quality{
		Queries: t.n,
		Recall1: div(t.frac[0], t.ranked), Recall5: div(t.frac[1], t.ranked), Recall10: div(t.frac[2], t.ranked),
		Any1: div(t.anyK[0], t.ranked), Any5: div(t.anyK[1], t.ranked), Any10: div(t.anyK[2], t.ranked),
		All1: div(t.allK[0], t.ranked), All5: div(t.allK[1], t.ranked), All10: div(t.allK[2], t.ranked),
		MRR:       div(t.rr, t.ranked),
		Retention: div(t.ret, t.packed), RetentionAll: div(t.retAll, t.packed),
		StaleFirst: div(float64(t.staleHits), t.staleN),
		ByKind:     map[string]Kind{},
	}
	if t.ranked == 0 {
		q.StaleFirst = nan
	}
	for name, k := range t.kinds {
		kq := Kind{Queries: k.n, Recall10: nan, Retention: div(k.ret, k.packed)}
		if t.ranked > 0 {
			kq.Recall10 = benchkit.Float(k.recall / float64(k.n))
		}
		q.ByKind[name] = kq
	}
	return q
}

// found is the fraction of evidence among refs.
func found(evidence, refs []string) float64 {
	if len(evidence) == 0 {
		return 0
	}
	n := 0
	for _, e := range evidence {
		if slices.Contains(refs, e) {
			n++
		}
	}
	return float64(n) / float64(len(evidence))
}

// firstRank is the 1-based rank of the first of want in ranked, 0 if none
// is there.
func firstRank(want, ranked []string) int {
	for i, r := range ranked {
		if slices.Contains(want, r) {
			return i + 1
		}
	}
	return 0
}
