package raftbench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "short run: 256 B only, concurrency 1,64,256, 200ms warm-up + 700ms runs, 2 repeats (about a minute)", nil),
	opt("duration", "BENCH_DURATION", "duration", "measured time of each run (default 3s; quick 700ms)", func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		c.Duration = d
		return err
	}),
	opt("warmup", "BENCH_WARMUP", "duration", "unmeasured load before each run, same cluster (default 500ms; quick 200ms)", func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		c.Warmup = d
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "repeats of every system per cell, alternating ours, etcd (default 3; quick 2)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	opt("payloads", "BENCH_PAYLOADS", "list", "value sizes in bytes (default 16,256)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Payloads = xs
		return err
	}),
	opt("concurrency", "BENCH_CONCURRENCY", "list", "concurrent clients (default 1,64,256)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Concurrency = xs
		return err
	}),
	opt("systems", "BENCH_SYSTEMS", "list", "systems to run, in alternation order, of ours, ours-async (AsyncStorageWrites), ours-procs (three examples/raft-kv processes over TCP, written through their binary protocol, kvwire), ours-procs-http (the same, written through HTTP), etcd, etcd-procs (three etcd member processes) (default ours,etcd; ratios are ours/etcd; ours-procs adds procs_* ratios, against etcd-procs too when it runs)", func(c *Config, v string) error {
		c.Systems = benchkit.SplitList(v)
		return nil
	}),
	opt("transport", "BENCH_TRANSPORT", "name", "transport of our nodes: "+strings.Join(slices.Sorted(maps.Keys(transports)), ", ")+": mem copies messages in memory, tcp frames them over loopback sockets (default mem)", func(c *Config, v string) error {
		c.Transport = strings.TrimSpace(v)
		return nil
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for the fresh per-run directories; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("cpuprofile", "BENCH_CPUPROFILE", "path", "write a CPU profile of the whole run there (default none)", func(c *Config, v string) error {
		c.CPUProfile = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/raft.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench raft`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench raft" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench raft
  BENCH_QUICK=1 go run ./bench raft
  go run ./bench raft --payloads 256 --concurrency 256 --repeats 5
`)
}

// Command runs `bench raft` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "raft", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
