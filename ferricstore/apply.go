package ferricstore

import (
	"fmt"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// added is an XADD's result: the entry's ID and how many entries its
// trim removed.
type added struct {
	id      stream.ID
	trimmed int64
}

// AutoClaimed is XAUTOCLAIM's result.
type AutoClaimed struct {
	Claimed []stream.Entry
	Deleted []stream.ID
	Next    stream.ID
}

// apply makes o's change to streams and returns its result. o was
// resolved against the same state (live) or was logged after being so
// (replay), so an op that does not fit is a damaged log.
func apply(streams map[string]*stream.Stream, o *op) (any, error) {
	s := streams[o.key]
	if s == nil && o.code != opAdd && !(o.code == opCreateGroup && o.flags&flagMkStream != 0) {
		return nil, fmt.Errorf("%w: op %d on a missing stream", ErrMalformed, o.code)
	}
	group := func() (*stream.Group, error) {
		g := s.Group(o.group)
		if g == nil {
			return nil, fmt.Errorf("%w: op %d on a missing group", ErrMalformed, o.code)
		}
		return g, nil
	}
	switch o.code {
	case opAdd:
		if s == nil {
			s = stream.New()
			streams[o.key] = s
		}
		if err := s.Add(o.id, o.fields); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return added{id: o.id, trimmed: s.Trim(o.trim())}, nil
	case opDelete:
		return s.Delete(o.ids), nil
	case opTrim:
		return s.Trim(o.trim()), nil
	case opSetID:
		if err := s.SetID(o.id, o.b, o.id2); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return nil, nil
	case opCreateGroup:
		if s == nil {
			s = stream.New()
			streams[o.key] = s
		}
		if _, err := s.CreateGroup(o.group, o.id, o.a); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return nil, nil
	case opDeleteKey:
		delete(streams, o.key)
		return true, nil
	case opDestroyGroup:
		return s.DestroyGroup(o.group), nil
	}
	g, err := group()
	if err != nil {
		return nil, err
	}
	switch o.code {
	case opSetGroupID:
		g.SetGroupID(o.id, o.a)
		return nil, nil
	case opCreateConsumer:
		_, created := g.CreateConsumer(o.consumer, o.now)
		return created, nil
	case opDeleteConsumer:
		return g.DeleteConsumer(o.consumer), nil
	case opReadNew:
		return s.ReadNew(g, o.consumer, int(o.a), o.flags&flagNoAck != 0, o.now), nil
	case opReadHistory:
		return s.ReadHistory(g, o.consumer, o.id, int(o.a), o.now), nil
	case opAck:
		return g.Ack(o.ids), nil
	case opClaim:
		c := stream.Claim{MinIdle: o.a, DeliveryTime: o.c, RetryCount: o.b, Force: o.flags&flagForce != 0,
			JustID: o.flags&flagJustID != 0, LastID: o.id2}
		return s.Claim(g, o.consumer, o.ids, c, o.now), nil
	case opAutoClaim:
		cl, del, next := s.AutoClaim(g, o.consumer, o.id, o.b, int(o.a), o.flags&flagJustID != 0, o.now)
		return AutoClaimed{Claimed: cl, Deleted: del, Next: next}, nil
	}
	return nil, fmt.Errorf("%w: op %d", ErrMalformed, o.code)
}
