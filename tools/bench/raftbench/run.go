package raftbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// cell is one point of the matrix; every system runs it Repeats times.
type cell struct {
	Payload     int `json:"payload_bytes"`
	Concurrency int `json:"concurrency"`
}

func (c cell) String() string { return fmt.Sprintf("payload=%dB c=%d", c.Payload, c.Concurrency) }

// runResult is one run of one system in one cell.
type runResult struct {
	Repeat       int     `json:"repeat"`
	Writes       int     `json:"writes"`
	WritesPerSec float64 `json:"writes_per_sec"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
	Fsyncs       uint64  `json:"fsyncs"`
	// ProposalsPerFsync is NaN (null) when no fsync was counted.
	ProposalsPerFsync benchkit.Float `json:"proposals_per_fsync"`
	Errors            int            `json:"errors"`
	// Leader holds the leader's own figures at the end of the run, when
	// the system reports them (quantiles are bucket upper bounds).
	Leader map[string]float64 `json:"leader,omitempty"`
}

type systemSummary struct {
	WritesPerSec      benchkit.Summary `json:"writes_per_sec"`
	P50Ms             benchkit.Summary `json:"p50_ms"`
	P99Ms             benchkit.Summary `json:"p99_ms"`
	ProposalsPerFsync benchkit.Summary `json:"proposals_per_fsync"`
	Runs              []runResult      `json:"runs"`
}

type cellReport struct {
	cell
	Systems map[string]*systemSummary `json:"systems"`
	// WritesRatio is ours/etcd writes per second per repeat pair, and
	// P99Ratio etcd/ours p99: above 1, ours is better.
	WritesRatio *benchkit.Summary `json:"writes_ratio,omitempty"`
	P99Ratio    *benchkit.Summary `json:"p99_ratio,omitempty"`
}

type report struct {
	Name       string         `json:"name"`
	Started    string         `json:"started"`
	Conditions map[string]any `json:"conditions"`
	Summary    benchkit.Pairs `json:"summary"`
	Cells      []cellReport   `json:"cells"`
}

// Run executes the benchmark, writes the JSON report, prints the table and,
// last, the summary line to stdout, and logs progress to log. It fails
// only when a system fails, never because of a figure.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	commit := gitHead()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("raft")
		if err != nil {
			return err
		}
		out = p
	}
	fsName := benchkit.Filesystem(cfg.Dir)
	if fsName == "tmpfs" || fsName == "ramfs" {
		log.Warn("bench dir is in memory: fdatasync costs nothing there", "dir", cfg.Dir, "fs", fsName)
	}
	rep := &report{Name: "raft", Started: began.UTC().Format(time.RFC3339)}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, p := range cfg.Payloads {
		for _, c := range cfg.Concurrency {
			cl := cell{Payload: p, Concurrency: c}
			runs := map[string][]runResult{}
			err := benchkit.Alternate(ctx, cfg.Repeats, cfg.Systems, func(ctx context.Context, r int, system string) error {
				res, err := runOnce(ctx, cfg, system, cl)
				if err != nil {
					return err
				}
				res.Repeat = r + 1
				runs[system] = append(runs[system], res)
				log.Info("run", "cell", cl.String(), "system", system, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats),
					"writes_s", math.Round(res.WritesPerSec), "p50_ms", round2(res.P50Ms), "p99_ms", round2(res.P99Ms),
					"per_fsync", round2(float64(res.ProposalsPerFsync)), "errors", res.Errors, "leader", res.Leader)
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", cl, err)
			}
			rep.Cells = append(rep.Cells, summarize(cl, cfg.Systems, runs))
		}
	}
	rep.Conditions = map[string]any{
		"commit": commit, "host": benchkit.HostConditions(), "filesystem": fsName, "dir": cfg.Dir,
		"duration": cfg.Duration.String(), "warmup": cfg.Warmup.String(), "repeats": cfg.Repeats,
		"quick": cfg.Quick, "transport": cfg.Transport, "wall_time": time.Since(began).Round(time.Second).String(),
		"etcd_server": benchkit.ModuleVersion("go.etcd.io/etcd/server/v3"),
		"raft":        benchkit.ModuleVersion("go.etcd.io/raft/v3"),
	}
	rep.Summary = summaryPairs(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	printTable(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("raft", rep.Summary))
	return nil
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// runOnce starts a fresh cluster of system in a fresh directory, loads it
// with cl.Concurrency clients for Warmup and then Duration, and measures
// the writes that completed within Duration.
func runOnce(ctx context.Context, cfg Config, system string, cl cell) (runResult, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "raftbench-"+system+"-")
	if err != nil {
		return runResult{}, err
	}
	defer os.RemoveAll(dir)
	var c cluster
	switch system {
	case SystemOurs, SystemOursAsync:
		c, err = startOurs(ctx, dir, cfg.Transport, system == SystemOursAsync)
	case SystemOursProcs, SystemOursProcsHTTP:
		c, err = startProcs(ctx, dir, cl.Concurrency, system == SystemOursProcsHTTP)
	case SystemEtcd:
		c, err = startEtcd(ctx, dir, cl.Concurrency)
	case SystemEtcdProcs:
		c, err = startEtcdProcs(ctx, dir, cl.Concurrency)
	}
	if err != nil {
		return runResult{}, err
	}
	defer c.Close()

	var (
		measuring atomic.Bool
		stop      atomic.Bool
		errCount  atomic.Int64
		firstErr  atomic.Pointer[error]
		wg        sync.WaitGroup
	)
	lats := make([][]time.Duration, cl.Concurrency)
	value := make([]byte, cl.Payload)
	vr := rand.New(rand.NewPCG(1, uint64(cl.Payload)))
	for i := range value {
		value[i] = byte(vr.Uint32())
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := range cl.Concurrency {
		wg.Go(func() {
			key := make([]byte, 8)
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for !stop.Load() {
				key = fmt.Appendf(key[:0], "%08d", r.IntN(100000))
				start := time.Now()
				pctx, pcancel := context.WithTimeout(rctx, 10*time.Second)
				err := c.Put(pctx, w, key, value)
				pcancel()
				if err != nil {
					if rctx.Err() != nil {
						return
					}
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				if measuring.Load() {
					lats[w] = append(lats[w], time.Since(start))
				}
			}
		})
	}
	sleep(ctx, cfg.Warmup)
	f0, err := c.Fsyncs()
	if err != nil {
		stop.Store(true)
		cancel()
		wg.Wait()
		return runResult{}, err
	}
	measuring.Store(true)
	t0 := time.Now()
	sleep(ctx, cfg.Duration)
	measuring.Store(false)
	elapsed := time.Since(t0)
	f1, err := c.Fsyncs()
	var explained map[string]float64
	if x, ok := c.(explainer); ok {
		explained = x.Explain()
	}
	stop.Store(true)
	wg.Wait()
	if err != nil {
		return runResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return runResult{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	if len(all) == 0 {
		if p := firstErr.Load(); p != nil {
			return runResult{}, fmt.Errorf("no write succeeded: %w", *p)
		}
		return runResult{}, errors.New("no write completed in the measured window")
	}
	ps := benchkit.DurationPercentiles(all, 50, 99)
	res := runResult{
		Writes:       len(all),
		WritesPerSec: float64(len(all)) / elapsed.Seconds(),
		P50Ms:        float64(ps[0]) / float64(time.Millisecond),
		P99Ms:        float64(ps[1]) / float64(time.Millisecond),
		Fsyncs:       f1 - f0,
		Errors:       int(errCount.Load()),
		Leader:       explained,
	}
	res.ProposalsPerFsync = benchkit.Float(math.NaN())
	if res.Fsyncs > 0 {
		res.ProposalsPerFsync = benchkit.Float(float64(len(all)) * 3 / float64(res.Fsyncs))
	}
	return res, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func summarize(cl cell, systems []string, runs map[string][]runResult) cellReport {
	cr := cellReport{cell: cl, Systems: map[string]*systemSummary{}}
	for _, s := range systems {
		rs := runs[s]
		cr.Systems[s] = &systemSummary{
			WritesPerSec:      benchkit.Summarize(benchkit.Column(rs, func(r runResult) float64 { return r.WritesPerSec })),
			P50Ms:             benchkit.Summarize(benchkit.Column(rs, func(r runResult) float64 { return r.P50Ms })),
			P99Ms:             benchkit.Summarize(benchkit.Column(rs, func(r runResult) float64 { return r.P99Ms })),
			ProposalsPerFsync: benchkit.Summarize(benchkit.Column(rs, func(r runResult) float64 { return float64(r.ProposalsPerFsync) })),
			Runs:              rs,
		}
	}
	ours, etcd := runs[SystemOurs], runs[SystemEtcd]
	if len(ours) > 0 && len(etcd) > 0 {
		var w, p []float64
		for i := range min(len(ours), len(etcd)) {
			w = append(w, ours[i].WritesPerSec/etcd[i].WritesPerSec)
			p = append(p, etcd[i].P99Ms/ours[i].P99Ms)
		}
		ws, pr := benchkit.Summarize(w), benchkit.Summarize(p)
		cr.WritesRatio, cr.P99Ratio = &ws, &pr
	}
	return cr
}

// summaryPairs picks the headline: 256 B (or the largest payload run) at
// the highest concurrency, and a single client's p50.
func summaryPairs(rep *report) benchkit.Pairs {
	nan := math.NaN()
	var top, single *cellReport
	for i := range rep.Cells {
		c := &rep.Cells[i]
		better := func(cur *cellReport, byConc func(a, b int) bool) bool {
			if cur == nil {
				return true
			}
			if (c.Payload == 256) != (cur.Payload == 256) {
				return c.Payload == 256
			}
			if c.Concurrency != cur.Concurrency {
				return byConc(c.Concurrency, cur.Concurrency)
			}
			return c.Payload > cur.Payload
		}
		if better(top, func(a, b int) bool { return a > b }) {
			top = c
		}
		if better(single, func(a, b int) bool { return a < b }) {
			single = c
		}
	}
	ratio := func(s *benchkit.Summary, pick func(benchkit.Summary) float64) float64 {
		if s == nil {
			return nan
		}
		return pick(*s)
	}
	med := func(s benchkit.Summary) float64 { return s.Median }
	sys := func(c *cellReport, name string, pick func(*systemSummary) float64) float64 {
		if c == nil || c.Systems[name] == nil {
			return nan
		}
		return pick(c.Systems[name])
	}
	ps := benchkit.Pairs{
		benchkit.NewPair(fmt.Sprintf("writes_c%d_vs_etcd_ratio", top.Concurrency), ratio(top.WritesRatio, med), 2),
		benchkit.NewPair(fmt.Sprintf("p99_c%d_vs_etcd_ratio", top.Concurrency), ratio(top.P99Ratio, med), 2),
		benchkit.NewPair("single_client_p50_ms", sys(single, SystemOurs, func(s *systemSummary) float64 { return s.P50Ms.Median }), 3),
	}
	// The spread and the context of the headline, after the three goals.
	ps = append(ps,
		benchkit.NewPair("writes_ratio_min", ratio(top.WritesRatio, func(s benchkit.Summary) float64 { return s.Min }), 2),
		benchkit.NewPair("writes_ratio_max", ratio(top.WritesRatio, func(s benchkit.Summary) float64 { return s.Max }), 2),
		benchkit.NewPair("ours_writes_per_sec", sys(top, SystemOurs, func(s *systemSummary) float64 { return s.WritesPerSec.Median }), 0),
		benchkit.NewPair("etcd_writes_per_sec", sys(top, SystemEtcd, func(s *systemSummary) float64 { return s.WritesPerSec.Median }), 0),
		benchkit.NewPair("ours_proposals_per_fsync", sys(top, SystemOurs, func(s *systemSummary) float64 { return s.ProposalsPerFsync.Median }), 1),
		benchkit.NewPair("etcd_single_client_p50_ms", sys(single, SystemEtcd, func(s *systemSummary) float64 { return s.P50Ms.Median }), 3),
	)
	if top != nil && top.Systems[SystemOursProcs] != nil {
		// Three raft-kv processes, written through HTTP: medians against
		// etcd's of the same cell.
		w := func(c *cellReport, n string) float64 {
			return sys(c, n, func(s *systemSummary) float64 { return s.WritesPerSec.Median })
		}
		p99 := func(c *cellReport, n string) float64 {
			return sys(c, n, func(s *systemSummary) float64 { return s.P99Ms.Median })
		}
		ps = append(ps,
			benchkit.NewPair(fmt.Sprintf("procs_writes_c%d_vs_etcd_ratio", top.Concurrency), w(top, SystemOursProcs)/w(top, SystemEtcd), 2),
			benchkit.NewPair(fmt.Sprintf("procs_p99_c%d_vs_etcd_ratio", top.Concurrency), p99(top, SystemEtcd)/p99(top, SystemOursProcs), 2),
			benchkit.NewPair("procs_single_client_p50_ms", sys(single, SystemOursProcs, func(s *systemSummary) float64 { return s.P50Ms.Median }), 3),
		)
		if top.Systems[SystemEtcdProcs] != nil {
			// Like for like: three processes each.
			ps = append(ps,
				benchkit.NewPair(fmt.Sprintf("procs_writes_c%d_vs_etcd_procs_ratio", top.Concurrency), w(top, SystemOursProcs)/w(top, SystemEtcdProcs), 2),
				benchkit.NewPair(fmt.Sprintf("procs_p99_c%d_vs_etcd_procs_ratio", top.Concurrency), p99(top, SystemEtcdProcs)/p99(top, SystemOursProcs), 2),
			)
		}
	}
	return ps
}

func printTable(w io.Writer, rep *report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var systems []string
	for _, s := range AllSystems {
		for _, c := range rep.Cells {
			if c.Systems[s] != nil {
				systems = append(systems, s)
				break
			}
		}
	}
	head := "payload\tc\t"
	for _, s := range systems {
		head += s + " w/s\tp50 ms\tp99 ms\tper fsync\t"
	}
	fmt.Fprintln(tw, head+"×w/s (min–max)\t×p99 (min–max)\t")
	num := func(c cellReport, s string, pick func(*systemSummary) float64, digits int) string {
		if c.Systems[s] == nil {
			return "-"
		}
		return benchkit.FormatNumber(pick(c.Systems[s]), digits)
	}
	rng := func(s *benchkit.Summary) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
	}
	for _, c := range rep.Cells {
		var cols []string
		for _, s := range systems {
			cols = append(cols,
				num(c, s, func(x *systemSummary) float64 { return x.WritesPerSec.Median }, 0),
				num(c, s, func(x *systemSummary) float64 { return x.P50Ms.Median }, 2),
				num(c, s, func(x *systemSummary) float64 { return x.P99Ms.Median }, 2),
				num(c, s, func(x *systemSummary) float64 { return x.ProposalsPerFsync.Median }, 1))
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t\n", c.Payload, c.Concurrency, strings.Join(cols, "\t"), rng(c.WritesRatio), rng(c.P99Ratio))
	}
	tw.Flush()
	fmt.Fprintln(w, "medians of the repeats; ×w/s = ours/etcd, ×p99 = etcd/ours per repeat pair (above 1: ours better); per fsync = writes × 3 / fsyncs of the 3 members")
}

// gitHead returns the short commit of the working tree, or "".
func gitHead() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
