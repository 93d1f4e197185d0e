package clusterbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Headline keys: the summary line is exactly these, in this order.
const (
	keyWriteP50      = "write_p50_us"
	keyFollowerP50   = "follower_read_p50_us"
	keyWritesRatio   = "writes_vs_etcd_ratio"
	keySharedStorage = "shared_storage_8w_per_s"
	keyFailover      = "failover_ms"
	// keySharedVsCeiling is the shared cell at 8 writers over this disk's
	// ceiling for its shape, measured in the same run.
	keySharedVsCeiling = "shared_storage_8w_vs_ceiling_ratio"
)

// loadSummary is one load's figures over the repeats.
type loadSummary struct {
	PerSec           benchkit.Summary `json:"per_s"`
	P50Us            benchkit.Summary `json:"p50_us"`
	P95Us            benchkit.Summary `json:"p95_us"`
	P99Us            benchkit.Summary `json:"p99_us"`
	ServerCPUUsPerOp benchkit.Summary `json:"server_cpu_us_per_op"`
	Errors           int              `json:"errors"`
	Misses           int              `json:"misses,omitempty"`
}

func summarizeLoads(rs []loadResult) *loadSummary {
	if len(rs) == 0 {
		return nil
	}
	col := func(f func(loadResult) float64) benchkit.Summary { return benchkit.Summarize(benchkit.Column(rs, f)) }
	s := &loadSummary{
		PerSec:           col(func(r loadResult) float64 { return r.PerSec }),
		P50Us:            col(func(r loadResult) float64 { return r.P50Us }),
		P95Us:            col(func(r loadResult) float64 { return r.P95Us }),
		P99Us:            col(func(r loadResult) float64 { return r.P99Us }),
		ServerCPUUsPerOp: col(func(r loadResult) float64 { return r.ServerCPUUsPerOp }),
	}
	for _, r := range rs {
		s.Errors += r.Errors
		s.Misses += r.Misses
	}
	return s
}

// writeCell is the writes at one concurrency.
type writeCell struct {
	Concurrency int                     `json:"concurrency"`
	Systems     map[string]*loadSummary `json:"systems"`
	// Ratios per repeat pair, above 1 ours better: writes/s ours/etcd,
	// latencies etcd/ours.
	WritesRatio *benchkit.Summary `json:"writes_vs_etcd_ratio,omitempty"`
	P50Ratio    *benchkit.Summary `json:"p50_vs_etcd_ratio,omitempty"`
	P95Ratio    *benchkit.Summary `json:"p95_vs_etcd_ratio,omitempty"`
	P99Ratio    *benchkit.Summary `json:"p99_vs_etcd_ratio,omitempty"`
}

// readsReport is the one-client read loops.
type readsReport struct {
	Description string `json:"description"`
	// Follower and Leader by system.
	Follower map[string]*loadSummary `json:"follower"`
	Leader   map[string]*loadSummary `json:"leader"`
	// Ratios of p50 per repeat pair, etcd/ours.
	FollowerP50Ratio *benchkit.Summary `json:"follower_p50_vs_etcd_ratio,omitempty"`
	LeaderP50Ratio   *benchkit.Summary `json:"leader_p50_vs_etcd_ratio,omitempty"`
}

// failoverSummary is one system's failovers.
type failoverSummary struct {
	FailoverMs  benchkit.Summary `json:"failover_ms"`
	WritableMs  benchkit.Summary `json:"writable_ms"`
	NewLeaderMs benchkit.Summary `json:"new_leader_ms"`
	// PerRepeat is each repeat's failover_ms (null: no recovery).
	PerRepeat []benchkit.Float `json:"per_repeat_ms"`
	// Problems are the repeats' errors (no recovery, a lost write).
	Problems []string `json:"problems,omitempty"`
}

type failoverReport struct {
	Description string                      `json:"description"`
	Systems     map[string]*failoverSummary `json:"systems"`
	// Ratio is etcd/ours failover_ms per repeat pair.
	Ratio *benchkit.Summary `json:"failover_vs_etcd_ratio,omitempty"`
}

// goal is a target printed beside its figure; it never fails the run.
type goal struct {
	Figure string         `json:"figure"`
	Value  benchkit.Float `json:"value"`
	Goal   string         `json:"goal"`
	// Met is null when the figure is missing.
	Met *bool `json:"met"`
}

type report struct {
	Name          string                 `json:"name"`
	Started       string                 `json:"started"`
	Conditions    map[string]any         `json:"conditions"`
	Summary       benchkit.Pairs         `json:"summary"`
	Goals         []goal                 `json:"goals"`
	Writes        []writeCell            `json:"writes"`
	Reads         readsReport            `json:"reads"`
	Failover      failoverReport         `json:"failover"`
	SharedStorage sharedReport           `json:"shared_storage_writes"`
	Runs          map[string][]systemRun `json:"runs"`
}

// Run executes the benchmark, writes the JSON report, prints the table and,
// last, the summary line to stdout, and logs progress to log. It fails
// only when a system fails, never because of a figure.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := time.Now()
	out := cfg.Out
	if out == "" {
		p, err := benchkit.ResultPath("cluster")
		if err != nil {
			return err
		}
		out = p
	}
	fsName := benchkit.Filesystem(cfg.Dir)
	if fsName == "tmpfs" || fsName == "ramfs" {
		log.Warn("bench dir is in memory: fdatasync costs nothing there", "dir", cfg.Dir, "fs", fsName)
	}
	base, err := os.MkdirTemp(cfg.Dir, "bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	var bin string
	if slices.Contains(cfg.Systems, SystemOurs) || slices.Contains(cfg.Systems, SystemShared) {
		log.Info("building examples/server")
		if bin, err = benchkit.BuildExample(base, "./examples/server", "ts-server"); err != nil {
			return err
		}
	}
	// go-redis logs every failed dial of a dead member's pool: expected
	// in the failover, and too many for the progress lines.
	redis.SetLogger(redisLogger{log})
	runs := map[string][]systemRun{}
	err = benchkit.Alternate(ctx, cfg.Repeats, cfg.Systems, func(ctx context.Context, r int, system string) error {
		dir, err := os.MkdirTemp(base, system+"-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		log.Info("starting", "system", system, "repeat", fmt.Sprintf("%d/%d", r+1, cfg.Repeats))
		var res systemRun
		switch system {
		case SystemOurs:
			res, err = runOurs(ctx, cfg, bin, dir, r, log)
		case SystemEtcd:
			res, err = runEtcd(ctx, cfg, dir, r, log)
		case SystemShared:
			res, err = runShared(ctx, cfg, bin, dir, r, log)
		}
		if err != nil {
			return err
		}
		res.Repeat = r + 1
		runs[system] = append(runs[system], res)
		return nil
	})
	if err != nil {
		return err
	}
	rep := buildReport(cfg, runs)
	rep.Started = began.UTC().Format(time.RFC3339)
	rep.Conditions = conditions(cfg, fsName, time.Since(began))
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	printTable(stdout, cfg, rep)
	fmt.Fprintln(stdout, summaryLine(rep.Summary[:5]))
	return nil
}

func conditions(cfg Config, fsName string, took time.Duration) map[string]any {
	return map[string]any{
		"commit": gitHead(), "git_dirty": gitDirty(), "host": benchkit.HostConditions(),
		"filesystem": fsName, "dir": cfg.Dir, "quick": cfg.Quick,
		"duration": cfg.Duration.String(), "warmup": cfg.Warmup.String(), "repeats": cfg.Repeats,
		"concurrency": cfg.Concurrency, "shards": cfg.Shards, "key_bytes": 16, "value_bytes": cfg.ValueBytes,
		"keyspace": cfg.Keyspace, "read_keys": cfg.ReadKeys, "systems": cfg.Systems,
		"layout":         fmt.Sprintf("three members of each system on this one machine (%d CPUs), over loopback; the load generator (this process) shares the CPUs; one system runs at a time, ours then etcd, each repeat on fresh processes and data directories", benchkit.HostConditions().NumCPU),
		"ours":           fmt.Sprintf("examples/server built from the checkout, 3 processes: --shards %d --async=false --cluster-id i --cluster-peers 1@raft@resp,2@..,3@.. (each shard a matrixraft group with a voter on every member; a SET is acknowledged once a quorum fsynced its raft entry, SyncAlways, and the leader applied it). Writes: go-redis ClusterClient SET (MaxRedirects 8), one connection per client", cfg.Shards),
		"etcd":           "3 etcd member processes (go.etcd.io/etcd/server/v3 embed, its defaults: fdatasync of the WAL before a commit), clientv3 Put to the leader over one gRPC connection per 16 clients (raftbench's etcd-procs)",
		"follower_reads": "one client: ours READONLY then GET, in a loop, on the member leading the fewest slots, of the read keys in slots it does not lead; etcd: serializable Get on a follower. Leader reads: ours GET through ClusterClient (linearizable: ReadIndex), etcd linearizable Get on the leader",
		"failover":       "a writer SETs (Puts) one key in a loop, one write at a time (2s timeout); the member leading its slot (etcd: the leader) gets SIGKILL; failover_ms is from the kill until the first write sent after the process exited is acknowledged. ours: go-redis ClusterClient, ClusterStateReloadInterval 100ms, MaxRedirects 8, retry backoff defaults; etcd: clientv3 of all three endpoints",
		"go_redis":       benchkit.ModuleVersion("github.com/redis/go-redis/v9"),
		"etcd_server":    benchkit.ModuleVersion("go.etcd.io/etcd/server/v3"),
		"etcd_client":    benchkit.ModuleVersion("go.etcd.io/etcd/client/v3"),
		"wall_time":      took.Round(time.Second).String(),
	}
}

// buildReport summarizes the runs: figures over repeats, ratios over
// repeat pairs, the summary pairs and the goals.
func buildReport(cfg Config, runs map[string][]systemRun) *report {
	rep := &report{Name: "cluster", Runs: runs, SharedStorage: buildShared(cfg, runs[SystemShared])}
	ours, etcd := runs[SystemOurs], runs[SystemEtcd]
	ratio := func(o, p []float64, or benchkit.Orientation) *benchkit.Summary {
		if len(o) == 0 || len(p) == 0 {
			return nil
		}
		s := benchkit.RatioSpread(o, p, or)
		return &s
	}
	col := func(rs []systemRun, f func(systemRun) float64) []float64 { return benchkit.Column(rs, f) }
	for i, c := range cfg.Concurrency {
		cell := writeCell{Concurrency: c, Systems: map[string]*loadSummary{}}
		for sys, rs := range runs {
			var ls []loadResult
			for _, r := range rs {
				if i < len(r.Writes) {
					ls = append(ls, r.Writes[i])
				}
			}
			if s := summarizeLoads(ls); s != nil {
				cell.Systems[sys] = s
			}
		}
		w := func(f func(loadResult) float64) func(systemRun) float64 {
			return func(r systemRun) float64 { return f(r.Writes[i]) }
		}
		cell.WritesRatio = ratio(col(ours, w(func(l loadResult) float64 { return l.PerSec })), col(etcd, w(func(l loadResult) float64 { return l.PerSec })), benchkit.HigherIsBetter)
		cell.P50Ratio = ratio(col(ours, w(func(l loadResult) float64 { return l.P50Us })), col(etcd, w(func(l loadResult) float64 { return l.P50Us })), benchkit.LowerIsBetter)
		cell.P95Ratio = ratio(col(ours, w(func(l loadResult) float64 { return l.P95Us })), col(etcd, w(func(l loadResult) float64 { return l.P95Us })), benchkit.LowerIsBetter)
		cell.P99Ratio = ratio(col(ours, w(func(l loadResult) float64 { return l.P99Us })), col(etcd, w(func(l loadResult) float64 { return l.P99Us })), benchkit.LowerIsBetter)
		rep.Writes = append(rep.Writes, cell)
	}

	rep.Reads = readsReport{
		Description: "one client, p50/p99 per read: follower = ours READONLY GET on a member not leading the key's slot, etcd serializable Get on a follower; leader = ours GET through ClusterClient (linearizable), etcd linearizable Get on the leader",
		Follower:    map[string]*loadSummary{}, Leader: map[string]*loadSummary{},
	}
	for sys, rs := range runs {
		var f, l []loadResult
		for _, r := range rs {
			if r.FollowerRead != nil {
				f = append(f, *r.FollowerRead)
			}
			if r.LeaderRead != nil {
				l = append(l, *r.LeaderRead)
			}
		}
		if s := summarizeLoads(f); s != nil {
			rep.Reads.Follower[sys] = s
		}
		if s := summarizeLoads(l); s != nil {
			rep.Reads.Leader[sys] = s
		}
	}
	readP50 := func(rs []systemRun, follower bool) []float64 {
		return col(rs, func(r systemRun) float64 {
			l := r.LeaderRead
			if follower {
				l = r.FollowerRead
			}
			if l == nil {
				return math.NaN()
			}
			return l.P50Us
		})
	}
	rep.Reads.FollowerP50Ratio = ratio(readP50(ours, true), readP50(etcd, true), benchkit.LowerIsBetter)
	rep.Reads.LeaderP50Ratio = ratio(readP50(ours, false), readP50(etcd, false), benchkit.LowerIsBetter)

	rep.Failover = failoverReport{
		Description: "SIGKILL of the member leading the written key's slot (etcd: its leader) while one writer writes it in a loop (2 s per write); failover_ms until the writer's first write sent after the kill is acknowledged, writable_ms until the first of fresh probe writes of the same slot (one every 25 ms after the kill, 5 s each) is, new_leader_ms until a survivor names a new leader",
		Systems:     map[string]*failoverSummary{},
	}
	failMs := func(rs []systemRun, f func(*failoverResult) benchkit.Float) []float64 {
		return col(rs, func(r systemRun) float64 {
			if r.Failover == nil {
				return math.NaN()
			}
			return float64(f(r.Failover))
		})
	}
	failover := func(f *failoverResult) benchkit.Float { return f.Ms }
	for sys, rs := range runs {
		fs := &failoverSummary{
			FailoverMs:  benchkit.Summarize(failMs(rs, failover)),
			WritableMs:  benchkit.Summarize(failMs(rs, func(f *failoverResult) benchkit.Float { return f.WritableMs })),
			NewLeaderMs: benchkit.Summarize(failMs(rs, func(f *failoverResult) benchkit.Float { return f.NewLeaderMs })),
		}
		for _, r := range rs {
			if r.Failover == nil {
				continue
			}
			fs.PerRepeat = append(fs.PerRepeat, r.Failover.Ms)
			if r.Failover.Error != "" {
				fs.Problems = append(fs.Problems, fmt.Sprintf("repeat %d: %s", r.Repeat, r.Failover.Error))
			}
		}
		if len(fs.PerRepeat) > 0 {
			rep.Failover.Systems[sys] = fs
		}
	}
	rep.Failover.Ratio = ratio(failMs(ours, failover), failMs(etcd, failover), benchkit.LowerIsBetter)

	rep.Summary = summaryPairs(rep)
	rep.Goals = goals(rep.Summary)
	return rep
}

// summaryPairs returns the headline (the five keys of the summary line)
// and then the figures around it.
func summaryPairs(rep *report) benchkit.Pairs {
	nan := math.NaN()
	med := func(s *benchkit.Summary) float64 {
		if s == nil {
			return nan
		}
		return s.Median
	}
	var lo, hi *writeCell
	for i := range rep.Writes {
		c := &rep.Writes[i]
		if lo == nil || c.Concurrency < lo.Concurrency {
			lo = c
		}
		if hi == nil || c.Concurrency > hi.Concurrency {
			hi = c
		}
	}
	load := func(c *writeCell, sys string, f func(*loadSummary) benchkit.Summary) float64 {
		if c == nil || c.Systems[sys] == nil {
			return nan
		}
		return f(c.Systems[sys]).Median
	}
	ratio := func(c *writeCell, f func(*writeCell) *benchkit.Summary) *benchkit.Summary {
		if c == nil {
			return nil
		}
		return f(c)
	}
	read := func(m map[string]*loadSummary, sys string, f func(*loadSummary) benchkit.Summary) float64 {
		if m[sys] == nil {
			return nan
		}
		return f(m[sys]).Median
	}
	fail := func(sys string, f func(*failoverSummary) benchkit.Summary) float64 {
		if rep.Failover.Systems[sys] == nil {
			return nan
		}
		return f(rep.Failover.Systems[sys]).Median
	}
	p50 := func(s *loadSummary) benchkit.Summary { return s.P50Us }
	p99 := func(s *loadSummary) benchkit.Summary { return s.P99Us }
	perSec := func(s *loadSummary) benchkit.Summary { return s.PerSec }
	writesRatio := ratio(hi, func(c *writeCell) *benchkit.Summary { return c.WritesRatio })
	spread := func(s *benchkit.Summary, f func(benchkit.Summary) float64) float64 {
		if s == nil {
			return nan
		}
		return f(*s)
	}
	hc, lc := 0, 0
	if hi != nil {
		hc, lc = hi.Concurrency, lo.Concurrency
	}
	return benchkit.Pairs{
		benchkit.NewPair(keyWriteP50, load(lo, SystemOurs, p50), 0),
		benchkit.NewPair(keyFollowerP50, read(rep.Reads.Follower, SystemOurs, p50), 0),
		benchkit.NewPair(keyWritesRatio, med(writesRatio), 2),
		benchkit.NewPair(keySharedStorage, sharedAt(rep, 8), 0),
		benchkit.NewPair(keyFailover, fail(SystemOurs, func(f *failoverSummary) benchkit.Summary { return f.FailoverMs }), 0),
		// The context of the headline.
		benchkit.NewPair("writes_vs_etcd_ratio_min", spread(writesRatio, func(s benchkit.Summary) float64 { return s.Min }), 2),
		benchkit.NewPair("writes_vs_etcd_ratio_max", spread(writesRatio, func(s benchkit.Summary) float64 { return s.Max }), 2),
		benchkit.NewPair(fmt.Sprintf("writes_c%d_vs_etcd_ratio", lc), med(ratio(lo, func(c *writeCell) *benchkit.Summary { return c.WritesRatio })), 2),
		benchkit.NewPair(fmt.Sprintf("write_p50_c%d_vs_etcd_ratio", lc), med(ratio(lo, func(c *writeCell) *benchkit.Summary { return c.P50Ratio })), 2),
		benchkit.NewPair(fmt.Sprintf("write_p99_c%d_vs_etcd_ratio", hc), med(ratio(hi, func(c *writeCell) *benchkit.Summary { return c.P99Ratio })), 2),
		benchkit.NewPair(fmt.Sprintf("ours_writes_c%d_per_s", hc), load(hi, SystemOurs, perSec), 0),
		benchkit.NewPair(fmt.Sprintf("etcd_writes_c%d_per_s", hc), load(hi, SystemEtcd, perSec), 0),
		benchkit.NewPair("write_p99_us", load(lo, SystemOurs, p99), 0),
		benchkit.NewPair("etcd_write_p50_us", load(lo, SystemEtcd, p50), 0),
		benchkit.NewPair("follower_read_p99_us", read(rep.Reads.Follower, SystemOurs, p99), 0),
		benchkit.NewPair("follower_read_p50_vs_etcd_ratio", med(rep.Reads.FollowerP50Ratio), 2),
		benchkit.NewPair("etcd_follower_read_p50_us", read(rep.Reads.Follower, SystemEtcd, p50), 0),
		benchkit.NewPair("leader_read_p50_us", read(rep.Reads.Leader, SystemOurs, p50), 0),
		benchkit.NewPair("etcd_leader_read_p50_us", read(rep.Reads.Leader, SystemEtcd, p50), 0),
		benchkit.NewPair("writable_ms", fail(SystemOurs, func(f *failoverSummary) benchkit.Summary { return f.WritableMs }), 0),
		benchkit.NewPair("new_leader_ms", fail(SystemOurs, func(f *failoverSummary) benchkit.Summary { return f.NewLeaderMs }), 0),
		benchkit.NewPair("etcd_failover_ms", fail(SystemEtcd, func(f *failoverSummary) benchkit.Summary { return f.FailoverMs }), 0),
		benchkit.NewPair("etcd_writable_ms", fail(SystemEtcd, func(f *failoverSummary) benchkit.Summary { return f.WritableMs }), 0),
		benchkit.NewPair("etcd_new_leader_ms", fail(SystemEtcd, func(f *failoverSummary) benchkit.Summary { return f.NewLeaderMs }), 0),
		benchkit.NewPair("shared_storage_2w_per_s", sharedAt(rep, 2), 0),
		benchkit.NewPair("shared_storage_4w_per_s", sharedAt(rep, 4), 0),
		benchkit.NewPair("shared_storage_8w_vs_seed_ratio", sharedVsSeed(rep, 8), 1),
		benchkit.NewPair("shared_storage_resp_8w_per_s", sharedRESPAt(rep, 8), 0),
		benchkit.NewPair("shared_storage_ceiling_8w_per_s", sharedCeilingAt(rep, 8), 0),
		benchkit.NewPair(keySharedVsCeiling, sharedVsCeiling(rep, 8), 2),
	}
}

// goals are the targets of the headline figures.
func goals(ps benchkit.Pairs) []goal {
	val := map[string]float64{}
	for _, p := range ps {
		val[p.Key] = p.Value
	}
	mk := func(figure, key, text string, met func(float64) bool) goal {
		g := goal{Figure: figure, Value: benchkit.Float(val[key]), Goal: text}
		if v := val[key]; !math.IsNaN(v) {
			m := met(v)
			g.Met = &m
		}
		return g
	}
	return []goal{
		mk(keyWriteP50, keyWriteP50, "≤ 1000 µs (1 ms)", func(v float64) bool { return v <= 1000 }),
		mk(keyFollowerP50, keyFollowerP50, "≤ 100 µs", func(v float64) bool { return v <= 100 }),
		mk(keyWritesRatio, keyWritesRatio, "≥ 1.5 (SET ≥ 1.5× etcd's Put)", func(v float64) bool { return v >= 1.5 }),
		mk(keySharedStorage, keySharedStorage, fmt.Sprintf("≥ %.0f writes/s (%d× seed 000's %.0f at 8 writers)", sharedGoalFactor*seedSharedPerSec[8], sharedGoalFactor, seedSharedPerSec[8]), func(v float64) bool { return v >= sharedGoalFactor*seedSharedPerSec[8] }),
		mk(keyFailover, keyFailover, "≤ 2000 ms", func(v float64) bool { return v <= 2000 }),
	}
}

// summaryLine is the last line: "cluster: key=value ...", a figure not
// measured as n/a.
func summaryLine(ps benchkit.Pairs) string {
	var b strings.Builder
	b.WriteString("cluster:")
	for _, p := range ps {
		fmt.Fprintf(&b, " %s=%s", p.Key, benchkit.FormatNumber(p.Value, p.Digits))
	}
	return b.String()
}

// sharedVsSeed is the median of ours over the seed's rate at w writers.
func sharedVsSeed(rep *report, w int) float64 {
	for _, c := range rep.SharedStorage.Cells {
		if c.Writers == w && c.VsSeed != nil {
			return c.VsSeed.Median
		}
	}
	return math.NaN()
}

// sharedRESPAt is the median writes/s through the server processes at w
// writers, NaN when not run.
func sharedRESPAt(rep *report, w int) float64 {
	for _, c := range rep.SharedStorage.Cells {
		if c.Writers == w && c.RESP != nil {
			return c.RESP.PerSec.Median
		}
	}
	return math.NaN()
}

// sharedCeilingAt is the median bare append+fdatasync writes/s at w
// writers, NaN when not run.
func sharedCeilingAt(rep *report, w int) float64 {
	for _, c := range rep.SharedStorage.Cells {
		if c.Writers == w && c.Ceiling != nil {
			return c.Ceiling.PerSec.Median
		}
	}
	return math.NaN()
}

// sharedVsCeiling is the median over repeats of the engines' writes/s
// over the same repeat's ceiling at w writers, NaN when not run.
func sharedVsCeiling(rep *report, w int) float64 {
	for _, c := range rep.SharedStorage.Cells {
		if c.Writers == w && c.EnginesVsCeiling != nil {
			return c.EnginesVsCeiling.Median
		}
	}
	return math.NaN()
}

// sharedAt is the median shared-storage writes/s at w writers, NaN when
// not run.
func sharedAt(rep *report, w int) float64 {
	for _, c := range rep.SharedStorage.Cells {
		if c.Writers == w && c.Engines != nil {
			return c.Engines.PerSec.Median
		}
	}
	return math.NaN()
}

func printTable(w io.Writer, cfg Config, rep *report) {
	num := func(x float64, digits int) string { return benchkit.FormatNumber(x, digits) }
	rng := func(s *benchkit.Summary) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
	}
	var systems []string
	for _, s := range []string{SystemOurs, SystemEtcd} {
		if len(rep.Runs[s]) > 0 {
			systems = append(systems, s)
		}
	}
	fmt.Fprintf(w, "writes through consensus, 3 members each on this machine, %d B values, 16 B keys; medians of %d repeats (µs per write; cpu = the members' CPU µs per write)\n", cfg.ValueBytes, cfg.Repeats)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "c\t"
	for _, s := range systems {
		head += s + " w/s\tp50\tp95\tp99\tcpu\t"
	}
	fmt.Fprintln(tw, head+"×w/s (min–max)\t×p50 (min–max)\t×p99 (min–max)\t")
	for _, c := range rep.Writes {
		line := fmt.Sprintf("%d\t", c.Concurrency)
		for _, s := range systems {
			l := c.Systems[s]
			if l == nil {
				line += "-\t-\t-\t-\t-\t"
				continue
			}
			line += fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t", num(l.PerSec.Median, 0), num(l.P50Us.Median, 0), num(l.P95Us.Median, 0), num(l.P99Us.Median, 0), num(l.ServerCPUUsPerOp.Median, 0))
		}
		fmt.Fprintln(tw, line+rng(c.WritesRatio)+"\t"+rng(c.P50Ratio)+"\t"+rng(c.P99Ratio)+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "×w/s = ours/etcd writes/s, ×p50 and ×p99 = etcd/ours latency, per repeat pair (above 1: ours better)")
	fmt.Fprintln(w)

	fmt.Fprintln(w, "reads, one client (µs per read, medians)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "read\treads/s\tp50 µs\tp99 µs\terrors\tmisses\t")
	rows := []struct {
		name string
		m    map[string]*loadSummary
		sys  string
	}{
		{"ours follower: READONLY GET, member not leading the slot", rep.Reads.Follower, SystemOurs},
		{"ours leader: ClusterClient GET (linearizable)", rep.Reads.Leader, SystemOurs},
		{"etcd follower: serializable Get", rep.Reads.Follower, SystemEtcd},
		{"etcd leader: linearizable Get", rep.Reads.Leader, SystemEtcd},
	}
	for _, r := range rows {
		if l := r.m[r.sys]; l != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t\n", r.name, num(l.PerSec.Median, 0), num(l.P50Us.Median, 1), num(l.P99Us.Median, 1), l.Errors, l.Misses)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "follower p50 etcd/ours: %s; leader p50 etcd/ours: %s\n\n", rng(rep.Reads.FollowerP50Ratio), rng(rep.Reads.LeaderP50Ratio))

	fmt.Fprintln(w, "failover: SIGKILL of the key's leader while one writer writes it; failover = ms until the writer's first write sent after the kill is acknowledged,")
	fmt.Fprintln(w, "writable = until the first of fresh probe writes (one every 25 ms) is, new leader = until a survivor names one (medians)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "system\tfailover ms (min–max)\tper repeat\twritable ms\tnew leader ms\t")
	for _, s := range systems {
		f := rep.Failover.Systems[s]
		if f == nil {
			continue
		}
		var per []string
		for _, x := range f.PerRepeat {
			per = append(per, num(float64(x), 0))
		}
		fmt.Fprintf(tw, "%s\t%s (%s–%s)\t%s\t%s\t%s\t\n", s, num(f.FailoverMs.Median, 0), num(f.FailoverMs.Min, 0), num(f.FailoverMs.Max, 0),
			strings.Join(per, ", "), num(f.WritableMs.Median, 0), num(f.NewLeaderMs.Median, 0))
	}
	tw.Flush()
	for _, s := range systems {
		if f := rep.Failover.Systems[s]; f != nil {
			for _, p := range f.Problems {
				fmt.Fprintf(w, "  %s %s\n", s, p)
			}
		}
	}
	fmt.Fprintf(w, "failover etcd/ours: %s\n\n", rng(rep.Failover.Ratio))
	if rep.SharedStorage.Run {
		fmt.Fprintln(w, "shared-storage writes: every shard's log in one shared directory, every append fdatasynced; medians, ×seed per repeat")
		fmt.Fprintln(w, "(engines = seed 000's shape, three engines in this process, one writing; resp = three server processes, go-redis ClusterClient)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "writers\tengines w/s\tp50 µs\tp99 µs\tconverge ms\t×seed (min–max)\tresp w/s\tp50 µs\tp99 µs\tcpu\t×seed\tseed w/s\tceiling w/s\tengines/ceiling\t")
		for _, c := range rep.SharedStorage.Cells {
			e, r := c.Engines, c.RESP
			if e == nil || r == nil {
				continue
			}
			ceiling := math.NaN()
			if c.Ceiling != nil {
				ceiling = c.Ceiling.PerSec.Median
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Writers,
				num(e.PerSec.Median, 0), num(e.P50Us.Median, 0), num(e.P99Us.Median, 0), num(c.ConvergeMs.Median, 0), rng(c.VsSeed),
				num(r.PerSec.Median, 0), num(r.P50Us.Median, 0), num(r.P99Us.Median, 0), num(r.ServerCPUUsPerOp.Median, 0), rng(c.RESPVsSeed), num(c.SeedPerSec, 0),
				num(ceiling, 0), rng(c.EnginesVsCeiling))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}

	fmt.Fprintln(w, "goals (reported, never enforced)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range rep.Goals {
		met := "n/a"
		if g.Met != nil {
			met = map[bool]string{true: "met", false: "not met"}[*g.Met]
		}
		digits := 0
		if g.Figure == keyWritesRatio || g.Figure == keySharedVsCeiling {
			digits = 2
		}
		fmt.Fprintf(tw, "%s\t%s\tgoal %s\t%s\t\n", g.Figure, num(float64(g.Value), digits), g.Goal, met)
	}
	tw.Flush()
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// gitHead returns the short commit of the working tree, or "".
func gitHead() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// gitDirty reports whether the working tree has changes.
func gitDirty() bool {
	root, err := benchkit.RepoRoot(".")
	if err != nil {
		return false
	}
	out, err := exec.Command("git", "-C", filepath.Clean(root), "status", "--porcelain").Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
}

// redisLogger takes go-redis's log lines to the progress log at debug
// level.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}
