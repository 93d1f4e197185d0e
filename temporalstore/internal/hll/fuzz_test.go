package hll

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Any string: the commands never panic; a string failing Check is refused
// by every one; a sparse value that counts converts to a dense one with
// the same count and registers, and survives an add.
func FuzzDecode(f *testing.F) {
	f.Add(New().Bytes())
	s := New()
	for _, e := range []string{"a", "b", "c", "d", "e"} {
		_, _ = s.Add([]byte(e))
	}
	f.Add(s.Bytes())
	d := New()
	require.NoError(f, d.ToDense())
	f.Add(d.Bytes())
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x40"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff\x7f\xf0"))
	f.Add([]byte("not an hll"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkErr := Check(b)
		_, _, addErr := PFAdd(b, true, [][]byte{[]byte("x"), []byte("y")})
		_, _, countErr := PFCount(b, true)
		regs, _, unionErr := Union([][]byte{b})
		_, mergeErr := PFMerge(b, true, new(RegisterSet), true)
		if checkErr != nil {
			for _, err := range []error{addErr, countErr, unionErr, mergeErr} {
				require.ErrorIs(t, err, ErrNotHLL)
			}
			return
		}
		s, err := Parse(b)
		require.NoError(t, err)
		n, err := s.Count()
		require.Equal(t, err == nil, unionErr == nil, "Count and Union agree on corruption")
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorIs(t, s.ToDense(), ErrCorrupt)
			return
		}
		require.Equal(t, n, regs.Count())
		require.NoError(t, s.ToDense())
		require.Len(t, s.Bytes(), DenseSize)
		dn, err := s.Count()
		require.NoError(t, err)
		require.Equal(t, n, dn)
		got := new(RegisterSet)
		require.NoError(t, s.Merge(got))
		require.Equal(t, regs, got)
	})
}

func TestSelfTest(t *testing.T) {
	require.NoError(t, SelfTest())
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", ""},
		{"\x7f\xff", "Z:16384"},
		{"\x40\x00\x00\x83\x7f", "Z:1 z:1 v:1,4 Z:16129"},
		{"\x40", "Z:1"},
	} {
		require.Equal(t, tc.want, Decode([]byte(tc.in)), "%q", tc.in)
	}
	d := New()
	require.NoError(t, d.ToDense())
	_, ok := d.Decode()
	require.False(t, ok)
}
