// Package embed turns text into vectors for matrixark and guards the vector
// space each tenant's vectors live in.
//
// # Embedders
//
// An Embedder returns one vector per text. Two ship here:
//
//   - OpenAI posts {"model","input":[...]} to an OpenAI-compatible
//     {BaseURL}/embeddings, with a bearer key read from a named environment
//     variable, a 30 s timeout per attempt, 2 retries on transport errors,
//     429 and 5xx, and an optional Fallback embedder. Replies are checked:
//     one vector per input, ordered by data[].index, one positive width,
//     finite values.
//   - Hash is a deterministic 16-dim embedder for tests and offline
//     development. Its vectors carry no meaning.
//
// A deployment usually builds its embedder from the environment, passing a
// getenv function so nothing here reads the process environment by itself:
//
//	e, err := embed.FromEnv(os.Getenv) // MATRIXARK_EMBED_BASE_URL, MATRIXARK_EMBEDDING_MODEL, ...
//	vecs, info, err := embed.EmbedWithInfo(ctx, e, []string{"checkout failed"})
//
// EmbedWithInfo reports which embedder really produced the vectors (the
// fallback's Info when the provider failed), so Spaces are checked against
// the true encoder.
//
// # Requiring a model
//
// With MATRIXARK_REQUIRE_MODEL_EMBEDDINGS=1 (or true) FromEnv wraps the
// embedder in RequireModel: any call that would return the hash embedder's
// vectors, directly or through a fallback, fails with ErrModelRequired
// ("model_required_but_provider_is_mock") instead of quietly downgrading.
//
// # Spaces
//
// A tenant's first accepted vectors pin its Space: width plus
// EncoderID = H64("embedding_model:"+model). Spaces.Check then declines
// vectors of another width (ErrEmbeddingWidth, reason "width") or of the
// same width from another encoder (ErrEmbeddingEncoder, reason "encoder"),
// and counts both for matrixark_embedding_declined_total:
//
//	spaces := embed.NewSpaces(embed.SpacesOptions{Pin: persistPin})
//	if _, err := spaces.Check(ctx, tenant, embed.SpaceOf(info)); err != nil {
//		// ingest: store without vectors and mark dirty; query: lexical only
//	}
//
// Pins read back from storage are installed with Spaces.Load, which is also
// how a tenant flips to a re-embedded generation.
//
// H64, the FNV-1a 64 hash with 0 mapped to 1, is exported for the rest of
// matrixark's keys.
package embed
