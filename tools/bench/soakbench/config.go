package soakbench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Config is one soak run's settings. DefaultConfig gives every default.
type Config struct {
	// Duration is the whole run, warm-up included. Default 30 minutes;
	// 10 with SOAK_QUICK=1.
	Duration time.Duration
	// Rate is the offered load in requests per second over all classes
	// (an HTTP batch is one request), shared as classShares says.
	// Default DefaultRate.
	Rate float64
	// Workers is the goroutines of each class, each pacing an equal part
	// of the class's rate. Default 8.
	Workers int
	// SampleInterval is the time between two samples. 0 (the default)
	// picks 10 s, or a twentieth of a run shorter than 200 s (at least
	// 500 ms).
	SampleInterval time.Duration
	// RSSGrowth is how many times the RSS at the end of warm-up a later
	// sample may reach. Default 1.2.
	RSSGrowth float64
	// P99Growth is how many times the baseline window's p99 a later
	// window's may reach. Default 1.5.
	P99Growth float64
	// P99Floor is the least baseline p99 the growth is measured from.
	// Default 1 ms.
	P99Floor time.Duration
	// Async makes the server's default table commit asynchronously.
	// Default false: durable commits, the server's default.
	Async bool
	// Dir is the base of the run's temporary directory (server binary and
	// data). Default os.TempDir().
	Dir string
	// Out is the JSON report's path; the PNG goes beside it. Default
	// <repo root>/bench-results/soak-<UTC time>.json.
	Out string
	// Seed seeds the keys and operations each worker picks. Default 1.
	Seed uint64
}

// DefaultRate is the default offered load, in requests per second: on a
// two-core machine, server and load generator together keep 30-40 % of its
// CPU busy (about 0.23 ms of CPU a request, measured).
const DefaultRate = 3000

// DefaultConfig returns the full run's settings, or with quick the
// 10-minute run's.
func DefaultConfig(quick bool) Config {
	c := Config{
		Duration:  30 * time.Minute,
		Rate:      DefaultRate,
		Workers:   8,
		RSSGrowth: 1.2,
		P99Growth: 1.5,
		P99Floor:  time.Millisecond,
		Dir:       os.TempDir(),
		Seed:      1,
	}
	if quick {
		c.Duration = 10 * time.Minute
	}
	return c
}

// Validate reports the first setting a run cannot start with.
func (c *Config) Validate() error {
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("%w: duration %s must be above 0", ErrConfig, c.Duration)
	case c.Rate <= 0:
		return fmt.Errorf("%w: rate %g must be above 0", ErrConfig, c.Rate)
	case c.Workers < 1:
		return fmt.Errorf("%w: workers %d must be at least 1", ErrConfig, c.Workers)
	case c.SampleInterval < 0:
		return fmt.Errorf("%w: sample interval %s must not be negative", ErrConfig, c.SampleInterval)
	case c.RSSGrowth < 1 || c.P99Growth < 1:
		return fmt.Errorf("%w: growth bounds (rss %g, p99 %g) must be at least 1", ErrConfig, c.RSSGrowth, c.P99Growth)
	case c.P99Floor < 0:
		return fmt.Errorf("%w: p99 floor %s must not be negative", ErrConfig, c.P99Floor)
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: dir %q is not a directory", ErrConfig, c.Dir)
	}
	return nil
}

// sampleInterval is the interval the run samples at.
func (c *Config) sampleInterval() time.Duration {
	if c.SampleInterval > 0 {
		return c.SampleInterval
	}
	return min(10*time.Second, max(c.Duration/20, 500*time.Millisecond))
}

// ErrConfig is returned by Validate (and Run) for a setting that cannot
// run.
var ErrConfig = errors.New("soakbench: invalid configuration")

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "SOAK_QUICK", "bool", "10-minute run instead of 30 (BENCH_QUICK=1 too)", nil),
	opt("duration", "SOAK_DURATION", "d", "the whole run, warm-up included (default 30m; quick 10m); seconds are enough to try it", func(c *Config, v string) error {
		return setDuration(&c.Duration, v)
	}),
	opt("rate", "SOAK_RATE", "n", "offered requests per second over all classes, an HTTP batch one request (default 3000: 30-40 % of a two-core machine busy)", func(c *Config, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		c.Rate = x
		return err
	}),
	opt("workers", "SOAK_WORKERS", "n", "goroutines per class, each pacing its share of the class's rate (default 8)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Workers = n
		return err
	}),
	opt("sample", "SOAK_SAMPLE", "d", "time between samples (default 10s, or a twentieth of a run under 200s)", func(c *Config, v string) error {
		return setDuration(&c.SampleInterval, v)
	}),
	opt("rss-growth", "SOAK_RSS_GROWTH", "x", "bound: RSS after warm-up at most this times the RSS at its end (default 1.2)", func(c *Config, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		c.RSSGrowth = x
		return err
	}),
	opt("p99-growth", "SOAK_P99_GROWTH", "x", "bound: each class's p99 in every later window at most this times the first window's (default 1.5)", func(c *Config, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		c.P99Growth = x
		return err
	}),
	opt("p99-floor", "SOAK_P99_FLOOR", "d", "a baseline p99 under this counts as this, so sub-millisecond jitter is no regression (default 1ms; 0 turns it off)", func(c *Config, v string) error {
		return setDuration(&c.P99Floor, v)
	}),
	opt("async", "SOAK_ASYNC", "bool", "true: the server's default table commits asynchronously (fsync every 10ms); default false: durable, as the server ships", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.Async = b
		return err
	}),
	opt("dir", "SOAK_DIR", "path", "base directory of the server's binary and data (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "SOAK_OUT", "path", "JSON report path, the PNG beside it (default <repo root>/bench-results/soak-<UTC time>.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
	opt("seed", "SOAK_SEED", "n", "seed of the keys and operations the workers pick (default 1)", func(c *Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		c.Seed = n
		return err
	}),
}

func setDuration(d *time.Duration, v string) error {
	x, err := time.ParseDuration(v)
	*d = x
	return err
}

// PrintUsage writes the flags of `bench soak`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench soak" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench soak
  SOAK_QUICK=1 go run ./bench soak
  go run ./bench soak --duration 1m --rate 300
`)
}

// Command runs `bench soak` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed or broke a bound, 2 for
// a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "soak", Options: options, Usage: PrintUsage, Run: Run,
		Defaults: func(quick bool) Config {
			return DefaultConfig(quick || benchkit.EnvBool(os.Getenv("SOAK_QUICK")))
		},
	}, args, stdout, stderr)
}
