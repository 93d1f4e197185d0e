package respprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
)

// DefaultNamespace is the prefix of every metric name unless
// Options.Namespace says otherwise.
const DefaultNamespace = "temporalstore"

// Options configure NewCollector.
type Options struct {
	// Namespace is the first part of every metric name. Default (empty):
	// DefaultNamespace.
	Namespace string
	// ConstLabels are added to every metric, for example to tell two
	// servers of one process apart. The label name "command" is taken.
	// Default: none.
	ConstLabels prometheus.Labels
}

// StatsSource is what a Collector reads: *resp.Server implements it.
type StatsSource interface {
	Stats() resp.Stats
	CommandStats() []resp.CommandStat
}

// Collector is a prometheus.Collector over one RESP server, read at each
// scrape. Create it with NewCollector; it is safe for concurrent use.
type Collector struct {
	src    StatsSource
	bounds []float64 // the finite latency bucket bounds, in seconds

	duration, failed, rejected                                       *prometheus.Desc
	clients, connections, processed, errorReplies, panics, pushDrops *prometheus.Desc
}

// NewCollector returns a collector of src's statistics.
func NewCollector(src StatsSource, opts ...Options) *Collector {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	name := func(n string) string { return prometheus.BuildFQName(o.Namespace, "resp", n) }
	cmd := []string{"command"}
	c := &Collector{
		src:          src,
		duration:     prometheus.NewDesc(name("command_duration_seconds"), "Server time of the RESP commands' calls, by command.", cmd, o.ConstLabels),
		failed:       prometheus.NewDesc(name("command_failed_total"), "RESP calls that replied with an error, by command.", cmd, o.ConstLabels),
		rejected:     prometheus.NewDesc(name("command_rejected_total"), "RESP calls refused before running (arity, NOAUTH, NOPERM, not allowed in MULTI), by command.", cmd, o.ConstLabels),
		clients:      prometheus.NewDesc(name("connected_clients"), "Open RESP connections.", nil, o.ConstLabels),
		connections:  prometheus.NewDesc(name("connections_received_total"), "RESP connections accepted.", nil, o.ConstLabels),
		processed:    prometheus.NewDesc(name("commands_processed_total"), "RESP commands run.", nil, o.ConstLabels),
		errorReplies: prometheus.NewDesc(name("error_replies_total"), "RESP error replies sent, unknown commands' included.", nil, o.ConstLabels),
		pushDrops:    prometheus.NewDesc(name("push_disconnections_total"), "Connections closed because their queue of pushed frames (pub/sub messages) passed the push limits.", nil, o.ConstLabels),
		panics:       prometheus.NewDesc(name("panics_total"), "Panics the RESP server contained while serving requests (each answered with an error; the engine's own are temporalstore_panics_total).", nil, o.ConstLabels),
	}
	for _, b := range resp.LatencyBounds() {
		c.bounds = append(c.bounds, b.Seconds())
	}
	return c
}

// Describe sends the collector's descriptors.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.duration, c.failed, c.rejected, c.clients, c.connections, c.processed, c.errorReplies, c.panics, c.pushDrops} {
		ch <- d
	}
}

// Collect sends the server's statistics as they are now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	ch <- prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, float64(st.ConnectedClients))
	ch <- prometheus.MustNewConstMetric(c.connections, prometheus.CounterValue, float64(st.ConnectionsReceived))
	ch <- prometheus.MustNewConstMetric(c.processed, prometheus.CounterValue, float64(st.CommandsProcessed))
	ch <- prometheus.MustNewConstMetric(c.errorReplies, prometheus.CounterValue, float64(st.ErrorReplies))
	ch <- prometheus.MustNewConstMetric(c.panics, prometheus.CounterValue, float64(st.Panics))
	ch <- prometheus.MustNewConstMetric(c.pushDrops, prometheus.CounterValue, float64(st.PushDisconnections))
	for _, s := range c.src.CommandStats() {
		// The count is the buckets' total, not Calls, which a call being
		// counted may have reached first: the +Inf bucket must be the
		// count.
		buckets := make(map[float64]uint64, len(c.bounds))
		var cum uint64
		for i, b := range c.bounds {
			cum += s.Buckets[i]
			buckets[b] = cum
		}
		cum += s.Buckets[len(c.bounds)]
		ch <- prometheus.MustNewConstHistogram(c.duration, cum, s.Total.Seconds(), buckets, s.Name)
		ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(s.Failed), s.Name)
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue, float64(s.Rejected), s.Name)
	}
}
