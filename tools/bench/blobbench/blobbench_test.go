package blobbench

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The whole benchmark, tiny, against a real server and redis-server: the
// report has every figure and the last line has its form.
func TestRunSmoke(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (make deps)")
	}
	cfg := DefaultConfig(true)
	cfg.BlobBytes, cfg.Blobs, cfg.ValueBytes, cfg.Values, cfg.Repeats = 1<<20+7, 2, 64<<10, 2, 1
	cfg.Dir = t.TempDir()
	cfg.Out = filepath.Join(t.TempDir(), "blob.json")
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	ratio := `([0-9]+\.[0-9]{2}|n/a)`
	require.Regexp(t, regexp.MustCompile(`^blob: set64m_vs_redis_ratio=`+ratio+` get64m_vs_redis_ratio=`+ratio+
		` upload_vs_disk_ratio=[0-9]+\.[0-9]{2} download_vs_disk_ratio=[0-9]+\.[0-9]{2}`+
		` upload_vs_null_http_ratio=[0-9]+\.[0-9]{2} download_vs_null_http_ratio=[0-9]+\.[0-9]{2} sha256_vs_disk_ratio=[0-9]+\.[0-9]{2}$`), lines[len(lines)-1])

	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	var rep struct {
		Name       string            `json:"name"`
		Conditions map[string]string `json:"conditions"`
		Blob       Comparison        `json:"blob_vs_disk"`
		Ceiling    Comparison        `json:"blob_vs_null_http"`
		RESP       Comparison        `json:"resp_vs_redis"`
		Hash       Comparison        `json:"sha256_vs_disk"`
		Summary    map[string]any    `json:"summary"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, "blob", rep.Name)
	require.ElementsMatch(t, []string{"upload", "download", "download_cold"}, keys(rep.Blob.Figures))
	for _, f := range rep.Blob.Figures {
		require.Len(t, f.PerRepeat, 1)
		require.Greater(t, f.OursMBps.Median, 0.0)
		require.Greater(t, f.PeerMBps.Median, 0.0)
		require.Greater(t, f.Ratio.Median, 0.0)
	}
	require.ElementsMatch(t, []string{"upload", "download"}, keys(rep.Ceiling.Figures))
	for _, f := range rep.Ceiling.Figures {
		require.Greater(t, f.PeerMBps.Median, 0.0)
	}
	require.ElementsMatch(t, []string{"set", "get"}, keys(rep.RESP.Figures))
	for _, f := range rep.RESP.Figures {
		require.Len(t, f.PerRepeat, 1)
		require.Greater(t, f.PeerMBps.Median, 0.0, "Redis runs whatever ours does")
		if rep.RESP.OursRefused == "" {
			require.Greater(t, f.Ratio.Median, 0.0)
		}
	}
	require.Equal(t, []string{"upload"}, keys(rep.Hash.Figures))
	require.Greater(t, rep.Hash.Figures["upload"].OursMBps.Median, 0.0)
	require.Len(t, rep.Summary, 7)
	for _, k := range []string{"durability", "page_cache", "verification", "order"} {
		require.NotEmpty(t, rep.Conditions[k], k)
	}
	ents, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the run removes its directory")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A read of other bytes, or of too few, fails rather than counts.
func TestReadCheck(t *testing.T) {
	c := newCorpus(1, 3000, 3)
	buf := make([]byte, 1024)
	require.NoError(t, readCheck(bytes.NewReader(c.item(1)), c.item(1), buf))
	require.ErrorIs(t, readCheck(bytes.NewReader(c.item(2)), c.item(1), buf), errMismatch)
	require.ErrorIs(t, readCheck(bytes.NewReader(c.item(1)[:2999]), c.item(1), buf), errMismatch)
	require.NotEqual(t, c.sums[0], c.sums[1])
}
