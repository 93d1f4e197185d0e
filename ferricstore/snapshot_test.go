package ferricstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

func sampleState(t testing.TB) map[string]*stream.Stream {
	s := stream.New()
	for i := 1; i <= 5; i++ {
		require.NoError(t, s.Add(stream.ID{Ms: 1, Seq: uint64(i)}, [][]byte{[]byte("f"), []byte("v")}))
	}
	s.Delete([]stream.ID{{Ms: 1, Seq: 2}})
	g, err := s.CreateGroup("g", stream.ID{}, stream.UnknownEntriesRead)
	require.NoError(t, err)
	s.ReadNew(g, "alice", 3, false, 100)
	g.CreateConsumer("idle", 50)
	return map[string]*stream.Stream{"s": s, "empty": stream.New()}
}

// FuzzDecodeSnapshot: any bytes decode or are refused, never a panic; a
// decoded state encodes back to the same bytes.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(encodeSnapshot(sampleState(f), 42))
	f.Add(encodeSnapshot(map[string]*stream.Stream{}, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		streams, index, err := decodeSnapshot(data)
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		require.Equal(t, data, encodeSnapshot(streams, index))
	})
}

func TestSnapshotRoundTripAndDamage(t *testing.T) {
	data := encodeSnapshot(sampleState(t), 42)
	streams, index, err := decodeSnapshot(data)
	require.NoError(t, err)
	require.Equal(t, uint64(42), index)
	require.Equal(t, data, encodeSnapshot(streams, index))
	require.Equal(t, 4, streams["s"].Len())
	require.Equal(t, 3, streams["s"].Group("g").PendingCount())
	for i := range data {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x40
		_, _, err := decodeSnapshot(bad)
		require.ErrorIs(t, err, ErrSnapshot, "byte %d flipped", i)
	}
}
