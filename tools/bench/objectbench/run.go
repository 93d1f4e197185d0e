package objectbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// runResult is one run of one system at one size.
type runResult struct {
	Repeat      int     `json:"repeat"`
	Ops         int     `json:"ops"`
	PutMBPerSec float64 `json:"put_mb_per_sec"`
	PutPerSec   float64 `json:"put_per_sec"`
	GetMBPerSec float64 `json:"get_mb_per_sec"`
	GetPerSec   float64 `json:"get_per_sec"`
}

type systemSummary struct {
	PutMBPerSec benchkit.Summary `json:"put_mb_per_sec"`
	PutPerSec   benchkit.Summary `json:"put_per_sec"`
	GetMBPerSec benchkit.Summary `json:"get_mb_per_sec"`
	GetPerSec   benchkit.Summary `json:"get_per_sec"`
	Runs        []runResult      `json:"runs"`
}

type sizeReport struct {
	Size    int                       `json:"size_bytes"`
	Ops     int                       `json:"ops_per_run"`
	Systems map[string]*systemSummary `json:"systems"`
	// Ratios are ours/disk per repeat pair: above 1, ours is faster.
	Ratios map[string]benchkit.Summary `json:"ratios"`
}

type report struct {
	Name       string         `json:"name"`
	Started    string         `json:"started"`
	Conditions map[string]any `json:"conditions"`
	Summary    benchkit.Pairs `json:"summary"`
	Sizes      []sizeReport   `json:"sizes"`
}

// Run executes the benchmark, writes the JSON report, prints the table and
// the summary line to stdout and logs progress to log.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("object")
		if err != nil {
			return err
		}
		out = p
	}
	fsName := benchkit.Filesystem(cfg.Dir)
	if fsName == "tmpfs" || fsName == "ramfs" {
		log.Warn("bench dir is in memory: fsync costs nothing there", "dir", cfg.Dir, "fs", fsName)
	}
	rep := &report{Name: "object", Started: began.UTC().Format(time.RFC3339)}
	systems := []string{SystemOurs, SystemDisk}
	for _, size := range cfg.Sizes {
		data := payload(cfg.Seed, size)
		ops := cfg.OpsFor(size)
		runs := map[string][]runResult{}
		err := benchkit.Alternate(ctx, cfg.Repeats, systems, func(ctx context.Context, r int, name string) error {
			res, err := runOnce(ctx, cfg, name, data, ops)
			if err != nil {
				return err
			}
			res.Repeat = r + 1
			runs[name] = append(runs[name], res)
			log.Info("run", "size", size, "system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats),
				"put_mb_s", math.Round(res.PutMBPerSec), "put_per_s", math.Round(res.PutPerSec), "get_mb_s", math.Round(res.GetMBPerSec))
			return nil
		})
		if err != nil {
			return fmt.Errorf("size %d: %w", size, err)
		}
		rep.Sizes = append(rep.Sizes, summarize(size, ops, systems, runs))
	}
	rep.Conditions = conditions(cfg, fsName, time.Since(began))
	rep.Summary = summaryPairs(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	printTable(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("object", rep.Summary))
	return nil
}

func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// runOnce puts ops objects of data and reads them back, in a fresh
// directory, with one system.
func runOnce(ctx context.Context, cfg Config, name string, data []byte, ops int) (res runResult, err error) {
	dir, err := os.MkdirTemp(cfg.Dir, "objectbench-"+name+"-")
	if err != nil {
		return res, err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	var sys system
	switch name {
	case SystemOurs:
		sys, err = openOurs(ctx, dir, cfg.Body == BodyStream)
	case SystemDisk:
		sys = &diskSystem{dir: dir}
	default:
		err = fmt.Errorf("unknown system %q", name)
	}
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := sys.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	res.Ops = ops
	mb := float64(len(data)) * float64(ops) / 1e6
	start := time.Now()
	for i := range ops {
		if err := sys.Put(ctx, i, data); err != nil {
			return res, fmt.Errorf("put %d: %w", i, err)
		}
	}
	d := time.Since(start).Seconds()
	res.PutMBPerSec, res.PutPerSec = mb/d, float64(ops)/d
	if err := dropCache(dir); err != nil {
		return res, err
	}
	start = time.Now()
	for i := range ops {
		n, err := sys.Get(ctx, i)
		if err != nil {
			return res, fmt.Errorf("get %d: %w", i, err)
		}
		if n != int64(len(data)) {
			return res, fmt.Errorf("get %d: %d bytes, want %d", i, n, len(data))
		}
	}
	d = time.Since(start).Seconds()
	res.GetMBPerSec, res.GetPerSec = mb/d, float64(ops)/d
	return res, nil
}

// dropCache evicts every file under dir from the page cache. The files were
// fsynced, so their pages are clean and DONTNEED drops them.
func dropCache(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
}

type system interface {
	Put(ctx context.Context, i int, data []byte) error
	Get(ctx context.Context, i int) (int64, error)
	Close() error
}

// oursSystem is matrixobject.Store through its Go API, default options.
type oursSystem struct {
	s *matrixobject.Store
	// stream hides the body's *bytes.Reader behind a plain io.Reader.
	stream bool
}

func openOurs(ctx context.Context, dir string, stream bool) (*oursSystem, error) {
	s, err := matrixobject.Open(filepath.Join(dir, "store"), matrixobject.Options{})
	if err != nil {
		return nil, err
	}
	if err := s.CreateBucket(ctx, "bench", matrixobject.Quota{}); err != nil {
		s.Close()
		return nil, err
	}
	return &oursSystem{s: s, stream: stream}, nil
}

func (o *oursSystem) Put(ctx context.Context, i int, data []byte) error {
	var body io.Reader = bytes.NewReader(data)
	if o.stream {
		body = struct{ io.Reader }{body}
	}
	_, err := o.s.PutObject(ctx, "bench", fmt.Sprintf("obj-%06d", i), body, matrixobject.PutOptions{})
	return err
}

func (o *oursSystem) Get(ctx context.Context, i int) (int64, error) {
	r, err := o.s.GetObject(ctx, "bench", fmt.Sprintf("obj-%06d", i), matrixobject.GetOptions{})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.WriteTo(io.Discard)
}

func (o *oursSystem) Close() error { return o.s.Close() }

// diskSystem is the physical limit: a new file per object, written 1 MiB
// per write(2) and fsynced once; read back whole.
type diskSystem struct{ dir string }

func (d *diskSystem) path(i int) string { return filepath.Join(d.dir, fmt.Sprintf("file-%06d", i)) }

func (d *diskSystem) Put(_ context.Context, i int, data []byte) error {
	f, err := os.OpenFile(d.path(i), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for p := data; len(p) > 0; {
		n := min(len(p), 1<<20)
		if _, err := f.Write(p[:n]); err != nil {
			f.Close()
			return err
		}
		p = p[n:]
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (d *diskSystem) Get(_ context.Context, i int) (int64, error) {
	f, err := os.Open(d.path(i))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(io.Discard, f)
}

func (d *diskSystem) Close() error { return nil }

var (
	putMB  = func(r runResult) float64 { return r.PutMBPerSec }
	putOps = func(r runResult) float64 { return r.PutPerSec }
	getMB  = func(r runResult) float64 { return r.GetMBPerSec }
	getOps = func(r runResult) float64 { return r.GetPerSec }
)

func summarize(size, ops int, names []string, runs map[string][]runResult) sizeReport {
	sr := sizeReport{Size: size, Ops: ops, Systems: map[string]*systemSummary{}}
	for _, n := range names {
		rs := runs[n]
		sr.Systems[n] = &systemSummary{
			PutMBPerSec: benchkit.Summarize(benchkit.Column(rs, putMB)),
			PutPerSec:   benchkit.Summarize(benchkit.Column(rs, putOps)),
			GetMBPerSec: benchkit.Summarize(benchkit.Column(rs, getMB)),
			GetPerSec:   benchkit.Summarize(benchkit.Column(rs, getOps)),
			Runs:        rs,
		}
	}
	ours, disk := runs[SystemOurs], runs[SystemDisk]
	sr.Ratios = map[string]benchkit.Summary{
		"put_vs_disk_ratio": benchkit.RatioSpread(benchkit.Column(ours, putMB), benchkit.Column(disk, putMB), benchkit.HigherIsBetter),
		"get_vs_disk_ratio": benchkit.RatioSpread(benchkit.Column(ours, getMB), benchkit.Column(disk, getMB), benchkit.HigherIsBetter),
	}
	return sr
}

func (r *report) size(n int) *sizeReport {
	for i := range r.Sizes {
		if r.Sizes[i].Size == n {
			return &r.Sizes[i]
		}
	}
	return nil
}

func summaryPairs(r *report) benchkit.Pairs {
	nan := math.NaN()
	put64, get64, put4k := nan, nan, nan
	if s := r.size(64 << 20); s != nil {
		put64, get64 = s.Ratios["put_vs_disk_ratio"].Median, s.Ratios["get_vs_disk_ratio"].Median
	}
	if s := r.size(4 << 10); s != nil {
		put4k = s.Systems[SystemOurs].PutPerSec.Median
	}
	return benchkit.Pairs{
		benchkit.NewPair("put64m_vs_disk_ratio", put64, 2),
		benchkit.NewPair("get64m_vs_disk_ratio", get64, 2),
		benchkit.NewPair("put4k_per_s", put4k, 0),
	}
}

func conditions(cfg Config, fsName string, took time.Duration) map[string]any {
	dir, _ := filepath.Abs(cfg.Dir)
	ops := map[string]int{}
	for _, s := range cfg.Sizes {
		ops[fmt.Sprint(s)] = cfg.OpsFor(s)
	}
	return map[string]any{
		"host":          benchkit.HostConditions(),
		"bench_dir":     dir,
		"filesystem":    fsName,
		"quick":         cfg.Quick,
		"repeats":       cfg.Repeats,
		"sizes_bytes":   cfg.Sizes,
		"ops_per_run":   ops,
		"content":       fmt.Sprintf("incompressible: math/rand/v2 PCG bytes, seed %d", cfg.Seed),
		"durability":    "fsync per object: ours fsyncs the object file and its directory before PutObject returns; disk fsyncs the file once",
		"clients":       1,
		"order":         "per size, ours and disk alternate for every repeat; each run in a fresh directory with distinct keys",
		"page_cache":    "before the GET phase every file of the run is dropped from the page cache (fsync, then posix_fadvise DONTNEED), for both systems",
		"ours":          "matrixobject.Store via its Go API: PutObject (MD5 + SHA-256 while writing, background fdatasyncs while a body past 8 MiB is written, trailer, fsync, rename, dir fsync), GetObject + WriteTo(io.Discard)",
		"ours_body":     oursBody(cfg.Body),
		"disk":          "os.OpenFile + write(2) of 1 MiB at a time + one fsync; read back with io.Copy(io.Discard, file)",
		"wall_time":     took.Round(time.Millisecond).String(),
		"ours_commit":   benchkit.ModuleVersion("github.com/temporalstore/temporalstore-go/matrixobject"),
		"concurrency":   "one goroutine issues every operation",
		"ratio_meaning": "ours/disk throughput per repeat pair; above 1 means ours is faster",
	}
}

func oursBody(kind string) string {
	if kind == BodyStream {
		return "stream: a plain io.Reader over the bytes, read 1 MiB at a time (as the S3 handler reads request bodies)"
	}
	return "bytes: a *bytes.Reader, which PutObject hashes and writes in place"
}

func printTable(w io.Writer, r *report) {
	fmt.Fprintln(w, "Objects: medians over repeats; MB/s (10^6 bytes); ×disk = ours/disk (>1: ours faster)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tops\tours put MB/s\tdisk put MB/s\tput×disk\tours put/s\tours get MB/s\tdisk get MB/s\tget×disk\t")
	for _, s := range r.Sizes {
		o, d := s.Systems[SystemOurs], s.Systems[SystemDisk]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%.0f\t%.1f\t%.1f\t%s\t\n", sizeName(s.Size), s.Ops,
			o.PutMBPerSec.Median, d.PutMBPerSec.Median, spread(s.Ratios["put_vs_disk_ratio"]), o.PutPerSec.Median,
			o.GetMBPerSec.Median, d.GetMBPerSec.Median, spread(s.Ratios["get_vs_disk_ratio"]))
	}
	tw.Flush()
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

func spread(s benchkit.Summary) string {
	if math.IsNaN(s.Median) {
		return "n/a"
	}
	if s.Min == s.Max {
		return fmt.Sprintf("%.2f", s.Median)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}
