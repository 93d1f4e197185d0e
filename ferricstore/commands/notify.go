package commands

import "context"

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
