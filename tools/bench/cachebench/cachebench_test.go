package cachebench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// Every system, fed a working set that fits, hits on every request after
// the first touch of each key: Sets are visible to the next Get (ristretto
// thanks to Wait).
func TestSystemsHitWhatFits(t *testing.T) {
	systems := peerSystems()
	if s, ok := ours(); ok {
		systems[SystemOurs] = s
	}
	for name, sys := range systems {
		c, err := sys.open(100)
		require.NoError(t, err)
		hits := 0
		for i := range 1000 {
			if c.access(uint64(i % 10)) {
				hits++
			}
		}
		c.close()
		require.GreaterOrEqual(t, hits, 980, name)
	}
}

var summaryHead = regexp.MustCompile(`^cache: oltp1000_hit=(n/a|[0-9.]+) oltp1000_vs_otter_points=(n/a|-?[0-9.]+) get_vs_otter_ratio=n/a get_vs_ristretto_ratio=n/a( [a-z0-9_]+=(n/a|-?[0-9.]+))*$`)

// The quick configuration on tiny stand-in traces: every system replays
// every cell, the report is written and the summary line comes last.
func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var arc, lirs strings.Builder
	for i := range 3000 {
		arc.WriteString(strings.Join([]string{strconv.Itoa(i % 1500 * 2), "2", "0", "0"}, " ") + "\n")
		lirs.WriteString(strconv.Itoa(i*7%1300) + "\n")
	}
	writeTrace(t, filepath.Join(dir, "oltp.gz"), arc.String(), true)
	writeTrace(t, filepath.Join(dir, "gli.gz"), lirs.String(), true)

	cfg := DefaultConfig(true)
	cfg.TracesDir = dir
	cfg.Repeats = 2
	cfg.Out = filepath.Join(dir, "out", "cache.json")
	require.NoError(t, setZipf(&cfg, func(z *ZipfParams) { z.Requests = 20_000 }, nil))
	var stdout bytes.Buffer
	require.NoError(t, Run(context.Background(), cfg, &stdout, benchkit.NewProgress(io.Discard)))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	require.Regexp(t, summaryHead, last)
	require.Contains(t, last, " gli1000_otter_hit=")
	require.Contains(t, last, " zipf500_ristretto_hit=")

	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	var rep struct {
		Conditions map[string]any `json:"conditions"`
		Summary    map[string]any `json:"summary"`
		Cells      []struct {
			Key      string `json:"key"`
			Requests int    `json:"requests"`
			Systems  map[string]struct {
				HitPercent benchkit.Summary `json:"hit_percent"`
				Runs       []runResult      `json:"runs"`
			} `json:"systems"`
			Points map[string]benchkit.Summary `json:"points"`
		} `json:"cells"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Cells, 3)
	require.Equal(t, "oltp1000", rep.Cells[0].Key)
	require.Equal(t, 6000, rep.Cells[0].Requests) // 3000 lines of count 2
	require.Equal(t, 20_000, rep.Cells[2].Requests)
	_, oursRan := ours()
	for _, c := range rep.Cells {
		for _, s := range []string{SystemOtter, SystemRistretto, SystemLRU} {
			require.Len(t, c.Systems[s].Runs, 2, "%s %s", c.Key, s)
			h := c.Systems[s].HitPercent
			require.True(t, h.Min >= 0 && h.Max <= 100 && h.Min <= h.Median && h.Median <= h.Max)
		}
		if oursRan {
			require.Contains(t, c.Points, "vs_otter_points")
			require.Contains(t, c.Points, "vs_ristretto_points")
		}
	}
	// The LRU is deterministic: its repeats agree.
	l := rep.Cells[1].Systems[SystemLRU].HitPercent
	require.Equal(t, l.Min, l.Max)
	require.Nil(t, rep.Summary["get_vs_otter_ratio"])
	require.Contains(t, rep.Conditions["throughput"], "not measured yet")
	settings := rep.Conditions["settings"].(map[string]any)
	require.Equal(t, otterModule, settings[SystemOtter].(map[string]any)["module"])
	if oursRan {
		require.Contains(t, settings[SystemOurs].(map[string]any)["version"], "working tree")
	}
}

// A user's trace replaces the bundled ones, at the capacities given.
func TestRunUserTrace(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 2000 {
		text.WriteString(strconv.Itoa(i*i%301) + "\n")
	}
	path := filepath.Join(dir, "My-Trace.txt")
	writeTrace(t, path, text.String(), false)

	cfg := DefaultConfig(false)
	cfg.UserTrace = path
	cfg.UserCapacities = []int{50, 100}
	cfg.Repeats = 1
	cfg.Systems = []string{SystemOtter, SystemLRU}
	cfg.Out = filepath.Join(dir, "cache.json")
	var stdout bytes.Buffer
	require.NoError(t, Run(context.Background(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	out := stdout.String()
	require.Contains(t, out, "my_trace50_otter_hit=")
	require.Contains(t, out, "my_trace100_lru_hit=")
	require.NotContains(t, out, "oltp1000_otter_hit")
	require.Regexp(t, summaryHead, strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]))

	cfg = DefaultConfig(false)
	cfg.UserTrace = path
	require.ErrorContains(t, Run(context.Background(), cfg, io.Discard, benchkit.NewProgress(io.Discard)), "CAPACITY")
}

func TestCommandFlagsAndEnv(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, Command([]string{"--help"}, &out, &errOut))
	require.Contains(t, out.String(), "[TRACE]")

	t.Setenv("CAPACITY", "10")
	errOut.Reset()
	require.Equal(t, 1, Command(nil, io.Discard, &errOut))
	require.Contains(t, errOut.String(), "set TRACE too")

	errOut.Reset()
	require.Equal(t, 2, Command([]string{"--format", "csv"}, io.Discard, &errOut))
	require.Contains(t, errOut.String(), "unknown trace format")
}
