// Package scriptbench is `bench script`: "EVALSHA token bucket, 50
// clients": the same redis-benchmark, sending EVALSHA of a token-bucket
// script over a few thousand keys, against redis-server 7 and against our
// RESP server (examples/server, its own process), alternating, repeated.
//
// The script is a one-key token bucket (a hash of tokens and the last
// refill, the time from the server's TIME, a PEXPIRE), as rate limiters
// run it; both servers load it with SCRIPT LOAD first. Redis runs with
// appendonly and appendfsync everysec, ours on an async table synced every
// second (the same window of acknowledged writes). The ratio is ours/redis
// ops/s, its spread the min and max over repeat pairs. In the same run each
// server also runs TokenBucketLuaOnly, the script's Lua without its
// commands: ours on it is the ceiling of ours on the script.
package scriptbench

import (
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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// TokenBucket is the script measured: KEYS[1] the bucket, ARGV rate
// (tokens a second), capacity, tokens requested. It returns whether the
// request is allowed and the tokens left.
const TokenBucket = `local key = KEYS[1]
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(b[1]) or capacity
local ts = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HSET', key, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', key, math.ceil(capacity / rate * 1000) * 2)
return {allowed, math.floor(tokens)}
`

// TokenBucketLuaOnly is TokenBucket with its four redis.call replaced by
// the values they return on a bucket's first call (TIME as a fixed time,
// HMGET as two nils) and by the argument tables the other two would take:
// the script's Lua alone. Our server running it is the ceiling of ours on
// TokenBucket, whatever its commands cost: the interpreter's share.
const TokenBucketLuaOnly = `local key = KEYS[1]
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local t = {'1764999999', '123456'}
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = {false, false}
local tokens = tonumber(b[1]) or capacity
local ts = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
local hset = {'HSET', key, 'tokens', tokens, 'ts', now}
local pexpire = {'PEXPIRE', key, math.ceil(capacity / rate * 1000) * 2}
return {allowed, math.floor(tokens)}
`

// The systems of a run: each server with the script, and with its Lua
// alone.
const (
	sysRedis        = "redis"
	sysOurs         = "ours"
	sysRedisLuaOnly = "redis-lua-only"
	sysOursLuaOnly  = "ours-lua-only"
)

// Config is one `bench script` run.
type Config struct {
	Requests, Clients, Keys, Repeats int
	Dir, Out                         string
	Quick                            bool
	SyncInterval                     time.Duration
}

// DefaultConfig returns the full run, or with quick the reduced one.
func DefaultConfig(quick bool) Config {
	c := Config{Requests: 200_000, Clients: 50, Keys: 5000, Repeats: 3, Dir: os.TempDir(), SyncInterval: benchkit.EverysecInterval}
	if quick {
		c.Quick, c.Requests, c.Repeats = true, 30_000, 3
	}
	return c
}

var opt = benchkit.NewOption[Config]

var options = []benchkit.Option[Config]{
	benchkit.SyncIntervalOption(func(c *Config) *time.Duration { return &c.SyncInterval }),
	opt("quick", "BENCH_QUICK", "bool", "reduced run: 30,000 requests a run, 3 repeats", nil),
	benchkit.PositiveIntOption("requests", "BENCH_REQUESTS", "requests per redis-benchmark run (default 200000)", func(c *Config) *int { return &c.Requests }),
	benchkit.PositiveIntOption("clients", "BENCH_CLIENTS", "connections (default 50)", func(c *Config) *int { return &c.Clients }),
	benchkit.PositiveIntOption("keys", "BENCH_KEYS", "buckets, drawn at random per call (default 5000)", func(c *Config) *int { return &c.Keys }),
	benchkit.PositiveIntOption("repeats", "BENCH_REPEATS", "runs per system, alternating (default 3)", func(c *Config) *int { return &c.Repeats }),
	opt("dir", "BENCH_DIR", "path", "base directory for the data of both servers (default $TMPDIR or /tmp)", func(c *Config, v string) error {
		c.Dir = v
		return nil
	}),
	opt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/script.json)", func(c *Config, v string) error {
		c.Out = v
		return nil
	}),
}

// PrintUsage writes the flags of `bench script`.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Flags of "bench script" (each also read from the environment variable shown):
`)
	benchkit.PrintOptions(w, options)
	fmt.Fprint(w, `
Needs redis-server and redis-benchmark on PATH (make deps).

Examples:
  cd tools && go run ./bench script
  BENCH_QUICK=1 go run ./bench script
`)
}

// Command runs `bench script`.
func Command(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[Config]{
		Name: "script", Options: options, Defaults: DefaultConfig, Usage: PrintUsage, Run: Run,
	}, args, stdout, stderr)
}

type result struct {
	Repeat    int     `json:"repeat"`
	OpsPerSec float64 `json:"ops_per_s"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	// ServerCPUUs is the server's CPU time per call, µs.
	ServerCPUUs float64 `json:"server_cpu_us"`
}

type report struct {
	Name      string                      `json:"name"`
	Started   string                      `json:"started"`
	Scenario  string                      `json:"scenario"`
	Runs      map[string][]result         `json:"runs"`
	Ops       map[string]benchkit.Summary `json:"ops_per_s"`
	P99       map[string]benchkit.Summary `json:"p99_ms"`
	ServerCPU map[string]benchkit.Summary `json:"server_cpu_us"`
	Ratio     benchkit.Summary            `json:"ratio"`
	// Ceiling is ours running the script's Lua alone over redis running
	// the script.
	Ceiling    benchkit.Summary `json:"ceiling_ratio"`
	Conditions map[string]any   `json:"conditions"`
	Summary    benchkit.Pairs   `json:"summary"`
}

// Run runs the scenario and writes the report.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	for _, bin := range []string{"redis-server", "redis-benchmark"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s is not installed (make deps): %w", bin, err)
		}
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("script")
		if err != nil {
			return err
		}
		out = p
	}
	base, err := os.MkdirTemp(cfg.Dir, "bench-script-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	bin, err := benchkit.BuildExample(base, "./examples/server", "ts-server")
	if err != nil {
		return err
	}
	rdir, odir := filepath.Join(base, "redis"), filepath.Join(base, "ours")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return err
	}
	rp, err := benchkit.StartRedisProcessOn(ctx, rdir, nil, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec")
	if err != nil {
		return err
	}
	defer rp.Stop()
	op, err := benchkit.StartServerProcess(ctx, bin, odir, nil, 0, append(benchkit.AsyncArgs(true, cfg.SyncInterval), "--log-level", "warn")...)
	if err != nil {
		return err
	}
	defer op.Stop()
	procs := map[string]benchkit.ServerProcess{sysRedis: rp, sysOurs: op, sysRedisLuaOnly: rp, sysOursLuaOnly: op}
	scripts := map[string]string{sysRedis: TokenBucket, sysOurs: TokenBucket, sysRedisLuaOnly: TokenBucketLuaOnly, sysOursLuaOnly: TokenBucketLuaOnly}
	systems := []string{sysRedis, sysOurs, sysRedisLuaOnly, sysOursLuaOnly}
	shas := map[string]string{}
	for _, sys := range systems {
		c := redis.NewClient(&redis.Options{Addr: procs[sys].Addr})
		s, err := c.ScriptLoad(ctx, scripts[sys]).Result()
		if err == nil {
			// A script that fails would be measured failing.
			err = c.EvalSha(ctx, s, []string{"tb:check"}, 100, 50, 1).Err()
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: the token bucket script: %w", sys, err)
		}
		shas[sys] = s
	}
	rep := &report{Name: "script", Started: began.UTC().Format(time.RFC3339), Runs: map[string][]result{},
		Scenario: fmt.Sprintf("EVALSHA token bucket, %d clients, %d keys", cfg.Clients, cfg.Keys)}
	err = benchkit.Alternate(ctx, cfg.Repeats, systems, func(ctx context.Context, r int, sys string) error {
		res, err := benchmark(ctx, procs[sys], shas[sys], cfg)
		if err != nil {
			return err
		}
		res.Repeat = r + 1
		rep.Runs[sys] = append(rep.Runs[sys], res)
		log.Info("run", "system", sys, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats), "ops_per_s", math.Round(res.OpsPerSec),
			"p99_ms", res.P99Ms, "server_cpu_us", math.Round(res.ServerCPUUs*10)/10)
		return nil
	})
	if err != nil {
		return err
	}
	rep.Ops, rep.P99, rep.ServerCPU = map[string]benchkit.Summary{}, map[string]benchkit.Summary{}, map[string]benchkit.Summary{}
	ops := map[string][]float64{}
	for sys, runs := range rep.Runs {
		ops[sys] = benchkit.Column(runs, func(r result) float64 { return r.OpsPerSec })
		rep.Ops[sys] = benchkit.Summarize(ops[sys])
		rep.P99[sys] = benchkit.Summarize(benchkit.Column(runs, func(r result) float64 { return r.P99Ms }))
		rep.ServerCPU[sys] = benchkit.Summarize(benchkit.Column(runs, func(r result) float64 { return r.ServerCPUUs }))
	}
	rep.Ratio = benchkit.RatioSpread(ops[sysOurs], ops[sysRedis], benchkit.HigherIsBetter)
	rep.Ceiling = benchkit.RatioSpread(ops[sysOursLuaOnly], ops[sysRedis], benchkit.HigherIsBetter)
	rep.Conditions = map[string]any{
		"host":        benchkit.HostConditions(),
		"filesystem":  benchkit.Filesystem(cfg.Dir),
		"quick":       cfg.Quick,
		"clients":     cfg.Clients,
		"keys":        cfg.Keys,
		"requests":    cfg.Requests,
		"repeats":     cfg.Repeats,
		"script":      TokenBucket,
		"ceiling":     "ours-lua-only and redis-lua-only run TokenBucketLuaOnly, the script's Lua with its four redis.call replaced by constants; ceiling_ratio = ours-lua-only / redis (ours on the script can reach at most that with commands of no cost)",
		"lua_only":    TokenBucketLuaOnly,
		"redis":       "redis-server --appendonly yes --appendfsync everysec --save ''",
		"ours":        fmt.Sprintf("examples/server, its own process, --async=true --sync-interval %s, its other flags their defaults", cfg.SyncInterval),
		"client":      "redis-benchmark: EVALSHA <sha> 1 tb:__rand_int__ 100 50 1, -r keys",
		"wall_time":   time.Since(began).Round(time.Millisecond).String(),
		"ours_commit": benchkit.ModuleVersion("github.com/temporalstore/temporalstore-go/temporalstore"),
	}
	rep.Summary = benchkit.Pairs{
		benchkit.NewPair("evalsha_ratio", rep.Ratio.Median, 2),
		benchkit.NewPair("evalsha_ratio_min", rep.Ratio.Min, 2),
		benchkit.NewPair("evalsha_ratio_max", rep.Ratio.Max, 2),
		benchkit.NewPair("ceiling_ratio", rep.Ceiling.Median, 2),
		benchkit.NewPair("ours_ops_per_s", rep.Ops[sysOurs].Median, 0),
		benchkit.NewPair("redis_ops_per_s", rep.Ops[sysRedis].Median, 0),
		benchkit.NewPair("ours_lua_only_ops_per_s", rep.Ops[sysOursLuaOnly].Median, 0),
		benchkit.NewPair("redis_lua_only_ops_per_s", rep.Ops[sysRedisLuaOnly].Median, 0),
	}
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(stdout, rep.Scenario+"; medians over repeats, ratio = ours/redis ops/s (min..max over repeat pairs)")
	fmt.Fprintln(tw, "redis ops/s\tours ops/s\tratio\tredis p99 ms\tours p99 ms\tredis CPU µs\tours CPU µs\t")
	fmt.Fprintf(tw, "%.0f\t%.0f\t%.2f (%.2f..%.2f)\t%.2f\t%.2f\t%.1f\t%.1f\t\n", rep.Ops["redis"].Median, rep.Ops["ours"].Median,
		rep.Ratio.Median, rep.Ratio.Min, rep.Ratio.Max, rep.P99["redis"].Median, rep.P99["ours"].Median,
		rep.ServerCPU["redis"].Median, rep.ServerCPU["ours"].Median)
	tw.Flush()
	fmt.Fprintf(stdout, "the script's Lua alone (ceiling): redis %.0f ops/s (%.1f µs CPU), ours %.0f ops/s (%.1f µs CPU); ours on it / redis on the script %.2f (%.2f..%.2f)\n",
		rep.Ops[sysRedisLuaOnly].Median, rep.ServerCPU[sysRedisLuaOnly].Median, rep.Ops[sysOursLuaOnly].Median, rep.ServerCPU[sysOursLuaOnly].Median,
		rep.Ceiling.Median, rep.Ceiling.Min, rep.Ceiling.Max)
	fmt.Fprintln(stdout, benchkit.SummaryLine("script", rep.Summary))
	return nil
}

// benchmark runs redis-benchmark's EVALSHA against p and parses its CSV.
func benchmark(ctx context.Context, p benchkit.ServerProcess, sha string, cfg Config) (result, error) {
	host, port, _ := net.SplitHostPort(p.Addr)
	args := []string{"-h", host, "-p", port, "-c", strconv.Itoa(cfg.Clients), "-n", strconv.Itoa(cfg.Requests),
		"-r", strconv.Itoa(cfg.Keys), "--csv", "EVALSHA", sha, "1", "tb:__rand_int__", "100", "50", "1"}
	cmd := exec.CommandContext(ctx, "redis-benchmark", args...)
	cpu0, err0 := benchkit.ProcessCPU(p.PID)
	b, err := cmd.Output()
	cpu1, err1 := benchkit.ProcessCPU(p.PID)
	if err != nil {
		return result{}, fmt.Errorf("redis-benchmark %s: %w", strings.Join(args, " "), err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(recs) < 2 {
		return result{}, fmt.Errorf("redis-benchmark output %q: %v", b, err)
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
	res := result{OpsPerSec: num("rps"), P50Ms: num("p50_latency_ms"), P99Ms: num("p99_latency_ms")}
	if err0 == nil && err1 == nil {
		res.ServerCPUUs = float64((cpu1 - cpu0).Microseconds()) / float64(cfg.Requests)
	}
	return res, nil
}
