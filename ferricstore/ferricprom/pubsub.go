package ferricprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/temporalstore/temporalstore-go/ferricstore/pubsub"
)

// PubSubCollector is a prometheus.Collector of one pub/sub Broker: its
// publishes, deliveries, dropped subscribers and fan-out times since it
// was made, and its channels, patterns and subscribers now.
type PubSubCollector struct {
	b                                              *pubsub.Broker
	publishes, deliveries, dropped, fanOut         *prometheus.Desc
	channels, shardChannels, patterns, subscribers *prometheus.Desc
}

// NewPubSubCollector returns a collector of b's figures.
func NewPubSubCollector(b *pubsub.Broker) *PubSubCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("ferricstore_pubsub_"+name, help, nil, nil)
	}
	return &PubSubCollector{b: b,
		publishes:  d("publishes_total", "PUBLISH and SPUBLISH calls."),
		deliveries: d("deliveries_total", "Messages handed to subscribers: one per subscriber and matching subscription, of those that took it."),
		dropped: d("dropped_subscribers_total",
			"Subscribers that refused a message, each counted once: their connection was gone, or was closed because its queue of pushed messages passed client-output-buffer-limit pubsub."),
		fanOut: d("publish_fanout_seconds",
			"Time a publish took to hand its message to every matching subscriber, for one publish in 16 (a sample: the clock is not read twice per publish)."),
		channels:      d("channels", "Channels with at least one subscriber."),
		shardChannels: d("shard_channels", "Shard channels with at least one subscriber."),
		patterns:      d("patterns", "Distinct patterns subscribed."),
		subscribers:   d("subscribers", "Connections with at least one subscription."),
	}
}

// Describe implements prometheus.Collector.
func (c *PubSubCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.publishes, c.deliveries, c.dropped, c.fanOut, c.channels, c.shardChannels, c.patterns, c.subscribers} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *PubSubCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.b.Stats()
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(c.publishes, st.Publishes)
	counter(c.deliveries, st.Deliveries)
	counter(c.dropped, st.DroppedSubscribers)
	// Prometheus's buckets are cumulative.
	h := st.FanOut
	buckets := make(map[float64]uint64, len(h.Bounds))
	var n uint64
	for i, bound := range h.Bounds {
		n += h.Counts[i]
		buckets[bound.Seconds()] = n
	}
	ch <- prometheus.MustNewConstHistogram(c.fanOut, n+h.Counts[len(h.Bounds)], h.Sum.Seconds(), buckets)
	gauge(c.channels, st.Channels)
	gauge(c.shardChannels, st.ShardChannels)
	gauge(c.patterns, st.Patterns)
	gauge(c.subscribers, st.Subscribers)
}
