// Package pubsub is Redis's publish/subscribe routing, without a server:
// a Broker holds channel, pattern and shard-channel subscriptions and
// delivers each publish to a Subscriber's callback, exact subscriptions
// first and then one delivery per matching pattern, as redis-server 7
// does; Match is the glob PSUBSCRIBE (and KEYS, SCAN MATCH) use, byte for
// byte.
//
//	b := pubsub.NewBroker()
//	s := pubsub.NewSubscriber(func(m pubsub.Message) { queue(m) })
//	b.Subscribe(s, "news", false)
//	b.PSubscribe(s, "n*")
//	n := b.Publish("news", []byte("hi")) // 2: message, then pmessage
//	b.Drop(s)                            // the connection went away
//
// Delivery is at most once and in memory. The callback runs under the
// broker's read lock, so publishes to one channel reach each subscriber
// in order; it must queue, not block. Package commands serves the broker
// over RESP; a slow subscriber's limits are its host's (temporalstore's
// resp.Options.PushLimits).
package pubsub
