package benchkit

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	require.InDelta(t, 1.0, Percentile(s, 0), 1e-12)
	require.InDelta(t, 10.0, Percentile(s, 100), 1e-12)
	require.InDelta(t, 5.5, Percentile(s, 50), 1e-12)
	// rank (n-1)*0.99 = 8.91: 9 + 0.91*(10-9)
	require.InDelta(t, 9.91, Percentile(s, 99), 1e-12)
	require.InDelta(t, 7.0, Percentile([]float64{7}, 99), 1e-12)
	require.True(t, math.IsNaN(Percentile(nil, 50)))
	// out-of-range p is clamped
	require.InDelta(t, 10.0, Percentile(s, 150), 1e-12)
}

func TestDurationPercentiles(t *testing.T) {
	ds := make([]time.Duration, 0, 100)
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Microsecond)
	}
	got := DurationPercentiles(ds, 50, 99, 100)
	require.Equal(t, 50500*time.Nanosecond, got[0])
	require.Equal(t, 99010*time.Nanosecond, got[1])
	require.Equal(t, 100*time.Microsecond, got[2])
	require.Equal(t, []time.Duration{0}, DurationPercentiles(nil, 50))
}

func TestSummarize(t *testing.T) {
	require.Equal(t, Summary{Min: 1, Median: 3, Max: 9}, Summarize([]float64{9, 1, 3}))
	require.Equal(t, Summary{Min: 1, Median: 2.5, Max: 4}, Summarize([]float64{4, 1, 3, 2}))
	require.Equal(t, Summary{Min: 2, Median: 3, Max: 4}, Summarize([]float64{4, math.NaN(), 2}))
	empty := Summarize(nil)
	require.True(t, math.IsNaN(empty.Median))
}

func TestRatioSpread(t *testing.T) {
	ours := []float64{200, 300, 400}
	peer := []float64{100, 100, 200}
	// throughput: ours/peer per repeat = 2, 3, 2
	require.Equal(t, Summary{Min: 2, Median: 2, Max: 3}, RatioSpread(ours, peer, HigherIsBetter))
	// latency: peer/ours per repeat = 0.5, 1/3, 0.5
	got := RatioSpread(ours, peer, LowerIsBetter)
	require.InDelta(t, 1.0/3, got.Min, 1e-12)
	require.InDelta(t, 0.5, got.Median, 1e-12)
	require.InDelta(t, 0.5, got.Max, 1e-12)
	// pairs are formed repeat by repeat, not from the medians
	r := Ratios([]float64{1, 4}, []float64{2, 1}, HigherIsBetter)
	require.Equal(t, []float64{0.5, 4}, r)
	// a zero denominator gives NaN, which the summary skips
	require.Equal(t, Summary{Min: 2, Median: 2, Max: 2},
		RatioSpread([]float64{2, 5}, []float64{1, 0}, HigherIsBetter))
}

func TestLinearFit(t *testing.T) {
	xs := []float64{0, 64, 256, 1024, 4096}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 12 + 1.0004*x
	}
	f, err := LinearFit(xs, ys)
	require.NoError(t, err)
	require.InDelta(t, 12.0, f.Intercept, 1e-9)
	require.InDelta(t, 1.0004, f.Slope, 1e-12)
	require.InDelta(t, 1.0, f.R2, 1e-12)

	// noisy points: the fit minimises squared error
	f, err = LinearFit([]float64{0, 1, 2, 3}, []float64{1, 3, 2, 4})
	require.NoError(t, err)
	require.InDelta(t, 1.3, f.Intercept, 1e-12)
	require.InDelta(t, 0.8, f.Slope, 1e-12)
	require.InDelta(t, 0.64, f.R2, 1e-12)

	_, err = LinearFit([]float64{1}, []float64{1})
	require.ErrorIs(t, err, ErrNoData)
	_, err = LinearFit([]float64{2, 2}, []float64{1, 3})
	require.ErrorIs(t, err, ErrNoData)
}

func TestAlternate(t *testing.T) {
	var order []string
	err := Alternate(context.Background(), 2, []string{"ours", "etcd", "bbolt"},
		func(_ context.Context, r int, s string) error {
			order = append(order, s)
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, []string{"ours", "etcd", "bbolt", "ours", "etcd", "bbolt"}, order)
}

func TestWriteJSONAndRepoRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.25.0\n"), 0o644))
	sub := filepath.Join(root, "tools", "bench")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	// tools/ is a module with a workspace of its own: not the root.
	for _, f := range []string{"go.work", "go.mod"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "tools", f), []byte("go 1.25.0\n"), 0o644))
	}
	got, err := RepoRoot(sub)
	require.NoError(t, err)
	require.Equal(t, root, got)

	path := filepath.Join(root, "bench-results", "x.json")
	require.NoError(t, WriteJSON(path, map[string]any{"s": Summarize([]float64{math.NaN()}), "f": Float(1.5)}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.Equal(t, 1.5, m["f"])
	require.Nil(t, m["s"].(map[string]any)["median"])
}

func TestFlagLists(t *testing.T) {
	require.Equal(t, []string{"a", "b"}, SplitList(" a, ,b ,"))
	n, err := IntList("1, 64")
	require.NoError(t, err)
	require.Equal(t, []int{1, 64}, n)
	_, err = IntList("1,x")
	require.Error(t, err)
	require.True(t, EnvBool(" 1"))
	require.False(t, EnvBool("maybe"))
}

// parseProcStat reads utime+stime past a command name holding spaces and
// parentheses, and refuses a short or malformed line; ProcessCPU of this
// process grows while it spins.
func TestProcessCPU(t *testing.T) {
	line := "4242 (ts server) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 125 0 0 20 0 9 0 12345 0 0"
	d, err := parseProcStat(line)
	require.NoError(t, err)
	require.Equal(t, 3750*time.Millisecond, d)
	for _, bad := range []string{"", "4242 (x S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 2x0 125"} {
		_, err := parseProcStat(bad)
		require.Error(t, err, bad)
	}
	before, err := ProcessCPU(os.Getpid())
	if errors.Is(err, ErrNoProcCPU) {
		t.Skip(err)
	}
	require.NoError(t, err)
	for stop := time.Now().Add(60 * time.Millisecond); time.Now().Before(stop); {
	}
	after, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, after, before)
}
