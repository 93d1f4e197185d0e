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
// The engine is being built in the order of docs/ARCHITECTURE.md's engine
// design. Landed so far:
//
//   - the Engine: tables of shards in a data directory, a catalog, routing
//     by XXH64, and Execute for Redis's string commands and key TTLs (SET
//     with NX/XX/GET/EX/KEEPTTL, GET, DEL, GETDEL, INCRBY, INCRBYFLOAT,
//     APPEND, STRLEN, GETRANGE, SETRANGE, EXISTS, PEXPIRE, PTTL, PERSIST,
//     TYPE, and SCAN over a table's shards), and admission before a
//     command reaches its shard: read-only shards, per-tenant QPS, per-table
//     read and write QPS, and per-shard rate and burst, each refused with
//     its own error;
//   - package command, the log's command record;
//   - internal/keyindex, the resident index (about 18 to 22 bytes a key at
//     any key count);
//   - internal/shard, one shard's log, index, apply and checkpoints, with
//     replay on open and a SIGKILL crash test.
//
// Read-modify-write commands hold their shard's append gate exclusively,
// so they see every write appended before them.
//
// # Concurrency
//
// An Engine is safe for concurrent use. Writes to one shard are appended
// concurrently (the log batches them into one write and one fsync) and
// applied in log order; reads take a shard's read lock.
package temporalstore
