// Package memory is a mem0-compatible memory API over a matrixark Engine:
// add, get, get_all, search, update, delete, delete_all, history and reset,
// per tenant, with mem0's item and history shapes.
//
//	mems := memory.New(engine, store, memory.Options{})
//	res, err := mems.Add(ctx, "acme", memory.AddRequest{
//		Messages: []memory.Message{{Role: "user", Content: "I moved to Lisbon in March."}},
//		Scope:    memory.Scope{UserID: "alice"},
//		Infer:    true, // drop texts already remembered in this scope
//	})
//	hits, err := mems.Search(ctx, "acme", memory.SearchRequest{
//		Query:  "when did alice move to Lisbon",
//		Filter: memory.Filter{Scope: memory.Scope{UserID: "alice"}, Limit: 5},
//	})
//	for _, it := range hits {
//		fmt.Println(*it.Score, it.Memory) // best first; a score is in [0, 1]
//	}
//
// # Model
//
// Each memory is one message, kept verbatim (no LLM is called): it is
// ingested into the Engine as one L2 raw_message whose source_ref is
// "mem:{uuid}", in its scope (user_id → user, run_id → session, agent_id →
// agent), so it is retrievable and packable like any other context. Its
// item record lives under mem:id:{tenant}:{uuid}, its history rows under
// mem:hist:{tenant}:{uuid}:{ms}{seq} and its dedup entry under
// mem:md5:{tenant}:{scope}{md5}{uuid}; all are written Durable. Every key
// starts with the tenant, so no tenant sees another's memories. Updating,
// deleting or resetting forgets the old text in the Engine
// (Engine.Forget), so a context pack holds only current memories.
//
// Add skips system messages and blank texts. With Infer, a text whose md5
// is already remembered in the same scope, or repeated in the batch, is
// dropped silently. Update re-ingests the new text and keeps created_at;
// Delete removes the item and keeps its history. Deleted and expired
// memories are never returned by GetAll or Search.
//
// # Search scores
//
// The Engine picks the candidates (BM25, and vectors when it embeds). A
// memory whose node the Engine scored by its vectors scores that cosine
// (the node score cosine × 10^6, reported as a fraction); any other is
// scored against its current text with the Engine's lexical node score:
// min(plan score, 1000) × 500 micros, reported as clamp(micros / 10^6, 0,
// 1). A lexical score therefore tops out at 0.5, below any strong semantic
// match, as it does inside the Engine. Results are ordered by score, then
// by the Engine's rank, and gated by Threshold (score ≥ Threshold).
//
// Writes of one tenant are serialised in-process (the md5 dedup reads
// before it writes); run one Memories per Store.
package memory
