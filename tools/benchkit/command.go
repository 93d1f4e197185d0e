package benchkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
)

// Option is one setting of a benchmark: a flag and the environment variable
// that also sets it. Apply nil marks the quick switch (BENCH_QUICK), which
// chooses the defaults rather than setting a field.
type Option[C any] struct {
	Flag, Env, Arg, Usage string
	Apply                 func(c *C, v string) error
}

// PrintOptions writes one help entry per option.
func PrintOptions[C any](w io.Writer, opts []Option[C]) {
	for _, o := range opts {
		fmt.Fprintf(w, "  --%s %s  [%s]\n      %s\n", o.Flag, o.Arg, o.Env, o.Usage)
	}
}

// Benchmark is what Command needs of one `bench <name>`.
type Benchmark[C any] struct {
	Name     string
	Options  []Option[C]
	Defaults func(quick bool) C
	Usage    func(io.Writer)
	Run      func(ctx context.Context, c C, stdout io.Writer, progress *slog.Logger) error
}

// Command runs b with its arguments (after the name) and returns the exit
// code: 0, 1 when the run failed, 2 for a usage error. A flag beats its
// environment variable, which beats the default; an empty or blank variable
// counts as unset. Interrupt cancels the run's context.
func Command[C any](b Benchmark[C], args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench "+b.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	quick := EnvBool(os.Getenv("BENCH_QUICK"))
	var sets []func(*C) error
	for _, o := range b.Options {
		if o.Apply == nil {
			fs.BoolFunc(o.Flag, o.Usage, func(v string) error {
				q, err := strconv.ParseBool(v)
				quick = q
				return err
			})
			continue
		}
		fs.Func(o.Flag, o.Usage, func(v string) error {
			sets = append(sets, func(c *C) error { return o.Apply(c, v) })
			return nil
		})
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			b.Usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "bench %s: %v (see bench --help)\n", b.Name, err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench %s: unexpected arguments %q (see bench --help)\n", b.Name, fs.Args())
		return 2
	}
	cfg := b.Defaults(quick)
	for _, o := range b.Options {
		if v, ok := os.LookupEnv(o.Env); ok && o.Apply != nil && strings.TrimSpace(v) != "" {
			if err := o.Apply(&cfg, v); err != nil {
				fmt.Fprintf(stderr, "bench %s: %s=%q: %v\n", b.Name, o.Env, v, err)
				return 2
			}
		}
	}
	for _, set := range sets {
		if err := set(&cfg); err != nil {
			fmt.Fprintf(stderr, "bench %s: %v\n", b.Name, err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := b.Run(ctx, cfg, stdout, NewProgress(stderr)); err != nil {
		fmt.Fprintf(stderr, "bench %s: %v\n", b.Name, err)
		return 1
	}
	return 0
}

// NewOption is an Option from its fields in order, for option tables.
func NewOption[C any](flag, env, arg, usage string, apply func(c *C, v string) error) Option[C] {
	return Option[C]{Flag: flag, Env: env, Arg: arg, Usage: usage, Apply: apply}
}

// IntOption is an Option setting the integer field returns.
func IntOption[C any](flag, env, usage string, field func(*C) *int) Option[C] {
	return intOption(flag, env, usage, field, false)
}

// PositiveIntOption is IntOption refusing 0 and below.
func PositiveIntOption[C any](flag, env, usage string, field func(*C) *int) Option[C] {
	return intOption(flag, env, usage, field, true)
}

func intOption[C any](flag, env, usage string, field func(*C) *int, positive bool) Option[C] {
	return NewOption(flag, env, "n", usage, func(c *C, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && positive && n <= 0 {
			err = fmt.Errorf("%s %d: must be positive", flag, n)
		}
		*field(c) = n
		return err
	})
}
