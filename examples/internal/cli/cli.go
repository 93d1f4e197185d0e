package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
)

// Flag is one flag of a program whose parsed configuration is C, with the
// environment variable that also sets it.
type Flag[C any] struct {
	// Name is the flag without its dashes: --Name.
	Name string
	// Env is the environment variable that sets the flag when it is not
	// given; a blank value counts as unset.
	Env string
	// Default is the value when neither is given. "true" or "false"
	// makes the flag a switch (see Boolean).
	Default string
	// Usage is the flag's line in --help.
	Usage string
	// Set stores the value in the configuration, or says why it cannot:
	// Parse names the value's source in front of the error.
	Set func(c *C, v string) error
}

// Boolean reports whether the flag is a switch: given alone it means
// true, and --name=false turns it off.
func (f Flag[C]) Boolean() bool { return f.Default == "false" || f.Default == "true" }

// Parse reads the program's configuration from args, then getenv, then
// the flags' defaults, in that order of precedence, setting every flag in
// the table's order. An error names the flag and where its value came
// from: "shards (from --shards): ...", "(from TS_SHARDS)" or "(from
// default)". --help writes usage to stdout and returns flag.ErrHelp;
// name is the program's, for the flag package's errors.
func Parse[C any](name string, flags []Flag[C], usage func(io.Writer), args []string, stdout io.Writer, getenv func(string) string) (C, error) {
	var c C
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package only records what was given: the precedence, and
	// parsing the value, are the table's, the same for all three sources.
	given := map[string]string{}
	for _, f := range flags {
		record := func(v string) error {
			given[f.Name] = v
			return nil
		}
		if f.Boolean() {
			fs.BoolFunc(f.Name, f.Usage, record)
		} else {
			fs.Func(f.Name, f.Usage, record)
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	for _, f := range flags {
		v, from := f.Default, "default"
		if e := getenv(f.Env); strings.TrimSpace(e) != "" {
			v, from = e, f.Env
		}
		if g, ok := given[f.Name]; ok {
			v, from = g, "--"+f.Name
		}
		if err := f.Set(&c, v); err != nil {
			return c, fmt.Errorf("%s (from %s): %w", f.Name, from, err)
		}
	}
	return c, nil
}

// PrintFlags writes the flags' part of --help: each flag with its
// variable and default, then its usage.
func PrintFlags[C any](w io.Writer, flags []Flag[C]) {
	for _, f := range flags {
		fmt.Fprintf(w, "  --%s  [%s, default %q]\n      %s\n", f.Name, f.Env, f.Default, f.Usage)
	}
}

// Loopback reports whether addr only listens on the loopback interface,
// where a server may go without a token.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// List splits a comma-separated value, trimming each item and dropping
// the empty ones, so that "a, b," is [a b] and "" is none.
func List(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Log is what the log flags choose; a program's configuration holds one.
type Log struct {
	Level slog.Level
	// JSON writes JSON lines instead of slog's text.
	JSON bool
}

// Logger is the logger the flags chose, writing to w.
func (l Log) Logger(w io.Writer) *slog.Logger {
	o := &slog.HandlerOptions{Level: l.Level}
	if l.JSON {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// LogLevelFlag is --log-level, read from env too, which sets the Log that
// log returns.
func LogLevelFlag[C any](env string, log func(c *C) *Log) Flag[C] {
	return Flag[C]{Name: "log-level", Env: env, Default: "info", Usage: "log level: debug, info, warn or error", Set: func(c *C, v string) error {
		return log(c).Level.UnmarshalText([]byte(v))
	}}
}

// LogFormatFlag is --log-format, read from env too, which sets the Log
// that log returns.
func LogFormatFlag[C any](env string, log func(c *C) *Log) Flag[C] {
	return Flag[C]{Name: "log-format", Env: env, Default: "text", Usage: "log format: text or json", Set: func(c *C, v string) error {
		switch v {
		case "text", "json":
			log(c).JSON = v == "json"
			return nil
		}
		return fmt.Errorf("log format %q (text or json)", v)
	}}
}
