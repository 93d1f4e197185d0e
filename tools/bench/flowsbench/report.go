package flowsbench

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// describer is a system that says how it was set up, for the report's
// conditions; the harness asks after Start.
type describer interface {
	Describe() string
}

// systemReport is one system's runs and their figures over the repeats.
type systemReport struct {
	E2EPerS         benchkit.Summary `json:"e2e_per_s"`
	DueToClaimP50Ms benchkit.Summary `json:"due_to_claim_p50_ms"`
	DueToClaimP95Ms benchkit.Summary `json:"due_to_claim_p95_ms"`
	DueToClaimP99Ms benchkit.Summary `json:"due_to_claim_p99_ms"`
	// CompletedOnce is each repeat's count of flows completed exactly
	// once, by the system's own record.
	CompletedOnce []int       `json:"completed_once"`
	Runs          []runResult `json:"runs"`
}

type report struct {
	Name       string                   `json:"name"`
	Started    string                   `json:"started"`
	Conditions map[string]any           `json:"conditions"`
	Summary    benchkit.Pairs           `json:"summary"`
	Systems    map[string]*systemReport `json:"systems"`
	// VsPostgres and VsRiver are ours/peer of the end-to-end rate per
	// repeat pair (above 1: ours is better); null without both.
	VsPostgres *benchkit.Summary `json:"vs_postgres_ratio"`
	VsRiver    *benchkit.Summary `json:"vs_river_ratio"`
	// VsCeiling is ours over the bare server's rate (SystemCeiling).
	VsCeiling *benchkit.Summary `json:"vs_ceiling_ratio,omitempty"`
	// Skipped are the --systems not registered in this build.
	Skipped []string `json:"skipped,omitempty"`
	// Errors are the exactly-once violations of every run, by system and
	// repeat; any fails the command.
	Errors []string `json:"errors,omitempty"`
	// order is the systems in run order, for the table.
	order []string
}

// newReport summarizes the runs of the systems run.
func newReport(cfg Config, systems []string, runs map[string][]runResult, began time.Time) *report {
	r := &report{Name: "flows", Started: began.UTC().Format(time.RFC3339), Systems: map[string]*systemReport{}, order: systems}
	for _, name := range cfg.Systems {
		if !slices.Contains(systems, name) && !slices.Contains(r.Skipped, name) {
			r.Skipped = append(r.Skipped, name)
		}
	}
	rates := map[string][]float64{}
	for _, name := range systems {
		rs := runs[name]
		col := func(f func(runResult) float64) benchkit.Summary { return benchkit.Summarize(benchkit.Column(rs, f)) }
		rates[name] = benchkit.Column(rs, func(x runResult) float64 { return x.E2EPerS })
		sr := &systemReport{
			E2EPerS:         benchkit.Summarize(rates[name]),
			DueToClaimP50Ms: col(func(x runResult) float64 { return x.DueToClaimP50Ms }),
			DueToClaimP95Ms: col(func(x runResult) float64 { return x.DueToClaimP95Ms }),
			DueToClaimP99Ms: col(func(x runResult) float64 { return x.DueToClaimP99Ms }),
			Runs:            rs,
		}
		for _, x := range rs {
			sr.CompletedOnce = append(sr.CompletedOnce, x.CompletedOnce)
			for _, v := range x.Violations {
				r.Errors = append(r.Errors, fmt.Sprintf("%s, repeat %d: %s", name, x.Repeat, v))
			}
		}
		r.Systems[name] = sr
	}
	ratio := func(peer string) *benchkit.Summary {
		if len(rates[SystemOurs]) == 0 || len(rates[peer]) == 0 {
			return nil
		}
		s := benchkit.RatioSpread(rates[SystemOurs], rates[peer], benchkit.HigherIsBetter)
		return &s
	}
	r.VsPostgres, r.VsRiver, r.VsCeiling = ratio(SystemPostgres), ratio(SystemRiver), ratio(SystemCeiling)
	r.Summary = summary(r)
	return r
}

// summary is the last line's pairs: ours' median rate, then the ratios.
func summary(r *report) benchkit.Pairs {
	rate := math.NaN()
	if s, ok := r.Systems[SystemOurs]; ok {
		rate = s.E2EPerS.Median
	}
	median := func(s *benchkit.Summary) float64 {
		if s == nil {
			return math.NaN()
		}
		return s.Median
	}
	return benchkit.Pairs{
		benchkit.NewPair("e2e_per_s", rate, 0),
		benchkit.NewPair("vs_postgres_ratio", median(r.VsPostgres), 2),
		benchkit.NewPair("vs_river_ratio", median(r.VsRiver), 2),
		benchkit.NewPair("vs_ceiling_ratio", median(r.VsCeiling), 2),
	}
}

// conditions records how the run was set up, beside the systems' own
// descriptions.
func conditions(cfg Config, systems []string, load string, described map[string]string, began time.Time) map[string]any {
	c := map[string]any{
		"host":          benchkit.HostConditions(),
		"load_average":  load + " (1, 5, 15 min, at the start)",
		"filesystem":    benchkit.Filesystem(cfg.Dir),
		"quick":         cfg.Quick,
		"repeats":       cfg.Repeats,
		"systems":       systems,
		"flows":         cfg.Flows,
		"producers":     cfg.Producers,
		"create_batch":  cfg.CreateBatch,
		"workers":       cfg.Workers,
		"claim_limit":   cfg.ClaimLimit,
		"lease":         cfg.Lease.String(),
		"payload_bytes": cfg.PayloadBytes,
		"mode": fmt.Sprintf("live: %d producers create batches of %d (handed out in id order) while %d workers each claim up to %d due flows and complete them in one call (a consumer system runs its own pool instead); "+
			"e2e = first create sent until the last completion is durable; due to claim = create call sent until the claim returned the flow; after an empty claim a worker sleeps %s doubling to %s",
			cfg.Producers, cfg.CreateBatch, cfg.Workers, cfg.ClaimLimit, idleMin, idleMax),
		"exactly_once": "the harness counts every claim and completion per flow (a second is a violation), then the system's own record is queried: every flow completed, none twice",
		"wall_time":    time.Since(began).Round(time.Millisecond).String(),
	}
	for name, d := range described {
		c[name] = d
	}
	return c
}

// moduleVersion is the version of module path built into this binary, or
// a note that the build did not record it (a test binary does not).
func moduleVersion(path string) string {
	if v := benchkit.ModuleVersion(path); v != "" {
		return v
	}
	return "(version not recorded in this build)"
}
