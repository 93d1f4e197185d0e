package flowsbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// needPostgres skips a test where PostgreSQL's server binaries are not
// installed; CI installs them.
func needPostgres(t *testing.T) {
	t.Helper()
	if _, err := findPGBin(""); err != nil {
		t.Skipf("PostgreSQL's server binaries are not installed (apt-get install postgresql): %v", err)
	}
}

// pgDir is a fresh directory the postgres OS user can reach (t.TempDir's
// are private to root).
func pgDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "flowsbench-test-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testConfig is a small run writing its report into the test's
// directory.
func testConfig(t *testing.T, flows int, systems ...string) Config {
	cfg := DefaultConfig(true)
	cfg.Flows, cfg.Repeats, cfg.Systems = flows, 1, systems
	cfg.Dir, cfg.Out = pgDir(t), filepath.Join(t.TempDir(), "flows.json")
	return cfg
}

// jsonReport is the report as a reader of the JSON sees it.
type jsonReport struct {
	Name       string                   `json:"name"`
	Conditions map[string]any           `json:"conditions"`
	Summary    map[string]*float64      `json:"summary"`
	Systems    map[string]*systemReport `json:"systems"`
	VsPostgres *benchkit.Summary        `json:"vs_postgres_ratio"`
	VsRiver    *benchkit.Summary        `json:"vs_river_ratio"`
	Skipped    []string                 `json:"skipped"`
	Errors     []string                 `json:"errors"`
}

func readReport(t *testing.T, path string) jsonReport {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var r jsonReport
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

// A small live run of the real peers, PostgreSQL and River, end to end:
// every flow completed exactly once by both counts, the report's shape,
// the skipped system and the last line.
func TestRunPeers(t *testing.T) {
	needPostgres(t)
	const flows = 2000
	cfg := testConfig(t, flows, "ghost", SystemPostgres, SystemRiver)
	var out bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &out, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Ours is not run here, so its rate and both ratios are n/a.
	require.Equal(t, "flows: e2e_per_s=n/a vs_postgres_ratio=n/a vs_river_ratio=n/a vs_ceiling_ratio=n/a", lines[len(lines)-1])

	r := readReport(t, cfg.Out)
	require.Equal(t, "flows", r.Name)
	require.Equal(t, []string{"ghost"}, r.Skipped)
	require.Empty(t, r.Errors)
	require.Nil(t, r.VsPostgres)
	require.Nil(t, r.VsRiver)
	require.Contains(t, r.Summary, "e2e_per_s")
	require.Contains(t, r.Summary, "vs_postgres_ratio")
	require.Contains(t, r.Summary, "vs_river_ratio")
	require.Len(t, r.Systems, 2)
	for _, name := range []string{SystemPostgres, SystemRiver} {
		s := r.Systems[name]
		require.NotNil(t, s, name)
		require.Equal(t, []int{flows}, s.CompletedOnce, name)
		require.Len(t, s.Runs, 1, name)
		run := s.Runs[0]
		require.Equal(t, flows, run.Flows, name)
		require.Positive(t, run.E2EPerS, name)
		require.Positive(t, run.CreateSeconds, name)
		require.LessOrEqual(t, run.CreateSeconds, run.E2ESeconds, name)
		require.Positive(t, run.DueToClaimP50Ms, name)
		require.LessOrEqual(t, run.DueToClaimP50Ms, run.DueToClaimP95Ms, name)
		require.LessOrEqual(t, run.DueToClaimP95Ms, run.DueToClaimP99Ms, name)
		require.Empty(t, run.Violations, name)
		require.Equal(t, run.E2EPerS, s.E2EPerS.Median, name)
		require.Contains(t, r.Conditions[name], "PostgreSQL", name)
	}
	require.Contains(t, r.Conditions[SystemRiver], "MaxWorkers 1000")
	ents, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the run removes its directories")
}

// The postgres peer's own record catches a flow completed twice, one
// missing, and a completion whose claim no longer holds.
func TestPostgresVerify(t *testing.T) {
	needPostgres(t)
	ctx := t.Context()
	cfg := DefaultConfig(true)
	q := &pgQueue{cfg: cfg}
	dir := filepath.Join(pgDir(t), "pg")
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() { require.NoError(t, q.Close()) })
	require.NoError(t, q.Start(ctx, dir))
	for _, setting := range []string{"fsync", "synchronous_commit"} {
		var v string
		require.NoError(t, q.pool.QueryRow(ctx, "SHOW "+setting).Scan(&v))
		require.Equal(t, "on", v, "durable: %s", setting)
	}

	items := makeItems(3, 8, 1)
	require.NoError(t, q.CreateMany(ctx, items))
	cs, err := q.Claim(ctx, "w0", 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []claimed{{"f00000000", items[0].Payload, "w0"}, {"f00000001", items[1].Payload, "w0"}, {"f00000002", items[2].Payload, "w0"}}, cs)
	none, err := q.Claim(ctx, "w1", 10)
	require.NoError(t, err)
	require.Empty(t, none, "claimed flows are not due")
	require.NoError(t, q.CompleteMany(ctx, cs))
	require.ErrorContains(t, q.CompleteMany(ctx, cs[:1]), "no longer held")

	once, err := q.Verify(ctx, 3)
	require.NoError(t, err)
	require.Equal(t, 3, once)
	_, err = q.Verify(ctx, 4)
	require.ErrorContains(t, err, "3 flows stored, 4 created")

	_, err = q.pool.Exec(ctx, `UPDATE flow_queue SET completed_count = 2 WHERE id = $1`, items[1].ID)
	require.NoError(t, err)
	once, err = q.Verify(ctx, 3)
	require.ErrorContains(t, err, "1 flows completed more than once")
	require.Equal(t, 2, once)
}

// memQueue is an in-memory poller for the harness's own checks; faults
// make it misbehave.
type memQueue struct {
	mu        sync.Mutex
	queued    []string
	payloads  map[string][]byte
	completes map[string]int
	// redeliver hands the first completed flow out once more.
	redeliver bool
	// lie makes Verify count one flow twice.
	lie bool
}

func (q *memQueue) Name() string                        { return "mem" }
func (q *memQueue) Start(context.Context, string) error { return nil }
func (q *memQueue) Close() error                        { return nil }

func (q *memQueue) CreateMany(_ context.Context, items []item) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.payloads == nil {
		q.payloads = map[string][]byte{}
	}
	for _, it := range items {
		q.queued = append(q.queued, it.ID)
		q.payloads[it.ID] = it.Payload
	}
	return nil
}

func (q *memQueue) Claim(_ context.Context, worker string, limit int) ([]claimed, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []claimed
	for len(out) < limit && len(q.queued) > 0 {
		out = append(out, claimed{ID: q.queued[0], Payload: q.payloads[q.queued[0]], Token: worker})
		q.queued = q.queued[1:]
	}
	if q.redeliver && q.completes[flowID(0)] > 0 {
		q.redeliver = false
		out = append(out, claimed{ID: flowID(0), Payload: q.payloads[flowID(0)], Token: worker})
	}
	return out, nil
}

func (q *memQueue) CompleteMany(_ context.Context, cs []claimed) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range cs {
		q.completes[c.ID]++
	}
	return nil
}

func (q *memQueue) Verify(_ context.Context, n int) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var once, twice int
	for _, c := range q.completes {
		if c == 1 {
			once++
		} else {
			twice++
		}
	}
	if q.lie {
		once, twice = once-1, twice+1
	}
	return once, checkCounts(n, once, twice, n-len(q.completes), len(q.completes))
}

// The harness fails a run whose flows are not completed exactly once,
// whether it sees the double itself or only the system's record shows
// it, after writing the report; a sound system passes.
func TestHarnessExactlyOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    *memQueue
		want []string
	}{
		{"sound", &memQueue{}, nil},
		{"redelivered", &memQueue{redeliver: true}, []string{"flow f00000000 claimed again", "flow f00000000 completed twice", "1 flows completed more than once"}},
		{"double in the record", &memQueue{lie: true}, []string{"1 flows completed more than once", "299 of 300 flows completed exactly once"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.completes = map[string]int{}
			cfg := DefaultConfig(true)
			cfg.Flows, cfg.Repeats, cfg.CreateBatch, cfg.ClaimLimit, cfg.Systems = 300, 1, 7, 5, []string{"ghost", "mem"}
			cfg.Dir, cfg.Out = t.TempDir(), filepath.Join(t.TempDir(), "flows.json")
			reg := map[string]factory{"mem": func(Config, *slog.Logger) system { return tc.q }}
			var out bytes.Buffer
			err := run(t.Context(), cfg, reg, &out, benchkit.NewProgress(io.Discard))
			r := readReport(t, cfg.Out)
			require.Equal(t, []string{"ghost"}, r.Skipped)
			require.Contains(t, out.String(), "flows: e2e_per_s=n/a vs_postgres_ratio=n/a vs_river_ratio=n/a vs_ceiling_ratio=n/a\n")
			if tc.want == nil {
				require.NoError(t, err)
				require.Empty(t, r.Errors)
				require.Equal(t, []int{300}, r.Systems["mem"].CompletedOnce)
				return
			}
			require.Error(t, err)
			require.ErrorContains(t, err, "exactly-once violated")
			joined := strings.Join(r.Errors, "\n")
			for _, w := range tc.want {
				require.Contains(t, joined, w)
				require.Contains(t, out.String(), w, "the table shows the violation")
			}
		})
	}
}

// A system that is neither a poller nor a consumer is an error, not a
// hang.
func TestRunNeitherShape(t *testing.T) {
	cfg := DefaultConfig(true)
	cfg.Flows, cfg.Systems, cfg.Dir, cfg.Out = 10, []string{"odd"}, t.TempDir(), filepath.Join(t.TempDir(), "flows.json")
	reg := map[string]factory{"odd": func(Config, *slog.Logger) system { return oddSystem{} }}
	err := run(t.Context(), cfg, reg, io.Discard, benchkit.NewProgress(io.Discard))
	require.ErrorContains(t, err, "neither polls")
	require.ErrorContains(t, run(t.Context(), cfg, map[string]factory{}, io.Discard, benchkit.NewProgress(io.Discard)), "none of the systems")
}

type oddSystem struct{}

func (oddSystem) Name() string                             { return "odd" }
func (oddSystem) Start(context.Context, string) error      { return nil }
func (oddSystem) CreateMany(context.Context, []item) error { return nil }
func (oddSystem) Verify(context.Context, int) (int, error) { return 0, errors.New("unused") }
func (oddSystem) Close() error                             { return nil }

// The last line: ours' median rate and the per-repeat-pair ratios'
// medians.
func TestSummaryLine(t *testing.T) {
	rates := func(xs ...float64) []runResult {
		rs := make([]runResult, len(xs))
		for i, x := range xs {
			rs[i] = runResult{Repeat: i + 1, Flows: 10, E2EPerS: x, CompletedOnce: 10}
		}
		return rs
	}
	cfg := DefaultConfig(false)
	r := newReport(cfg, []string{SystemOurs, SystemPostgres, SystemRiver}, map[string][]runResult{
		SystemOurs:     rates(300, 100, 200),
		SystemPostgres: rates(100, 50, 100),
		SystemRiver:    rates(30, 20, 10),
	}, time.Time{})
	require.Equal(t, "flows: e2e_per_s=200 vs_postgres_ratio=2.00 vs_river_ratio=10.00 vs_ceiling_ratio=n/a", benchkit.SummaryLine("flows", r.Summary))
	require.Equal(t, benchkit.Summary{Min: 2, Median: 2, Max: 3}, *r.VsPostgres)
	require.Equal(t, benchkit.Summary{Min: 5, Median: 10, Max: 20}, *r.VsRiver)
}
