package respbench

import (
	"bytes"
	"io"
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
	require.Regexp(t, regexp.MustCompile(`^resp: set_p1_ratio=[0-9.]+ get_p1_ratio=[0-9.]+ set_p16_ratio=n/a get_p16_ratio=n/a durable_set_p1_ratio=[0-9.]+$`), lines[len(lines)-1])
}
