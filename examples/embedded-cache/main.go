package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixcache"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "embedded-cache:", err)
		os.Exit(1)
	}
}

// config is the parsed flags.
type config struct {
	dir        string
	keys       int
	reads      int
	dramBytes  int64
	valueBytes int
	zipfS      float64
	seed       uint64
}

// parseFlags parses args. --help prints the usage to stderr and returns
// flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("embedded-cache", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", "", "directory of the SSD tier (created if missing; default a temporary directory removed at exit)")
	fs.IntVar(&c.keys, "keys", 20000, "distinct keys written before the reads; pick more than DRAM holds")
	fs.IntVar(&c.reads, "reads", 200000, "reads in the Zipf-skewed stream")
	fs.Int64Var(&c.dramBytes, "dram-bytes", 4<<20, "DRAM tier capacity in bytes (values plus keys)")
	fs.IntVar(&c.valueBytes, "value-bytes", 1024, "size of every value in bytes, at least 8 (the value begins with its key's number)")
	fs.Float64Var(&c.zipfS, "zipf-s", 1.1, "Zipf exponent s of the read stream, > 1: the larger s, the more reads go to the hottest keys (1.01 mild, 2 very skewed)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the read stream, for repeatable runs")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: embedded-cache [flags]

Builds a matrixcache.Cache with a small DRAM tier over an SSD tier, writes
--keys values (more than DRAM holds), reads a Zipf-skewed stream of them and
prints the hits per tier and latency percentiles from Cache.Stats. Progress
goes to stderr, the report to stdout.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case c.keys < 1:
		return c, fmt.Errorf("--keys %d: need at least 1", c.keys)
	case c.reads < 0:
		return c, fmt.Errorf("--reads %d is negative", c.reads)
	case c.dramBytes < 1:
		return c, fmt.Errorf("--dram-bytes %d: need at least 1", c.dramBytes)
	case c.valueBytes < 8:
		return c, fmt.Errorf("--value-bytes %d: need at least 8", c.valueBytes)
	case !(c.zipfS > 1): // also refuses NaN
		return c, fmt.Errorf("--zipf-s %v: need s > 1", c.zipfS)
	}
	return c, nil
}

// run is the program: main with its arguments, output and context passed in
// so that tests can run it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	dir, temporary := cfg.dir, cfg.dir == ""
	if temporary {
		if dir, err = os.MkdirTemp("", "embedded-cache-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	opts := matrixcache.Options{
		DRAMCapacityBytes: cfg.dramBytes,
		SSDPath:           dir,
		// Writeback commits SSD writes in batches from one goroutine, so
		// the load pays one fsync per batch, not per value.
		WriteBack: true,
		Logger:    log,
	}
	// A shard holds at most its share of DRAM, so a larger DRAM block
	// limit only makes the cache warn that the limit cannot be met.
	opts.MaxDRAMBlockBytes = max(cfg.dramBytes/matrixcache.DefaultShards, 1)
	for _, f := range opts.Validate() {
		if f.Severity > matrixcache.SeverityInfo {
			log.Warn("cache options", "finding", f.ID, "field", f.Field, "message", f.Message)
		}
	}
	cache, err := matrixcache.New(ctx, opts)
	if err != nil {
		return err
	}
	defer cache.Close()

	where := dir
	if temporary {
		where += " (temporary, removed at exit)"
	}
	fmt.Fprintf(stdout, "cache: DRAM %s over an SSD tier in %s\n", bytesString(cfg.dramBytes), where)
	fmt.Fprintf(stdout, "keys:  %d of %d B = %s\n", cfg.keys, cfg.valueBytes, bytesString(int64(cfg.keys)*int64(cfg.valueBytes)))

	loadTime, err := load(ctx, log, cache, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "load:  %d puts in %v (%.0f puts/s, SSD writes flushed)\n",
		cfg.keys, loadTime.Round(time.Millisecond), perSecond(cfg.keys, loadTime))

	readTime, err := read(ctx, log, cache, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reads: %d, Zipf s=%g, in %v (%.0f gets/s)\n",
		cfg.reads, cfg.zipfS, readTime.Round(time.Millisecond), perSecond(cfg.reads, readTime))

	report(stdout, cache.Stats())
	return nil
}

func key(i int) matrixcache.Key { return matrixcache.KeyOf(fmt.Sprintf("user:%08d", i)) }

// load writes every key once and waits for the SSD tier to hold them all.
// Progress is logged every tenth of the keys.
func load(ctx context.Context, log *slog.Logger, cache *matrixcache.Cache, cfg config) (time.Duration, error) {
	start := time.Now()
	step := max(cfg.keys/10, 1)
	for i := range cfg.keys {
		// A fresh buffer per Put: the cache may keep it.
		v := make([]byte, cfg.valueBytes)
		binary.LittleEndian.PutUint64(v, uint64(i))
		for j := 8; j < len(v); j++ {
			v[j] = byte(i + j)
		}
		if err := cache.Put(ctx, key(i), v, matrixcache.PutOptions{}); err != nil {
			return 0, fmt.Errorf("put key %d: %w", i, err)
		}
		if done := i + 1; done%step == 0 || done == cfg.keys {
			st := cache.Stats()
			log.Info("load", "keys", done, "of", cfg.keys,
				"dram_entries", st.DRAM.Entries, "ssd_entries", st.SSD.Entries,
				"writeback_queue", st.WritebackQueueDepth, "elapsed", time.Since(start).Round(time.Millisecond))
		}
	}
	if err := cache.Flush(ctx); err != nil {
		return 0, fmt.Errorf("flush: %w", err)
	}
	return time.Since(start), nil
}

// read gets cfg.reads keys drawn from a Zipf distribution over a random
// permutation of the keys (so that popularity is unrelated to the order the
// keys were written in), and checks every value it gets back.
func read(ctx context.Context, log *slog.Logger, cache *matrixcache.Cache, cfg config) (time.Duration, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, cfg.seed))
	perm := rng.Perm(cfg.keys)
	zipf := rand.NewZipf(rng, cfg.zipfS, 1, uint64(cfg.keys-1))
	log.Info("reads", "reads", cfg.reads, "zipf_s", cfg.zipfS, "seed", cfg.seed)
	start := time.Now()
	for range cfg.reads {
		i := perm[zipf.Uint64()]
		v, _, ok, err := cache.Get(ctx, key(i))
		if err != nil {
			return 0, fmt.Errorf("get key %d: %w", i, err)
		}
		// Every key was written, so a miss here would be a lost value, not
		// a cold one.
		if !ok || len(v) != cfg.valueBytes || binary.LittleEndian.Uint64(v) != uint64(i) {
			return 0, fmt.Errorf("get key %d: found %v, %d bytes: not the value written", i, ok, len(v))
		}
	}
	d := time.Since(start)
	log.Info("reads done", "elapsed", d.Round(time.Millisecond))
	return d, nil
}

// report prints where the reads were answered and the latency percentiles.
func report(w io.Writer, st matrixcache.Stats) {
	lookups := st.DRAM.Hits + st.SSD.Hits + st.Misses
	share := func(n int64) float64 {
		if lookups == 0 {
			return 0
		}
		return 100 * float64(n) / float64(lookups)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-10s %10s %8s\n", "answered", "gets", "share")
	fmt.Fprintf(w, "%-10s %10d %7.2f%%\n", "dram", st.DRAM.Hits, share(st.DRAM.Hits))
	fmt.Fprintf(w, "%-10s %10d %7.2f%%\n", "ssd", st.SSD.Hits, share(st.SSD.Hits))
	fmt.Fprintf(w, "%-10s %10d %7.2f%%\n", "miss", st.Misses, share(st.Misses))
	fmt.Fprintf(w, "DRAM now holds %d entries (%s), the SSD tier %d (%s); %d values refilled into DRAM\n",
		st.DRAM.Entries, bytesString(st.DRAM.Bytes), st.SSD.Entries, bytesString(st.SSD.Bytes), st.DRAM.Promotions)

	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-13s %8s %11s %11s %11s %11s %11s\n", "latency", "timed", "p50", "p90", "p99", "p99.9", "max")
	for _, l := range []struct {
		name string
		l    matrixcache.Latency
	}{
		{"get", st.GetLatency},
		{"read-through", st.ReadThroughLatency},
		{"put", st.PutLatency},
		{"wb batch", st.WritebackLatency},
	} {
		fmt.Fprintf(w, "%-13s %8d %11s %11s %11s %11s %11s\n", l.name, l.l.Samples,
			upTo(l.l.Percentile(50)), upTo(l.l.Percentile(90)), upTo(l.l.Percentile(99)), upTo(l.l.Percentile(99.9)),
			l.l.Max.Round(time.Microsecond))
	}
	fmt.Fprintln(w, "(a percentile is the upper bound of its histogram bucket: 10µs, 100µs, 1ms, 10ms, or the max above)")
}

// upTo formats a percentile as the bucket bound it is.
func upTo(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return "≤" + d.Round(time.Microsecond).String()
}

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
