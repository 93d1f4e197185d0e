package clusterbench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// seedSharedPerSec are seed 000's shared-storage write rates by writers:
// its scale harness, three nodes in one process, 400 durable writes a run.
var seedSharedPerSec = map[int]float64{2: 471, 4: 842, 8: 1320}

// sharedGoalFactor is the goal over the seed's rates.
const sharedGoalFactor = 10

// runShared starts three members on one shared directory (the shared-fs
// storage backend: each shard's log there, written by one member, every
// append fdatasynced before a SET is acknowledged, the others replaying
// it) and measures SETs at each Config.SharedWriters.
func runShared(ctx context.Context, cfg Config, bin, dir string, repeat int, log *slog.Logger) (run systemRun, err error) {
	c, err := startOurs(ctx, bin, dir, cfg.Shards, "--storage-backend", "shared-fs", "--shared-dir", filepath.Join(dir, "shared"))
	if err != nil {
		return run, err
	}
	defer func() {
		if serr := c.Close(); serr != nil {
			run.StopError = serr.Error()
			log.Warn("shared did not stop cleanly", "err", serr)
		}
	}()
	if run.Leaders, err = c.leaders(ctx); err != nil {
		return run, err
	}
	counter := newReplyCounter()
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRedirects: 8, PoolSize: max(slices.Max(cfg.SharedWriters)+2, 10)})
	rc.OnNewNode(func(n *redis.Client) { n.AddHook(counter) })
	defer rc.Close()
	value := randomValue(cfg.ValueBytes, uint64(repeat))
	for _, n := range cfg.SharedWriters {
		op := writeOp(n, cfg.Keyspace, uint64(repeat), func(ctx context.Context, _ int, key string) error {
			return rc.Set(ctx, key, value, 0).Err()
		})
		res, err := runLoad(ctx, n, cfg.Warmup, cfg.Duration, c.PIDs(), op)
		if err != nil {
			return run, fmt.Errorf("shared-storage writes at %d writers: %w", n, err)
		}
		run.SharedWrites = append(run.SharedWrites, res)
		logLoad(log, SystemShared, repeat, fmt.Sprintf("write w=%d", n), res)
	}
	run.ErrorReplies, run.ErrorReplyExamples = counter.counts()
	run.ServerLog = c.LogCounts()
	if run.SharedEngines, run.SharedConvergeMs, err = runSharedEngines(ctx, cfg, dir, repeat, log); err != nil {
		return run, err
	}
	run.SharedCeiling, err = runSharedCeilings(ctx, cfg, dir, repeat, log)
	return run, err
}

// sharedCell is the shared-storage writes at one writer count.
type sharedCell struct {
	Writers int `json:"writers"`
	// Engines is seed 000's shape, three engines in one process; RESP
	// three server processes through go-redis's ClusterClient.
	Engines *loadSummary `json:"engines_in_process"`
	RESP    *loadSummary `json:"resp_processes"`
	// ConvergeMs is how long the replaying engines took to apply all of
	// a load once it ended.
	ConvergeMs benchkit.Summary `json:"replicas_converge_ms"`
	// Ceiling is the same writers on bare appends with fdatasync (one
	// file a shard, group commit, no engine); EnginesVsCeiling the
	// engines' writes/s over it, per repeat.
	Ceiling          *loadSummary      `json:"ceiling_append_fdatasync"`
	EnginesVsCeiling *benchkit.Summary `json:"engines_vs_ceiling_ratio,omitempty"`
	// SeedPerSec is seed 000's rate at this many writers; VsSeed is ours
	// over it, per repeat.
	SeedPerSec float64           `json:"seed_per_s"`
	VsSeed     *benchkit.Summary `json:"vs_seed_ratio,omitempty"`
	RESPVsSeed *benchkit.Summary `json:"resp_vs_seed_ratio,omitempty"`
}

type sharedReport struct {
	Run         bool         `json:"run"`
	Description string       `json:"description"`
	Cells       []sharedCell `json:"cells,omitempty"`
}

// overSeed is each load's writes/s over the seed's, summarized; nil
// without either.
func overSeed(ls []loadResult, seed float64) *benchkit.Summary {
	if seed <= 0 || len(ls) == 0 {
		return nil
	}
	ratios := make([]float64, len(ls))
	for j, l := range ls {
		ratios[j] = l.PerSec / seed
	}
	s := benchkit.Summarize(ratios)
	return &s
}

// buildShared summarizes the shared runs by writer count.
func buildShared(cfg Config, rs []systemRun) sharedReport {
	rep := sharedReport{
		Run:         len(rs) > 0,
		Description: "W concurrent writers of durable SETs (random keys, each acknowledged once the shared-log append holding it is fdatasynced), every shard's log in one shared directory on this machine's disk, replayed by the other members; engines_in_process: seed 000's shape, three engines in this process, engine 1 writing every shard, Execute(SET) called directly; resp_processes: three examples/server processes with --storage-backend shared-fs, one writer a shard, go-redis ClusterClient SET; compared with seed 000's shared-storage figures (its scale harness, 3 nodes in one process, one box)",
	}
	for i, w := range cfg.SharedWriters {
		var engines, resp, ceiling []loadResult
		var conv, vsCeiling []float64
		for _, r := range rs {
			if i < len(r.SharedEngines) {
				engines = append(engines, r.SharedEngines[i])
				conv = append(conv, r.SharedConvergeMs[i])
			}
			if i < len(r.SharedCeiling) {
				ceiling = append(ceiling, r.SharedCeiling[i])
				if i < len(r.SharedEngines) {
					vsCeiling = append(vsCeiling, r.SharedEngines[i].PerSec/r.SharedCeiling[i].PerSec)
				}
			}
			if i < len(r.SharedWrites) {
				resp = append(resp, r.SharedWrites[i])
			}
		}
		seed := seedSharedPerSec[w]
		cell := sharedCell{Writers: w, Engines: summarizeLoads(engines), RESP: summarizeLoads(resp), ConvergeMs: benchkit.Summarize(conv), SeedPerSec: seed}
		cell.VsSeed, cell.RESPVsSeed = overSeed(engines, seed), overSeed(resp, seed)
		cell.Ceiling = summarizeLoads(ceiling)
		if len(vsCeiling) > 0 {
			s := benchkit.Summarize(vsCeiling)
			cell.EnginesVsCeiling = &s
		}
		rep.Cells = append(rep.Cells, cell)
	}
	return rep
}
