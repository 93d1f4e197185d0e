package raftbench

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// System names, in the order they alternate.
const (
	SystemOurs = "ours"
	SystemEtcd = "etcd"
	// SystemOursAsync is ours with Options.AsyncStorageWrites. It runs only
	// when asked for (Systems); ratios are always ours against etcd.
	SystemOursAsync = "ours-async"
)

// AllSystems lists every system, in run order.
var AllSystems = []string{SystemOurs, SystemOursAsync, SystemOursProcs, SystemOursProcsHTTP, SystemEtcd, SystemEtcdProcs}

// defaultSystems are the systems of a run unless Systems says otherwise.
var defaultSystems = []string{SystemOurs, SystemEtcd}

// Config is one `bench raft` run. DefaultConfig fills every field.
type Config struct {
	// Duration each measured run lasts (after Warmup).
	Duration time.Duration
	// Warmup runs the same load, unmeasured, on the same cluster first.
	Warmup time.Duration
	// Repeats is how many times each cell runs every system, alternating.
	Repeats int
	// Dir is the base for the fresh per-run temporary directories.
	Dir string
	// Quick marks a reduced run (BENCH_QUICK=1); recorded in the report.
	Quick bool

	Payloads    []int    // value sizes in bytes
	Concurrency []int    // concurrent clients
	Systems     []string // subset of AllSystems; ratios need both
	// Transport carries our nodes' messages: a key of transports.
	Transport string
	// CPUProfile, when set, is where a CPU profile of the whole run is
	// written (go tool pprof).
	CPUProfile string
	// Out is the JSON report path; empty means
	// <repo root>/bench-results/raft.json.
	Out string
}

// DefaultConfig returns the full matrix, or with quick a short run.
func DefaultConfig(quick bool) Config {
	c := Config{
		Duration:    3 * time.Second,
		Warmup:      500 * time.Millisecond,
		Repeats:     3,
		Dir:         os.TempDir(),
		Payloads:    []int{16, 256},
		Concurrency: []int{1, 64, 256},
		Systems:     slices.Clone(defaultSystems),
		Transport:   "mem",
	}
	if quick {
		c.Quick = true
		c.Duration = 700 * time.Millisecond
		c.Warmup = 200 * time.Millisecond
		c.Repeats = 2
		c.Payloads = []int{256}
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
	case len(c.Payloads) == 0 || len(c.Concurrency) == 0 || len(c.Systems) == 0:
		return errors.New("payloads, concurrency and systems must not be empty")
	}
	if _, ok := transports[c.Transport]; !ok {
		return fmt.Errorf("unknown transport %q", c.Transport)
	}
	for _, p := range c.Payloads {
		if p < 0 || p > 1<<20 {
			return fmt.Errorf("payload %d out of range [0, 1 MiB]", p)
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
