package keyindex

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An index rebuilt from its image finds every key, crowded tags included.
func TestImageRoundTrip(t *testing.T) {
	for _, crowd := range []bool{false, true} {
		x := New(0)
		model := map[uint64]Entry{}
		for id := range uint64(3000) {
			e := Entry{Addr: addrOf(id, id), Meta: uint32(id%5 + 1)}
			x.Put(hashOf(id, crowd), e, matchID(id))
			model[id] = e
		}
		for id := uint64(0); id < 3000; id += 3 {
			x.Delete(hashOf(id, crowd), matchID(id))
			delete(model, id)
		}
		y, err := DecodeImage(x.AppendImage(nil))
		require.NoError(t, err)
		checkInvariants(t, y, model, crowd)
	}
	y, err := DecodeImage(New(0).AppendImage(nil))
	require.NoError(t, err)
	require.Zero(t, y.Len())
}

// A clone keeps the state it was taken in while the index changes, and
// encodes to the same image the index had then, whether it was copied into
// a spare of the right size, a larger one, or one too small (it then
// allocates); AppendImage appends after what dst holds.
func TestCloneIsASnapshot(t *testing.T) {
	tests := []struct {
		name  string
		spare func(x *Index) Spare
	}{
		{"no spare", func(*Index) Spare { return Spare{} }},
		{"spare of its size", func(x *Index) Spare { return NewSpare(x.Slots()) }},
		{"larger spare", func(x *Index) Spare { return NewSpare(3 * x.Slots()) }},
		{"spare too small", func(x *Index) Spare { return NewSpare(x.Slots() / 2) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := New(0)
			model := map[uint64]Entry{}
			for id := range uint64(1000) {
				e := Entry{Addr: addrOf(id, id), Meta: 1}
				x.Put(hashOf(id, false), e, matchID(id))
				model[id] = e
			}
			img := x.AppendImage(nil)
			sp := tc.spare(x)
			c := x.CloneWith(sp)
			require.Equal(t, x.Slots(), c.Slots())
			if cap(sp.slots) >= x.Slots() {
				require.Same(t, &sp.slots[0], &c.slots[0], "copied into the spare")
			}
			for id := range uint64(500) {
				x.Delete(hashOf(id, false), matchID(id))
			}
			for id := uint64(1000); id < 3000; id++ { // grows x past the clone's table
				x.Put(hashOf(id, false), Entry{Addr: addrOf(id, id), Meta: 2}, matchID(id))
			}
			require.Equal(t, img, c.AppendImage(nil))
			require.Len(t, img, c.ImageSize())
			checkInvariants(t, c, model, false)
			require.Equal(t, append([]byte("prefix"), img...), c.AppendImage([]byte("prefix")))
		})
	}
	require.Equal(t, New(0).AppendImage(nil), New(0).Clone().AppendImage(nil))
}

func TestDecodeImageRefusesBadBytes(t *testing.T) {
	x := New(0)
	for id := range uint64(10) {
		x.Put(hashOf(id, false), Entry{Addr: id, Meta: 1}, matchID(id))
	}
	img := x.AppendImage(nil)
	for _, b := range [][]byte{nil, img[:len(img)-1], append(append([]byte{}, img...), 0), {0x05}} {
		_, err := DecodeImage(b)
		require.ErrorIs(t, err, ErrImage)
	}
	zeroMeta := append([]byte{}, img...)
	copy(zeroMeta[1+4:], []byte{0, 0, 0, 0})
	_, err := DecodeImage(zeroMeta)
	require.ErrorIs(t, err, ErrImage)
}

func FuzzDecodeImage(f *testing.F) {
	x := New(0)
	for id := range uint64(5) {
		x.Put(hashOf(id, true), Entry{Addr: id, Meta: 1}, matchID(id))
	}
	f.Add(x.AppendImage(nil))
	f.Add([]byte{0})
	f.Add([]byte{1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		y, err := DecodeImage(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to an image of the same entries.
		z, err := DecodeImage(y.AppendImage(nil))
		require.NoError(t, err)
		require.Equal(t, y.Len(), z.Len())
	})
}
