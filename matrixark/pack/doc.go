// Package pack fits ranked context blocks into a prompt's token budget and
// records what went in and what was held back.
//
// Retrieval yields Blocks. Order puts them in the final order (query score
// descending, then L0 < L1 < L2, then newest, then URI) and Dedup collapses
// blocks that carry the same provenance within a node, keeping the first
// slot and the most detailed tier:
//
//	pack.Order(blocks, plan.New(query).Score) // any func(text string) uint32
//	blocks = pack.Dedup(blocks)
//
// Pack then charges the prompt first and walks the blocks greedily: a block
// that fits is selected, one that does not is held back and the walk goes
// on, so a small block ranked lower can still land. The rendered prompt is
//
//	{prompt}
//
//	<context>
//	[L0] tsctx://tenant/t/node/7/l0 doc-7
//	Checkout: the payment provider changed.
//	</context>
//
// and never counts more than the budget (unless the prompt alone does):
//
//	res := pack.Pack(prompt, blocks, pack.Options{MaxPromptTokens: 1200})
//	send(res.Rendered)
//	for _, b := range res.Blocked {
//		log(b.Rank, b.Reason) // "budget_exceeded:L2:tsctx://…" or "render_overflow"
//	}
//
// Pack prices every block, selected or not, because the audit records what
// each one would have cost. With o200k_base that is about 1.5 µs a token:
// some 24 ms for 200 blocks of 80 tokens on one core.
//
// Options.Conformance reproduces the arithmetic of the system this one is
// compatible with, where a block costs Count(text) and the header line and
// wrapper are free; pair it with tokens.Words{} (its default there) to
// reproduce the original's numbers.
//
// NewAudit turns a Result into an Audit, the record the caller stores
// durably before handing the prompt out. It keeps hashes of the query, the
// prompt and the rendered pack rather than their text, and at most
// MaxAuditRefs references per list, counting the rest:
//
//	a := pack.NewAudit(pack.AuditMeta{AuditID: id, Tenant: t, Query: q}, res)
//	data, _ := json.Marshal(a)
//	back, err := pack.DecodeAudit(data) // ErrInvalidAudit on bad bytes
//
// Everything here is pure computation over its arguments; the only shared
// state is the tokenizer cache of package tokens.
package pack
