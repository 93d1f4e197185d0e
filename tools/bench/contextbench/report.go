package contextbench

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// figure is ours' (or another system's) summary at one size; the zero
// summary, all NaN, when the system did not run there.
func figure(sr sizeReport, system string) summary {
	if s, ok := sr.Systems[system]; ok {
		return s
	}
	nan := math.NaN()
	n := benchkit.Summary{Min: nan, Median: nan, Max: nan}
	f := benchkit.Float(nan)
	return summary{P50Ms: n, P95Ms: n, P99Ms: n, RetrieveP50Ms: n, RetrieveP95Ms: n, PackP50Ms: n, PackP95Ms: n,
		Quality: Quality{Recall10: f, Retention: f}}
}

// points is (ours − bm25) recall@10 in points.
func points(sr sizeReport) float64 {
	return (float64(figure(sr, sysOurs).Quality.Recall10) - float64(figure(sr, sysBM25).Quality.Recall10)) * 100
}

// summaryPairs are the last line's figures, at the largest size run.
func summaryPairs(sizes []sizeReport) benchkit.Pairs {
	if len(sizes) == 0 {
		return nil
	}
	l := sizes[len(sizes)-1]
	ours := figure(l, sysOurs)
	return benchkit.Pairs{
		benchkit.NewPair("retrieve_pack_p50_ms_"+sizeLabel(l.Nodes), ours.P50Ms.Median, 2),
		benchkit.NewPair("recall10", float64(ours.Quality.Recall10), 3),
		benchkit.NewPair("recall10_vs_bm25_points", points(l), 1),
	}
}

// detailLine is every size's headline figures, printed before the
// summary line.
func detailLine(sizes []sizeReport) string {
	parts := make([]string, 0, len(sizes))
	for _, sr := range sizes {
		o := figure(sr, sysOurs)
		ps := benchkit.Pairs{
			benchkit.NewPair("p50_ms", o.P50Ms.Median, 2),
			benchkit.NewPair("p95_ms", o.P95Ms.Median, 2),
			benchkit.NewPair("p99_ms", o.P99Ms.Median, 2),
			benchkit.NewPair("retrieve_p50_ms", o.RetrieveP50Ms.Median, 2),
			benchkit.NewPair("pack_p50_ms", o.PackP50Ms.Median, 2),
			benchkit.NewPair("recall10", float64(o.Quality.Recall10), 3),
			benchkit.NewPair("bm25_recall10", float64(figure(sr, sysBM25).Quality.Recall10), 3),
			benchkit.NewPair("points", points(sr), 1),
			benchkit.NewPair("retention", float64(o.Quality.Retention), 3),
			benchkit.NewPair("bm25_retention", float64(figure(sr, sysBM25).Quality.Retention), 3),
			benchkit.NewPair("replay_retention", float64(figure(sr, sysReplay).Quality.Retention), 3),
		}
		if m, ok := sr.Systems[sysModel]; ok {
			ps = append(ps, benchkit.NewPair("model_p50_ms", m.P50Ms.Median, 2), benchkit.NewPair("model_query_embed_p50_ms", m.EmbedP50Ms.Median, 2),
				benchkit.NewPair("model_beside_embed_p50_ms", m.BesideEmbedP50Ms.Median, 2), benchkit.NewPair("model_recall10", float64(m.Quality.Recall10), 3),
				benchkit.NewPair("model_retention", float64(m.Quality.Retention), 3))
		}
		parts = append(parts, benchkit.SummaryLine(sizeLabel(sr.Nodes), ps))
	}
	return "by size: " + strings.Join(parts, " | ")
}

// goals checks the and the spec's targets.
func goals(sizes []sizeReport) []goal {
	if len(sizes) == 0 {
		return nil
	}
	small, large := sizes[0], sizes[len(sizes)-1]
	var out []goal
	at := large
	note := ""
	for _, sr := range sizes {
		if sr.Nodes == goalNodes {
			at = sr
		}
	}
	if at.Nodes != goalNodes {
		note = fmt.Sprintf("%s nodes not run; measured at %s", sizeLabel(goalNodes), sizeLabel(at.Nodes))
	}
	p50 := figure(at, sysOurs).P50Ms.Median
	out = append(out, goal{Name: "retrieve_pack_p50_ms_at_100k", Value: benchkit.Float(p50), Target: goalP50Ms, Met: p50 <= goalP50Ms, Note: note})
	pt := points(large)
	out = append(out, goal{Name: "recall10_vs_bm25_points", Value: benchkit.Float(pt), Target: goalPoints, Met: pt >= goalPoints,
		Note: "at " + sizeLabel(large.Nodes)})
	p95 := figure(small, sysOurs).P95Ms.Median
	out = append(out, goal{Name: "spec_p95_ms_at_" + sizeLabel(small.Nodes), Value: benchkit.Float(p95), Target: specP95Ms, Met: p95 <= specP95Ms,
		Note: fmt.Sprintf("p95_ratio=17/ours=%s", benchkit.FormatNumber(specP95Ms/p95, 2))})
	if large.Nodes == specScaleFactor*small.Nodes {
		p95 := figure(large, sysOurs).P95Ms.Median
		out = append(out, goal{Name: "spec_p95_ms_at_" + sizeLabel(large.Nodes), Value: benchkit.Float(p95), Target: specP95MsTimes, Met: p95 <= specP95MsTimes})
	}
	if m, ok := large.Systems[sysModel]; ok {
		pt := (float64(m.Quality.Recall10) - float64(figure(large, sysBM25).Quality.Recall10)) * 100
		out = append(out, goal{Name: "model_recall10_vs_bm25_points", Value: benchkit.Float(pt), Target: goalPoints, Met: pt >= goalPoints,
			Note: "the model arm (a real embedding model), at " + sizeLabel(large.Nodes)})
		beside := m.BesideEmbedP50Ms.Median
		out = append(out, goal{Name: "model_beside_embed_p50_ms", Value: benchkit.Float(beside), Target: goalP50Ms, Met: beside <= goalP50Ms,
			Note: fmt.Sprintf("the model arm's retrieve+pack less its query's embedding (p50 %s ms, the model's floor here), at %s",
				benchkit.FormatNumber(m.EmbedP50Ms.Median, 2), sizeLabel(large.Nodes))})
	}
	ours := float64(figure(large, sysOurs).Quality.Retention)
	best := max(float64(figure(large, sysBM25).Quality.Retention), float64(figure(large, sysReplay).Quality.Retention))
	out = append(out, goal{Name: "spec_retention_over_best_baseline_points", Value: benchkit.Float((ours - best) * 100), Target: 0, Met: ours > best,
		Note: "pack evidence retention, ours minus the better of bm25 and replay, at " + sizeLabel(large.Nodes)})
	return out
}

func span(s benchkit.Summary, digits int) string {
	return fmt.Sprintf("%s (%s..%s)", benchkit.FormatNumber(s.Median, digits), benchkit.FormatNumber(s.Min, digits), benchkit.FormatNumber(s.Max, digits))
}

func f3(x benchkit.Float) string { return benchkit.FormatNumber(float64(x), 3) }

func printTable(w io.Writer, rep report) {
	fmt.Fprintf(w, "budget %d tokens (%s), %d repeats alternating; latency medians (min..max over repeats), ms\n", rep.Config.Budget, rep.Tokenizer, rep.Config.Repeats)
	for _, sr := range rep.Sizes {
		fmt.Fprintf(w, "\n%s nodes: %d users, %d messages, %d queries %v\n", sizeLabel(sr.Nodes), sr.Users, sr.Messages, sr.Queries, sr.QueryKinds)
		fmt.Fprintf(w, "%-10s %22s %22s %22s %20s %20s %8s %8s\n", "system", "p50", "p95", "p99", "retrieve p50", "pack p50", "tok p50", "tok max")
		for _, name := range []string{sysOurs, sysHash, sysHalf, sysModel, sysBM25, sysReplay} {
			s, ok := sr.Systems[name]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "%-10s %22s %22s %22s %20s %20s %8.0f %8.0f\n", name, span(s.P50Ms, 3), span(s.P95Ms, 3), span(s.P99Ms, 3),
				span(s.RetrieveP50Ms, 3), span(s.PackP50Ms, 3), s.TokensP50, s.TokensMax)
		}
		fmt.Fprintf(w, "%-10s %7s %7s %7s %7s %7s %7s %7s %9s %9s %9s %9s %6s\n", "system", "r@1", "r@5", "r@10", "all@10", "MRR", "retain", "ret.all", "single", "updated", "split", "stale1st", "det")
		for _, name := range []string{sysOurs, sysHash, sysHalf, sysModel, sysBM25, sysReplay} {
			s, ok := sr.Systems[name]
			if !ok {
				continue
			}
			q := s.Quality
			kind := func(k string) string { return f3(q.ByKind[k].Recall10) }
			fmt.Fprintf(w, "%-10s %7s %7s %7s %7s %7s %7s %7s %9s %9s %9s %9s %6v\n", name, f3(q.Recall1), f3(q.Recall5), f3(q.Recall10), f3(q.All10), f3(q.MRR),
				f3(q.Retention), f3(q.RetentionAll), kind(KindSingle), kind(KindUpdated), kind(KindSplit), f3(q.StaleFirst), s.Deterministic)
		}
		for _, name := range []string{sysOurs, sysHash, sysHalf, sysModel} {
			if l, ok := sr.Load[name]; ok {
				fmt.Fprintf(w, "load %-9s %.1f s (%.0f nodes/s), heap %.0f MB", name, l.Seconds, l.NodesPerSec, l.HeapMB)
				if l.RebuildSeconds > 0 {
					fmt.Fprintf(w, ", rebuild %.1f s", l.RebuildSeconds)
				}
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintln(w, "\ngoals:")
	for _, g := range rep.Goals {
		met := "NOT MET"
		if g.Met {
			met = "met"
		}
		fmt.Fprintf(w, "  %-42s %10s (target %g) %s", g.Name, benchkit.FormatNumber(float64(g.Value), 2), g.Target, met)
		if g.Note != "" {
			fmt.Fprintf(w, "  [%s]", g.Note)
		}
		fmt.Fprintln(w)
	}
}
