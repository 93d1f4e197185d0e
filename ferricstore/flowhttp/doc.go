// Package flowhttp serves ferricstore's durable flows (package flow holds
// their rules) over HTTP with JSON bodies: the FLOW.* verbs of package
// commands as routes, with the RESP replies' field names.
//
//	h := flowhttp.New(st.Flows(), flowhttp.Options{ReadWriteTokens: []string{"s3cret"}})
//	mux.Handle("/flows", h)
//	mux.Handle("/flows/", h)
//
// A worker's round trip:
//
//	POST /flows {"id": "mail-1", "type": "email", "payload": "hi"}       201 {record}
//	POST /flows/claim {"type": "email", "worker": "w1", "lease_ms": 30000, "block_ms": 5000}
//	                                                                     200 {"flows": [{record}]}
//	POST /flows/mail-1/complete {"lease_token": "w1:...", "fencing_token": 1, "result": "sent"}
//	                                                                     200 {record}
//
// # Routes
//
//   - POST /flows creates (id, type, state, payload, run_at_ms, priority,
//     partition_key, parent_flow_id, root_flow_id, correlation_id,
//     attributes {k: v}, kept sorted by key, max_active_ms (ms or
//     "infinity"), idempotent): 201 when the request made the flow, 200
//     when an idempotent create found it made already.
//   - POST /flows/batch {"op", "independent", "items": [...]}: items of one
//     op (create, complete, fail, retry, cancel, transition,
//     extend_lease, rewind), each that op's body with its id. Answers
//     {"items": [{"flow": record} or {"error": {...}}]}; an all-or-nothing
//     batch that fails changes nothing and answers the error with "index".
//   - POST /flows/claim {type, state (queued), worker, lease_ms, limit (1),
//     priority, partition_key, block_ms, reclaim_expired, only_expired}:
//     {"flows": [...]}. block_ms > 0 waits for a flow when none is due,
//     at most Options.MaxBlock; 0 does not wait.
//   - GET /flows/{id}; GET /flows/{id}/history?count=n&rev=true.
//   - POST /flows/{id}/complete, fail, retry, cancel, extend_lease,
//     transition or rewind, with the RESP options in snake case:
//     lease_token, fencing_token, result, error, reason, run_at_ms,
//     max_retries, exhausted_to, lease_ms, from, to, priority, payload.
//     Completing again under the lease that completed is a 200 no-op.
//   - PUT /flows/policies/{type}[?state=s] {max_retries, backoff, base_ms,
//     max_ms, jitter_pct, exhausted_to, mode, max_active_ms,
//     expected_generation}; GET the same path: the policy in force, the
//     generation of the type's (or state's) own, and its set_fields.
//   - PUT /flows/schedules/{name} {type, every_ms, start_at_ms, state,
//     payload, priority, partition_key, overlap, replace}; GET and DELETE
//     it; GET /flows/schedules lists the names.
//   - GET /flows/stats: the flows counted by state.
//
// IDs and names are path segments: escape them (url.PathEscape). The
// routes' own segments win over a flow's ID: GET /flows/stats and GET
// /flows/schedules are those routes, as are the paths under
// /flows/schedules/ and /flows/policies/, so the record or history of a
// flow of such an ID is read over RESP (FLOW.GET, FLOW.HISTORY).
//
// # Bodies
//
// A body is one JSON object; an unknown field, a wrong type or anything
// after the object is 400 and changes nothing. Bytes (payload, result,
// error, reason) are sent as a string (its UTF-8 bytes) or as
// name_base64; an answer carries name when the bytes are UTF-8 (null when
// unset) and name_base64 otherwise. Other text (IDs, states, attributes)
// is JSON text: bytes of another encoding, made over RESP, show as U+FFFD.
//
// # Errors
//
// An error is {"error": {"code", "message"}}: 400 invalid_argument,
// running_state or batch_crosses_shards; 401 unauthorized; 403 forbidden;
// 404 not_found or schedule_not_found; 405 method_not_allowed; 409
// exists, schedule_exists, idempotency_conflict, stale_lease, terminal,
// not_terminal, wrong_state or policy_generation; 413 body_too_large
// (Options.MaxBodyBytes); 503 closed or failed (the store's), logged.
//
// # Auth and concurrency
//
// With tokens configured every route needs "Authorization: Bearer
// <token>", compared by SHA-256 digest in constant time: GET takes a
// read-only or read-write token, the other methods a read-write one. The
// handler is safe for concurrent use and keeps no state but its options.
package flowhttp
