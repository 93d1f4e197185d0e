package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

func TestH64(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"foobar", 0x85944171f73967e8}, // spec golden
		{"", 0xcbf29ce484222325},       // empty input is the offset basis
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, H64(tt.in), "H64(%q)", tt.in)
	}
	// Cross-check against the standard library's FNV-1a on varied input.
	for _, s := range []string{"a", "checkout", "embedding_model:all-MiniLM-L6-v2", "ünïcode ✓", "\x00\xff"} {
		f := fnv.New64a()
		_, _ = f.Write([]byte(s))
		require.Equal(t, f.Sum64(), H64(s), "H64(%q)", s)
	}
}

func TestNonZero(t *testing.T) {
	require.Equal(t, uint64(1), h64.NonZero(0))
	require.Equal(t, uint64(7), h64.NonZero(7))
}

func TestHashGolden(t *testing.T) {
	h := NewHash("")
	require.Equal(t, Info{Provider: ProviderMock, Model: "mock-context-embedding", Dim: 16}, h.Info())
	vecs, err := h.Embed(context.Background(), []string{"checkout"})
	require.NoError(t, err)
	require.Len(t, vecs, 1)
	require.Len(t, vecs[0], 16)
	want := []float64{0.254070, 0.258463, 0.202749, -0.125874}
	for i, w := range want {
		require.InDelta(t, w, float64(vecs[0][i]), 5e-7, "component %d", i)
	}
}

// The incremental hashing must equal hashing the formatted "{model}:{i}:{text}".
func TestHashFollowsFormula(t *testing.T) {
	for _, model := range []string{"mock-context-embedding", "m", ""} {
		for _, text := range []string{"checkout", "", "refund: order #1234 ✓", "a:b:c"} {
			h := NewHash(model)
			vecs, err := h.Embed(context.Background(), []string{text})
			require.NoError(t, err)
			name := h.Info().Model
			raw := make([]float64, HashDim)
			var sum float64
			for i := range raw {
				raw[i] = (float64(H64(fmt.Sprintf("%s:%d:%s", name, i, text))%20001) - 10000) / 10000
				sum += raw[i] * raw[i]
			}
			var norm float64
			for i := range raw {
				want := raw[i] / math.Sqrt(sum)
				require.InDelta(t, want, float64(vecs[0][i]), 1e-7, "model %q text %q component %d", name, text, i)
				norm += float64(vecs[0][i]) * float64(vecs[0][i])
			}
			require.InDelta(t, 1, norm, 1e-6)
		}
	}
}

func TestHashBatchAndModels(t *testing.T) {
	ctx := context.Background()
	a, err := NewHash("a").Embed(ctx, []string{"x", "y", "x"})
	require.NoError(t, err)
	require.Len(t, a, 3)
	require.Equal(t, a[0], a[2], "same text, same vector")
	require.NotEqual(t, a[0], a[1])
	b, err := NewHash("b").Embed(ctx, []string{"x"})
	require.NoError(t, err)
	require.NotEqual(t, a[0], b[0], "the model name seeds the hash")

	empty, err := NewHash("").Embed(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, empty)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = NewHash("").Embed(cctx, []string{"x"})
	require.ErrorIs(t, err, context.Canceled)
}

func TestCheckVectors(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name string
		vecs [][]float32
		n    int
		ok   bool
	}{
		{"ok", [][]float32{{1, 2}, {3, 4}}, 2, true},
		{"count", [][]float32{{1, 2}}, 2, false},
		{"dim0", [][]float32{{}}, 1, false},
		{"mixed", [][]float32{{1, 2}, {3}}, 2, false},
		{"nan", [][]float32{{1, nan}}, 1, false},
		{"inf", [][]float32{{float32(math.Inf(-1))}}, 1, false},
		{"too wide", [][]float32{make([]float32, MaxDim+1)}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkVectors(tt.vecs, tt.n)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrBadResponse)
			}
		})
	}
}

func BenchmarkHashEmbed(b *testing.B) {
	h := NewHash("")
	texts := []string{"checkout failed after the payment provider timed out", "refund issued", "incident 42 resolved"}
	ctx := context.Background()
	for b.Loop() {
		if _, err := h.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(texts)), "texts/op")
}
