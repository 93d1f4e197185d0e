package commands

import (
	"context"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// Notifier is what a Conn implements to publish keyspace notifications
// (Redis's notify-keyspace-events): the stream verbs publish their
// events through it after each change, as Redis's do.
type Notifier interface {
	// Notifying reports whether any notification is on, so that a call
	// does nothing for them otherwise.
	Notifying() bool
	// NotifyKeyspace publishes event on key if its class (Redis's class
	// character: 't' streams, 'g' generic) is on.
	NotifyKeyspace(class byte, event string, key []byte)
}

type notifierKey struct{}

// withNotifier gives a call's context the connection's Notifier while
// notifications are on.
func withNotifier(ctx context.Context, c Call) context.Context {
	if n, ok := c.Conn.(Notifier); ok && n.Notifying() {
		return context.WithValue(ctx, notifierKey{}, n)
	}
	return ctx
}

// notify publishes a stream event on key, if the call's connection has
// notifications on.
func notify(ctx context.Context, event string, key []byte) {
	if n, ok := ctx.Value(notifierKey{}).(Notifier); ok {
		n.NotifyKeyspace('t', event, key)
	}
}

// notifying reports whether the call's connection has notifications on.
func notifying(ctx context.Context) bool {
	_, ok := ctx.Value(notifierKey{}).(Notifier)
	return ok
}

// consumerKnown reports whether group has consumer, while notifications
// are on (else true: nothing will be published): a read or claim that
// creates it publishes xgroup-createconsumer (notifyNewConsumer).
func consumerKnown(ctx context.Context, x *ferricstore.Streams, key, group, consumer string) bool {
	if !notifying(ctx) {
		return true
	}
	known := false
	_ = x.View(ctx, key, func(s *stream.Stream) error {
		if s != nil {
			if g := s.Group(group); g != nil {
				known = g.Consumer(consumer) != nil
			}
		}
		return nil
	})
	return known
}

// notifyNewConsumer publishes xgroup-createconsumer when the call made
// consumer, which consumerKnown found missing before it.
func notifyNewConsumer(ctx context.Context, x *ferricstore.Streams, key, group, consumer string, knownBefore bool) {
	if !knownBefore && consumerKnown(ctx, x, key, group, consumer) {
		notify(ctx, "xgroup-createconsumer", []byte(key))
	}
}
