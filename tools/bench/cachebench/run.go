package cachebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// cell is one trace at one capacity; every system replays it Repeats times.
type cell struct {
	trace    *Trace
	capacity int
}

// Key names the cell in the summary line: trace name and capacity, e.g.
// "oltp1000".
func (c cell) Key() string { return keyName(c.trace.Name) + fmt.Sprint(c.capacity) }

// runResult is one replay of one cell by one system.
type runResult struct {
	Repeat     int     `json:"repeat"`
	Hits       int     `json:"hits"`
	HitPercent float64 `json:"hit_percent"`
	// Seconds is the wall time of the replay, for orientation only: it
	// includes the driver and, for ristretto, a Wait after every Set.
	Seconds float64 `json:"seconds"`
}

// Run executes the benchmark described by cfg, section by section (hit,
// throughput, memory, ssd; those in cfg.Sections): it loads the traces,
// replays every trace at every capacity through each system, measures the
// concurrent caches' throughput and memory, and replays traces through our
// Cache with and without its SSD tier, alternating systems over the
// repeats. It writes the JSON report, prints the tables and, last, the
// summary line to stdout, and logs progress to log. It fails only when
// something cannot run (a missing trace, a bad setting), never because of
// a figure.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.resolve(); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	commit := gitHead() // before the run: `go run` built from this tree
	loadBefore := loadAverage()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("cache")
		if err != nil {
			return err
		}
		out = p
	}

	available := peerSystems()
	oursSys, oursOK := ours()
	if oursOK {
		available[SystemOurs] = oursSys
	}
	var names []string
	skipped := map[string]string{}
	for _, n := range cfg.Systems {
		if n == SystemOurs && !oursOK {
			skipped[n] = oursMissing
			log.Warn("ours is not in this build; running the peers only", "why", oursMissing)
			continue
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return fmt.Errorf("no system to run (ours: %s)", oursMissing)
	}

	rep := &report{Name: "cache", Started: began.UTC().Format(time.RFC3339)}
	loaded := map[string]*Trace{}
	load := func(w Workload) (*Trace, error) {
		id := fmt.Sprintf("%s|%s|%d", w.Name, cfg.path(w), w.MaxRequests)
		if w.Zipf != nil {
			id += fmt.Sprintf("|%+v", *w.Zipf)
		}
		if tr, ok := loaded[id]; ok {
			return tr, nil
		}
		t0 := time.Now()
		tr, err := loadTrace(cfg, w)
		if err != nil {
			return nil, err
		}
		loaded[id] = tr
		log.Info("trace loaded", "trace", tr.Name, "requests", len(tr.Keys), "distinct_keys", tr.Distinct(), "took", time.Since(t0).Round(time.Millisecond))
		return tr, nil
	}

	var traces []traceInfo
	if cfg.runs(SectionHit) {
		var err error
		rep.Cells, traces, err = runHit(ctx, cfg, names, available, load, log)
		if err != nil {
			return err
		}
	}
	if cfg.runs(SectionThroughput) {
		t, err := runThroughput(ctx, cfg, names, log)
		if err != nil {
			return err
		}
		rep.Throughput = t
	}
	if cfg.runs(SectionMemory) {
		m, err := runMemory(ctx, cfg, names, log)
		if err != nil {
			return err
		}
		rep.Memory = m
	}
	if cfg.runs(SectionSSD) {
		if has(names, SystemOurs) {
			s, err := runSSD(ctx, cfg, load, log)
			if err != nil {
				return err
			}
			rep.SSD = s
		} else {
			skipped[SectionSSD] = "the ssd section measures ours only, and ours is not among the systems"
		}
	}

	rep.Conditions = conditions(cfg, names, skipped, available, traces, commit, time.Since(began))
	if loadBefore != "" {
		// Other work on the machine slows every system and widens the
		// spreads; the load average says how much there was.
		rep.Conditions["loadavg_before"] = loadBefore
		rep.Conditions["loadavg_after"] = loadAverage()
	}
	rep.Goals = goals()
	rep.Summary = summaryPairs(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	printTables(stdout, rep, names, cfg)
	fmt.Fprintln(stdout, benchkit.SummaryLine("cache", rep.Summary))
	return nil
}

// runHit is the hit-ratio section: every trace at every capacity, replayed
// by every system.
func runHit(ctx context.Context, cfg Config, names []string, available map[string]system, load func(Workload) (*Trace, error), log *slog.Logger) ([]cellReport, []traceInfo, error) {
	names = present(available, names) // the map reference is not a cache to replay
	var cells []cell
	var traces []traceInfo
	for _, w := range cfg.Workloads {
		tr, err := load(w)
		if err != nil {
			return nil, nil, err
		}
		traces = append(traces, traceInfo{Name: tr.Name, File: tr.Path, Format: tr.Format, Zipf: w.Zipf, Requests: len(tr.Keys), DistinctKeys: tr.Distinct(), Capacities: w.Capacities})
		for _, n := range w.Capacities {
			cells = append(cells, cell{trace: tr, capacity: n})
		}
	}
	var reports []cellReport
	for i, c := range cells {
		runs := map[string][]runResult{}
		err := benchkit.Alternate(ctx, cfg.Repeats, names, func(ctx context.Context, r int, name string) error {
			res, err := replay(ctx, available[name], c)
			if err != nil {
				return err
			}
			res.Repeat = r + 1
			runs[name] = append(runs[name], res)
			log.Info("run", "cell", fmt.Sprintf("%d/%d", i+1, len(cells)), "trace", c.trace.Name, "capacity", c.capacity,
				"system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats),
				"hit_percent", fmt.Sprintf("%.2f", res.HitPercent), "took", time.Duration(res.Seconds*float64(time.Second)).Round(time.Millisecond))
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%s at %d: %w", c.trace.Name, c.capacity, err)
		}
		reports = append(reports, summarizeCell(c, names, runs, optimalHits(c.trace.Keys, c.capacity)))
	}
	return reports, traces, nil
}

func loadTrace(cfg Config, w Workload) (*Trace, error) {
	var tr *Trace
	var err error
	if w.Zipf != nil {
		tr, err = GenerateZipf(*w.Zipf)
	} else {
		tr, err = ReadTraceFile(cfg.path(w), w.Format)
	}
	if err != nil {
		return nil, err
	}
	tr.Name = w.Name
	if w.MaxRequests > 0 && len(tr.Keys) > w.MaxRequests {
		tr.Keys = tr.Keys[:w.MaxRequests:w.MaxRequests]
	}
	return tr, nil
}

// verifier is a simCache that can check its own bookkeeping after a
// replay.
type verifier interface{ verify() error }

// replay runs the cell's trace through a fresh cache of sys, from cold,
// counting every request.
func replay(ctx context.Context, sys system, c cell) (runResult, error) {
	cache, err := sys.open(c.capacity)
	if err != nil {
		return runResult{}, err
	}
	defer cache.close()
	start := time.Now()
	hits := 0
	for i, k := range c.trace.Keys {
		if i&(1<<16-1) == 0 {
			if err := ctx.Err(); err != nil {
				return runResult{}, err
			}
		}
		if cache.access(k) {
			hits++
		}
	}
	elapsed := time.Since(start)
	if v, ok := cache.(verifier); ok {
		if err := v.verify(); err != nil {
			return runResult{}, fmt.Errorf("inconsistent after the replay: %w", err)
		}
	}
	return runResult{
		Hits:       hits,
		HitPercent: 100 * float64(hits) / float64(len(c.trace.Keys)),
		Seconds:    elapsed.Seconds(),
	}, nil
}

// keyName keeps the letters, digits and underscores of a trace name, in
// lower case, so it can be part of a summary-line key.
func keyName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "trace"
	}
	return b.String()
}

func has(list []string, s string) bool { return slices.Contains(list, s) }

// loadAverage is the first three fields of /proc/loadavg ("" where there is
// none).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// gitHead is the commit checked out in the working directory ("" when it
// is unknown).
func gitHead() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// gitDirState returns the last commit that touched dir (relative to the
// repository root) and whether dir has uncommitted changes; ok is false
// when git cannot tell.
func gitDirState(dir string) (commit string, dirty, ok bool) {
	root, err := repoRoot()
	if err != nil {
		return "", false, false
	}
	out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%H", "--", dir).Output()
	if err != nil {
		return "", false, false
	}
	st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--", dir).Output()
	if err != nil {
		return "", false, false
	}
	return strings.TrimSpace(string(out)), len(bytes.TrimSpace(st)) > 0, true
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return benchkit.RepoRoot(wd)
}

// present returns the names, in order, that systems has.
func present[S any](systems map[string]S, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := systems[n]; ok {
			out = append(out, n)
		}
	}
	return out
}
