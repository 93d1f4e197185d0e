package object

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func sample() []*Object {
	h := New(KindHash, []byte("h"))
	h.Hash["f1"], h.Hash["f2"] = []byte("v1"), []byte{}
	h.Expiry = 1234
	s := New(KindSet, []byte("s"))
	s.Set["a"], s.Set["b"] = struct{}{}, struct{}{}
	z := New(KindZSet, []byte("z"))
	z.ZSet.Add("x", 1.5)
	z.ZSet.Add("y", -2)
	l := New(KindList, []byte("l"))
	l.List.PushBack([]byte("one"))
	l.List.PushBack([]byte("two"))
	f := New(KindSeries, []byte("f"))
	f.Series.Upsert(-5, []byte("old"))
	f.Series.Upsert(1_764_460_800_000, []byte("42"))
	c := New(KindControl, []byte("c"))
	c.Control.Add(60_000, 3)
	c.Control.AddChange(60_000, []byte("u"))
	c.Control.Select([]byte("first"), 5, false)
	c.Control.Record("id", 300_000, 0)
	return []*Object{h, s, z, l, f, c}
}

func TestImageRoundTrip(t *testing.T) {
	var b []byte
	objs := sample()
	for _, o := range objs {
		b = Append(b, o)
	}
	for _, want := range objs {
		got, rest, err := Decode(b)
		require.NoError(t, err)
		require.Equal(t, Append(nil, want), Append(nil, got))
		require.Equal(t, want.Kind, got.Kind)
		require.Equal(t, want.Expiry, got.Expiry)
		b = rest
	}
	require.Empty(t, b)
}

func TestImageRejects(t *testing.T) {
	good := Append(nil, sample()[0])
	for name, b := range map[string][]byte{
		"empty":     nil,
		"kind":      append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-1],
		"no elems":  {byte(KindSet), 0, 1, 'k', 0},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Decode(b)
			require.ErrorIs(t, err, ErrImage)
		})
	}
}

// FuzzDecode: any bytes either fail with ErrImage or decode to an object
// whose re-encoding decodes to the same encoding.
func FuzzDecode(f *testing.F) {
	for _, o := range sample() {
		f.Add(Append(nil, o))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, _, err := Decode(b)
		if err != nil {
			require.ErrorIs(t, err, ErrImage)
			return
		}
		enc := Append(nil, o)
		o2, rest, err := Decode(enc)
		require.NoError(t, err)
		require.Empty(t, rest)
		require.Equal(t, enc, Append(nil, o2))
	})
}
