package streamsbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The workloads' names, as the report and the --workloads flag spell
// them (fanout8 selects both of its pipeline depths).
const (
	wXAddDurable = "xadd_durable"
	wXAddAsync   = "xadd_async"
	// wXAddP64 is durable XADDs at pipeline 64 from 4 connections.
	wXAddP64   = "xadd_p64_durable"
	wConsume   = "consume"
	wFanout    = "fanout8"
	wFanoutP1  = "fanout8_p1"
	wFanoutP64 = "fanout8_p64"
)

// Config is one `bench streams` run.
type Config struct {
	// Clients connections (JetStream: publishers) XADD to Streams
	// streams (subjects), EntryBytes each, for Duration after Warmup.
	Clients, Streams, EntryBytes int
	Duration, Warmup             time.Duration
	// ConsumeEntries are preloaded; Consumers connections read them
	// ConsumeCount at a time.
	ConsumeEntries, Consumers, ConsumeCount int
	// Subscribers receive FanoutMessages messages of MessageBytes at
	// pipeline 64, and a quarter as many at pipeline 1.
	Subscribers, MessageBytes, FanoutMessages int
	Repeats                                   int
	Workloads                                 []string
	Dir, Out                                  string
	Quick                                     bool
	// SyncInterval is our async server's fsync interval (xadd_async).
	SyncInterval time.Duration
	Seed         uint64
}

// DefaultConfig returns the full run, or with quick the reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{
		Clients: 50, Streams: 12, EntryBytes: 128, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond,
		ConsumeEntries: 1_000_000, Consumers: 4, ConsumeCount: 100,
		Subscribers: 8, MessageBytes: 256, FanoutMessages: 200_000,
		Repeats: 3, Workloads: []string{wXAddDurable, wXAddAsync, wXAddP64, wConsume, wFanout},
		Dir: os.TempDir(), SyncInterval: benchkit.EverysecInterval, Seed: 1,
	}
	if quick {
		c.Quick, c.Duration, c.Warmup, c.ConsumeEntries, c.FanoutMessages, c.Repeats = true, time.Second, 250*time.Millisecond, 50_000, 40_000, 2
	}
	return c
}

var opt = benchkit.NewOption[Config]

func durationOption(flag, env, usage string, field func(*Config) *time.Duration) benchkit.Option[Config] {
	return opt(flag, env, "d", usage, func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = fmt.Errorf("%s %s: must not be negative", flag, d)
		}
		*field(c) = d
		return err
	})
}

var options = []benchkit.Option[Config]{
	benchkit.SyncIntervalOption(func(c *Config) *time.Duration { return &c.SyncInterval }),
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 1s windows, 50,000 entries to consume, 40,000 messages at P64 (10,000 at P1), 2 repeats", nil),
	benchkit.PositiveIntOption("clients", "BENCH_CLIENTS", "XADD connections and JetStream publishers (default 50)", func(c *Config) *int { return &c.Clients }),
	benchkit.PositiveIntOption("streams", "BENCH_STREAMS", "streams the XADD clients spread over, JetStream subjects (default 12)", func(c *Config) *int { return &c.Streams }),
	benchkit.PositiveIntOption("entry-bytes", "BENCH_ENTRY_BYTES", "random bytes per XADD value and JetStream message (default 128)", func(c *Config) *int { return &c.EntryBytes }),
	durationOption("duration", "BENCH_DURATION", "measured time of each XADD run (default 3s; quick 1s)", func(c *Config) *time.Duration { return &c.Duration }),
	durationOption("warmup", "BENCH_WARMUP", "unmeasured XADD load before each window (default 500ms; quick 250ms)", func(c *Config) *time.Duration { return &c.Warmup }),
	benchkit.PositiveIntOption("consume-entries", "BENCH_CONSUME_ENTRIES", "entries preloaded and consumed (default 1000000; quick 50000)", func(c *Config) *int { return &c.ConsumeEntries }),
	benchkit.PositiveIntOption("consumers", "BENCH_CONSUMERS", "consumer connections (default 4)", func(c *Config) *int { return &c.Consumers }),
	benchkit.PositiveIntOption("consume-count", "BENCH_CONSUME_COUNT", "XREADGROUP COUNT (default 100)", func(c *Config) *int { return &c.ConsumeCount }),
	benchkit.PositiveIntOption("subscribers", "BENCH_SUBSCRIBERS", "subscriber connections of the fanout (default 8)", func(c *Config) *int { return &c.Subscribers }),
	benchkit.PositiveIntOption("message-bytes", "BENCH_MESSAGE_BYTES", "PUBLISH payload bytes, at least 16 (default 256)", func(c *Config) *int { return &c.MessageBytes }),
	benchkit.PositiveIntOption("messages", "BENCH_MESSAGES", "messages published at pipeline 64; pipeline 1 publishes a quarter (default 200000; quick 40000)", func(c *Config) *int { return &c.FanoutMessages }),
	benchkit.PositiveIntOption("repeats", "BENCH_REPEATS", "runs per system and workload, alternating (default 3; quick 2)", func(c *Config) *int { return &c.Repeats }),
	opt("workloads", "BENCH_WORKLOADS", "list", "workloads to run: xadd_durable,xadd_async,xadd_p64_durable,consume,fanout8 (default all)", func(c *Config, v string) error {
		c.Workloads = benchkit.SplitList(v)
		for _, w := range c.Workloads {
			if !slices.Contains([]string{wXAddDurable, wXAddAsync, wXAddP64, wConsume, wFanout}, w) {
				return fmt.Errorf("unknown workload %q", w)
			}
		}
		return nil
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for the servers' data (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/streams.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench streams`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench streams" (each also read from the environment variable shown):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Needs redis-server on PATH (make deps) and the Go toolchain (it builds
examples/server and tools/natsbench, the JetStream peer, a module of its own).

Examples:
  cd tools && go run ./bench streams
  BENCH_QUICK=1 go run ./bench streams
  go run ./bench streams --workloads fanout8 --repeats 1
`)
}

// Command runs `bench streams`.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "streams", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}

// result is one run of one system.
type result struct {
	Repeat int `json:"repeat"`
	// Rate is XADDs, entries consumed, or deliveries per second.
	Rate  float64 `json:"per_s"`
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	Count int     `json:"count"`
	// Seconds is the time Rate is over.
	Seconds float64 `json:"seconds"`
	// ServerCPUUs is the server process's CPU time (user and system) per
	// op over the measurement, µs; 0 for JetStream, whose server shares its
	// process with the publishers.
	ServerCPUUs float64 `json:"server_cpu_us_per_op,omitempty"`
	// RecordsPerFsync is, for ours where the workload counts them, the
	// stream log records per fsync over the run, warm-up included: how
	// many XADDs shared an fsync.
	RecordsPerFsync float64 `json:"records_per_fsync,omitempty"`
}

// workload is one row of the report.
type workload struct {
	name, unit, description string
	systems                 []string
	// durable picks the servers' durable configuration; else async.
	durable bool
	// countFsyncs reads our server's log records per fsync over each run.
	countFsyncs bool
	// run runs it against a RESP server (ours or redis).
	run func(ctx context.Context, e *env, p benchkit.ServerProcess) (result, error)
}

// workloads returns the workloads cfg selects, in the report's order.
func workloads(cfg Config) []workload {
	xadd := func(ctx context.Context, e *env, p benchkit.ServerProcess) (result, error) {
		return runXAdd(ctx, e.cfg, p.Addr, p.PID)
	}
	fanout := func(depth, n int) func(ctx context.Context, e *env, p benchkit.ServerProcess) (result, error) {
		return func(ctx context.Context, e *env, p benchkit.ServerProcess) (result, error) {
			return runFanout(ctx, e.cfg, p.Addr, p.PID, depth, n)
		}
	}
	xaddDesc := fmt.Sprintf("%d connections at pipeline 1: XADD stream:{c mod %d} * f <%d random bytes>, %s after %s of warm-up; JetStream: %d publishers, synchronous Publish to s.<c mod %d> of one file stream",
		cfg.Clients, cfg.Streams, cfg.EntryBytes, cfg.Duration, cfg.Warmup, cfg.Clients, cfg.Streams)
	fanoutDesc := func(depth, n int) string {
		return fmt.Sprintf("%d subscribers of one channel, one publisher: %d PUBLISH of %d B at pipeline %d; latency = delivery time - send time", cfg.Subscribers, n, cfg.MessageBytes, depth)
	}
	all := map[string][]workload{
		wXAddDurable: {{name: wXAddDurable, unit: "XADD/s", durable: true, countFsyncs: true, systems: []string{sysOurs, sysRedis, sysJetStream, sysNull, sysNullDurable}, run: xadd,
			description: xaddDesc + "; durable: ours' default, redis appendfsync always, JetStream SyncAlways; null: a server that only reads, parses and answers (the ceiling); null_durable: the null server writing and fdatasyncing each event-loop round's requests before answering them (the durable ceiling)"}},
		wXAddAsync: {{name: wXAddAsync, unit: "XADD/s", systems: []string{sysOurs, sysRedis, sysJetStream}, run: xadd,
			description: xaddDesc + fmt.Sprintf("; async: ours --async --sync-interval %s, redis appendfsync everysec, JetStream's default sync (2m)", cfg.SyncInterval)}},
		wXAddP64: {{name: wXAddP64, unit: "XADD/s", durable: true, countFsyncs: true, systems: []string{sysOurs, sysRedis},
			run: func(ctx context.Context, e *env, p benchkit.ServerProcess) (result, error) {
				return runXAddDepth(ctx, e.cfg, p.Addr, p.PID, 4, 64)
			},
			description: fmt.Sprintf("4 connections each writing 64 XADD stream:{c mod %d} * f <%d random bytes> before reading their replies, %s after %s of warm-up; durable (redis appendfsync always); latency of a round of 64",
				cfg.Streams, cfg.EntryBytes, cfg.Duration, cfg.Warmup)}},
		wConsume: {{name: wConsume, unit: "entries/s", durable: true, systems: []string{sysOurs, sysRedis},
			run: func(ctx context.Context, e *env, p benchkit.ServerProcess) (result, error) {
				return runConsume(ctx, e.cfg, p.Addr, p.PID, e.log)
			},
			description: fmt.Sprintf("%d entries of %d B preloaded, XGROUP CREATE s g 0, %d connections loop XREADGROUP GROUP g c<i> COUNT %d STREAMS s > and XACK until drained; latency of one round; durable",
				cfg.ConsumeEntries, cfg.EntryBytes, cfg.Consumers, cfg.ConsumeCount)}},
		wFanout: {
			{name: wFanoutP1, unit: "deliveries/s", durable: true, systems: []string{sysOurs, sysRedis}, run: fanout(1, fanoutP1Messages(cfg)),
				description: fanoutDesc(1, fanoutP1Messages(cfg))},
			{name: wFanoutP64, unit: "deliveries/s", durable: true, systems: []string{sysOurs, sysRedis}, run: fanout(64, cfg.FanoutMessages),
				description: fanoutDesc(64, cfg.FanoutMessages)},
		},
	}
	var out []workload
	for _, name := range []string{wXAddDurable, wXAddAsync, wXAddP64, wConsume, wFanout} {
		if slices.Contains(cfg.Workloads, name) {
			out = append(out, all[name]...)
		}
	}
	return out
}

// fanoutP1Messages is the message count at pipeline 1: a quarter of
// pipeline 64's, whose round trip per message costs more.
func fanoutP1Messages(cfg Config) int { return max(cfg.FanoutMessages/4, 1) }

// workloadReport is one workload's runs and figures.
type workloadReport struct {
	Name        string                      `json:"name"`
	Description string                      `json:"description"`
	Unit        string                      `json:"unit"`
	Runs        map[string][]result         `json:"runs"`
	Rate        map[string]benchkit.Summary `json:"per_s"`
	P50Us       map[string]benchkit.Summary `json:"p50_us"`
	P99Us       map[string]benchkit.Summary `json:"p99_us"`
	ServerCPUUs map[string]benchkit.Summary `json:"server_cpu_us_per_op"`
	// OursPerFsync summarizes ours' RecordsPerFsync where counted.
	OursPerFsync *benchkit.Summary `json:"ours_records_per_fsync,omitempty"`
	// VsRedis and VsJetStream are ours/peer of Rate per repeat pair.
	VsRedis     *benchkit.Summary `json:"vs_redis_ratio,omitempty"`
	VsJetStream *benchkit.Summary `json:"vs_jetstream_ratio,omitempty"`
	// NullVsRedis is the null server's rate over redis's: the most any
	// server's ratio can be here (xadd_durable).
	NullVsRedis *benchkit.Summary `json:"null_vs_redis_ratio,omitempty"`
	// NullDurableVsRedis is the durable null server's over redis's: the
	// most a server that fsyncs before answering can reach here.
	NullDurableVsRedis *benchkit.Summary `json:"null_durable_vs_redis_ratio,omitempty"`
}

type report struct {
	Name       string           `json:"name"`
	Started    string           `json:"started"`
	Workloads  []workloadReport `json:"workloads"`
	Conditions map[string]any   `json:"conditions"`
	Summary    benchkit.Pairs   `json:"summary"`
}

// Run runs every selected workload and writes the report.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return fmt.Errorf("redis-server is not installed (make deps): %w", err)
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("streams")
		if err != nil {
			return err
		}
		out = p
	}
	e, cleanup, err := newEnv(cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	rep := &report{Name: "streams", Started: began.UTC().Format(time.RFC3339)}
	load := loadAverage()
	var natsVersion string
	for _, w := range workloads(cfg) {
		wr, v, err := e.runWorkload(ctx, w)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		if v != "" {
			natsVersion = v
		}
		rep.Workloads = append(rep.Workloads, wr)
	}
	rep.Conditions = conditions(cfg, natsVersion, load, began)
	rep.Summary = summary(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	printTable(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("streams", rep.Summary))
	return nil
}

func (c Config) validate() error {
	switch {
	case c.Repeats <= 0:
		return fmt.Errorf("repeats %d: must be positive", c.Repeats)
	case c.MessageBytes < stampBytes:
		return fmt.Errorf("message bytes %d: at least %d (the sequence number and send time)", c.MessageBytes, stampBytes)
	case c.Duration <= 0:
		return fmt.Errorf("duration %s: must be positive", c.Duration)
	case len(c.Workloads) == 0:
		return fmt.Errorf("no workload selected")
	}
	return nil
}

// newEnv makes the run's temporary directory and builds our server and
// the JetStream peer into it (the latter only where a workload runs it).
func newEnv(cfg Config, log *slog.Logger) (*env, func(), error) {
	base, err := os.MkdirTemp(cfg.Dir, "bench-streams-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(base) }
	e := &env{cfg: cfg, base: base, log: log}
	log.Info("building examples/server")
	if e.ours, err = benchkit.BuildExample(base, "./examples/server", "ts-server"); err != nil {
		cleanup()
		return nil, nil, err
	}
	if slices.Contains(cfg.Workloads, wXAddDurable) || slices.Contains(cfg.Workloads, wXAddAsync) {
		log.Info("building tools/natsbench (GOWORK=off)")
		if e.nats, err = buildNatsbench(base); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	return e, cleanup, nil
}

// runWorkload runs w's systems alternately, cfg.Repeats times, each run
// on a fresh server and data directory, and summarizes them. It returns
// the JetStream server's version where JetStream ran.
func (e *env) runWorkload(ctx context.Context, w workload) (workloadReport, string, error) {
	wr := workloadReport{Name: w.name, Description: w.description, Unit: w.unit, Runs: map[string][]result{}}
	var natsVersion string
	err := benchkit.Alternate(ctx, e.cfg.Repeats, w.systems, func(ctx context.Context, r int, sys string) error {
		dir, err := e.runDir(w.name, sys, r)
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		var res result
		switch sys {
		case sysJetStream:
			var nr natsResult
			res, nr, err = e.runJetStream(ctx, dir, w.durable)
			natsVersion = nr.ServerVersion
		case sysNull, sysNullDurable:
			res, err = e.runNull(ctx, w, sys, dir)
		default:
			res, err = e.runRESP(ctx, w, sys, dir)
		}
		if err != nil {
			return err
		}
		res.Repeat = r + 1
		wr.Runs[sys] = append(wr.Runs[sys], res)
		attrs := []any{"workload", w.name, "system", sys, "repeat", fmt.Sprintf("%d/%d", r+1, e.cfg.Repeats),
			"per_s", math.Round(res.Rate), "p50_us", math.Round(res.P50Us), "p99_us", math.Round(res.P99Us)}
		if res.ServerCPUUs > 0 {
			attrs = append(attrs, "server_cpu_us", math.Round(res.ServerCPUUs*10)/10)
		}
		if res.RecordsPerFsync > 0 {
			attrs = append(attrs, "records_per_fsync", math.Round(res.RecordsPerFsync*10)/10)
		}
		e.log.Info("run", attrs...)
		return nil
	})
	if err != nil {
		return wr, "", err
	}
	wr.summarize()
	return wr, natsVersion, nil
}

// runNull runs w against a NullServer, a durable one logging to dir for
// sysNullDurable.
func (e *env) runNull(ctx context.Context, w workload, sys, dir string) (result, error) {
	start := benchkit.StartNullServer
	if sys == sysNullDurable {
		start = func() (*benchkit.NullServer, error) { return benchkit.StartDurableNullServer(dir) }
	}
	null, err := start()
	if err != nil {
		return result{}, err
	}
	defer null.Close()
	res, err := w.run(ctx, e, benchkit.ServerProcess{Addr: "127.0.0.1:" + strconv.Itoa(null.Port), PID: os.Getpid()})
	// It shares the benchmark's process: its CPU is not its own.
	res.ServerCPUUs = 0
	return res, err
}

// runRESP starts sys on dir, runs w against it and stops it.
func (e *env) runRESP(ctx context.Context, w workload, sys, dir string) (result, error) {
	p, err := e.startRESP(ctx, sys, dir, w.durable)
	if err != nil {
		return result{}, err
	}
	defer p.Stop()
	if sys != sysOurs || !w.countFsyncs {
		return w.run(ctx, e, p)
	}
	before, err := readLogCounters(ctx, p.HTTPAddr)
	if err != nil {
		return result{}, err
	}
	res, err := w.run(ctx, e, p)
	if err != nil {
		return result{}, err
	}
	after, err := readLogCounters(ctx, p.HTTPAddr)
	if err != nil {
		return result{}, err
	}
	res.RecordsPerFsync = perFsync(before, after)
	return res, nil
}

// summarize fills the summaries and ratios from the runs.
func (wr *workloadReport) summarize() {
	wr.Rate, wr.P50Us, wr.P99Us, wr.ServerCPUUs = map[string]benchkit.Summary{}, map[string]benchkit.Summary{}, map[string]benchkit.Summary{}, map[string]benchkit.Summary{}
	rates := map[string][]float64{}
	for sys, runs := range wr.Runs {
		col := func(f func(result) float64) benchkit.Summary { return benchkit.Summarize(benchkit.Column(runs, f)) }
		rates[sys] = benchkit.Column(runs, func(r result) float64 { return r.Rate })
		wr.Rate[sys] = benchkit.Summarize(rates[sys])
		wr.P50Us[sys] = col(func(r result) float64 { return r.P50Us })
		wr.P99Us[sys] = col(func(r result) float64 { return r.P99Us })
		if sys != sysJetStream && sys != sysNull && sys != sysNullDurable {
			wr.ServerCPUUs[sys] = col(func(r result) float64 { return r.ServerCPUUs })
		}
	}
	ratio := func(peer string) *benchkit.Summary {
		if len(rates[peer]) == 0 {
			return nil
		}
		s := benchkit.RatioSpread(rates[sysOurs], rates[peer], benchkit.HigherIsBetter)
		return &s
	}
	wr.VsRedis, wr.VsJetStream = ratio(sysRedis), ratio(sysJetStream)
	wr.NullVsRedis = ceiling(rates[sysNull], rates[sysRedis])
	wr.NullDurableVsRedis = ceiling(rates[sysNullDurable], rates[sysRedis])
	if perFsync := benchkit.Column(wr.Runs[sysOurs], func(r result) float64 { return r.RecordsPerFsync }); slices.ContainsFunc(perFsync, func(x float64) bool { return x > 0 }) {
		s := benchkit.Summarize(perFsync)
		wr.OursPerFsync = &s
	}
}

// ceiling is a null server's rates over redis's, nil without both.
func ceiling(null, redis []float64) *benchkit.Summary {
	if len(null) == 0 || len(redis) == 0 {
		return nil
	}
	s := benchkit.RatioSpread(null, redis, benchkit.HigherIsBetter)
	return &s
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute load ("" where there
// is none): on a shared machine, what else ran beside the benchmark.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func conditions(cfg Config, natsVersion, load string, began time.Time) map[string]any {
	return map[string]any{
		"host":            benchkit.HostConditions(),
		"load_average":    load + " (1, 5, 15 min, at the start)",
		"filesystem":      benchkit.Filesystem(cfg.Dir),
		"quick":           cfg.Quick,
		"repeats":         cfg.Repeats,
		"workloads":       cfg.Workloads,
		"clients":         cfg.Clients,
		"streams":         cfg.Streams,
		"entry_bytes":     cfg.EntryBytes,
		"duration":        cfg.Duration.String(),
		"warmup":          cfg.Warmup.String(),
		"consume_entries": cfg.ConsumeEntries,
		"consumers":       cfg.Consumers,
		"consume_count":   cfg.ConsumeCount,
		"subscribers":     cfg.Subscribers,
		"message_bytes":   cfg.MessageBytes,
		"messages_p64":    cfg.FanoutMessages,
		"messages_p1":     fanoutP1Messages(cfg),
		"redis":           redisVersion() + "; --save '' --appendonly yes --appendfsync always (durable: xadd_durable, consume, fanout) or everysec (xadd_async); a fresh server and directory per run",
		"ours":            fmt.Sprintf("examples/server built from the repository, its own process, a fresh data directory per run: its default (durable: each XADD acknowledged after fsync, group commit across connections) or --async=true --sync-interval %s (xadd_async), --log-level warn, its other flags their defaults", cfg.SyncInterval),
		"jetstream":       fmt.Sprintf("nats-server %s embedded in tools/natsbench (its own module, built with GOWORK=off, a subprocess per run, fresh store): one file-backed stream over subjects s.*, 1 replica; SyncAlways (xadd_durable) or the default sync, every 2m (xadd_async); its publishers (nats.go jetstream.Publish, waiting for the PubAck) share its process and reach it over loopback TCP", natsVersion),
		"client":          "ours and redis: one RESP2 client over bufio in the benchmark's process, the same code for both",
		"wall_time":       time.Since(began).Round(time.Millisecond).String(),
		"ours_commit":     benchkit.ModuleVersion("github.com/temporalstore/temporalstore-go/temporalstore"),
	}
}

func findWorkload(r *report, name string) *workloadReport {
	for i := range r.Workloads {
		if r.Workloads[i].Name == name {
			return &r.Workloads[i]
		}
	}
	return nil
}

// summary is the last line's pairs: the four goals first.
func summary(r *report) benchkit.Pairs {
	ratio := func(name, peer string) float64 {
		w := findWorkload(r, name)
		if w == nil {
			return math.NaN()
		}
		s := map[string]*benchkit.Summary{sysRedis: w.VsRedis, sysJetStream: w.VsJetStream}[peer]
		if s == nil {
			return math.NaN()
		}
		return s.Median
	}
	rate := func(name string) float64 {
		if w := findWorkload(r, name); w != nil {
			if s, ok := w.Rate[sysOurs]; ok {
				return s.Median
			}
		}
		return math.NaN()
	}
	p1, p64 := ratio(wFanoutP1, sysRedis), ratio(wFanoutP64, sysRedis)
	return benchkit.Pairs{
		benchkit.NewPair("xadd_durable_vs_redis_ratio", ratio(wXAddDurable, sysRedis), 2),
		benchkit.NewPair("xadd_durable_vs_jetstream_ratio", ratio(wXAddDurable, sysJetStream), 2),
		benchkit.NewPair("consume_vs_redis_ratio", ratio(wConsume, sysRedis), 2),
		// NaN when either is missing: math.Min returns NaN for a NaN.
		benchkit.NewPair("fanout8_vs_redis_ratio", math.Min(p1, p64), 2),
		benchkit.NewPair("fanout8_p1_vs_redis_ratio", p1, 2),
		benchkit.NewPair("fanout8_p64_vs_redis_ratio", p64, 2),
		benchkit.NewPair("xadd_durable_null_vs_redis_ratio", median(findWorkload(r, wXAddDurable), func(w *workloadReport) *benchkit.Summary { return w.NullVsRedis }), 2),
		benchkit.NewPair("xadd_durable_null_durable_vs_redis_ratio", median(findWorkload(r, wXAddDurable), func(w *workloadReport) *benchkit.Summary { return w.NullDurableVsRedis }), 2),
		benchkit.NewPair("xadd_async_vs_redis_ratio", ratio(wXAddAsync, sysRedis), 2),
		benchkit.NewPair("xadd_p64_durable_vs_redis_ratio", ratio(wXAddP64, sysRedis), 2),
		benchkit.NewPair("xadd_async_vs_jetstream_ratio", ratio(wXAddAsync, sysJetStream), 2),
		benchkit.NewPair("ours_xadd_durable_per_s", rate(wXAddDurable), 0),
		benchkit.NewPair("ours_consume_per_s", rate(wConsume), 0),
		benchkit.NewPair("ours_fanout8_p64_per_s", rate(wFanoutP64), 0),
	}
}

// median is the median of w's summary picked by of (NaN without).
func median(w *workloadReport, of func(*workloadReport) *benchkit.Summary) float64 {
	if w == nil || of(w) == nil {
		return math.NaN()
	}
	return of(w).Median
}
