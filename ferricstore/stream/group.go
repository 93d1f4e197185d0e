package stream

import (
	"errors"
	"maps"
	"slices"

	"github.com/google/btree"
)

// UnknownEntriesRead is a group's entries-read when it cannot be known.
const UnknownEntriesRead = -1

// Group is a consumer group: where its deliveries stand, its pending
// entries list (PEL) and its consumers.
type Group struct {
	Name string
	// LastID is the last ID delivered to the group.
	LastID ID
	// EntriesRead is how many entries of the stream the group has read
	// (UnknownEntriesRead when it cannot be known).
	EntriesRead int64
	pel         *btree.BTreeG[*Pending]
	consumers   map[string]*Consumer
}

// Pending is an entry delivered to a consumer and not acknowledged.
type Pending struct {
	ID ID
	// Consumer holds it; DeliveryTime (Unix ms) is its last delivery and
	// DeliveryCount how many there were.
	Consumer      *Consumer
	DeliveryTime  int64
	DeliveryCount uint64
}

// Consumer is a group's consumer.
type Consumer struct {
	Name string
	// SeenTime is the last time (Unix ms) it was named by a read or a
	// claim; ActiveTime the last time one delivered or claimed something
	// for it (-1: never).
	SeenTime, ActiveTime int64
	pel                  *btree.BTreeG[*Pending]
}

// Pending is the number of entries it holds.
func (c *Consumer) Pending() int { return c.pel.Len() }

func byID(a, b *Pending) bool { return a.ID.Less(b.ID) }

func newPEL() *btree.BTreeG[*Pending] { return btree.NewG(16, byID) }

// Errors of the groups, with Redis's text (the NOGROUP ones are the
// commands', which name key and group).
var (
	// ErrGroupExists: XGROUP CREATE of a group that exists.
	ErrGroupExists = errors.New("BUSYGROUP Consumer Group name already exists")
	// ErrNoGroup: the group does not exist.
	ErrNoGroup = errors.New("NOGROUP no such consumer group")
)

// Group returns the group name, or nil.
func (s *Stream) Group(name string) *Group { return s.groups[name] }

// Groups returns the groups in name order.
func (s *Stream) Groups() []*Group {
	out := make([]*Group, 0, len(s.groups))
	for _, name := range slices.Sorted(maps.Keys(s.groups)) {
		out = append(out, s.groups[name])
	}
	return out
}

// CreateGroup creates group name delivering after id, with entriesRead
// (UnknownEntriesRead when not given).
func (s *Stream) CreateGroup(name string, id ID, entriesRead int64) (*Group, error) {
	if s.groups[name] != nil {
		return nil, ErrGroupExists
	}
	if s.groups == nil {
		s.groups = map[string]*Group{}
	}
	g := &Group{Name: name, LastID: id, EntriesRead: entriesRead, pel: newPEL(), consumers: map[string]*Consumer{}}
	s.groups[name] = g
	return g, nil
}

// DestroyGroup removes group name; false if there was none.
func (s *Stream) DestroyGroup(name string) bool {
	if s.groups[name] == nil {
		return false
	}
	delete(s.groups, name)
	return true
}

// SetGroupID moves the group's last delivered ID (XGROUP SETID).
func (g *Group) SetGroupID(id ID, entriesRead int64) {
	g.LastID, g.EntriesRead = id, entriesRead
}

// Consumer returns the consumer name, or nil.
func (g *Group) Consumer(name string) *Consumer { return g.consumers[name] }

// Consumers returns the consumers in name order.
func (g *Group) Consumers() []*Consumer {
	out := make([]*Consumer, 0, len(g.consumers))
	for _, name := range slices.Sorted(maps.Keys(g.consumers)) {
		out = append(out, g.consumers[name])
	}
	return out
}

// CreateConsumer returns consumer name, created (at nowMs) if it did not
// exist, and whether it was created.
func (g *Group) CreateConsumer(name string, nowMs int64) (*Consumer, bool) {
	if c := g.consumers[name]; c != nil {
		return c, false
	}
	c := &Consumer{Name: name, SeenTime: nowMs, ActiveTime: -1, pel: newPEL()}
	g.consumers[name] = c
	return c, true
}

// RestoreConsumer recreates a consumer as a snapshot holds it.
func (g *Group) RestoreConsumer(name string, seen, active int64) {
	c, _ := g.CreateConsumer(name, seen)
	c.SeenTime, c.ActiveTime = seen, active
}

// RestorePending recreates a PEL entry as a snapshot holds it; false if
// its consumer does not exist.
func (g *Group) RestorePending(id ID, consumer string, deliveryTime int64, count uint64) bool {
	c := g.consumers[consumer]
	if c == nil {
		return false
	}
	p := &Pending{ID: id, DeliveryTime: deliveryTime, DeliveryCount: count}
	g.pel.ReplaceOrInsert(p)
	g.give(p, c)
	return true
}

// seen returns consumer name, created if need be, its SeenTime set.
func (g *Group) seen(name string, nowMs int64) *Consumer {
	c, _ := g.CreateConsumer(name, nowMs)
	c.SeenTime = nowMs
	return c
}

// DeleteConsumer removes consumer name and its pending entries, and
// returns how many it held (0 if it did not exist).
func (g *Group) DeleteConsumer(name string) int {
	c := g.consumers[name]
	if c == nil {
		return 0
	}
	n := c.pel.Len()
	c.pel.Ascend(func(p *Pending) bool {
		g.pel.Delete(p)
		return true
	})
	delete(g.consumers, name)
	return n
}

// PendingCount is the number of entries in the group's PEL.
func (g *Group) PendingCount() int { return g.pel.Len() }

// PendingBounds returns the lowest and highest IDs in the PEL; false
// when it is empty.
func (g *Group) PendingBounds() (first, last ID, ok bool) {
	lo, ok := g.pel.Min()
	if !ok {
		return ID{}, ID{}, false
	}
	hi, _ := g.pel.Max()
	return lo.ID, hi.ID, true
}

// PendingEntry returns the PEL entry of id, or nil.
func (g *Group) PendingEntry(id ID) *Pending {
	p, ok := g.pel.Get(&Pending{ID: id})
	if !ok {
		return nil
	}
	return p
}

// PendingRange calls fn for the PEL entries from start to end (of
// consumer c's PEL when c is not nil) in ID order, until fn returns false.
func (g *Group) PendingRange(c *Consumer, start, end ID, fn func(p *Pending) bool) {
	pel := g.pel
	if c != nil {
		pel = c.pel
	}
	pel.AscendGreaterOrEqual(&Pending{ID: start}, func(p *Pending) bool {
		if end.Less(p.ID) {
			return false
		}
		return fn(p)
	})
}

// Ack removes ids from the PEL (XACK) and returns how many were there.
func (g *Group) Ack(ids []ID) int {
	n := 0
	for _, id := range ids {
		if p, ok := g.pel.Delete(&Pending{ID: id}); ok {
			p.Consumer.pel.Delete(p)
			n++
		}
	}
	return n
}

// drop removes p from the PEL.
func (g *Group) drop(p *Pending) {
	g.pel.Delete(p)
	if p.Consumer != nil {
		p.Consumer.pel.Delete(p)
	}
}

// give makes c the holder of p.
func (g *Group) give(p *Pending, c *Consumer) {
	if p.Consumer == c {
		return
	}
	if p.Consumer != nil {
		p.Consumer.pel.Delete(p)
	}
	p.Consumer = c
	c.pel.ReplaceOrInsert(p)
}

// deliver records the delivery of id to c at nowMs (a new PEL entry, or
// one already pending moved to c with its count reset to 1).
func (g *Group) deliver(id ID, c *Consumer, nowMs int64) {
	p, ok := g.pel.Get(&Pending{ID: id})
	if !ok {
		p = &Pending{ID: id}
		g.pel.ReplaceOrInsert(p)
	}
	g.give(p, c)
	p.DeliveryTime, p.DeliveryCount = nowMs, 1
}

// ReadNew delivers to consumer up to count entries (count ≤ 0: all) after
// the group's last delivered ID (XREADGROUP with ">"), at nowMs: the
// group's last ID and entries-read advance, and unless noAck each entry
// goes into the PEL as the consumer's. The consumer is created if need be.
func (s *Stream) ReadNew(g *Group, consumer string, count int, noAck bool, nowMs int64) []Entry {
	c := g.seen(consumer, nowMs)
	out := s.After(g.LastID, count)
	for _, e := range out {
		s.advance(g, e.ID)
		if !noAck {
			g.deliver(e.ID, c, nowMs)
		}
	}
	if len(out) > 0 {
		c.ActiveTime = nowMs
	}
	return out
}

// advance moves g's last delivered ID to id (above it), keeping its
// entries-read as Redis does.
func (s *Stream) advance(g *Group, id ID) {
	if !g.LastID.Less(id) {
		return
	}
	if g.EntriesRead != UnknownEntriesRead && !s.hasTombstones(id) {
		g.EntriesRead++
	} else if s.EntriesAdded > 0 {
		g.EntriesRead = s.estimate(id)
	}
	g.LastID = id
}

// ReadHistory returns consumer's own pending entries after id, up to
// count (count ≤ 0: all), as XREADGROUP with an ID: each is redelivered
// (count + 1, time nowMs); one whose entry was deleted comes back with nil
// Fields and is left as it is.
func (s *Stream) ReadHistory(g *Group, consumer string, after ID, count int, nowMs int64) []Entry {
	c := g.seen(consumer, nowMs)
	start, ok := after.Next()
	if !ok {
		return []Entry{}
	}
	out := []Entry{}
	g.PendingRange(c, start, MaxID, func(p *Pending) bool {
		if count > 0 && len(out) == count {
			return false
		}
		e, found := s.Get(p.ID)
		if !found {
			out = append(out, Entry{ID: p.ID})
			return true
		}
		p.DeliveryTime = nowMs
		p.DeliveryCount++
		out = append(out, e)
		return true
	})
	return out
}

// hasTombstones reports whether an entry at or after start was deleted
// (XDEL) while the stream is not empty: Redis's streamRangeHasTombstones.
func (s *Stream) hasTombstones(start ID) bool {
	if s.Len() == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	return !s.MaxDeletedID.Less(start)
}

// firstID is the first entry's ID, 0-0 when empty.
func (s *Stream) firstID() ID {
	if e, ok := s.First(); ok {
		return e.ID
	}
	return ID{}
}

// estimate is the number of entries up to id, if it can be known:
// Redis's streamEstimateDistanceFromFirstEverEntry.
func (s *Stream) estimate(id ID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.Len() == 0 && id.Compare(s.LastID) <= 0 {
		return int64(s.EntriesAdded)
	}
	switch id.Compare(s.LastID) {
	case 0:
		return int64(s.EntriesAdded)
	case 1:
		return UnknownEntriesRead
	}
	first := s.firstID()
	if s.MaxDeletedID.IsZero() || s.MaxDeletedID.Less(first) {
		switch id.Compare(first) {
		case -1:
			return int64(s.EntriesAdded) - int64(s.Len())
		case 0:
			return int64(s.EntriesAdded) - int64(s.Len()) + 1
		}
	}
	return UnknownEntriesRead
}

// Lag is the number of entries the group has still to read, and false
// when it cannot be known.
func (s *Stream) Lag(g *Group) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != UnknownEntriesRead && !s.hasTombstones(g.LastID) {
		return int64(s.EntriesAdded) - g.EntriesRead, true
	}
	if read := s.estimate(g.LastID); read != UnknownEntriesRead {
		return int64(s.EntriesAdded) - read, true
	}
	return 0, false
}

// Claim is XCLAIM's options.
type Claim struct {
	// MinIdle: only entries idle at least this long (ms) are claimed.
	MinIdle int64
	// DeliveryTime is the claimed entries' new delivery time (IDLE or
	// TIME; default the call's time).
	DeliveryTime int64
	// RetryCount, when not negative, sets the delivery count (RETRYCOUNT).
	RetryCount int64
	// Force creates a PEL entry for an ID of the stream not pending.
	Force bool
	// JustID leaves the delivery count alone (the reply has IDs only).
	JustID bool
	// LastID, when above the group's, becomes its last delivered ID.
	LastID ID
}

// Claim gives consumer the pending entries ids that qualify (XCLAIM), at
// nowMs, and returns them in order; a pending ID whose entry was deleted
// leaves the PEL and is not returned.
func (s *Stream) Claim(g *Group, consumer string, ids []ID, o Claim, nowMs int64) []Entry {
	c := g.seen(consumer, nowMs)
	var out []Entry
	for _, id := range ids {
		p := g.PendingEntry(id)
		e, found := s.Get(id)
		if !found {
			if p != nil {
				g.drop(p)
			}
			continue
		}
		if p == nil {
			if !o.Force {
				continue
			}
			p = &Pending{ID: id, DeliveryTime: nowMs, DeliveryCount: 1}
			g.pel.ReplaceOrInsert(p)
		}
		if p.Consumer != nil && o.MinIdle > 0 && nowMs-p.DeliveryTime < o.MinIdle {
			continue
		}
		g.give(p, c)
		p.DeliveryTime = o.DeliveryTime
		switch {
		case o.RetryCount >= 0:
			p.DeliveryCount = uint64(o.RetryCount)
		case !o.JustID:
			p.DeliveryCount++
		}
		c.ActiveTime = nowMs
		out = append(out, e)
	}
	if g.LastID.Less(o.LastID) {
		g.LastID = o.LastID
	}
	return out
}

// AutoClaim gives consumer up to count pending entries from start idle at
// least minIdle ms (XAUTOCLAIM), examining at most 10 × count, at nowMs.
// It returns the claimed entries, the IDs of pending entries whose entry
// was deleted (they leave the PEL, and count against count), and the
// cursor of the next call (0-0 when the PEL was scanned to its end).
func (s *Stream) AutoClaim(g *Group, consumer string, start ID, minIdle int64, count int, justID bool, nowMs int64) (claimed []Entry, deleted []ID, next ID) {
	c := g.seen(consumer, nowMs)
	attempts := count * 10
	var examined []*Pending
	g.pel.AscendGreaterOrEqual(&Pending{ID: start}, func(p *Pending) bool {
		if attempts == 0 || count == 0 {
			next = p.ID
			return false
		}
		attempts--
		examined = append(examined, p)
		if _, found := s.Get(p.ID); !found {
			count--
			return true
		}
		if minIdle > 0 && nowMs-p.DeliveryTime < minIdle {
			return true
		}
		count--
		return true
	})
	claimed = []Entry{}
	deleted = []ID{}
	for _, p := range examined {
		e, found := s.Get(p.ID)
		switch {
		case !found:
			g.drop(p)
			deleted = append(deleted, p.ID)
		case minIdle > 0 && nowMs-p.DeliveryTime < minIdle:
		default:
			g.give(p, c)
			p.DeliveryTime = nowMs
			if !justID {
				p.DeliveryCount++
			}
			c.ActiveTime = nowMs
			claimed = append(claimed, e)
		}
	}
	return claimed, deleted, next
}
