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
	// Enough requests that each server's CPU time spans several of the
	// clock ticks /proc counts it in (10 ms): 2,000 SETs left Redis's at 0.
	cfg.Requests, cfg.Repeats, cfg.Sizes, cfg.Pipelines = 30_000, 1, []int{16}, []int{1}
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

// Our server's time per call is read from INFO commandstats and
// latencystats lines, as the server writes them.
func TestParseServerTime(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_get:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_set:calls=200000,usec=100748566,usec_per_call=503.74,rejected_calls=0,failed_calls=0\r\n\n" +
		"# Latencystats\r\nlatency_percentiles_usec_set:p50=512.000,p99=4096.000,p99.9=8192.000\r\n" +
		"latency_percentiles_usec_get:p50=4.000,p99=8.000,p99.9=16.000\r\n"
	mean, p50, p99, ok := parseServerTime(info, "set")
	require.True(t, ok)
	require.InDelta(t, 503.74283, mean, 1e-3)
	require.Equal(t, 512.0, p50)
	require.Equal(t, 4096.0, p99)
	mean, p50, p99, ok = parseServerTime(info, "get")
	require.True(t, ok)
	require.Equal(t, []float64{5, 4, 8}, []float64{mean, p50, p99})
	_, _, _, ok = parseServerTime(info, "incr")
	require.False(t, ok, "no line for the command")
	_, _, _, ok = parseServerTime("cmdstat_set:calls=0,usec=0\nlatency_percentiles_usec_set:p50=1", "set")
	require.False(t, ok, "no calls")
}
