package httpapi

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// metrics are the handler's own: its registry holds them, the engine's
// statistics (read at each scrape) and the Go runtime's.
type metrics struct {
	reg      *prometheus.Registry
	cmdDur   *prometheus.HistogramVec
	cmdTotal *prometheus.CounterVec
	reqTotal *prometheus.CounterVec
}

func newMetrics(e *ts.Engine) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		cmdDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "temporalstore_http_command_duration_seconds",
			Help:    "Time to run a command received over HTTP, by command kind.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 18), // 25 µs .. ~3.3 s
		}, []string{"kind"}),
		cmdTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "temporalstore_http_commands_total",
			Help: "Commands received over HTTP, by command kind and status code.",
		}, []string{"kind", "code"}),
		reqTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "temporalstore_http_requests_total",
			Help: "HTTP requests, by route and HTTP status.",
		}, []string{"route", "status"}),
	}
	m.reg.MustRegister(m.cmdDur, m.cmdTotal, m.reqTotal, engineCollector{e},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) request(route string, status int) {
	m.reqTotal.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

var shardLabels = []string{"namespace", "table", "shard"}

func shardDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("temporalstore_shard_"+name, help, shardLabels, nil)
}

func cacheDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("temporalstore_cache_"+name, help, []string{"tier"}, nil)
}

var (
	descKeys         = shardDesc("keys", "Keys in the shard's index (expired ones until swept).")
	descCollections  = shardDesc("collections", "Hashes, sets, sorted sets and lists in the shard.")
	descSpilled      = shardDesc("spilled_collections", "Collections of the shard held in its log rather than in memory.")
	descCollBytes    = shardDesc("collection_bytes", "Estimated memory of the shard's resident collections.")
	descRecentBytes  = shardDesc("recent_record_bytes", "Memory of the newest string records the shard holds besides the record cache.")
	descSpills       = shardDesc("collection_spills_total", "Collections spilled to the log since open.")
	descLoads        = shardDesc("collection_loads_total", "Spilled collections made resident again by a write since open.")
	descPromotions   = shardDesc("collection_promotions_total", "Spilled collections made resident again by a read since open.")
	descIndexBytes   = shardDesc("index_bytes", "Memory of the shard's resident index.")
	descLiveBytes    = shardDesc("live_bytes", "Log bytes the shard's live strings point at.")
	descLogBytes     = shardDesc("log_bytes", "Allocated size of the shard's log files.")
	descSpaceAmp     = shardDesc("space_amplification", "Log bytes on disk over live bytes.")
	descSegments     = shardDesc("log_segments", "Log segment files of the shard.")
	descRecords      = shardDesc("log_records_total", "Log records appended since open.")
	descFsyncs       = shardDesc("log_fsyncs_total", "Log fsyncs since open.")
	descFsyncTime    = shardDesc("log_fsync_duration_seconds", "Time each log fsync since open took.")
	descWritten      = shardDesc("log_written_bytes_total", "Log bytes written since open.")
	descWriteAmp     = shardDesc("write_amplification", "Log bytes written over key and value bytes written since open.")
	descStale        = shardDesc("stale_rejects_total", "Feast row writes refused as older than the stored row.")
	descReadOnly     = shardDesc("read_only", "1 when the shard is in read-only mode.")
	descCacheHits    = cacheDesc("hits_total", "Record cache lookups the tier answered.")
	descCacheMisses  = cacheDesc("misses_total", "Record cache lookups that reached the tier and missed.")
	descCacheEvicts  = cacheDesc("evictions_total", "Entries the tier's replacement policy gave up.")
	descCacheEntries = cacheDesc("entries", "Entries the tier holds.")
	descCacheBytes   = cacheDesc("bytes", "Bytes the tier holds.")
	descPanics       = prometheus.NewDesc("temporalstore_panics_total", "Panics the engine contained in its commands (each answered with an internal error, nothing changed).", nil, nil)
	descCacheAllMiss = prometheus.NewDesc("temporalstore_cache_lookup_misses_total", "Record cache lookups no tier answered.", nil, nil)
	engineShardDescs = []*prometheus.Desc{descKeys, descCollections, descSpilled, descCollBytes, descRecentBytes, descSpills, descLoads, descPromotions, descIndexBytes, descLiveBytes, descLogBytes, descSpaceAmp, descSegments, descRecords, descFsyncs, descFsyncTime, descWritten, descWriteAmp, descStale, descReadOnly}
	engineCacheDescs = []*prometheus.Desc{descCacheHits, descCacheMisses, descCacheEvicts, descCacheEntries, descCacheBytes, descCacheAllMiss}
)

// fsyncHistogram is a shard's fsync latencies as a Prometheus histogram.
// The last bucket of h has no upper limit, so it goes to +Inf only.
func fsyncHistogram(h ts.LatencyHistogram, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Counts)-1)
	var cum uint64
	for i, c := range h.Counts[:len(h.Counts)-1] {
		cum += c
		buckets[wal.BucketBound(i).Seconds()] = cum
	}
	return prometheus.MustNewConstHistogram(descFsyncTime, h.Total(), h.Sum.Seconds(), buckets, labels...)
}

// engineCollector reads the engine's statistics at each scrape.
type engineCollector struct{ e *ts.Engine }

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range engineShardDescs {
		ch <- d
	}
	for _, d := range engineCacheDescs {
		ch <- d
	}
	ch <- descPanics
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descPanics, prometheus.CounterValue, float64(c.e.Panics()))
	stats, err := c.e.Stats()
	if err == nil {
		for _, s := range stats {
			l := []string{s.Namespace, s.Table, strconv.Itoa(s.Shard)}
			gauge := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
			}
			counter := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
			}
			gauge(descKeys, float64(s.Keys))
			gauge(descCollections, float64(s.Collections))
			gauge(descSpilled, float64(s.Spilled))
			gauge(descCollBytes, float64(s.CollectionBytes))
			gauge(descRecentBytes, float64(s.RecentBytes))
			counter(descSpills, float64(s.Spills))
			counter(descLoads, float64(s.Loads))
			counter(descPromotions, float64(s.Promotions))
			gauge(descIndexBytes, float64(s.IndexBytes))
			gauge(descLiveBytes, float64(s.LiveBytes))
			gauge(descLogBytes, float64(s.LogBytes))
			gauge(descSpaceAmp, s.SpaceAmp)
			gauge(descSegments, float64(s.LogSegments))
			counter(descRecords, float64(s.LogRecords))
			counter(descFsyncs, float64(s.LogFsyncs))
			ch <- fsyncHistogram(s.LogFsyncLatency, l)
			counter(descWritten, float64(s.LogWritten))
			gauge(descWriteAmp, s.WriteAmp)
			counter(descStale, float64(s.StaleRejects))
			ro := 0.0
			if s.ReadOnly {
				ro = 1
			}
			gauge(descReadOnly, ro)
		}
	}
	cs, ok := c.e.CacheStats()
	if !ok {
		return
	}
	for tier, t := range map[string]matrixcache.TierStats{"dram": cs.DRAM, "resident": cs.Resident} {
		ch <- prometheus.MustNewConstMetric(descCacheHits, prometheus.CounterValue, float64(t.Hits), tier)
		ch <- prometheus.MustNewConstMetric(descCacheMisses, prometheus.CounterValue, float64(t.Misses), tier)
		ch <- prometheus.MustNewConstMetric(descCacheEvicts, prometheus.CounterValue, float64(t.Evictions), tier)
		ch <- prometheus.MustNewConstMetric(descCacheEntries, prometheus.GaugeValue, float64(t.Entries), tier)
		ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(t.Bytes), tier)
	}
	ch <- prometheus.MustNewConstMetric(descCacheAllMiss, prometheus.CounterValue, float64(cs.Misses))
}
