// Package matrixark is context for LLM applications: it ingests documents,
// conversations and events per tenant, ranks what a query needs, and packs
// it into a token budget with a durable record of what went in and what
// was held back.
//
//	ark := matrixark.New(memstore.New(), matrixark.Options{})
//	ark.Ingest(ctx, "acme", matrixark.Input{SourceID: "runbook-7", Title: "Checkout outage", Body: text})
//	res, err := ark.Pack(ctx, "acme", matrixark.PackRequest{
//		Retrieve: matrixark.Query{Text: "why did checkout fail"},
//		Prompt:   "Why did checkout fail?", SessionID: "chat-9", MaxPromptTokens: 1200,
//	})
//	res.InjectedPrompt // the prompt, then <context>…</context>
//	res.Audit          // already durable: selected and blocked refs, tokens
//
// # Model
//
// A source becomes a node (its L0 line and L1 key facts, package extract)
// and L2 events: a document's chunks, a session's messages, an event's
// text. Entities the texts name are kept per node. Nodes are scoped to a
// user, a session and an agent; every key starts with its tenant, so no
// tenant reads another's.
//
// # Retrieval
//
// Candidates are the union of the vector top-C and BM25 over nodes and
// events (package plan). A query in a user's scope compares its vector
// with that user's node vectors exactly and walks only that user's
// postings; other queries search the tenant's int8 index (package
// vindex). A node scores by its best cosine to the query, or, without
// vectors, by its lexical plan score capped below a perfect cosine; the
// best are reranked by the plan score of their summaries, the top ones
// expanded into their newest matching events and their entities.
// Beyond the original, the best event matches themselves (Options.
// EventHits: BM25's, and an embedded query's nearest events of its user)
// are expanded too. The blocks are put in the final order (plan score, plus
// an event's cosine when the query is embedded, then L0 < L1 < L2, then
// newest) and deduplicated by source.
//
// # Packing
//
// Package pack spends the budget: the prompt is charged first, blocks
// greedily in rank order, one that does not fit is recorded as blocked and
// the walk goes on. The audit is written durably before Pack returns; if
// it cannot be, Pack fails with ErrAuditWrite and returns no prompt.
//
// # Storage
//
// The Engine needs only a Store: atomic batches, point reads, ordered
// scans. Its indexes are derived, rebuilt from the Store on a tenant's
// first use with reads that do not fill caches. Package memstore is a
// Store in memory.
package matrixark
