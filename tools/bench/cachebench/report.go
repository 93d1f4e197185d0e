package cachebench

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
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
	// Cells are the hit-ratio section.
	Cells      []cellReport      `json:"cells"`
	Throughput *throughputReport `json:"throughput,omitempty"`
	Memory     *memoryReport     `json:"memory,omitempty"`
	SSD        *ssdReport        `json:"ssd,omitempty"`
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
	// OptimalHitPercent is Belady's offline optimum for the trace at this
	// capacity (optimalHits): the most any system can hit.
	OptimalHitPercent float64 `json:"optimal_hit_percent"`
	// Systems[name].HitPercent is min/median/max over the repeats.
	Systems map[string]*systemResult `json:"systems"`
	// Points["vs_otter_points"] is ours minus the peer in percentage
	// points, repeat i of ours paired with repeat i of the peer (the runs
	// that alternated next to each other), as min/median/max.
	Points map[string]benchkit.Summary `json:"points,omitempty"`
	// GoalsMet says, per goal, whether the median meets it.
	GoalsMet map[string]bool `json:"goals_met,omitempty"`
	// GoalsAttainable says, per goal, whether the optimum leaves room for
	// it at the peer's median: a goal of beating a peer by more than the
	// peer's distance to the optimum cannot be met by any policy.
	GoalsAttainable map[string]bool `json:"goals_attainable,omitempty"`
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

func summarizeCell(c cell, names []string, runs map[string][]runResult, optimal int) cellReport {
	cr := cellReport{
		Key: c.Key(), Trace: c.trace.Name, Capacity: c.capacity, Requests: len(c.trace.Keys),
		OptimalHitPercent: 100 * float64(optimal) / float64(max(1, len(c.trace.Keys))),
		Systems:           map[string]*systemResult{},
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
	cr.GoalsAttainable = map[string]bool{}
	cr.Points["vs_optimal_points"] = benchkit.Summarize(pointDiffs(hitColumn(ours), slices.Repeat([]float64{cr.OptimalHitPercent}, len(ours))))
	for _, n := range names {
		if n == SystemOurs {
			continue
		}
		d := benchkit.Summarize(pointDiffs(hitColumn(ours), hitColumn(runs[n])))
		cr.Points["vs_"+n+"_points"] = d
		room := cr.OptimalHitPercent - cr.Systems[n].HitPercent.Median
		switch n {
		case SystemOtter:
			cr.GoalsMet["vs_otter_points"] = d.Median >= goalVsOtterPoints
			cr.GoalsAttainable["vs_otter_points"] = room >= goalVsOtterPoints
		case SystemRistretto:
			cr.GoalsMet["vs_ristretto_points"] = d.Median >= goalVsRistrettoPoints
			cr.GoalsAttainable["vs_ristretto_points"] = room >= goalVsRistrettoPoints
		}
	}
	return cr
}

func goals() map[string]any {
	return map[string]any{
		"vs_otter_points":        fmt.Sprintf(">= %.1f on every trace and capacity (ours within half a point of otter)", goalVsOtterPoints),
		"vs_ristretto_points":    fmt.Sprintf(">= +%.1f on every trace and capacity", goalVsRistrettoPoints),
		"judged_on":              "the median over repeats of (ours - peer) in percentage points of hit ratio",
		"attainable":             "a cell's goal is attainable when Belady's offline optimum (optimal_hit_percent) is at least the peer's median plus the goal's points: no policy hits more than the optimum",
		"get_vs_otter_ratio":     fmt.Sprintf(">= %.1f: Get ops/s ours/otter on the all-hits Get mix, at every goroutine count", goalGetVsOtterRatio),
		"get_vs_ristretto_ratio": fmt.Sprintf(">= %.1f: Get ops/s ours/ristretto on the all-hits Get mix, at every goroutine count", goalGetVsRistrettoRatio),
		"allocs_per_hit":         fmt.Sprintf("0 allocations per DRAM hit (GetShared): median allocs/op of the Get mix below %g, at every goroutine count", goalAllocsPerHit),
		"throughput_judged_on":   "the median over paired repeats of the per-repeat ratio; goals_met in each Get cell of the throughput section",
	}
}

// describeSettings copies a system's settings for the report, adding the
// version of its module: for a local module built through a replace, the
// last commit of its directory and whether it has uncommitted changes.
func describeSettings(settings map[string]any) map[string]any {
	s := map[string]any{}
	for k, v := range settings {
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
	return s
}

func conditions(cfg Config, names []string, skipped map[string]string, systems map[string]system, traces []traceInfo, commit string, took time.Duration) map[string]any {
	peers := map[string]any{}
	for _, n := range names {
		peers[n] = describeSettings(systems[n].settings)
	}
	c := map[string]any{
		"host":         benchkit.HostConditions(),
		"quick":        cfg.Quick,
		"sections":     cfg.Sections,
		"repeats":      cfg.Repeats,
		"systems":      names,
		"took_seconds": math.Round(took.Seconds()*10) / 10,
		"alternation":  "within each repeat the systems (or, in the ssd section, the two modes) run the same cell one after another, in the order of systems",
	}
	if cfg.runs(SectionHit) {
		c["traces"] = traces
		c["traces_dir"] = cfg.TracesDir
		c["settings"] = peers
		c["hit_ratio"] = "hits / requests over the whole trace, replayed from a cold cache with no warm-up; a request is a Get, and a miss is followed by a Set (ours: Access when present, else Admit); every system replays in the same process at the same capacity in entries"
	}
	if cfg.runs(SectionThroughput) {
		t := cfg.Throughput
		c["throughput"] = map[string]any{
			"keyspace":   fmt.Sprintf("%d keys, records \"key-000000\"..., every one resident: each system is prefilled with every key before each run and its capacity is %d× the keyspace, so nothing is evicted or refused; prefill_hit_percent and hit_percent show what each system actually held", t.Keys, cacheCapacityFactor),
			"values":     fmt.Sprintf("%d pseudo-random bytes, the same slice for every Set (ours copies it in Put; the peers keep the caller's slice)", t.ValueBytes),
			"key_stream": fmt.Sprintf("Zipf over the keyspace, math/rand/v2 NewZipf(s=%g, v=%g): s as in the published Go cache comparisons' Zipf workload (otter's simulator: s=1.0001); pre-generated per goroutine (%d keys, PCG seeded %d and the goroutine number), so no RNG cost is measured; the same streams for every system", t.ZipfS, t.ZipfV, t.StreamLen, t.Seed),
			"mixes":      "get: 100% Get, every key resident; mixed: 75% Get / 25% Set, op i of a goroutine is a Set when i%4 == 3, all on resident keys",
			"goroutines": t.Threads,
			"duration":   fmt.Sprintf("%v measured per run, after an unmeasured warm-up of %v on the same cache; a fresh, freshly prefilled cache per run", t.Duration, t.Duration/4),
			"ns_per_op":  "wall time from the start signal until every goroutine stopped, over the operations of all goroutines (as testing.B's RunParallel reports it); ops_per_sec is its inverse",
			"allocs":     "allocs_per_op and bytes_per_op are the process's runtime.MemStats Mallocs and TotalAlloc deltas over the measured run (after a GC) divided by its operations; allocs_per_hit is ours on the Get mix, the worst goroutine count",
			"headline":   fmt.Sprintf("get_vs_otter_ratio and get_vs_ristretto_ratio are the Get mix at %d goroutines; every cell has its own get<n>_ / mixed<n>_ ratios", headlineThreads(t.Threads)),
			"gomaxprocs": runtime.GOMAXPROCS(0),
		}
	}
	if cfg.runs(SectionMemory) {
		m := cfg.Memory
		c["memory"] = map[string]any{
			"entries":  m.Entries,
			"method":   fmt.Sprintf("runtime.GC twice and HeapAlloc before building the cache; insert %d entries with fresh record strings and fresh %d-byte values; settle (otter CleanUp, ristretto Wait); runtime.GC twice and HeapAlloc; bytes_per_entry = delta / entries held. The delta holds everything the cache keeps: keys, values (ours its own copy), tables, sketches", m.Entries, m.ValueBytes),
			"capacity": fmt.Sprintf("every cache sized for %d%% of the entries", memCapacityPercent),
			"quick":    cfg.Quick,
		}
	}
	if cfg.runs(SectionSSD) {
		s := cfg.SSD
		c["ssd"] = map[string]any{
			"cache":      fmt.Sprintf("matrixcache.Cache, Shards %d, other options default; DRAM-only: SSDCapacityBytes Disabled; DRAM+SSD: the same DRAM plus SSDCapacityBytes %d× the footprint + 1 MiB (it holds every key: ssd_evictions stays 0), SSDPath a fresh temporary directory, SSDNoSync true", s.Shards, ssdCapacityFactor),
			"footprint":  fmt.Sprintf("sum over the trace's distinct keys of key.Size() + %d (the value length): the Cache's own DRAM cost of each entry; records are \"key-<trace key>\" under cachekey.String(0, record)", s.ValueBytes),
			"dram":       fmt.Sprintf("DRAMCapacityBytes = %g%% of the footprint", s.DRAMPercent),
			"replay":     "from cold, one goroutine: GetShared(key); a hit is counted by the tier that answered (an SSD hit refills DRAM); a miss is followed by Put(key, value), so the cache reads through",
			"workloads":  s.Workloads,
			"dir":        cmp.Or(s.Dir, os.TempDir()),
			"fs":         benchkit.Filesystem(cmp.Or(s.Dir, os.TempDir())),
			"durability": "SSDNoSync: SSD writes are not fsynced (hit ratios do not depend on it)",
		}
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
// and its lead over otter, the Get throughput ratios, the worst hit-ratio
// lead over each peer, then the throughput, memory and SSD-tier figures,
// then every hit-ratio cell.
func summaryPairs(r *report) benchkit.Pairs {
	nan := math.NaN()
	headline := r.find("oltp1000")
	var get *tpCellReport
	if r.Throughput != nil {
		get = r.Throughput.find(tpCell{mix: MixGet, threads: r.Throughput.Headline}.Key())
	}
	ps := benchkit.Pairs{
		benchkit.NewPair("oltp1000_hit", hitMedian(headline, SystemOurs), 2),
		benchkit.NewPair("oltp1000_vs_otter_points", pointsMedian(headline, SystemOtter), 2),
		benchkit.NewPair("get_vs_otter_ratio", ratioMedian(get, SystemOtter), 2),
		benchkit.NewPair("get_vs_ristretto_ratio", ratioMedian(get, SystemRistretto), 2),
	}
	worstOtter, worstRistretto, worstAttainable, worstOptimal := nan, nan, nan, nan
	lower := func(worst *float64, d float64) {
		if !math.IsNaN(d) && (math.IsNaN(*worst) || d < *worst) {
			*worst = d
		}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		lower(&worstOtter, pointsMedian(c, SystemOtter))
		lower(&worstRistretto, pointsMedian(c, SystemRistretto))
		if c.GoalsAttainable["vs_ristretto_points"] {
			lower(&worstAttainable, pointsMedian(c, SystemRistretto))
		}
		lower(&worstOptimal, pointsMedian(c, "optimal"))
	}
	ps = append(ps,
		benchkit.NewPair("min_vs_otter_points", worstOtter, 2),
		benchkit.NewPair("min_vs_ristretto_points", worstRistretto, 2),
		benchkit.NewPair("min_vs_ristretto_points_where_attainable", worstAttainable, 2),
		benchkit.NewPair("min_vs_optimal_points", worstOptimal, 2),
	)
	ps = append(ps, throughputPairs(r.Throughput)...)
	ps = append(ps, memoryPairs(r.Memory)...)
	ps = append(ps, ssdPairs(r.SSD)...)
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Key != "oltp1000" {
			ps = append(ps,
				benchkit.NewPair(c.Key+"_hit", hitMedian(c, SystemOurs), 2),
				benchkit.NewPair(c.Key+"_vs_otter_points", pointsMedian(c, SystemOtter), 2))
		}
		ps = append(ps,
			benchkit.NewPair(c.Key+"_vs_ristretto_points", pointsMedian(c, SystemRistretto), 2),
			benchkit.NewPair(c.Key+"_optimal_hit", c.OptimalHitPercent, 2),
			benchkit.NewPair(c.Key+"_otter_hit", hitMedian(c, SystemOtter), 2),
			benchkit.NewPair(c.Key+"_ristretto_hit", hitMedian(c, SystemRistretto), 2),
			benchkit.NewPair(c.Key+"_policy_hit", hitMedian(c, SystemPolicy), 2),
			benchkit.NewPair(c.Key+"_lru_hit", hitMedian(c, SystemLRU), 2))
	}
	return ps
}

// printTables writes the table of every section that ran.
func printTables(w io.Writer, r *report, names []string, cfg Config) {
	if cfg.runs(SectionHit) {
		printTable(w, r, names, cfg.Repeats)
	}
	if r.Throughput != nil {
		printThroughput(w, r.Throughput, cfg)
	}
	if r.Memory != nil {
		printMemory(w, r.Memory, cfg.Quick)
	}
	if r.SSD != nil {
		printSSD(w, r.SSD)
	}
}

// printTable writes one row per trace and capacity: each system's hit
// ratio and ours minus each peer.
func printTable(w io.Writer, r *report, names []string, repeats int) {
	fmt.Fprintf(w, "Hit ratio %%: median over %d repeats (min–max when they differ); pts = ours − peer in percentage points\n", repeats)
	fmt.Fprintf(w, "Goals: ours − otter ≥ %.1f pts, ours − ristretto ≥ +%.1f pts; optimal = Belady's offline optimum, which no policy exceeds\n", goalVsOtterPoints, goalVsRistrettoPoints)
	// Every cache, run or not (n/a); the map reference replays nothing.
	all := slices.DeleteFunc(slices.Clone(AllSystems), func(n string) bool { return n == SystemMap })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "trace\tcapacity\trequests\toptimal\t")
	for _, n := range all {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprint(tw, "pts vs otter\tpts vs ristretto\tpts vs optimal\t\n")
	for _, c := range r.Cells {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t", c.Trace, c.Capacity, c.Requests, c.OptimalHitPercent)
		for _, n := range all {
			s, ok := c.Systems[n]
			if !ok {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			fmt.Fprintf(tw, "%s\t", spread(s.HitPercent, "%.2f"))
		}
		for _, peer := range []string{SystemOtter, SystemRistretto, "optimal"} {
			s, ok := c.Points["vs_"+peer+"_points"]
			if !ok {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			mark := ""
			if att, ok := c.GoalsAttainable["vs_"+peer+"_points"]; ok && !att {
				mark = " (goal above optimal)"
			}
			fmt.Fprintf(tw, "%s%s\t", spread(s, "%+.2f"), mark)
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
