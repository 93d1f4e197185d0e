package raftbench

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func TestMain(m *testing.M) {
	MaybeRunEtcdMember()
	os.Exit(m.Run())
}

func TestSummaryPairsPickTheHeadline(t *testing.T) {
	ratio := func(med, lo, hi float64) *benchkit.Summary { return &benchkit.Summary{Min: lo, Median: med, Max: hi} }
	sys := func(w, p50 float64) *systemSummary {
		return &systemSummary{WritesPerSec: benchkit.Summary{Median: w}, P50Ms: benchkit.Summary{Median: p50}}
	}
	rep := &report{Cells: []cellReport{
		{cell: cell{16, 256}, Systems: map[string]*systemSummary{SystemOurs: sys(9, 9), SystemEtcd: sys(9, 9)}, WritesRatio: ratio(9, 9, 9), P99Ratio: ratio(9, 9, 9)},
		{cell: cell{256, 1}, Systems: map[string]*systemSummary{SystemOurs: sys(500, 0.8), SystemEtcd: sys(300, 2.1)}, WritesRatio: ratio(1.6, 1.5, 1.7), P99Ratio: ratio(1, 1, 1)},
		{cell: cell{256, 256}, Systems: map[string]*systemSummary{SystemOurs: sys(12000, 15), SystemEtcd: sys(4000, 60)}, WritesRatio: ratio(3, 2.5, 3.5), P99Ratio: ratio(1.4, 1.2, 1.6)},
	}}
	got := map[string]float64{}
	for _, p := range summaryPairs(rep) {
		got[p.Key] = p.Value
	}
	require.Equal(t, 3.0, got["writes_c256_vs_etcd_ratio"])
	require.Equal(t, 1.4, got["p99_c256_vs_etcd_ratio"])
	require.Equal(t, 0.8, got["single_client_p50_ms"])
	require.Equal(t, 2.5, got["writes_ratio_min"])
	require.Equal(t, 3.5, got["writes_ratio_max"])
	require.Equal(t, 12000.0, got["ours_writes_per_sec"])
	require.Equal(t, 2.1, got["etcd_single_client_p50_ms"])
	// The first three keys are the goals, in the order the issue names them.
	require.True(t, strings.HasPrefix(benchkit.SummaryLine("raft", summaryPairs(rep)), "raft: writes_c256_vs_etcd_ratio=3.00 p99_c256_vs_etcd_ratio=1.40 single_client_p50_ms=0.800"))
}

// TestRunShort runs every default system and the three-process one for a
// moment, durable on the real disk, and checks the report's shape and that
// the figures are measured ones.
func TestRunShort(t *testing.T) {
	systems := []string{SystemOurs, SystemOursProcs, SystemEtcd, SystemEtcdProcs}
	if testing.Short() {
		systems = []string{SystemOurs}
	}
	out := filepath.Join(t.TempDir(), "raft.json")
	cfg := DefaultConfig(true)
	cfg.Duration, cfg.Warmup, cfg.Repeats = 300*time.Millisecond, 50*time.Millisecond, 1
	cfg.Payloads, cfg.Concurrency, cfg.Systems, cfg.Out, cfg.Dir = []int{16}, []int{1, 8}, systems, out, t.TempDir()
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, slog.New(slog.NewTextHandler(io.Discard, nil))))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "raft: writes_c8_vs_etcd_ratio="), last)
	fields := map[string]string{}
	for _, f := range strings.Fields(last)[1:] {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	p50, err := strconv.ParseFloat(fields["single_client_p50_ms"], 64)
	require.NoError(t, err)
	require.Greater(t, p50, 0.0)

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Summary map[string]any `json:"summary"`
		Cells   []cellReport   `json:"cells"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Contains(t, rep.Summary, "single_client_p50_ms")
	if !testing.Short() {
		require.Contains(t, rep.Summary, "procs_writes_c8_vs_etcd_ratio")
	}
	require.Len(t, rep.Cells, 2)
	for _, c := range rep.Cells {
		for _, s := range systems {
			r := c.Systems[s].Runs[0]
			require.Positive(t, r.Writes, "%s %v", s, c.cell)
			require.Positive(t, r.Fsyncs, "%s %v: a durable run fsyncs", s, c.cell)
			require.False(t, math.IsNaN(float64(r.ProposalsPerFsync)))
			require.Zero(t, r.Errors)
		}
	}
}
