package objectbench

import (
	"errors"
	"fmt"
	"os"
)

// System names, in the order they alternate.
const (
	SystemOurs = "ours"
	SystemDisk = "disk"
)

// Body kinds: how ours receives each PUT body.
const (
	// BodyBytes hands PutObject a *bytes.Reader, which it hashes and writes
	// in place (the embedded use).
	BodyBytes = "bytes"
	// BodyStream hands PutObject a plain io.Reader, read chunk by chunk as
	// the S3 handler's request bodies are.
	BodyStream = "stream"
)

// Config is one `bench object` run.
type Config struct {
	// Sizes are the object sizes in bytes.
	Sizes []int
	// Ops is how many objects of each size one run writes and reads back;
	// OpsFor picks it per size (fewer for large objects).
	Ops map[int]int
	// Repeats is how many times each size runs every system, alternating.
	Repeats int
	// Dir is the base for the fresh per-run temporary directories.
	Dir string
	// Quick marks a reduced run (BENCH_QUICK=1); recorded in the report.
	Quick bool
	// Seed seeds the incompressible object bytes.
	Seed uint64
	// Body is BodyBytes (the default) or BodyStream.
	Body string
	// Out is the JSON report path; empty means
	// <repo root>/bench-results/object.json.
	Out string
}

// DefaultConfig returns the full run, or with quick the reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{
		Sizes:   []int{4 << 10, 1 << 20, 64 << 20},
		Ops:     map[int]int{4 << 10: 500, 1 << 20: 40, 64 << 20: 4},
		Repeats: 5,
		Dir:     os.TempDir(),
		Seed:    1,
		Body:    BodyBytes,
	}
	if quick {
		c.Quick = true
		c.Ops = map[int]int{4 << 10: 150, 1 << 20: 15, 64 << 20: 2}
		c.Repeats = 3
	}
	return c
}

// OpsFor returns the objects per run for size: Ops[size] when set, else
// enough for about 64 MiB (at least 2, at most 500).
func (c *Config) OpsFor(size int) int {
	if n, ok := c.Ops[size]; ok && n > 0 {
		return n
	}
	return min(max((64<<20)/max(size, 1), 2), 500)
}

// Validate reports the first setting that cannot run.
func (c *Config) Validate() error {
	switch {
	case len(c.Sizes) == 0:
		return errors.New("sizes must not be empty")
	case c.Repeats < 1:
		return errors.New("repeats must be at least 1")
	case c.Body != BodyBytes && c.Body != BodyStream:
		return fmt.Errorf("body %q is neither %q nor %q", c.Body, BodyBytes, BodyStream)
	}
	for _, s := range c.Sizes {
		if s < 1 || s > 1<<30 {
			return fmt.Errorf("size %d out of range [1, 1 GiB]", s)
		}
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("bench dir %q is not a directory", c.Dir)
	}
	return nil
}
