package cachebench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// option is one setting of `bench cache`, settable by flag and env var.
type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "reduced run, every system side by side (under a minute): hit ratio on oltp at 1000, gli at 1000, zipf at 500 with 200k requests; throughput runs of 100ms; memory at 100k entries; SSD tier on the first 50k requests of oltp and zipf, and gli", nil),
	opt("sections", "SECTIONS", "list", "sections to run, in this order: hit (hit ratio on traces), throughput (Get and 75/25 Get/Set ns/op, ops/s, allocs/op), memory (heap bytes per entry), ssd (our Cache with DRAM at 10% of the footprint, without and with the SSD tier) (default all)", func(c *Config, v string) error {
		c.Sections = benchkit.SplitList(v)
		return nil
	}),
	opt("repeats", "BENCH_REPEATS", "n", "runs of every cell of the hit, throughput and memory sections by every system, alternating (default 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		c.Repeats = n
		return err
	}),
	opt("traces", "BENCH_TRACES", "dir", "directory of the bundled traces oltp.gz, gli.gz, loop.gz (default: ../shared/data/cache-traces beside the directory holding go.work)", func(c *Config, v string) error {
		c.TracesDir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/cache.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
	opt("systems", "BENCH_SYSTEMS", "list", "systems to run, in alternation order: ours,otter,ristretto,lru (default all; the points and ratios need ours; lru runs in the hit section only, and the ssd section needs ours)", func(c *Config, v string) error {
		c.Systems = benchkit.SplitList(v)
		return nil
	}),
	opt("trace", "TRACE", "path", "replay this trace file (gzip or plain) instead of the bundled ones, in the hit and ssd sections; needs CAPACITY (for the hit section)", func(c *Config, v string) error {
		c.UserTrace = v
		return nil
	}),
	opt("format", "FORMAT", "arc|lirs", "format of TRACE: arc (\"start count x x\" lines) or lirs (one key a line); default: guessed from the first line", func(c *Config, v string) error {
		f, err := ParseFormat(v)
		c.UserFormat = f
		return err
	}),
	opt("capacity", "CAPACITY", "list", "cache capacities in entries for TRACE, e.g. 1000 or 500,5000", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.UserCapacities = xs
		return err
	}),
	opt("zipf-requests", "BENCH_ZIPF_REQUESTS", "n", "length of the Zipf trace (default 1000000; quick 200000)", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return setZipf(c, func(z *ZipfParams) { z.Requests = n }, err)
	}),
	opt("seed", "BENCH_SEED", "n", "seed of the Zipf trace and of the throughput key streams (default 1)", func(c *Config, v string) error {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		c.Throughput.Seed = n
		return setZipf(c, func(z *ZipfParams) { z.Seed = n }, err)
	}),
	opt("threads", "THREADS", "list", "goroutine counts of the throughput section (default 2,8); the headline get_vs_*_ratio is at 8, or at the largest count when 8 is not run", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Throughput.Threads = xs
		return err
	}),
	opt("duration", "BENCH_DURATION", "duration", "measured time of each throughput run, after a warm-up of a quarter of it (default 2s; quick 100ms)", func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		c.Throughput.Duration = d
		return err
	}),
	opt("keys", "BENCH_KEYS", "n", "keyspace of the throughput section, all of it resident (default 65536)", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		c.Throughput.Keys = n
		return err
	}),
	opt("value-size", "BENCH_VALUE_SIZE", "bytes", "value length in the throughput, memory and ssd sections (default 64)", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		c.Throughput.ValueBytes, c.Memory.ValueBytes, c.SSD.ValueBytes = n, n, n
		return err
	}),
	opt("memory-entries", "BENCH_MEMORY_ENTRIES", "n", "entries each system holds when its heap is measured (default 1000000; quick 100000)", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		c.Memory.Entries = n
		return err
	}),
	opt("ssd-repeats", "BENCH_SSD_REPEATS", "n", "replays of each trace in each mode in the ssd section (default 1: a one-goroutine replay of our Cache is nearly deterministic, and every DRAM+SSD miss is an SSD write)", func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		c.SSD.Repeats = n
		return err
	}),
	opt("dir", "BENCH_DIR", "path", "base directory of the SSD tier's temporary directories; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.SSD.Dir = v
		return nil
	}),
}

func setZipf(c *Config, set func(*ZipfParams), err error) error {
	if err != nil {
		return err
	}
	for _, ws := range [][]Workload{c.Workloads, c.SSD.Workloads} {
		for i := range ws {
			if z := ws[i].Zipf; z != nil {
				cp := *z
				set(&cp)
				ws[i].Zipf = &cp
			}
		}
	}
	return nil
}

// PrintUsage describes `bench cache` and its flags for `bench --help`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench cache" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench cache
  BENCH_QUICK=1 go run ./bench cache
  SECTIONS=throughput,memory THREADS=1,2,8 go run ./bench cache
  TRACE=/data/my.trace.gz FORMAT=lirs CAPACITY=1000,10000 go run ./bench cache
`)
}

// Command runs `bench cache` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "cache", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
