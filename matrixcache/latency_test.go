package matrixcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLatencyPercentileIsTheUpperBoundOfTheRanksBucket(t *testing.T) {
	var h latencyHist
	require.Zero(t, h.snapshot().Percentile(50))
	for range 90 {
		h.record(5 * time.Microsecond)
	}
	for range 9 {
		h.record(500 * time.Microsecond)
	}
	h.record(40 * time.Millisecond)
	l := h.snapshot()
	require.EqualValues(t, 100, l.Samples)
	require.Equal(t, [5]int64{90, 0, 9, 0, 1}, l.Buckets)
	require.Equal(t, 10*time.Microsecond, l.Percentile(50))
	require.Equal(t, 10*time.Microsecond, l.Percentile(90))
	require.Equal(t, time.Millisecond, l.Percentile(95))
	require.Equal(t, time.Millisecond, l.Percentile(99))
	require.Equal(t, 40*time.Millisecond, l.Percentile(100))
	require.Equal(t, 40*time.Millisecond, l.Max)
	require.Equal(t, (90*5*time.Microsecond+9*500*time.Microsecond+40*time.Millisecond)/100, l.Mean())

	var slow latencyHist
	slow.record(11 * time.Millisecond)
	slow.max.Store(int64(time.Millisecond)) // a max below the bucket still reports past 10ms
	require.Equal(t, 10*time.Millisecond+time.Microsecond, slow.snapshot().Percentile(50))
}
