// Package httpapi serves matrixark over HTTP: the context routes (ingest,
// retrieve, pack, audit) and mem0's OSS memory routes, per tenant.
//
//	h, err := httpapi.New(httpapi.Options{
//		Engine:   engine,
//		Memories: memory.New(engine, store, memory.Options{}),
//		Tokens: map[string]httpapi.TenantToken{
//			os.Getenv("ACME_KEY"):   {Tenant: "acme"},
//			os.Getenv("ACME_ADMIN"): {Tenant: "acme", Admin: true},
//		},
//	})
//	http.ListenAndServe("127.0.0.1:17102", h)
//
// # Auth
//
// A caller sends "Authorization: Bearer <token>" or "X-API-Key: <token>".
// The token picks the tenant; it is compared with every configured token
// in constant time. A missing or unknown token is 401; POST /reset needs
// an Admin token (403 otherwise) and resets the caller's tenant only.
// With no Tokens configured the handler serves Options.DefaultTenant
// ("default") to everyone, unauthenticated and as admin: for a
// single-user process on a trusted interface.
//
// Each tenant has a budget of Options.RequestsPerMinute requests (600,
// the original's limit): a token bucket that holds a minute's worth and
// refills continuously. A request past it is 429 with Retry-After and
// spends nothing.
//
// # Routes
//
//	POST   /context/ingest     matrixark.Input (kind by name) → IngestResult
//	POST   /context/retrieve   matrixark.Query → {"blocks": [...]}
//	POST   /context/pack       {retrieve, prompt, session_id, query_id, max_prompt_tokens}
//	POST   /context/inject       → {injected_prompt, selected_blocks, blocked_blocks, audit}
//	GET    /context/audit      ?session_id&start_ms&end_ms&limit → {"audits": [...]}
//	                           ?audit_id → one audit, 404 when absent
//	POST   /memories           mem0 add → {"results": [{id, memory, event, actor_id, role}]}
//	GET    /memories           ?user_id&agent_id&run_id[&top_k|limit] → {"results": [item]}
//	GET    /memories/{id}      item, or null
//	POST   /search             {query, filters, top_k|limit, threshold, ids} → {"results": [item+score]}
//	PUT    /memories/{id}      {text|data, metadata, expiration_date}
//	GET    /memories/{id}/history  [row], oldest first
//	DELETE /memories/{id}      404 when there is none
//	DELETE /memories           ?user_id&agent_id&run_id (one at least)
//	POST   /reset              admin
//
// # Errors
//
// Every error is {"detail": "…"}, with mem0's messages where mem0 has one
// ("At least one identifier (user_id, agent_id, run_id) is required.").
// A request that breaks a rule (matrixark.ErrInvalid) is 400 with the
// reason, a missing record 404, a body over Options.MaxBodyBytes 413, a
// wrong method 405; anything else is 500 with a generic detail, its cause
// logged. Unknown JSON fields are ignored; unreadable JSON is 400.
package httpapi
