package seriesbench

import (
	"bytes"
	"encoding/json"
	"io"
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
