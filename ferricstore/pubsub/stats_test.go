package pubsub

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Stats count publishes, deliveries taken and subscribers dropped, and
// report the channels, patterns and subscribers there are, as
// subscriptions come and go.
func TestStats(t *testing.T) {
	b := NewBroker()
	ok := func(Message) bool { return true }
	var refusedCalls atomic.Int64
	refuser := NewSubscriber(func(Message) bool { refusedCalls.Add(1); return false })
	a, c, d := NewSubscriber(ok), NewSubscriber(ok), NewSubscriber(ok)
	b.Subscribe(a, "news", false)
	b.Subscribe(a, "sport", false)
	b.PSubscribe(a, "n*")
	b.Subscribe(c, "news", false)
	b.Subscribe(d, "{s}news", true)
	b.Subscribe(refuser, "news", false)
	type want struct {
		publishes, deliveries, dropped                 uint64
		channels, shardChannels, patterns, subscribers int
	}
	check := func(w want) {
		t.Helper()
		st := b.Stats()
		require.Equal(t, w, want{st.Publishes, st.Deliveries, st.DroppedSubscribers, st.Channels, st.ShardChannels, st.Patterns, st.Subscribers})
	}
	check(want{channels: 2, shardChannels: 1, patterns: 1, subscribers: 4})
	steps := []struct {
		name string
		do   func()
		want want
	}{
		// a twice (name and pattern), c, and the refuser, which counts as a
		// receiver (as Redis counts them) but took nothing.
		{"publish", func() { require.Equal(t, 4, b.Publish("news", []byte("x"))) },
			want{publishes: 1, deliveries: 3, dropped: 1, channels: 2, shardChannels: 1, patterns: 1, subscribers: 4}},
		// The refuser is not called again, nor counted again.
		{"again", func() { require.Equal(t, 4, b.Publish("news", []byte("y"))) },
			want{publishes: 2, deliveries: 6, dropped: 1, channels: 2, shardChannels: 1, patterns: 1, subscribers: 4}},
		{"no one", func() { require.Zero(t, b.Publish("other", []byte("z"))) },
			want{publishes: 3, deliveries: 6, dropped: 1, channels: 2, shardChannels: 1, patterns: 1, subscribers: 4}},
		{"shard", func() { require.Equal(t, 1, b.SPublish("{s}news", []byte("s"))) },
			want{publishes: 4, deliveries: 7, dropped: 1, channels: 2, shardChannels: 1, patterns: 1, subscribers: 4}},
		{"drop refuser", func() { b.Drop(refuser) },
			want{publishes: 4, deliveries: 7, dropped: 1, channels: 2, shardChannels: 1, patterns: 1, subscribers: 3}},
		{"unsubscribe a's last but one", func() { b.Unsubscribe(a, "sport", false); b.PUnsubscribe(a, "n*") },
			want{publishes: 4, deliveries: 7, dropped: 1, channels: 1, shardChannels: 1, patterns: 0, subscribers: 3}},
		{"unsubscribe a's last", func() { b.Unsubscribe(a, "news", false) },
			want{publishes: 4, deliveries: 7, dropped: 1, channels: 1, shardChannels: 1, patterns: 0, subscribers: 2}},
		{"drop the rest", func() { b.Drop(c); b.Drop(d); b.Drop(d) },
			want{publishes: 4, deliveries: 7, dropped: 1, channels: 0, shardChannels: 0, patterns: 0, subscribers: 0}},
	}
	for _, s := range steps {
		s.do()
		check(s.want)
	}
	require.Equal(t, int64(1), refusedCalls.Load())
}

// One publish in fanOutSample is timed into the fan-out histogram, from
// every publisher at once; the counters add up.
func TestFanOutHistogram(t *testing.T) {
	b := NewBroker()
	for range 10 {
		b.Subscribe(NewSubscriber(func(Message) bool { return true }), "ch", false)
	}
	const publishers, each = 4, 400
	var wg sync.WaitGroup
	for range publishers {
		wg.Go(func() {
			for range each {
				b.Publish("ch", []byte("m"))
				_ = b.Stats()
			}
		})
	}
	wg.Wait()
	st := b.Stats()
	require.Equal(t, uint64(publishers*each), st.Publishes)
	require.Equal(t, uint64(10*publishers*each), st.Deliveries)
	h := st.FanOut
	require.Len(t, h.Counts, len(h.Bounds)+1)
	require.Equal(t, fanOutBounds[:], h.Bounds)
	// Each stripe times every fanOutSample-th of its publishes.
	total := uint64(publishers * each)
	require.LessOrEqual(t, h.Count(), total/fanOutSample)
	require.GreaterOrEqual(t, h.Count(), (total-counterStripes*(fanOutSample-1))/fanOutSample)
	require.Positive(t, h.Sum)
	require.Less(t, h.Sum, time.Duration(h.Count())*time.Second)
	// The bounds handed out are a copy.
	h.Bounds[0] = time.Hour
	require.Equal(t, time.Microsecond, b.Stats().FanOut.Bounds[0])
}
