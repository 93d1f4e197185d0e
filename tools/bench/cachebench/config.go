package cachebench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// AllSystems lists every system, in run order.
var AllSystems = []string{SystemOurs, SystemOtter, SystemRistretto, SystemPolicy, SystemLRU, SystemMap}

// Sections of a run, in run order.
const (
	// SectionHit replays traces for hit ratio at equal capacity.
	SectionHit = "hit"
	// SectionThroughput measures Get and Get/Set throughput and allocations
	// of the concurrent caches.
	SectionThroughput = "throughput"
	// SectionMemory measures heap bytes per entry.
	SectionMemory = "memory"
	// SectionSSD replays traces through our Cache with DRAM at a tenth of
	// the footprint, without and with the SSD tier.
	SectionSSD = "ssd"
)

// AllSections lists every section, in run order.
var AllSections = []string{SectionHit, SectionThroughput, SectionMemory, SectionSSD}

// ThroughputConfig describes the throughput section: a keyspace prefilled
// into every system so that every Get hits, then each mix run from each
// goroutine count for a fixed time.
type ThroughputConfig struct {
	// Keys is the keyspace: records "key-000000" .. Keys-1, all resident.
	Keys int `json:"keys"`
	// ValueBytes is the length of every value.
	ValueBytes int `json:"value_bytes"`
	// Threads are the goroutine counts; every mix runs at each.
	Threads []int `json:"threads"`
	// Duration is the measured time of one run; a warm-up of a quarter of
	// it, on the same cache, comes first.
	Duration time.Duration `json:"duration_ns"`
	// ZipfS and ZipfV shape the key stream (math/rand/v2 Zipf over
	// [0, Keys-1]: rank k has weight (V+k)^-S).
	ZipfS float64 `json:"zipf_s"`
	ZipfV float64 `json:"zipf_v"`
	// StreamLen is the length of each goroutine's pre-generated key
	// stream, a power of two; a goroutine cycles through its stream.
	StreamLen int `json:"stream_len"`
	// Seed seeds the key streams.
	Seed uint64 `json:"seed"`
}

// MemoryConfig describes the memory section.
type MemoryConfig struct {
	// Entries is how many entries each system holds when it is measured.
	Entries int `json:"entries"`
	// ValueBytes is the length of every value.
	ValueBytes int `json:"value_bytes"`
}

// SSDConfig describes the SSD-tier section.
type SSDConfig struct {
	// Workloads are the traces replayed; their Capacities are not used.
	Workloads []Workload `json:"workloads"`
	// DRAMPercent is the DRAM tier's size in percent of the footprint
	// (distinct keys × entry cost).
	DRAMPercent float64 `json:"dram_percent"`
	// ValueBytes is the length of every value.
	ValueBytes int `json:"value_bytes"`
	// Shards is the Cache's DRAM shard count.
	Shards int `json:"shards"`
	// Repeats is how many times each trace is replayed in each mode. Our
	// Cache replayed by one goroutine is nearly deterministic (fixed
	// hashing, a seeded policy; only the random choice of read ring moves
	// when hits reach the policy, by hundredths of a point), so more
	// repeats mostly re-measure the time; every miss of the DRAM+SSD mode
	// is an SSD write, which makes a replay of a million requests take
	// about a minute.
	Repeats int `json:"repeats"`
	// Dir is where the SSD tier's temporary directories go (default: the
	// system's temporary directory).
	Dir string `json:"dir,omitempty"`
}

// Workload is one trace and the capacities it is replayed at.
type Workload struct {
	// Name labels the trace ("oltp", "gli", "loop", "zipf", or the base
	// name of a user's file).
	Name string `json:"name"`
	// File is the trace file: a bare name is looked up in Config.TracesDir.
	// Empty for the generated Zipf trace.
	File string `json:"file,omitempty"`
	// Format of File; empty sniffs it from the first line.
	Format Format `json:"format,omitempty"`
	// Zipf, when File is empty, describes the generated trace.
	Zipf *ZipfParams `json:"zipf,omitempty"`
	// Capacities are the cache sizes, in entries.
	Capacities []int `json:"capacities,omitempty"`
	// MaxRequests, when positive, keeps only the trace's first
	// MaxRequests requests.
	MaxRequests int `json:"max_requests,omitempty"`
}

// Config is one `bench cache` run. DefaultConfig fills every field; the
// command line overrides single fields.
type Config struct {
	// Sections are the parts of the run, a subset of AllSections.
	Sections []string
	// Workloads are replayed in order, each at each of its capacities
	// (the hit section).
	Workloads []Workload
	// Throughput, Memory and SSD configure those sections.
	Throughput ThroughputConfig
	Memory     MemoryConfig
	SSD        SSDConfig
	// TracesDir holds the bundled traces; empty means
	// <directory holding go.work>/../shared/data/cache-traces.
	TracesDir string
	// Repeats is how many times each system runs each cell of the hit,
	// throughput and memory sections, alternating with the others (the
	// ssd section has its own, SSD.Repeats).
	Repeats int
	// Systems is a subset of AllSystems, in alternation order.
	Systems []string
	// Quick marks a reduced run (BENCH_QUICK=1); recorded in the report.
	Quick bool
	// Out is the JSON report path; empty means
	// <repo root>/bench-results/cache.json.
	Out string

	// UserTrace, when set, replaces the workloads with this one file,
	// replayed at UserCapacities in UserFormat (empty: sniffed).
	UserTrace      string
	UserFormat     Format
	UserCapacities []int
}

// DefaultConfig returns the full run, or with quick the reduced one that
// keeps every system side by side and finishes in under a minute.
func DefaultConfig(quick bool) Config {
	c := Config{
		Sections: slices.Clone(AllSections),
		Repeats:  3,
		Systems:  slices.Clone(AllSystems),
		Quick:    quick,
		Throughput: ThroughputConfig{
			Keys: 1 << 16, ValueBytes: 64, Threads: []int{2, 8}, Duration: 2 * time.Second,
			ZipfS: DefaultZipf.S, ZipfV: 1, StreamLen: 1 << 20, Seed: 1,
		},
		Memory: MemoryConfig{Entries: 1_000_000, ValueBytes: 64},
		SSD:    SSDConfig{DRAMPercent: 10, ValueBytes: 64, Shards: 1, Repeats: 1},
	}
	zipf := DefaultZipf
	if quick {
		zipf.Requests = 200_000
		c.Workloads = []Workload{
			{Name: "oltp", File: "oltp.gz", Format: FormatARC, Capacities: []int{1000}},
			{Name: "gli", File: "gli.gz", Format: FormatLIRS, Capacities: []int{1000}},
			{Name: "zipf", Zipf: &zipf, Capacities: []int{500}},
		}
		c.Throughput.Duration = 100 * time.Millisecond
		c.Throughput.StreamLen = 1 << 16
		c.Memory.Entries = 100_000
		c.SSD.Workloads = []Workload{
			{Name: "oltp", File: "oltp.gz", Format: FormatARC, MaxRequests: quickSSDRequests},
			{Name: "gli", File: "gli.gz", Format: FormatLIRS},
			{Name: "zipf", Zipf: &zipf, MaxRequests: quickSSDRequests},
		}
		return c
	}
	c.Workloads = []Workload{
		{Name: "oltp", File: "oltp.gz", Format: FormatARC, Capacities: []int{250, 1000, 2000}},
		{Name: "gli", File: "gli.gz", Format: FormatLIRS, Capacities: []int{500, 1000}},
		{Name: "loop", File: "loop.gz", Format: FormatLIRS, Capacities: []int{500, 1000}},
		{Name: "zipf", Zipf: &zipf, Capacities: []int{500, 5000}},
	}
	c.SSD.Workloads = []Workload{
		{Name: "oltp", File: "oltp.gz", Format: FormatARC},
		{Name: "gli", File: "gli.gz", Format: FormatLIRS},
		{Name: "zipf", Zipf: &zipf},
	}
	return c
}

// quickSSDRequests bounds the oltp and zipf traces of the quick SSD
// section: every miss there is an SSD write.
const quickSSDRequests = 50_000

func (c *Config) runs(section string) bool { return slices.Contains(c.Sections, section) }

// resolve applies UserTrace and finds TracesDir; call it after every
// override and before Validate.
func (c *Config) resolve() error {
	if c.UserTrace != "" {
		if len(c.UserCapacities) == 0 {
			return errors.New("TRACE needs CAPACITY (entries; a comma-separated list is allowed)")
		}
		abs, err := filepath.Abs(c.UserTrace)
		if err != nil {
			return err
		}
		w := Workload{Name: traceName(abs), File: abs, Format: c.UserFormat}
		c.SSD.Workloads = []Workload{w}
		w.Capacities = slices.Clone(c.UserCapacities)
		c.Workloads = []Workload{w}
		return nil
	}
	if len(c.UserCapacities) > 0 || c.UserFormat != "" {
		return errors.New("CAPACITY and FORMAT apply to a user trace: set TRACE too")
	}
	if c.TracesDir == "" && (c.runs(SectionHit) || c.runs(SectionSSD)) {
		dir, err := defaultTracesDir()
		if err != nil {
			return err
		}
		c.TracesDir = dir
	}
	return nil
}

// defaultTracesDir is ../shared/data/cache-traces beside the directory
// that holds go.work, found by walking up from the working directory.
func defaultTracesDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("finding the traces: %w (set --traces or BENCH_TRACES)", err)
	}
	return filepath.Join(filepath.Dir(root), "shared", "data", "cache-traces"), nil
}

// path returns where w's trace file is.
func (c *Config) path(w Workload) string {
	if filepath.IsAbs(w.File) || c.TracesDir == "" {
		return w.File
	}
	return filepath.Join(c.TracesDir, w.File)
}

// Validate reports the first setting that cannot run.
func (c *Config) Validate() error {
	switch {
	case c.Repeats < 1:
		return errors.New("repeats must be at least 1")
	case len(c.Sections) == 0:
		return errors.New("sections must not be empty")
	case len(c.Systems) == 0:
		return errors.New("systems must not be empty")
	}
	for _, s := range c.Sections {
		if !slices.Contains(AllSections, s) {
			return fmt.Errorf("unknown section %q (want %v)", s, AllSections)
		}
	}
	for _, s := range c.Systems {
		if !slices.Contains(AllSystems, s) {
			return fmt.Errorf("unknown system %q (want %v)", s, AllSystems)
		}
	}
	if c.runs(SectionHit) {
		if len(c.Workloads) == 0 {
			return errors.New("no workloads")
		}
		for _, w := range c.Workloads {
			if len(w.Capacities) == 0 {
				return fmt.Errorf("%s: no capacities", w.Name)
			}
			for _, n := range w.Capacities {
				if n < 1 {
					return fmt.Errorf("%s: capacity %d must be at least 1", w.Name, n)
				}
			}
			if err := c.validateSource(w); err != nil {
				return err
			}
		}
	}
	if c.runs(SectionThroughput) {
		t := c.Throughput
		switch {
		case t.Keys < 1:
			return fmt.Errorf("throughput: keys %d must be at least 1", t.Keys)
		case t.ValueBytes < 0:
			return fmt.Errorf("throughput: value size %d is negative", t.ValueBytes)
		case len(t.Threads) == 0:
			return errors.New("throughput: no goroutine counts (THREADS)")
		case t.Duration <= 0:
			return fmt.Errorf("throughput: duration %v must be positive", t.Duration)
		case t.ZipfS <= 1 || t.ZipfV < 1:
			return fmt.Errorf("throughput: zipf needs s > 1 and v >= 1, got s=%g v=%g", t.ZipfS, t.ZipfV)
		case t.StreamLen < 1 || t.StreamLen&(t.StreamLen-1) != 0:
			return fmt.Errorf("throughput: stream length %d must be a power of two", t.StreamLen)
		}
		for _, n := range t.Threads {
			if n < 1 {
				return fmt.Errorf("throughput: goroutine count %d must be at least 1", n)
			}
		}
	}
	if c.runs(SectionMemory) {
		if c.Memory.Entries < 1 || c.Memory.ValueBytes < 0 {
			return fmt.Errorf("memory: need entries >= 1 and value size >= 0, got %d and %d", c.Memory.Entries, c.Memory.ValueBytes)
		}
	}
	if c.runs(SectionSSD) {
		s := c.SSD
		switch {
		case len(s.Workloads) == 0:
			return errors.New("ssd: no workloads")
		case s.DRAMPercent <= 0 || s.DRAMPercent >= 100:
			return fmt.Errorf("ssd: DRAM share %g%% must be above 0 and below 100", s.DRAMPercent)
		case s.ValueBytes < 0:
			return fmt.Errorf("ssd: value size %d is negative", s.ValueBytes)
		case s.Shards < 1:
			return fmt.Errorf("ssd: shards %d must be at least 1", s.Shards)
		case s.Repeats < 1:
			return fmt.Errorf("ssd: repeats %d must be at least 1", s.Repeats)
		}
		for _, w := range s.Workloads {
			if err := c.validateSource(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateSource checks that w's trace can be read or generated.
func (c *Config) validateSource(w Workload) error {
	switch {
	case w.MaxRequests < 0:
		return fmt.Errorf("%s: max requests %d is negative", w.Name, w.MaxRequests)
	case w.File == "" && w.Zipf == nil:
		return fmt.Errorf("%s: neither a file nor a generator", w.Name)
	case w.Zipf != nil:
		return w.Zipf.validate()
	}
	if fi, err := os.Stat(c.path(w)); err != nil {
		return fmt.Errorf("%s: %w", w.Name, err)
	} else if fi.IsDir() {
		return fmt.Errorf("%s: %s is a directory", w.Name, c.path(w))
	}
	return nil
}
