package cachebench

import (
	"context"
	"errors"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/maypok86/otter/v2"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Mixes of the throughput section.
const (
	// MixGet is 100% Get, every one of a resident key.
	MixGet = "get"
	// MixMixed is 75% Get and 25% Set, every one of a resident key: op i
	// of a goroutine is a Set when i%4 == 3.
	MixMixed = "mixed"
)

var allMixes = []string{MixGet, MixMixed}

// concurrentSystems are the systems of the throughput and memory sections,
// in alternation order: the LRU baseline is not safe for concurrent use.
var concurrentSystems = []string{SystemOurs, SystemOtter, SystemRistretto}

// Goals of the throughput section, on the Get mix: ops/s ratios ours/peer
// (median over paired repeats) and our allocations per hit.
const (
	goalGetVsOtterRatio     = 0.8
	goalGetVsRistrettoRatio = 2.0
	// goalAllocsPerHit is "zero": the Mallocs delta of a run also counts
	// the runtime's own rare allocations, so a median below this bound,
	// which prints as 0.000, meets it.
	goalAllocsPerHit = 0.0005
)

// minGetHitPercent is the hit ratio below which a system's Get mix is
// flagged as not all hits: its Get figures then include misses.
const minGetHitPercent = 99.9

// stopEvery is how many operations a load goroutine runs between looks at
// the stop flag; a multiple of 4 so that every batch holds whole 3:1 mixes.
const stopEvery = 256

// cacheCapacityFactor sizes every cache of the throughput section at this
// multiple of the keyspace, so that nothing is evicted or refused.
const cacheCapacityFactor = 2

// keyspace is the data every system of the throughput section holds: the
// same records, the same value.
type keyspace struct {
	// records are "key-000000", "key-000001", ...: every system's keys.
	// Ours builds cachekey.String(0, record) at each call, as a caller
	// holding record IDs does, so every system reads the same records.
	records []string
	// value is the one value every Set writes.
	value []byte
}

// recordName returns "key-" and i in at least width digits.
func recordName(i, width int) string {
	b := make([]byte, 0, 4+max(width, 20))
	b = append(b, "key-"...)
	d := strconv.Itoa(i)
	for range width - len(d) {
		b = append(b, '0')
	}
	return string(append(b, d...))
}

// digits is the width of the largest index below n, at least 6.
func digits(n int) int { return max(6, len(strconv.Itoa(max(n-1, 0)))) }

// valueBytes returns n pseudo-random (incompressible) bytes, the same for
// every call with the same n.
func valueBytes(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 0x5eed))
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

func newKeyspace(n, valueLen int) *keyspace {
	ks := &keyspace{records: make([]string, n), value: valueBytes(valueLen)}
	w := digits(n)
	for i := range n {
		ks.records[i] = recordName(i, w)
	}
	return ks
}

// entryBytes is the largest cost of one entry in our Cache (key.Size()
// plus the value).
func (ks *keyspace) entryBytes() int64 {
	var m int
	for _, r := range ks.records {
		m = max(m, cachekey.String(0, r).Size())
	}
	return int64(m + len(ks.value))
}

// zipfStreams returns n key streams of length l over [0, keys-1], one per
// goroutine; stream g depends only on the seed and g, so every goroutine
// count shares its first streams.
func zipfStreams(t ThroughputConfig, n int) [][]uint32 {
	out := make([][]uint32, n)
	for g := range out {
		r := rand.New(rand.NewPCG(t.Seed, uint64(g)+1))
		z := rand.NewZipf(r, t.ZipfS, t.ZipfV, uint64(t.Keys-1))
		s := make([]uint32, t.StreamLen)
		for i := range s {
			s[i] = uint32(z.Uint64())
		}
		out[g] = s
	}
	return out
}

// loadCount is what one load goroutine did.
type loadCount struct {
	ops, gets, hits int64
	err             error
}

// kvCache is one concurrent cache of the throughput section, holding the
// keyspace. Every implementation has its own copy of the load loop so that
// the loop calls the cache directly: an interface call per operation would
// add the same few nanoseconds to every system and blur the ratios.
type kvCache interface {
	// run loads the cache from one goroutine, cycling through stream
	// (indices into the keyspace; its length is a power of two), until
	// stop is set; with mixed every fourth operation is a Set.
	run(stream []uint32, mixed bool, stop *atomic.Bool) loadCount
	// set writes key i; it reports false when the cache dropped the write.
	set(i int) bool
	// get reports whether key i is cached.
	get(i int) bool
	// settle applies writes still buffered, so that get sees them.
	settle()
	close()
}

// kvSystem builds one kind of kvCache over a keyspace.
type kvSystem struct {
	open     func(ctx context.Context, ks *keyspace) (kvCache, error)
	settings map[string]any
}

func kvSystems() map[string]kvSystem {
	return map[string]kvSystem{
		SystemOurs: {
			open: openOursKV,
			settings: map[string]any{
				"module":     oursModule,
				"source_dir": "matrixcache",
				"options":    fmt.Sprintf("matrixcache.Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: %d × keys × the largest entry cost (key.Size()+len(value)); every other field its default (Shards %d, policy tinylfu)}", cacheCapacityFactor, matrixcache.DefaultShards),
				"get":        "GetShared(ctx, cachekey.String(0, record)), the key built at each call from the same record strings the peers get: the zero-copy read",
				"set":        "Put(ctx, key, value, PutOptions{}), which copies the value",
			},
		},
		SystemOtter: {
			open: openOtterKV,
			settings: map[string]any{
				"module":  otterModule,
				"options": fmt.Sprintf("otter.Options[string, []byte]{MaximumSize: %d × keys}; default executor (maintenance on goroutines, as a user gets it)", cacheCapacityFactor),
				"get":     "GetIfPresent(record)",
				"set":     "Set(record, value); the cache keeps the caller's slice",
			},
		},
		SystemMap: {
			open: openMapKV,
			settings: map[string]any{
				"reference": "not a cache: the least a hash-table cache can do per hit, run in the Get mix only",
				"get":       "m[record] on a map[string][]byte filled before the run and never written during it, with no lock",
			},
		},
		SystemRistretto: {
			open: openRistrettoKV,
			settings: map[string]any{
				"module": ristrettoModule,
				"config": fmt.Sprintf("ristretto.Config[string, []byte]{NumCounters: 10 × keys, MaxCost: %d × keys, BufferItems: 64, IgnoreInternalCost: true}", cacheCapacityFactor),
				"get":    "Get(record)",
				"set":    "Set(record, value, 1), asynchronous (a full set buffer drops a new key; an update of a resident key is applied at once); the cache keeps the caller's slice",
				"prefill": "Set every key, then Wait; keys that did not land are set again " +
					"(up to 5 rounds), so that the Get mix is all hits",
			},
		},
	}
}

// ours: matrixcache.Cache, DRAM only.

type oursKV struct {
	c       *matrixcache.Cache
	records []string
	value   []byte
}

func openOursKV(ctx context.Context, ks *keyspace) (kvCache, error) {
	c, err := matrixcache.New(ctx, matrixcache.Options{
		SSDCapacityBytes:  matrixcache.Disabled,
		DRAMCapacityBytes: cacheCapacityFactor * int64(len(ks.records)) * ks.entryBytes(),
	})
	if err != nil {
		return nil, fmt.Errorf("matrixcache: %w", err)
	}
	return &oursKV{c: c, records: ks.records, value: ks.value}, nil
}

func (o *oursKV) run(stream []uint32, mixed bool, stop *atomic.Bool) loadCount {
	ctx := context.Background()
	var n loadCount
	mask := len(stream) - 1
	i := 0
	for !stop.Load() {
		for range stopEvery {
			k := cachekey.String(0, o.records[stream[i&mask]])
			if mixed && i&3 == 3 {
				if err := o.c.Put(ctx, k, o.value, matrixcache.PutOptions{}); err != nil && n.err == nil {
					n.err = err
				}
			} else {
				n.gets++
				_, _, ok, err := o.c.GetShared(ctx, k)
				if ok {
					n.hits++
				} else if err != nil && n.err == nil {
					n.err = err
				}
			}
			i++
		}
	}
	n.ops = int64(i)
	return n
}

func (o *oursKV) set(i int) bool {
	return o.c.Put(context.Background(), cachekey.String(0, o.records[i]), o.value, matrixcache.PutOptions{}) == nil
}

func (o *oursKV) get(i int) bool {
	_, _, ok, _ := o.c.GetShared(context.Background(), cachekey.String(0, o.records[i]))
	return ok
}

func (o *oursKV) settle() {}
func (o *oursKV) close()  { _ = o.c.Close() }

// otter.

type otterKV struct {
	c       *otter.Cache[string, []byte]
	records []string
	value   []byte
}

func openOtterKV(_ context.Context, ks *keyspace) (kvCache, error) {
	c, err := otter.New(&otter.Options[string, []byte]{MaximumSize: cacheCapacityFactor * len(ks.records)})
	if err != nil {
		return nil, fmt.Errorf("otter: %w", err)
	}
	return &otterKV{c: c, records: ks.records, value: ks.value}, nil
}

func (o *otterKV) run(stream []uint32, mixed bool, stop *atomic.Bool) loadCount {
	var n loadCount
	mask := len(stream) - 1
	i := 0
	for !stop.Load() {
		for range stopEvery {
			k := o.records[stream[i&mask]]
			if mixed && i&3 == 3 {
				o.c.Set(k, o.value)
			} else {
				n.gets++
				if _, ok := o.c.GetIfPresent(k); ok {
					n.hits++
				}
			}
			i++
		}
	}
	n.ops = int64(i)
	return n
}

func (o *otterKV) set(i int) bool { o.c.Set(o.records[i], o.value); return true }
func (o *otterKV) get(i int) bool { _, ok := o.c.GetIfPresent(o.records[i]); return ok }
func (o *otterKV) settle()        { o.c.CleanUp() }
func (o *otterKV) close() {
	o.c.InvalidateAll()
	o.c.StopAllGoroutines()
}

// ristretto.

type ristrettoKV struct {
	c       *ristretto.Cache[string, []byte]
	records []string
	value   []byte
}

func openRistrettoKV(_ context.Context, ks *keyspace) (kvCache, error) {
	n := int64(len(ks.records))
	c, err := ristretto.NewCache(&ristretto.Config[string, []byte]{
		NumCounters:        10 * n,
		MaxCost:            cacheCapacityFactor * n,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("ristretto: %w", err)
	}
	return &ristrettoKV{c: c, records: ks.records, value: ks.value}, nil
}

func (r *ristrettoKV) run(stream []uint32, mixed bool, stop *atomic.Bool) loadCount {
	var n loadCount
	mask := len(stream) - 1
	i := 0
	for !stop.Load() {
		for range stopEvery {
			k := r.records[stream[i&mask]]
			if mixed && i&3 == 3 {
				r.c.Set(k, r.value, 1)
			} else {
				n.gets++
				if _, ok := r.c.Get(k); ok {
					n.hits++
				}
			}
			i++
		}
	}
	n.ops = int64(i)
	return n
}

func (r *ristrettoKV) set(i int) bool { return r.c.Set(r.records[i], r.value, 1) }
func (r *ristrettoKV) get(i int) bool { _, ok := r.c.Get(r.records[i]); return ok }
func (r *ristrettoKV) settle()        { r.c.Wait() }
func (r *ristrettoKV) close()         { r.c.Close() }

// map: the reference ceiling, Get mix only.

type mapKV struct {
	m       map[string][]byte
	records []string
	value   []byte
}

func openMapKV(_ context.Context, ks *keyspace) (kvCache, error) {
	return &mapKV{m: make(map[string][]byte, len(ks.records)), records: ks.records, value: ks.value}, nil
}

func (m *mapKV) run(stream []uint32, mixed bool, stop *atomic.Bool) loadCount {
	var n loadCount
	if mixed {
		n.err = errors.New("map: the reference runs the Get mix only (its writes would race)")
		return n
	}
	mask := len(stream) - 1
	i := 0
	for !stop.Load() {
		for range stopEvery {
			n.gets++
			if _, ok := m.m[m.records[stream[i&mask]]]; ok {
				n.hits++
			}
			i++
		}
	}
	n.ops = int64(i)
	return n
}

// set runs in the prefill only, from one goroutine.
func (m *mapKV) set(i int) bool { m.m[m.records[i]] = m.value; return true }
func (m *mapKV) get(i int) bool { _, ok := m.m[m.records[i]]; return ok }
func (m *mapKV) settle()        {}
func (m *mapKV) close()         {}

// cellSystems are the systems that run a cell: the map reference runs the
// Get mix only.
func cellSystems(run []string, c tpCell) []string {
	if c.mix == MixGet {
		return run
	}
	return slices.DeleteFunc(slices.Clone(run), func(n string) bool { return n == SystemMap })
}

// prefill writes every key of the keyspace into c and returns the share of
// keys a Get then finds, in percent. Keys that did not land (ristretto
// drops a write when its buffer is full) are written again, a few rounds
// at most.
func prefill(c kvCache, n int) float64 {
	missing := make([]int, n)
	for i := range missing {
		missing[i] = i
	}
	for round := 0; round < 5 && len(missing) > 0; round++ {
		for j, i := range missing {
			if !c.set(i) {
				// A dropped write: let the buffer drain, then retry once.
				c.settle()
				c.set(i)
			}
			if j%1024 == 1023 {
				c.settle()
			}
		}
		c.settle()
		missing = slices.DeleteFunc(missing, c.get)
	}
	if n == 0 {
		return 100
	}
	return 100 * float64(n-len(missing)) / float64(n)
}

// load runs c.run on every stream at once for d and returns the counts,
// the wall time from the start signal until the last goroutine stopped, and
// the heap allocations (count and bytes) made meanwhile. A GC runs before
// the start, so that the measurement starts from a clean heap.
func load(c kvCache, streams [][]uint32, mixed bool, d time.Duration) (loadCount, time.Duration, uint64, uint64) {
	var stop atomic.Bool
	start := make(chan struct{})
	counts := make([]loadCount, len(streams))
	var wg sync.WaitGroup
	for g, s := range streams {
		wg.Go(func() {
			<-start
			counts[g] = c.run(s, mixed, &stop)
		})
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	close(start)
	timer := time.NewTimer(d)
	<-timer.C
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&m1)
	var total loadCount
	for _, n := range counts {
		total.ops += n.ops
		total.gets += n.gets
		total.hits += n.hits
		if total.err == nil {
			total.err = n.err
		}
	}
	return total, elapsed, m1.Mallocs - m0.Mallocs, m1.TotalAlloc - m0.TotalAlloc
}

// tpResult is one measured run of one throughput cell by one system.
type tpResult struct {
	Repeat  int     `json:"repeat"`
	Ops     int64   `json:"ops"`
	Seconds float64 `json:"seconds"`
	// NsPerOp is wall time over all operations of all goroutines (as
	// testing.B's RunParallel reports it); OpsPerSec its inverse.
	NsPerOp   float64 `json:"ns_per_op"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// AllocsPerOp and BytesPerOp are the heap allocations of the whole
	// process during the run (runtime.MemStats Mallocs and TotalAlloc
	// deltas) over the operations.
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
	Gets        int64   `json:"gets"`
	Hits        int64   `json:"hits"`
	HitPercent  float64 `json:"hit_percent"`
	// PrefillHitPercent is the share of the keyspace a Get found after the
	// prefill, before the run.
	PrefillHitPercent float64 `json:"prefill_hit_percent"`
}

// newTPResult derives a run's figures from its raw counts.
func newTPResult(n loadCount, elapsed time.Duration, mallocs, bytes uint64) tpResult {
	r := tpResult{Ops: n.ops, Seconds: elapsed.Seconds(), Gets: n.gets, Hits: n.hits}
	if n.ops > 0 && elapsed > 0 {
		r.NsPerOp = float64(elapsed.Nanoseconds()) / float64(n.ops)
		r.OpsPerSec = float64(n.ops) / elapsed.Seconds()
		r.AllocsPerOp = float64(mallocs) / float64(n.ops)
		r.BytesPerOp = float64(bytes) / float64(n.ops)
	}
	if n.gets > 0 {
		r.HitPercent = 100 * float64(n.hits) / float64(n.gets)
	}
	return r
}

// tpCell is one mix at one goroutine count.
type tpCell struct {
	mix     string
	threads int
}

// Key names the cell in the summary line: "get8", "mixed2".
func (c tpCell) Key() string { return c.mix + strconv.Itoa(c.threads) }

// runThroughputCell runs one fresh cache of sys through the cell: open,
// prefill, a warm-up of a quarter of the duration, the measured run.
func runThroughputCell(ctx context.Context, sys kvSystem, ks *keyspace, streams [][]uint32, c tpCell, d time.Duration) (tpResult, error) {
	cache, err := sys.open(ctx, ks)
	if err != nil {
		return tpResult{}, err
	}
	defer cache.close()
	pre := prefill(cache, len(ks.records))
	mixed := c.mix == MixMixed
	if w := d / 4; w > 0 {
		if n, _, _, _ := load(cache, streams, mixed, w); n.err != nil {
			return tpResult{}, n.err
		}
	}
	n, elapsed, mallocs, bytes := load(cache, streams, mixed, d)
	if n.err != nil {
		return tpResult{}, n.err
	}
	r := newTPResult(n, elapsed, mallocs, bytes)
	r.PrefillHitPercent = pre
	return r, nil
}

// runThroughput is the throughput section.
func runThroughput(ctx context.Context, cfg Config, names []string, log *slog.Logger) (*throughputReport, error) {
	t := cfg.Throughput
	systems := kvSystems()
	run := present(systems, names)
	if len(run) == 0 {
		return nil, nil
	}
	t0 := time.Now()
	ks := newKeyspace(t.Keys, t.ValueBytes)
	streams := zipfStreams(t, slices.Max(t.Threads))
	log.Info("throughput keyspace ready", "keys", t.Keys, "streams", len(streams), "stream_len", t.StreamLen, "took", time.Since(t0).Round(time.Millisecond))

	rep := &throughputReport{Systems: run, Headline: headlineThreads(t.Threads), Settings: map[string]map[string]any{}}
	for _, n := range run {
		rep.Settings[n] = describeSettings(systems[n].settings)
	}
	var cells []tpCell
	for _, mix := range allMixes {
		for _, th := range t.Threads {
			cells = append(cells, tpCell{mix: mix, threads: th})
		}
	}
	for i, c := range cells {
		runs := map[string][]tpResult{}
		names := cellSystems(run, c)
		err := benchkit.Alternate(ctx, cfg.Repeats, names, func(ctx context.Context, r int, name string) error {
			res, err := runThroughputCell(ctx, systems[name], ks, streams[:c.threads], c, t.Duration)
			if err != nil {
				return err
			}
			res.Repeat = r + 1
			runs[name] = append(runs[name], res)
			log.Info("throughput run", "cell", fmt.Sprintf("%d/%d", i+1, len(cells)), "mix", c.mix, "goroutines", c.threads,
				"system", name, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats),
				"ns_per_op", fmt.Sprintf("%.1f", res.NsPerOp), "allocs_per_op", fmt.Sprintf("%.3f", res.AllocsPerOp),
				"hit_percent", fmt.Sprintf("%.2f", res.HitPercent))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("throughput %s: %w", c.Key(), err)
		}
		rep.Cells = append(rep.Cells, summarizeThroughputCell(c, names, runs))
	}
	return rep, nil
}
