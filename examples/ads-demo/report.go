package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the conditions a report was measured under.
type Config struct {
	Date         string   `json:"date"`
	Requests     int      `json:"requests"`
	Users        int      `json:"users"`
	Campaigns    int      `json:"campaigns"`
	Clients      int      `json:"clients"`
	Repeats      int      `json:"repeats"`
	Seed         uint64   `json:"seed"`
	Backends     []string `json:"backends"`
	MaxOffers    int      `json:"max_offers"`
	Retry        float64  `json:"retry"`
	SpendRefresh string   `json:"spend_refresh"`
	Durability   string   `json:"durability"`
	CPULayout    string   `json:"cpu_layout"`
	CPUs         int      `json:"cpus"`
	GOMAXPROCS   int      `json:"gomaxprocs"`
	GoVersion    string   `json:"go_version"`
	// LoadBefore and LoadAfter are the host's load averages (1, 5, 15
	// minutes) before the first day and after the last: other work on the
	// machine moves the figures.
	LoadBefore string `json:"load_before,omitempty"`
	LoadAfter  string `json:"load_after,omitempty"`
	// SimulatedDay is the clock the requests run on.
	SimulatedDay string `json:"simulated_day"`
}

func reportConfig(o *Options) Config {
	return Config{
		Date: time.Now().UTC().Format(time.RFC3339), Requests: o.Requests, Users: o.Users, Campaigns: o.Campaigns,
		Clients: o.Clients, Repeats: o.Repeats, Seed: o.Seed, Backends: o.Backends, MaxOffers: o.MaxOffers,
		Retry: o.Retry, SpendRefresh: o.SpendRefresh.String(), CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		CPULayout:    "not split",
		SimulatedDay: time.UnixMilli(dayStart).UTC().Format(time.RFC3339) + ", one day across the requests",
		LoadBefore:   loadAvg(),
	}
}

// loadAvg is the host's load averages, "" where there are none to read.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// CatalogStats describe the generated catalog.
type CatalogStats struct {
	Campaigns     int     `json:"campaigns"`
	Segments      int     `json:"segments"`
	Topics        int     `json:"topics"`
	AvgCandidates float64 `json:"avg_candidates"`
	TotalBudget   int64   `json:"total_budget_micros"`
}

// Spread is a figure's min, median and max over the repeats.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Min: s[0], Median: m, Max: s[len(s)-1]}
}

// BackendSummary is one backend over the repeats.
type BackendSummary struct {
	DecisionsPerS Spread    `json:"decisions_per_s"`
	PerRepeat     []float64 `json:"decisions_per_s_per_repeat"`
	P50us         Spread    `json:"p50_us"`
	P99us         Spread    `json:"p99_us"`
	// ServerCPUus and ClientCPUus are the CPU time a decision took in the
	// server (when this program started it) and in this program.
	ServerCPUus Spread `json:"server_cpu_us_per_decision"`
	ClientCPUus Spread `json:"client_cpu_us_per_decision"`
	// Ceiling is the server's transport ceiling (Ceiling), when measured.
	Ceiling *Spread `json:"transport_ceiling_per_s,omitempty"`
	// NullCeiling is the backend's client code against the null server
	// (NullCeiling), when measured.
	NullCeiling *Spread `json:"null_server_ceiling_per_s,omitempty"`
	// InvariantsHeld on every repeat.
	InvariantsHeld bool `json:"invariants_held"`
}

// Ratio is a throughput ratio, ours over a peer (above 1: ours is
// faster): of the medians, and its spread over the repeats' ratios.
type Ratio struct {
	OfMedians float64   `json:"of_medians"`
	Spread    Spread    `json:"per_repeat_spread"`
	PerRepeat []float64 `json:"per_repeat"`
}

// Report is what a run prints: its conditions, every run, and the
// summaries.
type Report struct {
	Config   Config                    `json:"config"`
	Catalog  CatalogStats              `json:"catalog"`
	Runs     []RunResult               `json:"runs"`
	Ceilings []Ceiling                 `json:"transport_ceilings,omitempty"`
	Nulls    []NullCeiling             `json:"null_server_ceilings,omitempty"`
	Backends map[string]BackendSummary `json:"backends"`
	// Ratios are ours_vs_redis_ratio and ours_vs_map_ratio, where both
	// ran, and null_ceiling_vs_redis_ratio: ours' client code against the
	// null server over redis, the most ours could reach from this
	// program.
	Ratios map[string]Ratio `json:"ratios"`
	// InvariantsHeld on every backend and repeat.
	InvariantsHeld bool `json:"invariants_held"`
}

func newReport(cfg Config, cat *Catalog, runs []RunResult, ceilings []Ceiling, nulls []NullCeiling) *Report {
	cfg.GOMAXPROCS, cfg.LoadAfter = runtime.GOMAXPROCS(0), loadAvg()
	r := &Report{
		Config: cfg, Runs: runs, Ceilings: ceilings, Nulls: nulls, Backends: map[string]BackendSummary{}, Ratios: map[string]Ratio{}, InvariantsHeld: true,
		Catalog: CatalogStats{
			Campaigns: len(cat.Campaigns), Segments: segments, Topics: topicCount,
			AvgCandidates: math.Round(cat.AvgCandidates()*100) / 100, TotalBudget: cat.TotalBudget(),
		},
	}
	perRepeat := map[string][]float64{}
	for _, name := range cfg.Backends {
		s := BackendSummary{InvariantsHeld: true}
		var p50, p99, srvCPU, cliCPU []float64
		for _, res := range runs {
			if res.Backend != name {
				continue
			}
			s.PerRepeat = append(s.PerRepeat, res.PerSecond)
			p50, p99 = append(p50, res.P50us), append(p99, res.P99us)
			srvCPU, cliCPU = append(srvCPU, res.ServerCPUus), append(cliCPU, res.ClientCPUus)
			s.InvariantsHeld = s.InvariantsHeld && res.Invariants.Held
		}
		s.DecisionsPerS, s.P50us, s.P99us = spreadOf(s.PerRepeat), spreadOf(p50), spreadOf(p99)
		s.ServerCPUus, s.ClientCPUus = spreadOf(srvCPU), spreadOf(cliCPU)
		var ceiling []float64
		for _, c := range ceilings {
			if c.Backend == name {
				ceiling = append(ceiling, c.PerSecond)
			}
		}
		if len(ceiling) > 0 {
			sp := spreadOf(ceiling)
			s.Ceiling = &sp
		}
		var null []float64
		for _, c := range nulls {
			if c.Backend == name {
				null = append(null, c.PerSecond)
			}
		}
		if len(null) > 0 {
			sp := spreadOf(null)
			s.NullCeiling = &sp
		}
		r.Backends[name] = s
		perRepeat[name] = s.PerRepeat
		r.InvariantsHeld = r.InvariantsHeld && s.InvariantsHeld
	}
	for _, peer := range []string{"redis", "map"} {
		ours, theirs := perRepeat["ours"], perRepeat[peer]
		if len(ours) == 0 || len(theirs) == 0 {
			continue
		}
		r.Ratios["ours_vs_"+peer+"_ratio"] = ratioOf(ours, theirs)
	}
	var null []float64
	for _, c := range nulls {
		if c.Backend == "ours" {
			null = append(null, c.PerSecond)
		}
	}
	if redis := perRepeat["redis"]; len(null) > 0 && len(redis) > 0 {
		r.Ratios["null_ceiling_vs_redis_ratio"] = ratioOf(null, redis)
	}
	return r
}

// ratioOf is ours over theirs, repeat by repeat and of the medians.
func ratioOf(ours, theirs []float64) Ratio {
	var ratio Ratio
	for i := range min(len(ours), len(theirs)) {
		ratio.PerRepeat = append(ratio.PerRepeat, ours[i]/theirs[i])
	}
	ratio.Spread = spreadOf(ratio.PerRepeat)
	ratio.OfMedians = spreadOf(ours).Median / spreadOf(theirs).Median
	return ratio
}

// summaryLine is the report's last line: the medians of decisions a
// second, ours over redis, and whether the invariants held everywhere.
func (r *Report) summaryLine() string {
	median := func(name string) string {
		s, ok := r.Backends[name]
		if !ok {
			return "n/a"
		}
		return strconv.FormatFloat(s.DecisionsPerS.Median, 'f', 0, 64)
	}
	ratio := func(name string) string {
		if x, ok := r.Ratios[name]; ok {
			return strconv.FormatFloat(x.OfMedians, 'f', 2, 64)
		}
		return "n/a"
	}
	return fmt.Sprintf("ads: decisions_per_s=%s redis_per_s=%s map_per_s=%s ours_vs_redis_ratio=%s null_ceiling_vs_redis_ratio=%s invariants_held=%t",
		median("ours"), median("redis"), median("map"), ratio("ours_vs_redis_ratio"), ratio("null_ceiling_vs_redis_ratio"), r.InvariantsHeld)
}
