package pubsub

import (
	"maps"
	"slices"
	"sync"
)

// Kind says what a delivered message is, as Redis's push frames name it.
type Kind uint8

// Message kinds.
const (
	// KindMessage is a publish to a channel subscribed by name ("message").
	KindMessage Kind = iota + 1
	// KindPMessage is a publish matched by a pattern ("pmessage").
	KindPMessage
	// KindSMessage is a shard-channel publish ("smessage").
	KindSMessage
)

// Message is one delivery. Its byte slices are shared by every delivery
// of one publish: a subscriber must not change them.
type Message struct {
	Kind Kind
	// Pattern is the matching pattern (KindPMessage only).
	Pattern string
	Channel string
	Payload []byte
}

// MaxSubscriptions bounds one subscriber's channels, patterns and shard
// channels together.
const MaxSubscriptions = 100_000

// Subscriber is one subscribing connection. Deliver is called for each
// message, under the broker's read lock and in publish order per
// channel: it must not block (queue the message) and must not call the
// broker.
type Subscriber struct {
	deliver func(Message)
	// Guarded by the broker's lock.
	channels, shardChannels map[string]struct{}
	patterns                []string // in subscription order
}

// NewSubscriber returns a subscriber whose messages go to deliver.
func NewSubscriber(deliver func(Message)) *Subscriber {
	return &Subscriber{deliver: deliver, channels: map[string]struct{}{}, shardChannels: map[string]struct{}{}}
}

// Broker routes publishes to subscribers: exact channels, patterns and
// shard channels (which PUBLISH does not reach, nor SPUBLISH the others),
// at most once, in memory. It is safe for concurrent use.
type Broker struct {
	mu            sync.RWMutex
	channels      map[string][]*Subscriber // in subscription order
	shardChannels map[string][]*Subscriber
	patterns      map[string][]*Subscriber
	// patternOrder is the patterns in the order they were first
	// subscribed, for a deterministic delivery order.
	patternOrder []string
}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{channels: map[string][]*Subscriber{}, shardChannels: map[string][]*Subscriber{}, patterns: map[string][]*Subscriber{}}
}

// Count is the subscriber's channels plus patterns (what SUBSCRIBE and
// PSUBSCRIBE replies carry).
func (b *Broker) Count(s *Subscriber) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(s.channels) + len(s.patterns)
}

// ShardCount is the subscriber's shard channels.
func (b *Broker) ShardCount(s *Subscriber) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(s.shardChannels)
}

func (s *Subscriber) total() int { return len(s.channels) + len(s.patterns) + len(s.shardChannels) }

// Subscribe subscribes s to channel (shard channels when shard) and
// returns the count after it (Count, or ShardCount for shard), and
// false when s is at MaxSubscriptions. Subscribing again changes nothing.
func (b *Broker) Subscribe(s *Subscriber, channel string, shard bool) (int, bool) {
	return b.SubscribeThen(s, channel, shard, nil)
}

// SubscribeThen is Subscribe calling confirm (when not nil) with the
// count before any publish can reach the new subscription, so that a
// confirmation queued by confirm precedes the first message.
func (b *Broker) SubscribeThen(s *Subscriber, channel string, shard bool, confirm func(count int)) (n int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if confirm != nil {
		defer func() { confirm(n) }()
	}
	set, index := s.channels, b.channels
	if shard {
		set, index = s.shardChannels, b.shardChannels
	}
	if _, ok := set[channel]; !ok {
		if s.total() >= MaxSubscriptions {
			return b.countLocked(s, shard), false
		}
		set[channel] = struct{}{}
		index[channel] = append(index[channel], s)
	}
	return b.countLocked(s, shard), true
}

func (b *Broker) countLocked(s *Subscriber, shard bool) int {
	if shard {
		return len(s.shardChannels)
	}
	return len(s.channels) + len(s.patterns)
}

// Unsubscribe removes s from channel and returns the count after it.
func (b *Broker) Unsubscribe(s *Subscriber, channel string, shard bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	set, index := s.channels, b.channels
	if shard {
		set, index = s.shardChannels, b.shardChannels
	}
	if _, ok := set[channel]; ok {
		delete(set, channel)
		index[channel] = remove(index[channel], s)
		if len(index[channel]) == 0 {
			delete(index, channel)
		}
	}
	return b.countLocked(s, shard)
}

// PSubscribe subscribes s to pattern and returns Count after it; false
// when s is at MaxSubscriptions.
func (b *Broker) PSubscribe(s *Subscriber, pattern string) (int, bool) {
	return b.PSubscribeThen(s, pattern, nil)
}

// PSubscribeThen is PSubscribe calling confirm as SubscribeThen does.
func (b *Broker) PSubscribeThen(s *Subscriber, pattern string, confirm func(count int)) (n int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if confirm != nil {
		defer func() { confirm(n) }()
	}
	if !slices.Contains(s.patterns, pattern) {
		if s.total() >= MaxSubscriptions {
			return b.countLocked(s, false), false
		}
		s.patterns = append(s.patterns, pattern)
		if len(b.patterns[pattern]) == 0 {
			b.patternOrder = append(b.patternOrder, pattern)
		}
		b.patterns[pattern] = append(b.patterns[pattern], s)
	}
	return b.countLocked(s, false), true
}

// PUnsubscribe removes s from pattern and returns Count after it.
func (b *Broker) PUnsubscribe(s *Subscriber, pattern string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(s.patterns, pattern); i >= 0 {
		s.patterns = slices.Delete(s.patterns, i, i+1)
		b.patterns[pattern] = remove(b.patterns[pattern], s)
		if len(b.patterns[pattern]) == 0 {
			delete(b.patterns, pattern)
			b.patternOrder = slices.DeleteFunc(b.patternOrder, func(p string) bool { return p == pattern })
		}
	}
	return b.countLocked(s, false)
}

// Channels returns s's channels (shard channels when shard), sorted;
// Patterns its patterns in subscription order.
func (b *Broker) Channels(s *Subscriber, shard bool) []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if shard {
		return slices.Sorted(maps.Keys(s.shardChannels))
	}
	return slices.Sorted(maps.Keys(s.channels))
}

// Patterns returns s's patterns in subscription order.
func (b *Broker) Patterns(s *Subscriber) []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return slices.Clone(s.patterns)
}

// Drop removes every subscription of s (a connection closed or RESET).
func (b *Broker) Drop(s *Subscriber) {
	for _, c := range b.Channels(s, false) {
		b.Unsubscribe(s, c, false)
	}
	for _, c := range b.Channels(s, true) {
		b.Unsubscribe(s, c, true)
	}
	for _, p := range b.Patterns(s) {
		b.PUnsubscribe(s, p)
	}
}

func remove(list []*Subscriber, s *Subscriber) []*Subscriber {
	return slices.DeleteFunc(list, func(x *Subscriber) bool { return x == s })
}

// Publish delivers payload to channel's subscribers, then to each
// subscription whose pattern matches (one delivery per matching pattern
// and subscriber), and returns the number of deliveries.
func (b *Broker) Publish(channel string, payload []byte) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, s := range b.channels[channel] {
		s.deliver(Message{Kind: KindMessage, Channel: channel, Payload: payload})
		n++
	}
	for _, p := range b.patternOrder {
		if !Match(p, channel) {
			continue
		}
		for _, s := range b.patterns[p] {
			s.deliver(Message{Kind: KindPMessage, Pattern: p, Channel: channel, Payload: payload})
			n++
		}
	}
	return n
}

// SPublish delivers payload to shard channel's subscribers and returns
// their number.
func (b *Broker) SPublish(channel string, payload []byte) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, s := range b.shardChannels[channel] {
		s.deliver(Message{Kind: KindSMessage, Channel: channel, Payload: payload})
	}
	return len(b.shardChannels[channel])
}

// ActiveChannels returns the channels (shard channels when shard) with
// at least one subscriber that match pattern ("" matches all), sorted
// (PUBSUB CHANNELS, SHARDCHANNELS).
func (b *Broker) ActiveChannels(pattern string, shard bool) []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	index := b.channels
	if shard {
		index = b.shardChannels
	}
	var out []string
	for c := range index {
		if pattern == "" || Match(pattern, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// NumSub is the number of subscribers of channel by name (shard channel
// when shard) (PUBSUB NUMSUB, SHARDNUMSUB).
func (b *Broker) NumSub(channel string, shard bool) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if shard {
		return len(b.shardChannels[channel])
	}
	return len(b.channels[channel])
}

// NumPat is the number of patterns subscribed (PUBSUB NUMPAT): distinct
// patterns, as Redis 7 counts them.
func (b *Broker) NumPat() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.patterns)
}
