package valuelog

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

func TestOwned(t *testing.T) {
	var o Owned
	o.Add(3, 5)
	o.Add(7, 8)
	for _, tc := range []struct {
		index   uint64
		foreign bool
	}{{1, true}, {3, false}, {4, false}, {5, true}, {7, false}, {8, true}} {
		require.Equal(t, tc.foreign, o.Foreign(tc.index), "index %d", tc.index)
	}
	o.Add(9, 10)
	o.Reset()
	require.True(t, o.Foreign(9))
}

func TestStateRoundTrip(t *testing.T) {
	vl, err := wal.Open(t.TempDir(), wal.Options{})
	require.NoError(t, err)
	defer vl.Close()
	_, err = vl.AppendBatch(t.Context(), [][]byte{[]byte("a"), {}, []byte("ccc")})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteState(&b, "MAG1", []byte("img"), vl, 2, 3))
	s, err := DecodeState(b.Bytes(), "MAG1")
	require.NoError(t, err)
	require.Equal(t, "img", string(s.Image))
	require.Equal(t, uint64(2), s.First)
	require.Equal(t, uint64(3), s.Last())
	require.Equal(t, [][]byte{{}, []byte("ccc")}, s.Recs)
	_, err = DecodeState(b.Bytes(), "MAG2")
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = DecodeState(b.Bytes()[:b.Len()-1], "MAG1")
	require.ErrorIs(t, err, ErrCorrupt)

	other, err := wal.Open(t.TempDir(), wal.Options{})
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, Reset(other, s))
	require.Equal(t, uint64(2), other.FirstIndex())
	got, err := other.Read(3)
	require.NoError(t, err)
	require.Equal(t, "ccc", string(got))
}

// DecodeState takes any bytes without panicking.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte("MAG1"))
	f.Add(append([]byte("MAG1"), 1, 'i', 1, 1, 1, 'r'))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeState(b, "MAG1"); err == nil {
			require.Positive(t, s.First)
		}
	})
}
