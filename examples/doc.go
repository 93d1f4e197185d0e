// Package examples holds runnable programs that compose the modules of this
// repository. It is a thin layer: flags and environment variables, wiring,
// listeners. Nothing here is a library, and no module should require this
// one.
//
// The programs live in subdirectories:
//
//   - server: the thin server that serves every surface from one process
//     (RESP on 127.0.0.1:6379, HTTP on 127.0.0.1:17102, the S3-compatible
//     API on 127.0.0.1:9000): go run ./examples/server.
//   - ferricstore: ferricstore's streams and pub/sub served alone over RESP
//     (127.0.0.1:6380, metrics on 127.0.0.1:17103): go run
//     ./examples/ferricstore.
//   - tsctl: the administration tool (inspect and verify a data directory
//     offline, backup and restore, export and import as JSON Lines, table
//     and tenant admin).
//   - ads-demo: an ads serving path (targeting, pacing, per-user features,
//     ranking, atomic frequency caps and budgets, idempotent events) on the
//     server, on redis-server and on Go maps, with its invariants checked.
//   - cluster, flowworker, context-memory, feast: see each one's doc.
//   - embedded-cache: matrixcache used on its own.
//   - raft-kv: a small replicated key-value store on matrixraft.
//
// The package itself also carries repository-wide layout tests: every
// package has a doc comment, no module imports another module's internal
// packages, and imports between modules follow the dependency direction of
// docs/ARCHITECTURE.md.
package examples
