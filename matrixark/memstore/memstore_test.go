package memstore

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
)

func put(k, v string) matrixark.Mutation {
	return matrixark.Mutation{Key: []byte(k), Value: []byte(v)}
}

func scan(t *testing.T, s *Store, r matrixark.Range, o matrixark.ReadOpts) []string {
	t.Helper()
	var out []string
	require.NoError(t, s.Scan(t.Context(), r, o, func(k, v []byte) bool {
		out = append(out, string(k)+"="+string(v))
		return true
	}))
	return out
}

func TestStore(t *testing.T) {
	ctx := t.Context()
	s := New()
	require.NoError(t, s.Apply(ctx, []matrixark.Mutation{put("b", "2"), put("a", "1"), put("c", "3"), put("ab", "x")}, matrixark.WriteOpts{Durable: true}))
	require.NoError(t, s.Apply(ctx, []matrixark.Mutation{put("a", "1'"), {Key: []byte("c"), Delete: true}, {Key: []byte("zz"), Delete: true}}, matrixark.WriteOpts{}))

	got, err := s.Get(ctx, [][]byte{[]byte("a"), []byte("c"), []byte("b")}, matrixark.ReadOpts{})
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("1'"), nil, []byte("2")}, got)

	require.Equal(t, []string{"a=1'", "ab=x", "b=2"}, scan(t, s, matrixark.Range{}, matrixark.ReadOpts{}))
	require.Equal(t, []string{"a=1'", "ab=x"}, scan(t, s, matrixark.PrefixRange([]byte("a")), matrixark.ReadOpts{}))
	require.Equal(t, []string{"b=2", "ab=x"}, scan(t, s, matrixark.Range{Start: []byte("ab")}, matrixark.ReadOpts{Reverse: true, NoFill: true}))

	var first []string
	require.NoError(t, s.Scan(ctx, matrixark.Range{}, matrixark.ReadOpts{}, func(k, _ []byte) bool {
		first = append(first, string(k))
		return false
	}))
	require.Equal(t, []string{"a"}, first, "fn returning false stops the scan")

	_, err = s.Get(ctx, make([][]byte, matrixark.MaxGetKeys+1), matrixark.ReadOpts{})
	require.ErrorIs(t, err, matrixark.ErrTooManyKeys)

	st := s.Stats()
	require.Equal(t, Stats{Applies: 2, Gets: 1, Scans: 4, Fills: 4, MaxGetKeys: 3}, st)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Apply(cancelled, nil, matrixark.WriteOpts{}), context.Canceled)
}

func TestPrefixRange(t *testing.T) {
	require.Equal(t, matrixark.Range{Start: []byte("ab"), End: []byte("ac")}, matrixark.PrefixRange([]byte("ab")))
	require.Equal(t, matrixark.Range{Start: []byte{1, 0xff}, End: []byte{2}}, matrixark.PrefixRange([]byte{1, 0xff}))
	require.Equal(t, matrixark.Range{Start: []byte{0xff}}, matrixark.PrefixRange([]byte{0xff}))
}

// Random puts and deletes, then scans of random ranges, both ways: the
// Store answers as a sorted copy of a plain map does.
func TestScanMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	key := func() string { return string([]byte{byte('a' + rng.IntN(4)), byte('a' + rng.IntN(4))})[:1+rng.IntN(2)] }
	s, model := New(), map[string]string{}
	for step := range 2000 {
		k := key()
		if rng.IntN(3) == 0 {
			require.NoError(t, s.Apply(t.Context(), []matrixark.Mutation{{Key: []byte(k), Delete: true}}, matrixark.WriteOpts{}))
			delete(model, k)
		} else {
			v := fmt.Sprint(step)
			require.NoError(t, s.Apply(t.Context(), []matrixark.Mutation{put(k, v)}, matrixark.WriteOpts{}))
			model[k] = v
		}
		r := matrixark.Range{Start: []byte(key())}
		if rng.IntN(3) > 0 {
			r.End = []byte(key())
		}
		var want []string
		for _, mk := range slices.Sorted(maps.Keys(model)) {
			if mk >= string(r.Start) && (r.End == nil || mk < string(r.End)) {
				want = append(want, mk+"="+model[mk])
			}
		}
		reverse := rng.IntN(2) == 0
		if reverse {
			slices.Reverse(want)
		}
		require.Equal(t, want, scan(t, s, r, matrixark.ReadOpts{Reverse: reverse}), "step %d, range %q..%q", step, r.Start, r.End)
	}
}
