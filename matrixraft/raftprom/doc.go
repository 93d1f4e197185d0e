// Package raftprom exports the metrics of a matrixraft.Node to Prometheus.
//
// NewCollector returns a prometheus.Collector. Register it on a registry and
// serve the registry with promhttp:
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(raftprom.NewCollector(node, raftprom.Options{
//		ConstLabels: prometheus.Labels{"group": "orders"},
//	}))
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Every scrape calls the node's Status once and turns that one snapshot into
// metrics. Nothing is registered globally: the caller chooses the registry,
// and several nodes of one process (the groups of a Host) each get their own
// Collector told apart by ConstLabels.
//
// # Metrics
//
// All names begin with Options.Namespace ("matrixraft" by default) and follow
// the Prometheus conventions: counters end in _total, latencies are in
// seconds.
//
//   - has_leader, is_leader, term, commit_index, applied_index,
//     snapshot_index, voters, learners: the node's raft state.
//   - leader_changes_total.
//   - proposals_pending, proposals_committed_total, proposals_failed_total,
//     proposals_dropped_total.
//   - wal_fsync_duration_seconds: the fdatasync latency of the node's log
//     (shared by every group of a Host), and wal_fsyncs_total, the durable
//     writes this node waited for.
//   - ready_batches_total, ready_entries_total and ready_batch_entries (a
//     histogram of the entries persisted per Ready): the batching factor.
//   - ready_duration_seconds, save_duration_seconds,
//     snapshot_save_duration_seconds, snapshot_capture_duration_seconds
//     (the loop's share of a snapshot), snapshot_apply_duration_seconds,
//     snapshots_created_total, snapshots_installed_total,
//     snapshots_forced_total (taken early because the group held a Host's
//     shared log back) and wal_rehomes_total (the Host wrote the group's
//     state again at the log's head for the same reason).
//   - read_index_duration_seconds, read_index_failures_total,
//     read_index_retries_total.
//   - peer_match_index{peer} and peer_lag_entries{peer}: the leader's view
//     of each follower (exported by the leader only).
//   - messages_sent_total, messages_received_total,
//     transport_unreachable_total (messages the transport reported it could
//     not send: the drops the node knows of) and
//     snapshot_send_failures_total.
//
// # Concurrency
//
// A Collector is safe for concurrent use: it keeps no state between scrapes.
//
// This package is the only part of the matrixraft module that imports
// Prometheus.
package raftprom
