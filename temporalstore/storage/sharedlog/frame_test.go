package sharedlog

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFrames(t *testing.T) {
	recs := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("z"), 300)}
	b := appendRecords(nil, 3, 17, recs)
	require.LessOrEqual(t, len(b), recordsSize(recs))
	b = appendFrame(b, kindFence, 4, 20, func(b []byte) []byte { return append(b, "m1"...) })
	b = appendFrame(b, kindSeal, 4, 20, nil)

	f, n, ok, err := nextFrame(b)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, kindRecords, f.kind)
	require.Equal(t, uint64(3), f.epoch)
	require.Equal(t, uint64(17), f.index)
	got, err := f.records()
	require.NoError(t, err)
	require.Equal(t, recs, got)

	f, m, ok, err := nextFrame(b[n:])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, kindFence, f.kind)
	require.Equal(t, "m1", string(f.payload))

	f, _, ok, err = nextFrame(b[n+m:])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, kindSeal, f.kind)

	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
		bad  bool
	}{
		{"empty", nil, false, false},
		{"half a header", b[:5], false, false},
		{"half a body", b[:n-1], false, false},
		{"zero length", make([]byte, 16), false, true},
		{"flipped byte", append([]byte{}, b[:n]...), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "flipped byte" {
				tc.b[n-1] ^= 1
			}
			_, _, ok, err := nextFrame(tc.b)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.bad, err != nil, "%v", err)
		})
	}
}

func TestFrontCodec(t *testing.T) {
	first, snap, err := decodeFront(encodeFront(42, 41))
	require.NoError(t, err)
	require.Equal(t, uint64(42), first)
	require.Equal(t, uint64(41), snap)
	b := encodeFront(42, 41)
	b[3] ^= 1
	_, _, err = decodeFront(b)
	require.ErrorIs(t, err, ErrCorrupt)
	_, _, err = decodeFront(encodeFront(0, 0))
	require.ErrorIs(t, err, ErrCorrupt)
}

// The decoders take whatever a store holds without panicking, and a frame
// they accept re-encodes to the same bytes.
func FuzzNextFrame(f *testing.F) {
	f.Add(appendRecords(nil, 1, 1, [][]byte{[]byte("r")}))
	f.Add(appendFrame(nil, kindFence, 2, 9, func(b []byte) []byte { return append(b, "m"...) }))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, ok, err := nextFrame(b)
		if err != nil || !ok {
			return
		}
		require.LessOrEqual(t, n, len(b))
		if fr.kind == kindRecords {
			if recs, err := fr.records(); err == nil {
				require.Equal(t, b[:n], appendRecords(nil, fr.epoch, fr.index, recs))
			}
		}
	})
}

func FuzzDecodeFront(f *testing.F) {
	f.Add(encodeFront(7, 6))
	f.Fuzz(func(t *testing.T, b []byte) {
		if first, snap, err := decodeFront(b); err == nil {
			require.Positive(t, first)
			require.Equal(t, b, encodeFront(first, snap))
		}
	})
}
