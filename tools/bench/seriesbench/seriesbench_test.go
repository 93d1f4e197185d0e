package seriesbench

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// A very short run against a real redis-server prints the summary line
// and writes a report with every case of both systems.
func TestRunSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "series.json")
	cfg := DefaultConfig(true)
	cfg.Clients, cfg.Duration, cfg.Warmup, cfg.Repeats = 4, 150*time.Millisecond, 20*time.Millisecond, 1
	cfg.Dir, cfg.Out = t.TempDir(), out
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Regexp(t, regexp.MustCompile(`^series: window_vs_redis_ratio=[0-9.]+ counter_vs_redis_ratio=[0-9.]+ rollup_speedup_ratio=[0-9.]+ `), lines[len(lines)-1])
	require.Contains(t, lines[len(lines)-1], " window_server_cpu_ratio=")
	require.Regexp(t, regexp.MustCompile(` window_shared_cpu_ceiling=[0-9.]+ counter_shared_cpu_ceiling=[0-9.]+`), lines[len(lines)-1], "the shared layout reports the ceilings")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Runs []run `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	seen := map[string]bool{}
	for _, r := range rep.Runs {
		require.Positive(t, r.OpsPerSec, "%s %s", r.Case, r.System)
		require.GreaterOrEqual(t, r.ServerCPUUsPerOp, 0.0, "%s %s", r.Case, r.System)
		seen[r.Case+"/"+r.System] = true
	}
	require.Len(t, seen, 6)
}

// A run of one case (--cases counter) writes its report and prints that
// case alone: the cases left out have no ratio, and JSON has no NaN.
func TestRunOneCase(t *testing.T) {
	out := filepath.Join(t.TempDir(), "series.json")
	cfg := DefaultConfig(true)
	cfg.Clients, cfg.Duration, cfg.Warmup, cfg.Repeats = 4, 150*time.Millisecond, 20*time.Millisecond, 1
	cfg.Dir, cfg.Out, cfg.Cases = t.TempDir(), out, []string{"counter"}
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	text := stdout.String()
	require.Regexp(t, regexp.MustCompile(`(?m)^\s*counter\s+[0-9]`), text)
	require.NotRegexp(t, regexp.MustCompile(`(?m)^\s*(window|append)\s+[0-9]`), text)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	require.Regexp(t, regexp.MustCompile(`^series: window_vs_redis_ratio=n/a counter_vs_redis_ratio=[0-9.]+ `), lines[len(lines)-1])
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Ratios map[string]any `json:"ratios"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Contains(t, rep.Ratios, "counter")
	require.NotContains(t, rep.Ratios, "window")
}

func TestSharedCPUCeiling(t *testing.T) {
	runs := []run{
		{Case: "window", System: "redis", ServerCPUUsPerOp: 54, ClientCPUUsPerOp: 46},
		{Case: "window", System: "redis", ServerCPUUsPerOp: 56, ClientCPUUsPerOp: 48},
		{Case: "window", System: "ours", ServerCPUUsPerOp: 25, ClientCPUUsPerOp: 50},
		{Case: "counter", System: "redis", ServerCPUUsPerOp: 22, ClientCPUUsPerOp: 42},
		{Case: "counter", System: "ours", ServerCPUUsPerOp: 20, ClientCPUUsPerOp: 0},
	}
	tests := []struct {
		name   string
		shared bool
		want   float64 // NaN: no ceiling
	}{
		{"window", true, (55.0 + 47.0) / 50},
		{"window", false, math.NaN()},
		{"counter", true, math.NaN()}, // no client CPU measured
		{"append", true, math.NaN()},  // no runs
	}
	for _, tc := range tests {
		got := sharedCPUCeiling(runs, tc.name, tc.shared)
		if math.IsNaN(tc.want) {
			require.True(t, math.IsNaN(got), "%s shared=%v: %v", tc.name, tc.shared, got)
			continue
		}
		require.InDelta(t, tc.want, got, 1e-9, "%s", tc.name)
	}
}

// The table prints "n/a" for a ratio the run could not measure (a server
// CPU of 0 in a run shorter than the process clock's tick) instead of
// failing.
func TestPrintTableWithoutServerCPURatio(t *testing.T) {
	runs := []run{
		{Case: "counter", System: "ours", OpsPerSec: 10, ServerCPUUsPerOp: 0},
		{Case: "counter", System: "redis", OpsPerSec: 5, ServerCPUUsPerOp: 0},
	}
	rep := report{Ratios: map[string]any{"counter": benchkit.Summary{Median: 2, Min: 2, Max: 2}}}
	var out bytes.Buffer
	printTable(&out, runs, rep, rollupResult{})
	require.Regexp(t, `counter .* 2\.00 \(2\.00\.\.2\.00\)\s+n/a`, out.String())
}
