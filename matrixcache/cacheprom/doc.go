// Package cacheprom exports the statistics of a matrixcache.Cache to
// Prometheus.
//
// NewCollector returns a prometheus.Collector. Register it on a registry and
// serve the registry with promhttp:
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(cacheprom.NewCollector(cache, cacheprom.Options{
//		ConstLabels: prometheus.Labels{"cache": "blocks"},
//	}))
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Every scrape calls the cache's Stats once and turns that one snapshot into
// metrics, so the figures of a scrape are as consistent as Stats makes them.
// Stats locks every DRAM shard in turn: a scrape costs about as much as one
// Stats call, and nothing is computed between scrapes.
//
// # Metrics
//
// All names begin with Options.Namespace ("matrixcache" by default) and
// follow the Prometheus conventions: counters end in _total, sizes are in
// bytes and latencies in seconds.
//
//   - matrixcache_tier_*{tier="dram"|"resident"|"ssd"}: the per-tier
//     counters and gauges of matrixcache.TierStats. Every tier is exported,
//     at zero when it is off, so a dashboard's series exist whatever the
//     cache's options.
//   - matrixcache_*: the cache-wide counters (misses no tier answered,
//     rejected writes, pins, writeback, ...) and gauges (pinned entries and
//     bytes, writeback queue depth).
//   - matrixcache_ssd_store_* and matrixcache_resident_store_*: the lower
//     tiers' own figures (ssdtier.Stats, residenttier.Stats): commits,
//     bytes written, fsyncs, corrupt blocks and capacity.
//   - matrixcache_{get,put,read_through,writeback_batch}_duration_seconds:
//     the cache's latency histograms, with the bucket bounds of
//     matrixcache.Latency (10µs, 100µs, 1ms, 10ms). Each has a gauge
//     ..._duration_max_seconds with the largest sample, which the +Inf
//     bucket cannot show.
//   - matrixcache_health_*: matrixcache.HealthReport of the same snapshot:
//     matrixcache_health_ok (1 when no finding is a Warning or Critical),
//     matrixcache_health_findings{severity="info"|"warning"|"critical"}
//     (always present, 0 when clean), and per finding
//     matrixcache_health_finding{id,component,severity} (the observed
//     figure) and matrixcache_health_finding_threshold{id}. The label names
//     id, component and severity are taken by these.
//
// # Concurrency
//
// A Collector is safe for concurrent use: it keeps no state between scrapes,
// so concurrent scrapes each take their own snapshot.
//
// This package is the only part of the matrixcache module that imports
// Prometheus; the cache itself does not.
package cacheprom
