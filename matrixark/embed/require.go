package embed

import (
	"context"
	"fmt"
	"strings"
)

// RequireModelFromEnv reports whether MATRIXARK_REQUIRE_MODEL_EMBEDDINGS asks
// for a real model: "1" or "true" (any case, surrounding space ignored).
// Anything else, including unset, means no.
func RequireModelFromEnv(getenv func(string) string) bool {
	return parseRequire(getenv(EnvRequireModel))
}

func parseRequire(v string) bool {
	v = strings.TrimSpace(v)
	return v == "1" || strings.EqualFold(v, "true")
}

// RequireModel wraps e so that vectors from the mock hash embedder are never
// returned through it: if e is the mock, every call fails; if e hands a call
// to a mock fallback (reported through InfoEmbedder), that call fails too.
// The error wraps ErrModelRequired. Without RequireModel a deployment that
// lost its model would quietly store meaningless vectors.
func RequireModel(e Embedder) Embedder {
	if r, ok := e.(*required); ok {
		return r
	}
	return &required{inner: e}
}

type required struct{ inner Embedder }

func (r *required) Info() Info { return r.inner.Info() }

func (r *required) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, _, err := r.EmbedInfo(ctx, texts)
	return v, err
}

func (r *required) EmbedInfo(ctx context.Context, texts []string) ([][]float32, Info, error) {
	if IsMock(r.inner) {
		info := r.inner.Info()
		return nil, info, fmt.Errorf("%w: embedder %q", ErrModelRequired, info.Model)
	}
	v, info, err := EmbedWithInfo(ctx, r.inner, texts)
	if err != nil {
		return nil, info, err
	}
	if info.Provider == ProviderMock {
		return nil, info, fmt.Errorf("%w: %q fell back to %q", ErrModelRequired, r.inner.Info().Model, info.Model)
	}
	return v, info, nil
}
