package objectbench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

type option struct {
	flag, env, arg, usage string
	apply                 func(c *Config, v string) error
}

var options = []option{
	{"quick", "BENCH_QUICK", "bool", "reduced run: fewer objects per run (150 × 4 KiB, 15 × 1 MiB, 2 × 64 MiB), 3 repeats; under a minute", nil},
	{"sizes", "BENCH_SIZES", "list", "object sizes in bytes (default 4096,1048576,67108864)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Sizes = xs
		return err
	}},
	{"repeats", "BENCH_REPEATS", "n", "repeats of every system per size, alternating ours and disk (default 5; quick 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}},
	{"dir", "BENCH_DIR", "path", "base directory for the per-run directories; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}},
	{"out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/object.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}},
}

// PrintUsage writes the flags of `bench object`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench object" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	for _, o := range options {
		fmt.Fprintf(w, "  --%s %s  [%s]\n      %s\n", o.flag, o.arg, o.env, o.usage)
	}
	fmt.Fprint(w, `
Examples:
  cd tools && GOWORK=off go run ./bench object
  BENCH_QUICK=1 GOWORK=off go run ./bench object
  GOWORK=off go run ./bench object --sizes 65536,16777216 --dir /mnt/nvme/tmp
`)
}

// Command runs `bench object` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench object", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	quick := benchkit.EnvBool(os.Getenv("BENCH_QUICK"))
	var sets []func(*Config) error
	for _, o := range options {
		if o.apply == nil {
			fs.BoolFunc(o.flag, o.usage, func(v string) error {
				b, err := strconv.ParseBool(v)
				quick = b
				return err
			})
			continue
		}
		fs.Func(o.flag, o.usage, func(v string) error {
			sets = append(sets, func(c *Config) error { return o.apply(c, v) })
			return nil
		})
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			PrintUsage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "bench object: %v (see bench --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench object: unexpected arguments %q (see bench --help)\n", fs.Args())
		return 2
	}
	cfg := DefaultConfig(quick)
	for _, o := range options {
		if v, ok := os.LookupEnv(o.env); ok && o.apply != nil && strings.TrimSpace(v) != "" {
			if err := o.apply(&cfg, v); err != nil {
				fmt.Fprintf(stderr, "bench object: %s=%q: %v\n", o.env, v, err)
				return 2
			}
		}
	}
	for _, set := range sets {
		if err := set(&cfg); err != nil {
			fmt.Fprintf(stderr, "bench object: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Run(ctx, cfg, stdout, benchkit.NewProgress(stderr)); err != nil {
		fmt.Fprintf(stderr, "bench object: %v\n", err)
		return 1
	}
	return 0
}
