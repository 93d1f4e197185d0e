package commands

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/temporalstore/temporalstore-go/ferricstore/pubsub"
)

// Conn is what the pub/sub verbs need of a host's connection (the
// methods of temporalstore's resp.Request).
type Conn interface {
	// ClientID names the connection.
	ClientID() int64
	// Pusher returns a function, safe from any goroutine, that queues a
	// frame (already encoded in the connection's protocol) to be written
	// between replies; it reports false once the connection is gone.
	// from, when not nil, is the Conn whose call queues the frame: the
	// host may hold the frame's write until that connection's run of
	// pipelined calls ends, to write the run's frames together.
	Pusher() func(frame []byte, from any) bool
	// SetSubscriptions records the connection's count: above zero, a
	// RESP2 connection runs only the pub/sub verbs, PING, QUIT and RESET.
	SetSubscriptions(n int)
	// OnClose runs fn once when the connection closes or is RESET.
	OnClose(fn func())
}

// subscriber is one connection's subscriptions.
type subscriber struct {
	s        *pubsub.Subscriber
	push     func(frame []byte, from any) bool
	protocol int
}

// pubsubState is the verbs' broker and the connections subscribed.
type pubsubState struct {
	b    *pubsub.Broker
	mu   sync.Mutex
	subs map[int64]*subscriber
}

// PubSubCommands returns the pub/sub verbs over broker b: SUBSCRIBE,
// UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
// PUBLISH, SPUBLISH and PUBSUB. Their calls need Call.Conn.
func PubSubCommands(b *pubsub.Broker) []Command {
	p := &pubsubState{b: b, subs: map[int64]*subscriber{}}
	return []Command{
		{Name: "subscribe", Arity: -2, Connection: true, Group: "pubsub", Summary: "Listens for messages published to channels.", Run: p.subscribe(false, false)},
		{Name: "psubscribe", Arity: -2, Connection: true, Group: "pubsub", Summary: "Listens for messages published to channels that match one or more patterns.", Run: p.subscribe(true, false)},
		{Name: "ssubscribe", Arity: -2, Connection: true, FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "pubsub", Summary: "Listens for messages published to shard channels.", Run: p.subscribe(false, true)},
		{Name: "unsubscribe", Arity: -1, Connection: true, Group: "pubsub", Summary: "Stops listening to messages posted to channels.", Run: p.unsubscribe(false, false)},
		{Name: "punsubscribe", Arity: -1, Connection: true, Group: "pubsub", Summary: "Stops listening to messages published to channels that match one or more patterns.", Run: p.unsubscribe(true, false)},
		{Name: "sunsubscribe", Arity: -1, Connection: true, FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "pubsub", Summary: "Stops listening to messages posted to shard channels.", Run: p.unsubscribe(false, true)},
		{Name: "publish", Arity: 3, Group: "pubsub", Summary: "Posts a message to a channel.", Run: p.publish(false)},
		{Name: "spublish", Arity: 3, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "pubsub", Summary: "Post a message to a shard channel", Run: p.publish(true)},
		{Name: "pubsub", Arity: -2, Group: "pubsub", Summary: "A container for Pub/Sub commands.", Run: p.pubsubCmd},
	}
}

// frame encodes a push frame: a push ('>') in RESP3, an array in RESP2.
// Elements are strings, byte slices, ints, or nil (a null).
func frame(protocol int, elems ...any) []byte {
	head := byte('*')
	if protocol == 3 {
		head = '>'
	}
	b := append([]byte{head}, strconv.Itoa(len(elems))...)
	b = append(b, '\r', '\n')
	for _, e := range elems {
		switch v := e.(type) {
		case string:
			b = appendBulk(b, []byte(v))
		case []byte:
			b = appendBulk(b, v)
		case int:
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(v), 10)
			b = append(b, '\r', '\n')
		case nil:
			if protocol == 3 {
				b = append(b, '_', '\r', '\n')
			} else {
				b = append(b, '$', '-', '1', '\r', '\n')
			}
		}
	}
	return b
}

// messageFrame encodes a delivery: message, pmessage or smessage.
func messageFrame(protocol int, m pubsub.Message) []byte {
	kind, n := "message", 3
	switch m.Kind {
	case pubsub.KindPMessage:
		kind, n = "pmessage", 4
	case pubsub.KindSMessage:
		kind = "smessage"
	}
	b := make([]byte, 0, 48+len(m.Pattern)+len(m.Channel)+len(m.Payload))
	if protocol == 3 {
		b = append(b, '>')
	} else {
		b = append(b, '*')
	}
	b = append(b, byte('0'+n), '\r', '\n')
	b = appendBulkString(b, kind)
	if m.Kind == pubsub.KindPMessage {
		b = appendBulkString(b, m.Pattern)
	}
	b = appendBulkString(b, m.Channel)
	return appendBulk(b, m.Payload)
}

func appendBulkString(b []byte, v string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, '\r', '\n')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

func appendBulk(b, v []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, '\r', '\n')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// subscriberOf returns the connection's subscriber, created (with its
// cleanup) on first use.
func (p *pubsubState) subscriberOf(c Call) *subscriber {
	id := c.Conn.ClientID()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.subs[id]; s != nil {
		s.protocol = c.Protocol
		return s
	}
	sub := &subscriber{push: c.Conn.Pusher(), protocol: c.Protocol}
	// A refused push (the connection gone, or closed for its queue's
	// size) tells the broker to count the subscriber dropped.
	sub.s = pubsub.NewSubscriber(func(m pubsub.Message) bool {
		// One encoding per protocol per publish, whatever the number of
		// subscribers (the push copies it).
		form := m.Encoded.Form(sub.protocol & 1)
		if *form == nil {
			*form = messageFrame(sub.protocol, m)
		}
		return sub.push(*form, m.From)
	})
	p.subs[id] = sub
	c.Conn.OnClose(func() {
		p.b.Drop(sub.s)
		p.mu.Lock()
		delete(p.subs, id)
		p.mu.Unlock()
	})
	return sub
}

// counted records the connection's subscription count with the host.
func (p *pubsubState) counted(c Call, sub *subscriber) {
	c.Conn.SetSubscriptions(p.b.Count(sub.s) + p.b.ShardCount(sub.s))
}

// verb is base's pattern ("p") or shard ("s") form.
func verb(base string, pattern, shard bool) string {
	switch {
	case pattern:
		return "p" + base
	case shard:
		return "s" + base
	}
	return base
}

func (p *pubsubState) subscribe(pattern, shard bool) func(context.Context, Call, Reply) {
	kind := verb("subscribe", pattern, shard)
	return func(_ context.Context, c Call, w Reply) {
		if c.Conn == nil {
			w.Error("ERR " + kind + " needs a connection that takes pushes")
			return
		}
		sub := p.subscriberOf(c)
		for _, target := range c.Args[1:] {
			name := string(target)
			// Past pubsub.MaxSubscriptions the count is confirmed
			// unchanged.
			confirm := func(n int) { sub.push(frame(sub.protocol, kind, name, n), nil) }
			if pattern {
				p.b.PSubscribeThen(sub.s, name, confirm)
			} else {
				p.b.SubscribeThen(sub.s, name, shard, confirm)
			}
		}
		p.counted(c, sub)
	}
}

func (p *pubsubState) unsubscribe(pattern, shard bool) func(context.Context, Call, Reply) {
	kind := verb("unsubscribe", pattern, shard)
	return func(_ context.Context, c Call, w Reply) {
		if c.Conn == nil {
			w.Error("ERR " + kind + " needs a connection that takes pushes")
			return
		}
		sub := p.subscriberOf(c)
		targets := make([]string, 0, len(c.Args)-1)
		for _, a := range c.Args[1:] {
			targets = append(targets, string(a))
		}
		if len(targets) == 0 {
			if pattern {
				targets = p.b.Patterns(sub.s)
			} else {
				targets = p.b.Channels(sub.s, shard)
			}
			if len(targets) == 0 {
				n := p.b.Count(sub.s)
				if shard {
					n = p.b.ShardCount(sub.s)
				}
				sub.push(frame(sub.protocol, kind, nil, n), nil)
				p.counted(c, sub)
				return
			}
		}
		for _, t := range targets {
			var n int
			if pattern {
				n = p.b.PUnsubscribe(sub.s, t)
			} else {
				n = p.b.Unsubscribe(sub.s, t, shard)
			}
			sub.push(frame(sub.protocol, kind, t, n), nil)
		}
		p.counted(c, sub)
	}
}

func (p *pubsubState) publish(shard bool) func(context.Context, Call, Reply) {
	return func(_ context.Context, c Call, w Reply) {
		if shard {
			w.Int(int64(p.b.SPublishFrom(c.Conn, string(c.Args[1]), c.Args[2])))
			return
		}
		w.Int(int64(p.b.PublishFrom(c.Conn, string(c.Args[1]), c.Args[2])))
	}
}

// pubsubCmd is PUBSUB's subcommands.
var pubsubCmd = container{name: "PUBSUB", arity: map[string]int{"channels": -2, "numsub": -2, "numpat": 2, "shardchannels": -2, "shardnumsub": -2, "help": 2},
	help: []string{
		"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
		"HELP",
		"    Prints this help.",
	}}

func (p *pubsubState) pubsubCmd(_ context.Context, c Call, w Reply) {
	args := c.Args
	sub, ok := pubsubCmd.subcommand(args, w)
	if !ok {
		return
	}
	switch sub {
	case "channels", "shardchannels":
		if len(args) > 3 {
			w.Error(fmt.Sprintf("ERR wrong number of arguments for 'pubsub|%s' command", sub))
			return
		}
		pattern := ""
		if len(args) == 3 {
			pattern = string(args[2])
		}
		chans := p.b.ActiveChannels(pattern, sub == "shardchannels")
		if len(args) == 3 && pattern == "" {
			// An empty pattern matches the empty channel alone.
			chans = slices.DeleteFunc(chans, func(ch string) bool { return ch != "" })
		}
		w.Array(len(chans))
		for _, ch := range chans {
			w.Bulk([]byte(ch))
		}
	case "numsub", "shardnumsub":
		// A flat array in RESP3 too, as redis-server 7 writes it.
		w.Array(2 * (len(args) - 2))
		for _, ch := range args[2:] {
			w.Bulk(ch)
			w.Int(int64(p.b.NumSub(string(ch), sub == "shardnumsub")))
		}
	case "numpat":
		w.Int(int64(p.b.NumPat()))
	}
}
