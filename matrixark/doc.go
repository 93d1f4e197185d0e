// Package matrixark runs context workflows for LLM applications: ingest,
// extract, index, retrieve (lexical and vector) and pack the result into a
// token budget.
//
// # What this module owns
//
//   - The workflow from ingest through extraction and indexing to retrieval
//     that combines lexical and vector search.
//   - Packing retrieved context to a token budget, with a durable audit of
//     every pack.
//   - Embeddings providers.
//   - A mem0-compatible /memories HTTP API (package httpapi) with per-tenant
//     tokens, and the Python client that talks to it.
//
// The planned entry points are New(Store, Options) and httpapi.Handler.
//
// # Dependencies
//
// matrixark defines the narrow Store interface it needs and depends on no
// other module for it. An adapter onto the TemporalStore engine lives either
// in examples or in a matrixark/tsstore package.
//
// The implementation has not landed yet; this package holds only its
// documentation.
package matrixark
