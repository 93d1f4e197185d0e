package cachebench

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

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

var summaryHead = regexp.MustCompile(`^cache: oltp1000_hit=(n/a|[0-9.]+) oltp1000_vs_otter_points=(n/a|-?[0-9.]+) get_vs_otter_ratio=(n/a|[0-9.]+) get_vs_ristretto_ratio=(n/a|[0-9.]+)( [a-z0-9_]+=(n/a|-?[0-9.]+))*$`)

// tinySections shrinks the throughput, memory and ssd sections of cfg so
// that a test runs them in a second or two.
func tinySections(cfg *Config) {
	cfg.Throughput.Keys = 1000
	cfg.Throughput.Threads = []int{1, 2}
	cfg.Throughput.Duration = 4 * time.Millisecond
	cfg.Throughput.StreamLen = 1 << 10
	cfg.Memory.Entries = 3000
	for i := range cfg.SSD.Workloads {
		cfg.SSD.Workloads[i].MaxRequests = 1500
	}
}

// The quick configuration on tiny stand-in traces: every system replays
// every cell, runs every throughput cell, is measured for memory, and our
// Cache replays the traces with and without its SSD tier; the report is
// written and the summary line comes last.
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
	tinySections(&cfg)
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	require.Regexp(t, summaryHead, last)
	require.NotContains(t, last, "get_vs_otter_ratio=n/a")
	for _, key := range []string{
		" gli1000_otter_hit=", " zipf500_ristretto_hit=", " gli1000_optimal_hit=", " min_vs_optimal_points=",
		" allocs_per_hit=", " get1_vs_otter_ratio=", " get2_vs_ristretto_ratio=", " mixed2_vs_otter_ratio=", " mixed1_ns=",
		" mem_vs_otter_ratio=", " mem_bytes_per_entry=", " mem_payload_bytes_per_entry=74 ",
		" ssd_oltp_dram_only_hit=", " ssd_gli_tiered_hit=", " ssd_zipf_tiered_ssd_hit=", " ssd_zipf_gain_points=",
	} {
		require.Contains(t, last, key)
	}
	out := stdout.String()
	require.Contains(t, out, "Throughput:")
	require.Contains(t, out, "Memory per entry at 3000 entries")
	require.Contains(t, out, "DRAM-only hit %")

	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	var rep struct {
		Conditions map[string]any    `json:"conditions"`
		Summary    map[string]any    `json:"summary"`
		Throughput *throughputReport `json:"throughput"`
		Memory     *memoryReport     `json:"memory"`
		SSD        *ssdReport        `json:"ssd"`
		Cells      []struct {
			Key      string `json:"key"`
			Requests int    `json:"requests"`
			Systems  map[string]struct {
				HitPercent benchkit.Summary `json:"hit_percent"`
				Runs       []runResult      `json:"runs"`
			} `json:"systems"`
			Points            map[string]benchkit.Summary `json:"points"`
			OptimalHitPercent float64                     `json:"optimal_hit_percent"`
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
			require.LessOrEqual(t, h.Max, c.OptimalHitPercent, "%s %s beat the offline optimum", c.Key, s)
		}
		if oursRan {
			require.Contains(t, c.Points, "vs_otter_points")
			require.Contains(t, c.Points, "vs_ristretto_points")
			require.LessOrEqual(t, c.Points["vs_optimal_points"].Max, 0.0, c.Key)
		}
	}
	// The LRU is deterministic: its repeats agree.
	l := rep.Cells[1].Systems[SystemLRU].HitPercent
	require.Equal(t, l.Min, l.Max)
	require.NotNil(t, rep.Summary["get_vs_otter_ratio"])
	require.Contains(t, rep.Conditions["throughput"].(map[string]any)["headline"], "at 2 goroutines")

	// Throughput: every mix at every goroutine count, every system, every
	// repeat, all Gets hits (the keyspace is resident).
	require.NotNil(t, rep.Throughput)
	require.Equal(t, 2, rep.Throughput.Headline)
	require.Len(t, rep.Throughput.Cells, 4)
	require.Equal(t, []string{"get1", "get2", "mixed1", "mixed2"},
		[]string{rep.Throughput.Cells[0].Key, rep.Throughput.Cells[1].Key, rep.Throughput.Cells[2].Key, rep.Throughput.Cells[3].Key})
	for _, c := range rep.Throughput.Cells {
		require.Empty(t, c.Flags, c.Key)
		for _, s := range concurrentSystems {
			sr := c.Systems[s]
			require.Len(t, sr.Runs, 2, "%s %s", c.Key, s)
			for _, r := range sr.Runs {
				require.Positive(t, r.Ops)
				require.Zero(t, r.Ops%stopEvery, "whole batches")
				require.InDelta(t, 1e9/r.NsPerOp, r.OpsPerSec, r.OpsPerSec*1e-9)
				require.Equal(t, r.Gets, r.Hits, "%s %s: every Get hits", c.Key, s)
				require.Equal(t, 100.0, r.PrefillHitPercent)
				if c.Mix == MixGet {
					require.Equal(t, r.Ops, r.Gets)
				} else {
					require.Equal(t, r.Ops*3/4, r.Gets)
				}
			}
		}
		require.Contains(t, c.Ratios, "vs_otter_ratio")
		require.Contains(t, c.Ratios, "vs_ristretto_ratio")
		if c.Mix == MixGet {
			require.Contains(t, c.GoalsMet, "allocs_per_hit")
		}
	}
	for _, s := range concurrentSystems {
		require.Contains(t, rep.Throughput.Settings, s)
	}

	// Memory: every concurrent system held every entry, and the payload is
	// the 10-byte record plus the 64-byte value.
	require.NotNil(t, rep.Memory)
	require.Equal(t, 74, rep.Memory.PayloadBytesPerEntry)
	require.Empty(t, rep.Memory.Flags)
	for _, s := range concurrentSystems {
		m := rep.Memory.Systems[s]
		require.Len(t, m.Runs, 2)
		require.Equal(t, 100.0, m.HeldPercent.Min, s)
		require.InDelta(t, m.BytesPerEntry.Median-74, m.OverheadBytesPerEntry.Median, 1e-9)
	}
	require.Contains(t, rep.Memory.Ratios, "vs_otter_ratio")

	// SSD tier: with it, the only misses are first touches, and DRAM
	// answers about what it answered without it (hits reach the policy
	// through rings picked at random, so the policy's view of them at each
	// admission can differ slightly between two replays).
	require.NotNil(t, rep.SSD)
	require.Len(t, rep.SSD.Cells, 3)
	for _, c := range rep.SSD.Cells {
		require.Equal(t, 1500, c.Requests, c.Trace)
		require.Empty(t, c.Flags, c.Trace)
		only, tiered := c.Modes[ModeDRAMOnly], c.Modes[ModeDRAMSSD]
		require.Len(t, only.Runs, 1)
		require.Zero(t, only.Runs[0].SSDHits)
		r := tiered.Runs[0]
		require.Equal(t, c.DistinctKeys, r.Misses, c.Trace)
		require.InDelta(t, only.Runs[0].DRAMHits, r.DRAMHits, float64(c.Requests)/50, c.Trace)
		require.GreaterOrEqual(t, tiered.HitPercent.Median, only.HitPercent.Median)
		require.InDelta(t, tiered.HitPercent.Median-only.HitPercent.Median, c.GainPoints.Median, 1e-9)
		require.EqualValues(t, c.DistinctKeys, r.SSDEntries)
		require.Equal(t, (c.FootprintBytes+9)/10, c.DRAMBytes)
	}

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
	cfg.Sections = []string{SectionHit, SectionSSD}
	cfg.Out = filepath.Join(dir, "cache.json")
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	out := stdout.String()
	require.Contains(t, out, "my_trace50_otter_hit=")
	require.Contains(t, out, "my_trace100_lru_hit=")
	require.NotContains(t, out, "oltp1000_otter_hit")
	require.Regexp(t, summaryHead, strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]))
	require.Contains(t, out, "get_vs_otter_ratio=n/a get_vs_ristretto_ratio=n/a")
	require.NotContains(t, out, "Throughput:")
	b, err := os.ReadFile(cfg.Out)
	require.NoError(t, err)
	require.Contains(t, string(b), "the ssd section measures ours only")

	cfg = DefaultConfig(false)
	cfg.UserTrace = path
	require.ErrorContains(t, Run(t.Context(), cfg, io.Discard, benchkit.NewProgress(io.Discard)), "CAPACITY")
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

	t.Setenv("CAPACITY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sections", "hit,speed"}, `unknown section "speed"`},
		{[]string{"--sections", "throughput", "--threads", "0"}, "goroutine count 0"},
		{[]string{"--sections", "throughput", "--threads", "x"}, "invalid syntax"},
		{[]string{"--sections", "throughput", "--duration", "0s"}, "duration 0s must be positive"},
		{[]string{"--sections", "memory", "--memory-entries", "0"}, "memory: need entries >= 1"},
		{[]string{"--sections", "ssd", "--ssd-repeats", "0"}, "ssd: repeats 0"},
	} {
		errOut.Reset()
		require.NotZero(t, Command(tc.args, io.Discard, &errOut), tc.args)
		require.Contains(t, errOut.String(), tc.want, tc.args)
	}
	out.Reset()
	require.Equal(t, 0, Command([]string{"-h"}, &out, io.Discard))
	for _, s := range []string{"[SECTIONS]", "[THREADS]", "[BENCH_DURATION]", "[BENCH_MEMORY_ENTRIES]", "[BENCH_SSD_REPEATS]"} {
		require.Contains(t, out.String(), s)
	}
}

// Replayed from one goroutine, our Cache tells its policy of every access,
// so its hit ratio is the policy's own within a fraction of a point (the
// Cache differs only in its entry costs, bytes rather than 1, and in when
// it sizes the policy's sketch), and its DRAM never holds more entries
// than the capacity.
func TestOursReplaysItsPolicy(t *testing.T) {
	// A collection may move the replaying goroutine's stack, and with it
	// the read ring its hits go to; two rings in one drain look like
	// concurrent readers, and the shard samples hits for a while (see
	// matrixcache's stackStripe). Without collections the replay is exact.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	tr, err := GenerateZipf(ZipfParams{S: 1.0001, V: 10, IMax: 1_000_000, Requests: 200_000, Seed: 7})
	require.NoError(t, err)
	for _, capacity := range []int{300, 3000} {
		hit := map[string]float64{}
		for _, sys := range []system{policySystem(), func() system { s, _ := ours(); return s }()} {
			c, err := sys.open(capacity)
			require.NoError(t, err)
			hits := 0
			for _, k := range tr.Keys {
				if c.access(k) {
					hits++
				}
			}
			if v, ok := c.(verifier); ok {
				require.NoError(t, v.verify(), sys.name)
			}
			c.close()
			hit[sys.name] = 100 * float64(hits) / float64(len(tr.Keys))
		}
		t.Logf("capacity %d: %v", capacity, hit)
		require.Greater(t, hit[SystemOurs], 5.0, "capacity %d", capacity)
		require.InDelta(t, hit[SystemPolicy], hit[SystemOurs], 0.5, "capacity %d", capacity)
	}
}
