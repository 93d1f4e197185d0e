// Package engineprom exports an engine's statistics to Prometheus, read at
// each scrape: every shard's index, collections, log and fsync figures, the
// record cache's counters as the engine sees them, the panics the engine
// contained, and its maintenance rounds and their stages.
//
//	reg.MustRegister(engineprom.NewCollector(e))
//
// Metrics (shard metrics labelled namespace, table, shard):
//
//	temporalstore_shard_keys, _collections, _spilled_collections, _collection_bytes,
//	  _recent_record_bytes, _index_bytes, _live_bytes, _log_bytes, _space_amplification,
//	  _log_segments, _write_amplification, _read_only, _storage_fault       gauges
//	temporalstore_shard_collection_spills_total, _collection_loads_total,
//	  _collection_promotions_total, _log_records_total, _log_fsyncs_total,
//	  _log_written_bytes_total, _stale_rejects_total,
//	  _storage_fault_recoveries_total                                       counters
//	temporalstore_shard_log_fsync_duration_seconds                          histogram
//	temporalstore_record_cache_hits_total, _misses_total, _evictions_total counters
//	temporalstore_record_cache_entries, _bytes                              gauges
//	temporalstore_panics_total                                              counter
//	temporalstore_maintenance_rounds_total, _round_failures_total           counters
//	temporalstore_maintenance_last_round_seconds                            gauge
//	temporalstore_maintenance_round_seconds_total                           counter
//	temporalstore_maintenance_stage_seconds_total, _stage_items_total,
//	  _stage_bytes_total                                                    counters, by stage
//
// The tiers of a matrixcache under the record cache have their own
// collector, package matrixcache/cacheprom.
package engineprom
