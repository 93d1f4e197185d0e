package enginebench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Config is one `bench engine` run.
type Config struct {
	// IndexKeys are the key counts of the index-size section.
	IndexKeys []int
	// ValueSizes are the value sizes of the write-amplification section,
	// and WAWrites the SETs per size.
	ValueSizes []int
	WAWrites   int
	// Writers is the concurrency of the write sections.
	Writers int
	// PutDuration is how long each throughput run lasts, PutValue its
	// value size, PutKeys its key space.
	PutDuration time.Duration
	PutValue    int
	PutKeys     int
	// Repeats is how many runs of each system the throughput section
	// alternates.
	Repeats int
	// MemKeys and MemValue are the memory section's key count and value
	// size.
	MemKeys, MemValue int
	// Dir is the base of the per-run directories.
	Dir string
	// Quick marks a reduced run.
	Quick bool
	// Out is the JSON report path (default bench-results/engine.json).
	Out string
}

// DefaultConfig returns the full run, or with quick the reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{
		IndexKeys:   []int{2000, 8000, 20000, 1_000_000},
		ValueSizes:  []int{64, 256, 1024, 4096},
		WAWrites:    20000,
		Writers:     64,
		PutDuration: 3 * time.Second,
		PutValue:    256,
		PutKeys:     100_000,
		Repeats:     3,
		MemKeys:     1_000_000,
		MemValue:    64,
		Dir:         os.TempDir(),
	}
	if quick {
		c.Quick = true
		c.IndexKeys = []int{2000, 8000, 20000, 100_000}
		c.WAWrites = 4000
		c.PutDuration = time.Second
		c.Repeats = 2
		c.MemKeys = 100_000
	}
	return c
}

// Validate reports a configuration that cannot run.
func (c Config) Validate() error {
	switch {
	case len(c.IndexKeys) == 0 || len(c.ValueSizes) == 0:
		return errors.New("no key counts or value sizes")
	case c.WAWrites < 1 || c.Writers < 1 || c.Repeats < 1 || c.MemKeys < 1 || c.PutKeys < 1:
		return errors.New("counts must be positive")
	case c.PutDuration <= 0 || c.PutValue < 1 || c.MemValue < 1:
		return errors.New("duration and value sizes must be positive")
	}
	return nil
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

func intOpt(set func(c *Config, n int)) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		set(c, n)
		return err
	}
}

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 100k keys at most, 4,000 SETs per size, 1 s throughput runs, 2 repeats", nil),
	opt("index-keys", "BENCH_INDEX_KEYS", "list", "key counts of the index section (default 2000,8000,20000,1000000)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.IndexKeys = xs
		return err
	}),
	opt("sizes", "BENCH_SIZES", "list", "value sizes of the write-amplification section (default 64,256,1024,4096)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.ValueSizes = xs
		return err
	}),
	opt("wa-writes", "BENCH_WA_WRITES", "n", "durable SETs per value size (default 20000)", intOpt(func(c *Config, n int) { c.WAWrites = n })),
	opt("writers", "BENCH_WRITERS", "n", "concurrent writers (default 64)", intOpt(func(c *Config, n int) { c.Writers = n })),
	opt("duration", "BENCH_DURATION", "duration", "length of each throughput run (default 3s)", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		c.PutDuration = d
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "throughput runs per system, alternating ours and etcd (default 3)", intOpt(func(c *Config, n int) { c.Repeats = n })),
	opt("mem-keys", "BENCH_MEM_KEYS", "n", "keys of the memory section (default 1000000)", intOpt(func(c *Config, n int) { c.MemKeys = n })),
	opt("dir", "BENCH_DIR", "path", "base directory for the runs' data; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/engine.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench engine`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench engine" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
The memory section starts redis-server (it must be on PATH: make deps).

Examples:
  cd tools && go run ./bench engine
  BENCH_QUICK=1 go run ./bench engine
`)
}

// Command runs `bench engine` with its arguments (after the name).
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "engine", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
