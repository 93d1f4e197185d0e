package embed

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEncoderID(t *testing.T) {
	f := fnv.New64a()
	_, _ = f.Write([]byte("embedding_model:nomic-embed-text"))
	require.Equal(t, f.Sum64(), EncoderID("nomic-embed-text"))
	require.NotEqual(t, EncoderID("a"), EncoderID("b"))
	require.Equal(t, Space{Dim: 16, EncoderID: EncoderID("mock-context-embedding")}, SpaceOf(NewHash("").Info()))
}

func TestSpacesDecline(t *testing.T) {
	ctx := context.Background()
	model := Space{Dim: 768, EncoderID: EncoderID("nomic-embed-text"), Generation: 3}
	s := NewSpaces(SpacesOptions{})
	require.NoError(t, s.Load("t1", model))

	steps := []struct {
		name    string
		got     Space
		wantErr error
		delta   map[string]uint64
	}{
		{"16-dim hash into 768 bumps only width", SpaceOf(NewHash("").Info()), ErrEmbeddingWidth, map[string]uint64{ReasonWidth: 1, ReasonEncoder: 0}},
		{"other model at equal width bumps only encoder", Space{Dim: 768, EncoderID: EncoderID("other-model")}, ErrEmbeddingEncoder, map[string]uint64{ReasonWidth: 0, ReasonEncoder: 1}},
		{"other width and other model counts as width", Space{Dim: 1536, EncoderID: EncoderID("other-model")}, ErrEmbeddingWidth, map[string]uint64{ReasonWidth: 1, ReasonEncoder: 0}},
		{"the pinned model passes, whatever generation it names", Space{Dim: 768, EncoderID: model.EncoderID}, nil, map[string]uint64{ReasonWidth: 0, ReasonEncoder: 0}},
	}
	for _, st := range steps {
		before := s.Declined()
		got, err := s.Check(ctx, "t1", st.got)
		if st.wantErr == nil {
			require.NoError(t, err, st.name)
		} else {
			require.ErrorIs(t, err, st.wantErr, st.name)
		}
		require.Equal(t, model, got, "%s: returns the pinned space", st.name)
		after := s.Declined()
		for reason, d := range st.delta {
			require.Equal(t, d, after[reason]-before[reason], "%s: reason %s", st.name, reason)
		}
	}
}

func TestSpacesPinFirst(t *testing.T) {
	ctx := context.Background()
	var pins []Space
	fail := true
	s := NewSpaces(SpacesOptions{Pin: func(_ context.Context, tenant string, sp Space) error {
		require.Equal(t, "t1", tenant)
		if fail {
			return errors.New("disk full")
		}
		pins = append(pins, sp)
		return nil
	}})
	first := Space{Dim: 384, EncoderID: EncoderID("all-MiniLM-L6-v2")}

	_, err := s.Check(ctx, "t1", first)
	require.ErrorContains(t, err, "disk full")
	_, ok := s.Pinned("t1")
	require.False(t, ok, "a failed pin leaves the tenant unpinned")

	fail = false
	got, err := s.Check(ctx, "t1", first)
	require.NoError(t, err)
	require.Equal(t, first, got)
	_, err = s.Check(ctx, "t1", first)
	require.NoError(t, err)
	require.Equal(t, []Space{first}, pins, "pinned once")

	pinned, ok := s.Pinned("t1")
	require.True(t, ok)
	require.Equal(t, first, pinned)

	_, ok = s.Pinned("t2")
	require.False(t, ok, "tenants are separate")
	other := Space{Dim: 16, EncoderID: EncoderID("x")}
	_, err = s.Check(ctx, "t1", other)
	require.ErrorIs(t, err, ErrEmbeddingWidth)
	s2 := NewSpaces(SpacesOptions{})
	got, err = s2.Check(ctx, "t2", other)
	require.NoError(t, err)
	require.Equal(t, other, got)
}

func TestSpacesLoadFlipsGeneration(t *testing.T) {
	ctx := context.Background()
	s := NewSpaces(SpacesOptions{Pin: func(context.Context, string, Space) error {
		t.Fatal("Load must not call Pin")
		return nil
	}})
	g1 := Space{Dim: 384, EncoderID: EncoderID("a"), Generation: 1}
	g2 := Space{Dim: 768, EncoderID: EncoderID("b"), Generation: 2}
	require.NoError(t, s.Load("t", g1))
	_, err := s.Check(ctx, "t", Space{Dim: 768, EncoderID: EncoderID("b")})
	require.ErrorIs(t, err, ErrEmbeddingWidth)
	require.NoError(t, s.Load("t", g2))
	got, err := s.Check(ctx, "t", Space{Dim: 768, EncoderID: EncoderID("b")})
	require.NoError(t, err)
	require.Equal(t, g2, got)
}

func TestSpacesInvalid(t *testing.T) {
	s := NewSpaces(SpacesOptions{})
	for _, dim := range []int{0, -1, MaxDim + 1} {
		_, err := s.Check(context.Background(), "t", Space{Dim: dim})
		require.ErrorIs(t, err, ErrInvalidSpace, "dim %d", dim)
		require.ErrorIs(t, s.Load("t", Space{Dim: dim}), ErrInvalidSpace)
	}
	_, ok := s.Pinned("t")
	require.False(t, ok)
	require.Equal(t, map[string]uint64{ReasonWidth: 0, ReasonEncoder: 0}, s.Declined())
}

// Concurrent first vectors of two widths: exactly one pins, every other
// call of the losing width is declined and counted.
func TestSpacesConcurrentFirstPin(t *testing.T) {
	s := NewSpaces(SpacesOptions{})
	a := Space{Dim: 384, EncoderID: EncoderID("a")}
	b := Space{Dim: 768, EncoderID: EncoderID("b")}
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			sp := a
			if i%2 == 1 {
				sp = b
			}
			_, errs[i] = s.Check(context.Background(), "t", sp)
		})
	}
	wg.Wait()
	pinned, ok := s.Pinned("t")
	require.True(t, ok)
	declined := 0
	for i, err := range errs {
		mine := a
		if i%2 == 1 {
			mine = b
		}
		if mine == pinned {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, ErrEmbeddingWidth)
			declined++
		}
	}
	require.Equal(t, n/2, declined)
	require.Equal(t, uint64(declined), s.Declined()[ReasonWidth])
}
