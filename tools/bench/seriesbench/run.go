package seriesbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The data every system holds.
const (
	seriesKeys   = 16     // series, spread over the table's shards
	seriesPoints = 10_000 // points each
	windowPoints = 100    // points a window read returns
	stepMs       = 1000   // one point a second
	counterKeys  = 64     // entities whose events are counted
	appendKeys   = 1024   // entities whose events are appended
	baseMs       = 1_764_460_800_000
)

// run is one measured run of one system on one case.
type run struct {
	Case, System string
	Repeat       int
	OpsPerSec    float64
	P50Ms, P99Ms float64
	// ServerCPUUsPerOp is the server process's CPU time (all threads,
	// user and system, from /proc) per operation over the measured
	// window: the cost the server itself pays, whatever the load
	// generator's, which shares this machine's cores. 0 where /proc has
	// no per-process times.
	ServerCPUUsPerOp float64 `json:"server_cpu_us_per_op"`
	// ClientCPUUsPerOp is this process's CPU time per operation over the
	// same window: what the go-redis load generator spends building
	// commands and decoding replies, on the same two cores.
	ClientCPUUsPerOp float64 `json:"client_cpu_us_per_op"`
}

// report is the JSON written at the end.
type report struct {
	Conditions benchkit.Host `json:"conditions"`
	// Layout is where the servers and the load generator ran.
	Layout  string         `json:"cpu_layout"`
	Config  Config         `json:"config"`
	Runs    []run          `json:"runs"`
	Ratios  map[string]any `json:"ratios"`
	Rollup  rollupResult   `json:"rollup"`
	Summary benchkit.Pairs `json:"summary"`
}

type rollupResult struct {
	RollupNs, ScanNs benchkit.Summary
	Speedup          benchkit.Summary
}

// server is one system as the load sees it: a go-redis client per
// connection, and the command that does one operation.
type target struct {
	addr string
	pid  int // the server's process, for its CPU time
	op   func(ctx context.Context, c *redis.Client, rng *rand.Rand) error
}

// caseNames are the client cases, in the order they run.
var caseNames = []string{"window", "counter", "append"}

// Run runs every case and writes the report.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return fmt.Errorf("redis-server is not installed (make deps): %w", err)
	}
	began := time.Now()
	cpus, layout, err := benchkit.Layout(cfg.Split, func(s benchkit.Split) []int { return s.ClientCPUs }, log)
	if err != nil {
		return err
	}
	base, err := os.MkdirTemp(cfg.Dir, "seriesbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	ours, closeOurs, err := startOurs(ctx, filepath.Join(base, "ours"), cfg.SyncInterval, cpus.ServerCPUs, cfg.Procs)
	if err != nil {
		return err
	}
	defer closeOurs()
	redisDirs := []string{filepath.Join(base, "redis-everysec"), filepath.Join(base, "redis-always")}
	for _, d := range redisDirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	redisEverysec, err := benchkit.StartRedisProcessOn(ctx, redisDirs[0], cpus.ServerCPUs, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec")
	if err != nil {
		return err
	}
	defer redisEverysec.Stop()
	redisAlways, err := benchkit.StartRedisProcessOn(ctx, redisDirs[1], cpus.ServerCPUs, "--save", "", "--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		return err
	}
	defer redisAlways.Stop()

	log.Info("loading", "series", seriesKeys, "points", seriesPoints)
	if err := load(ctx, ours.async.addr, redisEverysec.Addr); err != nil {
		return err
	}

	cases := []struct {
		name    string
		systems map[string]target
	}{
		{"window", map[string]target{
			"ours":  {ours.async.addr, ours.async.pid, windowOurs},
			"redis": {redisEverysec.Addr, redisEverysec.PID, windowRedis},
		}},
		{"counter", map[string]target{
			"ours":  {ours.async.addr, ours.async.pid, counterOurs},
			"redis": {redisEverysec.Addr, redisEverysec.PID, counterRedis},
		}},
		{"append", map[string]target{
			"ours":  {ours.durable.addr, ours.durable.pid, appendOurs},
			"redis": {redisAlways.Addr, redisAlways.PID, appendRedis},
		}},
	}
	var runs []run
	for _, cs := range cases {
		if len(cfg.Cases) > 0 && !slices.Contains(cfg.Cases, cs.name) {
			continue
		}
		err := benchkit.Alternate(ctx, cfg.Repeats, []string{"ours", "redis"}, func(ctx context.Context, repeat int, system string) error {
			r, err := measure(ctx, cfg, cs.systems[system])
			if err != nil {
				return err
			}
			r.Case, r.System, r.Repeat = cs.name, system, repeat+1
			log.Info("run", "case", cs.name, "system", system, "repeat", fmt.Sprintf("%d/%d", repeat+1, cfg.Repeats),
				"ops_per_s", int(r.OpsPerSec), "p99_ms", benchkit.FormatNumber(r.P99Ms, 3))
			runs = append(runs, r)
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", cs.name, err)
		}
	}

	log.Info("rollup against scan", "points", seriesPoints)
	rr, err := rollupVsScan(ctx, filepath.Join(base, "rollup"), cfg.Repeats)
	if err != nil {
		return err
	}

	rep := report{Conditions: benchkit.HostConditions(), Layout: layout, Config: cfg, Runs: runs, Rollup: rr, Ratios: map[string]any{}}
	ops := func(r run) float64 { return r.OpsPerSec }
	ratio := func(name string) benchkit.Summary {
		s := benchkit.RatioSpread(field(runs, name, "ours", ops), field(runs, name, "redis", ops), benchkit.HigherIsBetter)
		putRatio(rep.Ratios, name, s)
		return s
	}
	// Redis's server CPU per operation over ours: above 1, our server
	// spends less on the same work.
	cpuRatio := func(name string) benchkit.Summary {
		s := benchkit.RatioSpread(field(runs, name, "ours", serverCPU), field(runs, name, "redis", serverCPU), benchkit.LowerIsBetter)
		putRatio(rep.Ratios, name+"_server_cpu", s)
		return s
	}
	window, counter, appendR := ratio("window"), ratio("counter"), ratio("append")
	shared := len(cpus.ServerCPUs) == 0
	windowCeiling, counterCeiling := sharedCPUCeiling(runs, "window", shared), sharedCPUCeiling(runs, "counter", shared)
	for key, c := range map[string]float64{"window_shared_cpu_ceiling": windowCeiling, "counter_shared_cpu_ceiling": counterCeiling} {
		if !math.IsNaN(c) { // JSON has no NaN
			rep.Ratios[key] = c
		}
	}
	rep.Summary = benchkit.Pairs{
		benchkit.NewPair("window_vs_redis_ratio", window.Median, 2),
		benchkit.NewPair("counter_vs_redis_ratio", counter.Median, 2),
		benchkit.NewPair("rollup_speedup_ratio", rr.Speedup.Median, 1),
		benchkit.NewPair("durable_append_vs_redis_ratio", appendR.Median, 2),
		benchkit.NewPair("window_ratio_min", window.Min, 2),
		benchkit.NewPair("counter_ratio_min", counter.Min, 2),
		benchkit.NewPair("window_server_cpu_ratio", cpuRatio("window").Median, 2),
		benchkit.NewPair("counter_server_cpu_ratio", cpuRatio("counter").Median, 2),
		benchkit.NewPair("append_server_cpu_ratio", cpuRatio("append").Median, 2),
		benchkit.NewPair("window_shared_cpu_ceiling", windowCeiling, 2),
		benchkit.NewPair("counter_shared_cpu_ceiling", counterCeiling, 2),
	}
	out := cfg.Out
	if out == "" {
		if out, err = benchkit.ResultPath("series"); err != nil {
			return err
		}
	}
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "CPU layout:", layout)
	printTable(stdout, runs, rep, rr)
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	fmt.Fprintln(stdout, benchkit.SummaryLine("series", rep.Summary))
	return nil
}

// putRatio records s under key unless it is NaN, which it is for a case
// left out by --cases: JSON has no NaN.
func putRatio(ratios map[string]any, key string, s benchkit.Summary) {
	if !math.IsNaN(s.Median) {
		ratios[key] = s
	}
}

// oursAddrs are our two servers: RESP address and process.
type oursAddrs struct{ async, durable oursServer }

type oursServer struct {
	addr string
	pid  int
}

// startOurs runs examples/server twice, as its own process like
// redis-server: one whose default table is async (reads, counters), one
// durable (appends).
func startOurs(ctx context.Context, dir string, interval time.Duration, cpus []int, procs int) (oursAddrs, func(), error) {
	bin, err := benchkit.BuildExample(dir, "./examples/server", "ts-server")
	if err != nil {
		return oursAddrs{}, nil, err
	}
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	var servers []oursServer
	for _, async := range []bool{true, false} {
		data := filepath.Join(dir, fmt.Sprintf("server-async-%v", async))
		p, err := benchkit.StartServerProcess(ctx, bin, data, cpus, procs, append(benchkit.AsyncArgs(async, interval), "--log-level", "warn")...)
		if err != nil {
			stopAll()
			return oursAddrs{}, nil, err
		}
		stops = append(stops, p.Stop)
		servers = append(servers, oursServer{p.Addr, p.PID})
	}
	return oursAddrs{async: servers[0], durable: servers[1]}, stopAll, nil
}

func value(i int) string { return strconv.Itoa(i*7919%100_000 + 1) }

// load writes the same points to our series and to Redis's sorted sets
// (member "<ts>:<value>", score ts), pipelined.
func load(ctx context.Context, oursAddr, redisAddr string) error {
	for _, addr := range []string{oursAddr, redisAddr} {
		c := redis.NewClient(&redis.Options{Addr: addr})
		for k := range seriesKeys {
			p := c.Pipeline()
			for i := range seriesPoints {
				ts := int64(baseMs + i*stepMs)
				if addr == oursAddr {
					p.Do(ctx, "FAPPEND", fmt.Sprint("f:", k), ts, value(i))
				} else {
					p.ZAdd(ctx, fmt.Sprint("z:", k), redis.Z{Score: float64(ts), Member: fmt.Sprintf("%d:%s", ts, value(i))})
				}
			}
			if _, err := p.Exec(ctx); err != nil {
				c.Close()
				return fmt.Errorf("load %s: %w", addr, err)
			}
		}
		c.Close()
	}
	return nil
}

// windowStart is a random window of windowPoints points.
func windowStart(rng *rand.Rand) (key int, start, end int64) {
	i := rng.IntN(seriesPoints - windowPoints)
	start = int64(baseMs + i*stepMs)
	return rng.IntN(seriesKeys), start, start + (windowPoints-1)*stepMs
}

func windowOurs(ctx context.Context, c *redis.Client, rng *rand.Rand) error {
	k, s, e := windowStart(rng)
	cmd := redis.NewKeyValueSliceCmd(ctx, "FQUERY", fmt.Sprint("f:", k), s, e)
	_ = c.Process(ctx, cmd)
	v, err := cmd.Result()
	if err == nil && len(v) != windowPoints {
		err = fmt.Errorf("FQUERY returned %d points", len(v))
	}
	return err
}

func windowRedis(ctx context.Context, c *redis.Client, rng *rand.Rand) error {
	k, s, e := windowStart(rng)
	v, err := c.ZRangeByScoreWithScores(ctx, fmt.Sprint("z:", k), &redis.ZRangeBy{Min: strconv.FormatInt(s, 10), Max: strconv.FormatInt(e, 10)}).Result()
	if err == nil && len(v) != windowPoints {
		err = fmt.Errorf("ZRANGEBYSCORE returned %d members", len(v))
	}
	return err
}

// counterOurs records an event and reads the last hour's count in one
// command (per-minute buckets).
func counterOurs(ctx context.Context, c *redis.Client, rng *rand.Rand) error {
	now := time.Now().UnixMilli()
	cmd := redis.NewIntCmd(ctx, "HSETANDGETOPT", fmt.Sprint("e:", rng.IntN(counterKeys)), now, 1, now-3_599_999, now, "sum", 60_000, 3_600_000, "")
	_ = c.Process(ctx, cmd)
	n, err := cmd.Result()
	if err == nil && n < 1 {
		err = errors.New("the count lost this event")
	}
	return err
}

// counterRedis is Redis's common pattern: INCR and EXPIRE this minute's
// bucket key and MGET the last 60, in one pipelined round trip, summed
// here.
func counterRedis(ctx context.Context, c *redis.Client, rng *rand.Rand) error {
	entity := rng.IntN(counterKeys)
	minute := time.Now().Unix() / 60
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = fmt.Sprintf("e:%d:%d", entity, minute-int64(i))
	}
	p := c.Pipeline()
	p.Incr(ctx, keys[0])
	p.Expire(ctx, keys[0], time.Hour)
	mget := p.MGet(ctx, keys...)
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	var sum int64
	for _, v := range mget.Val() {
		if s, ok := v.(string); ok {
			n, _ := strconv.ParseInt(s, 10, 64)
			sum += n
		}
	}
	if sum < 1 {
		return errors.New("the count lost this event")
	}
	return nil
}

func appendOurs(ctx context.Context, c *redis.Client, rng *rand.Rand) error {
	cmd := redis.NewStatusCmd(ctx, "FAPPEND", fmt.Sprint("a:", rng.IntN(appendKeys)), time.Now().UnixNano()/1000, "1")
	_ = c.Process(ctx, cmd)
	return cmd.Err()
}

func appendRedis(ctx context.Context, c *redis.Client, rng *rand.Rand) error {
	ts := time.Now().UnixNano() / 1000
	return c.ZAdd(ctx, fmt.Sprint("a:", rng.IntN(appendKeys)), redis.Z{Score: float64(ts), Member: fmt.Sprint(ts, ":1")}).Err()
}

// measure runs t's operation from cfg.Clients connections for Warmup,
// then for Duration, and returns the measured throughput and latencies.
func measure(ctx context.Context, cfg Config, t target) (run, error) {
	var (
		mu    sync.Mutex
		lats  []time.Duration
		first error
	)
	stopWarm := time.Now().Add(cfg.Warmup)
	stop := stopWarm.Add(cfg.Duration)
	var cpu, self [2]time.Duration
	var cpuErr error
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for i, at := range []time.Time{stopWarm, stop} {
			time.Sleep(time.Until(at))
			if cpu[i], cpuErr = benchkit.ProcessCPU(t.pid); cpuErr != nil {
				return
			}
			if self[i], cpuErr = benchkit.ProcessCPU(os.Getpid()); cpuErr != nil {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		c := redis.NewClient(&redis.Options{Addr: t.addr, PoolSize: 1})
		rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
		wg.Go(func() {
			defer c.Close()
			var mine []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				if t0.After(stop) {
					break
				}
				if err := t.op(ctx, c, rng); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
				if t0.After(stopWarm) {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	<-sampled
	if first != nil {
		return run{}, first
	}
	if err := ctx.Err(); err != nil {
		return run{}, err
	}
	ps := benchkit.DurationPercentiles(lats, 50, 99)
	r := run{
		OpsPerSec: float64(len(lats)) / cfg.Duration.Seconds(),
		P50Ms:     float64(ps[0]) / 1e6, P99Ms: float64(ps[1]) / 1e6,
	}
	if cpuErr == nil && len(lats) > 0 {
		r.ServerCPUUsPerOp = float64((cpu[1] - cpu[0]).Microseconds()) / float64(len(lats))
		r.ClientCPUUsPerOp = float64((self[1] - self[0]).Microseconds()) / float64(len(lats))
	}
	return r, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// rollupVsScan times an aggregate over a whole 10,000-point series, in
// process, on a table with the rollup ladder and on one without,
// alternating.
func rollupVsScan(ctx context.Context, dir string, repeats int) (rollupResult, error) {
	e, err := local.Open(ctx, temporalstore.Options{Dir: dir, Logger: slog.New(slog.DiscardHandler), MaintenanceInterval: temporalstore.Disabled})
	if err != nil {
		return rollupResult{}, err
	}
	defer e.Close()
	var pts []temporalstore.Point
	for i := range seriesPoints {
		pts = append(pts, temporalstore.Point{TS: int64(baseMs + i*stepMs), Value: []byte(value(i))})
	}
	tables := []string{"rollup", "scan"}
	for _, t := range tables {
		if err := e.CreateTable(ctx, "agg", t, temporalstore.TableOptions{Async: true, NoRollup: t == "scan"}); err != nil {
			return rollupResult{}, err
		}
		if _, err := e.Execute(ctx, temporalstore.Command{Namespace: "agg", Table: t, Kind: temporalstore.KindFAppend, Key: []byte("s"), Points: pts}); err != nil {
			return rollupResult{}, err
		}
	}
	agg := func(table string) (time.Duration, int64, error) {
		c := temporalstore.Command{Namespace: "agg", Table: table, Kind: temporalstore.KindFAgg, Key: []byte("s"),
			Start: baseMs, End: baseMs + seriesPoints*stepMs, Aggregator: "sum"}
		const n = 200
		var sum int64
		t0 := time.Now()
		for range n {
			r, err := e.Execute(ctx, c)
			if err != nil {
				return 0, 0, err
			}
			sum = r.Int
		}
		return time.Since(t0) / n, sum, nil
	}
	var rollupNs, scanNs []float64
	for range repeats {
		ro, a, err := agg("rollup")
		if err != nil {
			return rollupResult{}, err
		}
		sc, b, err := agg("scan")
		if err != nil {
			return rollupResult{}, err
		}
		if a != b {
			return rollupResult{}, fmt.Errorf("rollup sum %d, scan sum %d", a, b)
		}
		rollupNs, scanNs = append(rollupNs, float64(ro.Nanoseconds())), append(scanNs, float64(sc.Nanoseconds()))
	}
	return rollupResult{
		RollupNs: benchkit.Summarize(rollupNs), ScanNs: benchkit.Summarize(scanNs),
		Speedup: benchkit.RatioSpread(rollupNs, scanNs, benchkit.LowerIsBetter),
	}, nil
}

// field is f of the runs of case name by system sys, in run order.
func field(runs []run, name, sys string, f func(run) float64) []float64 {
	var xs []float64
	for _, r := range runs {
		if r.Case == name && r.System == sys {
			xs = append(xs, f(r))
		}
	}
	return xs
}

// sharedCPUCeiling is the ratio a server spending no CPU could reach in
// case name where the servers and the load generator share the CPUs and
// fill them: requests per second then follow the summed CPU per request,
// so the bound is (Redis's server + its client CPU) / our client CPU, from
// the medians. NaN in the split layout, where it does not apply.
func sharedCPUCeiling(runs []run, name string, shared bool) float64 {
	if !shared {
		return math.NaN()
	}
	if c := median(runs, name, "ours", clientCPU); c > 0 {
		return (median(runs, name, "redis", serverCPU) + median(runs, name, "redis", clientCPU)) / c
	}
	return math.NaN()
}

// median is the median of f over the runs of system sys in case name.
func median(runs []run, name, sys string, f func(run) float64) float64 {
	return benchkit.Summarize(field(runs, name, sys, f)).Median
}

func serverCPU(r run) float64 { return r.ServerCPUUsPerOp }
func clientCPU(r run) float64 { return r.ClientCPUUsPerOp }

func printTable(w io.Writer, runs []run, rep report, rr rollupResult) {
	fmt.Fprintln(w, "medians over repeats; ratio = ours/redis ops/s, server cpu ratio = redis/ours server CPU µs per op (min..max over repeat pairs)")
	fmt.Fprintf(w, "%9s %12s %10s %10s %10s %12s %10s %10s %10s %20s %20s\n", "case", "ours ops/s", "p99 ms", "cpu µs/op", "client µs", "redis ops/s", "p99 ms", "cpu µs/op", "client µs", "ratio", "server cpu ratio")
	for _, name := range []string{"window", "counter", "append"} {
		if _, ran := rep.Ratios[name]; !ran {
			continue
		}
		med := func(sys string, f func(run) float64) float64 { return median(runs, name, sys, f) }
		ops := func(r run) float64 { return r.OpsPerSec }
		p99 := func(r run) float64 { return r.P99Ms }
		spread := func(key string) string {
			// Missing when the ratio is NaN: a run too short for the
			// process clock (10 ms ticks) measures a server CPU of 0.
			s, ok := rep.Ratios[key].(benchkit.Summary)
			if !ok {
				return "n/a"
			}
			return fmt.Sprintf("%.2f (%.2f..%.2f)", s.Median, s.Min, s.Max)
		}
		fmt.Fprintf(w, "%9s %12.0f %10.2f %10.1f %10.1f %12.0f %10.2f %10.1f %10.1f %20s %20s\n", name,
			med("ours", ops), med("ours", p99), med("ours", serverCPU), med("ours", clientCPU), med("redis", ops), med("redis", p99), med("redis", serverCPU), med("redis", clientCPU),
			spread(name), spread(name+"_server_cpu"))
	}
	for _, name := range []string{"window", "counter"} {
		if c, ok := rep.Ratios[name+"_shared_cpu_ceiling"].(float64); ok {
			fmt.Fprintf(w, "%s: shared-CPU ceiling, the ratio a server spending no CPU could reach while both processes fill the CPUs ((redis server + client) / our client µs): %.2f\n", name, c)
		}
	}
	fmt.Fprintf(w, "aggregate over %d points: rollup %.1f µs, scan %.1f µs, speedup %.1f× (%.1f..%.1f)\n",
		seriesPoints, rr.RollupNs.Median/1e3, rr.ScanNs.Median/1e3, rr.Speedup.Median, rr.Speedup.Min, rr.Speedup.Max)
}
