package clusterbench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// System names, in the order they alternate.
const (
	SystemOurs = "ours"
	SystemEtcd = "etcd"
	// SystemShared is ours in shared-storage mode: the three members
	// keep every shard's log in one shared directory.
	SystemShared = "shared"
)

// AllSystems lists every system, in run order.
var AllSystems = []string{SystemOurs, SystemEtcd, SystemShared}

// Config is one `bench cluster` run. DefaultConfig fills every field.
type Config struct {
	// Duration each measured load lasts (writes per concurrency, and each
	// read loop), after Warmup.
	Duration time.Duration
	// Warmup runs the same load, unmeasured, first.
	Warmup time.Duration
	// Repeats is how many times every system runs, alternating.
	Repeats int
	// Concurrency lists the concurrent writers of the write cells.
	Concurrency []int
	// SharedWriters lists the concurrent writers of the shared-storage
	// cells.
	SharedWriters []int
	// Shards is our default table's shard count, each a raft group over
	// the three members. Default: the server's own default on this
	// machine (temporalstore.SuggestedShards of its processors: 1 below 4
	// CPUs), as a user running it with no --shards gets; etcd is one raft
	// group too.
	Shards int
	// ValueBytes is the size of every value written.
	ValueBytes int
	// Keyspace is how many distinct keys the writers pick from.
	Keyspace int
	// ReadKeys are written before the read loops, which cycle over them.
	ReadKeys int
	// Systems is a subset of AllSystems; ratios need both.
	Systems []string
	// EtcdFailover also times etcd's failover (its leader killed, until a
	// Put through a client of all three members succeeds).
	EtcdFailover bool
	// Dir is the base for the fresh per-run directories.
	Dir string
	// Quick marks a reduced run (BENCH_QUICK=1); recorded in the report.
	Quick bool
	// Out is the JSON report path; empty means
	// <repo root>/bench-results/cluster.json.
	Out string
}

// DefaultConfig returns the full run, or with quick a short one.
func DefaultConfig(quick bool) Config {
	c := Config{
		Duration:      3 * time.Second,
		Warmup:        500 * time.Millisecond,
		Repeats:       3,
		Concurrency:   []int{1, 16},
		SharedWriters: []int{2, 4, 8},
		Shards:        temporalstore.SuggestedShards(runtime.GOMAXPROCS(0)),
		ValueBytes:    256,
		Keyspace:      100_000,
		ReadKeys:      1000,
		Systems:       slices.Clone(AllSystems),
		EtcdFailover:  true,
		Dir:           os.TempDir(),
	}
	if quick {
		c.Quick = true
		c.Duration = 700 * time.Millisecond
		c.Warmup = 200 * time.Millisecond
		c.Repeats = 2
		c.ReadKeys = 300
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
	case len(c.Concurrency) == 0 || len(c.Systems) == 0 || len(c.SharedWriters) == 0:
		return errors.New("concurrency, shared writers and systems must not be empty")
	case c.Shards < 1:
		return errors.New("shards must be at least 1")
	case c.ValueBytes < 1 || c.ValueBytes > 1<<20:
		return fmt.Errorf("value size %d out of range [1, 1 MiB]", c.ValueBytes)
	case c.Keyspace < 1 || c.Keyspace > 1e12:
		return fmt.Errorf("keyspace %d out of range [1, 10^12]", c.Keyspace)
	case c.ReadKeys < 1 || c.ReadKeys > 1e11:
		return fmt.Errorf("read keys %d out of range [1, 10^11]", c.ReadKeys)
	}
	for _, n := range append(slices.Clone(c.Concurrency), c.SharedWriters...) {
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

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

func durationOption(flag, env, usage string, field func(*Config) *time.Duration) option {
	return opt(flag, env, "duration", usage, func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		*field(c) = d
		return err
	})
}

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "short run: 200ms warm-up + 700ms loads, 300 read keys, 2 repeats (under a minute)", nil),
	durationOption("duration", "BENCH_DURATION", "measured time of each load: each write cell and each read loop (default 3s; quick 700ms)", func(c *Config) *time.Duration { return &c.Duration }),
	durationOption("warmup", "BENCH_WARMUP", "unmeasured load before each, same cluster (default 500ms; quick 200ms)", func(c *Config) *time.Duration { return &c.Warmup }),
	benchkit.IntOption("repeats", "BENCH_REPEATS", "runs of every system, alternating ours, etcd, shared, each on fresh processes and directories (default 3; quick 2)", func(c *Config) *int { return &c.Repeats }),
	opt("concurrency", "BENCH_CONCURRENCY", "list", "concurrent writers of the write cells (default 1,16)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Concurrency = xs
		return err
	}),
	opt("shared-writers", "BENCH_SHARED_WRITERS", "list", "concurrent writers of the shared-storage cells (default 2,4,8)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.SharedWriters = xs
		return err
	}),
	benchkit.IntOption("shards", "BENCH_SHARDS", "our default table's shards, each a raft group over the three members (default: the server's own default here, 1 below 4 CPUs, 2 below 8, then 4)", func(c *Config) *int { return &c.Shards }),
	benchkit.IntOption("value-bytes", "BENCH_VALUE_BYTES", "bytes of every value written, random (default 256)", func(c *Config) *int { return &c.ValueBytes }),
	benchkit.IntOption("keyspace", "BENCH_KEYSPACE", "distinct 16-byte keys the writers pick from at random (default 100000)", func(c *Config) *int { return &c.Keyspace }),
	benchkit.IntOption("read-keys", "BENCH_READ_KEYS", "keys written before the read loops, which cycle over them (default 1000; quick 300)", func(c *Config) *int { return &c.ReadKeys }),
	opt("systems", "BENCH_SYSTEMS", "list", "systems to run, in alternation order: ours (three examples/server processes, Raft), etcd (three etcd member processes), shared (three examples/server processes on one shared directory) (default ours,etcd,shared; the etcd ratios need ours and etcd)", func(c *Config, v string) error {
		c.Systems = benchkit.SplitList(v)
		return nil
	}),
	opt("etcd-failover", "BENCH_ETCD_FAILOVER", "bool", "also time etcd's failover: its leader killed, until a Put through a client of all three members succeeds (default true)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.EtcdFailover = b
		return err
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for the fresh per-run directories and the server binary; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/cluster.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench cluster`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench cluster" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Needs the Go toolchain (it builds examples/server). The etcd members are
this binary started again (raftbench.MaybeRunEtcdMember).

Examples:
  cd tools && go run ./bench cluster
  BENCH_QUICK=1 go run ./bench cluster
  go run ./bench cluster --concurrency 16,64 --repeats 5 --etcd-failover=false
`)
}

// Command runs `bench cluster` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "cluster", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
