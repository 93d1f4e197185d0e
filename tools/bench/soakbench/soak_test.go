package soakbench

import (
	"bytes"
	"encoding/json"
	"image/png"
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

// A 20-second soak against a real server process: every class runs
// without an error, the report holds the samples and windows, the PNG
// decodes, and the last line of stdout is the summary. Whether the bounds
// hold over 20 seconds on a shared machine is not the test's business.
func TestSoakEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server for 20 s")
	}
	out := filepath.Join(t.TempDir(), "soak.json")
	cfg := DefaultConfig(false)
	cfg.Duration, cfg.Rate, cfg.Dir, cfg.Out = 20*time.Second, 200, t.TempDir(), out
	var stdout bytes.Buffer
	err := Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard))
	if err != nil {
		require.ErrorIs(t, err, ErrBoundsBroken)
	}

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	require.Regexp(t, regexp.MustCompile(`^soak: minutes=0\.3 ops=[0-9]+ errors=0 rss_warm_mb=[0-9.]+ rss_max_mb=[0-9.]+ rss_ratio=[0-9.]+ p99_ratio_max=[0-9.]+ class=[a-z]+ ok=(true|false)$`), last)
	require.Equal(t, err == nil, strings.HasSuffix(last, "ok=true"), "exit status and verdict agree")
	var printed map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.Join(lines[:len(lines)-1], "\n")), &printed), "stdout holds one JSON object before the summary line")
	require.Equal(t, true, printed["durable"])

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(b, &rep))
	require.True(t, rep.Server.Durable)
	require.Contains(t, rep.Server.Maintenance, "every 1s")
	require.Len(t, rep.Samples, 20, "one sample a second")
	require.Len(t, rep.Windows, 3)
	for _, c := range rep.Classes {
		var ops int64
		for _, s := range rep.Samples {
			cs := s.Classes[c.Name]
			require.Zero(t, cs.Errors, "%s at %.0f s: %s", c.Name, s.ElapsedS, cs.Error)
			ops += cs.Ops
		}
		require.Positive(t, ops, c.Name)
		require.Positive(t, rep.Windows[0].Classes[c.Name].Ops, c.Name)
	}
	for _, s := range rep.Samples {
		require.Positive(t, s.RSSMB)
		require.Positive(t, s.DataMB)
	}
	require.Zero(t, rep.Verdict.Errors)

	require.Equal(t, strings.TrimSuffix(out, ".json")+".png", rep.PNG)
	f, err := os.Open(rep.PNG)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dy(), img.Bounds().Dx(), "three panels, one above the other")
}

// A bad setting is a usage error (exit 2), a run that cannot start a
// failure; neither writes a report.
func TestCommandUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, Command([]string{"--rate", "fast"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "bench soak")
	stderr.Reset()
	require.Equal(t, 1, Command([]string{"--workers", "0"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "workers 0")
	require.Equal(t, 0, Command([]string{"--help"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "--p99-growth")
}
