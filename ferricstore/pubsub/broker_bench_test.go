package pubsub

import (
	"fmt"
	"testing"
)

// BenchmarkPublish is one PUBLISH's routing: to no subscriber, to one, to
// a hundred by name, and to ten by pattern among ten patterns that do
// not match.
func BenchmarkPublish(b *testing.B) {
	cases := []struct {
		name              string
		subs, pats, other int
	}{
		{"none", 0, 0, 0},
		{"one", 1, 0, 0},
		{"hundred", 100, 0, 0},
		{"patterns", 0, 10, 10},
	}
	payload := []byte("hello")
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			br := NewBroker()
			var n int
			deliver := func(Message) bool { n++; return true }
			for range tc.subs {
				br.Subscribe(NewSubscriber(deliver), "news", false)
			}
			for range tc.pats {
				br.PSubscribe(NewSubscriber(deliver), "n*")
			}
			for i := range tc.other {
				br.PSubscribe(NewSubscriber(deliver), fmt.Sprintf("other%d*", i))
			}
			for b.Loop() {
				br.Publish("news", payload)
			}
			b.ReportMetric(float64(n)/float64(b.N), "deliveries/op")
		})
	}
}

// BenchmarkPublishParallel is PUBLISH from every processor at once, to
// one subscriber of each channel: what shared counters cost.
func BenchmarkPublishParallel(b *testing.B) {
	br := NewBroker()
	names := make([]string, 64)
	for i := range names {
		names[i] = fmt.Sprint("c", i)
		br.Subscribe(NewSubscriber(func(Message) bool { return true }), names[i], false)
	}
	payload := []byte("hello")
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			br.Publish(names[i%len(names)], payload)
			i++
		}
	})
}
