package soakbench

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPlanFor(t *testing.T) {
	tests := []struct {
		d              time.Duration
		warmup, window time.Duration
		windows        int
	}{
		// 28 minutes after warm-up: five full windows and a 3-minute
		// remainder, long enough to be a window of its own.
		{30 * time.Minute, 2 * time.Minute, 5 * time.Minute, 6},
		// A 2-minute remainder joins the last full window.
		{29 * time.Minute, 2 * time.Minute, 5 * time.Minute, 5},
		{17 * time.Minute, 2 * time.Minute, 5 * time.Minute, 3},
		// Under fifteen minutes after warm-up: thirds.
		{10 * time.Minute, 2 * time.Minute, 160 * time.Second, 3},
		{5 * time.Minute, time.Minute, 80 * time.Second, 3},
		{20 * time.Second, 4 * time.Second, 16 * time.Second / 3, 3},
	}
	for _, tc := range tests {
		p := planFor(tc.d)
		require.Equal(t, tc.warmup, p.Warmup, "%s", tc.d)
		require.Equal(t, tc.window, p.Window, "%s", tc.d)
		require.Equal(t, tc.windows, p.Windows, "%s", tc.d)
		// The windows tile the time after warm-up exactly.
		s, _ := p.span(0)
		require.Equal(t, p.Warmup, s)
		_, e := p.span(p.Windows - 1)
		require.Equal(t, tc.d, e)
		for i := 1; i < p.Windows; i++ {
			_, prevEnd := p.span(i - 1)
			start, _ := p.span(i)
			require.Equal(t, prevEnd, start)
		}
	}
}

func TestWindowOf(t *testing.T) {
	p := planFor(29 * time.Minute) // warm-up 2m, five windows, the last 7m
	tests := []struct {
		at   time.Duration
		want int
	}{
		{0, -1},
		{119 * time.Second, -1},
		{2 * time.Minute, 0},
		{7*time.Minute - time.Nanosecond, 0},
		{7 * time.Minute, 1},
		{22 * time.Minute, 4},
		{28 * time.Minute, 4}, // the remainder belongs to the last window
		{29 * time.Minute, 4},
		{40 * time.Minute, 4},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, p.windowOf(tc.at), "at %s", tc.at)
		if tc.want >= 0 && tc.at <= p.Total {
			s, e := p.span(tc.want)
			require.True(t, tc.at >= s && tc.at <= e, "at %s outside window %d [%s, %s]", tc.at, tc.want, s, e)
		}
	}
}

// run builds a run of samples every 10 s over planFor(d), RSS given per
// sample by rss, and windows with the p99s given per class.
func fakeRun(d time.Duration, rss func(i int, at time.Duration) float64, p99 map[string][]float64, errs int64) ([]Sample, []WindowStat) {
	p := planFor(d)
	var samples []Sample
	for i, at := 0, 10*time.Second; at <= d; i, at = i+1, at+10*time.Second {
		s := Sample{ElapsedS: at.Seconds(), Window: p.windowOf(at - 5*time.Second), RSSMB: rss(i, at), ServerCPU: 0.3, ClientCPU: 0.2, Classes: map[string]ClassSample{}}
		for name := range p99 {
			s.Classes[name] = ClassSample{Ops: 100}
		}
		samples = append(samples, s)
	}
	samples[len(samples)-1].Errors = errs
	var windows []WindowStat
	for i := range p.Windows {
		w := WindowStat{Index: i, Classes: map[string]WindowClass{}}
		for name, ps := range p99 {
			w.Classes[name] = WindowClass{Ops: 1000, P99Ms: ps[i]}
		}
		windows = append(windows, w)
	}
	return samples, windows
}

func TestCheck(t *testing.T) {
	b := bounds{RSSGrowth: 1.2, P99Growth: 1.5, P99FloorMs: 1}
	classes := []string{"kv", "objects"}
	flat := func(int, time.Duration) float64 { return 100 }
	steady := map[string][]float64{"kv": {2, 2.2, 2.1}, "objects": {8, 9, 10}}
	tests := []struct {
		name       string
		rss        func(i int, at time.Duration) float64
		p99        map[string][]float64
		errs       int64
		ok         bool
		rssRatio   float64
		p99Ratio   float64
		worst      string
		violations []string // patterns, one per violation
	}{
		{
			name: "clean run passes", rss: flat, p99: steady,
			ok: true, rssRatio: 1, p99Ratio: 1.25, worst: "objects",
		},
		{
			// Memory grows during warm-up (allowed), then plateaus
			// within 20 %.
			name: "growth in warm-up only", p99: steady,
			rss: func(_ int, at time.Duration) float64 {
				if at <= 2*time.Minute {
					return 50 + at.Seconds()/2
				}
				return 118
			},
			ok: true, rssRatio: 118.0 / 110, p99Ratio: 1.25, worst: "objects",
		},
		{
			name: "rss growth detected", p99: steady,
			rss: func(_ int, at time.Duration) float64 {
				return 100 + math.Max(0, at.Seconds()-120)/10 // +6 MB a minute after warm-up
			},
			rssRatio: 148.0 / 100, p99Ratio: 1.25, worst: "objects",
			violations: []string{`^rss grew to 148\.0 MB, 1\.48× the 100\.0 MB`},
		},
		{
			name: "p99 regression detected", rss: flat,
			p99:      map[string][]float64{"kv": {2, 2.5, 3.2}, "objects": {8, 9, 10}},
			rssRatio: 1, p99Ratio: 1.6, worst: "kv",
			violations: []string{`^kv: p99 3\.20 ms in window 2, 1\.60× the baseline's 2\.00 ms`},
		},
		{
			// 0.2 ms to 0.9 ms is 4.5×, but under the 1 ms floor: noise.
			name: "sub-floor jitter is not a regression", rss: flat,
			p99: map[string][]float64{"kv": {0.2, 0.9, 0.5}, "objects": {8, 9, 10}},
			ok:  true, rssRatio: 1, p99Ratio: 1.25, worst: "objects",
		},
		{
			name: "errors fail the run", rss: flat, p99: steady, errs: 3,
			rssRatio: 1, p99Ratio: 1.25, worst: "objects",
			violations: []string{`^3 requests failed$`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples, windows := fakeRun(10*time.Minute, tc.rss, tc.p99, tc.errs)
			v := check(b, 2, classes, samples, windows)
			require.Equal(t, tc.ok, v.OK, "violations: %q", v.Violations)
			require.Len(t, v.Violations, len(tc.violations), "%q", v.Violations)
			for i, pat := range tc.violations {
				require.Regexp(t, regexp.MustCompile(pat), v.Violations[i])
			}
			require.InDelta(t, tc.rssRatio, float64(v.RSSRatio), 1e-9)
			require.InDelta(t, tc.p99Ratio, float64(v.P99RatioMax), 1e-9)
			require.Equal(t, tc.worst, v.WorstClass)
			require.Equal(t, int64(60*100*len(classes)), v.Ops)
			require.Equal(t, tc.errs, v.Errors)
			require.InDelta(t, 10.0, v.Minutes, 1e-9)
			require.InDelta(t, 25.0, v.BusyPct, 1e-9, "half a core of two")
		})
	}
}

// The RSS at the end of warm-up is the last warm-up sample's, and only
// later samples count against it.
func TestCheckWarmupRSS(t *testing.T) {
	rss := func(i int, _ time.Duration) float64 { return []float64{500, 80, 100, 110}[min(i, 3)] }
	samples, windows := fakeRun(10*time.Minute, rss, map[string][]float64{"kv": {2, 2, 2}}, 0)
	samples = append(samples[:1], samples[len(samples)-12:]...) // warm-up: one sample
	v := check(bounds{RSSGrowth: 1.2, P99Growth: 1.5}, 2, []string{"kv"}, samples, windows)
	require.Equal(t, 500.0, v.RSSWarmMB)

	samples, windows = fakeRun(10*time.Minute, rss, map[string][]float64{"kv": {2, 2, 2}}, 0)
	samples[11].RSSMB = 100 // the sample at 120 s: warm-up's last
	v = check(bounds{RSSGrowth: 1.2, P99Growth: 1.5}, 2, []string{"kv"}, samples, windows)
	require.Equal(t, 100.0, v.RSSWarmMB)
	require.Equal(t, 110.0, v.RSSMaxMB)
	require.True(t, v.OK, "%q", v.Violations)
}

// A run with nothing to compare (stopped in warm-up, a class that never
// ran in the baseline) is not a pass.
func TestCheckNoData(t *testing.T) {
	v := check(bounds{RSSGrowth: 1.2, P99Growth: 1.5}, 2, []string{"kv"}, []Sample{{ElapsedS: 10, Window: -1, RSSMB: 90}}, nil)
	require.False(t, v.OK)
	require.True(t, math.IsNaN(float64(v.RSSRatio)))
	require.Equal(t, "n/a", v.WorstClass)
	require.Contains(t, summaryLine(v), "rss_ratio=n/a p99_ratio_max=n/a class=n/a ok=false")

	samples, windows := fakeRun(10*time.Minute, func(int, time.Duration) float64 { return 90 }, map[string][]float64{"kv": {2, 2, 2}}, 0)
	windows[0].Classes["kv"] = WindowClass{}
	v = check(bounds{RSSGrowth: 1.2, P99Growth: 1.5}, 2, []string{"kv"}, samples, windows)
	require.False(t, v.OK)
	require.Equal(t, []string{"kv: no request in the baseline window"}, v.Violations)
}

func TestSummaryLine(t *testing.T) {
	v := Verdict{Minutes: 30.02, Ops: 1234, RSSWarmMB: 101.26, RSSMaxMB: 110.04, RSSRatio: 1.0867, P99RatioMax: 1.2344, WorstClass: "features", OK: true}
	require.Equal(t, "soak: minutes=30 ops=1234 errors=0 rss_warm_mb=101.3 rss_max_mb=110.0 rss_ratio=1.087 p99_ratio_max=1.234 class=features ok=true", summaryLine(v))
	v.Minutes = 20.0 / 60
	require.Regexp(t, `^soak: minutes=0\.3 `, summaryLine(v))
}

func TestRecorderWindows(t *testing.T) {
	r := newRecorder(2)
	for i := range 100 {
		r.observe(time.Duration(i+1)*time.Millisecond, nil)
	}
	r.observe(time.Millisecond, errors.New("refused"))
	s := r.take(10*time.Second, -1) // warm-up: no window gets it
	require.Equal(t, int64(101), s.Ops)
	require.Equal(t, int64(1), s.Errors)
	require.Equal(t, "refused", s.Error)
	require.InDelta(t, 10.1, s.OpsPerSec, 1e-9)
	require.InDelta(t, 99, s.P99Ms, 0.1)
	require.InDelta(t, 100, s.MaxMs, 0.1)
	require.Zero(t, r.window(0).Ops)

	for range 2 { // two intervals into window 1
		for range 50 {
			r.observe(4*time.Millisecond, nil)
		}
		s = r.take(time.Second, 1)
		require.Equal(t, int64(50), s.Ops)
		require.Zero(t, s.Errors)
		require.Empty(t, s.Error)
	}
	require.Zero(t, r.window(0).Ops)
	w := r.window(1)
	require.Equal(t, int64(100), w.Ops)
	require.InDelta(t, 4, w.P99Ms, 0.01)
}

func TestParseVmRSS(t *testing.T) {
	n, err := parseVmRSS("Name:\tserver\nVmPeak:\t  999 kB\nVmRSS:\t  123456 kB\nThreads:\t9\n")
	require.NoError(t, err)
	require.Equal(t, int64(123456)<<10, n)
	_, err = parseVmRSS("Name:\tzombie\n")
	require.Error(t, err)
	_, err = parseVmRSS("VmRSS:\t12 MB\n")
	require.Error(t, err)
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig(false)
	require.NoError(t, ok.Validate())
	require.Equal(t, 30*time.Minute, ok.Duration)
	require.Equal(t, 10*time.Minute, DefaultConfig(true).Duration)
	require.Equal(t, 10*time.Second, ok.sampleInterval())
	short := ok
	short.Duration = 20 * time.Second
	require.Equal(t, time.Second, short.sampleInterval())
	for _, bad := range []func(c *Config){
		func(c *Config) { c.Duration = 0 },
		func(c *Config) { c.Rate = 0 },
		func(c *Config) { c.Workers = 0 },
		func(c *Config) { c.RSSGrowth = 0.9 },
		func(c *Config) { c.Dir = "/nonexistent/soak" },
	} {
		c := ok
		bad(&c)
		require.ErrorIs(t, c.Validate(), ErrConfig)
	}
}

// A run that ended before its first sample (the server died at once)
// still gets its plot, empty.
func TestWritePNGWithoutSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.png")
	rep := &report{Config: configReport{Rate: 100, RSSGrowth: 1.2}, Plan: planReport{WarmupS: 120}, Classes: (&load{}).classes()}
	require.NoError(t, writePNG(path, rep))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)
}
