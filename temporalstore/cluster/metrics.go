package cluster

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/matrixraft/raftprom"
)

// Collector returns the member's metrics for a Prometheus registry: every
// shard's raft group as matrixraft/raftprom exports it (term, commit and
// applied indexes, leader changes, fsyncs, each follower's lag on the
// leader, ...) labelled shard="N", the shard's records this replica has
// not applied yet (replica_lag_records), the leadership transfers the
// leader balancing made, and the raft transport's bytes and drops.
func (n *Node) Collector() prometheus.Collector { return (*collector)(n) }

type collector Node

var (
	lagDesc = prometheus.NewDesc("temporalstore_cluster_replica_lag_records",
		"Records of the shard's log this replica has not applied yet.", []string{"shard"}, nil)
	transfersDesc = prometheus.NewDesc("temporalstore_cluster_leader_transfers_total",
		"Leaderships this member handed to another by leader balancing.", nil, nil)
	convictedDesc = prometheus.NewDesc("temporalstore_cluster_member_convicted",
		"1 while the members' jury holds the member down, else 0.", []string{"member"}, nil)
	placeDesc = prometheus.NewDesc("temporalstore_cluster_placement_moves_left",
		"Voter changes placement still has to make in the shards this member leads.", nil, nil)
	writerDesc = prometheus.NewDesc("temporalstore_shared_log_writer",
		"1 while this member writes the shard's shared log, else 0.", []string{"shard"}, nil)
	behindDesc = prometheus.NewDesc("temporalstore_shared_log_behind_bytes",
		"Bytes of the shard's current shared segment this member has yet to apply.", []string{"shard"}, nil)
	appendsDesc = prometheus.NewDesc("temporalstore_shared_log_store_appends_total",
		"Durable appends this member made to the shard's shared log (each one batch of writes).", []string{"shard"}, nil)
	takeoversDesc = prometheus.NewDesc("temporalstore_shared_log_takeovers_total",
		"Times this member took over the shard's shared log.", []string{"shard"}, nil)
	safeDesc = prometheus.NewDesc("temporalstore_cluster_liveness_safe_mode_total",
		"Liveness evaluations that convicted no one new because the suspicions looked like a network fault.", nil, nil)
)

// Describe sends nothing: the groups come and go with the shards, so the
// collector is unchecked.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	n := (*Node)(c)
	for sh := range n.opts.Shards {
		if g := n.group(sh); g != nil {
			o := raftprom.Options{ConstLabels: prometheus.Labels{"shard": strconv.Itoa(sh)}}
			if sh == 0 {
				// One transport carries every group: its counts go once.
				o.Transport = func() raftprom.TransportStats {
					st := n.tr.Stats()
					return raftprom.TransportStats{BytesSent: st.BytesSent, BytesReceived: st.BytesReceived, MessagesDropped: st.MessagesDropped}
				}
			}
			raftprom.NewCollector(g, o).Collect(ch)
		} else if n.shared == nil || n.sharedLog(sh) == nil {
			continue
		} else {
			n.collectShared(ch, sh)
		}
		if e := n.attached(); e != nil {
			if applied, last, err := e.ShardProgress(n.opts.Namespace, n.opts.Table, sh); err == nil {
				ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(last-min(applied, last)), strconv.Itoa(sh))
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(transfersDesc, prometheus.CounterValue, float64(n.transfers.Load()))
	for _, id := range n.members() {
		v := 0.0
		if n.Convicted(id) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(convictedDesc, prometheus.GaugeValue, v, strconv.FormatUint(id, 10))
	}
	n.watch.mu.Lock()
	safe := n.watch.safe
	n.watch.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(safeDesc, prometheus.CounterValue, float64(safe))
	ch <- prometheus.MustNewConstMetric(placeDesc, prometheus.GaugeValue, float64(n.placeLeft.Load()))
}

// collectShared sends shard sh's shared-log metrics.
func (n *Node) collectShared(ch chan<- prometheus.Metric, sh int) {
	l := n.sharedLog(sh)
	st, label := l.SharedStats(), strconv.Itoa(sh)
	writing := 0.0
	if l.Writing() {
		writing = 1
	}
	ch <- prometheus.MustNewConstMetric(writerDesc, prometheus.GaugeValue, writing, label)
	ch <- prometheus.MustNewConstMetric(behindDesc, prometheus.GaugeValue, float64(st.Behind), label)
	ch <- prometheus.MustNewConstMetric(appendsDesc, prometheus.CounterValue, float64(st.StoreAppends), label)
	ch <- prometheus.MustNewConstMetric(takeoversDesc, prometheus.CounterValue, float64(st.Takeovers), label)
}
