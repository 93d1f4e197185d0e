// Package temporalstore is the TemporalStore engine: a time-aware serving
// store for key-value data, latest-value feature rows, feature series with
// windowed reads and aggregates, event sequences, and counters, quotas and
// other control state, kept in durable per-shard logs.
//
// The time-aware models' names and semantics follow TemporalStore's Rust
// implementation ("the original" in comments below).
//
// Open needs Options.OpenLog (and optionally a RecordCache); package
// local wires the default storage in one call:
//
//	e, err := local.Open(ctx, temporalstore.Options{Dir: "data"})
//	defer e.Close()
//	_, err = e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("k"), Value: []byte("v")})
//	r, err := e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindGet, Key: []byte("k")})
//
// A Command names its Kind (Kinds lists them) and its table (the default
// table when Namespace and Table are empty); ExecuteBatch runs several in
// order. Command, Response, the kinds and the errors are package api's,
// under the same names here, so a client needs api and not the engine. TableOptions (CreateTable) choose a table's shards, commit mode
// (durable, or Async), limits and feature retention. At run time
// ListTables, DescribeTable and TableStats describe tables, DropTable
// deletes one (crash-safe), and SetTableLimits, SetTableReadOnly and
// SetTenantQPS change limits and read-only shards; the engine's directory
// keeps the changes across restarts.
//
// # Data models
//
//   - Redis's strings, keys and TTLs, hashes, sets, sorted sets, lists,
//     bitmaps and HyperLogLogs, with WRONGTYPE, MULTI (Atomic) and WATCH
//     (WatchKey, Touched); Feast rows, written only when newer.
//   - Feature series: per-key points, window and filtered reads, write
//     policies, retention by count and age, and aggregates (the original's
//     and more: floats, percentiles, distinct, top-k, decay) answered from
//     a rollup ladder; sequences, event rows in a series.
//   - Control state: bucketed counters, distinct values, families,
//     idempotent set-and-get, first/last selections, quotas and pacing.
//   - Stream ingestion (Ingest): exactly-once batches, with a dead-letter
//     queue (DeadLetters) and a resume offset (IngestOffset).
//
// # Durability
//
// A key's shard is ShardOf(key), a hash of its {hash tag}. A write is a
// command record appended to its shard's log; Execute returns once the
// record is durable (for an Async table, handed to the operating system
// and synced within TableOptions.SyncInterval) and applied. A shard's resident index maps
// keys to log records, whose values are read through the RecordCache if
// any; collections past Options.CollectionBytes are spilled to the log.
// Maintenance (Options.MaintenanceInterval, or Maintain) expires keys,
// compacts logs and checkpoints indexes; Open replays each log after its
// newest checkpoint, and refuses an image or log of unknown format.
//
// # Errors and concurrency
//
// Errors wrap the package's sentinels (ErrInvalid, ErrWrongType,
// ErrCrossShard, ...): match them with errors.Is. Bad input changes
// nothing. An Engine is safe for concurrent use: writes to one shard are
// appended concurrently (the log batches them into one write and one
// fsync) and applied in log order; reads take a shard's read lock. A
// multi-key command takes keys of one key group (TableOptions.KeyGroups; a
// common {hash tag} ensures it), and Atomic isolates one shard.
//
// The engine is written against package storage's interfaces; the serving
// surfaces are packages resp (RESP2/RESP3), httpapi (HTTP) and client (Go).
package temporalstore
