package engineprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

var shardLabels = []string{"namespace", "table", "shard"}

func shardDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("temporalstore_shard_"+name, help, shardLabels, nil)
}

func cacheDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("temporalstore_record_cache_"+name, help, nil, nil)
}

var (
	descKeys        = shardDesc("keys", "Keys in the shard's index (expired ones until swept).")
	descCollections = shardDesc("collections", "Hashes, sets, sorted sets and lists in the shard.")
	descSpilled     = shardDesc("spilled_collections", "Collections of the shard held in its log rather than in memory.")
	descCollBytes   = shardDesc("collection_bytes", "Estimated memory of the shard's resident collections.")
	descRecentBytes = shardDesc("recent_record_bytes", "Memory of the newest string records the shard holds besides the record cache.")
	descSpills      = shardDesc("collection_spills_total", "Collections spilled to the log since open.")
	descLoads       = shardDesc("collection_loads_total", "Spilled collections made resident again by a write since open.")
	descPromotions  = shardDesc("collection_promotions_total", "Spilled collections made resident again by a read since open.")
	descIndexBytes  = shardDesc("index_bytes", "Memory of the shard's resident index.")
	descLiveBytes   = shardDesc("live_bytes", "Log bytes the shard's live strings point at.")
	descLogBytes    = shardDesc("log_bytes", "Space the shard's log takes on its medium.")
	descSpaceAmp    = shardDesc("space_amplification", "Log bytes on disk over live bytes.")
	descSegments    = shardDesc("log_segments", "Log segments of the shard.")
	descRecords     = shardDesc("log_records_total", "Log records appended since open.")
	descFsyncs      = shardDesc("log_fsyncs_total", "Log fsyncs since open.")
	descFsyncTime   = shardDesc("log_fsync_duration_seconds", "Time each log fsync since open took.")
	descWritten     = shardDesc("log_written_bytes_total", "Log bytes written since open.")
	descWriteAmp    = shardDesc("write_amplification", "Log bytes written over key and value bytes written since open.")
	descStale       = shardDesc("stale_rejects_total", "Feast row writes refused as older than the stored row.")
	descReadOnly    = shardDesc("read_only", "1 when the shard is in read-only mode.")
	descFault       = shardDesc("storage_fault", "1 while the shard refuses writes after its log failed to write or sync (a full disk, a failing device); reads go on.")
	descRecoveries  = shardDesc("storage_fault_recoveries_total", "Storage faults the shard recovered from without a restart since open.")
	descCacheHits   = cacheDesc("hits_total", "Record cache lookups it answered.")
	descCacheMisses = cacheDesc("misses_total", "Record cache lookups it did not answer (the log did).")
	descCacheEvicts = cacheDesc("evictions_total", "Records the cache gave up for room.")
	descCacheItems  = cacheDesc("entries", "Records the cache holds.")
	descCacheBytes  = cacheDesc("bytes", "Bytes the cache holds.")
	descPanics      = prometheus.NewDesc("temporalstore_panics_total", "Panics the engine contained in its commands (each answered with an internal error, nothing changed).", nil, nil)
	descRounds      = prometheus.NewDesc("temporalstore_maintenance_rounds_total", "Maintenance rounds run (checkpoints and log reclaim, expiry, eviction and spills, memory, compaction).", nil, nil)
	descRoundFails  = prometheus.NewDesc("temporalstore_maintenance_round_failures_total", "Maintenance rounds that met an error.", nil, nil)
	descRoundLast   = prometheus.NewDesc("temporalstore_maintenance_last_round_seconds", "How long the last maintenance round took.", nil, nil)
	descRoundTime   = prometheus.NewDesc("temporalstore_maintenance_round_seconds_total", "Time spent in maintenance rounds.", nil, nil)
	descStageTime   = prometheus.NewDesc("temporalstore_maintenance_stage_seconds_total", "Time spent in each maintenance stage.", []string{"stage"}, nil)
	descStageItems  = prometheus.NewDesc("temporalstore_maintenance_stage_items_total", "What each stage did: segments dropped (reclaim_log), keys expired (expire), entries evicted or collections spilled (evict), bytes of memory freed (reclaim_memory), values moved (compact).", []string{"stage"}, nil)
	descStageBytes  = prometheus.NewDesc("temporalstore_maintenance_stage_bytes_total", "Log bytes each stage gave back (reclaim_log, compact) or memory it freed by spilling (evict).", []string{"stage"}, nil)
	descs           = []*prometheus.Desc{descRounds, descRoundFails, descRoundLast, descRoundTime, descStageTime, descStageItems, descStageBytes, descKeys, descCollections, descSpilled, descCollBytes, descRecentBytes, descSpills, descLoads, descPromotions, descIndexBytes, descLiveBytes, descLogBytes, descSpaceAmp, descSegments, descRecords, descFsyncs, descFsyncTime, descWritten, descWriteAmp, descStale, descReadOnly, descFault, descRecoveries, descCacheHits, descCacheMisses, descCacheEvicts, descCacheItems, descCacheBytes, descPanics}
)

// Collector is a prometheus.Collector over one engine. Create it with
// NewCollector; it is safe for concurrent use.
type Collector struct{ e *temporalstore.Engine }

// NewCollector returns a collector of e's statistics.
func NewCollector(e *temporalstore.Engine) *Collector { return &Collector{e: e} }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descPanics, prometheus.CounterValue, float64(c.e.Panics()))
	ms := c.e.MaintenanceStats()
	ch <- prometheus.MustNewConstMetric(descRounds, prometheus.CounterValue, float64(ms.Rounds))
	ch <- prometheus.MustNewConstMetric(descRoundFails, prometheus.CounterValue, float64(ms.Failed))
	ch <- prometheus.MustNewConstMetric(descRoundLast, prometheus.GaugeValue, ms.Last.Seconds())
	ch <- prometheus.MustNewConstMetric(descRoundTime, prometheus.CounterValue, ms.Total.Seconds())
	for _, st := range ms.Stages {
		ch <- prometheus.MustNewConstMetric(descStageTime, prometheus.CounterValue, st.Duration.Seconds(), st.Name)
		ch <- prometheus.MustNewConstMetric(descStageItems, prometheus.CounterValue, float64(st.Items), st.Name)
		ch <- prometheus.MustNewConstMetric(descStageBytes, prometheus.CounterValue, float64(st.Bytes), st.Name)
	}
	if stats, err := c.e.Stats(); err == nil {
		for _, s := range stats {
			collectShard(ch, s)
		}
	}
	if cs, ok := c.e.CacheStats(); ok {
		ch <- prometheus.MustNewConstMetric(descCacheHits, prometheus.CounterValue, float64(cs.Hits))
		ch <- prometheus.MustNewConstMetric(descCacheMisses, prometheus.CounterValue, float64(cs.Misses))
		ch <- prometheus.MustNewConstMetric(descCacheEvicts, prometheus.CounterValue, float64(cs.Evictions))
		ch <- prometheus.MustNewConstMetric(descCacheItems, prometheus.GaugeValue, float64(cs.Entries))
		ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(cs.Bytes))
	}
}

func collectShard(ch chan<- prometheus.Metric, s temporalstore.ShardStats) {
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
	fault := 0.0
	if s.StorageFault != nil {
		fault = 1
	}
	gauge(descFault, fault)
	counter(descRecoveries, float64(s.FaultRecoveries))
}

// fsyncHistogram is a shard's fsync latencies as a Prometheus histogram.
// The last bucket of h has no upper limit, so it goes to +Inf only.
func fsyncHistogram(h storage.Histogram, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Counts)-1)
	var cum uint64
	for i, c := range h.Counts[:len(h.Counts)-1] {
		cum += c
		buckets[storage.BucketBound(i).Seconds()] = cum
	}
	return prometheus.MustNewConstHistogram(descFsyncTime, h.Total(), h.Sum.Seconds(), buckets, labels...)
}
