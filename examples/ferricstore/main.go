package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/temporalstore/temporalstore-go/examples/internal/cli"
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
	log            cli.Log
	notifyEvents   string
}

// maxSyncInterval bounds --sync-interval: what a machine crash may lose.
const maxSyncInterval = time.Minute

// flags are the program's flags, in --help's order.
var flags = []cli.Flag[config]{
	{Name: "resp-addr", Env: "FS_RESP_ADDR", Default: "127.0.0.1:6380", Usage: "RESP (Redis protocol) listen address; the default sits beside the main server's 6379", Set: func(c *config, v string) error {
		if v == "" {
			return errors.New("must not be empty: RESP is all this server serves")
		}
		c.respAddr = v
		return nil
	}},
	{Name: "data-dir", Env: "FS_DATA_DIR", Default: "./ferricstore-data", Usage: "data directory: one log and one snapshot directory per shard; created when missing", Set: func(c *config, v string) error {
		if v == "" {
			return errors.New("must not be empty")
		}
		c.dataDir = v
		return nil
	}},
	{Name: "notify-keyspace-events", Env: "FS_NOTIFY_KEYSPACE_EVENTS", Default: "", Usage: "stream keyspace notifications (xadd, xdel, xtrim, xgroup-*, del) published on the pub/sub of this port, as Redis's notify-keyspace-events: K and/or E with t (streams) and g (generic), or A, e.g. KEA; empty is off. CONFIG SET changes it while running", Set: func(c *config, v string) error {
		c.notifyEvents = v
		return nil
	}},
	{Name: "async", Env: "FS_ASYNC", Default: "false", Usage: "acknowledge a write once it is written to the operating system and fsync every --sync-interval, instead of after its fsync: a killed process loses nothing, a machine crash up to one interval", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.async = b
		return err
	}},
	{Name: "sync-interval", Env: "FS_SYNC_INTERVAL", Default: ferricstore.DefaultSyncInterval.String(), Usage: "how often --async fsyncs what it acknowledged (a Go duration, up to 1m); Redis's appendfsync everysec is 1s", Set: func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && (d <= 0 || d > maxSyncInterval) {
			err = fmt.Errorf("must be above 0 and at most %s, got %s", maxSyncInterval, d)
		}
		c.syncInterval = d
		return err
	}},
	{Name: "shards", Env: "FS_SHARDS", Default: strconv.Itoa(ferricstore.DefaultShards), Usage: "shard count of a new data directory: each shard has its own log, writer and lock, and a key's shard follows its Redis Cluster slot ({hash tag}). An existing data directory keeps the count it was made with", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && (n < 1 || n > 1024) {
			err = fmt.Errorf("must be 1 to 1024, got %d", n)
		}
		c.shards = n
		return err
	}},
	{Name: "metrics-addr", Env: "FS_METRICS_ADDR", Default: "127.0.0.1:17103", Usage: "HTTP listen address of /metrics (Prometheus: ferricstore_* streams and pub/sub, temporalstore_resp_* commands, the Go runtime); empty turns it off", Set: func(c *config, v string) error {
		c.metricsAddr = v
		return nil
	}},
	{Name: "token", Env: "FS_TOKEN", Default: "", Usage: "comma-separated read-write tokens: the passwords RESP AUTH accepts (as Redis's requirepass); none means no AUTH", Set: func(c *config, v string) error {
		c.tokens = cli.List(v)
		return nil
	}},
	{Name: "readonly-token", Env: "FS_READONLY_TOKEN", Default: "", Usage: "comma-separated read-only tokens: AUTH with one allows the verbs that change no stream (XRANGE, XREAD, XPENDING, XINFO, the pub/sub verbs), not XADD, XREADGROUP, XACK, XCLAIM, XGROUP...", Set: func(c *config, v string) error {
		c.readOnlyTokens = cli.List(v)
		return nil
	}},
	{Name: "insecure", Env: "FS_INSECURE", Default: "false", Usage: "allow listening on a non-loopback address without a token (RESP), or at all (metrics, which has no auth)", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.insecure = b
		return err
	}},
	cli.LogLevelFlag("FS_LOG_LEVEL", func(c *config) *cli.Log { return &c.log }),
	cli.LogFormatFlag("FS_LOG_FORMAT", func(c *config) *cli.Log { return &c.log }),
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
	cli.PrintFlags(w, flags)
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
	return cli.Parse("ferricstore", flags, usage, args, stdout, getenv)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	c, err := parse(args, stdout, getenv)
	if err != nil {
		return err
	}
	log := c.log.Logger(stderr)
	if !cli.Loopback(c.respAddr) && len(c.tokens)+len(c.readOnlyTokens) == 0 && !c.insecure {
		return fmt.Errorf("refusing to serve RESP on %s, which is not loopback, without a token (--token, or --insecure)", c.respAddr)
	}
	if c.metricsAddr != "" && !cli.Loopback(c.metricsAddr) && !c.insecure {
		return fmt.Errorf("refusing to serve metrics on %s, which is not loopback and has no auth (--insecure)", c.metricsAddr)
	}
	started := time.Now()
	// An existing data directory keeps its shard count, whatever --shards
	// says: Open warns, and store.Shards is the count it kept.
	store, err := ferricstore.Open(ferricstore.Options{Dir: c.dataDir, Shards: c.shards, Async: c.async, SyncInterval: c.syncInterval, Logger: log})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	log.Info("store open", "dir", c.dataDir, "shards", store.Shards(), "async", c.async, "took", time.Since(started).Round(time.Millisecond))
	broker := pubsub.NewBroker()
	srv, err := resp.New(resp.Options{Tokens: c.tokens, ReadOnlyTokens: c.readOnlyTokens, Logger: log,
		NotifyKeyspaceEvents: c.notifyEvents, Publish: func(ch string, msg []byte) { broker.Publish(ch, msg) },
		Commands: ferricmount.Mount(slices.Concat(commands.Commands(store), commands.FlowCommands(store), commands.PubSubCommands(broker)))})
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
