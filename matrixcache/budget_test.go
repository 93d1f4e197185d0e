package matrixcache

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/ssdtier"
)

// The SSD write budget is off by default; with a target the cache cannot
// meet, the budget narrows its share and the cache counts the refusals, and
// a refused rewrite never leaves the older SSD copy to be served.
func TestSSDWriteBudgetThroughTheCache(t *testing.T) {
	value := bytes.Repeat([]byte("x"), 4096)
	for _, tc := range []struct {
		name   string
		target int64
	}{{"off by default", 0}, {"one byte per second", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			opts, clk := testOptions(t, 2)
			opts.SSDWriteBytesPerSec = tc.target
			c := newTestCache(t, opts)
			ctx := t.Context()
			for i := range 800 {
				require.NoError(t, c.Put(ctx, skey(i), value, PutOptions{}))
				clk.Advance(2 * time.Millisecond)
			}
			st := c.Stats()
			if tc.target == 0 {
				require.Zero(t, st.SSDBudgetRefused)
				require.EqualValues(t, ssdtier.MaxBudgetShare, st.SSDStore.BudgetShare)
				require.Positive(t, st.SSDStore.BytesWritten)
				require.NotContains(t, healthIDs(HealthReport(st)), HealthWriteBudgetThrottling)
				return
			}
			require.Positive(t, st.SSDBudgetRefused)
			require.Less(t, st.SSDStore.BudgetShare, int64(ssdtier.MaxBudgetShare))
			require.Contains(t, healthIDs(HealthReport(st)), HealthWriteBudgetThrottling)
			// Rewrites the budget refuses leave no older copy: every key
			// reads back its newest value or nothing.
			newer := bytes.Repeat([]byte("y"), 4096)
			for i := range 800 {
				require.NoError(t, c.Put(ctx, skey(i), newer, PutOptions{}))
			}
			refusedRewrites := c.Stats().SSDBudgetRefused - st.SSDBudgetRefused
			require.Positive(t, refusedRewrites)
			for i := range 800 {
				v, _, ok, err := c.Get(ctx, skey(i))
				require.NoError(t, err)
				if ok {
					require.Equal(t, newer, v)
				}
			}
		})
	}
}
