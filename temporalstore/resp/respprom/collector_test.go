package respprom_test

import (
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp/respprom"
)

// serve runs a RESP server over a fresh engine and returns it and a
// client of it.
func serve(t *testing.T) (*resp.Server, *redis.Client) {
	t.Helper()
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: t.TempDir(), MaintenanceInterval: temporalstore.Disabled})
	require.NoError(t, err)
	s, err := resp.New(resp.Options{Engine: e})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	c := redis.NewClient(&redis.Options{Addr: l.Addr().String(), PoolSize: 1})
	t.Cleanup(func() {
		c.Close()
		require.NoError(t, s.Close())
		require.ErrorIs(t, <-done, resp.ErrClosed)
		require.NoError(t, e.Close())
	})
	return s, c
}

// metric returns the metric of mfs named name whose command label is
// command (empty: the one without labels but server's).
func metric(t *testing.T, mfs []*dto.MetricFamily, name, command string) *dto.Metric {
	t.Helper()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "command" {
					got = l.GetValue()
				}
			}
			if got == command {
				return m
			}
		}
	}
	t.Fatalf("no %s{command=%q}", name, command)
	return nil
}

// The collector exports each command's calls as a histogram whose count,
// sum and buckets agree with the server's statistics, its errors by kind,
// and the connection totals; the metrics pass Prometheus's lint.
func TestCollectorExportsCommandStats(t *testing.T) {
	s, c := serve(t)
	ctx := t.Context()
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Set(ctx, "b", "2", 0).Err())
	require.ErrorContains(t, c.LPush(ctx, "a", "x").Err(), "WRONGTYPE")
	require.Error(t, c.Do(ctx, "get").Err())

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(respprom.NewCollector(s, respprom.Options{ConstLabels: prometheus.Labels{"server": "one"}})))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	require.Empty(t, problems)
	mfs, err := reg.Gather()
	require.NoError(t, err)

	h := metric(t, mfs, "temporalstore_resp_command_duration_seconds", "set").GetHistogram()
	require.Equal(t, uint64(2), h.GetSampleCount())
	require.InDelta(t, s.CommandStat("set").Total.Seconds(), h.GetSampleSum(), 1e-9)
	bs := h.GetBucket()
	require.Len(t, bs, len(resp.LatencyBounds()))
	for i := 1; i < len(bs); i++ {
		require.GreaterOrEqual(t, bs[i].GetCumulativeCount(), bs[i-1].GetCumulativeCount(), "cumulative")
		require.InDelta(t, resp.LatencyBounds()[i].Seconds(), bs[i].GetUpperBound(), 1e-12)
	}
	require.Equal(t, 1.0, metric(t, mfs, "temporalstore_resp_command_failed_total", "lpush").GetCounter().GetValue())
	require.Equal(t, 0.0, metric(t, mfs, "temporalstore_resp_command_failed_total", "set").GetCounter().GetValue())
	require.Equal(t, 1.0, metric(t, mfs, "temporalstore_resp_command_rejected_total", "get").GetCounter().GetValue())
	require.Equal(t, 1.0, metric(t, mfs, "temporalstore_resp_connected_clients", "").GetGauge().GetValue())
	st := s.Stats()
	require.Equal(t, float64(st.ConnectionsReceived), metric(t, mfs, "temporalstore_resp_connections_received_total", "").GetCounter().GetValue())
	require.Equal(t, float64(st.CommandsProcessed), metric(t, mfs, "temporalstore_resp_commands_processed_total", "").GetCounter().GetValue())
	require.Equal(t, float64(st.ErrorReplies), metric(t, mfs, "temporalstore_resp_error_replies_total", "").GetCounter().GetValue())
	for _, l := range metric(t, mfs, "temporalstore_resp_connected_clients", "").GetLabel() {
		require.Equal(t, "server", l.GetName())
		require.Equal(t, "one", l.GetValue())
	}
}
