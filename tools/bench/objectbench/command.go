package objectbench

import (
	"fmt"
	"io"
	"strconv"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "reduced run: fewer objects per run (150 × 4 KiB, 15 × 1 MiB, 2 × 64 MiB), 3 repeats; under a minute", nil),
	opt("sizes", "BENCH_SIZES", "list", "object sizes in bytes (default 4096,1048576,67108864)", func(c *Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Sizes = xs
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "repeats of every system per size, alternating ours and disk (default 5; quick 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for the per-run directories; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("body", "BENCH_BODY", "kind", "how ours gets each PUT body: bytes (a *bytes.Reader, written in place) or stream (a plain io.Reader, read 1 MiB at a time like an S3 request body) (default bytes)", func(c *Config, v string) error {
		c.Body = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/object.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench object`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench object" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench object
  BENCH_QUICK=1 go run ./bench object
  go run ./bench object --sizes 65536,16777216 --dir /mnt/nvme/tmp
  go run ./bench object --sizes 67108864 --body stream
`)
}

// Command runs `bench object` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "object", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
