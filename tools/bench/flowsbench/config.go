package flowsbench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// System names, in the default alternation order.
const (
	SystemOurs     = "ours"
	SystemPostgres = "postgres"
	SystemRiver    = "river"
)

// DefaultSystems is the default --systems.
var DefaultSystems = []string{SystemOurs, SystemPostgres, SystemRiver, SystemCeiling}

// Config is one `bench flows` run. DefaultConfig fills every field.
type Config struct {
	// Flows is how many flows every run creates, claims and completes
	// (default 100,000; quick 5,000).
	Flows int
	// Producers create the flows, CreateBatch per call (defaults 2 and
	// 100).
	Producers, CreateBatch int
	// Workers claim up to ClaimLimit due flows each, then complete them
	// in one batch (defaults 4 and 100). A consumer system runs its own
	// pool instead.
	Workers, ClaimLimit int
	// Lease is how long a claim holds its flows before another worker
	// may take them (default 30s).
	Lease time.Duration
	// PayloadBytes is the size of every flow's payload, random bytes
	// (default 64).
	PayloadBytes int
	// Repeats is how many times every system runs, alternating (default
	// 3; quick 1).
	Repeats int
	// Systems are the systems to run, in alternation order; a name not
	// registered is skipped (default ours,postgres,river,ceiling).
	Systems []string
	// PGBin is the directory of PostgreSQL's initdb and postgres; empty
	// means the newest /usr/lib/postgresql/*/bin, else $PATH.
	PGBin string
	// RiverMaxWorkers is River's MaxWorkers for its one queue (default
	// 1000).
	RiverMaxWorkers int
	// Dir is the base for the fresh per-run directories (default
	// $TMPDIR or /tmp).
	Dir string
	// Out is the JSON report path; empty means
	// <repo root>/bench-results/flows.json.
	Out string
	// OursCPUProfile, when set, is where a CPU profile of our server is
	// written: the first seconds of its first run, read from its
	// /debug/pprof/profile.
	OursCPUProfile string
	// Seed seeds the payload bytes (default 1).
	Seed uint64
	// Quick marks a reduced run (BENCH_QUICK=1); recorded in the report.
	Quick bool
}

// DefaultConfig returns the full run, or with quick a short one.
func DefaultConfig(quick bool) Config {
	c := Config{
		Flows:     100_000,
		Producers: 2, CreateBatch: 100,
		Workers: 4, ClaimLimit: 100,
		Lease:        30 * time.Second,
		PayloadBytes: 64,
		Repeats:      3,
		Systems:      append([]string(nil), DefaultSystems...),
		// River's own benchmark found about a thousand workers best:
		// fewer leave its fetches short, many more contend.
		RiverMaxWorkers: 1000,
		Dir:             os.TempDir(),
		Seed:            1,
	}
	if quick {
		c.Quick, c.Flows, c.Repeats = true, 5000, 1
	}
	return c
}

// maxCreateBatch bounds a create batch: a multi-row INSERT binds two
// parameters a row, and PostgreSQL takes at most 65,535.
const maxCreateBatch = 10_000

// Validate reports the first setting that cannot run.
func (c *Config) Validate() error {
	switch {
	case c.Flows < 1:
		return errors.New("flows must be at least 1")
	case c.Producers < 1 || c.Workers < 1:
		return errors.New("producers and workers must be at least 1")
	case c.CreateBatch < 1 || c.CreateBatch > maxCreateBatch:
		return fmt.Errorf("create batch %d out of range [1, %d]", c.CreateBatch, maxCreateBatch)
	case c.ClaimLimit < 1 || c.ClaimLimit > maxCreateBatch:
		return fmt.Errorf("claim limit %d out of range [1, %d]", c.ClaimLimit, maxCreateBatch)
	case c.Lease < time.Millisecond:
		return fmt.Errorf("lease %s: at least 1ms", c.Lease)
	case c.PayloadBytes < 0 || c.PayloadBytes > 1<<20:
		return fmt.Errorf("payload bytes %d out of range [0, 1 MiB]", c.PayloadBytes)
	case c.Repeats < 1:
		return errors.New("repeats must be at least 1")
	case len(c.Systems) == 0:
		return errors.New("no system selected")
	case c.RiverMaxWorkers < 1 || c.RiverMaxWorkers > 10_000:
		return fmt.Errorf("river max workers %d out of range [1, 10000] (River's own limit)", c.RiverMaxWorkers)
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("bench dir %q is not a directory", c.Dir)
	}
	return nil
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "short run: 5,000 flows, 1 repeat", nil),
	benchkit.IntOption("flows", "BENCH_FLOWS", "flows each run creates, claims and completes (default 100000; quick 5000)", func(c *Config) *int { return &c.Flows }),
	benchkit.IntOption("producers", "BENCH_PRODUCERS", "goroutines creating flows, each with its own connection (default 2)", func(c *Config) *int { return &c.Producers }),
	benchkit.IntOption("create-batch", "BENCH_CREATE_BATCH", "flows per create call: one multi-row INSERT, one InsertMany (default 100)", func(c *Config) *int { return &c.CreateBatch }),
	benchkit.IntOption("workers", "BENCH_WORKERS", "goroutines claiming and completing flows, each with its own connection; River runs its own pool instead (default 4)", func(c *Config) *int { return &c.Workers }),
	benchkit.IntOption("claim-limit", "BENCH_CLAIM_LIMIT", "most due flows one claim takes; the worker then completes them in one call (default 100)", func(c *Config) *int { return &c.ClaimLimit }),
	opt("lease", "BENCH_LEASE", "duration", "how long a claim holds its flows (default 30s)", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		c.Lease = d
		return err
	}),
	benchkit.IntOption("payload-bytes", "BENCH_PAYLOAD_BYTES", "random bytes of every flow's payload (default 64)", func(c *Config) *int { return &c.PayloadBytes }),
	benchkit.IntOption("repeats", "BENCH_REPEATS", "runs of every system, alternating, each on a fresh database or data directory (default 3; quick 1)", func(c *Config) *int { return &c.Repeats }),
	opt("systems", "BENCH_SYSTEMS", "list", "systems to run, in alternation order: ours, postgres, river, ceiling (a bare map and an fdatasynced log behind the same verbs: what the client, protocol and disk allow); one not registered in this build is skipped with a log line (default ours,postgres,river,ceiling; the ratios need ours)", func(c *Config, v string) error {
		c.Systems = benchkit.SplitList(v)
		return nil
	}),
	opt("pg-bin", "BENCH_PG_BIN", "path", "directory holding PostgreSQL's initdb and postgres (default the newest /usr/lib/postgresql/*/bin, else $PATH)", func(c *Config, v string) error {
		c.PGBin = v
		return nil
	}),
	benchkit.IntOption("river-max-workers", "BENCH_RIVER_MAX_WORKERS", "River's MaxWorkers, the jobs its client runs at once (default 1000, as River's own benchmark found best)", func(c *Config) *int { return &c.RiverMaxWorkers }),
	opt("dir", "BENCH_DIR", "path", "base directory for the fresh per-run databases; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/flows.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
	opt("ours-cpuprofile", "BENCH_OURS_CPUPROFILE", "path", "write a CPU profile of our server's first run (its first seconds, up to 10) to path, for go tool pprof", func(c *Config, v string) error {
		c.OursCPUProfile = v
		return nil
	}),
	opt("seed", "BENCH_SEED", "n", "seed of the random payload bytes (default 1)", func(c *Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		c.Seed = n
		return err
	}),
}

// PrintUsage writes the flags of `bench flows`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench flows" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Needs PostgreSQL's server binaries (Debian: the postgresql package). Run as
root, the clusters run as the postgres OS user, which must be able to reach
--dir.

Examples:
  cd tools && go run ./bench flows
  BENCH_QUICK=1 go run ./bench flows --systems postgres,river
  go run ./bench flows --flows 20000 --workers 8 --claim-limit 50 --repeats 5
`)
}

// Command runs `bench flows` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "flows", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
