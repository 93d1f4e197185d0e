package wire

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// A reply written around its value, the value's bytes written by ValueTo,
// is the reply Result writes with the value in it, byte for byte, in both
// encodings and for every MessagePack header width.
func TestResultAround(t *testing.T) {
	w := FromEngine(ts.Command{Kind: ts.KindGet, Key: []byte("k")})
	cl, err := translate(&w, "", "", "")
	require.NoError(t, err)
	c := Call{cl}
	require.True(t, c.ValueReply())
	for _, mp := range []bool{true, false} {
		for _, n := range []int{0, 1, 255, 256, 65535, 65536, 1 << 20} {
			v := bytes.Repeat([]byte{0, 7, 255, 42}, n/4+1)[:n]
			r := ts.Response{Found: true, Value: v}
			want := NewEncoder(mp)
			want.Result(&c, &r, StatusOf(&c, &r, nil))

			e := NewEncoder(mp)
			before, after, ok := e.ResultAround(&c, StatusOf(&c, &r, nil))
			require.True(t, ok)
			var got bytes.Buffer
			got.Write(before)
			vw, end, err := e.ValueWriter(&got, int64(n))
			require.NoError(t, err)
			_, err = io.Copy(vw, bytes.NewReader(v)) // in 32 KiB writes
			require.NoError(t, err)
			require.NoError(t, end())
			m := int64(got.Len() - len(before))
			got.Write(after)
			require.Equal(t, want.Bytes(), got.Bytes(), "mp %v, %d bytes", mp, n)
			if l := e.ValueLen(int64(n)); mp {
				require.Equal(t, l, m)
			} else {
				require.Equal(t, int64(-1), l)
			}
		}
	}
	// A reply that is not a value alone is not split.
	w = FromEngine(ts.Command{Kind: ts.KindIncrBy, Key: []byte("k"), Delta: 1})
	cl, err = translate(&w, "", "", "")
	require.NoError(t, err)
	_, _, ok := NewEncoder(true).ResultAround(&Call{cl}, Status{OK: true, Code: CodeOK})
	require.False(t, ok)
}
