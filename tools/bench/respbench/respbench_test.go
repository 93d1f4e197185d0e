package respbench

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// A tiny run against the real redis-server with the real redis-benchmark.
func TestRunSmoke(t *testing.T) {
	cfg := DefaultConfig(true)
	cfg.Requests, cfg.Repeats, cfg.Sizes, cfg.Pipelines = 2000, 1, []int{16}, []int{1}
	cfg.Dir, cfg.Out = t.TempDir(), filepath.Join(t.TempDir(), "resp.json")
	var out bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &out, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, regexp.MustCompile(`^resp: set_p1_ratio=[0-9.]+ get_p1_ratio=[0-9.]+ set_p16_ratio=n/a get_p16_ratio=n/a durable_set_p1_ratio=[0-9.]+ null_set_p1_ratio=[0-9.]+ null_get_p1_ratio=[0-9.]+$`), lines[len(lines)-1])

	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	var rep struct {
		Cases []caseReport `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.NotEmpty(t, rep.Cases)
	for _, c := range rep.Cases {
		require.Positive(t, c.ServerTime["mean_us"].Median, "%s %s: our server's own time per call", c.Mode, c.Test)
		require.GreaterOrEqual(t, c.ServerTime["p99_us"].Median, c.ServerTime["p50_us"].Median)
		if c.Mode == modeAsync {
			require.NotNil(t, c.NullRatio, "%s: the null server ran beside the async pairing", c.Test)
			require.Len(t, c.Runs["null"], cfg.Repeats)
			require.Positive(t, c.Ops["null"].Median)
		} else {
			require.Nil(t, c.NullRatio)
		}
		for _, sys := range []string{"redis", "ours"} {
			require.Greater(t, c.ServerCPU[sys].Median, 0.0, "%s %s server CPU", c.Test, sys)
			require.Greater(t, c.ClientCPU[sys].Median, 0.0, "%s %s client CPU", c.Test, sys)
			require.Greater(t, c.Busy[sys].Median, 0.0, "%s %s busy", c.Test, sys)
			require.LessOrEqual(t, c.Busy[sys].Median, 110.0, "%s %s busy", c.Test, sys)
		}
	}
}
