package ferricprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/ferricstore"
)

// metric is one figure of a shard: its name after "ferricstore_", help,
// type and how to read it.
type metric struct {
	name, help string
	typ        prometheus.ValueType
	get        func(*ferricstore.ShardStats) float64
	desc       *prometheus.Desc
}

func metrics() []metric {
	g, c := prometheus.GaugeValue, prometheus.CounterValue
	return []metric{
		{name: "streams", help: "Streams the shard holds.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Streams) }},
		{name: "stream_entries", help: "Entries of the shard's streams.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Entries) }},
		{name: "stream_groups", help: "Consumer groups of the shard's streams.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Groups) }},
		{name: "stream_pending_entries", help: "Entries in the pending lists of the shard's groups.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Pending) }},
		{name: "shard_failed", help: "1 when the shard's log failed and it refuses every call.", typ: g, get: func(s *ferricstore.ShardStats) float64 {
			if s.Failed {
				return 1
			}
			return 0
		}},
		{name: "writes_total", help: "Writes the shard logged.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Writes) }},
		{name: "write_batches_total", help: "Log appends the shard's writes were grouped in (one fsync each, when durable).", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Batches) }},
		{name: "stream_deliveries_total", help: "Entries XREADGROUP, XCLAIM and XAUTOCLAIM handed to consumers.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Deliveries) }},
		{name: "snapshots_total", help: "Snapshots the shard wrote.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Snapshots) }},
		{name: "log_records_total", help: "Records appended to the shard's log.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.LogRecords) }},
		{name: "log_bytes_total", help: "Bytes written to the shard's log.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.LogBytes) }},
		{name: "log_fsyncs_total", help: "fdatasync calls of the shard's log.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Fsyncs) }},
	}
}

// Collector is a prometheus.Collector of one Store.
type Collector struct {
	st      *ferricstore.Store
	metrics []metric
}

// NewCollector returns a collector of st's figures.
func NewCollector(st *ferricstore.Store) *Collector {
	ms := metrics()
	for i := range ms {
		ms[i].desc = prometheus.NewDesc("ferricstore_"+ms[i].name, ms[i].help, []string{"shard"}, nil)
	}
	return &Collector{st: st, metrics: ms}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for i, s := range c.st.Stats() {
		shard := strconv.Itoa(i)
		for _, m := range c.metrics {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.get(&s), shard)
		}
	}
}
