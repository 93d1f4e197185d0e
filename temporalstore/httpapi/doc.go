// Package httpapi is the HTTP command surface of the engine: the Rust
// original's /execute and /batch_execute, in JSON and in MessagePack, with
// /health, /ready and /metrics. New returns an http.Handler; the server
// owns the listener, and TLS is the http.Server's (the handler does not
// depend on it).
//
// # Routes
//
//   - POST /execute: {"shard_id":…,"command":{"kind":…,…}} →
//     {"status":{"ok","code","message"},"response":{"kind":…,…}}. The reply
//     is HTTP 200 whenever the body was understood, the command's own
//     failure in status. A body that cannot be decoded, an unknown kind or
//     a missing field is HTTP 400 with code "bad_request" and the empty
//     response. Also served as /table_execute, /proxy/table_execute and
//     /ProxyService/{ExecuteCmd,ExecuteTableCmd,TableExecuteCmd}.
//   - POST /batch_execute: {"shard_id":…,"commands":[…]} →
//     {"status":…,"responses":[{"status","response"},…]}: the commands run
//     in order, each with its own status; the batch status is ok. A batch
//     with any command that cannot be understood runs nothing and is HTTP
//     400 with a bare status. Also /table_batch_execute,
//     /proxy/table_batch_execute, /ProxyService/BatchExecuteCmd.
//   - Both take "namespace" and "table_name" (the default table when
//     absent), and "tenant" (for the engine's per-tenant limits; a
//     command's own "tenant" wins).
//   - GET|POST /health (and /ping, /ServerService/Ping): liveness, always
//     200 with an ok status, no token needed.
//   - GET /ready: 200 when every shard of every table passes the engine's
//     probe (its append gate and lock, see temporalstore.Engine.Probe)
//     within Options.ReadyTimeout, else 503 with code "not_ready" naming
//     the shards that did not. No token needed.
//   - POST /ingest: a stream partition's batch, exactly once
//     (temporalstore.Engine.Ingest): {namespace?, table_name?, source,
//     partition, records: [{offset, command}]} → {status, results:
//     [{status: applied|duplicate|dead_lettered, error?}], committed}.
//     GET /ingest_offset?source=&partition= → {status, next_offset}, where
//     the source resumes; GET /dead_letters?source= → the refused records
//     as JSON lines. A read-only token may read these, not ingest.
//   - GET /metrics: Prometheus text from the handler's own registry:
//     per-kind command latency histograms and counts by status code,
//     requests by route and HTTP status, every shard's statistics
//     (Engine.Stats: keys, index and log bytes, log records, fsyncs, write
//     and space amplification, stale row rejects, read-only), the record
//     cache's (hits, misses, evictions, entries, bytes per tier), and the
//     Go runtime's. Needs a token (read-only is enough) when tokens are set.
//   - Anything else: 404 {"ok":false,"code":"not_found","message":"unknown
//     server route"}.
//
// # shard_id
//
// shard_id is accepted (it must be an unsigned integer, as in the
// original) and ignored: the engine routes each command by its key (XXH64
// of its {hash tag}, temporalstore.ShardOf) to a shard this process owns.
// A client of the original computes shard_id with its own routing (CRC64
// over its shard map) or sends the standalone datanode's 1; neither names
// one of this engine's shards, and rejecting a mismatch would turn every
// such client away for a choice the server makes anyway. It is optional.
//
// # Encodings
//
// Request byte fields ("payloads": value, member, args, rows' args, the
// value of each hash_multi_set entry) accept a base64 string or an array of
// numbers 0..255 in JSON, as the original; in MessagePack bin, an array of
// numbers, or a base64 str (so a body converted from JSON means the same).
// Names (key, keys, field, fields, dest, an entry's field, lex bounds) are
// strings, taken as their UTF-8 bytes, or arrays of numbers for bytes that
// are not UTF-8; MessagePack also takes bin.
//
// Response bytes are arrays of numbers in JSON, as the original sends
// them, and bin in MessagePack; a hash entry's field is a string (an array
// of numbers if it is not UTF-8). A body with Content-Type
// application/msgpack (or application/x-msgpack) is MessagePack, and so is
// its reply; anything else is JSON. Unknown fields are ignored. Scores and
// floats are numbers, or the strings "+inf"/"-inf".
//
// # The original's kinds
//
// common_delete, common_expire, common_ttl, common_exists, string_set,
// string_set_ex, string_set_conditional, string_get, string_delete,
// hash_set, hash_get, hash_multi_get, hash_multi_set, hash_incr_by,
// hash_get_all, hash_len, hash_delete, set_add, set_members, set_remove,
// with the original's fields and response kinds (empty, bytes {value},
// integer {value}, members {members}, values {values}, hash_entries
// {entries}) and status codes: not_found for common_expire on a missing
// key, unmatched and out_of_range for hash_incr_by on a non-integer field
// and on overflow. string_set keeps the key's TTL, as the original's does;
// string_set_conditional without ttl_ms clears it. Where the original kept
// each model in its own map, this engine has one keyspace: a hash command
// on a string key answers wrong_type.
//
// The original's feature kinds are served with its fields: feature_append
// {key, points: [{timestamp_ms, value}]}, feature_append_with_policy
// (+ policy: upsert, insert_if_absent|first|nx,
// replace_existing|update|xx, block; integer 1 when anything changed),
// feature_query {key, start_ms, end_ms, count?} and
// feature_query_filtered (+ filters: [{field, op, value}]) answering
// feature_points {points: [{timestamp_ms, value}]}, feature_replace {key,
// start_ms, end_ms, points}, feature_delete {key}, feature_agg_query
// {key, start_ms, end_ms, aggregator, count?} answering aggregate
// {value}. A series is a key of its own type here, so a feature command
// on a string or hash key answers wrong_type.
//
// Sequences likewise: sequence_add {key, rows: [{timestamp_ms, gid,
// action_type, duration, author_id}]}, sequence_query {key, start_ms,
// end_ms, count (required), filters} answering sequence_rows {rows}, and
// sequence_batch_query {queries: [{key, start_ms, end_ms, count,
// filters}]} answering sequence_row_groups {groups: [[key, rows]]}.
//
// Control state likewise: control_state_increment and
// control_state_increment_with_options {key, timestamp_ms, amount,
// precision_ms?, ttl_ms?}, control_state_change_add (+ value),
// control_state_count, control_state_query (+ aggregator) and
// control_state_detail {key, start_ms, end_ms, count?} on the raw key;
// control_state_set, control_state_set_and_get[_with_options] (+ family,
// start_ms, end_ms, aggregator, uuid) and control_state_family_query on
// the family's key control_state:<family>:<key>; control_state_selection_set
// (or _fol_set) {key, value, occur_time_ms, ttl_ms, selection_type|fol_type}
// and control_state_selection_query (or _fol_query). The engine's cstake
// answers quota {applied, value, retry_after_ms}.
//
// control_state_manager {key, op_type? (2 query, 5 field list, 6 field
// count, 7 all data; else a summary), field_list [[ts, ""], ...],
// start_offset, end_offset (a timestamp range; both 0: all), is_distinct
// or is_cpc} and control_state_debug {key, start_ms, end_ms} answer
// hash_entries.
//
// The original's context_* kinds name a model this server does not have
// yet: they are understood, not run, and
// answered with code "unsupported" (HTTP 200, so a batch's other commands
// still run).
//
// # The engine's kinds
//
// Every temporalstore.Kind ("set", "get", "hset", "zadd", "lpush",
// "row_write", ... see temporalstore.Kinds) is served with these fields,
// which mirror temporalstore.Command (absent fields are zero):
//
//	key (name), value (payload), ttl_ms, keep_ttl, condition
//	("always"|"nx"|"xx", also "if_not_exists"|"if_exists"), return_old,
//	delta, float, start, end, cursor, count (present: HasCount), keys
//	(names), args (payloads), scores (floats), zadd {nx,xx,gt,lt,ch,incr},
//	range {by: "rank"|"score"|"lex", start, stop, min, max (a number, or
//	"(1.5", "-inf", "+inf"), lex_min, lex_max ("-", "+", "[a", "(a"), rev,
//	limit {offset, count}, with_scores}, dest (name), from_left, to_left,
//	before, rank, max_len, expire_at_ms, persist, event_time_ms, ts_field,
//	rows [{key, args, event_time_ms}], points [{timestamp_ms, value}],
//	policy, filters [{field, op, value}], aggregator, seq_rows
//	[{timestamp_ms, gid, action_type, duration, author_id}], queries
//	[{key, start_ms, end_ms, count, filters}], at, precision_ms, family,
//	request_id, select_last, limit, window_ms, aggregators, max_age_ms
//
// For example {"kind":"zadd","key":"board","args":["YWxpY2U="],
// "scores":[12.5]}. A response has the kind tag of its shape:
//
//	empty                          (the original's kinds only)
//	bytes {value: bytes|null}      get, hget, lindex, pops without count, ...
//	                               (set with return_old adds applied)
//	integer {value: n|null}        counts and lengths; null when absent
//	                               (zrank, zrevrank, lpos)
//	float {value: f|null}          zscore, zincrby, zadd with incr, hincrbyfloat
//	string {value}                 type
//	applied {applied}              set, mset, rename, lset, ltrim, row_write
//	members {members: [bytes]|null} smembers, hkeys, lrange, pops with count
//	values {values: [bytes|null]}  mget, hmget, zmscore
//	hash_entries {entries}         hgetall
//	scored_members {members, scores?} zrange, zpopmin, zpopmax
//	integers {integers}            smismember, lpos with count, row_write_batch
//	scan {cursor, keys|values}     scan, hscan, sscan, zscan
//	feature_points {points}        fquery, fqueryfiltered
//	aggregate {value}              fagg
//	aggregates {aggregates: [{name, int|float|top}]}  fagg with aggregators
//	sequence_rows {rows}           seqquery
//	sequence_row_groups {groups}   seqbatchquery
//
// Failed commands carry the engine error's text and a code:
// invalid_argument, unknown_kind, wrong_type, not_integer, not_float,
// overflow, too_large, cross_shard, no_such_key, out_of_range,
// table_not_found, readonly_shard, admission_rejected (table, tenant and
// shard limits), shard_not_loaded (engine closed), deadline_exceeded,
// canceled, internal.
//
// # Auth
//
// With tokens configured, /execute, /batch_execute and /metrics need
// "Authorization: Bearer <token>" (401 with code "unauthorized" without a
// valid one). Tokens are compared by their SHA-256 digests in constant
// time. A read-only token runs only read kinds (temporalstore.IsReadKind);
// a write kind, or a batch holding one, is refused whole with 403 and code
// "forbidden", so nothing of it runs.
//
// # Clients
//
// Request, BatchRequest and Command encode requests (FromEngine builds a
// Command from a temporalstore.Command); ExecuteResponse, BatchResponse
// and Response decode replies, and Response.Engine and Status.Err turn
// them back into the engine's Response and errors: package client uses
// them.
package httpapi
