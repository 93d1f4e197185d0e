package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/temporalstore/temporalstore-go/examples/internal/ferricmount"
	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/commands"
	"github.com/temporalstore/temporalstore-go/ferricstore/ferricprom"
	"github.com/temporalstore/temporalstore-go/ferricstore/pubsub"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp/respprom"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "ferricstore:", err)
		os.Exit(1)
	}
}

// config is the parsed flags.
type config struct {
	respAddr       string
	dataDir        string
	metricsAddr    string
	async          bool
	syncInterval   time.Duration
	shards         int
	tokens         []string
	readOnlyTokens []string
	insecure       bool
	logLevel       slog.Level
	logJSON        bool
	notifyEvents   string
}

// flagDef is one flag with the environment variable that also sets it.
type flagDef struct {
	name, env, def, usage string
	set                   func(c *config, v string) error
}

// boolean reports whether the flag is a switch: given alone it means
// true, and --name=false turns it off.
func (f flagDef) boolean() bool { return f.def == "false" || f.def == "true" }

func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maxSyncInterval bounds --sync-interval: what a machine crash may lose.
const maxSyncInterval = time.Minute

var flags = []flagDef{
	{"resp-addr", "FS_RESP_ADDR", "127.0.0.1:6380", "RESP (Redis protocol) listen address; the default sits beside the main server's 6379", func(c *config, v string) error {
		if v == "" {
			return errors.New("must not be empty: RESP is all this server serves")
		}
		c.respAddr = v
		return nil
	}},
	{"data-dir", "FS_DATA_DIR", "./ferricstore-data", "data directory: one log and one snapshot directory per shard; created when missing", func(c *config, v string) error {
		if v == "" {
			return errors.New("must not be empty")
		}
		c.dataDir = v
		return nil
	}},
	{"notify-keyspace-events", "FS_NOTIFY_KEYSPACE_EVENTS", "", "stream keyspace notifications (xadd, xdel, xtrim, xgroup-*, del) published on the pub/sub of this port, as Redis's notify-keyspace-events: K and/or E with t (streams) and g (generic), or A, e.g. KEA; empty is off. CONFIG SET changes it while running", func(c *config, v string) error {
		c.notifyEvents = v
		return nil
	}},
	{"async", "FS_ASYNC", "false", "acknowledge a write once it is written to the operating system and fsync every --sync-interval, instead of after its fsync: a killed process loses nothing, a machine crash up to one interval", func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.async = b
		return err
	}},
	{"sync-interval", "FS_SYNC_INTERVAL", ferricstore.DefaultSyncInterval.String(), "how often --async fsyncs what it acknowledged (a Go duration, up to 1m); Redis's appendfsync everysec is 1s", func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && (d <= 0 || d > maxSyncInterval) {
			err = fmt.Errorf("must be above 0 and at most %s, got %s", maxSyncInterval, d)
		}
		c.syncInterval = d
		return err
	}},
	{"shards", "FS_SHARDS", strconv.Itoa(ferricstore.DefaultShards), "shard count of a new data directory: each shard has its own log, writer and lock, and a key's shard follows its Redis Cluster slot ({hash tag}). An existing data directory keeps the count it was made with", func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && (n < 1 || n > 1024) {
			err = fmt.Errorf("must be 1 to 1024, got %d", n)
		}
		c.shards = n
		return err
	}},
	{"metrics-addr", "FS_METRICS_ADDR", "127.0.0.1:17103", "HTTP listen address of /metrics (Prometheus: ferricstore_* streams and pub/sub, temporalstore_resp_* commands, the Go runtime); empty turns it off", func(c *config, v string) error {
		c.metricsAddr = v
		return nil
	}},
	{"token", "FS_TOKEN", "", "comma-separated read-write tokens: the passwords RESP AUTH accepts (as Redis's requirepass); none means no AUTH", func(c *config, v string) error {
		c.tokens = list(v)
		return nil
	}},
	{"readonly-token", "FS_READONLY_TOKEN", "", "comma-separated read-only tokens: AUTH with one allows the verbs that change no stream (XRANGE, XREAD, XPENDING, XINFO, the pub/sub verbs), not XADD, XREADGROUP, XACK, XCLAIM, XGROUP...", func(c *config, v string) error {
		c.readOnlyTokens = list(v)
		return nil
	}},
	{"insecure", "FS_INSECURE", "false", "allow listening on a non-loopback address without a token (RESP), or at all (metrics, which has no auth)", func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.insecure = b
		return err
	}},
	{"log-level", "FS_LOG_LEVEL", "info", "log level: debug, info, warn or error", func(c *config, v string) error {
		return c.logLevel.UnmarshalText([]byte(v))
	}},
	{"log-format", "FS_LOG_FORMAT", "text", "log format: text or json", func(c *config, v string) error {
		switch v {
		case "text", "json":
			c.logJSON = v == "json"
			return nil
		}
		return fmt.Errorf("log format %q (text or json)", v)
	}},
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: ferricstore [flags]

Serves ferricstore alone over RESP: Redis streams with consumer groups,
durable in a local data directory, and pub/sub. GET, SET and the other
key-value verbs are not served ("unknown command"): examples/server
serves them with the engine. Each flag also reads the environment variable
shown; a flag beats its variable, which beats the default.

Flags:
`)
	for _, f := range flags {
		fmt.Fprintf(w, "  --%s  [%s, default %q]\n      %s\n", f.name, f.env, f.def, f.usage)
	}
	fmt.Fprint(w, `
Example:
  go run ./examples/ferricstore
  redis-cli -p 6380 XADD jobs '*' task resize
  redis-cli -p 6380 XGROUP CREATE jobs workers 0
  redis-cli -p 6380 XREADGROUP GROUP workers w1 COUNT 10 STREAMS jobs '>'
`)
}

// parse reads the flags, the environment and the defaults.
func parse(args []string, stdout io.Writer, getenv func(string) string) (config, error) {
	var c config
	fs := flag.NewFlagSet("ferricstore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	given := map[string]string{}
	for _, f := range flags {
		record := func(v string) error {
			given[f.name] = v
			return nil
		}
		if f.boolean() {
			fs.BoolFunc(f.name, f.usage, record)
		} else {
			fs.Func(f.name, f.usage, record)
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
		v, from := f.def, "default"
		if e := getenv(f.env); strings.TrimSpace(e) != "" {
			v, from = e, f.env
		}
		if g, ok := given[f.name]; ok {
			v, from = g, "--"+f.name
		}
		if err := f.set(&c, v); err != nil {
			return c, fmt.Errorf("%s (from %s): %w", f.name, from, err)
		}
	}
	return c, nil
}

// loopback reports whether addr only listens on the loopback interface.
func loopback(addr string) bool {
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

// shardDir is the name ferricstore gives a shard's log directory.
var shardDir = regexp.MustCompile(`^shard-\d{3,}$`)

// existingShards is how many shards the data directory has logs for (0
// for a new one). ferricstore routes a key by the shard count, so a
// directory must be opened with the count it was made with.
func existingShards(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() && shardDir.MatchString(e.Name()) {
			n++
		}
	}
	return n, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	c, err := parse(args, stdout, getenv)
	if err != nil {
		return err
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: c.logLevel})
	if c.logJSON {
		handler = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: c.logLevel})
	}
	log := slog.New(handler)
	if !loopback(c.respAddr) && len(c.tokens)+len(c.readOnlyTokens) == 0 && !c.insecure {
		return fmt.Errorf("refusing to serve RESP on %s, which is not loopback, without a token (--token, or --insecure)", c.respAddr)
	}
	if c.metricsAddr != "" && !loopback(c.metricsAddr) && !c.insecure {
		return fmt.Errorf("refusing to serve metrics on %s, which is not loopback and has no auth (--insecure)", c.metricsAddr)
	}
	shards, err := existingShards(c.dataDir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	switch {
	case shards == 0:
		shards = c.shards
	case shards != c.shards:
		log.Warn("the data directory keeps its shard count", "shards", shards, "flag", c.shards)
	}

	started := time.Now()
	store, err := ferricstore.Open(ferricstore.Options{Dir: c.dataDir, Shards: shards, Async: c.async, SyncInterval: c.syncInterval, Logger: log})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	log.Info("store open", "dir", c.dataDir, "shards", shards, "async", c.async, "took", time.Since(started).Round(time.Millisecond))
	broker := pubsub.NewBroker()
	srv, err := resp.New(resp.Options{Tokens: c.tokens, ReadOnlyTokens: c.readOnlyTokens, Logger: log,
		NotifyKeyspaceEvents: c.notifyEvents, Publish: func(ch string, msg []byte) { broker.Publish(ch, msg) },
		Commands: ferricmount.Mount(append(commands.Commands(store), commands.PubSubCommands(broker)...))})
	if err != nil {
		store.Close()
		return err
	}
	// Closed in reverse order: the listeners and their connections
	// first, the store last, once nothing writes to it.
	closers := []func() error{store.Close}
	shutdown := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				log.Warn("shutdown", "err", err)
			}
		}
	}
	errc := make(chan error, 2)
	l, err := net.Listen("tcp", c.respAddr)
	if err != nil {
		shutdown()
		return fmt.Errorf("RESP: %w", err)
	}
	log.Info("listening", "surface", "resp", "addr", l.Addr().String(), "auth", len(c.tokens)+len(c.readOnlyTokens) > 0)
	go func() {
		if err := srv.Serve(l); !errors.Is(err, resp.ErrClosed) {
			errc <- fmt.Errorf("RESP: %w", err)
		}
	}()
	closers = append(closers, srv.Close)
	if c.metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			ferricprom.NewCollector(store), ferricprom.NewPubSubCollector(broker), respprom.NewCollector(srv))
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		ml, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			shutdown()
			return fmt.Errorf("metrics: %w", err)
		}
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		log.Info("listening", "surface", "metrics", "addr", ml.Addr().String())
		go func() {
			if err := hs.Serve(ml); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics: %w", err)
			}
		}()
		closers = append(closers, func() error {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return hs.Shutdown(sctx)
		})
	}
	log.Info("ready", "data", c.dataDir)
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-errc:
		log.Error("listener failed", "err", err)
	}
	shutdown()
	log.Info("stopped")
	return err
}
