package cachebench

import (
	"bytes"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func TestNewTPResult(t *testing.T) {
	for _, tc := range []struct {
		name               string
		n                  loadCount
		elapsed            time.Duration
		mallocs, bytes     uint64
		ns, opsPerSec      float64
		allocs, bytesPerOp float64
		hitPercent         float64
	}{
		{
			name: "all hits, no allocations",
			n:    loadCount{ops: 4_000_000, gets: 4_000_000, hits: 4_000_000}, elapsed: time.Second,
			ns: 250, opsPerSec: 4e6, hitPercent: 100,
		},
		{
			name: "mixed: a quarter Sets, each allocating twice",
			n:    loadCount{ops: 1000, gets: 750, hits: 750}, elapsed: 50 * time.Microsecond, mallocs: 500, bytes: 32_000,
			ns: 50, opsPerSec: 2e7, allocs: 0.5, bytesPerOp: 32, hitPercent: 100,
		},
		{
			name: "misses lower the hit ratio, not the op count",
			n:    loadCount{ops: 200, gets: 200, hits: 150}, elapsed: 2 * time.Microsecond, mallocs: 1,
			ns: 10, opsPerSec: 1e8, allocs: 0.005, hitPercent: 75,
		},
		{name: "no ops", elapsed: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTPResult(tc.n, tc.elapsed, tc.mallocs, tc.bytes)
			require.InDelta(t, tc.ns, r.NsPerOp, 1e-9)
			require.InDelta(t, tc.opsPerSec, r.OpsPerSec, tc.opsPerSec*1e-12)
			require.InDelta(t, tc.allocs, r.AllocsPerOp, 1e-12)
			require.InDelta(t, tc.bytesPerOp, r.BytesPerOp, 1e-12)
			require.InDelta(t, tc.hitPercent, r.HitPercent, 1e-12)
			require.Equal(t, tc.n.ops, r.Ops)
			require.Equal(t, tc.elapsed.Seconds(), r.Seconds)
		})
	}
}

// tpRuns builds runs with the given ops/s, allocs/op and hit ratios.
func tpRuns(opsPerSec, allocs []float64, hit float64) []tpResult {
	rs := make([]tpResult, len(opsPerSec))
	for i := range rs {
		rs[i] = tpResult{Repeat: i + 1, OpsPerSec: opsPerSec[i], NsPerOp: 1e9 / opsPerSec[i], AllocsPerOp: allocs[i], HitPercent: hit, PrefillHitPercent: 100}
	}
	return rs
}

func TestSummarizeThroughputCell(t *testing.T) {
	runs := map[string][]tpResult{
		SystemOurs:      tpRuns([]float64{200, 300, 400}, []float64{0, 0.0001, 0}, 100),
		SystemOtter:     tpRuns([]float64{100, 100, 200}, []float64{0, 0, 0}, 100),
		SystemRistretto: tpRuns([]float64{400, 100, 100}, []float64{1, 1, 1}, 97),
	}
	for _, tc := range []struct {
		name     string
		cell     tpCell
		runs     map[string][]tpResult
		otter    benchkit.Summary
		rist     benchkit.Summary
		goals    map[string]bool
		flagged  bool
		noRatios bool
	}{
		{
			name: "get: ratios pair repeat i with repeat i, goals judged on the medians",
			cell: tpCell{mix: MixGet, threads: 8}, runs: runs,
			// ours/otter per repeat: 2, 3, 2; ours/ristretto: 0.5, 3, 4.
			otter: benchkit.Summary{Min: 2, Median: 2, Max: 3},
			rist:  benchkit.Summary{Min: 0.5, Median: 3, Max: 4},
			goals: map[string]bool{"vs_otter_ratio": true, "vs_ristretto_ratio": true, "allocs_per_hit": true},
			// ristretto's Gets hit 97%: flagged.
			flagged: true,
		},
		{
			name: "get: a median below a goal misses it",
			cell: tpCell{mix: MixGet, threads: 2},
			runs: map[string][]tpResult{
				SystemOurs:  tpRuns([]float64{50, 100}, []float64{1, 1}, 100),
				SystemOtter: tpRuns([]float64{100, 100}, []float64{0, 0}, 100),
			},
			otter: benchkit.Summary{Min: 0.5, Median: 0.75, Max: 1},
			goals: map[string]bool{"vs_otter_ratio": false, "allocs_per_hit": false},
		},
		{
			name: "mixed: ratios but no goals",
			cell: tpCell{mix: MixMixed, threads: 2}, runs: runs,
			otter:   benchkit.Summary{Min: 2, Median: 2, Max: 3},
			rist:    benchkit.Summary{Min: 0.5, Median: 3, Max: 4},
			flagged: true,
		},
		{
			name:     "peers only: no ratios",
			cell:     tpCell{mix: MixGet, threads: 2},
			runs:     map[string][]tpResult{SystemOtter: runs[SystemOtter]},
			noRatios: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for _, n := range concurrentSystems {
				if _, ok := tc.runs[n]; ok {
					names = append(names, n)
				}
			}
			cr := summarizeThroughputCell(tc.cell, names, tc.runs)
			require.Equal(t, tc.cell.Key(), cr.Key)
			if tc.noRatios {
				require.Nil(t, cr.Ratios)
				require.Nil(t, cr.GoalsMet)
				return
			}
			require.Equal(t, tc.otter, cr.Ratios["vs_otter_ratio"])
			if _, ok := tc.runs[SystemRistretto]; ok {
				require.Equal(t, tc.rist, cr.Ratios["vs_ristretto_ratio"])
			}
			require.Equal(t, tc.goals, cr.GoalsMet)
			require.Equal(t, tc.flagged, len(cr.Flags) > 0, cr.Flags)
			ours := tc.runs[SystemOurs]
			require.Equal(t, benchkit.Summarize(benchkit.Column(ours, func(r tpResult) float64 { return r.NsPerOp })), cr.Systems[SystemOurs].NsPerOp)
		})
	}
}

func TestThroughputSummaryFigures(t *testing.T) {
	for _, tc := range []struct {
		threads []int
		want    int
	}{
		{[]int{2, 8}, 8},
		{[]int{8, 16}, 8},
		{[]int{1, 2, 4}, 4},
		{nil, 8},
	} {
		require.Equal(t, tc.want, headlineThreads(tc.threads), tc.threads)
	}

	cell := func(mix string, threads int, ours, otter float64, allocs, hit float64) tpCellReport {
		return summarizeThroughputCell(tpCell{mix: mix, threads: threads}, []string{SystemOurs, SystemOtter}, map[string][]tpResult{
			SystemOurs:  tpRuns([]float64{ours}, []float64{allocs}, 100),
			SystemOtter: tpRuns([]float64{otter}, []float64{0}, hit),
		})
	}
	r := &throughputReport{Headline: 8, Cells: []tpCellReport{
		cell(MixGet, 2, 90, 100, 0.001, 100),
		cell(MixGet, 8, 120, 100, 0, 99.5),
		cell(MixMixed, 8, 50, 100, 3, 100),
	}}
	// The worst Get cell, not the mixed one (whose Sets allocate).
	require.InDelta(t, 0.001, r.allocsPerHit(), 1e-12)
	require.InDelta(t, 99.5, r.minGetHit(), 1e-12)
	ps := summaryPairs(&report{Throughput: r})
	byKey := map[string]float64{}
	for _, p := range ps {
		byKey[p.Key] = p.Value
	}
	require.Equal(t, "get_vs_otter_ratio", ps[2].Key)
	require.InDelta(t, 1.2, ps[2].Value, 1e-12)
	require.True(t, math.IsNaN(ps[3].Value), "no ristretto: n/a")
	require.InDelta(t, 0.9, byKey["get2_vs_otter_ratio"], 1e-12)
	require.InDelta(t, 0.5, byKey["mixed8_vs_otter_ratio"], 1e-12)
	require.InDelta(t, 1e9/90, byKey["get2_ns"], 1e-6)
	require.InDelta(t, 3, byKey["mixed8_allocs_per_op"], 1e-12)

	var empty *throughputReport
	require.True(t, math.IsNaN(empty.allocsPerHit()))
	require.Nil(t, empty.find("get8"))
}

func TestSummarizeMemory(t *testing.T) {
	mem := func(bpe ...float64) []memResult {
		rs := make([]memResult, len(bpe))
		for i, b := range bpe {
			rs[i] = memResult{Repeat: i + 1, Held: 1000, BytesPerEntry: b}
		}
		return rs
	}
	runs := map[string][]memResult{
		SystemOurs:  mem(100, 110),
		SystemOtter: mem(200, 165),
		// ristretto dropped entries in its second repeat.
		SystemRistretto: {{Repeat: 1, Held: 1000, BytesPerEntry: 150}, {Repeat: 2, Held: 900, BytesPerEntry: 150}},
	}
	r := summarizeMemory(1000, 64, concurrentSystems, runs)
	// Records "key-000000".."key-000999": 10 bytes, plus the value.
	require.Equal(t, 10, r.KeyBytes)
	require.Equal(t, 74, r.PayloadBytesPerEntry)
	// Bytes are lower-is-better: the ratio is peer/ours, 2 and 1.5.
	require.Equal(t, benchkit.Summary{Min: 1.5, Median: 1.75, Max: 2}, r.Ratios["vs_otter_ratio"])
	require.Equal(t, benchkit.Summary{Min: 26, Median: 31, Max: 36}, r.Systems[SystemOurs].OverheadBytesPerEntry)
	require.Equal(t, 90.0, r.Systems[SystemRistretto].HeldPercent.Min)
	require.Len(t, r.Flags, 1)
	require.Contains(t, r.Flags[0], "ristretto")

	ps := memoryPairs(r)
	require.Equal(t, "mem_vs_otter_ratio", ps[0].Key)
	require.InDelta(t, 1.75, ps[0].Value, 1e-12)
	require.True(t, math.IsNaN(memoryPairs(nil)[0].Value))

	require.InDelta(t, 150.0, bytesPerEntry(150_000, 1000), 1e-12)
	require.True(t, math.IsNaN(bytesPerEntry(150_000, 0)))
}

func TestSSDFigures(t *testing.T) {
	for _, tc := range []struct {
		dram, ssd, miss int
		total, dramPct  float64
		ssdPct          float64
	}{
		{dram: 50, ssd: 25, miss: 25, total: 75, dramPct: 50, ssdPct: 25},
		{dram: 0, ssd: 0, miss: 10, total: 0},
		{},
	} {
		r := newSSDResult(tc.dram, tc.ssd, tc.miss)
		require.Equal(t, tc.dram+tc.ssd+tc.miss, r.Requests)
		require.InDelta(t, tc.total, r.HitPercent, 1e-12)
		require.InDelta(t, tc.dramPct, r.DRAMHitPercent, 1e-12)
		require.InDelta(t, tc.ssdPct, r.SSDHitPercent, 1e-12)
	}
	for _, tc := range []struct {
		footprint int64
		percent   float64
		shards    int
		want      int64
	}{
		{1000, 10, 1, 100},
		{1001, 10, 1, 101}, // rounded up
		{10, 10, 4, 4},     // at least a byte per shard
	} {
		require.Equal(t, tc.want, dramBytes(tc.footprint, tc.percent, tc.shards), tc)
	}

	tr := &Trace{Name: "t", Keys: []uint64{7, 8, 7, 9, 7}}
	st, err := newSSDTrace(tr, 64)
	require.NoError(t, err)
	require.Len(t, st.keys, 3)
	require.Equal(t, []int32{0, 1, 0, 2, 0}, st.requests)
	require.Equal(t, "key-7", st.keys[0].Record)
	// key.Size() is 8 + record + namespace "string" + selector "value".
	require.Equal(t, int64(3*(8+5+6+5+64)), st.footprint)

	runs := map[string][]ssdResult{
		ModeDRAMOnly: {newSSDResult(40, 0, 60), newSSDResult(40, 0, 60)},
		ModeDRAMSSD:  {newSSDResult(40, 30, 30), {HitPercent: 72, SSDEvictions: 3, Repeat: 2}},
	}
	cfg := SSDConfig{DRAMPercent: 10, ValueBytes: 64, Shards: 1, Repeats: 2}
	c := summarizeSSDCell(st, Workload{Name: "t"}, cfg, runs)
	require.Equal(t, benchkit.Summary{Min: 30, Median: 31, Max: 32}, c.GainPoints)
	require.Len(t, c.Flags, 1, "the SSD evicted: flagged")
	require.Equal(t, dramBytes(st.footprint, 10, 1), c.DRAMBytes)
	require.Equal(t, ssdCapacityFactor*st.footprint+1<<20, c.SSDBytes)
	ps := ssdPairs(&ssdReport{Cells: []ssdCellReport{c}})
	require.Equal(t, "ssd_t_dram_only_hit", ps[0].Key)
	require.InDelta(t, 40, ps[0].Value, 1e-12)
	require.Equal(t, "ssd_t_gain_points", ps[4].Key)
}

func TestRecordNames(t *testing.T) {
	for _, tc := range []struct {
		i, width int
		want     string
	}{
		{5, 6, "key-000005"},
		{123456, 6, "key-123456"},
		{1234567, 6, "key-1234567"},
		{42, 7, "key-0000042"},
	} {
		require.Equal(t, tc.want, recordName(tc.i, tc.width))
	}
	for n, want := range map[int]int{0: 6, 1: 6, 1 << 16: 6, 1_000_000: 6, 1_000_001: 7} {
		require.Equal(t, want, digits(n), n)
	}
	ks := newKeyspace(3, 64)
	require.Equal(t, []string{"key-000000", "key-000001", "key-000002"}, ks.records)
	require.Equal(t, int64(8+10+6+5+64), ks.entryBytes())
	require.Equal(t, valueBytes(64), ks.value, "values are the same from run to run")
}

// Every concurrent system, prefilled with a small keyspace, holds all of
// it and answers every Get of a load with a hit; the mixed load is one Set
// in four.
func TestKVSystemsLoad(t *testing.T) {
	tc := ThroughputConfig{Keys: 500, ValueBytes: 16, ZipfS: 1.0001, ZipfV: 1, StreamLen: 1 << 8, Seed: 3}
	ks := newKeyspace(tc.Keys, tc.ValueBytes)
	streams := zipfStreams(tc, 2)
	require.Equal(t, zipfStreams(tc, 1)[0], streams[0], "stream g does not depend on the goroutine count")
	for _, v := range streams[1] {
		require.Less(t, int(v), tc.Keys)
	}
	for name, sys := range kvSystems() {
		c, err := sys.open(t.Context(), ks)
		require.NoError(t, err, name)
		require.Equal(t, 100.0, prefill(c, tc.Keys), name)
		for _, mixed := range []bool{false, true} {
			n, elapsed, _, _ := load(c, streams, mixed, time.Millisecond)
			if name == SystemMap && mixed {
				require.Error(t, n.err, "the map reference refuses the mixed load")
				continue
			}
			require.NoError(t, n.err)
			require.Positive(t, elapsed)
			require.Zero(t, n.ops%stopEvery)
			require.Equal(t, n.gets, n.hits, "%s mixed=%v", name, mixed)
			if mixed {
				require.Equal(t, n.ops*3/4, n.gets)
			} else {
				require.Equal(t, n.ops, n.gets)
			}
		}
		c.close()
	}
}

// The map reference runs the Get cells only, and its ratios to the peers
// are the ceilings of the summary line.
func TestMapReferenceCells(t *testing.T) {
	run := []string{SystemOurs, SystemOtter, SystemRistretto, SystemMap}
	require.Equal(t, run, cellSystems(run, tpCell{mix: MixGet, threads: 2}))
	require.Equal(t, []string{SystemOurs, SystemOtter, SystemRistretto}, cellSystems(run, tpCell{mix: MixMixed, threads: 2}))
	require.Equal(t, run, []string{SystemOurs, SystemOtter, SystemRistretto, SystemMap}, "cellSystems leaves its argument alone")

	res := func(ops float64) []tpResult {
		return []tpResult{{OpsPerSec: ops, HitPercent: 100, PrefillHitPercent: 100}}
	}
	runs := map[string][]tpResult{SystemOurs: res(10), SystemOtter: res(10), SystemRistretto: res(8), SystemMap: res(40)}
	c := summarizeThroughputCell(tpCell{mix: MixGet, threads: 2}, run, runs)
	require.InDelta(t, 4.0, c.Ratios["map_vs_otter_ratio"].Median, 1e-9)
	require.InDelta(t, 5.0, c.Ratios["map_vs_ristretto_ratio"].Median, 1e-9)
	rep := &throughputReport{Systems: run, Cells: []tpCellReport{c}}
	line := benchkit.SummaryLine("cache", throughputPairs(rep))
	require.Contains(t, line, " get2_map_vs_ristretto_ratio=5.00")
	var out bytes.Buffer
	printThroughput(&out, rep, DefaultConfig(true))
	require.Contains(t, out.String(), "get2 ceiling: an unsynchronised map read (no cache does less per hit) is 4.00× otter and 5.00× ristretto")

	delete(runs, SystemMap)
	mixed := summarizeThroughputCell(tpCell{mix: MixMixed, threads: 2}, cellSystems(run, tpCell{mix: MixMixed}), runs)
	require.NotContains(t, mixed.Ratios, "map_vs_otter_ratio")
	rep.Cells = append(rep.Cells, mixed)
	out.Reset()
	printThroughput(&out, rep, DefaultConfig(true)) // no row for the map in the mixed cell
	require.NotContains(t, out.String(), "mixed2 ceiling")

	out.Reset()
	printTable(&out, &report{}, run, 1) // the hit-ratio table has no map column
	require.NotRegexp(t, regexp.MustCompile(`\bmap\b`), out.String())
	require.Contains(t, out.String(), "ristretto")
}
