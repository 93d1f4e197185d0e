package engineprom

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

func TestCollectorCountsRoundsAndShards(t *testing.T) {
	ctx := t.Context()
	e, err := local.Open(ctx, temporalstore.Options{Dir: t.TempDir(), MaintenanceInterval: -1})
	require.NoError(t, err)
	defer e.Close()
	_, err = e.Execute(ctx, temporalstore.Command{Kind: temporalstore.KindSet, Key: []byte("k"), Value: []byte("v")})
	require.NoError(t, err)
	for range 2 {
		_, err = e.Maintain(ctx)
		require.NoError(t, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(e))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string][]float64{}
	stages := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			got[mf.GetName()] = append(got[mf.GetName()], v)
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" {
					stages[l.GetValue()] = true
				}
			}
		}
	}
	require.Equal(t, []float64{2}, got["temporalstore_maintenance_rounds_total"])
	require.Equal(t, []float64{0}, got["temporalstore_maintenance_round_failures_total"])
	require.Positive(t, got["temporalstore_maintenance_round_seconds_total"][0])
	require.Len(t, stages, len(temporalstore.Stages), "a series per stage")
	keys := 0.0
	for _, v := range got["temporalstore_shard_keys"] {
		keys += v
	}
	require.Equal(t, 1.0, keys)
	n, err := testutil.GatherAndCount(reg, "temporalstore_maintenance_stage_items_total")
	require.NoError(t, err)
	require.Equal(t, len(temporalstore.Stages), n)
}
