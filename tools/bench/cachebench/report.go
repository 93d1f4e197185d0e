package cachebench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Goals, in percentage points of hit ratio: ours minus the peer, compared
// on the medians over repeats of each trace and capacity.
const (
	goalVsOtterPoints     = -0.5
	goalVsRistrettoPoints = 3.0
)

// report is the JSON written to bench-results/cache.json.
type report struct {
	Name       string         `json:"name"`
	Started    string         `json:"started"`
	Conditions map[string]any `json:"conditions"`
	Goals      map[string]any `json:"goals"`
	// Summary holds the figures of the summary line, in its order.
	Summary benchkit.Pairs `json:"summary"`
	Cells   []cellReport   `json:"cells"`
}

type traceInfo struct {
	Name         string      `json:"name"`
	File         string      `json:"file,omitempty"`
	Format       Format      `json:"format,omitempty"`
	Zipf         *ZipfParams `json:"zipf,omitempty"`
	Requests     int         `json:"requests"`
	DistinctKeys int         `json:"distinct_keys"`
	Capacities   []int       `json:"capacities"`
}

type cellReport struct {
	Key      string `json:"key"`
	Trace    string `json:"trace"`
	Capacity int    `json:"capacity"`
	Requests int    `json:"requests"`
	// Systems[name].HitPercent is min/median/max over the repeats.
	Systems map[string]*systemResult `json:"systems"`
	// Points["vs_otter_points"] is ours minus the peer in percentage
	// points, repeat i of ours paired with repeat i of the peer (the runs
	// that alternated next to each other), as min/median/max.
	Points map[string]benchkit.Summary `json:"points,omitempty"`
	// GoalsMet says, per goal, whether the median meets it.
	GoalsMet map[string]bool `json:"goals_met,omitempty"`
}

type systemResult struct {
	HitPercent benchkit.Summary `json:"hit_percent"`
	Runs       []runResult      `json:"runs"`
}

func hitColumn(runs []runResult) []float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = r.HitPercent
	}
	return xs
}

// pointDiffs benchkit.Pairs repeat i of ours with repeat i of the peer and returns
// ours minus peer for each pair.
func pointDiffs(ours, peer []float64) []float64 {
	n := min(len(ours), len(peer))
	out := make([]float64, n)
	for i := range n {
		out[i] = ours[i] - peer[i]
	}
	return out
}

func summarizeCell(c cell, names []string, runs map[string][]runResult) cellReport {
	cr := cellReport{
		Key: c.Key(), Trace: c.trace.Name, Capacity: c.capacity, Requests: len(c.trace.Keys),
		Systems: map[string]*systemResult{},
	}
	for _, n := range names {
		cr.Systems[n] = &systemResult{HitPercent: benchkit.Summarize(hitColumn(runs[n])), Runs: runs[n]}
	}
	ours, ok := runs[SystemOurs]
	if !ok {
		return cr
	}
	cr.Points = map[string]benchkit.Summary{}
	cr.GoalsMet = map[string]bool{}
	for _, n := range names {
		if n == SystemOurs {
			continue
		}
		d := benchkit.Summarize(pointDiffs(hitColumn(ours), hitColumn(runs[n])))
		cr.Points["vs_"+n+"_points"] = d
		switch n {
		case SystemOtter:
			cr.GoalsMet["vs_otter_points"] = d.Median >= goalVsOtterPoints
		case SystemRistretto:
			cr.GoalsMet["vs_ristretto_points"] = d.Median >= goalVsRistrettoPoints
		}
	}
	return cr
}

func goals() map[string]any {
	return map[string]any{
		"vs_otter_points":     fmt.Sprintf(">= %.1f on every trace and capacity (ours within half a point of otter)", goalVsOtterPoints),
		"vs_ristretto_points": fmt.Sprintf(">= +%.1f on every trace and capacity", goalVsRistrettoPoints),
		"judged_on":           "the median over repeats of (ours - peer) in percentage points of hit ratio",
	}
}

func conditions(cfg Config, names []string, skipped map[string]string, systems map[string]system, traces []traceInfo, commit string, took time.Duration) map[string]any {
	peers := map[string]any{}
	for _, n := range names {
		s := map[string]any{}
		for k, v := range systems[n].settings {
			s[k] = v
		}
		if mod, ok := s["module"].(string); ok {
			s["version"] = benchkit.ModuleVersion(mod)
		}
		if dir, ok := s["source_dir"].(string); ok {
			// A local module built through a replace: its version says
			// nothing, the commit of its directory does.
			s["version"] = "working tree (replace => ../" + strings.SplitN(dir, "/", 2)[0] + ")"
			if commit, dirty, ok := gitDirState(dir); ok {
				s["last_commit"] = commit
				s["uncommitted_changes"] = dirty
			}
		}
		peers[n] = s
	}
	c := map[string]any{
		"host":         benchkit.HostConditions(),
		"quick":        cfg.Quick,
		"repeats":      cfg.Repeats,
		"systems":      names,
		"traces":       traces,
		"traces_dir":   cfg.TracesDir,
		"settings":     peers,
		"took_seconds": math.Round(took.Seconds()*10) / 10,
		"hit_ratio":    "hits / requests over the whole trace, replayed from a cold cache with no warm-up; a request is a Get, and a miss is followed by a Set (ours: Access when present, else Admit); every system replays in the same process at the same capacity in entries",
		"alternation":  "within each repeat the systems replay the same trace and capacity one after another, in the order of systems",
		"throughput":   "not measured yet: Get/Set ns/op against otter and ristretto and memory per entry need the concurrent cache, which does not exist yet; get_vs_otter_ratio and get_vs_ristretto_ratio are therefore n/a (null), not estimated",
	}
	if len(skipped) > 0 {
		c["skipped"] = skipped
	}
	if commit != "" {
		c["commit"] = commit
	}
	if cfg.UserTrace != "" {
		c["user_trace"] = cfg.UserTrace
	}
	return c
}

func (r *report) find(key string) *cellReport {
	for i := range r.Cells {
		if r.Cells[i].Key == key {
			return &r.Cells[i]
		}
	}
	return nil
}

func hitMedian(c *cellReport, system string) float64 {
	if c == nil || c.Systems[system] == nil {
		return math.NaN()
	}
	return c.Systems[system].HitPercent.Median
}

func pointsMedian(c *cellReport, peer string) float64 {
	if c == nil {
		return math.NaN()
	}
	if s, ok := c.Points["vs_"+peer+"_points"]; ok {
		return s.Median
	}
	return math.NaN()
}

// summaryPairs picks the headline figures: ours on OLTP at 1000 entries
// and its lead over otter, the throughput ratios (n/a until the concurrent
// cache exists), the worst lead over each peer, then every cell's hit
// ratios.
func summaryPairs(r *report) benchkit.Pairs {
	nan := math.NaN()
	headline := r.find("oltp1000")
	ps := benchkit.Pairs{
		benchkit.NewPair("oltp1000_hit", hitMedian(headline, SystemOurs), 2),
		benchkit.NewPair("oltp1000_vs_otter_points", pointsMedian(headline, SystemOtter), 2),
		benchkit.NewPair("get_vs_otter_ratio", nan, 2),
		benchkit.NewPair("get_vs_ristretto_ratio", nan, 2),
	}
	worstOtter, worstRistretto := nan, nan
	for i := range r.Cells {
		c := &r.Cells[i]
		if d := pointsMedian(c, SystemOtter); !math.IsNaN(d) && (math.IsNaN(worstOtter) || d < worstOtter) {
			worstOtter = d
		}
		if d := pointsMedian(c, SystemRistretto); !math.IsNaN(d) && (math.IsNaN(worstRistretto) || d < worstRistretto) {
			worstRistretto = d
		}
	}
	ps = append(ps,
		benchkit.NewPair("min_vs_otter_points", worstOtter, 2),
		benchkit.NewPair("min_vs_ristretto_points", worstRistretto, 2),
	)
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Key != "oltp1000" {
			ps = append(ps,
				benchkit.NewPair(c.Key+"_hit", hitMedian(c, SystemOurs), 2),
				benchkit.NewPair(c.Key+"_vs_otter_points", pointsMedian(c, SystemOtter), 2))
		}
		ps = append(ps,
			benchkit.NewPair(c.Key+"_vs_ristretto_points", pointsMedian(c, SystemRistretto), 2),
			benchkit.NewPair(c.Key+"_otter_hit", hitMedian(c, SystemOtter), 2),
			benchkit.NewPair(c.Key+"_ristretto_hit", hitMedian(c, SystemRistretto), 2),
			benchkit.NewPair(c.Key+"_lru_hit", hitMedian(c, SystemLRU), 2))
	}
	return ps
}

// printTable writes one row per trace and capacity: each system's hit
// ratio and ours minus each peer.
func printTable(w io.Writer, r *report, names []string, repeats int) {
	fmt.Fprintf(w, "Hit ratio %%: median over %d repeats (min–max when they differ); pts = ours − peer in percentage points\n", repeats)
	fmt.Fprintf(w, "Goals: ours − otter ≥ %.1f pts, ours − ristretto ≥ +%.1f pts; throughput not measured yet (n/a)\n", goalVsOtterPoints, goalVsRistrettoPoints)
	all := append([]string{}, AllSystems...)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "trace\tcapacity\trequests\t")
	for _, n := range all {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprint(tw, "pts vs otter\tpts vs ristretto\t\n")
	for _, c := range r.Cells {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", c.Trace, c.Capacity, c.Requests)
		for _, n := range all {
			s, ok := c.Systems[n]
			if !ok {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			fmt.Fprintf(tw, "%s\t", spread(s.HitPercent, "%.2f"))
		}
		for _, peer := range []string{SystemOtter, SystemRistretto} {
			s, ok := c.Points["vs_"+peer+"_points"]
			if !ok {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			fmt.Fprintf(tw, "%s\t", spread(s, "%+.2f"))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if !has(names, SystemOurs) {
		why := oursMissing
		if why == "" {
			why = "not among the systems run"
		}
		fmt.Fprintf(w, "ours: n/a (%s)\n", why)
	}
}

// spread prints a figure's median, with its range when the repeats
// differ.
func spread(s benchkit.Summary, verb string) string {
	if math.IsNaN(s.Median) {
		return "n/a"
	}
	med := fmt.Sprintf(verb, s.Median)
	if s.Min == s.Max {
		return med
	}
	return fmt.Sprintf("%s ("+verb+"–"+verb+")", med, s.Min, s.Max)
}
