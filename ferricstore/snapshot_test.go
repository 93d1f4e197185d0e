package ferricstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

func sampleState(t testing.TB) state {
	s := stream.New()
	for i := 1; i <= 5; i++ {
		require.NoError(t, s.Add(stream.ID{Ms: 1, Seq: uint64(i)}, [][]byte{[]byte("f"), []byte("v")}))
	}
	s.Delete([]stream.ID{{Ms: 1, Seq: 2}})
	g, err := s.CreateGroup("g", stream.ID{}, stream.UnknownEntriesRead)
	require.NoError(t, err)
	s.ReadNew(g, "alice", 3, false, 100)
	g.CreateConsumer("idle", 50)
	flows := flow.NewTable()
	_, err = flows.Apply(10, &flow.Create{ID: "f1", Type: "job", Payload: []byte("p")})
	require.NoError(t, err)
	_, err = flows.Apply(11, &flow.Claim{Type: "job", State: flow.Queued, Worker: "w", LeaseMs: 100, Limit: 1})
	require.NoError(t, err)
	return state{streams: map[string]*stream.Stream{"s": s, "empty": stream.New()}, flows: flows}
}

// FuzzDecodeSnapshot: any bytes decode or are refused, never a panic; a
// decoded state encodes back to the same bytes.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(encodeSnapshot(sampleState(f), 42))
	f.Add(encodeSnapshot(state{streams: map[string]*stream.Stream{}, flows: flow.NewTable()}, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, index, err := decodeSnapshot(data)
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		if data[4] == snapshotVersion {
			require.Equal(t, data, encodeSnapshot(st, index))
		}
	})
}

func TestSnapshotRoundTripAndDamage(t *testing.T) {
	data := encodeSnapshot(sampleState(t), 42)
	st, index, err := decodeSnapshot(data)
	require.NoError(t, err)
	require.Equal(t, uint64(42), index)
	require.Equal(t, data, encodeSnapshot(st, index))
	require.Equal(t, 4, st.streams["s"].Len())
	require.Equal(t, 3, st.streams["s"].Group("g").PendingCount())
	r, ok := st.flows.Get("f1")
	require.True(t, ok)
	require.Equal(t, flow.Running, r.State)
	for i := range data {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x40
		_, _, err := decodeSnapshot(bad)
		require.ErrorIs(t, err, ErrSnapshot, "byte %d flipped", i)
	}
}

// A growing state is snapshotted ever more rarely: a snapshot waits for
// the log to grow by the last one's size, so that snapshots cost at most
// what logging does (here about log2 of the entries over SnapshotEvery,
// against one every SnapshotEvery records).
func TestSnapshotsKeepPaceWithTheLog(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1000)
	dir := t.TempDir()
	st, err := Open(Options{Dir: dir, Shards: 1, Now: clk.now, SnapshotEvery: 10, Async: true})
	require.NoError(t, err)
	ctx := t.Context()
	value := strings.Repeat("v", 100)
	for i := range 1000 {
		_, _, err := st.Streams().Add(ctx, "s", AddArgs{Fields: kv("f", value)})
		require.NoError(t, err, i)
	}
	snaps := st.Stats()[0].Snapshots
	require.GreaterOrEqual(t, snaps, uint64(3))
	require.LessOrEqual(t, snaps, uint64(12), "one every 10 records would be 100")
	require.NoError(t, st.Close())
	st, err = Open(Options{Dir: dir, Shards: 1, Now: clk.now, SnapshotEvery: 10})
	require.NoError(t, err)
	defer st.Close()
	n, err := st.Streams().Len(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, 1000, n)
}
