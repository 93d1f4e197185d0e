// Package temporalstore is the TemporalStore engine: a time-aware serving
// store that answers latest-value feature reads, windowed event sequences,
// aggregates and rollups, frequency caps and counters, and context retrieval
// from one durable, time-ordered index.
//
// # What this module owns
//
//   - Namespaces, tables and shards, and the routing of a command to its
//     shard and bucket.
//   - The resident index, which holds block addresses and never values, and
//     the block store built on matrixcache.
//   - All data models, TTL and expiry, and background maintenance.
//   - The durability path: every write is a command proposed to a log
//     (a local matrixraft/wal log, or a replicated matrixraft group), made
//     durable, applied to the shard's state machine and only then
//     acknowledged. Durable and async commit modes are chosen per table.
//   - Checkpoints and recovery, with format-stamped, checksummed images; an
//     image or log of an unknown format is refused, never guessed.
//   - Replication modes.
//   - The serving surfaces, as packages: resp (RESP2/RESP3), httpapi (the
//     HTTP command surface) and client (the Go client).
//
// The entry points are Open(ctx, Options) and Engine.Execute(ctx, Command).
//
// # Dependencies
//
// This module depends on matrixcache, matrixraft and matrixobject, and on no
// other module of this repository.
//
// # Data models
//
//   - Redis's: strings, keys and TTLs, hashes, sets, native sorted sets
//     and native lists, with WRONGTYPE, MULTI-style atomic sections
//     (Engine.Atomic: isolated, and crash-atomic in the log) and WATCH
//     (Engine.KeyVersion, Engine.WatchKey).
//   - Feast rows: hash rows written only when their event time is newer.
//   - Feature series (features.go): per-key points with unique timestamps,
//     window and filtered reads, write policies, replace, retention by
//     count and by age, the original's aggregators and more (floats,
//     percentiles, distinct, top-k, decay; aggregates.go), answered from a
//     rollup ladder over wide windows.
//   - Sequences (sequences.go): event rows in the series, single and batch
//     window queries.
//   - Control state (control.go): bucketed counters with windowed reads,
//     distinct values (exact, then HyperLogLog), families, idempotent
//     set-and-get, first/last selections, quotas and pacing.
//   - Stream ingestion (ingest.go): exactly-once batches through a ledger
//     written with each record, a dead-letter queue and an offset
//     handshake.
//
// Collections past their memory budget (Options.CollectionBytes) are
// spilled to the log and served from it. Read-modify-writes of distinct
// keys are combined into one log append (internal/shard's combine.go);
// runs of plain SETs are one record per shard (ExecuteBatch).
//
// # Concurrency
//
// An Engine is safe for concurrent use. Writes to one shard are appended
// concurrently (the log batches them into one write and one fsync) and
// applied in log order; reads take a shard's read lock.
package temporalstore
