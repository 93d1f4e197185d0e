// Package httpapi is the HTTP command surface of the engine: /execute and
// /batch_execute in JSON and in MessagePack, with /health, /ready, /ingest
// and /metrics. Routes, command kinds, fields and status codes follow
// TemporalStore's Rust implementation ("the original" in comments below),
// and the engine's own kinds are served beside them.
//
// New returns a Handler, an http.Handler; the server owns the listener and
// TLS. The request and reply shapes, their codecs, the translation to and
// from the engine's commands and the status codes are package wire's
// (Request, Command, ExecuteResponse, Status... are also named here), so
// that a client links them without this server.
//
// # Routes
//
//   - POST /execute {"shard_id", "command": {"kind", ...}} answers
//     {"status": {"ok", "code", "message"}, "response": {"kind", ...}}:
//     HTTP 200 whenever the body was understood, the command's own failure
//     in status, except a write its shard refuses after its log failed:
//     HTTP 507, code "disk_full" or "storage_fault" (the shard takes writes
//     again by itself). A body that cannot be decoded, an unknown kind or a
//     missing field of an original kind is HTTP 400 with code
//     "bad_request" (the engine's kinds check their own fields: an empty
//     key is the command's invalid_argument).
//   - POST /batch_execute {"shard_id", "commands": [...]} runs the commands
//     in order, each with its own status; a batch holding a command that
//     cannot be understood runs nothing and is HTTP 400.
//   - Both take "namespace" and "table_name" (the default table when
//     absent) and "tenant" (a command's own wins). The original's aliases
//     (/table_execute, /ProxyService/ExecuteCmd, ...) are served too.
//   - /health (and /ping): liveness, always 200. GET /ready: 200 when every
//     shard passes temporalstore.Engine.Probe within Options.ReadyTimeout
//     (and Options.Ready, a cluster member's own check, agrees), else 503
//     "not_ready". Neither needs a token.
//   - POST /ingest, GET /ingest_offset and /dead_letters: stream ingestion
//     (temporalstore.Engine.Ingest). GET /metrics: Options.Registry's
//     metrics. /debug/pprof/ with Options.Profiling. Else 404 "not_found".
//   - Tables and tenants, for an operator: GET /tables (every table),
//     POST /tables {"namespace", "name", TableOptions' fields, durations
//     in nanoseconds} (201),
//     GET /tables/{ns}/{name} (options, read-only shards, per-shard
//     statistics), PATCH /tables/{ns}/{name} {"read_qps", "write_qps",
//     "shard_rate", "shard_burst", "read_only", "shards"} (limits, 0 for
//     none; read-only mode of the shards named, every shard by default),
//     DELETE /tables/{ns}/{name} (with its numbered databases), GET
//     /tenants (the tenants' own limits), GET and PUT /tenants/{tenant}
//     {"qps"} (above 0 limits, 0 the default, -1 none). Changes are kept
//     across restarts. Replies carry "status" and the data; errors are the
//     bare status with 400 (bad input, "bad_request" or
//     "invalid_argument"), 404 ("table_not_found"), 409 ("table_exists",
//     "table_in_use": the default table and those in use are not
//     dropped), 403 ("forbidden"). A cluster member refuses POST and
//     DELETE: its catalog is not replicated.
//   - The original's other command routes, run as /execute runs
//     commands: /execute_checked and /batch_execute_checked (+
//     "load_version", required, not compared: shards are never reloaded
//     here; the reply wrapped {"status", "response"}), /execute_replicated
//     and /batch_execute_replicated (a command's "replication_mode" its
//     table cannot honour answers "unsupported"; raft only on a table
//     Options.Raft names), the typed /ProxyService/<Verb> (Get, HMGet,
//     FeatureAdd, ...: {namespace, table_name, key, ...} as the verb's
//     command), and the async forms, jobs read at GET /jobs/{id}.
//   - Operator routes: /dump, /compact, /gc, /storage_manager/cycle (a
//     checkpoint or a maintenance round, as a job), GET /readiness,
//     /get_config|get_info|get_stats/{shard}, /server/info and
//     /server/runtime_stats. The original's routes of what the engine
//     does not have (/load, /set_config, /update_membership, /heartbeat,
//     /read_stream, ...) answer 501 "unsupported", naming what replaces
//     them (original_routes.go, admin_routes.go, jobs.go).
//   - Blobs (Options.Blobs, package blob): PUT or POST /blob/{key} puts
//     one (X-Content-Sha256 checked when given), GET and HEAD read it
//     (one Range; 206, or 416), DELETE removes it; POST
//     /blob/{key}?uploads begins a multipart upload, PUT
//     ?upload_id=&part=N appends a part (any order; resent parts
//     replace), GET ?upload_id= lists them, POST ?upload_id= commits
//     ({"parts": [...]} or all), DELETE ?upload_id= aborts; GET
//     /blob?prefix=&after=&limit= lists, POST /blob?sweep sweeps. The
//     namespace is ?namespace= (a tenant token's own by default).
//
// shard_id is optional, and accepted (an unsigned integer, as in the
// original) but ignored: the engine routes each command by its key
// (temporalstore.ShardOf), and a client of the original computes shard_id
// with a routing of its own, which names none of this engine's shards.
//
// # Encodings
//
// A body with Content-Type application/msgpack (or x-msgpack, or
// vnd.msgpack) is MessagePack, and so is its reply; anything else is JSON.
// Unknown fields are ignored. Request payloads (value, member, args, ...)
// are a base64 string or an array of numbers 0..255 (MessagePack also takes
// bin); names (key, field, ...) are strings, or arrays of numbers for bytes
// that are not UTF-8. Response bytes are arrays of numbers in JSON, as the
// original sends them, and bin in MessagePack. Command lists the kinds and
// their fields, Response the response kinds.
//
// A failed command carries the engine error's text and a code
// (invalid_argument, wrong_type, cross_shard, table_not_found,
// admission_rejected, deadline_exceeded, ...) that Status.Err maps back to
// the engine's error. The original's context_* kinds, a model the engine
// does not have, go to Options.Context (the server's serves retrieval,
// injection, events and pack audits with matrixark); a kind it does not
// serve is answered with code "unsupported" (HTTP 200, so a batch's other
// commands still run).
//
// # Cluster
//
// With Options.Cluster the handler is a cluster member's: a request whose
// keyed commands all go to a shard another member leads is forwarded to
// that member (once), and reads run here pass their shard's read barrier.
// A batch spread over several members runs here; its commands of other
// members' shards answer "not_leader" (and one whose leader changed
// before it committed, "unknown_outcome"). A request of reads only with
// "X-Temporalstore-Read: stale" reads this member's replica instead, as
// a READONLY connection does over RESP; "X-Temporalstore-Read: lease"
// passes the read barrier on the shard leader's lease when it holds one.
//
// # Auth and concurrency
//
// With tokens configured, the other routes need "Authorization: Bearer
// <token>" (401 "unauthorized" otherwise), compared by SHA-256 digest in
// constant time. A read-only token runs only read kinds
// (temporalstore.IsReadKind) and no /ingest; a write, or a batch holding
// one, is refused whole with 403 "forbidden". The table, tenant, report
// and job routes describe to any global token and change with a
// read-write one.
//
// A tenant token (Options.TenantTokens) reaches /execute, /batch_execute,
// their variants and async forms, and its own jobs only: its commands run in the namespace named as its
// tenant (a request naming none gets it, one naming another is refused
// whole with 403), as that tenant (Command.Tenant, so the engine's tenant
// limit applies; naming another tenant is refused), and only read kinds
// for a read-only one. The table and tenant routes answer it 403, the
// other routes 401. A Handler is safe for concurrent use.
package httpapi
