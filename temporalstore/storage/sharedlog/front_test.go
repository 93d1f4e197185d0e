package sharedlog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The front only moves forward, whoever appends to it and in what order,
// and a torn record is passed over and cut.
func TestFrontMovesForwardOnly(t *testing.T) {
	ctx := t.Context()
	st, err := NewDirStore(t.TempDir())
	require.NoError(t, err)
	defer st.Close()
	l := &Log{store: st, prefix: "ns/t/0"}
	first, snap, _, err := l.readFront(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint64{1, 0}, [2]uint64{first, snap}, "no front yet: the first segment")

	require.NoError(t, l.advanceFront(ctx, 10, 9))
	require.NoError(t, l.advanceFront(ctx, 5, 4), "a deposed writer's older reclaim")
	first, snap, size, err := l.readFront(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint64{10, 9}, [2]uint64{first, snap})

	require.NoError(t, st.AppendAt(ctx, l.frontName(), size, []byte("torn!!!")))
	first, _, _, err = l.readFront(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(10), first)
	require.NoError(t, l.advanceFront(ctx, 12, 11))
	first, snap, size, err = l.readFront(ctx)
	require.NoError(t, err)
	require.Equal(t, [2]uint64{12, 11}, [2]uint64{first, snap})
	require.Zero(t, size%frontRecord, "the torn record was cut")
}
