package walbench

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// report is the JSON written to bench-results/wal.json.
type report struct {
	Name       string         `json:"name"`
	Started    string         `json:"started"`
	Conditions map[string]any `json:"conditions"`
	// Summary holds the figures of the summary line, in its order.
	Summary          benchkit.Pairs             `json:"summary"`
	Envelope         map[string]*envelopeResult `json:"envelope"`
	BboltCalibration []calibrationPoint         `json:"bbolt_calibration,omitempty"`
	Cells            []cellReport               `json:"cells"`
}

type envelopeResult struct {
	Records    int             `json:"records_per_size"`
	FixedBytes benchkit.Float  `json:"fixed_bytes"`
	Slope      benchkit.Float  `json:"slope"`
	R2         benchkit.Float  `json:"r2"`
	Points     []envelopePoint `json:"points"`
}

type envelopePoint struct {
	Payload        int     `json:"payload_bytes"`
	BytesPerRecord float64 `json:"bytes_per_record"`
	Overhead       float64 `json:"overhead_bytes"`
}

type calibrationPoint struct {
	MaxBatchDelay string   `json:"max_batch_delay"`
	Concurrency   int      `json:"concurrency"`
	Sync          SyncMode `json:"sync"`
	RecordsPerSec float64  `json:"records_per_sec"`
	P99Micros     float64  `json:"p99_us"`
}

type cellReport struct {
	cell
	Systems map[string]*systemSummary `json:"systems"`
	// Ratios[peer][figure_ratio]: min/median/max of the per-repeat ratios,
	// above 1 meaning ours is better (throughput ours/peer, latency
	// peer/ours).
	Ratios map[string]map[string]benchkit.Summary `json:"ratios,omitempty"`
}

type systemSummary struct {
	RecordsPerSec   benchkit.Summary `json:"records_per_sec"`
	PayloadMBPerSec benchkit.Summary `json:"payload_mb_per_sec"`
	P50Micros       benchkit.Summary `json:"p50_us"`
	P99Micros       benchkit.Summary `json:"p99_us"`
	RecordsPerFsync benchkit.Summary `json:"records_per_fsync"`
	Fsyncs          benchkit.Summary `json:"fsyncs"`
	Runs            []runResult      `json:"runs"`
}

var (
	recPerSec  = func(r runResult) float64 { return r.RecordsPerSec }
	mbPerSec   = func(r runResult) float64 { return r.PayloadMBPerSec }
	p50        = func(r runResult) float64 { return r.P50Micros }
	p99        = func(r runResult) float64 { return r.P99Micros }
	recPerSync = func(r runResult) float64 { return r.RecordsPerFsync }
	fsyncs     = func(r runResult) float64 { return float64(r.Fsyncs) }
)

func summarizeCell(c cell, names []string, runs map[string][]runResult) cellReport {
	cr := cellReport{cell: c, Systems: map[string]*systemSummary{}}
	for _, n := range names {
		rs := runs[n]
		cr.Systems[n] = &systemSummary{
			RecordsPerSec:   benchkit.Summarize(benchkit.Column(rs, recPerSec)),
			PayloadMBPerSec: benchkit.Summarize(benchkit.Column(rs, mbPerSec)),
			P50Micros:       benchkit.Summarize(benchkit.Column(rs, p50)),
			P99Micros:       benchkit.Summarize(benchkit.Column(rs, p99)),
			RecordsPerFsync: benchkit.Summarize(benchkit.Column(rs, recPerSync)),
			Fsyncs:          benchkit.Summarize(benchkit.Column(rs, fsyncs)),
			Runs:            rs,
		}
	}
	ours, ok := runs[SystemOurs]
	if !ok {
		return cr
	}
	cr.Ratios = map[string]map[string]benchkit.Summary{}
	for _, n := range names {
		if n == SystemOurs {
			continue
		}
		peer := runs[n]
		r := map[string]benchkit.Summary{
			"records_per_sec_ratio": benchkit.RatioSpread(benchkit.Column(ours, recPerSec), benchkit.Column(peer, recPerSec), benchkit.HigherIsBetter),
			"p50_ratio":             benchkit.RatioSpread(benchkit.Column(ours, p50), benchkit.Column(peer, p50), benchkit.LowerIsBetter),
			"p99_ratio":             benchkit.RatioSpread(benchkit.Column(ours, p99), benchkit.Column(peer, p99), benchkit.LowerIsBetter),
		}
		if c.Payload > 0 {
			r["payload_mb_per_sec_ratio"] = benchkit.RatioSpread(benchkit.Column(ours, mbPerSec), benchkit.Column(peer, mbPerSec), benchkit.HigherIsBetter)
		}
		cr.Ratios[n] = r
	}
	return cr
}

func (r *report) find(payload, conc int, s SyncMode) *cellReport {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Payload == payload && c.Concurrency == conc && c.Sync == s {
			return c
		}
	}
	return nil
}

func (r *report) ratio(peer, key string, payload, conc int, s SyncMode) benchkit.Summary {
	nan := math.NaN()
	c := r.find(payload, conc, s)
	if c == nil || c.Ratios[peer] == nil {
		return benchkit.Summary{Min: nan, Median: nan, Max: nan}
	}
	if v, ok := c.Ratios[peer][key]; ok {
		return v
	}
	return benchkit.Summary{Min: nan, Median: nan, Max: nan}
}

// summaryPairs picks the headline figures: the envelope fit, and the
// ratios at 256-byte payloads (durable = SyncAlways).
func summaryPairs(r *report) benchkit.Pairs {
	nan := math.NaN()
	fixed := func(name string) float64 {
		if e := r.Envelope[name]; e != nil {
			return float64(e.FixedBytes)
		}
		return nan
	}
	slope := nan
	if e := r.Envelope[SystemOurs]; e != nil {
		slope = float64(e.Slope)
	}
	durable := r.ratio(SystemEtcd, "records_per_sec_ratio", 256, 64, SyncAlways)
	p99r := r.ratio(SystemEtcd, "p99_ratio", 256, 64, SyncAlways)
	return benchkit.Pairs{
		benchkit.NewPair("envelope_fixed_bytes", fixed(SystemOurs), 1),
		benchkit.NewPair("durable_c64_ratio", durable.Median, 2),
		benchkit.NewPair("p99_ratio", p99r.Median, 2),
		benchkit.NewPair("durable_c64_ratio_min", durable.Min, 2),
		benchkit.NewPair("durable_c64_ratio_max", durable.Max, 2),
		benchkit.NewPair("durable_c1_ratio", r.ratio(SystemEtcd, "records_per_sec_ratio", 256, 1, SyncAlways).Median, 2),
		benchkit.NewPair("interval_c64_ratio", r.ratio(SystemEtcd, "records_per_sec_ratio", 256, 64, SyncInterval).Median, 2),
		benchkit.NewPair("bbolt_durable_c64_ratio", r.ratio(SystemBbolt, "records_per_sec_ratio", 256, 64, SyncAlways).Median, 2),
		benchkit.NewPair("bbolt_p99_ratio", r.ratio(SystemBbolt, "p99_ratio", 256, 64, SyncAlways).Median, 2),
		benchkit.NewPair("envelope_slope", slope, 4),
		benchkit.NewPair("etcd_envelope_fixed_bytes", fixed(SystemEtcd), 1),
	}
}

func printTable(w io.Writer, r *report, names []string) {
	if len(r.Envelope) > 0 {
		fmt.Fprintln(w, "Envelope: bytes written per record (fit: fixed + slope × payload)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		var sizes []int
		for _, n := range names {
			if e := r.Envelope[n]; e != nil {
				sizes = nil
				for _, p := range e.Points {
					sizes = append(sizes, p.Payload)
				}
			}
		}
		fmt.Fprint(tw, "system\tfixed B\tslope\t")
		for _, s := range sizes {
			fmt.Fprintf(tw, "%dB\t", s)
		}
		fmt.Fprintln(tw)
		for _, n := range names {
			e := r.Envelope[n]
			if e == nil {
				continue
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%.4f\t", n, float64(e.FixedBytes), float64(e.Slope))
			for _, p := range e.Points {
				fmt.Fprintf(tw, "%.1f\t", p.BytesPerRecord)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}

	fmt.Fprintln(w, "Appends: medians over repeats; rec/s, p99 per Append, records per fsync; ×peer = ours vs peer (>1: ours better)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "sync\tpayload\tc\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s rec/s\t%s p99\trec/fs\t", n, n)
	}
	hasOurs := has(names, SystemOurs)
	if hasOurs {
		for _, n := range names {
			if n != SystemOurs {
				fmt.Fprintf(tw, "rec/s×%s\tp99×%s\t", n, n)
			}
		}
	}
	fmt.Fprintln(tw)
	for _, c := range r.Cells {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", c.Sync, c.Payload, c.Concurrency)
		for _, n := range names {
			s := c.Systems[n]
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t", rate(s.RecordsPerSec.Median), micros(s.P99Micros.Median), s.RecordsPerFsync.Median)
		}
		if hasOurs {
			for _, n := range names {
				if n == SystemOurs {
					continue
				}
				rr := c.Ratios[n]
				fmt.Fprintf(tw, "%s\t%s\t", spread(rr["records_per_sec_ratio"]), spread(rr["p99_ratio"]))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// spread prints a ratio's median, with its range when there were repeats.
func spread(s benchkit.Summary) string {
	if math.IsNaN(s.Median) {
		return "n/a"
	}
	if s.Min == s.Max {
		return fmt.Sprintf("%.2f", s.Median)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}

func rate(x float64) string {
	switch {
	case math.IsNaN(x):
		return "n/a"
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e4:
		return fmt.Sprintf("%.1fk", x/1e3)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}

func micros(us float64) string {
	switch {
	case math.IsNaN(us):
		return "n/a"
	case us >= 1000:
		return fmt.Sprintf("%.2fms", us/1000)
	default:
		return fmt.Sprintf("%.0fµs", us)
	}
}
