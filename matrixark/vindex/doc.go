// Package vindex is matrixark's vector candidate index: an int8-quantized
// scan that picks a bounded candidate set, followed by an exact float32
// cosine rerank of only those candidates. It is deliberately not a graph
// ANN: every vector is scored, so nothing is missed through graph
// connectivity, and the cost is a predictable linear int8 pass.
//
// Each vector is kept twice, scaled to unit length: in float32 for the
// rerank and as int8 with s = max|x|/127, q_i = round(x_i/s). The
// approximate score of a query against a vector is s_q·s_v·Σ q_i·v_i,
// accumulated in int32. A search for limit results keeps the top
// C = clamp(8·limit, 64, 2048) by that score (CandidateCount), reranks them
// by exact cosine and returns the best limit, ties by id ascending.
//
//	ix, err := vindex.New(384)
//	if err != nil { ... }
//	_ = ix.Add(nodeHash, vec)           // replaces an existing id
//	hits := ix.Search(queryVec, 10)     // []Hit{ID, Score=cosine}, best first
//	cands := ix.Candidates(queryVec, vindex.CandidateCount(10)) // int8 top-C only
//	ix.Remove(nodeHash)
//
// An Index has one width, fixed at New; vectors of another width are refused
// with ErrDim. It is safe for concurrent use. The index is derived state:
// rebuild it from stored vectors rather than persisting it.
package vindex
