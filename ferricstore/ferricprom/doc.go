// Package ferricprom exports a ferricstore Store's figures to Prometheus:
// per shard the streams, entries, groups and pending entries it holds,
// and the writes, batches, deliveries, snapshots, log records, log bytes
// and fsyncs since the store opened, each labelled with its shard. A
// pub/sub Broker's figures have a collector of their own: publishes,
// deliveries, dropped subscribers, a histogram of publishes' fan-out
// time (sampled), and the channels, shard channels, patterns and
// subscribers there are (ferricstore_pubsub_*).
//
//	reg.MustRegister(ferricprom.NewCollector(store), ferricprom.NewPubSubCollector(broker))
//
// The figures are read at scrape time (Store.Stats, Broker.Stats), so a
// scrape walks each shard's streams under its read lock. It is the only
// package of the module that imports Prometheus.
package ferricprom
