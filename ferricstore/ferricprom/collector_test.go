package ferricprom

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
	"github.com/temporalstore/temporalstore-go/ferricstore/pubsub"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

func TestCollector(t *testing.T) {
	st, err := ferricstore.Open(ferricstore.Options{Dir: t.TempDir(), Shards: 1})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	x := st.Streams()
	for range 3 {
		_, _, err := x.Add(ctx, "s", ferricstore.AddArgs{Fields: [][]byte{[]byte("f"), []byte("v")}})
		require.NoError(t, err)
	}
	require.NoError(t, x.CreateGroup(ctx, "s", "g", "0", false, stream.UnknownEntriesRead))
	_, err = x.ReadGroup(ctx, "s", "g", "c", ">", 2, false)
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(st))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferricstore_stream_entries Entries of the shard's streams.
# TYPE ferricstore_stream_entries gauge
ferricstore_stream_entries{shard="0"} 3
# HELP ferricstore_stream_pending_entries Entries in the pending lists of the shard's groups.
# TYPE ferricstore_stream_pending_entries gauge
ferricstore_stream_pending_entries{shard="0"} 2
# HELP ferricstore_stream_deliveries_total Entries XREADGROUP, XCLAIM and XAUTOCLAIM handed to consumers.
# TYPE ferricstore_stream_deliveries_total counter
ferricstore_stream_deliveries_total{shard="0"} 2
# HELP ferricstore_writes_total Writes the shard logged.
# TYPE ferricstore_writes_total counter
ferricstore_writes_total{shard="0"} 5
`), "ferricstore_stream_entries", "ferricstore_stream_pending_entries", "ferricstore_stream_deliveries_total", "ferricstore_writes_total"))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Equal(t, 28, n)
}

func TestFlowMetrics(t *testing.T) {
	st, err := ferricstore.Open(ferricstore.Options{Dir: t.TempDir(), Shards: 1})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	for i := range 3 {
		_, err := fl.Create(ctx, flow.Create{ID: fmt.Sprint("f", i), Type: "job"})
		require.NoError(t, err)
	}
	got, err := fl.Claim(ctx, flow.Claim{Type: "job", State: flow.Queued, Worker: "w", LeaseMs: 60_000, Limit: 2})
	require.NoError(t, err)
	_, err = fl.Complete(ctx, flow.Complete{ID: got[0].ID, LeaseToken: got[0].LeaseToken, Fencing: got[0].Fencing})
	require.NoError(t, err)
	_, err = fl.Retry(ctx, flow.Retry{ID: got[1].ID, LeaseToken: got[1].LeaseToken, Fencing: got[1].Fencing})
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(st))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferricstore_flows_claimed_total Due flows claimed by workers.
# TYPE ferricstore_flows_claimed_total counter
ferricstore_flows_claimed_total{shard="0"} 2
# HELP ferricstore_flows_completed_total Flows completed.
# TYPE ferricstore_flows_completed_total counter
ferricstore_flows_completed_total{shard="0"} 1
# HELP ferricstore_flows_created_total Flows created, schedules' included.
# TYPE ferricstore_flows_created_total counter
ferricstore_flows_created_total{shard="0"} 3
# HELP ferricstore_flows_retried_total Retries granted (the flow waits out its backoff).
# TYPE ferricstore_flows_retried_total counter
ferricstore_flows_retried_total{shard="0"} 1
# HELP ferricstore_flows_waiting Flows waiting in a state to be claimed (due or not).
# TYPE ferricstore_flows_waiting gauge
ferricstore_flows_waiting{shard="0"} 2
# HELP ferricstore_flows_due Waiting flows that are due now.
# TYPE ferricstore_flows_due gauge
ferricstore_flows_due{shard="0"} 1
`), "ferricstore_flows_claimed_total", "ferricstore_flows_completed_total", "ferricstore_flows_created_total",
		"ferricstore_flows_retried_total", "ferricstore_flows_waiting", "ferricstore_flows_due"))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "ferricstore_flow_due_to_claim_seconds" {
			require.Equal(t, uint64(2), mf.GetMetric()[0].GetHistogram().GetSampleCount())
			return
		}
	}
	t.Fatal("no due-to-claim histogram")
}

func TestPubSubCollector(t *testing.T) {
	b := pubsub.NewBroker()
	took := pubsub.NewSubscriber(func(pubsub.Message) bool { return true })
	refused := pubsub.NewSubscriber(func(pubsub.Message) bool { return false })
	b.Subscribe(took, "news", false)
	b.PSubscribe(took, "n*")
	b.Subscribe(refused, "news", false)
	b.Subscribe(took, "{s}x", true)
	for range 32 {
		b.Publish("news", []byte("m"))
	}
	b.SPublish("{s}x", []byte("m"))

	reg := prometheus.NewRegistry()
	reg.MustRegister(NewPubSubCollector(b))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferricstore_pubsub_publishes_total PUBLISH and SPUBLISH calls.
# TYPE ferricstore_pubsub_publishes_total counter
ferricstore_pubsub_publishes_total 33
# HELP ferricstore_pubsub_deliveries_total Messages handed to subscribers: one per subscriber and matching subscription, of those that took it.
# TYPE ferricstore_pubsub_deliveries_total counter
ferricstore_pubsub_deliveries_total 65
# HELP ferricstore_pubsub_dropped_subscribers_total Subscribers that refused a message, each counted once: their connection was gone, or was closed because its queue of pushed messages passed client-output-buffer-limit pubsub.
# TYPE ferricstore_pubsub_dropped_subscribers_total counter
ferricstore_pubsub_dropped_subscribers_total 1
# HELP ferricstore_pubsub_channels Channels with at least one subscriber.
# TYPE ferricstore_pubsub_channels gauge
ferricstore_pubsub_channels 1
# HELP ferricstore_pubsub_shard_channels Shard channels with at least one subscriber.
# TYPE ferricstore_pubsub_shard_channels gauge
ferricstore_pubsub_shard_channels 1
# HELP ferricstore_pubsub_patterns Distinct patterns subscribed.
# TYPE ferricstore_pubsub_patterns gauge
ferricstore_pubsub_patterns 1
# HELP ferricstore_pubsub_subscribers Connections with at least one subscription.
# TYPE ferricstore_pubsub_subscribers gauge
ferricstore_pubsub_subscribers 2
`), "ferricstore_pubsub_publishes_total", "ferricstore_pubsub_deliveries_total", "ferricstore_pubsub_dropped_subscribers_total",
		"ferricstore_pubsub_channels", "ferricstore_pubsub_shard_channels", "ferricstore_pubsub_patterns", "ferricstore_pubsub_subscribers"))
	// The fan-out histogram: the sampled publishes, in cumulative
	// buckets ending at +Inf.
	mfs, err := reg.Gather()
	require.NoError(t, err)
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "ferricstore_pubsub_publish_fanout_seconds" {
			continue
		}
		found = true
		h := mf.GetMetric()[0].GetHistogram()
		require.Equal(t, b.Stats().FanOut.Count(), h.GetSampleCount())
		require.LessOrEqual(t, h.GetSampleCount(), uint64(33/16))
		last := uint64(0)
		for _, bk := range h.GetBucket() {
			require.GreaterOrEqual(t, bk.GetCumulativeCount(), last)
			last = bk.GetCumulativeCount()
		}
		require.LessOrEqual(t, last, h.GetSampleCount())
	}
	require.True(t, found)
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Equal(t, 8, n)
}
