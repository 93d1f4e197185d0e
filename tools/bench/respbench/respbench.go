package respbench

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Config is one `bench resp` run.
type Config struct {
	Requests  int
	Clients   int
	Sizes     []int
	Pipelines []int
	Repeats   int
	Dir       string
	Quick     bool
	Out       string
	// Procs, when above 0, is the GOMAXPROCS our server process runs
	// with; 0 leaves Go's default, one per CPU (of those it is bound to
	// when Split).
	Procs int
	// Split binds both servers to the first half of the CPUs and
	// redis-benchmark to the rest (benchkit.Split), where the machine has
	// two CPUs or more; otherwise they share every CPU.
	Split bool
	// SyncInterval is our async table's fsync interval. Default:
	// benchkit.EverysecInterval, as the Redis it runs beside.
	SyncInterval time.Duration
}

// DefaultConfig returns the full run, or with quick the reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{Requests: 200_000, Clients: 50, Sizes: []int{16, 256}, Pipelines: []int{1, 16}, Repeats: 3, Dir: os.TempDir(), SyncInterval: benchkit.EverysecInterval}
	if quick {
		c.Quick, c.Requests, c.Repeats = true, 30_000, 2
	}
	return c
}

type option = benchkit.Option[Config]

var opt = benchkit.NewOption[Config]

var options = []option{
	benchkit.SyncIntervalOption(func(c *Config) *time.Duration { return &c.SyncInterval }),
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 30,000 requests a run, 2 repeats", nil),
	opt("requests", "BENCH_REQUESTS", "n", "requests per redis-benchmark run (default 200000; durable runs use a tenth)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Requests = n
		return err
	}),
	opt("repeats", "BENCH_REPEATS", "n", "runs per system and case, alternating (default 3)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	opt("dir", "BENCH_DIR", "path", "base directory for the data of both servers (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/resp.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
	opt("split", "BENCH_SPLIT", "bool", "true: bind the servers to the first half of the CPUs and redis-benchmark to the rest (needs two CPUs and taskset), so the load generator never takes a server's core and each server has the same CPUs; default false: all share every CPU", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.Split = b
		return err
	}),
	opt("procs", "BENCH_PROCS", "n", "GOMAXPROCS of our server (default: one per CPU); 1 confines it to one core's worth of threads, as Redis's main thread", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 0 {
			err = fmt.Errorf("procs %d: not negative", n)
		}
		c.Procs = n
		return err
	}),
}

// PrintUsage writes the flags of `bench resp`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench resp" (each also read from the environment variable shown):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Needs redis-server and redis-benchmark on PATH (make deps).

Examples:
  cd tools && go run ./bench resp
  BENCH_QUICK=1 go run ./bench resp
`)
}

// Command runs `bench resp`.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "resp", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}

// result is one redis-benchmark run.
type result struct {
	Repeat    int     `json:"repeat"`
	OpsPerSec float64 `json:"ops_per_s"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	// ServerCPUUs and ClientCPUUs are the CPU time (user and system) per
	// request of the server and of redis-benchmark during the run; the
	// server's, and BusyPercent, are 0 where /proc has no per-process
	// times. BusyPercent is their sum over the run's wall
	// time on every CPU of the layout: near 100, the two processes have
	// the machine to themselves and no more, so the throughput ratio is
	// about the ratio of their summed CPU per request.
	ServerCPUUs float64 `json:"server_cpu_us_per_op"`
	// ServerMeanUs, ServerP50Us and ServerP99Us are, for ours, the time
	// the server spent on the run's calls by its own per-command
	// histograms (INFO commandstats and latencystats after a CONFIG
	// RESETSTAT; p50 and p99 are bucket upper bounds):
	// against redis-benchmark's latency, how much of it is the command
	// and how much is waiting around it.
	ServerMeanUs float64 `json:"server_mean_us,omitempty"`
	ServerP50Us  float64 `json:"server_p50_us,omitempty"`
	ServerP99Us  float64 `json:"server_p99_us,omitempty"`
	ClientCPUUs  float64 `json:"client_cpu_us_per_op"`
	BusyPercent  float64 `json:"busy_percent"`
}

// caseReport is one case: mode, test, size and pipeline.
type caseReport struct {
	Mode     string                      `json:"mode"`
	Test     string                      `json:"test"`
	Size     int                         `json:"value_bytes"`
	Pipeline int                         `json:"pipeline"`
	Runs     map[string][]result         `json:"runs"`
	Ops      map[string]benchkit.Summary `json:"ops_per_s"`
	P99      map[string]benchkit.Summary `json:"p99_ms"`
	Ratio    benchkit.Summary            `json:"ours_vs_redis_ratio"`
	// NullRatio is the null server's ops/s over Redis's (see nullServer):
	// about the most any server's ratio can be here, within the runs'
	// spread. Async mode only.
	NullRatio *benchkit.Summary `json:"null_vs_redis_ratio,omitempty"`
	// ServerCPU, ClientCPU and Busy summarize the runs' CPU figures per
	// system (see result).
	ServerCPU map[string]benchkit.Summary `json:"server_cpu_us_per_op"`
	// ServerTime summarizes our runs' server-side time per call (see
	// result.ServerMeanUs): mean_us, p50_us, p99_us.
	ServerTime map[string]benchkit.Summary `json:"ours_server_time,omitempty"`
	ClientCPU  map[string]benchkit.Summary `json:"client_cpu_us_per_op"`
	Busy       map[string]benchkit.Summary `json:"busy_percent"`
}

type report struct {
	Name       string         `json:"name"`
	Started    string         `json:"started"`
	Cases      []caseReport   `json:"cases"`
	Conditions map[string]any `json:"conditions"`
	Summary    benchkit.Pairs `json:"summary"`
}

// Modes.
const (
	modeAsync   = "async"   // redis everysec vs ours async
	modeDurable = "durable" // redis always vs ours durable
)

// startRedis starts redis-server with an append-only file synced per fsync
// policy, in dir, and returns its port and process ID.
func startRedis(ctx context.Context, dir, fsync string, cpus []int) (int, int, func(), error) {
	r, err := benchkit.StartRedisProcessOn(ctx, dir, cpus, "--save", "", "--appendonly", "yes", "--appendfsync", fsync)
	if err != nil {
		return 0, 0, nil, err
	}
	_, port, _ := net.SplitHostPort(r.Addr)
	n, _ := strconv.Atoi(port)
	return n, r.PID, r.Stop, nil
}

// oursServer is examples/server, built from the repository and run as its
// own process, as redis-server is: its default table async or durable, its
// other settings its defaults on this machine.
type oursServer struct {
	port int
	pid  int
	rdb  *redis.Client // for CONFIG RESETSTAT and INFO around each run
	stop func()
}

// startOurs runs bin on a fresh data directory, on cpus when given, with
// GOMAXPROCS procs when above 0.
func startOurs(ctx context.Context, bin, dir string, async bool, interval time.Duration, cpus []int, procs int) (*oursServer, error) {
	p, err := benchkit.StartServerProcess(ctx, bin, dir, cpus, procs, append(benchkit.AsyncArgs(async, interval), "--log-level", "warn")...)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(p.Addr)
	n, _ := strconv.Atoi(port)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 1})
	return &oursServer{port: n, pid: p.PID, rdb: rdb, stop: func() { rdb.Close(); p.Stop() }}, nil
}

// serverTime reads our server's own time for test's calls since the last
// CONFIG RESETSTAT: INFO commandstats's mean and INFO latencystats's p50 and
// p99 (bucket upper bounds), in microseconds.
func (o *oursServer) serverTime(ctx context.Context, test string) (mean, p50, p99 float64, err error) {
	stats, err := o.rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	lat, err := o.rdb.Info(ctx, "latencystats").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	mean, p50, p99, ok := parseServerTime(stats+"\n"+lat, test)
	if !ok {
		return 0, 0, 0, fmt.Errorf("INFO has no time for %s", test)
	}
	return mean, p50, p99, nil
}

// parseServerTime finds cmd's lines in INFO commandstats and latencystats
// text: cmdstat_<cmd>:calls=..,usec=..,... and
// latency_percentiles_usec_<cmd>:p50=..,p99=..,...
func parseServerTime(info, cmd string) (mean, p50, p99 float64, ok bool) {
	fields := func(prefix string) map[string]float64 {
		for line := range strings.Lines(info) {
			rest, found := strings.CutPrefix(strings.TrimSpace(line), prefix)
			if !found {
				continue
			}
			out := map[string]float64{}
			for kv := range strings.SplitSeq(rest, ",") {
				k, v, _ := strings.Cut(kv, "=")
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					out[k] = f
				}
			}
			return out
		}
		return nil
	}
	st, lat := fields("cmdstat_"+cmd+":"), fields("latency_percentiles_usec_"+cmd+":")
	if st == nil || lat == nil || st["calls"] <= 0 {
		return 0, 0, 0, false
	}
	return st["usec"] / st["calls"], lat["p50"], lat["p99"], true
}

// benchmark runs redis-benchmark against port and parses its CSV line. The
// server's CPU is read from /proc for process pid; the client's from its
// exit status. cpus are redis-benchmark's CPUs, ncpu those the layout uses.
func benchmark(ctx context.Context, port, pid int, test string, cfg Config, size, pipeline, requests int, cpus []int, ncpu int) (result, error) {
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-c", strconv.Itoa(cfg.Clients),
		"-n", strconv.Itoa(requests), "-d", strconv.Itoa(size), "-P", strconv.Itoa(pipeline),
		"-r", "100000", "-t", test, "--csv"}
	cmd := benchkit.OnCPUs(ctx, cpus, "redis-benchmark", args...)
	cpu0, cpuErr := benchkit.ProcessCPU(pid)
	began := time.Now()
	out, err := cmd.Output()
	wall := time.Since(began)
	cpu1, cpuErr1 := benchkit.ProcessCPU(pid)
	if err != nil {
		return result{}, fmt.Errorf("redis-benchmark %s: %w", strings.Join(args, " "), err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 {
		return result{}, fmt.Errorf("redis-benchmark output %q: %v", out, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	num := func(name string) float64 {
		i, ok := col[name]
		if !ok || i >= len(recs[1]) {
			return math.NaN()
		}
		f, _ := strconv.ParseFloat(recs[1][i], 64)
		return f
	}
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	res := result{OpsPerSec: num("rps"), P50Ms: num("p50_latency_ms"), P99Ms: num("p99_latency_ms"),
		ClientCPUUs: perRequest(client, requests)}
	if cpuErr == nil && cpuErr1 == nil {
		res.ServerCPUUs = perRequest(cpu1-cpu0, requests)
		res.BusyPercent = 100 * (cpu1 - cpu0 + client).Seconds() / (wall.Seconds() * float64(ncpu))
	}
	return res, nil
}

// perRequest is d over n requests, in microseconds.
func perRequest(d time.Duration, n int) float64 {
	return float64(d.Microseconds()) / float64(n)
}

// Run runs every case and writes the report.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	for _, bin := range []string{"redis-server", "redis-benchmark"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s is not installed (make deps): %w", bin, err)
		}
	}
	began := time.Now()
	cpus, layout, err := benchkit.Layout(cfg.Split, func(s benchkit.Split) []int { return s.ServerCPUs }, log)
	if err != nil {
		return err
	}
	// The CPUs the two processes have between them, for BusyPercent.
	ncpu := runtime.NumCPU()
	if len(cpus.ServerCPUs) > 0 && len(cpus.ClientCPUs) > 0 {
		ncpu = len(cpus.ServerCPUs) + len(cpus.ClientCPUs)
	}
	if cfg.Procs > 0 {
		log.Info("our server's GOMAXPROCS", "procs", cfg.Procs)
	}
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("resp")
		if err != nil {
			return err
		}
		out = p
	}
	base, err := os.MkdirTemp(cfg.Dir, "bench-resp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	bin, err := benchkit.BuildExample(base, "./examples/server", "ts-server")
	if err != nil {
		return err
	}
	rep := &report{Name: "resp", Started: began.UTC().Format(time.RFC3339)}
	for _, mode := range []string{modeAsync, modeDurable} {
		fsync := map[string]string{modeAsync: "everysec", modeDurable: "always"}[mode]
		rdir, odir := filepath.Join(base, mode+"-redis"), filepath.Join(base, mode+"-ours")
		if err := os.MkdirAll(rdir, 0o755); err != nil {
			return err
		}
		rport, rpid, stopRedis, err := startRedis(ctx, rdir, fsync, cpus.ServerCPUs)
		if err != nil {
			return err
		}
		ours, err := startOurs(ctx, bin, odir, mode == modeAsync, cfg.SyncInterval, cpus.ServerCPUs, cfg.Procs)
		if err != nil {
			stopRedis()
			return err
		}
		// The null server runs beside the async pairing: its ratio to
		// Redis bounds that pairing's.
		var null *benchkit.NullServer
		systems := []string{"redis", "ours"}
		if mode == modeAsync {
			if null, err = benchkit.StartNullServer(); err != nil {
				log.Warn("the null server does not run", "err", err)
			} else {
				systems = append(systems, "null")
			}
		}
		stopAll := func() {
			if null != nil {
				null.Close()
			}
			ours.stop()
			stopRedis()
		}
		requests := cfg.Requests
		pipelines, tests := cfg.Pipelines, []string{"set", "get"}
		if mode == modeDurable {
			// fsync-bound: fewer requests, SET at pipeline 1 is the case.
			requests, pipelines, tests = max(cfg.Requests/10, 1000), []int{1}, []string{"set"}
		}
		// Sizes outermost: each size's GETs read the values its SETs
		// just wrote, not the last size's.
		for _, size := range cfg.Sizes {
			for _, test := range tests {
				for _, p := range pipelines {
					cr := caseReport{Mode: mode, Test: test, Size: size, Pipeline: p, Runs: map[string][]result{}}
					err := benchkit.Alternate(ctx, cfg.Repeats, systems, func(ctx context.Context, r int, sys string) error {
						// The null server runs in this process.
						port, pid := map[string]int{"redis": rport, "ours": ours.port}[sys], map[string]int{"redis": rpid, "ours": ours.pid, "null": os.Getpid()}[sys]
						if sys == "null" {
							port = null.Port
							null.SetValueSize(size)
						}
						if sys == "ours" {
							if err := ours.rdb.ConfigResetStat(ctx).Err(); err != nil {
								return err
							}
						}
						res, err := benchmark(ctx, port, pid, test, cfg, size, p, requests, cpus.ClientCPUs, ncpu)
						if err != nil {
							return err
						}
						if sys == "ours" {
							if res.ServerMeanUs, res.ServerP50Us, res.ServerP99Us, err = ours.serverTime(ctx, test); err != nil {
								return err
							}
						}
						res.Repeat = r + 1
						cr.Runs[sys] = append(cr.Runs[sys], res)
						log.Info("run", "mode", mode, "test", test, "size", size, "pipeline", p, "system", sys,
							"repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats), "ops_per_s", math.Round(res.OpsPerSec), "p99_ms", res.P99Ms,
							"server_cpu_us", round1(res.ServerCPUUs), "client_cpu_us", round1(res.ClientCPUUs), "busy_percent", math.Round(res.BusyPercent))
						return nil
					})
					if err != nil {
						stopAll()
						return err
					}
					cr.summarize()
					ops := func(sys string) []float64 {
						return benchkit.Column(cr.Runs[sys], func(r result) float64 { return r.OpsPerSec })
					}
					cr.Ratio = benchkit.RatioSpread(ops("ours"), ops("redis"), benchkit.HigherIsBetter)
					if len(cr.Runs["null"]) > 0 {
						nr := benchkit.RatioSpread(ops("null"), ops("redis"), benchkit.HigherIsBetter)
						cr.NullRatio = &nr
					}
					rep.Cases = append(rep.Cases, cr)
				}
			}
		}
		stopAll()
	}
	procs := cmp.Or(cfg.Procs, ourProcs(cpus.ServerCPUs))
	rep.Conditions = map[string]any{
		"host":           benchkit.HostConditions(),
		"filesystem":     benchkit.Filesystem(cfg.Dir),
		"quick":          cfg.Quick,
		"clients":        cfg.Clients,
		"requests":       cfg.Requests,
		"repeats":        cfg.Repeats,
		"our_gomaxprocs": procs,
		"cpu_layout":     layout,
		"keyspace":       "redis-benchmark -r 100000",
		"redis":          "redis-server (Debian) --appendonly yes --appendfsync everysec (async mode) or always (durable mode), --save ''",
		"ours":           fmt.Sprintf("examples/server built from the repository and run as its own process (as redis-server is) with --async=true --sync-interval %s (the window Redis's everysec keeps; the server's default is 10ms) or --async=false (fsync before the reply), its other flags their defaults here: a default table of %d shards (temporalstore.SuggestedShards), a record cache of %d bytes (temporalstore.SuggestedCacheBytes(AvailableMemory()))", cfg.SyncInterval, temporalstore.SuggestedShards(procs), temporalstore.SuggestedCacheBytes(temporalstore.AvailableMemory())),
		"client":         "redis-benchmark from the same package, one process per run",
		"null":           "async mode: a RESP server in the benchmark's process that parses requests and replies (+OK, GET a value of the row's size) and does nothing else, in one epoll loop as Redis's; its ratio to Redis is about the most any server's can be with this client here, within the spread of single runs (±15 % on a shared machine)",
		"wall_time":      time.Since(began).Round(time.Millisecond).String(),
		"ours_commit":    benchkit.ModuleVersion("github.com/temporalstore/temporalstore-go/temporalstore"),
	}
	rep.Summary = summary(rep)
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	printTable(stdout, rep)
	fmt.Fprintln(stdout, benchkit.SummaryLine("resp", rep.Summary))
	return nil
}

// summarize fills the case's summaries from its runs.
func (c *caseReport) summarize() {
	c.Ops, c.P99 = map[string]benchkit.Summary{}, map[string]benchkit.Summary{}
	c.ServerCPU, c.ClientCPU, c.Busy = map[string]benchkit.Summary{}, map[string]benchkit.Summary{}, map[string]benchkit.Summary{}
	for sys := range c.Runs {
		col := func(f func(r result) float64) benchkit.Summary {
			return benchkit.Summarize(benchkit.Column(c.Runs[sys], f))
		}
		c.Ops[sys] = col(func(r result) float64 { return r.OpsPerSec })
		c.P99[sys] = col(func(r result) float64 { return r.P99Ms })
		c.ServerCPU[sys] = col(func(r result) float64 { return r.ServerCPUUs })
		if sys == "ours" {
			c.ServerTime = map[string]benchkit.Summary{
				"mean_us": col(func(r result) float64 { return r.ServerMeanUs }),
				"p50_us":  col(func(r result) float64 { return r.ServerP50Us }),
				"p99_us":  col(func(r result) float64 { return r.ServerP99Us }),
			}
		}
		c.ClientCPU[sys] = col(func(r result) float64 { return r.ClientCPUUs })
		c.Busy[sys] = col(func(r result) float64 { return r.BusyPercent })
	}
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func find(r *report, mode, test string, size, p int) *caseReport {
	for i := range r.Cases {
		c := &r.Cases[i]
		if c.Mode == mode && c.Test == test && c.Size == size && c.Pipeline == p {
			return c
		}
	}
	return nil
}

// summary reports the ratios at 16-byte values (the smallest size run),
// where the server's own cost dominates.
func summary(r *report) benchkit.Pairs {
	ratio := func(mode, test string, p int) float64 {
		if len(r.Cases) == 0 {
			return math.NaN()
		}
		size := r.Cases[0].Size
		if c := find(r, mode, test, size, p); c != nil {
			return c.Ratio.Median
		}
		return math.NaN()
	}
	nullRatio := func(test string, p int) float64 {
		if len(r.Cases) == 0 {
			return math.NaN()
		}
		if c := find(r, modeAsync, test, r.Cases[0].Size, p); c != nil && c.NullRatio != nil {
			return c.NullRatio.Median
		}
		return math.NaN()
	}
	return benchkit.Pairs{
		benchkit.NewPair("set_p1_ratio", ratio(modeAsync, "set", 1), 2),
		benchkit.NewPair("get_p1_ratio", ratio(modeAsync, "get", 1), 2),
		benchkit.NewPair("set_p16_ratio", ratio(modeAsync, "set", 16), 2),
		benchkit.NewPair("get_p16_ratio", ratio(modeAsync, "get", 16), 2),
		benchkit.NewPair("durable_set_p1_ratio", ratio(modeDurable, "set", 1), 2),
		benchkit.NewPair("null_set_p1_ratio", nullRatio("set", 1), 2),
		benchkit.NewPair("null_get_p1_ratio", nullRatio("get", 1), 2),
	}
}

func printTable(w io.Writer, r *report) {
	fmt.Fprintln(w, "redis-benchmark, medians over repeats; ratio = ours/redis ops/s (min..max over repeat pairs)")
	if l, ok := r.Conditions["cpu_layout"].(string); ok {
		fmt.Fprintln(w, "CPU layout:", l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttest\tsize\tP\tredis ops/s\tours ops/s\tratio\tredis p99 ms\tours p99 ms\t")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.0f\t%.2f (%.2f..%.2f)\t%.2f\t%.2f\t\n", c.Mode, c.Test, c.Size, c.Pipeline,
			c.Ops["redis"].Median, c.Ops["ours"].Median, c.Ratio.Median, c.Ratio.Min, c.Ratio.Max, c.P99["redis"].Median, c.P99["ours"].Median)
	}
	tw.Flush()
	fmt.Fprintln(w, "null server (parses and replies, nothing else; see the report's conditions): ops/s and its ratio to Redis: about the most any server's ratio can be here, within the runs' spread")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttest\tsize\tP\tnull ops/s\tnull/redis\tnull p99 ms\tnull server CPU µs\t")
	for _, c := range r.Cases {
		if c.NullRatio == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.2f (%.2f..%.2f)\t%.2f\t%.1f\t\n", c.Mode, c.Test, c.Size, c.Pipeline,
			c.Ops["null"].Median, c.NullRatio.Median, c.NullRatio.Min, c.NullRatio.Max, c.P99["null"].Median, c.ServerCPU["null"].Median)
	}
	tw.Flush()
	fmt.Fprintln(w, "ours: time in the server per call by its own histograms (mean, and p50/p99 as power-of-two bucket bounds, µs), against redis-benchmark's p99")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttest\tsize\tP\tserver mean µs\tserver p50 µs\tserver p99 µs\tclient p99 µs\t")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t\n", c.Mode, c.Test, c.Size, c.Pipeline,
			c.ServerTime["mean_us"].Median, c.ServerTime["p50_us"].Median, c.ServerTime["p99_us"].Median, 1000*c.P99["ours"].Median)
	}
	tw.Flush()
	fmt.Fprintln(w, "CPU per request in µs (user and system, medians) of the server and of redis-benchmark, and busy %: the share of the CPUs the two used")
	fmt.Fprintln(w, "together; near 100 they fill the machine, and ops/s is about CPUs / (server + client CPU per request)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttest\tsize\tP\tredis server\tclient\tbusy %\tours server\tclient\tbusy %\t")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.0f\t%.1f\t%.1f\t%.0f\t\n", c.Mode, c.Test, c.Size, c.Pipeline,
			c.ServerCPU["redis"].Median, c.ClientCPU["redis"].Median, c.Busy["redis"].Median,
			c.ServerCPU["ours"].Median, c.ClientCPU["ours"].Median, c.Busy["ours"].Median)
	}
	tw.Flush()
}

// ourProcs is our server's default GOMAXPROCS: one per CPU it may run on.
func ourProcs(cpus []int) int {
	if len(cpus) > 0 {
		return len(cpus)
	}
	return runtime.NumCPU()
}
