package cachebench

import (
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Modes of the SSD section, in alternation order.
const (
	// ModeDRAMOnly is the Cache with the SSD tier disabled.
	ModeDRAMOnly = "dram_only"
	// ModeDRAMSSD is the same DRAM over an SSD tier that holds every key.
	ModeDRAMSSD = "dram_ssd"
)

var ssdModes = []string{ModeDRAMOnly, ModeDRAMSSD}

// ssdCapacityFactor sizes the SSD tier at this multiple of the footprint:
// the SSD accounts each block at its encoded size plus its ordered key,
// which is more than the DRAM cost, and it must hold every key.
const ssdCapacityFactor = 4

// ssdTrace is a trace turned into Cache keys: the distinct trace keys
// become records "key-<n>", and each request an index into keys.
type ssdTrace struct {
	name     string
	keys     []blockfmt.Key
	requests []int32
	// footprint is the sum over the distinct keys of key.Size() plus the
	// value length: the DRAM bytes that would hold the whole trace.
	footprint int64
}

func newSSDTrace(tr *Trace, valueLen int) (*ssdTrace, error) {
	if tr.Distinct() > math.MaxInt32 {
		return nil, fmt.Errorf("%s: too many distinct keys", tr.Name)
	}
	st := &ssdTrace{name: tr.Name, requests: make([]int32, len(tr.Keys))}
	index := map[uint64]int32{}
	for i, k := range tr.Keys {
		j, ok := index[k]
		if !ok {
			j = int32(len(st.keys))
			index[k] = j
			key := cachekey.String(0, "key-"+strconv.FormatUint(k, 10))
			st.keys = append(st.keys, key)
			st.footprint += int64(key.Size() + valueLen)
		}
		st.requests[i] = j
	}
	return st, nil
}

// dramBytes is percent of the footprint, at least 1 byte per shard.
func dramBytes(footprint int64, percent float64, shards int) int64 {
	return max(int64(math.Ceil(float64(footprint)*percent/100)), int64(shards))
}

// ssdResult is one replay of one trace in one mode.
type ssdResult struct {
	Repeat   int `json:"repeat"`
	Requests int `json:"requests"`
	// DRAMHits and SSDHits count the Gets each tier answered; a miss is
	// followed by a Put of the key (a read-through cache).
	DRAMHits int `json:"dram_hits"`
	SSDHits  int `json:"ssd_hits"`
	Misses   int `json:"misses"`
	// Percentages of Requests.
	DRAMHitPercent float64 `json:"dram_hit_percent"`
	SSDHitPercent  float64 `json:"ssd_hit_percent"`
	HitPercent     float64 `json:"hit_percent"`
	Seconds        float64 `json:"seconds"`
	// From the Cache's Stats at the end of the replay.
	DRAMEntries           int64 `json:"dram_entries"`
	DRAMBytes             int64 `json:"dram_bytes"`
	SSDEntries            int64 `json:"ssd_entries"`
	SSDBytes              int64 `json:"ssd_bytes"`
	SSDEvictions          int64 `json:"ssd_evictions"`
	DRAMAdmissionRejected int64 `json:"dram_admission_rejected"`
	Promotions            int64 `json:"promotions"`
}

// newSSDResult derives the percentages from the counts.
func newSSDResult(dramHits, ssdHits, misses int) ssdResult {
	r := ssdResult{Requests: dramHits + ssdHits + misses, DRAMHits: dramHits, SSDHits: ssdHits, Misses: misses}
	if r.Requests > 0 {
		n := float64(r.Requests)
		r.DRAMHitPercent = 100 * float64(dramHits) / n
		r.SSDHitPercent = 100 * float64(ssdHits) / n
		r.HitPercent = 100 * float64(dramHits+ssdHits) / n
	}
	return r
}

// ssdOptions are the Cache options of one mode; dir is the SSD tier's
// directory.
func ssdOptions(cfg SSDConfig, footprint int64, mode, dir string) matrixcache.Options {
	o := matrixcache.Options{
		DRAMCapacityBytes: dramBytes(footprint, cfg.DRAMPercent, cfg.Shards),
		Shards:            cfg.Shards,
		SSDCapacityBytes:  matrixcache.Disabled,
	}
	if mode == ModeDRAMSSD {
		o.SSDCapacityBytes = ssdCapacityFactor*footprint + 1<<20
		o.SSDPath = dir
		o.SSDNoSync = true
	}
	return o
}

// replaySSD replays t through a fresh Cache in mode, from cold.
func replaySSD(ctx context.Context, cfg SSDConfig, t *ssdTrace, mode string) (ssdResult, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "cachebench-ssd-")
	if err != nil {
		return ssdResult{}, err
	}
	defer os.RemoveAll(dir)
	c, err := matrixcache.New(ctx, ssdOptions(cfg, t.footprint, mode, dir))
	if err != nil {
		return ssdResult{}, fmt.Errorf("matrixcache: %w", err)
	}
	defer c.Close()
	value := valueBytes(cfg.ValueBytes)
	var dram, ssd, miss int
	start := time.Now()
	for i, j := range t.requests {
		if i&(1<<14-1) == 0 {
			if err := ctx.Err(); err != nil {
				return ssdResult{}, err
			}
		}
		k := t.keys[j]
		_, tier, ok, err := c.GetShared(ctx, k)
		if err != nil {
			return ssdResult{}, fmt.Errorf("get: %w", err)
		}
		switch {
		case ok && tier == matrixcache.TierDRAM:
			dram++
		case ok:
			ssd++
		default:
			miss++
			if err := c.Put(ctx, k, value, matrixcache.PutOptions{}); err != nil {
				return ssdResult{}, fmt.Errorf("put: %w", err)
			}
		}
	}
	r := newSSDResult(dram, ssd, miss)
	r.Seconds = time.Since(start).Seconds()
	st := c.Stats()
	r.DRAMEntries, r.DRAMBytes = st.DRAM.Entries, st.DRAM.Bytes
	r.SSDEntries, r.SSDBytes, r.SSDEvictions = st.SSD.Entries, st.SSD.Bytes, st.SSD.Evictions
	r.DRAMAdmissionRejected, r.Promotions = st.DRAMAdmissionRejected, st.DRAM.Promotions
	if err := c.Close(); err != nil {
		return ssdResult{}, fmt.Errorf("close: %w", err)
	}
	return r, nil
}

// ssdReport is the SSD section of the JSON report.
type ssdReport struct {
	DRAMPercent float64         `json:"dram_percent"`
	ValueBytes  int             `json:"value_bytes"`
	Shards      int             `json:"shards"`
	Repeats     int             `json:"repeats"`
	Cells       []ssdCellReport `json:"cells"`
}

type ssdCellReport struct {
	Trace        string `json:"trace"`
	Requests     int    `json:"requests"`
	DistinctKeys int    `json:"distinct_keys"`
	// MaxRequests says the trace was cut to its first requests (quick).
	MaxRequests    int   `json:"max_requests,omitempty"`
	FootprintBytes int64 `json:"footprint_bytes"`
	DRAMBytes      int64 `json:"dram_bytes"`
	SSDBytes       int64 `json:"ssd_capacity_bytes"`
	// Modes[mode] summarises the replays of each mode.
	Modes map[string]*ssdModeResult `json:"modes"`
	// GainPoints is the DRAM+SSD total hit ratio minus the DRAM-only one,
	// in percentage points, repeat by repeat, as min/median/max.
	GainPoints benchkit.Summary `json:"gain_points"`
	Flags      []string         `json:"flags,omitempty"`
}

type ssdModeResult struct {
	HitPercent     benchkit.Summary `json:"hit_percent"`
	DRAMHitPercent benchkit.Summary `json:"dram_hit_percent"`
	SSDHitPercent  benchkit.Summary `json:"ssd_hit_percent"`
	Seconds        benchkit.Summary `json:"seconds"`
	Runs           []ssdResult      `json:"runs"`
}

func summarizeSSDCell(t *ssdTrace, w Workload, cfg SSDConfig, runs map[string][]ssdResult) ssdCellReport {
	cr := ssdCellReport{
		Trace: t.name, Requests: len(t.requests), DistinctKeys: len(t.keys), MaxRequests: w.MaxRequests,
		FootprintBytes: t.footprint, DRAMBytes: dramBytes(t.footprint, cfg.DRAMPercent, cfg.Shards),
		SSDBytes: ssdOptions(cfg, t.footprint, ModeDRAMSSD, "").SSDCapacityBytes,
		Modes:    map[string]*ssdModeResult{},
	}
	for _, m := range ssdModes {
		rs := runs[m]
		cr.Modes[m] = &ssdModeResult{
			HitPercent:     benchkit.Summarize(benchkit.Column(rs, func(r ssdResult) float64 { return r.HitPercent })),
			DRAMHitPercent: benchkit.Summarize(benchkit.Column(rs, func(r ssdResult) float64 { return r.DRAMHitPercent })),
			SSDHitPercent:  benchkit.Summarize(benchkit.Column(rs, func(r ssdResult) float64 { return r.SSDHitPercent })),
			Seconds:        benchkit.Summarize(benchkit.Column(rs, func(r ssdResult) float64 { return r.Seconds })),
			Runs:           rs,
		}
		for _, r := range rs {
			if r.SSDEvictions > 0 {
				cr.Flags = append(cr.Flags, fmt.Sprintf("%s repeat %d: the SSD tier evicted %d blocks, so it did not hold the whole trace", m, r.Repeat, r.SSDEvictions))
			}
		}
	}
	cr.GainPoints = benchkit.Summarize(pointDiffs(
		benchkit.Column(runs[ModeDRAMSSD], func(r ssdResult) float64 { return r.HitPercent }),
		benchkit.Column(runs[ModeDRAMOnly], func(r ssdResult) float64 { return r.HitPercent })))
	return cr
}

// runSSD is the SSD section.
func runSSD(ctx context.Context, cfg Config, load func(Workload) (*Trace, error), log *slog.Logger) (*ssdReport, error) {
	s := cfg.SSD
	rep := &ssdReport{DRAMPercent: s.DRAMPercent, ValueBytes: s.ValueBytes, Shards: s.Shards, Repeats: s.Repeats}
	for i, w := range s.Workloads {
		tr, err := load(w)
		if err != nil {
			return nil, err
		}
		t, err := newSSDTrace(tr, s.ValueBytes)
		if err != nil {
			return nil, err
		}
		runs := map[string][]ssdResult{}
		err = benchkit.Alternate(ctx, s.Repeats, ssdModes, func(ctx context.Context, r int, mode string) error {
			res, err := replaySSD(ctx, s, t, mode)
			if err != nil {
				return err
			}
			res.Repeat = r + 1
			runs[mode] = append(runs[mode], res)
			log.Info("ssd run", "trace", fmt.Sprintf("%s (%d/%d)", t.name, i+1, len(s.Workloads)), "mode", mode,
				"repeat", fmt.Sprintf("%d/%d", r+1, s.Repeats), "hit_percent", fmt.Sprintf("%.2f", res.HitPercent),
				"dram_hit_percent", fmt.Sprintf("%.2f", res.DRAMHitPercent), "ssd_hit_percent", fmt.Sprintf("%.2f", res.SSDHitPercent),
				"took", time.Duration(res.Seconds*float64(time.Second)).Round(time.Millisecond))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("ssd %s: %w", t.name, err)
		}
		rep.Cells = append(rep.Cells, summarizeSSDCell(t, w, s, runs))
	}
	return rep, nil
}

func ssdMedian(c *ssdCellReport, mode string, f func(*ssdModeResult) benchkit.Summary) float64 {
	if c == nil || c.Modes[mode] == nil {
		return math.NaN()
	}
	return f(c.Modes[mode]).Median
}

// ssdPairs are the SSD figures of the summary line, per trace: the
// DRAM-only hit ratio, the DRAM+SSD one and its split, and the gain.
func ssdPairs(r *ssdReport) benchkit.Pairs {
	if r == nil {
		return nil
	}
	var ps benchkit.Pairs
	for i := range r.Cells {
		c := &r.Cells[i]
		k := "ssd_" + keyName(c.Trace)
		ps = append(ps,
			benchkit.NewPair(k+"_dram_only_hit", ssdMedian(c, ModeDRAMOnly, func(m *ssdModeResult) benchkit.Summary { return m.HitPercent }), 2),
			benchkit.NewPair(k+"_tiered_hit", ssdMedian(c, ModeDRAMSSD, func(m *ssdModeResult) benchkit.Summary { return m.HitPercent }), 2),
			benchkit.NewPair(k+"_tiered_dram_hit", ssdMedian(c, ModeDRAMSSD, func(m *ssdModeResult) benchkit.Summary { return m.DRAMHitPercent }), 2),
			benchkit.NewPair(k+"_tiered_ssd_hit", ssdMedian(c, ModeDRAMSSD, func(m *ssdModeResult) benchkit.Summary { return m.SSDHitPercent }), 2),
			benchkit.NewPair(k+"_gain_points", c.GainPoints.Median, 2),
		)
	}
	return ps
}

func printSSD(w io.Writer, r *ssdReport) {
	fmt.Fprintf(w, "\nHit ratio with the SSD tier: our Cache, DRAM at %g%% of the footprint (distinct keys × (key.Size() + %d-byte value)), %d DRAM shard(s); read-through (a miss Puts the key); median over %d repeat(s)\n",
		r.DRAMPercent, r.ValueBytes, r.Shards, r.Repeats)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "trace\trequests\tdistinct\tDRAM bytes\tDRAM-only hit %\tDRAM+SSD hit %\tfrom DRAM %\tfrom SSD %\tgain pts\tDRAM-only s\tDRAM+SSD s\t\n")
	var flags []string
	for _, c := range r.Cells {
		name := c.Trace
		if c.MaxRequests > 0 {
			name += fmt.Sprintf(" (first %d)", c.MaxRequests)
		}
		d, t := c.Modes[ModeDRAMOnly], c.Modes[ModeDRAMSSD]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, c.Requests, c.DistinctKeys, c.DRAMBytes,
			spread(d.HitPercent, "%.2f"), spread(t.HitPercent, "%.2f"), spread(t.DRAMHitPercent, "%.2f"), spread(t.SSDHitPercent, "%.2f"),
			spread(c.GainPoints, "%+.2f"), spread(d.Seconds, "%.1f"), spread(t.Seconds, "%.1f"))
		for _, f := range c.Flags {
			flags = append(flags, c.Trace+": "+f)
		}
	}
	tw.Flush()
	for _, f := range flags {
		fmt.Fprintln(w, "FLAG ssd: "+f)
	}
}
