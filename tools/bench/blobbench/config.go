package blobbench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Redis fsync policies the RESP comparison pairs ours with.
const (
	// SyncEverysec: redis-server appendfsync everysec beside our server's
	// async table (fsynced every Config.SyncInterval).
	SyncEverysec = "everysec"
	// SyncAlways: redis-server appendfsync always beside our server's
	// durable table (each SET acknowledged once fsynced).
	SyncAlways = "always"
)

// Config is one `bench blob` run.
type Config struct {
	// BlobBytes and Blobs are the size and count of the blobs (and of the
	// disk's files) each repeat writes and reads back.
	BlobBytes int
	Blobs     int
	// ValueBytes and Values are the size and count of the values each
	// repeat SETs and GETs through RESP.
	ValueBytes int
	Values     int
	// Repeats is how many times each arm runs, alternating.
	Repeats int
	// Dir is the base of the run's directories: the server's data, the
	// disk arm's files and redis-server's; put it on the disk you care
	// about.
	Dir string
	// Server is a built examples/server binary; empty: build it.
	Server string
	// RESPSync is SyncEverysec or SyncAlways.
	RESPSync string
	// SyncInterval is our async table's fsync interval under
	// SyncEverysec. Default: benchkit.EverysecInterval, as Redis's.
	SyncInterval time.Duration
	// Cold also times a second read of every blob and file after
	// dropping their pages from the page cache.
	Cold bool
	// Seed seeds the content.
	Seed  uint64
	Quick bool
	// Out is the JSON report path; empty: <repo root>/bench-results/blob.json.
	Out string
}

// DefaultConfig returns the full run, or with quick a reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{
		BlobBytes: 64 << 20, Blobs: 8, ValueBytes: 64 << 20, Values: 8, Repeats: 3,
		Dir: os.TempDir(), RESPSync: SyncEverysec, SyncInterval: benchkit.EverysecInterval, Cold: true, Seed: 1,
	}
	if quick {
		c.Quick = true
		c.BlobBytes, c.Blobs, c.ValueBytes, c.Values = 8<<20, 4, 8<<20, 4
	}
	return c
}

// Validate reports the first setting that cannot run.
func (c *Config) Validate() error {
	switch {
	case c.BlobBytes < 1 || c.Blobs < 1 || c.ValueBytes < 1 || c.Values < 1:
		return errors.New("sizes and counts must be positive")
	case c.BlobBytes > 4<<30 || c.ValueBytes > 512<<20:
		return errors.New("blob size at most 4 GiB, value size at most 512 MiB (Redis's proto-max-bulk-len)")
	case c.Repeats < 1:
		return errors.New("repeats must be at least 1")
	case c.RESPSync != SyncEverysec && c.RESPSync != SyncAlways:
		return fmt.Errorf("resp sync %q is neither %q nor %q", c.RESPSync, SyncEverysec, SyncAlways)
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("bench dir %q is not a directory", c.Dir)
	}
	return nil
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 4 blobs and 4 values of 8 MiB a repeat, 3 repeats", nil),
	benchkit.IntOption("blob-bytes", "BENCH_BLOB_BYTES", "size of each blob and disk file in bytes (default 67108864; quick 8388608)", func(c *Config) *int { return &c.BlobBytes }),
	benchkit.IntOption("blobs", "BENCH_BLOBS", "blobs (and disk files) written and read back per repeat (default 8; quick 4)", func(c *Config) *int { return &c.Blobs }),
	benchkit.IntOption("value-bytes", "BENCH_VALUE_BYTES", "size of each RESP value in bytes (default 67108864; quick 8388608)", func(c *Config) *int { return &c.ValueBytes }),
	benchkit.IntOption("values", "BENCH_VALUES", "values SET and read back with GET per repeat (default 8; quick 4)", func(c *Config) *int { return &c.Values }),
	benchkit.IntOption("repeats", "BENCH_REPEATS", "repeats of every arm, alternating ours-blob, null-http, disk, ours-resp, redis, sha256 (default 3)", func(c *Config) *int { return &c.Repeats }),
	opt("dir", "BENCH_DIR", "path", "base directory for the server's data, the disk arm's files and redis-server's (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("server", "BENCH_SERVER", "path", "examples/server binary to run (default: build ./examples/server into the run's directory)", func(c *Config, v string) error {
		c.Server = v
		return nil
	}),
	opt("resp-sync", "BENCH_RESP_SYNC", "policy", "the RESP pairing: everysec (ours --async, fsync every --sync-interval, vs redis appendfsync everysec) or always (ours durable vs appendfsync always) (default everysec)", func(c *Config, v string) error {
		c.RESPSync = v
		return nil
	}),
	benchkit.SyncIntervalOption(func(c *Config) *time.Duration { return &c.SyncInterval }),
	opt("cold", "BENCH_COLD", "bool", "also read every blob and file again after dropping their pages from the page cache (posix_fadvise DONTNEED) (default true)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.Cold = b
		return err
	}),
	opt("seed", "BENCH_SEED", "n", "seed of the content (default 1)", func(c *Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		c.Seed = n
		return err
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/blob.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench blob`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench blob" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Needs redis-server on PATH (make deps).

Examples:
  cd tools && go run ./bench blob
  BENCH_QUICK=1 go run ./bench blob
  go run ./bench blob --blob-bytes 268435456 --blobs 4 --dir /mnt/nvme/tmp
  go run ./bench blob --resp-sync always
`)
}

// Command runs `bench blob` with its arguments (after the name) and
// returns the exit code: 0, 1 when the run failed, 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "blob", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}
