// Package extract turns what is ingested into what is indexed: a
// document's chunks, the L0 and L1 summaries of a node, and the entities a
// text names. It is pure text work: no storage, no embeddings, no clock.
//
// Chunks are at most 1,400 characters. A chunk that would cut mid-text
// cuts back to its last paragraph break or sentence end when that lies past
// its 700th character, and the next chunk starts 120 characters before the
// cut, so a fact on the border is whole in one of them:
//
//	for _, c := range extract.Chunks(body) { ... c.Text, c.Start ... }
//
// Summaries follow the tiers of a context node. L0 is one line of at most
// 18 words, "{title}: {lead sentence}"; L1 is "kind=…; title=…; key_facts=…"
// with the lead and up to seven other sentences, highest fact score first
// (digits, capitalised words and change markers such as "now", "moved",
// "instead" score), so an L1 always holds its L0's lead:
//
//	s := extract.Summarize("doc", "Checkout", body)
//	s.L0, s.L1, s.Sentences
//
// Entities are found by rules, not a model: capitalised spans (people,
// places, organisations), quantities with a unit or currency, dates, and
// "X is/was/now Y" states. Each carries a Key, FNV-1a of "{type}:{name}",
// so the same entity named twice in a node is one record.
package extract
