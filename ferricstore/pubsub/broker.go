package pubsub

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
	// Encoded is shared by the deliveries of one publish to one channel
	// or pattern, so that they encode the message once.
	Encoded *Encoded
	// From is the publisher PublishFrom names (nil: none), which a host
	// may use to write the deliveries after that publisher's batch.
	From any
}

// Encoded holds a message's encodings for its deliveries to share: the
// first delivery that needs form i (a host's choice, such as a protocol
// version) builds it, the next ones reuse it. Deliveries are sequential,
// so it takes no lock.
type Encoded struct{ forms [4][]byte }

// Form returns form i (0 to 3), nil until a delivery sets it.
func (e *Encoded) Form(i int) *[]byte { return &e.forms[i] }

// MaxSubscriptions bounds one subscriber's channels, patterns and shard
// channels together.
const MaxSubscriptions = 100_000

// Subscriber is one subscribing connection. Its deliver function is
// called for each message, under the broker's read lock and in publish
// order per channel: it must not block (queue the message) and must not
// call the broker. It reports whether the subscriber took the message;
// false means it takes no more (its connection is gone, or was closed
// for its queue's size): the broker then delivers to it no more and
// counts it dropped (Stats), until its host Drops it.
type Subscriber struct {
	deliver func(Message) bool
	// refused is set once deliver refused a message.
	refused atomic.Bool
	// Guarded by the broker's lock.
	channels, shardChannels map[string]struct{}
	patterns                []string // in subscription order
}

// NewSubscriber returns a subscriber whose messages go to deliver (see
// Subscriber).
func NewSubscriber(deliver func(Message) bool) *Subscriber {
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
	// subscribers counts the subscribers with at least one subscription.
	subscribers int
	// born is the broker's start, from which publishes are timed (one
	// monotonic clock read each end).
	born  time.Time
	stats counters
}

// counters are what the publishes did, updated with atomics so that a
// publish takes no lock of its own for them. The per-publish ones are
// striped: a publish adds to a stripe picked at random, so that
// publishers on other processors seldom write the same cache line.
type counters struct {
	_       [64]byte // off the line of the broker's lock and maps
	stripes [counterStripes]stripe
	dropped atomic.Uint64
	// fanOut counts sampled publishes by their fan-out time, by
	// fanOutBounds (the last, above every bound); fanOutNanos adds their
	// times.
	fanOut      [len(fanOutBounds) + 1]atomic.Uint64
	fanOutNanos atomic.Uint64
}

// counterStripes is how many stripes the per-publish counters have.
const counterStripes = 8

// stripe is one cache line of per-publish counters.
type stripe struct {
	publishes, deliveries atomic.Uint64
	_                     [48]byte
}

// fanOutBounds are the upper bounds of the fan-out time histogram's
// buckets: from a publish no one hears to one that reaches thousands.
var fanOutBounds = [...]time.Duration{time.Microsecond, 5 * time.Microsecond, 10 * time.Microsecond, 50 * time.Microsecond,
	100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond, time.Second}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{channels: map[string][]*Subscriber{}, shardChannels: map[string][]*Subscriber{}, patterns: map[string][]*Subscriber{},
		born: time.Now()}
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
		b.joining(s)
		set[channel] = struct{}{}
		index[channel] = append(index[channel], s)
	}
	return b.countLocked(s, shard), true
}

// joining counts s as a subscriber when it is about to take its first
// subscription; the caller holds the write lock.
func (b *Broker) joining(s *Subscriber) {
	if s.total() == 0 {
		b.subscribers++
	}
}

// left uncounts s once it lost its last subscription; the caller holds
// the write lock.
func (b *Broker) left(s *Subscriber) {
	if s.total() == 0 {
		b.subscribers--
	}
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
		b.left(s)
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
		b.joining(s)
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
		b.left(s)
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
// and subscriber), and returns the number of deliveries: as Redis
// counts its receivers, a subscriber that refused it (dropped, not yet
// Dropped) counts too.
func (b *Broker) Publish(channel string, payload []byte) int {
	return b.PublishFrom(nil, channel, payload)
}

// PublishFrom is Publish with the publisher named in each Message.
func (b *Broker) PublishFrom(from any, channel string, payload []byte) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	subs := b.channels[channel]
	sp, start := b.publishing(len(subs) > 0 || len(b.patternOrder) > 0)
	n, took := len(subs), 0
	enc := &Encoded{}
	for _, s := range subs {
		if s.refused.Load() {
			continue
		}
		if s.deliver(Message{Kind: KindMessage, Channel: channel, Payload: payload, Encoded: enc, From: from}) {
			took++
		} else {
			b.refuse(s)
		}
	}
	for _, p := range b.patternOrder {
		if !Match(p, channel) {
			continue
		}
		enc := &Encoded{}
		for _, s := range b.patterns[p] {
			n++
			if s.refused.Load() {
				continue
			}
			if s.deliver(Message{Kind: KindPMessage, Pattern: p, Channel: channel, Payload: payload, Encoded: enc, From: from}) {
				took++
			} else {
				b.refuse(s)
			}
		}
	}
	b.published(sp, start, took)
	return n
}

// SPublish delivers payload to shard channel's subscribers and returns
// their number (those that refused it included, as Publish counts).
func (b *Broker) SPublish(channel string, payload []byte) int {
	return b.SPublishFrom(nil, channel, payload)
}

// SPublishFrom is SPublish with the publisher named in each Message.
func (b *Broker) SPublishFrom(from any, channel string, payload []byte) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	subs := b.shardChannels[channel]
	sp, start := b.publishing(len(subs) > 0)
	took := 0
	enc := &Encoded{}
	for _, s := range subs {
		if s.refused.Load() {
			continue
		}
		if s.deliver(Message{Kind: KindSMessage, Channel: channel, Payload: payload, Encoded: enc, From: from}) {
			took++
		} else {
			b.refuse(s)
		}
	}
	b.published(sp, start, took)
	return len(subs)
}

// refuse marks s as refusing messages, counting it dropped the first
// time.
func (b *Broker) refuse(s *Subscriber) {
	if s.refused.CompareAndSwap(false, true) {
		b.stats.dropped.Add(1)
	}
}

// Fan-out times are sampled: one publish in fanOutSample is timed, since
// reading the clock twice for each would cost more than a publish to a
// subscriber or two does (some 50 ns a read on a virtual machine).
const fanOutSample = 16

// Readings of publishing's start that mean "not timed" and "timed, with
// no one to hand the message to" (no clock read: it takes no time).
const (
	untimed   time.Duration = -1
	timedNone time.Duration = -2
)

// publishing counts a publish in a stripe, which it returns, and the
// time it starts at (since born) when it is one of the sampled ones;
// someone says whether any subscription may take it.
func (b *Broker) publishing(someone bool) (*stripe, time.Duration) {
	st := &b.stats.stripes[rand.Uint32()%counterStripes]
	if st.publishes.Add(1)%fanOutSample != 0 {
		return st, untimed
	}
	if !someone {
		return st, timedNone
	}
	return st, time.Since(b.born)
}

// published counts what a publish that publishing counted in stripe sp
// and timed from start did: it handed its message to took subscribers.
func (b *Broker) published(sp *stripe, start time.Duration, took int) {
	if took > 0 {
		sp.deliveries.Add(uint64(took))
	}
	st := &b.stats
	switch start {
	case untimed:
		return
	case timedNone:
		st.fanOut[0].Add(1)
		return
	}
	d := max(time.Since(b.born)-start, 0)
	i := 0
	for i < len(fanOutBounds) && d > fanOutBounds[i] {
		i++
	}
	st.fanOut[i].Add(1)
	st.fanOutNanos.Add(uint64(d))
}

// Stats are a broker's figures: what its publishes did since it was
// made, and its subscriptions now.
type Stats struct {
	// Publishes counts Publish and SPublish calls.
	Publishes uint64
	// Deliveries counts the messages subscribers took: one per
	// subscriber and matching subscription.
	Deliveries uint64
	// DroppedSubscribers counts the subscribers that refused a message
	// (their connection gone, or closed for its queue's size), each
	// once.
	DroppedSubscribers uint64
	// FanOut is the time publishes took to hand their message to every
	// matching subscriber: one publish in 16 is timed (a sample; a
	// publish no subscription can take counts as taking none).
	FanOut Histogram
	// Channels and ShardChannels are those with a subscriber, Patterns
	// the distinct patterns subscribed, and Subscribers the subscribers
	// with at least one subscription.
	Channels, ShardChannels, Patterns, Subscribers int
}

// Histogram is a distribution of durations in buckets.
type Histogram struct {
	// Bounds are the buckets' upper bounds, rising. Counts[i] counts the
	// durations at most Bounds[i] and above the bound before it; the
	// last count, Counts[len(Bounds)], those above every bound.
	Bounds []time.Duration
	Counts []uint64
	// Sum adds every duration counted.
	Sum time.Duration
}

// Count is how many durations h counts.
func (h Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Stats returns the broker's figures. The counters are read one by one
// while publishes go on, so they may be a publish apart.
func (b *Broker) Stats() Stats {
	b.mu.RLock()
	st := Stats{Channels: len(b.channels), ShardChannels: len(b.shardChannels), Patterns: len(b.patterns), Subscribers: b.subscribers}
	b.mu.RUnlock()
	c := &b.stats
	for i := range c.stripes {
		st.Publishes += c.stripes[i].publishes.Load()
		st.Deliveries += c.stripes[i].deliveries.Load()
	}
	st.DroppedSubscribers = c.dropped.Load()
	st.FanOut = Histogram{Bounds: slices.Clone(fanOutBounds[:]), Counts: make([]uint64, len(c.fanOut)), Sum: time.Duration(c.fanOutNanos.Load())}
	for i := range c.fanOut {
		st.FanOut.Counts[i] = c.fanOut[i].Load()
	}
	return st
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
