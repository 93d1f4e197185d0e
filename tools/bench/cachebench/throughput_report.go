package cachebench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// throughputReport is the throughput section of the JSON report.
type throughputReport struct {
	Systems []string `json:"systems"`
	// Headline is the goroutine count of the Get cell behind
	// get_vs_otter_ratio and get_vs_ristretto_ratio.
	Headline int                       `json:"headline_goroutines"`
	Settings map[string]map[string]any `json:"settings"`
	Cells    []tpCellReport            `json:"cells"`
}

type tpCellReport struct {
	Key     string                     `json:"key"`
	Mix     string                     `json:"mix"`
	Threads int                        `json:"goroutines"`
	Systems map[string]*tpSystemResult `json:"systems"`
	// Ratios["vs_otter_ratio"] is ops/s ours/otter, repeat i of ours
	// paired with repeat i of the peer (the runs that alternated next to
	// each other), as min/median/max; above 1 means ours is faster.
	Ratios map[string]benchkit.Summary `json:"ratios,omitempty"`
	// GoalsMet says, per goal of the Get mix, whether the median meets it.
	GoalsMet map[string]bool `json:"goals_met,omitempty"`
	// Flags name systems whose Gets were not (about) all hits: their
	// figures then include misses, which are not what the cell measures.
	Flags []string `json:"flags,omitempty"`
}

type tpSystemResult struct {
	NsPerOp           benchkit.Summary `json:"ns_per_op"`
	OpsPerSec         benchkit.Summary `json:"ops_per_sec"`
	AllocsPerOp       benchkit.Summary `json:"allocs_per_op"`
	BytesPerOp        benchkit.Summary `json:"bytes_per_op"`
	HitPercent        benchkit.Summary `json:"hit_percent"`
	PrefillHitPercent benchkit.Summary `json:"prefill_hit_percent"`
	Runs              []tpResult       `json:"runs"`
}

func opsColumn(runs []tpResult) []float64 {
	return benchkit.Column(runs, func(r tpResult) float64 { return r.OpsPerSec })
}

func summarizeThroughputCell(c tpCell, names []string, runs map[string][]tpResult) tpCellReport {
	cr := tpCellReport{Key: c.Key(), Mix: c.mix, Threads: c.threads, Systems: map[string]*tpSystemResult{}}
	for _, n := range names {
		rs := runs[n]
		s := &tpSystemResult{
			NsPerOp:           benchkit.Summarize(benchkit.Column(rs, func(r tpResult) float64 { return r.NsPerOp })),
			OpsPerSec:         benchkit.Summarize(opsColumn(rs)),
			AllocsPerOp:       benchkit.Summarize(benchkit.Column(rs, func(r tpResult) float64 { return r.AllocsPerOp })),
			BytesPerOp:        benchkit.Summarize(benchkit.Column(rs, func(r tpResult) float64 { return r.BytesPerOp })),
			HitPercent:        benchkit.Summarize(benchkit.Column(rs, func(r tpResult) float64 { return r.HitPercent })),
			PrefillHitPercent: benchkit.Summarize(benchkit.Column(rs, func(r tpResult) float64 { return r.PrefillHitPercent })),
			Runs:              rs,
		}
		cr.Systems[n] = s
		if s.HitPercent.Median < minGetHitPercent || s.PrefillHitPercent.Median < minGetHitPercent {
			cr.Flags = append(cr.Flags, fmt.Sprintf("%s: Gets hit %.2f%% (prefill left %.2f%% of the keys resident), not ~100%%: its figures include misses",
				n, s.HitPercent.Median, s.PrefillHitPercent.Median))
		}
	}
	ours, ok := runs[SystemOurs]
	if !ok {
		return cr
	}
	cr.Ratios = map[string]benchkit.Summary{}
	for _, n := range names {
		if n == SystemOurs {
			continue
		}
		cr.Ratios["vs_"+n+"_ratio"] = benchkit.RatioSpread(opsColumn(ours), opsColumn(runs[n]), benchkit.HigherIsBetter)
	}
	if c.mix != MixGet {
		return cr
	}
	// The ceilings: how far past each peer an unsynchronised map read is.
	if m, ok := runs[SystemMap]; ok {
		for _, peer := range []string{SystemOtter, SystemRistretto} {
			if p, ok := runs[peer]; ok {
				cr.Ratios["map_vs_"+peer+"_ratio"] = benchkit.RatioSpread(opsColumn(m), opsColumn(p), benchkit.HigherIsBetter)
			}
		}
	}
	cr.GoalsMet = map[string]bool{"allocs_per_hit": cr.Systems[SystemOurs].AllocsPerOp.Median < goalAllocsPerHit}
	if r, ok := cr.Ratios["vs_otter_ratio"]; ok {
		cr.GoalsMet["vs_otter_ratio"] = r.Median >= goalGetVsOtterRatio
	}
	if r, ok := cr.Ratios["vs_ristretto_ratio"]; ok {
		cr.GoalsMet["vs_ristretto_ratio"] = r.Median >= goalGetVsRistrettoRatio
	}
	return cr
}

// headlineThreads is the goroutine count of the headline Get ratios: 8,
// or the largest count run when 8 is not.
func headlineThreads(threads []int) int {
	if slices.Contains(threads, 8) || len(threads) == 0 {
		return 8
	}
	return slices.Max(threads)
}

func (r *throughputReport) find(key string) *tpCellReport {
	if r == nil {
		return nil
	}
	for i := range r.Cells {
		if r.Cells[i].Key == key {
			return &r.Cells[i]
		}
	}
	return nil
}

func ratioMedian(c *tpCellReport, peer string) float64 { return namedRatio(c, "vs_"+peer+"_ratio") }

// namedRatio is the median of the cell's ratio key, NaN when it has none.
func namedRatio(c *tpCellReport, key string) float64 {
	if c == nil {
		return math.NaN()
	}
	s, _ := ratioOrNaN(c.Ratios, key)
	return s.Median
}

func tpMedian(c *tpCellReport, system string, f func(*tpSystemResult) benchkit.Summary) float64 {
	if c == nil || c.Systems[system] == nil {
		return math.NaN()
	}
	return f(c.Systems[system]).Median
}

// allocsPerHit is our worst median allocs/op over the Get cells: every Get
// there is a hit, so it is the allocations of a hit (NaN without a Get
// cell of ours).
func (r *throughputReport) allocsPerHit() float64 {
	worst := math.NaN()
	if r == nil {
		return worst
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Mix != MixGet {
			continue
		}
		if a := tpMedian(c, SystemOurs, func(s *tpSystemResult) benchkit.Summary { return s.AllocsPerOp }); !math.IsNaN(a) && (math.IsNaN(worst) || a > worst) {
			worst = a
		}
	}
	return worst
}

// minGetHit is the lowest median hit ratio of any system in any Get cell,
// so that a Get mix that was not all hits shows in the summary.
func (r *throughputReport) minGetHit() float64 {
	lowest := math.NaN()
	if r == nil {
		return lowest
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Mix != MixGet {
			continue
		}
		for _, s := range c.Systems {
			if h := s.HitPercent.Median; !math.IsNaN(h) && (math.IsNaN(lowest) || h < lowest) {
				lowest = h
			}
		}
	}
	return lowest
}

// throughputPairs are the throughput figures of the summary line after the
// headline: our allocations per hit, the lowest Get hit ratio, then per
// cell the ratios to each peer and our ns/op.
func throughputPairs(r *throughputReport) benchkit.Pairs {
	ps := benchkit.Pairs{
		benchkit.NewPair("allocs_per_hit", r.allocsPerHit(), 3),
		benchkit.NewPair("get_min_hit_percent", r.minGetHit(), 2),
	}
	if r == nil {
		return ps
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		ps = append(ps,
			benchkit.NewPair(c.Key+"_vs_otter_ratio", ratioMedian(c, SystemOtter), 2),
			benchkit.NewPair(c.Key+"_vs_ristretto_ratio", ratioMedian(c, SystemRistretto), 2),
			benchkit.NewPair(c.Key+"_ns", tpMedian(c, SystemOurs, func(s *tpSystemResult) benchkit.Summary { return s.NsPerOp }), 1),
			benchkit.NewPair(c.Key+"_otter_ns", tpMedian(c, SystemOtter, func(s *tpSystemResult) benchkit.Summary { return s.NsPerOp }), 1),
			benchkit.NewPair(c.Key+"_ristretto_ns", tpMedian(c, SystemRistretto, func(s *tpSystemResult) benchkit.Summary { return s.NsPerOp }), 1),
			benchkit.NewPair(c.Key+"_allocs_per_op", tpMedian(c, SystemOurs, func(s *tpSystemResult) benchkit.Summary { return s.AllocsPerOp }), 3),
		)
		if c.Mix == MixGet {
			ps = append(ps,
				benchkit.NewPair(c.Key+"_map_vs_otter_ratio", namedRatio(c, "map_vs_otter_ratio"), 2),
				benchkit.NewPair(c.Key+"_map_vs_ristretto_ratio", namedRatio(c, "map_vs_ristretto_ratio"), 2),
			)
		}
	}
	return ps
}

// printThroughput writes one row per cell and system.
func printThroughput(w io.Writer, r *throughputReport, cfg Config) {
	t := cfg.Throughput
	fmt.Fprintf(w, "\nThroughput: %d keys, all resident, %d-byte values; Zipf keys (s=%g, v=%g); %v per run; median over %d repeats (min–max when they differ)\n",
		t.Keys, t.ValueBytes, t.ZipfS, t.ZipfV, t.Duration, cfg.Repeats)
	fmt.Fprintf(w, "Ratios are ops/s ours/peer per paired repeat (above 1: ours faster). Goals on get: ≥ %.1f× otter, ≥ %.1f× ristretto, 0 allocs per hit\n",
		goalGetVsOtterRatio, goalGetVsRistrettoRatio)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "mix\tgoroutines\tsystem\tns/op\tMops/s\tallocs/op\tB/op\tget hit %\tvs otter\tvs ristretto\t\n")
	var flags []string
	for _, c := range r.Cells {
		for _, n := range r.Systems {
			s := c.Systems[n]
			if s == nil { // the map reference in the mixed cells
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t", c.Mix, c.Threads, n,
				spread(s.NsPerOp, "%.1f"), spread(scale(s.OpsPerSec, 1e-6), "%.2f"),
				spread(s.AllocsPerOp, "%.3f"), spread(s.BytesPerOp, "%.1f"), spread(s.HitPercent, "%.2f"))
			for _, peer := range []string{SystemOtter, SystemRistretto} {
				ratio, ok := c.Ratios["vs_"+peer+"_ratio"]
				if n != SystemOurs || !ok {
					fmt.Fprint(tw, "\t")
					continue
				}
				fmt.Fprintf(tw, "%s\t", spread(ratio, "%.2f"))
			}
			fmt.Fprintln(tw)
		}
		for _, f := range c.Flags {
			flags = append(flags, c.Key+": "+f)
		}
	}
	tw.Flush()
	for _, c := range r.Cells {
		mo, okO := ratioOrNaN(c.Ratios, "map_vs_otter_ratio")
		mr, okR := ratioOrNaN(c.Ratios, "map_vs_ristretto_ratio")
		if okO || okR {
			fmt.Fprintf(w, "%s ceiling: an unsynchronised map read (no cache does less per hit) is %s× otter and %s× ristretto: no cache passes these ratios here\n",
				c.Key, spread(mo, "%.2f"), spread(mr, "%.2f"))
		}
	}
	for _, f := range flags {
		fmt.Fprintln(w, "FLAG "+f)
	}
}

// ratioOrNaN is ratios[key], or a NaN summary (printed n/a) without it.
func ratioOrNaN(ratios map[string]benchkit.Summary, key string) (benchkit.Summary, bool) {
	if s, ok := ratios[key]; ok {
		return s, true
	}
	nan := math.NaN()
	return benchkit.Summary{Min: nan, Median: nan, Max: nan}, false
}

func scale(s benchkit.Summary, k float64) benchkit.Summary {
	return benchkit.Summary{Min: s.Min * k, Median: s.Median * k, Max: s.Max * k}
}
