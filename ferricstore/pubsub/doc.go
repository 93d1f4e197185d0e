// Package pubsub is Redis's publish/subscribe routing, without a server:
// a Broker holds channel, pattern and shard-channel subscriptions and
// delivers each publish to a Subscriber's callback, exact subscriptions
// first and then one delivery per matching pattern, as redis-server 7
// does; Match is the glob PSUBSCRIBE (and KEYS, SCAN MATCH) use, byte for
// byte.
//
//	b := pubsub.NewBroker()
//	s := pubsub.NewSubscriber(func(m pubsub.Message) bool { return queue(m) })
//	b.Subscribe(s, "news", false)
//	b.PSubscribe(s, "n*")
//	n := b.Publish("news", []byte("hi")) // 2: message, then pmessage
//	b.Drop(s)                            // the connection went away
//
// Delivery is at most once and in memory. The callback runs under the
// broker's read lock, so publishes to one channel reach each subscriber
// in order; it must queue, not block, and reports false once the
// subscriber takes no more, after which the broker skips it and counts
// it dropped. Package commands serves the broker over RESP; a slow
// subscriber's limits are its host's (temporalstore's
// resp.Options.PushLimits, CONFIG SET client-output-buffer-limit).
//
// Broker.Stats counts publishes, deliveries and dropped subscribers,
// times each publish's fan-out in a histogram (atomic counters: a
// publish takes no lock for them), and reports the channels, patterns
// and subscribers there are; package ferricprom exports them.
package pubsub
