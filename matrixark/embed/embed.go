package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// MaxDim is the widest vector accepted anywhere in matrixark.
const MaxDim = 4096

// Provider names reported in Info.Provider.
const (
	// ProviderMock names the hash embedder. Its vectors carry no meaning,
	// which is why RequireModel refuses it.
	ProviderMock = "mock"
	// ProviderOpenAI names the OpenAI-compatible HTTP provider.
	ProviderOpenAI = "openai"
)

// Errors returned by this package; compare with errors.Is.
var (
	// ErrModelRequired means a real model is required but the mock hash
	// embedder would have produced the vectors.
	ErrModelRequired = errors.New("embed: model_required_but_provider_is_mock")
	// ErrEmbeddingWidth means a vector's width differs from the tenant's Space.
	ErrEmbeddingWidth = errors.New("embed: embedding width differs from the tenant space")
	// ErrEmbeddingEncoder means a vector has the tenant Space's width but was
	// produced by another encoder.
	ErrEmbeddingEncoder = errors.New("embed: embedding encoder differs from the tenant space")
	// ErrBadResponse means a provider answered with vectors that cannot be used.
	ErrBadResponse = errors.New("embed: invalid provider response")
	// ErrProvider means a provider request failed (transport error or a
	// non-2xx status).
	ErrProvider = errors.New("embed: provider request failed")
	// ErrConfig means provider options are unusable.
	ErrConfig = errors.New("embed: invalid configuration")
	// ErrInvalidSpace means a Space has a width outside 1..MaxDim.
	ErrInvalidSpace = errors.New("embed: invalid space")
)

// Info describes an embedder. Dim is 0 while unknown (a remote provider
// learns it from its first reply unless configured).
type Info struct {
	Provider string
	Model    string
	Dim      int
}

// Embedder turns texts into vectors, one per text and in the same order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Info() Info
}

// InfoEmbedder is implemented by embedders that may hand a call to another
// embedder (a fallback). EmbedInfo reports the Info of whichever embedder
// actually produced the vectors, so a caller pins and checks Spaces against
// the real encoder rather than the configured one.
type InfoEmbedder interface {
	Embedder
	EmbedInfo(ctx context.Context, texts []string) ([][]float32, Info, error)
}

// EmbedWithInfo embeds texts with e and reports the Info of the embedder that
// produced the vectors: e's own unless e implements InfoEmbedder.
func EmbedWithInfo(ctx context.Context, e Embedder, texts []string) ([][]float32, Info, error) {
	if ie, ok := e.(InfoEmbedder); ok {
		return ie.EmbedInfo(ctx, texts)
	}
	v, err := e.Embed(ctx, texts)
	return v, e.Info(), err
}

// IsMock reports whether e is the hash embedder (by its Info.Provider).
func IsMock(e Embedder) bool { return e.Info().Provider == ProviderMock }

// checkVectors enforces the shape every embedder's output must have: one
// vector per input, one positive width no wider than MaxDim, finite values.
func checkVectors(vecs [][]float32, n int) error {
	if len(vecs) != n {
		return fmt.Errorf("%w: %d vectors for %d inputs", ErrBadResponse, len(vecs), n)
	}
	dim := -1
	for i, v := range vecs {
		switch {
		case len(v) == 0:
			return fmt.Errorf("%w: vector %d has dimension 0", ErrBadResponse, i)
		case len(v) > MaxDim:
			return fmt.Errorf("%w: vector %d has dimension %d > %d", ErrBadResponse, i, len(v), MaxDim)
		case dim >= 0 && len(v) != dim:
			return fmt.Errorf("%w: mixed dimensions %d and %d", ErrBadResponse, dim, len(v))
		}
		dim = len(v)
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%w: vector %d has a non-finite value", ErrBadResponse, i)
			}
		}
	}
	return nil
}
