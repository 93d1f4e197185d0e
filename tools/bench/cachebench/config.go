package cachebench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// AllSystems lists every system, in run order.
var AllSystems = []string{SystemOurs, SystemOtter, SystemRistretto, SystemLRU}

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
	Capacities []int `json:"capacities"`
}

// Config is one `bench cache` run. DefaultConfig fills every field; the
// command line overrides single fields.
type Config struct {
	// Workloads are replayed in order, each at each of its capacities.
	Workloads []Workload
	// TracesDir holds the bundled traces; empty means
	// <directory holding go.work>/../shared/data/cache-traces.
	TracesDir string
	// Repeats is how many times each system replays each trace and
	// capacity, alternating with the others.
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
// keeps every system side by side and finishes in well under a minute.
func DefaultConfig(quick bool) Config {
	c := Config{
		Repeats: 3,
		Systems: slices.Clone(AllSystems),
		Quick:   quick,
	}
	zipf := DefaultZipf
	if quick {
		zipf.Requests = 200_000
		c.Workloads = []Workload{
			{Name: "oltp", File: "oltp.gz", Format: FormatARC, Capacities: []int{1000}},
			{Name: "gli", File: "gli.gz", Format: FormatLIRS, Capacities: []int{1000}},
			{Name: "zipf", Zipf: &zipf, Capacities: []int{500}},
		}
		return c
	}
	c.Workloads = []Workload{
		{Name: "oltp", File: "oltp.gz", Format: FormatARC, Capacities: []int{250, 1000, 2000}},
		{Name: "gli", File: "gli.gz", Format: FormatLIRS, Capacities: []int{500, 1000}},
		{Name: "loop", File: "loop.gz", Format: FormatLIRS, Capacities: []int{500, 1000}},
		{Name: "zipf", Zipf: &zipf, Capacities: []int{500, 5000}},
	}
	return c
}

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
		c.Workloads = []Workload{{Name: traceName(abs), File: abs, Format: c.UserFormat, Capacities: slices.Clone(c.UserCapacities)}}
		return nil
	}
	if len(c.UserCapacities) > 0 || c.UserFormat != "" {
		return errors.New("CAPACITY and FORMAT apply to a user trace: set TRACE too")
	}
	if c.TracesDir == "" {
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
	case len(c.Workloads) == 0:
		return errors.New("no workloads")
	case len(c.Systems) == 0:
		return errors.New("systems must not be empty")
	}
	for _, s := range c.Systems {
		if !slices.Contains(AllSystems, s) {
			return fmt.Errorf("unknown system %q (want %v)", s, AllSystems)
		}
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
		switch {
		case w.File == "" && w.Zipf == nil:
			return fmt.Errorf("%s: neither a file nor a generator", w.Name)
		case w.Zipf != nil:
			if err := w.Zipf.validate(); err != nil {
				return err
			}
		default:
			if fi, err := os.Stat(c.path(w)); err != nil {
				return fmt.Errorf("%s: %w", w.Name, err)
			} else if fi.IsDir() {
				return fmt.Errorf("%s: %s is a directory", w.Name, c.path(w))
			}
		}
	}
	return nil
}
