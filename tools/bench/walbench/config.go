package walbench

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// System names, in the order they alternate.
const (
	SystemOurs  = "ours"
	SystemEtcd  = "etcd"
	SystemBbolt = "bbolt"
)

// AllSystems lists every system, in run order.
var AllSystems = []string{SystemOurs, SystemEtcd, SystemBbolt}

// Config is one `bench wal` run. DefaultConfig fills every field; the
// command line overrides single fields.
type Config struct {
	// Duration each measured run lasts (after Warmup).
	Duration time.Duration
	// Warmup runs the same load, unmeasured, in the same fresh log first.
	Warmup time.Duration
	// Repeats is how many times each cell runs every system, alternating.
	Repeats int
	// Dir is the base for the fresh per-run temporary directories.
	Dir string
	// Quick marks a reduced run (BENCH_QUICK=1); recorded in the report.
	Quick bool

	Payloads    []int      // payload sizes in bytes
	Concurrency []int      // appending goroutines
	Syncs       []SyncMode // durability policies
	Systems     []string   // subset of AllSystems; ratios need "ours"
	// SyncInterval is the background fdatasync period for SyncInterval,
	// the same for every system.
	SyncInterval time.Duration

	// BboltDelay fixes bbolt's MaxBatchDelay; zero calibrates it (see
	// calibrateBbolt) from BboltCandidates.
	BboltDelay      time.Duration
	BboltCandidates []time.Duration

	// EnvelopeRecords records of each EnvelopeSizes payload are written to
	// fit bytes/record = fixed + slope·payload.
	EnvelopeRecords int
	EnvelopeSizes   []int

	// Seed seeds the incompressible payload bytes (math/rand/v2 PCG).
	Seed uint64
	// Out is the JSON report path; empty means
	// <repo root>/bench-results/wal.json.
	Out string
}

// DefaultConfig returns the full matrix, or with quick the reduced one that
// keeps every system side by side and finishes in well under a minute.
func DefaultConfig(quick bool) Config {
	c := Config{
		Duration:        time.Second,
		Warmup:          150 * time.Millisecond,
		Repeats:         3,
		Dir:             os.TempDir(),
		Payloads:        []int{0, 64, 256, 4096},
		Concurrency:     []int{1, 16, 64},
		Syncs:           []SyncMode{SyncAlways, SyncInterval},
		Systems:         slices.Clone(AllSystems),
		SyncInterval:    10 * time.Millisecond,
		BboltCandidates: []time.Duration{10 * time.Millisecond, time.Millisecond, 100 * time.Microsecond},
		EnvelopeRecords: 2000,
		EnvelopeSizes:   []int{0, 64, 256, 1024, 4096},
		Seed:            1,
	}
	if quick {
		c.Quick = true
		c.Duration = 150 * time.Millisecond
		c.Warmup = 50 * time.Millisecond
		c.Repeats = 2
		c.Payloads = []int{0, 256, 4096}
		c.Concurrency = []int{1, 64}
	}
	return c
}

// Validate reports the first setting that cannot run.
func (c *Config) Validate() error {
	switch {
	case c.Duration <= 0:
		return errors.New("duration must be positive")
	case c.Warmup < 0:
		return errors.New("warmup must not be negative")
	case c.Repeats < 1:
		return errors.New("repeats must be at least 1")
	case len(c.Payloads) == 0 || len(c.Concurrency) == 0 || len(c.Syncs) == 0 || len(c.Systems) == 0:
		return errors.New("payloads, concurrency, sync and systems must not be empty")
	case c.SyncInterval <= 0:
		return errors.New("sync interval must be positive")
	case c.EnvelopeRecords < 1:
		return errors.New("envelope records must be at least 1")
	}
	for _, p := range c.Payloads {
		if p < 0 || p > maxPayload {
			return fmt.Errorf("payload %d out of range [0, %d]", p, maxPayload)
		}
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			return fmt.Errorf("concurrency %d must be at least 1", n)
		}
	}
	for _, s := range c.Systems {
		if !slices.Contains(AllSystems, s) {
			return fmt.Errorf("unknown system %q (want %v)", s, AllSystems)
		}
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("bench dir %q is not a directory", c.Dir)
	}
	return nil
}

// maxPayload bounds payload sizes (the random source is sized from it).
const maxPayload = 1 << 20
