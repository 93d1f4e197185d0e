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
		{name: "flows_waiting", help: "Flows waiting in a state to be claimed (due or not).", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Flows.Waiting) }},
		{name: "flows_due", help: "Waiting flows that are due now.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Flows.Due) }},
		{name: "flows_running", help: "Flows claimed by a worker.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Flows.Running) }},
		{name: "flows_expired_leases", help: "Running flows whose lease ran out, not yet reclaimed.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Flows.Expired) }},
		{name: "flows_terminal", help: "Completed, failed and cancelled flows still kept (until the retention).", typ: g, get: func(s *ferricstore.ShardStats) float64 {
			return float64(s.Flows.Completed + s.Flows.Failed + s.Flows.Cancelled)
		}},
		{name: "flow_schedules", help: "Flow schedules.", typ: g, get: func(s *ferricstore.ShardStats) float64 { return float64(s.Flows.Schedules) }},
		{name: "flows_created_total", help: "Flows created, schedules' included.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsCreated) }},
		{name: "flows_claimed_total", help: "Due flows claimed by workers.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsClaimed) }},
		{name: "flows_reclaimed_total", help: "Running flows claimed again after their lease ran out.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsReclaimed) }},
		{name: "flows_completed_total", help: "Flows completed.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsCompleted) }},
		{name: "flows_failed_total", help: "Flows failed: by FLOW.FAIL, spent retries, or MAX_ACTIVE_MS.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsFailed) }},
		{name: "flows_retried_total", help: "Retries granted (the flow waits out its backoff).", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsRetried) }},
		{name: "flows_cancelled_total", help: "Flows cancelled.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsCancelled) }},
		{name: "flows_expired_total", help: "Flows failed because they outlived MAX_ACTIVE_MS.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowsExpired) }},
		{name: "flow_schedule_fires_total", help: "Schedule occurrences that made a flow.", typ: c, get: func(s *ferricstore.ShardStats) float64 { return float64(s.FlowFires) }},
	}
}

// Collector is a prometheus.Collector of one Store.
type Collector struct {
	st      *ferricstore.Store
	metrics []metric
	// waited is the due-to-claim histogram.
	waited *prometheus.Desc
}

// NewCollector returns a collector of st's figures.
func NewCollector(st *ferricstore.Store) *Collector {
	ms := metrics()
	for i := range ms {
		ms[i].desc = prometheus.NewDesc("ferricstore_"+ms[i].name, ms[i].help, []string{"shard"}, nil)
	}
	return &Collector{st: st, metrics: ms, waited: prometheus.NewDesc("ferricstore_flow_due_to_claim_seconds",
		"How long claimed flows had been due (reclaimed ones: since their lease ran out) when a worker claimed them.", []string{"shard"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
	ch <- c.waited
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for i, s := range c.st.Stats() {
		shard := strconv.Itoa(i)
		for _, m := range c.metrics {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.get(&s), shard)
		}
		if n := len(s.FlowWaitCounts); n > 0 {
			buckets := make(map[float64]uint64, len(s.FlowWaitBuckets))
			for i, ub := range s.FlowWaitBuckets {
				buckets[ub/1000] = s.FlowWaitCounts[i]
			}
			ch <- prometheus.MustNewConstHistogram(c.waited, s.FlowWaitCounts[n-1], float64(s.FlowWaitSumMs)/1000, buckets, shard)
		}
	}
}
