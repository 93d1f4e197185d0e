package matrixark

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A user's vectors: the nearest first (ties by id), other widths and what
// keep refuses left out, removed ids gone.
func TestUserVecs(t *testing.T) {
	uv := &userVecs{}
	for id, v := range map[uint64][]float32{1: {1, 0}, 2: {0.9, 0.1}, 3: {0, 1}, 4: {1, 0, 0}, 5: {1, 0}} {
		uv.ids, uv.vecs = append(uv.ids, id), append(uv.vecs, v)
	}
	q := []float32{1, 0}
	require.Equal(t, []uint64{1, 5, 2}, uv.nearest(q, 3, nil))
	require.Equal(t, []uint64{5, 2, 3}, uv.nearest(q, 5, func(id uint64) bool { return id != 1 }))
	require.Empty(t, uv.nearest(q, 0, nil))
	require.Empty(t, uv.nearest(q, -1, nil))
	uv.remove(map[uint64]bool{1: true, 3: true})
	require.ElementsMatch(t, []uint64{2, 4, 5}, uv.ids)
	require.Equal(t, []uint64{5, 2}, uv.nearest(q, 5, nil))
}
