// Package contextbench is `bench context`: matrixark's retrieve+pack
// against plain BM25 and newest-first replay, on a seeded synthetic
// conversation history whose evidence is known, at 10,000 and 100,000
// nodes by default (100,000 load into memstore in about 25 seconds), in
// one process, alternating.
//
// The corpus (Generate) is users with dated sessions of four to eight
// messages, one session a node, all in one tenant. Into some sessions a
// user drops a fact in passing ("my office is in Porto", "the Atlas
// deadline moved to Friday"); some facts are changed in a later session
// (the newer message is the evidence, the older a distractor), some are
// told over two sessions (both messages are evidence), other sessions
// hold another person's value of the same kind of fact (near misses) or
// everyday talk. Each query is a paraphrased question of one user, scoped
// to that user, listing the ids of the messages that answer it.
//
// Systems:
//
//   - ours: matrixark.Engine over memstore with no embedder (lexical plus
//     plan). Its time is Engine.Pack at a 1,200-token budget (o200k_base),
//     retrieval, packing and the durable audit write; Engine.Retrieve and
//     pack.Pack are also timed on their own, so the split is visible
//     (each system counts through its own count cache, emptied before each
//     run).
//   - ours_hash, ours_half (--embedded): the same with the hash embedder on
//     every session or on every other one. Hash vectors carry no meaning:
//     these arms show the cost and the ranking without a real model.
//   - ours_model (--embedded model --embed-url): the same with a real model
//     through an OpenAI-compatible server (scripts/embed-server serves
//     all-MiniLM-L6-v2; make bench-context-model starts one); its time
//     includes embedding each query, which is also timed alone after each
//     answer: the model's floor here, and the rest is the engine's.
//   - bm25: plan.Index over the user's messages, top 10, no plan rerank.
//   - replay: the user's messages newest first, packed to the same budget.
//
// Figures: latency p50/p95/p99 (min..max over repeats), recall@1/5/10 (the
// fraction of a query's evidence among the first k messages ranked, and
// the share of queries with any and all of it), MRR, tokens packed, and
// evidence retention (the evidence refs among the packed blocks).
//
// The last line is "context: retrieve_pack_p50_ms_<size>=... recall10=...
// recall10_vs_bm25_points=...", at the largest size run (<size> 100k for
// 100,000 nodes), with points = (ours − bm25)·100; the line before it
// gives every size's figures, p95 included. BENCH_QUICK=1 (or --quick)
// runs 1,000 nodes in seconds; --cpuprofile profiles the queries.
package contextbench
