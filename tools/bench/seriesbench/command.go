package seriesbench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Config is a run's settings.
type Config struct {
	// Clients is the number of concurrent go-redis connections, each
	// sending one command at a time.
	Clients int
	// Duration is each measured run's length, after Warmup.
	Duration, Warmup time.Duration
	// Repeats is how many runs each system gets per case, alternating.
	Repeats int
	// Dir holds both servers' data.
	Dir string
	// Out is the JSON report's path.
	Out string
	// Cases are the client cases to run (window, counter, append); empty:
	// all. The rollup comparison always runs.
	Cases []string
	// Split binds the servers to the first half of the CPUs and this
	// process, the load generator, to the rest (benchkit.Split), where the
	// machine has two or more; otherwise all share every CPU.
	Split bool
	// Procs, when above 0, is the GOMAXPROCS our server process runs with;
	// 0 leaves it the Go default (one per CPU).
	Procs int
	// SyncInterval is our async table's fsync interval. Default:
	// benchkit.EverysecInterval, as the Redis it runs beside.
	SyncInterval time.Duration
}

// DefaultConfig is the configuration when nothing is set.
func DefaultConfig(quick bool) Config {
	c := Config{Clients: 32, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond, Repeats: 3, SyncInterval: benchkit.EverysecInterval}
	if quick {
		c.Duration, c.Warmup, c.Repeats = 700*time.Millisecond, 200*time.Millisecond, 2
	}
	return c
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	benchkit.SyncIntervalOption(func(c *Config) *time.Duration { return &c.SyncInterval }),
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 0.7 s runs, 2 repeats (about 30 s)", nil),
	opt("clients", "BENCH_CLIENTS", "n", "concurrent connections, one command in flight each (default 32)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Clients = n
		return err
	}),
	opt("duration", "BENCH_DURATION", "d", "measured time of each run (default 3s)", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		c.Duration = d
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "runs per system and case, alternating (default 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	opt("cases", "BENCH_CASES", "list", "client cases to run, of window, counter, append (default all; the rollup comparison always runs)", func(c *Config, v string) error {
		c.Cases = strings.Split(v, ",")
		for _, name := range c.Cases {
			if !slices.Contains(caseNames, name) {
				return fmt.Errorf("unknown case %q (want %s)", name, strings.Join(caseNames, ", "))
			}
		}
		return nil
	}),
	opt("split", "BENCH_SPLIT", "bool", "true: bind the servers to the first half of the CPUs and the load generator to the rest (needs two CPUs and taskset); default false: all share every CPU", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.Split = b
		return err
	}),
	opt("procs", "BENCH_PROCS", "n", "GOMAXPROCS of our server process (default: one per CPU); 1 confines it to one core's worth of threads, as Redis's main thread", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 0 {
			err = fmt.Errorf("procs %d: not negative", n)
		}
		c.Procs = n
		return err
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for both servers' data (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/series.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench series`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench series" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench series
  BENCH_QUICK=1 go run ./bench series
`)
}

// Command runs `bench series` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "series", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
