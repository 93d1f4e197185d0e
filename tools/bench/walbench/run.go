package walbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// cell is one point of the matrix; every system runs it Repeats times.
type cell struct {
	Payload     int      `json:"payload_bytes"`
	Concurrency int      `json:"concurrency"`
	Sync        SyncMode `json:"sync"`
}

func (c cell) String() string {
	return fmt.Sprintf("payload=%dB c=%d sync=%s", c.Payload, c.Concurrency, c.Sync)
}

// Run executes the benchmark described by cfg: envelope fit, bbolt batch
// calibration, then every cell with the systems alternating. It writes the
// JSON report, prints the table and, last, the summary line to stdout, and
// logs progress to log. It fails only when a system fails (an I/O error, a
// bad configuration), never because of a figure.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	commit := gitHead() // before the run: `go run` built from this tree
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("wal")
		if err != nil {
			return err
		}
		out = p
	}
	fs := benchkit.Filesystem(cfg.Dir)
	if fs == "tmpfs" || fs == "ramfs" {
		log.Warn("bench dir is in memory: fdatasync costs nothing there, durable figures mean little", "dir", cfg.Dir, "fs", fs)
	}
	src := newPayloadSource(cfg.Seed)
	rep := &report{Name: "wal", Started: began.UTC().Format(time.RFC3339)}

	// 1. Envelope: bytes per record as a function of payload size.
	env, err := measureEnvelopes(cfg, src, log)
	if err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	rep.Envelope = env

	// 2. bbolt's group-commit delay, chosen once for the whole matrix.
	batch := defaultBboltBatch
	if has(cfg.Systems, SystemBbolt) {
		if cfg.BboltDelay > 0 {
			batch.MaxBatchDelay = cfg.BboltDelay
		} else {
			batch, rep.BboltCalibration, err = calibrateBbolt(ctx, cfg, src, log)
			if err != nil {
				return fmt.Errorf("bbolt calibration: %w", err)
			}
		}
	}
	systems := systemsFor(cfg.Systems, batch)

	// 3. The matrix.
	var cells []cell
	for _, s := range cfg.Syncs {
		for _, p := range cfg.Payloads {
			for _, c := range cfg.Concurrency {
				cells = append(cells, cell{Payload: p, Concurrency: c, Sync: s})
			}
		}
	}
	for i, c := range cells {
		runs := map[string][]runResult{}
		err := benchkit.Alternate(ctx, cfg.Repeats, cfg.Systems, func(ctx context.Context, r int, name string) error {
			res, err := runOnce(ctx, cfg, systems[name], c, src)
			if err != nil {
				return err
			}
			res.Repeat = r + 1
			runs[name] = append(runs[name], res)
			log.Info("run", "cell", fmt.Sprintf("%d/%d", i+1, len(cells)), "system", name,
				"payload", c.Payload, "c", c.Concurrency, "sync", c.Sync,
				"repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats),
				"records_per_s", math.Round(res.RecordsPerSec),
				"p99_us", math.Round(res.P99Micros), "records_per_fsync", round2(res.RecordsPerFsync))
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		rep.Cells = append(rep.Cells, summarizeCell(c, cfg.Systems, runs))
	}

	rep.Conditions = conditions(cfg, batch, fs, commit, time.Since(began))
	rep.Summary = summaryPairs(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	printTable(stdout, rep, cfg.Systems)
	fmt.Fprintln(stdout, benchkit.SummaryLine("wal", rep.Summary))
	return nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runOnce opens a fresh log of sys in a new directory under cfg.Dir, drives
// it for one measured run, closes it and removes the directory.
func runOnce(ctx context.Context, cfg Config, sys system, c cell, src *payloadSource) (res runResult, err error) {
	dir, err := os.MkdirTemp(cfg.Dir, "walbench-"+sys.name+"-")
	if err != nil {
		return res, err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	a, err := sys.open(dir, openOptions{Sync: c.Sync, Interval: cfg.SyncInterval})
	if err != nil {
		return res, fmt.Errorf("open: %w", err)
	}
	res, err = drive(ctx, a, src, c.Payload, c.Concurrency, cfg.Warmup, cfg.Duration)
	if cerr := a.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return res, err
}

// calibrateBbolt runs bbolt with each candidate MaxBatchDelay at the lowest
// and the highest concurrency of the matrix, under every sync policy of the
// matrix (256-byte payloads; candidates alternate), and keeps the delay with
// the best geometric mean of records/s over those points, so bbolt runs the
// whole matrix with the one setting that serves it best overall. A short
// delay wins at low concurrency (Batch waits the full delay when no one else
// comes), a long one at high concurrency (a short one splits the waiting
// callers into many small commits).
func calibrateBbolt(ctx context.Context, cfg Config, src *payloadSource, log *slog.Logger) (bboltBatch, []calibrationPoint, error) {
	cands := cfg.BboltCandidates
	if len(cands) == 0 {
		return defaultBboltBatch, nil, nil
	}
	concs := []int{minInt(cfg.Concurrency)}
	if m := maxInt(cfg.Concurrency); m != concs[0] {
		concs = append(concs, m)
	}
	// Short runs make a noisy choice; calibrate with at least
	// minCalibration per point even in a quick run.
	cal := cfg
	cal.Duration = max(cfg.Duration, minCalibration)
	var points []calibrationPoint
	logRate := make([]float64, len(cands))
	for _, sm := range cfg.Syncs {
		for _, conc := range concs {
			for i, d := range cands {
				b := bboltBatch{MaxBatchDelay: d, MaxBatchSize: defaultBboltBatch.MaxBatchSize}
				sys := system{name: SystemBbolt, open: openBolt(b)}
				res, err := runOnce(ctx, cal, sys, cell{Payload: 256, Concurrency: conc, Sync: sm}, src)
				if err != nil {
					return defaultBboltBatch, nil, err
				}
				points = append(points, calibrationPoint{MaxBatchDelay: d.String(), Concurrency: conc, Sync: sm, RecordsPerSec: res.RecordsPerSec, P99Micros: res.P99Micros})
				logRate[i] += math.Log(math.Max(res.RecordsPerSec, 1))
				log.Info("bbolt calibration", "max_batch_delay", d, "c", conc, "sync", sm,
					"records_per_s", math.Round(res.RecordsPerSec), "p99_us", math.Round(res.P99Micros))
			}
		}
	}
	best := 0
	for i := range cands {
		if logRate[i] > logRate[best] {
			best = i
		}
	}
	chosen := bboltBatch{MaxBatchDelay: cands[best], MaxBatchSize: defaultBboltBatch.MaxBatchSize}
	log.Info("bbolt batch chosen", "max_batch_delay", chosen.MaxBatchDelay, "max_batch_size", chosen.MaxBatchSize)
	return chosen, points, nil
}

// minCalibration is the shortest measured run of the bbolt calibration.
const minCalibration = 500 * time.Millisecond

func minInt(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxInt(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// measureEnvelopes fits bytes/record = fixed + slope·payload for every
// selected system that has an envelope measurement.
func measureEnvelopes(cfg Config, src *payloadSource, log *slog.Logger) (map[string]*envelopeResult, error) {
	res := map[string]*envelopeResult{}
	for _, name := range cfg.Systems {
		sys := systemsFor([]string{name}, defaultBboltBatch)[name]
		if sys.envelope == nil {
			continue
		}
		er := &envelopeResult{Records: cfg.EnvelopeRecords}
		var xs, ys []float64
		for _, size := range cfg.EnvelopeSizes {
			payloads := make([][]byte, cfg.EnvelopeRecords)
			cur := src.cursor(len(xs), size)
			for i := range payloads {
				payloads[i] = cur.next()
			}
			dir, err := os.MkdirTemp(cfg.Dir, "walbench-env-"+name+"-")
			if err != nil {
				return nil, err
			}
			bpr, err := sys.envelope(dir, payloads)
			if rerr := os.RemoveAll(dir); err == nil {
				err = rerr
			}
			if err != nil {
				return nil, fmt.Errorf("%s, payload %d: %w", name, size, err)
			}
			er.Points = append(er.Points, envelopePoint{Payload: size, BytesPerRecord: bpr, Overhead: bpr - float64(size)})
			xs = append(xs, float64(size))
			ys = append(ys, bpr)
		}
		if fit, err := benchkit.LinearFit(xs, ys); err == nil {
			er.FixedBytes, er.Slope, er.R2 = benchkit.Float(fit.Intercept), benchkit.Float(fit.Slope), benchkit.Float(fit.R2)
		} else {
			nan := benchkit.Float(math.NaN())
			er.FixedBytes, er.Slope, er.R2 = nan, nan, nan
		}
		log.Info("envelope", "system", name, "fixed_bytes", round2(float64(er.FixedBytes)), "slope", math.Round(float64(er.Slope)*1e5)/1e5)
		res[name] = er
	}
	return res, nil
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func conditions(cfg Config, batch bboltBatch, fs, commit string, took time.Duration) map[string]any {
	payloads := cfg.Payloads
	syncs := make([]string, len(cfg.Syncs))
	for i, s := range cfg.Syncs {
		syncs[i] = string(s)
	}
	dir, _ := filepath.Abs(cfg.Dir)
	c := map[string]any{
		"host":              benchkit.HostConditions(),
		"bench_dir":         dir,
		"filesystem":        fs,
		"quick":             cfg.Quick,
		"duration":          cfg.Duration.String(),
		"warmup":            cfg.Warmup.String(),
		"repeats":           cfg.Repeats,
		"payload_bytes":     payloads,
		"payload_content":   fmt.Sprintf("incompressible: math/rand/v2 PCG bytes, seed %d", cfg.Seed),
		"concurrency":       cfg.Concurrency,
		"sync_policies":     syncs,
		"sync_interval":     cfg.SyncInterval.String(),
		"systems":           cfg.Systems,
		"order":             "per cell, systems alternate in this order for every repeat; each run in a fresh directory",
		"latency":           "per Append call, timed by the calling goroutine, merged over goroutines; p50/p99 by linear interpolation",
		"envelope_records":  cfg.EnvelopeRecords,
		"envelope_payloads": cfg.EnvelopeSizes,
		"wall_time":         took.Round(time.Millisecond).String(),
		"peer_versions": map[string]string{
			"go.etcd.io/etcd/server/v3": benchkit.ModuleVersion("go.etcd.io/etcd/server/v3"),
			"go.etcd.io/raft/v3":        benchkit.ModuleVersion("go.etcd.io/raft/v3"),
			"go.etcd.io/bbolt":          benchkit.ModuleVersion("go.etcd.io/bbolt"),
		},
		"ours": map[string]any{
			"package": "github.com/temporalstore/temporalstore-go/matrixraft/wal",
			"commit":  commit,
			"config":  "wal.Open(dir, wal.Options{Sync: SyncAlways|SyncInterval, SyncInterval: interval}); other options default (zstd when it saves space, 64 MiB preallocated segments)",
		},
		"etcd": map[string]any{
			"config":   "wal.Create(zap.NewNop(), dir, nil); one writer goroutine turns all pending appends into one Save(empty HardState, entries) (fdatasync per Save); entries raftpb.Entry{Term: 1, Index: i, Data: payload}",
			"interval": "SetUnsafeNoFsync + a ticker fdatasyncing the newest *.wal through its own descriptor every interval; Append returns after Save (write(2))",
			"fsyncs":   "Save calls (always) or ticker fdatasyncs (interval)",
		},
		"bbolt": map[string]any{
			"batch":    batch,
			"config":   "bbolt.Open with NoFreelistSync, hashmap freelist, 1 GiB InitialMmapSize; one bucket, FillPercent 1.0, key = big-endian NextSequence, value = payload; one DB.Batch per Append",
			"interval": "NoSync + a ticker calling db.Sync() every interval",
			"fsyncs":   "committed write transactions (always; each commit issues two fdatasyncs, pages then meta) or ticker db.Sync calls (interval)",
		},
	}
	return c
}

// gitHead returns the repository commit the benchmark was built from, or ""
// outside a git checkout, marked when matrixraft/ (which the tools module
// builds from its working tree) has uncommitted changes.
func gitHead() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(out))
	root, err := benchkit.RepoRoot(".")
	if err != nil {
		return head
	}
	st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--", "matrixraft").Output()
	if err == nil && len(bytes.TrimSpace(st)) > 0 {
		head += " (with uncommitted changes in matrixraft/)"
	}
	return head
}
