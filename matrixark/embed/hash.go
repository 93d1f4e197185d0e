package embed

import (
	"context"
	"math"
	"strconv"

	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

// HashDim is the width of the hash embedder's vectors.
const HashDim = 16

// DefaultHashModel is the hash embedder's model name when none is given.
const DefaultHashModel = "mock-context-embedding"

// Hash is a deterministic embedder for tests and offline development. Its
// vectors are stable but carry no meaning: component i of text t is
// ((H64("{model}:{i}:{t}") mod 20001) − 10000)/10000, and the vector is then
// scaled to unit length. Its Info.Provider is ProviderMock.
type Hash struct {
	model string
	seed  uint64 // FNV state after "{model}:"
}

// NewHash returns a hash embedder; an empty model means DefaultHashModel.
func NewHash(model string) *Hash {
	if model == "" {
		model = DefaultHashModel
	}
	return &Hash{model: model, seed: h64.Add(h64.Offset, model+":")}
}

// Info reports ProviderMock, the model and HashDim.
func (h *Hash) Info() Info { return Info{Provider: ProviderMock, Model: h.model, Dim: HashDim} }

// Embed returns one HashDim-wide unit vector per text. It fails only when ctx
// is done.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, HashDim*len(texts))
	for i, t := range texts {
		out[i] = flat[i*HashDim : (i+1)*HashDim : (i+1)*HashDim]
		h.vector(t, out[i])
	}
	return out, nil
}

func (h *Hash) vector(text string, dst []float32) {
	var raw [HashDim]float64
	var sum float64
	var buf [4]byte
	for i := range raw {
		s := h64.AddBytes(h.seed, strconv.AppendInt(buf[:0], int64(i), 10))
		s = h64.Add(h64.Add(s, ":"), text)
		raw[i] = (float64(h64.NonZero(s)%20001) - 10000) / 10000
		sum += raw[i] * raw[i]
	}
	if sum == 0 {
		return // all components hit 10000 exactly; a zero vector is the honest answer
	}
	norm := math.Sqrt(sum)
	for i, x := range raw {
		dst[i] = float32(x / norm)
	}
}
