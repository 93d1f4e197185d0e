package enginebench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The original's figures (seed 000), the bars of the issue.
var (
	originalIndexBytes = map[int]float64{2000: 86.3, 8000: 50.6, 20000: 39.4}
	originalWA         = map[int]float64{64: 4.25, 256: 2.74, 1024: 2.16, 4096: 2.06}
)

// System names of the throughput section.
const (
	SystemOurs = "ours"
	SystemEtcd = "etcd"
)

type indexResult struct {
	Keys          int     `json:"keys"`
	BytesPerKey   float64 `json:"bytes_per_key"`
	IndexBytes    int     `json:"index_bytes"`
	OriginalBytes float64 `json:"original_bytes_per_key,omitempty"`
}

type waResult struct {
	ValueBytes   int     `json:"value_bytes"`
	Writes       int     `json:"writes"`
	PayloadBytes int64   `json:"payload_bytes"`
	LogBytes     uint64  `json:"log_bytes"`
	ImageBytes   int64   `json:"checkpoint_bytes"`
	DeviceBytes  int64   `json:"device_bytes"`
	WALog        float64 `json:"wa_log"`
	WADurable    float64 `json:"wa_log_and_checkpoint"`
	WADevice     float64 `json:"wa_device"`
	Original     float64 `json:"original_wa,omitempty"`
	Fsyncs       uint64  `json:"fsyncs"`
}

type putRun struct {
	Repeat    int     `json:"repeat"`
	OpsPerSec float64 `json:"ops_per_s"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
}

type putReport struct {
	Runs  map[string][]putRun           `json:"runs"`
	Ops   map[string]benchkit.Summary   `json:"ops_per_s"`
	P99   map[string]benchkit.Summary   `json:"p99_ms"`
	Ratio benchkit.Summary              `json:"ours_vs_etcd_ratio"`
	Extra map[string]map[string]float64 `json:"extra,omitempty"`
}

type memResult struct {
	Keys        int     `json:"keys"`
	ValueBytes  int     `json:"value_bytes"`
	OursBytes   float64 `json:"ours_bytes_per_key"`
	RedisBytes  float64 `json:"redis_bytes_per_key"`
	Ratio       float64 `json:"ours_vs_redis_ratio"`
	OursCache   int64   `json:"ours_cache_budget_bytes"`
	RedisMemory string  `json:"redis_used_memory_human"`
}

type report struct {
	Name       string         `json:"name"`
	Started    string         `json:"started"`
	Index      []indexResult  `json:"index_bytes_per_key"`
	WA         []waResult     `json:"write_amplification"`
	Put        putReport      `json:"durable_set_throughput"`
	Memory     memResult      `json:"memory_per_key"`
	Conditions map[string]any `json:"conditions"`
	Summary    benchkit.Pairs `json:"summary"`
}

// Run runs every section and writes the report.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("engine")
		if err != nil {
			return err
		}
		out = p
	}
	fsName := benchkit.Filesystem(cfg.Dir)
	if fsName == "tmpfs" || fsName == "ramfs" {
		log.Warn("bench dir is in memory: fsync costs nothing there", "dir", cfg.Dir, "fs", fsName)
	}
	base, err := os.MkdirTemp(cfg.Dir, "bench-engine-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	rep := &report{Name: "engine", Started: began.UTC().Format(time.RFC3339)}
	for _, n := range cfg.IndexKeys {
		r, err := indexSection(ctx, filepath.Join(base, fmt.Sprint("index-", n)), n)
		if err != nil {
			return fmt.Errorf("index %d keys: %w", n, err)
		}
		r.OriginalBytes = originalIndexBytes[n]
		log.Info("index", "keys", n, "bytes_per_key", round(r.BytesPerKey, 1))
		rep.Index = append(rep.Index, r)
	}
	for _, size := range cfg.ValueSizes {
		r, err := waSection(ctx, cfg, filepath.Join(base, fmt.Sprint("wa-", size)), size)
		if err != nil {
			return fmt.Errorf("write amplification %d B: %w", size, err)
		}
		r.Original = originalWA[size]
		log.Info("write amplification", "value", size, "wa_log", round(r.WALog, 3), "wa_log_and_checkpoint", round(r.WADurable, 3), "wa_device", round(r.WADevice, 2))
		rep.WA = append(rep.WA, r)
	}
	put, err := putSection(ctx, cfg, base, log)
	if err != nil {
		return fmt.Errorf("throughput: %w", err)
	}
	rep.Put = put
	mem, err := memorySection(ctx, cfg, filepath.Join(base, "memory"), log)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	rep.Memory = mem
	rep.Conditions = conditions(cfg, fsName, time.Since(began))
	rep.Summary = summaryPairs(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	printTables(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("engine", rep.Summary))
	return nil
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// openEngine opens an engine for a section: no background maintenance, so
// that it does not write during a measurement.
func openEngine(ctx context.Context, dir string, cacheBytes int64) (*temporalstore.Engine, error) {
	return local.Open(ctx, temporalstore.Options{
		Dir: dir, MaintenanceInterval: temporalstore.Disabled, CacheBytes: cacheBytes,
		Logger: slog.New(slog.DiscardHandler),
	})
}

// load writes n keys of value bytes each into table ns/t with MSET batches
// of 1,000 (one log record per shard per batch).
func load(ctx context.Context, e *temporalstore.Engine, ns, t string, n, value int, rng *rand.Rand) error {
	const batch = 1000
	for i := 0; i < n; i += batch {
		c := temporalstore.Command{Namespace: ns, Table: t, Kind: temporalstore.KindMSet}
		for j := i; j < min(i+batch, n); j++ {
			c.Keys = append(c.Keys, keyOf(j))
			c.Args = append(c.Args, incompressible(rng, value))
		}
		if _, err := e.Execute(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func keyOf(i int) []byte { return fmt.Appendf(nil, "key:%012d", i) }

func incompressible(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// indexSection loads n keys into a one-shard table and reads the index's
// bytes per key.
func indexSection(ctx context.Context, dir string, n int) (indexResult, error) {
	e, err := openEngine(ctx, dir, temporalstore.Disabled)
	if err != nil {
		return indexResult{}, err
	}
	defer e.Close()
	if err := e.CreateTable(ctx, "bench", "index", temporalstore.TableOptions{Shards: 1, Async: true}); err != nil {
		return indexResult{}, err
	}
	if err := load(ctx, e, "bench", "index", n, 16, rand.New(rand.NewPCG(1, uint64(n)))); err != nil {
		return indexResult{}, err
	}
	st, err := e.Stats()
	if err != nil {
		return indexResult{}, err
	}
	for _, s := range st {
		if s.Table == "index" {
			return indexResult{Keys: s.Keys, BytesPerKey: s.IndexBytesPerKey, IndexBytes: s.IndexBytes}, nil
		}
	}
	return indexResult{}, fmt.Errorf("no stats for the table")
}

// procWriteBytes is what this process has sent to the block layer.
func procWriteBytes() int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "write_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// waSection writes cfg.WAWrites distinct keys with durable SETs from
// cfg.Writers goroutines, checkpoints every shard, and counts the bytes.
func waSection(ctx context.Context, cfg Config, dir string, size int) (waResult, error) {
	e, err := openEngine(ctx, dir, temporalstore.Disabled)
	if err != nil {
		return waResult{}, err
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(2, uint64(size)))
	values := make([][]byte, cfg.WAWrites)
	for i := range values {
		values[i] = incompressible(rng, size)
	}
	before, err := e.Stats()
	if err != nil {
		return waResult{}, err
	}
	dev0 := procWriteBytes()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Writers)
	for range cfg.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.WAWrites {
					return
				}
				if _, err := e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: keyOf(i), Value: values[i]}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return waResult{}, err
	}
	after, err := e.Stats()
	if err != nil {
		return waResult{}, err
	}
	images0 := imageBytes(dir)
	if _, err := e.Maintain(ctx); err != nil { // no-op for the log; below: a checkpoint of every shard
		return waResult{}, err
	}
	if err := e.Checkpoint(ctx); err != nil {
		return waResult{}, err
	}
	dev := procWriteBytes() - dev0
	r := waResult{ValueBytes: size, Writes: cfg.WAWrites, ImageBytes: imageBytes(dir) - images0, DeviceBytes: dev}
	for i := range after {
		r.LogBytes += after[i].LogWritten - before[i].LogWritten
		r.Fsyncs += after[i].LogFsyncs - before[i].LogFsyncs
	}
	r.PayloadBytes = int64(cfg.WAWrites) * int64(len(keyOf(0))+size)
	p := float64(r.PayloadBytes)
	r.WALog = float64(r.LogBytes) / p
	r.WADurable = (float64(r.LogBytes) + float64(r.ImageBytes)) / p
	r.WADevice = float64(dev) / p
	return r, nil
}

// imageBytes is the size of the checkpoint files under dir.
func imageBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "checkpoint-") {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// writers runs n goroutines calling op until d has passed and returns the
// operations per second and the latencies.
func writers(ctx context.Context, n int, d time.Duration, op func(ctx context.Context, g, i int) error) (float64, []time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	lats := make([][]time.Duration, n)
	var firstErr atomic.Value
	start := time.Now()
	stop := start.Add(d)
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				t0 := time.Now()
				if err := op(ctx, g, i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					cancel()
					return
				}
				lats[g] = append(lats[g], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if err, ok := firstErr.Load().(error); ok {
		return 0, nil, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return float64(len(all)) / took.Seconds(), all, nil
}

func putSection(ctx context.Context, cfg Config, base string, log *slog.Logger) (putReport, error) {
	rep := putReport{Runs: map[string][]putRun{}, Ops: map[string]benchkit.Summary{}, P99: map[string]benchkit.Summary{}}
	value := incompressible(rand.New(rand.NewPCG(3, 3)), cfg.PutValue)
	systems := []string{SystemOurs, SystemEtcd}
	err := benchkit.Alternate(ctx, cfg.Repeats, systems, func(ctx context.Context, r int, name string) error {
		dir := filepath.Join(base, fmt.Sprintf("put-%s-%d", name, r))
		var put func(ctx context.Context, key, value []byte) error
		var closeFn func() error
		switch name {
		case SystemOurs:
			e, err := openEngine(ctx, dir, 0)
			if err != nil {
				return err
			}
			put = func(ctx context.Context, k, v []byte) error {
				_, err := e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: k, Value: v})
				return err
			}
			closeFn = e.Close
		default:
			et, err := startEtcd(dir)
			if err != nil {
				return err
			}
			put, closeFn = et.put, et.close
		}
		defer closeFn()
		ops, lats, err := writers(ctx, cfg.Writers, cfg.PutDuration, func(ctx context.Context, g, i int) error {
			return put(ctx, keyOf((g*7919+i*104729)%cfg.PutKeys), value)
		})
		if err != nil {
			return err
		}
		ps := benchkit.DurationPercentiles(lats, 50, 99)
		run := putRun{Repeat: r + 1, OpsPerSec: ops, P50Ms: float64(ps[0].Microseconds()) / 1000, P99Ms: float64(ps[1].Microseconds()) / 1000}
		rep.Runs[name] = append(rep.Runs[name], run)
		log.Info("durable SET", "system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats), "ops_per_s", math.Round(ops), "p50_ms", run.P50Ms, "p99_ms", run.P99Ms)
		return nil
	})
	if err != nil {
		return rep, err
	}
	col := func(name string, f func(putRun) float64) []float64 { return benchkit.Column(rep.Runs[name], f) }
	for _, s := range systems {
		rep.Ops[s] = benchkit.Summarize(col(s, func(r putRun) float64 { return r.OpsPerSec }))
		rep.P99[s] = benchkit.Summarize(col(s, func(r putRun) float64 { return r.P99Ms }))
	}
	rep.Ratio = benchkit.RatioSpread(col(SystemOurs, func(r putRun) float64 { return r.OpsPerSec }),
		col(SystemEtcd, func(r putRun) float64 { return r.OpsPerSec }), benchkit.HigherIsBetter)
	return rep, nil
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func memorySection(ctx context.Context, cfg Config, dir string, log *slog.Logger) (memResult, error) {
	r := memResult{Keys: cfg.MemKeys, ValueBytes: cfg.MemValue, OursCache: temporalstore.DefaultCacheBytes}
	h0 := heapInUse()
	e, err := openEngine(ctx, dir, 0)
	if err != nil {
		return r, err
	}
	if err := e.CreateTable(ctx, "bench", "mem", temporalstore.TableOptions{Async: true}); err != nil {
		e.Close()
		return r, err
	}
	if err := load(ctx, e, "bench", "mem", cfg.MemKeys, cfg.MemValue, rand.New(rand.NewPCG(4, 4))); err != nil {
		e.Close()
		return r, err
	}
	// Read every key once, so the record cache fills as a serving engine's
	// would.
	for i := range cfg.MemKeys {
		if _, err := e.Execute(ctx, temporalstore.Command{Namespace: "bench", Table: "mem", Kind: temporalstore.KindGet, Key: keyOf(i)}); err != nil {
			e.Close()
			return r, err
		}
	}
	h1 := heapInUse()
	runtime.KeepAlive(e)
	if err := e.Close(); err != nil {
		return r, err
	}
	r.OursBytes = float64(h1-h0) / float64(cfg.MemKeys)
	log.Info("memory", "system", "ours", "keys", cfg.MemKeys, "bytes_per_key", round(r.OursBytes, 1))

	redisBytes, human, err := redisMemory(ctx, filepath.Join(dir, "redis"), cfg.MemKeys, cfg.MemValue)
	if err != nil {
		return r, err
	}
	r.RedisBytes, r.RedisMemory = redisBytes, human
	r.Ratio = r.OursBytes / r.RedisBytes
	log.Info("memory", "system", "redis", "keys", cfg.MemKeys, "bytes_per_key", round(r.RedisBytes, 1))
	return r, nil
}

func conditions(cfg Config, fsName string, took time.Duration) map[string]any {
	dir, _ := filepath.Abs(cfg.Dir)
	return map[string]any{
		"host":        benchkit.HostConditions(),
		"bench_dir":   dir,
		"filesystem":  fsName,
		"quick":       cfg.Quick,
		"writers":     cfg.Writers,
		"repeats":     cfg.Repeats,
		"put_run":     cfg.PutDuration.String(),
		"put_value":   cfg.PutValue,
		"put_keys":    cfg.PutKeys,
		"wa_writes":   cfg.WAWrites,
		"mem_keys":    cfg.MemKeys,
		"mem_value":   cfg.MemValue,
		"keys":        "key:%012d (16 bytes)",
		"content":     "incompressible (math/rand/v2 PCG bytes)",
		"ours":        "temporalstore.Engine via Execute, in process; durable tables (fsync before the SET returns, group commit); default table of 4 shards; no background maintenance",
		"etcd":        "go.etcd.io/etcd/server/v3/embed, one member, in process; clientv3 Put over loopback gRPC from the same goroutines",
		"redis":       "redis-server started by the benchmark, --save '' --appendonly no; keys loaded with MSET pipelines; used_memory delta",
		"index":       "one shard, async table, MSET batches of 1,000; IndexBytes (slot table) over keys",
		"wa":          "distinct keys, one SET each; wa_log = log bytes written / (key+value bytes); wa_log_and_checkpoint adds one checkpoint of every shard after the writes; wa_device = /proc/self/io write_bytes delta (what this process sent to the block layer: log, checkpoint, page writeback) over the same",
		"memory":      "ours: Go heap after GC, engine loaded and every key read once (record cache filled up to its default budget), minus the heap before opening; redis: INFO used_memory after the load minus before",
		"wall_time":   took.Round(time.Millisecond).String(),
		"ours_commit": benchkit.ModuleVersion("github.com/temporalstore/temporalstore-go/temporalstore"),
	}
}

func summaryPairs(r *report) benchkit.Pairs {
	idx20k, wa64 := math.NaN(), math.NaN()
	for _, x := range r.Index {
		if x.Keys == 20000 {
			idx20k = x.BytesPerKey
		}
	}
	for _, w := range r.WA {
		if w.ValueBytes == 64 {
			wa64 = w.WADurable
		}
	}
	return benchkit.Pairs{
		benchkit.NewPair("index_bytes_per_key_20k", idx20k, 1),
		benchkit.NewPair("wa_64b", wa64, 2),
		benchkit.NewPair("put_vs_etcd_ratio", r.Put.Ratio.Median, 2),
		benchkit.NewPair("mem_vs_redis_ratio", r.Memory.Ratio, 2),
	}
}

func printTables(w io.Writer, r *report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "keys\tindex B/key\toriginal B/key\t")
	for _, x := range r.Index {
		orig := "-"
		if x.OriginalBytes > 0 {
			orig = fmt.Sprint(x.OriginalBytes)
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%s\t\n", x.Keys, x.BytesPerKey, orig)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "value\tWA log\tWA log+ckpt\tWA device\toriginal\trecords/fsync\t")
	for _, x := range r.WA {
		fmt.Fprintf(tw, "%dB\t%.3f\t%.3f\t%.2f\t%.2f\t%.1f\t\n", x.ValueBytes, x.WALog, x.WADurable, x.WADevice, x.Original,
			float64(x.Writes)/math.Max(float64(x.Fsyncs), 1))
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "durable SET, %s: ours %.0f ops/s (p99 %.2f ms), etcd %.0f ops/s (p99 %.2f ms); ours/etcd %.2f (%.2f..%.2f)\n",
		"medians", r.Put.Ops[SystemOurs].Median, r.Put.P99[SystemOurs].Median, r.Put.Ops[SystemEtcd].Median, r.Put.P99[SystemEtcd].Median,
		r.Put.Ratio.Median, r.Put.Ratio.Min, r.Put.Ratio.Max)
	fmt.Fprintf(w, "memory per key (%d keys, %d B values): ours %.1f B, redis %.1f B; ours/redis %.2f\n",
		r.Memory.Keys, r.Memory.ValueBytes, r.Memory.OursBytes, r.Memory.RedisBytes, r.Memory.Ratio)
}
