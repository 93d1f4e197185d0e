package cachebench

import (
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"io"
	"log/slog"
	"math"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// memCapacityPercent sizes every cache of the memory section at this
// percentage of the entries it is given, so that none is evicted.
const memCapacityPercent = 125

// memCache is one cache of the memory section, keyed by record strings.
type memCache interface {
	// put stores value under record; false means the cache dropped it.
	put(record string, value []byte) bool
	has(record string) bool
	// settle applies buffered writes and pending maintenance.
	settle()
	close()
}

type memSystem struct {
	// open returns a cache with room for capacity entries of at most
	// entryBytes bytes each (key.Size() plus value, for ours).
	open     func(ctx context.Context, capacity int, entryBytes int64) (memCache, error)
	settings map[string]any
}

func memSystems() map[string]memSystem {
	return map[string]memSystem{
		SystemOurs: {
			open: func(ctx context.Context, capacity int, entryBytes int64) (memCache, error) {
				c, err := matrixcache.New(ctx, matrixcache.Options{
					SSDCapacityBytes:  matrixcache.Disabled,
					DRAMCapacityBytes: int64(capacity) * entryBytes,
				})
				if err != nil {
					return nil, fmt.Errorf("matrixcache: %w", err)
				}
				return oursMem{c}, nil
			},
			settings: map[string]any{
				"module":     oursModule,
				"source_dir": "matrixcache",
				"options":    fmt.Sprintf("matrixcache.Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: %d%% of the entries × the largest entry cost}; other fields default", memCapacityPercent),
				"write":      "Put(ctx, cachekey.String(0, record), value, PutOptions{}); Put copies the value, so the caller's copy becomes garbage",
			},
		},
		SystemOtter: {
			open: func(_ context.Context, capacity int, _ int64) (memCache, error) {
				c, err := otter.New(&otter.Options[string, []byte]{MaximumSize: capacity})
				if err != nil {
					return nil, fmt.Errorf("otter: %w", err)
				}
				return otterMem{c}, nil
			},
			settings: map[string]any{
				"module":  otterModule,
				"options": fmt.Sprintf("otter.Options[string, []byte]{MaximumSize: %d%% of the entries}", memCapacityPercent),
				"write":   "Set(record, value); CleanUp before the measurement",
			},
		},
		SystemRistretto: {
			open: func(_ context.Context, capacity int, _ int64) (memCache, error) {
				c, err := ristretto.NewCache(&ristretto.Config[string, []byte]{
					NumCounters:        10 * int64(capacity),
					MaxCost:            int64(capacity),
					BufferItems:        64,
					IgnoreInternalCost: true,
				})
				if err != nil {
					return nil, fmt.Errorf("ristretto: %w", err)
				}
				return ristrettoMem{c}, nil
			},
			settings: map[string]any{
				"module": ristrettoModule,
				"config": fmt.Sprintf("ristretto.Config[string, []byte]{NumCounters: 10 × capacity, MaxCost: capacity, BufferItems: 64, IgnoreInternalCost: true}, capacity = %d%% of the entries, cost 1", memCapacityPercent),
				"write":  "Set(record, value, 1); a dropped Set is retried after Wait; Wait before the measurement",
			},
		},
	}
}

type oursMem struct{ c *matrixcache.Cache }

func (o oursMem) put(record string, value []byte) bool {
	return o.c.Put(context.Background(), cachekey.String(0, record), value, matrixcache.PutOptions{}) == nil
}

func (o oursMem) has(record string) bool {
	_, _, ok, _ := o.c.GetShared(context.Background(), cachekey.String(0, record))
	return ok
}
func (o oursMem) settle() {}
func (o oursMem) close()  { _ = o.c.Close() }

type otterMem struct{ c *otter.Cache[string, []byte] }

func (o otterMem) put(record string, value []byte) bool { o.c.Set(record, value); return true }
func (o otterMem) has(record string) bool               { _, ok := o.c.GetIfPresent(record); return ok }
func (o otterMem) settle()                              { o.c.CleanUp() }
func (o otterMem) close() {
	o.c.InvalidateAll()
	o.c.StopAllGoroutines()
}

type ristrettoMem struct {
	c *ristretto.Cache[string, []byte]
}

func (r ristrettoMem) put(record string, value []byte) bool { return r.c.Set(record, value, 1) }
func (r ristrettoMem) has(record string) bool               { _, ok := r.c.Get(record); return ok }
func (r ristrettoMem) settle()                              { r.c.Wait() }
func (r ristrettoMem) close()                               { r.c.Close() }

// memResult is one measurement of one system.
type memResult struct {
	Repeat int `json:"repeat"`
	// Held is how many of the entries the cache holds after the inserts.
	Held int `json:"held"`
	// HeapBytes is runtime.MemStats.HeapAlloc after the inserts and a GC,
	// minus HeapAlloc before the cache was built (after a GC).
	HeapBytes int64 `json:"heap_bytes"`
	// BytesPerEntry is HeapBytes / Held.
	BytesPerEntry float64 `json:"bytes_per_entry"`
	// Seconds is the time of the inserts, for orientation.
	Seconds float64 `json:"seconds"`
}

// bytesPerEntry is heap bytes over the entries held (NaN when none is).
func bytesPerEntry(heap int64, held int) float64 {
	if held <= 0 {
		return math.NaN()
	}
	return float64(heap) / float64(held)
}

// measureMemory builds a cache of sys, inserts n entries with fresh keys
// and values (so that the heap delta holds the payload as every cache
// keeps it), and measures the heap it then holds.
func measureMemory(ctx context.Context, sys memSystem, n, valueLen int) (memResult, error) {
	tmpl := valueBytes(valueLen)
	w := digits(n)
	entry := int64(len(recordName(n-1, w))+valueLen) + int64(cachekey.String(0, "").Size())
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m0)
	c, err := sys.open(ctx, n*memCapacityPercent/100, entry)
	if err != nil {
		return memResult{}, err
	}
	defer c.close()
	t0 := time.Now()
	for i := range n {
		if i&(1<<16-1) == 0 {
			if err := ctx.Err(); err != nil {
				return memResult{}, err
			}
		}
		v := make([]byte, valueLen)
		copy(v, tmpl)
		rec := recordName(i, w)
		if !c.put(rec, v) {
			c.settle()
			c.put(rec, v)
		}
	}
	c.settle()
	took := time.Since(t0)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	held := 0
	for i := range n {
		if c.has(recordName(i, w)) {
			held++
		}
	}
	heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	return memResult{Held: held, HeapBytes: heap, BytesPerEntry: bytesPerEntry(heap, held), Seconds: took.Seconds()}, nil
}

// memoryReport is the memory section of the JSON report.
type memoryReport struct {
	Entries    int `json:"entries"`
	ValueBytes int `json:"value_bytes"`
	KeyBytes   int `json:"key_bytes"`
	// PayloadBytesPerEntry is key plus value bytes: what any cache must
	// hold; the rest of BytesPerEntry is the cache's overhead.
	PayloadBytesPerEntry int                         `json:"payload_bytes_per_entry"`
	Systems              map[string]*memSystemReport `json:"systems"`
	// Ratios["vs_otter_ratio"] is otter's bytes per entry over ours, repeat
	// i paired with repeat i, as min/median/max; above 1 means ours uses
	// less memory.
	Ratios   map[string]benchkit.Summary `json:"ratios,omitempty"`
	Flags    []string                    `json:"flags,omitempty"`
	Settings map[string]map[string]any   `json:"settings"`
	order    []string
}

type memSystemReport struct {
	BytesPerEntry         benchkit.Summary `json:"bytes_per_entry"`
	OverheadBytesPerEntry benchkit.Summary `json:"overhead_bytes_per_entry"`
	HeldPercent           benchkit.Summary `json:"held_percent"`
	Runs                  []memResult      `json:"runs"`
}

func summarizeMemory(n, valueLen int, names []string, runs map[string][]memResult) *memoryReport {
	keyLen := len(recordName(n-1, digits(n)))
	r := &memoryReport{
		Entries: n, ValueBytes: valueLen, KeyBytes: keyLen, PayloadBytesPerEntry: keyLen + valueLen,
		Systems: map[string]*memSystemReport{}, Settings: map[string]map[string]any{}, order: names,
	}
	for _, name := range names {
		rs := runs[name]
		bpe := benchkit.Column(rs, func(m memResult) float64 { return m.BytesPerEntry })
		over := make([]float64, len(bpe))
		for i, b := range bpe {
			over[i] = b - float64(r.PayloadBytesPerEntry)
		}
		s := &memSystemReport{
			BytesPerEntry:         benchkit.Summarize(bpe),
			OverheadBytesPerEntry: benchkit.Summarize(over),
			HeldPercent:           benchkit.Summarize(benchkit.Column(rs, func(m memResult) float64 { return 100 * float64(m.Held) / float64(n) })),
			Runs:                  rs,
		}
		r.Systems[name] = s
		if s.HeldPercent.Min < minGetHitPercent {
			r.Flags = append(r.Flags, fmt.Sprintf("%s held only %.2f%% of the %d entries (worst repeat): bytes per entry are over the entries held", name, s.HeldPercent.Min, n))
		}
	}
	ours, ok := runs[SystemOurs]
	if !ok {
		return r
	}
	r.Ratios = map[string]benchkit.Summary{}
	for _, name := range names {
		if name == SystemOurs {
			continue
		}
		r.Ratios["vs_"+name+"_ratio"] = benchkit.RatioSpread(
			benchkit.Column(ours, func(m memResult) float64 { return m.BytesPerEntry }),
			benchkit.Column(runs[name], func(m memResult) float64 { return m.BytesPerEntry }),
			benchkit.LowerIsBetter)
	}
	return r
}

// runMemory is the memory section.
func runMemory(ctx context.Context, cfg Config, names []string, log *slog.Logger) (*memoryReport, error) {
	systems := memSystems()
	run := present(systems, names)
	if len(run) == 0 {
		return nil, nil
	}
	m := cfg.Memory
	runs := map[string][]memResult{}
	err := benchkit.Alternate(ctx, cfg.Repeats, run, func(ctx context.Context, r int, name string) error {
		res, err := measureMemory(ctx, systems[name], m.Entries, m.ValueBytes)
		if err != nil {
			return err
		}
		res.Repeat = r + 1
		runs[name] = append(runs[name], res)
		log.Info("memory run", "system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats), "entries", m.Entries,
			"held", res.Held, "bytes_per_entry", fmt.Sprintf("%.1f", res.BytesPerEntry), "took", time.Duration(res.Seconds*float64(time.Second)).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	rep := summarizeMemory(m.Entries, m.ValueBytes, run, runs)
	for _, n := range run {
		rep.Settings[n] = describeSettings(systems[n].settings)
	}
	return rep, nil
}

func memMedian(r *memoryReport, system string) float64 {
	if r == nil || r.Systems[system] == nil {
		return math.NaN()
	}
	return r.Systems[system].BytesPerEntry.Median
}

func memRatio(r *memoryReport, peer string) float64 {
	if r == nil {
		return math.NaN()
	}
	if s, ok := r.Ratios["vs_"+peer+"_ratio"]; ok {
		return s.Median
	}
	return math.NaN()
}

// memoryPairs are the memory figures of the summary line.
func memoryPairs(r *memoryReport) benchkit.Pairs {
	payload := math.NaN()
	if r != nil {
		payload = float64(r.PayloadBytesPerEntry)
	}
	return benchkit.Pairs{
		benchkit.NewPair("mem_vs_otter_ratio", memRatio(r, SystemOtter), 2),
		benchkit.NewPair("mem_vs_ristretto_ratio", memRatio(r, SystemRistretto), 2),
		benchkit.NewPair("mem_bytes_per_entry", memMedian(r, SystemOurs), 1),
		benchkit.NewPair("mem_otter_bytes_per_entry", memMedian(r, SystemOtter), 1),
		benchkit.NewPair("mem_ristretto_bytes_per_entry", memMedian(r, SystemRistretto), 1),
		benchkit.NewPair("mem_payload_bytes_per_entry", payload, 0),
	}
}

func printMemory(w io.Writer, r *memoryReport, quick bool) {
	note := ""
	if quick {
		note = " (quick run: fewer entries than the full run's 1,000,000)"
	}
	fmt.Fprintf(w, "\nMemory per entry at %d entries%s: heap after the inserts and a GC, minus before the cache was built; payload = %d-byte key + %d-byte value = %d bytes\n",
		r.Entries, note, r.KeyBytes, r.ValueBytes, r.PayloadBytesPerEntry)
	fmt.Fprintln(w, "Ratio = peer bytes / ours per paired repeat (above 1: ours smaller)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "system\tbytes/entry\toverhead/entry\theld %\tratio\t\n")
	for _, n := range r.order {
		s := r.Systems[n]
		ratio := ""
		if q, ok := r.Ratios["vs_"+n+"_ratio"]; ok {
			ratio = spread(q, "%.2f")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", n, spread(s.BytesPerEntry, "%.1f"), spread(s.OverheadBytesPerEntry, "%.1f"), spread(s.HeldPercent, "%.2f"), ratio)
	}
	tw.Flush()
	for _, f := range r.Flags {
		fmt.Fprintln(w, "FLAG memory: "+f)
	}
}
