package pubsub

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// inbox collects a subscriber's deliveries.
type inbox struct {
	mu   sync.Mutex
	msgs []Message
}

func (in *inbox) deliver(m Message) bool {
	m.Encoded = nil // compared apart (TestEncodedShared)
	in.mu.Lock()
	in.msgs = append(in.msgs, m)
	in.mu.Unlock()
	return true
}

func (in *inbox) got() []Message {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Message(nil), in.msgs...)
}

func TestSubscribeCountsAndDelivery(t *testing.T) {
	b := NewBroker()
	in := &inbox{}
	s := NewSubscriber(in.deliver)
	n, ok := b.Subscribe(s, "news", false)
	require.True(t, ok)
	require.Equal(t, 1, n)
	n, _ = b.Subscribe(s, "news", false)
	require.Equal(t, 1, n, "subscribing again repeats the count")
	n, _ = b.PSubscribe(s, "n*")
	require.Equal(t, 2, n)
	n, _ = b.PSubscribe(s, "*")
	require.Equal(t, 3, n)
	n, _ = b.Subscribe(s, "news", true)
	require.Equal(t, 1, n, "shard channels are counted apart")

	// One publish: the exact delivery first, then one per pattern: 1 + k.
	require.Equal(t, 3, b.Publish("news", []byte("hi")))
	require.Equal(t, []Message{
		{Kind: KindMessage, Channel: "news", Payload: []byte("hi")},
		{Kind: KindPMessage, Pattern: "n*", Channel: "news", Payload: []byte("hi")},
		{Kind: KindPMessage, Pattern: "*", Channel: "news", Payload: []byte("hi")},
	}, in.got())
	// PUBLISH never reaches shard subscribers, SPUBLISH only them.
	require.Equal(t, 1, b.Publish("other", []byte("x")))
	require.Equal(t, 1, b.SPublish("news", []byte("s")))
	require.Equal(t, 0, b.SPublish("other", []byte("s")))
	last := in.got()[len(in.got())-1]
	require.Equal(t, Message{Kind: KindSMessage, Channel: "news", Payload: []byte("s")}, last)

	require.Equal(t, []string{"news"}, b.ActiveChannels("", false))
	require.Equal(t, []string{"news"}, b.ActiveChannels("n?ws", false))
	require.Empty(t, b.ActiveChannels("x*", false))
	require.Equal(t, []string{"news"}, b.ActiveChannels("", true))
	require.Equal(t, 1, b.NumSub("news", false))
	require.Equal(t, 0, b.NumSub("none", false))
	require.Equal(t, 1, b.NumSub("news", true))
	require.Equal(t, 2, b.NumPat())

	require.Equal(t, 2, b.Unsubscribe(s, "news", false))
	require.Equal(t, 2, b.Unsubscribe(s, "news", false), "unsubscribing what is not subscribed changes nothing")
	require.Equal(t, 1, b.PUnsubscribe(s, "n*"))
	require.Equal(t, 1, b.NumPat())
	b.Drop(s)
	require.Equal(t, 0, b.Count(s))
	require.Equal(t, 0, b.ShardCount(s))
	require.Equal(t, 0, b.NumPat())
	require.Empty(t, b.ActiveChannels("", false))
	require.Zero(t, b.Publish("news", []byte("gone")))
}

func TestTwoSubscribersOneChannelEach(t *testing.T) {
	b := NewBroker()
	a, c := &inbox{}, &inbox{}
	sa, sc := NewSubscriber(a.deliver), NewSubscriber(c.deliver)
	b.Subscribe(sa, "ch", false)
	b.Subscribe(sc, "ch", false)
	b.PSubscribe(sc, "c*")
	require.Equal(t, 2, b.NumSub("ch", false))
	require.Equal(t, 3, b.Publish("ch", []byte("m")))
	require.Len(t, a.got(), 1)
	require.Len(t, c.got(), 2)
	b.Drop(sa)
	require.Equal(t, 1, b.NumSub("ch", false))
}

func TestSubscriptionLimit(t *testing.T) {
	b := NewBroker()
	s := NewSubscriber(func(Message) bool { return true })
	for i := range MaxSubscriptions {
		_, ok := b.Subscribe(s, fmt.Sprint(i), false)
		require.True(t, ok)
	}
	n, ok := b.Subscribe(s, "one-more", false)
	require.False(t, ok)
	require.Equal(t, MaxSubscriptions, n)
	_, ok = b.PSubscribe(s, "p*")
	require.False(t, ok)
}

// Per channel, every subscriber sees each publisher's messages in the
// order they were published, while subscribers come and go.
func TestPublishOrderPerChannel(t *testing.T) {
	b := NewBroker()
	in := &inbox{}
	s := NewSubscriber(in.deliver)
	b.Subscribe(s, "ch", false)
	b.PSubscribe(s, "c?")
	const publishers, each = 8, 200
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range each {
				b.Publish("ch", fmt.Appendf(nil, "%d:%d", p, i))
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			other := NewSubscriber(func(Message) bool { return true })
			b.Subscribe(other, fmt.Sprint("x", i), false)
			b.PSubscribe(other, "c*")
			b.Drop(other)
		}
	})
	wg.Wait()
	next := map[string]int{}
	exact := 0
	for _, m := range in.got() {
		if m.Kind != KindMessage {
			continue
		}
		exact++
		var p, i int
		_, err := fmt.Sscanf(string(m.Payload), "%d:%d", &p, &i)
		require.NoError(t, err)
		key := fmt.Sprint(p)
		require.Equal(t, next[key], i, "publisher %d out of order", p)
		next[key]++
	}
	require.Equal(t, publishers*each, exact)
	require.Len(t, in.got(), 2*publishers*each)
}

// The deliveries of one publish to one channel share one Encoded, and
// carry the publisher PublishFrom names; the next publish gets another.
func TestEncodedShared(t *testing.T) {
	b := NewBroker()
	var encs []*Encoded
	var froms []any
	deliver := func(m Message) bool {
		form := m.Encoded.Form(1)
		if *form == nil {
			*form = []byte("encoded once")
		}
		encs, froms = append(encs, m.Encoded), append(froms, m.From)
		return true
	}
	for range 3 {
		b.Subscribe(NewSubscriber(deliver), "ch", false)
	}
	require.Equal(t, 3, b.PublishFrom("publisher", "ch", []byte("x")))
	require.Len(t, encs, 3)
	require.Same(t, encs[0], encs[1])
	require.Same(t, encs[0], encs[2])
	require.Equal(t, []byte("encoded once"), *encs[2].Form(1))
	require.Equal(t, []any{"publisher", "publisher", "publisher"}, froms)
	require.Equal(t, 3, b.Publish("ch", []byte("y")))
	require.NotSame(t, encs[0], encs[3])
	require.Nil(t, froms[3])
}
