package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if len(os.Args) > 1 && os.Args[1] == nullServerArg {
		err = nullServerMain(ctx, os.Args[2:])
	} else {
		err = run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	}
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "ads-demo:", err)
		os.Exit(1)
	}
}

// ErrInvariants is returned when a backend's state broke an invariant.
var ErrInvariants = errors.New("ads-demo: invariants did not hold")

// ErrOptions is returned for options that cannot run.
var ErrOptions = errors.New("ads-demo: invalid options")

// backendNames are the backends, in the order a first repeat runs them.
var backendNames = []string{"ours", "redis", "map"}

// Options are the demo's settings. DefaultOptions gives each its default.
type Options struct {
	// RespAddr is our server's RESP address; empty (the default) builds
	// and starts one.
	RespAddr string
	// RedisAddr is a redis-server's address; empty (the default) starts
	// one.
	RedisAddr string
	// Backends run, of ours, redis and map; default all three.
	Backends []string
	// Requests is how many requests the simulated day has: 200,000 (20,000
	// with BENCH_QUICK=1).
	Requests int
	// Users is how many users the requests come from: 100,000 (20,000
	// with BENCH_QUICK=1).
	Users int
	// Campaigns in the catalog: 200.
	Campaigns int
	// Clients is how many decisions run concurrently: 16.
	Clients int
	// Repeats of each backend's day: 3.
	Repeats int
	// Seed of the catalog and the load: 1.
	Seed uint64
	// JSONPath is a file the report is written to besides stdout; empty
	// (the default) writes none.
	JSONPath string
	// Durable runs the servers this program starts durably (ours
	// acknowledges after fsync, redis-server appendfsync always) rather
	// than with an fsync interval (ours --async, fsync every 10ms;
	// redis-server appendfsync everysec): default false.
	Durable bool
	// CPUSplit runs the servers this program starts on the first half of
	// its CPUs and itself on the rest (Linux, with taskset): default true.
	CPUSplit bool
	// SpendRefresh is how often the pacing filter rereads every campaign's
	// spend from the backend, for what other processes charged (this
	// one's own charges count at once): 100ms. The filter only saves
	// takes; the take itself enforces budget and pacing.
	SpendRefresh time.Duration
	// Retry is the share of impressions and clicks recorded twice, as a
	// client retrying after a lost reply would: 0.05.
	Retry float64
	// MaxOffers is how many ranked offers a decision tries to take: 4.
	MaxOffers int
	// ServerBin is a server binary to run instead of building
	// examples/server; empty (the default) builds it.
	ServerBin string
	// RedisServer is the redis-server binary: "redis-server".
	RedisServer string
	// ProfileDir, when set, receives CPU profiles of the first repeat:
	// this program's for each backend and, when it started our server,
	// the server's for ProfileSeconds (default 10) of ours. Empty (the
	// default): none.
	ProfileDir     string
	ProfileSeconds int
	// Progress is how often a run logs how far it is: 2s.
	Progress time.Duration
	// Ceiling measures, after each day on a RESP server and on a quarter
	// as many decisions, the server's transport ceiling (Ceiling) and the
	// null server's ceiling of the backend's client code (NullCeiling):
	// default true.
	Ceiling bool
}

// DefaultOptions are the defaults; quick is BENCH_QUICK=1's smaller day.
func DefaultOptions(quick bool) Options {
	o := Options{
		Backends: backendNames, Requests: 200_000, Users: 100_000, Campaigns: 200, Clients: 16,
		Repeats: 3, Seed: 1, CPUSplit: true, SpendRefresh: 100 * time.Millisecond, Retry: 0.05,
		MaxOffers: 4, RedisServer: "redis-server", ProfileSeconds: 10, Progress: 2 * time.Second, Ceiling: true,
	}
	if quick {
		o.Requests, o.Users = 20_000, 20_000
	}
	return o
}

// Validate reports options that cannot run.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(o.Backends) == 0 {
		bad("no backend")
	}
	for _, b := range o.Backends {
		if !slices.Contains(backendNames, b) {
			bad("unknown backend %q (ours, redis, map)", b)
		}
	}
	if o.Requests < 1 || int64(o.Requests) > dayMs {
		bad("requests must be 1 to %d (one a simulated millisecond at most)", dayMs)
	}
	if o.Users < 1 || o.Users > 1<<31-1 {
		bad("users must be 1 to %d", 1<<31-1)
	}
	if o.Campaigns < 1 {
		bad("campaigns must be at least 1")
	}
	if o.Clients < 1 || o.Repeats < 1 || o.MaxOffers < 1 {
		bad("clients, repeats and max-offers must be at least 1")
	}
	if o.Retry < 0 || o.Retry > 1 {
		bad("retry must be 0 to 1")
	}
	if o.SpendRefresh <= 0 || o.Progress <= 0 || o.ProfileSeconds < 1 {
		bad("spend-refresh, progress and profile-seconds must be above 0")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrOptions, errors.Join(errs...))
	}
	return nil
}

// parseFlags reads o from args, each flag's default the field's.
func parseFlags(o *Options, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("ads-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: ads-demo [flags]

Serves a simulated day of ad requests (Zipf-distributed users and topics)
on each backend in turn, alternating them over the repeats: targeting, a
budget and pacing filter, the user's recent impressions and clicks read
from the store, pCTR/eCPM ranking, an atomic take of a frequency-cap slot
and a budget charge for the winner (falling to the next offer when
refused), and idempotent impression and click records, some sent twice.
After each day it checks the backend's own state: no cap exceeded, no
budget overspent, no spend ahead of its pacing plan past the slack, every
event counted once. It prints a JSON report, then the summary line.

Backends: ours (the TemporalStore server over RESP, its own verbs), redis
(redis-server 7, Lua scripts for the atomic parts), map (Go maps behind a
mutex in this process: the ceiling). Without --resp or --redis it builds
and starts the server and starts redis-server itself, on free ports.

After each day on a RESP server it measures two ceilings (--ceiling): the
server's transport (every command a PING, in the same round trips), and
the backend's client code against a null server, which answers every
command at once with a reply of the day's shape and size: what this
program allows, whatever the server. "ads-demo null-server host:port"
runs that server.

Flags:
`)
		fs.PrintDefaults()
	}
	backends := strings.Join(o.Backends, ",")
	fs.StringVar(&o.RespAddr, "resp", o.RespAddr, "our server's RESP address; empty builds examples/server and starts it (async commits unless --durable)")
	fs.StringVar(&o.RedisAddr, "redis", o.RedisAddr, "a redis-server's address; empty starts redis-server (appendonly, appendfsync everysec unless --durable)")
	fs.StringVar(&backends, "backends", backends, "comma-separated backends to run: ours, redis, map")
	fs.IntVar(&o.Requests, "requests", o.Requests, "requests in the simulated day (each one decision); BENCH_QUICK=1 makes the default 20000")
	fs.IntVar(&o.Users, "users", o.Users, "users the requests come from (Zipf, s=1.1); BENCH_QUICK=1 makes the default 20000")
	fs.IntVar(&o.Campaigns, "campaigns", o.Campaigns, "campaigns in the catalog")
	fs.IntVar(&o.Clients, "clients", o.Clients, "concurrent decision goroutines, each with its own connection")
	fs.IntVar(&o.Repeats, "repeats", o.Repeats, "days each backend serves, alternating backends; figures are medians over them")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the catalog and the requests")
	fs.StringVar(&o.JSONPath, "json", o.JSONPath, "also write the JSON report to this file")
	fs.BoolVar(&o.Durable, "durable", o.Durable, "run the started servers durably: ours acknowledging after fsync, redis-server with appendfsync always")
	fs.BoolVar(&o.CPUSplit, "cpu-split", o.CPUSplit, "run the started servers on the first half of the CPUs and this program on the rest (Linux, taskset)")
	fs.DurationVar(&o.SpendRefresh, "spend-refresh", o.SpendRefresh, "how often the pacing filter rereads every campaign's spend")
	fs.Float64Var(&o.Retry, "retry", o.Retry, "share of impressions and clicks recorded twice (a retry after a lost reply)")
	fs.IntVar(&o.MaxOffers, "max-offers", o.MaxOffers, "ranked offers a decision tries before giving up")
	fs.StringVar(&o.ServerBin, "server-bin", o.ServerBin, "server binary to start instead of building examples/server")
	fs.StringVar(&o.RedisServer, "redis-server", o.RedisServer, "redis-server binary to start")
	fs.StringVar(&o.ProfileDir, "profile", o.ProfileDir, "directory for CPU profiles of the first repeat: this program's per backend, and the started server's")
	fs.IntVar(&o.ProfileSeconds, "profile-seconds", o.ProfileSeconds, "seconds of the started server's CPU profile, from the start of the first day on ours")
	fs.DurationVar(&o.Progress, "progress", o.Progress, "how often a run logs its progress on stderr")
	fs.BoolVar(&o.Ceiling, "ceiling", o.Ceiling, "after each day on ours and redis, measure on a quarter as many decisions the server's transport ceiling (every command a PING, in the same round trips) and the backend's client code against a null server (replies of the day's shape and size, no work)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", ErrOptions, fs.Args())
	}
	o.Backends = nil
	for _, b := range strings.Split(backends, ",") {
		if b = strings.TrimSpace(b); b != "" && !slices.Contains(o.Backends, b) {
			o.Backends = append(o.Backends, b)
		}
	}
	return o.Validate()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	o := DefaultOptions(getenv("BENCH_QUICK") == "1")
	if err := parseFlags(&o, args, stderr); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	dir, err := os.MkdirTemp("", "ads-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv := &servers{}
	defer srv.stop()
	needOurs := slices.Contains(o.Backends, "ours") && o.RespAddr == ""
	needRedis := slices.Contains(o.Backends, "redis") && o.RedisAddr == ""
	cfg := reportConfig(&o)
	var serverCPUs string
	if o.CPUSplit && (needOurs || needRedis) {
		serverCPUs, cfg.CPULayout = splitCPUs(log)
	}
	if needOurs {
		if o.RespAddr, err = srv.startOurs(ctx, &o, dir, serverCPUs); err != nil {
			return err
		}
		log.Info("started our server", "addr", o.RespAddr)
	}
	if needRedis {
		if o.RedisAddr, err = srv.startRedis(ctx, &o, dir, serverCPUs); err != nil {
			return err
		}
		log.Info("started redis-server", "addr", o.RedisAddr)
	}
	cfg.Durability = durability(&o, needOurs, needRedis)
	var nullAddr string
	if o.Ceiling && (slices.Contains(o.Backends, "ours") || slices.Contains(o.Backends, "redis")) {
		if nullAddr, err = srv.startNullServer(ctx, dir, serverCPUs); err != nil {
			return err
		}
		log.Info("started the null server", "addr", nullAddr)
	}

	cat := NewCatalog(o.Seed, o.Campaigns, o.Requests)
	w := NewWorkload(o.Seed, o.Requests, o.Users)
	backends := map[string]Backend{}
	conns := o.Clients + 2 // and the spend refresher's
	for _, name := range o.Backends {
		switch name {
		case "ours":
			backends[name] = newOurs(o.RespAddr, conns)
		case "redis":
			backends[name] = newRedis(o.RedisAddr, conns)
		case "map":
			backends[name] = newMap(o.Campaigns)
		}
		defer backends[name].Close()
	}
	rc := runConfig{clients: o.Clients, maxOffers: o.MaxOffers, retry: o.Retry, refresh: o.SpendRefresh, progress: o.Progress}
	var results []RunResult
	var ceilings []Ceiling
	var nulls []NullCeiling
	ceilingDay := NewWorkload(o.Seed, max(1000, o.Requests/4), o.Users)
	addrs := map[string]string{"ours": o.RespAddr, "redis": o.RedisAddr}
	for rep := range o.Repeats {
		// Each repeat starts with the next backend, so none is always
		// first (or last) in a warm or busy machine.
		order := append(slices.Clone(o.Backends[rep%len(o.Backends):]), o.Backends[:rep%len(o.Backends)]...)
		for _, name := range order {
			log.Info("day starts", "backend", name, "repeat", rep+1, "requests", o.Requests, "clients", o.Clients)
			var stopProfile func() error
			if o.ProfileDir != "" && rep == 0 {
				if stopProfile, err = startProfiles(ctx, &o, srv, name); err != nil {
					return err
				}
			}
			rc.serverPID = srv.pids[name]
			res, err := serve(ctx, log, backends[name], name, cat, w, rc)
			if stopProfile != nil {
				if perr := stopProfile(); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil {
				return err
			}
			res.Repeat = rep + 1
			log.Info("day served", "backend", name, "repeat", rep+1, "decisions_per_s", int(res.PerSecond),
				"p50_us", int(res.P50us), "p99_us", int(res.P99us), "fill", fmt.Sprintf("%.3f", res.FillRate),
				"server_cpu_us", int(res.ServerCPUus), "client_cpu_us", int(res.ClientCPUus),
				"invariants_held", res.Invariants.Held, "check_s", fmt.Sprintf("%.1f", res.CheckSeconds))
			for _, v := range res.Invariants.Violations {
				log.Warn("invariant", "backend", name, "violation", v)
			}
			results = append(results, res)
			if addr, ok := addrs[name]; ok && o.Ceiling {
				c, err := measureCeiling(ctx, name, addr, max(1000, o.Requests/4), o.Clients, srv.pids[name])
				if err != nil {
					return err
				}
				c.Repeat = rep + 1
				log.Info("transport ceiling", "backend", name, "repeat", rep+1, "decisions_per_s", int(c.PerSecond),
					"server_cpu_us", int(c.ServerCPUus), "client_cpu_us", int(c.ClientCPUus))
				ceilings = append(ceilings, c)
				nrc := rc
				nrc.serverPID = srv.pids["null"]
				nc, err := measureNullCeiling(ctx, name, nullAddr, int64(math.Round(res.HistoryPoints)), cat, ceilingDay, nrc)
				if err != nil {
					return err
				}
				nc.Repeat = rep + 1
				log.Info("null server ceiling", "backend", name, "repeat", rep+1, "history_points", nc.History,
					"decisions_per_s", int(nc.PerSecond), "server_cpu_us", int(nc.ServerCPUus), "client_cpu_us", int(nc.ClientCPUus))
				nulls = append(nulls, nc)
			}
		}
	}

	rep := newReport(cfg, cat, results, ceilings, nulls)
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if o.JSONPath != "" {
		if err := os.MkdirAll(filepath.Dir(o.JSONPath), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(o.JSONPath, out, 0o644); err != nil {
			return err
		}
	}
	if _, err := stdout.Write(out); err != nil {
		return err
	}
	fmt.Fprintln(stdout, rep.summaryLine())
	if !rep.InvariantsHeld {
		return ErrInvariants
	}
	return nil
}

// splitCPUs pins this program to the second half of its CPUs and returns
// the first half, for the servers, as taskset takes them, and the layout
// as the report states it; "" and why not when it cannot.
func splitCPUs(log *slog.Logger) (string, string) {
	cpus, err := allowedCPUs()
	if err == nil && len(cpus) < 2 {
		err = errors.New("fewer than 2 CPUs")
	}
	if err == nil {
		_, err = exec.LookPath("taskset")
	}
	if err == nil {
		half := len(cpus) / 2
		if err = pinSelf(cpus[half:]); err == nil {
			servers, clients := cpuList(cpus[:half]), cpuList(cpus[half:])
			return servers, fmt.Sprintf("servers on CPUs %s, this program (load and map backend) on CPUs %s", servers, clients)
		}
	}
	log.Warn("CPUs not split", "err", err)
	return "", fmt.Sprintf("not split (%v): servers and this program share every CPU", err)
}

// durability states how the backends run keep their writes.
func durability(o *Options, startedOurs, startedRedis bool) string {
	var parts []string
	for _, b := range o.Backends {
		switch {
		case b == "ours" && !startedOurs:
			parts = append(parts, "ours: external server at "+o.RespAddr+" (its own commit mode)")
		case b == "ours" && o.Durable:
			parts = append(parts, "ours: durable (acknowledged after fsync)")
		case b == "ours":
			parts = append(parts, "ours: --async (acknowledged once written, fsync every 10ms)")
		case b == "redis" && !startedRedis:
			parts = append(parts, "redis: external server at "+o.RedisAddr+" (its own persistence)")
		case b == "redis" && o.Durable:
			parts = append(parts, "redis: appendonly, appendfsync always")
		case b == "redis":
			parts = append(parts, "redis: appendonly, appendfsync everysec")
		case b == "map":
			parts = append(parts, "map: none")
		}
	}
	return strings.Join(parts, "; ")
}

// startProfiles starts this program's CPU profile for backend's run and,
// for ours on a server this program started, fetches the server's; the
// returned function stops them and waits for the files.
func startProfiles(ctx context.Context, o *Options, srv *servers, backend string) (func() error, error) {
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(o.ProfileDir, "client-"+backend+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	fetched := make(chan error, 1)
	if backend == "ours" && srv.oursHTTP != "" {
		go func() {
			fetched <- fetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", srv.oursHTTP, o.ProfileSeconds),
				filepath.Join(o.ProfileDir, "server-ours.pprof"))
		}()
	} else {
		fetched <- nil
	}
	return func() error {
		pprof.StopCPUProfile()
		err := f.Close()
		return errors.Join(err, <-fetched)
	}, nil
}

// fetchProfile saves the profile at url to path.
func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	return errors.Join(err, f.Close())
}
