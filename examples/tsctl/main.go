package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Defaults of the global flags.
const (
	defaultHTTP = "127.0.0.1:17102"
	defaultRESP = "127.0.0.1:6379"
	defaultData = "./data"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

var (
	// errUsage marks an error in the command line: exit status 2.
	errUsage = errors.New("usage")
	// errReported marks a failure whose result was already written (a
	// verify that found damage, a backup that failed): exit status 1 with
	// no second report.
	errReported = errors.New("failed")
)

// app is one run of tsctl: its streams, environment and global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	output   string // "text" or "json"
	httpAddr string
	respAddr string
	token    string
	dataDir  string
	progress bool // draw progress bars even when stderr is no terminal

	// emitted is set once a result was written to stdout, so that a
	// failure after it writes no second JSON document.
	emitted bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes tsctl with args and returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errReported) {
		return exitFailure
	}
	if a.output == "json" && !a.emitted {
		a.emit(map[string]any{"ok": false, "error": err.Error()}, nil)
	}
	fmt.Fprintln(stderr, "tsctl:", err)
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitFailure
}

// envOr is the environment variable name's value, or def when it is
// unset or blank.
func (a *app) envOr(name, def string) string {
	if v := a.getenv(name); v != "" {
		return v
	}
	return def
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "tsctl",
		Short:         "Administer a TemporalStore server and its data directory",
		Long:          "tsctl inspects and verifies a data directory offline, backs up and restores, exports and imports keys, and manages tables and tenants of a running server.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.output != "text" && a.output != "json" {
				return fmt.Errorf("%w: --output %q is not text or json", errUsage, a.output)
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.output, "output", "text", "result format: text or json (one JSON document a command, on stdout)")
	pf.StringVar(&a.httpAddr, "http", a.envOr("TS_HTTP_ADDR", defaultHTTP), "the server's HTTP address (env TS_HTTP_ADDR)")
	pf.StringVar(&a.respAddr, "resp", a.envOr("TS_RESP_ADDR", defaultRESP), "the server's RESP address (env TS_RESP_ADDR)")
	pf.StringVar(&a.token, "token", a.getenv("TS_TOKEN"), "token: the HTTP bearer token and RESP's AUTH (env TS_TOKEN)")
	pf.StringVar(&a.dataDir, "data", defaultData, "the server's data directory, for the offline commands")
	pf.BoolVar(&a.progress, "progress", false, "draw progress bars on stderr even when it is not a terminal")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return fmt.Errorf("%w: %w", errUsage, err) })
	root.AddCommand(a.inspectCmd(), a.verifyCmd(), a.backupCmd(), a.restoreCmd(),
		a.exportCmd(), a.importCmd(), a.tableCmd(), a.tenantCmd())
	return root
}

// args wraps a cobra argument check so that its error is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		return nil
	}
}

// emit writes a command's result: v as one JSON document with --output
// json, else what text writes.
func (a *app) emit(v any, text func(w io.Writer)) {
	a.emitTo(a.stdout, v, text)
}

// emitTo is emit to w (stderr when stdout carries data, as export's).
func (a *app) emitTo(w io.Writer, v any, text func(w io.Writer)) {
	if w == a.stdout {
		a.emitted = true
	}
	if a.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			fmt.Fprintln(a.stderr, "tsctl: writing the result:", err)
		}
		return
	}
	if text != nil {
		text(w)
	}
}
