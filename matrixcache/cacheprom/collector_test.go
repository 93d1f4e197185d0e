package cacheprom_test

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cacheprom"
)

// fixedStats is a StatsSource that returns one snapshot and counts calls.
type fixedStats struct {
	s     matrixcache.Stats
	calls atomic.Int64
}

func (f *fixedStats) Stats() matrixcache.Stats {
	f.calls.Add(1)
	return f.s
}

// sample is one line of the exposition: a metric name (with _bucket, _sum
// or _count for histograms), its labels and its value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
	typ    string // the family's type: COUNTER, GAUGE or HISTOGRAM
}

func (s sample) String() string {
	var ls []string
	for k, v := range s.labels {
		ls = append(ls, k+"="+strconv.Quote(v))
	}
	slices.Sort(ls)
	return s.name + "{" + strings.Join(ls, ",") + "}"
}

// gather registers c on a fresh pedantic registry (which also checks every
// metric against its Desc) and returns the samples of one scrape.
func gather(t *testing.T, c prometheus.Collector) map[string]sample {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	return scrape(t, reg)
}

// scrape gathers g once and returns its samples keyed by String.
func scrape(t *testing.T, g prometheus.Gatherer) map[string]sample {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	out := map[string]sample{}
	add := func(s sample) {
		_, dup := out[s.String()]
		require.False(t, dup, "duplicate sample %s", s)
		out[s.String()] = s
	}
	for _, mf := range mfs {
		typ := mf.GetType().String()
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			switch typ {
			case "COUNTER":
				add(sample{mf.GetName(), labels, m.GetCounter().GetValue(), typ})
			case "GAUGE":
				add(sample{mf.GetName(), labels, m.GetGauge().GetValue(), typ})
			case "HISTOGRAM":
				h := m.GetHistogram()
				add(sample{mf.GetName() + "_count", labels, float64(h.GetSampleCount()), typ})
				add(sample{mf.GetName() + "_sum", labels, h.GetSampleSum(), typ})
				for _, b := range h.GetBucket() {
					bl := map[string]string{"le": strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)}
					for k, v := range labels {
						bl[k] = v
					}
					add(sample{mf.GetName() + "_bucket", bl, float64(b.GetCumulativeCount()), typ})
				}
				// The +Inf bucket is implied by the count in the data
				// model; the exposition writes it out.
				bl := map[string]string{"le": "+Inf"}
				for k, v := range labels {
					bl[k] = v
				}
				add(sample{mf.GetName() + "_bucket", bl, float64(h.GetSampleCount()), typ})
			default:
				t.Fatalf("%s: unexpected type %s", mf.GetName(), typ)
			}
		}
	}
	return out
}

// value returns the value of the sample name{labels}, failing if absent.
func value(t *testing.T, ss map[string]sample, name string, labels ...string) float64 {
	t.Helper()
	want := sample{name: name, labels: map[string]string{}}
	for i := 0; i+1 < len(labels); i += 2 {
		want.labels[labels[i]] = labels[i+1]
	}
	s, ok := ss[want.String()]
	require.True(t, ok, "no sample %s", want)
	return s.value
}

// newCache is a one-shard cache with DRAM room for a few 32-byte values, over
// an SSD tier in a test directory.
func newCache(t *testing.T, writeBack bool) *matrixcache.Cache {
	t.Helper()
	c, err := matrixcache.New(t.Context(), matrixcache.Options{
		DRAMCapacityBytes: 4 * int64(cachekey.String(0, "k00").Size()+32),
		Shards:            1,
		Policy:            "slru",
		SSDPath:           t.TempDir(),
		SSDNoSync:         true,
		WriteBack:         writeBack,
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

func key(i int) blockfmt.Key { return cachekey.String(0, fmt.Sprintf("k%02d", i)) }

func TestCollectorExportsWhatARealCacheCounts(t *testing.T) {
	const keys, absent = 16, 3
	for _, tc := range []struct {
		name      string
		writeBack bool
	}{
		{"synchronous SSD writes", false},
		{"writeback", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			c := newCache(t, tc.writeBack)
			for i := range keys {
				require.NoError(t, c.Put(ctx, key(i), make([]byte, 32), matrixcache.PutOptions{}))
			}
			require.NoError(t, c.Flush(ctx))
			// Newest first: the last keys written are still in DRAM, the
			// first ones only on SSD.
			for i := keys - 1; i >= 0; i-- {
				_, _, ok, err := c.Get(ctx, key(i))
				require.NoError(t, err)
				require.True(t, ok)
			}
			for i := range absent {
				_, _, ok, err := c.Get(ctx, key(keys+i))
				require.NoError(t, err)
				require.False(t, ok)
			}
			h, err := c.Acquire(ctx, key(keys-1))
			require.NoError(t, err)
			defer h.Release()
			require.NoError(t, c.Flush(ctx))

			st := c.Stats()
			require.Positive(t, st.DRAM.Hits)
			require.Positive(t, st.SSD.Hits)
			ss := gather(t, cacheprom.NewCollector(c, cacheprom.Options{}))
			require.Equal(t, st, c.Stats(), "the cache is idle: a scrape must not change its counters")

			for _, tier := range []struct {
				name string
				ts   matrixcache.TierStats
			}{{"dram", st.DRAM}, {"resident", st.Resident}, {"ssd", st.SSD}} {
				for _, f := range []struct {
					metric string
					want   int64
				}{
					{"hits_total", tier.ts.Hits},
					{"misses_total", tier.ts.Misses},
					{"puts_total", tier.ts.Puts},
					{"evictions_total", tier.ts.Evictions},
					{"demotions_total", tier.ts.Demotions},
					{"promotions_total", tier.ts.Promotions},
					{"expired_total", tier.ts.Expired},
					{"stale_copies_dropped_total", tier.ts.StaleCopiesDropped},
					{"entries", tier.ts.Entries},
					{"bytes", tier.ts.Bytes},
				} {
					require.EqualValues(t, f.want, value(t, ss, "matrixcache_tier_"+f.metric, "tier", tier.name), "%s %s", tier.name, f.metric)
				}
			}
			require.EqualValues(t, 0, value(t, ss, "matrixcache_tier_hits_total", "tier", "resident"), "the resident tier is off")
			require.EqualValues(t, absent, value(t, ss, "matrixcache_misses_total"))
			require.EqualValues(t, keys+absent+1, st.DRAM.Hits+st.SSD.Hits+st.Misses, "each Get and the Acquire counted once")
			require.EqualValues(t, 1, value(t, ss, "matrixcache_pins_total"))
			require.EqualValues(t, 1, value(t, ss, "matrixcache_pinned_entries"))
			require.EqualValues(t, 32, value(t, ss, "matrixcache_pinned_bytes"))
			require.EqualValues(t, st.WritebackEnqueued, value(t, ss, "matrixcache_writeback_enqueued_total"))
			require.EqualValues(t, st.WritebackDrained, value(t, ss, "matrixcache_writeback_drained_total"))
			require.EqualValues(t, 0, value(t, ss, "matrixcache_writeback_queue_depth"), "flushed")
			require.EqualValues(t, st.SSDStore.Puts, value(t, ss, "matrixcache_ssd_store_puts_total"))
			require.EqualValues(t, st.SSDStore.Hits, value(t, ss, "matrixcache_ssd_store_hits_total"))
			require.EqualValues(t, st.SSDStore.Entries, value(t, ss, "matrixcache_ssd_store_entries"))
			require.EqualValues(t, st.SSDStore.BytesWritten, value(t, ss, "matrixcache_ssd_store_written_bytes_total"))
			if tc.writeBack {
				require.Positive(t, value(t, ss, "matrixcache_writeback_drained_total"))
			} else {
				require.Zero(t, value(t, ss, "matrixcache_writeback_enqueued_total"))
			}

			// The cache may time only a sample of its calls, so the
			// histograms are checked against the snapshot, not the calls.
			for _, h := range []struct {
				metric string
				l      matrixcache.Latency
			}{
				{"get", st.GetLatency},
				{"put", st.PutLatency},
				{"read_through", st.ReadThroughLatency},
				{"writeback_batch", st.WritebackLatency},
			} {
				name := "matrixcache_" + h.metric + "_duration_seconds"
				require.EqualValues(t, h.l.Samples, value(t, ss, name+"_count"), name)
				require.EqualValues(t, h.l.Samples, value(t, ss, name+"_bucket", "le", "+Inf"), name)
				require.EqualValues(t, h.l.Samples-h.l.Buckets[len(h.l.Buckets)-1], value(t, ss, name+"_bucket", "le", "0.01"), name)
				require.InDelta(t, h.l.Total.Seconds(), value(t, ss, name+"_sum"), 1e-12, name)
				require.InDelta(t, h.l.Max.Seconds(), value(t, ss, "matrixcache_"+h.metric+"_duration_max_seconds"), 1e-12, name)
			}
		})
	}
}

// fill sets every integer field under v to a distinct value, counting up
// from *next, and records each by its path. Latency fields are left alone:
// TestHistograms covers them.
func fill(t *testing.T, v reflect.Value, path string, next *int64, leaves map[string]int64) {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[matrixcache.Latency]():
		return
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() {
				fill(t, v.Field(i), strings.TrimPrefix(path+"."+f.Name, "."), next, leaves)
			}
		}
	case v.Kind() == reflect.Int64 && v.Type() == reflect.TypeFor[int64]():
		*next++
		v.SetInt(*next)
		leaves[path] = *next
	default:
		t.Fatalf("Stats field %s has type %s, which the exporter and this test do not handle yet", path, v.Type())
	}
}

// TestEveryStatsNumberIsExported gives every number of a Stats snapshot its
// own value and finds each in exactly one sample, with the right tier label
// for per-tier counters. A field added to Stats without a line in the
// exporter's tables fails here.
func TestEveryStatsNumberIsExported(t *testing.T) {
	src := &fixedStats{}
	leaves := map[string]int64{}
	next := int64(100)
	fill(t, reflect.ValueOf(&src.s).Elem(), "", &next, leaves)
	ss := gather(t, cacheprom.NewCollector(src, cacheprom.Options{}))

	byValue := map[float64][]sample{}
	nonZero := 0
	for _, s := range ss {
		// The health families are judged from the snapshot, not copied
		// from it: TestHealthIsExported covers them.
		if s.typ != "HISTOGRAM" && s.value != 0 && !strings.HasPrefix(s.name, "matrixcache_health_") {
			byValue[s.value] = append(byValue[s.value], s)
			nonZero++
		}
	}
	for path, v := range leaves {
		got := byValue[float64(v)]
		require.Len(t, got, 1, "Stats.%s (%d) should be exported exactly once", path, v)
		tier, _, perTier := strings.Cut(path, ".")
		switch tier {
		case "DRAM", "Resident", "SSD":
		default:
			perTier = false
		}
		if perTier {
			require.Equal(t, strings.ToLower(tier), got[0].labels["tier"], "Stats.%s exported as %s", path, got[0])
		} else {
			require.NotContains(t, got[0].labels, "tier", "Stats.%s exported as %s", path, got[0])
		}
	}
	require.Equal(t, len(leaves), nonZero, "every non-zero counter or gauge comes from one Stats number")
	require.EqualValues(t, 1, src.calls.Load(), "one scrape takes one snapshot")
}

func TestHistograms(t *testing.T) {
	lat := func(total, maximum time.Duration, buckets ...int64) matrixcache.Latency {
		var l matrixcache.Latency
		copy(l.Buckets[:], buckets)
		for _, n := range buckets {
			l.Samples += n
		}
		l.Total, l.Max = total, maximum
		return l
	}
	for _, tc := range []struct {
		name    string
		l       matrixcache.Latency
		buckets map[string]float64 // cumulative, by le
		count   float64
		sum     float64
	}{
		{
			name:    "empty",
			buckets: map[string]float64{"1e-05": 0, "0.0001": 0, "0.001": 0, "0.01": 0, "+Inf": 0},
		},
		{
			name:    "one sample per bucket",
			l:       lat(time.Second+11110*time.Microsecond, time.Second, 1, 1, 1, 1, 1),
			buckets: map[string]float64{"1e-05": 1, "0.0001": 2, "0.001": 3, "0.01": 4, "+Inf": 5},
			count:   5, sum: 1.01111,
		},
		{
			name:    "overflow only",
			l:       lat(3*time.Second, 2*time.Second, 0, 0, 0, 0, 2),
			buckets: map[string]float64{"1e-05": 0, "0.0001": 0, "0.001": 0, "0.01": 0, "+Inf": 2},
			count:   2, sum: 3,
		},
		{
			name: "samples behind the buckets: the count follows the buckets",
			l: func() matrixcache.Latency {
				l := lat(time.Millisecond, time.Millisecond, 3, 4)
				l.Samples = 9
				return l
			}(),
			buckets: map[string]float64{"1e-05": 3, "0.0001": 7, "0.001": 7, "0.01": 7, "+Inf": 7},
			count:   7, sum: 0.001,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each histogram gets its own copy, its Total scaled so that a
			// mix-up between them shows in the sum.
			ops := []struct {
				metric string
				set    func(*matrixcache.Stats, matrixcache.Latency)
			}{
				{"get", func(s *matrixcache.Stats, l matrixcache.Latency) { s.GetLatency = l }},
				{"put", func(s *matrixcache.Stats, l matrixcache.Latency) { s.PutLatency = l }},
				{"read_through", func(s *matrixcache.Stats, l matrixcache.Latency) { s.ReadThroughLatency = l }},
				{"writeback_batch", func(s *matrixcache.Stats, l matrixcache.Latency) { s.WritebackLatency = l }},
			}
			src := &fixedStats{}
			for i, op := range ops {
				l := tc.l
				l.Total *= time.Duration(i + 1)
				l.Max *= time.Duration(i + 1)
				op.set(&src.s, l)
			}
			ss := gather(t, cacheprom.NewCollector(src, cacheprom.Options{}))
			for i, op := range ops {
				name := "matrixcache_" + op.metric + "_duration_seconds"
				got := map[string]float64{}
				for _, s := range ss {
					if s.name == name+"_bucket" {
						got[s.labels["le"]] = s.value
					}
				}
				require.Equal(t, tc.buckets, got, name)
				require.Equal(t, tc.count, value(t, ss, name+"_count"), name)
				require.Equal(t, value(t, ss, name+"_bucket", "le", "+Inf"), value(t, ss, name+"_count"), name)
				require.InDelta(t, tc.sum*float64(i+1), value(t, ss, name+"_sum"), 1e-9, name)
				require.InDelta(t, tc.l.Max.Seconds()*float64(i+1), value(t, ss, "matrixcache_"+op.metric+"_duration_max_seconds"), 1e-9, name)
			}
		})
	}
}

func TestExpositionPassesLintAndDocumentsEveryFamily(t *testing.T) {
	c := newCache(t, true)
	require.NoError(t, c.Put(t.Context(), key(1), []byte("v"), matrixcache.PutOptions{}))
	col := cacheprom.NewCollector(c, cacheprom.Options{ConstLabels: prometheus.Labels{"cache": "blocks"}})

	problems, err := testutil.CollectAndLint(col)
	require.NoError(t, err)
	require.Empty(t, problems)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(col))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)

	var help, typ []string
	for line := range strings.Lines(rec.Body.String()) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			require.NotEmpty(t, strings.TrimSpace(text), "%s has no help text", name)
			help = append(help, name)
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ := strings.Cut(rest, " ")
			typ = append(typ, name)
		}
		if !strings.HasPrefix(line, "#") && line != "" {
			require.Contains(t, line, `cache="blocks"`, "every sample carries the constant label")
		}
	}
	require.NotEmpty(t, help)
	require.Equal(t, typ, help, "one HELP and one TYPE per family")
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    cacheprom.Options
		metric  string // a sample name the options produce
		labels  []string
		wantErr string // non-empty: Register fails with this in its error
	}{
		{name: "defaults", metric: "matrixcache_misses_total"},
		{name: "namespace", opts: cacheprom.Options{Namespace: "blocks"}, metric: "blocks_tier_hits_total", labels: []string{"tier", "ssd"}},
		{
			name:   "constant labels",
			opts:   cacheprom.Options{ConstLabels: prometheus.Labels{"cache": "a", "node": "n1"}},
			metric: "matrixcache_tier_hits_total", labels: []string{"cache", "a", "node", "n1", "tier", "dram"},
		},
		{name: "invalid namespace", opts: cacheprom.Options{Namespace: "bad\xff"}, wantErr: "is not a valid metric name"},
		{name: "constant label named tier", opts: cacheprom.Options{ConstLabels: prometheus.Labels{"tier": "x"}}, wantErr: "tier"},
		{name: "invalid constant label", opts: cacheprom.Options{ConstLabels: prometheus.Labels{"__reserved": "x"}}, wantErr: "__reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := cacheprom.NewCollector(&fixedStats{}, tc.opts)
			if tc.wantErr != "" {
				err := prometheus.NewRegistry().Register(col)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			ss := gather(t, col)
			require.Zero(t, value(t, ss, tc.metric, tc.labels...))
			for _, s := range ss {
				for k, v := range tc.opts.ConstLabels {
					require.Equal(t, v, s.labels[k], "%s lacks the constant label %s", s, k)
				}
			}
		})
	}
}

func TestEachScrapeTakesOneFreshSnapshot(t *testing.T) {
	src := &fixedStats{}
	reg := prometheus.NewRegistry()
	reg.MustRegister(cacheprom.NewCollector(src, cacheprom.Options{}))
	for i := range int64(3) {
		src.s.DRAM.Hits, src.s.Misses = 10*i, i
		ss := scrape(t, reg)
		require.EqualValues(t, i+1, src.calls.Load(), "one Stats call per scrape")
		require.EqualValues(t, 10*i, value(t, ss, "matrixcache_tier_hits_total", "tier", "dram"))
		require.EqualValues(t, i, value(t, ss, "matrixcache_misses_total"))
	}
}

// The health report of each scrape's snapshot is exported: the findings
// counts always, a series per finding with its observed figure and
// threshold when there are findings.
func TestHealthIsExported(t *testing.T) {
	src := &fixedStats{}
	ss := gather(t, cacheprom.NewCollector(src, cacheprom.Options{}))
	require.EqualValues(t, 1, value(t, ss, "matrixcache_health_ok"))
	for _, sev := range []string{"info", "warning", "critical"} {
		require.Zero(t, value(t, ss, "matrixcache_health_findings", "severity", sev), "present at 0 when clean")
	}
	for _, s := range ss {
		require.NotEqual(t, "matrixcache_health_finding", s.name)
	}

	src.s.RefillFailures = 3                              // critical
	src.s.WritebackBackpressure = 2                       // warning
	src.s.DRAM.Hits = 2000                                // past the ratio rules' floor
	src.s.DRAM.Puts, src.s.DRAMAdmissionRejected = 80, 20 // info
	h := matrixcache.HealthReport(src.s)
	require.Len(t, h.Findings, 3)
	ss = gather(t, cacheprom.NewCollector(src, cacheprom.Options{}))
	require.EqualValues(t, 0, value(t, ss, "matrixcache_health_ok"))
	for _, sev := range []string{"info", "warning", "critical"} {
		require.EqualValues(t, 1, value(t, ss, "matrixcache_health_findings", "severity", sev), sev)
	}
	for _, f := range h.Findings {
		require.InDelta(t, f.Observed, value(t, ss, "matrixcache_health_finding", "id", f.ID, "component", f.Component, "severity", f.Severity.String()), 1e-12, f.ID)
		require.InDelta(t, f.Threshold, value(t, ss, "matrixcache_health_finding_threshold", "id", f.ID), 1e-12, f.ID)
	}
	require.EqualValues(t, 3, value(t, ss, "matrixcache_health_finding", "id", matrixcache.HealthRefillFailures, "component", "dram", "severity", "critical"))
}
