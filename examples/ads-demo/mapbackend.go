package main

import (
	"context"
	"sync"
)

// mapStore runs the decisions on Go maps in this process behind one
// mutex: no network and no durability, the ceiling the stores are
// measured against.
type mapStore struct {
	campaigns int
	mu        sync.Mutex
	caps      map[capID]int
	spend     []int64
	ledger    []map[int64]int64
	imps      map[int][]Imp
	clicks    map[int][]int64
	seen      map[eventID]struct{}
}

type capID struct {
	user, campaign int
	window         int64
}

type eventID struct {
	user  int
	at    int64
	click bool
}

func newMap(campaigns int) *mapStore {
	b := &mapStore{campaigns: campaigns}
	b.reset()
	return b
}

func (b *mapStore) reset() {
	b.caps = map[capID]int{}
	b.spend = make([]int64, b.campaigns)
	b.ledger = make([]map[int64]int64, b.campaigns)
	for c := range b.ledger {
		b.ledger[c] = map[int64]int64{}
	}
	b.imps = map[int][]Imp{}
	b.clicks = map[int][]int64{}
	b.seen = map[eventID]struct{}{}
}

func (b *mapStore) Close() error { return nil }

func (b *mapStore) Reset(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset()
	return nil
}

func (b *mapStore) Spend(_ context.Context, into []int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	copy(into, b.spend)
	return nil
}

func (b *mapStore) History(_ context.Context, user int, at int64, into *History) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	into.Imps = into.Imps[:0]
	for _, imp := range b.imps[user] {
		if imp.At > at-lookbackMs && imp.At <= at {
			into.Imps = append(into.Imps, imp)
		}
	}
	into.Clicks = 0
	for _, t := range b.clicks[user] {
		if t > at-dayMs && t <= at {
			into.Clicks++
		}
	}
	return nil
}

func (b *mapStore) Take(_ context.Context, user int, at int64, offers []Offer) (int, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range offers {
		o := &offers[i]
		id := capID{user, o.Campaign, o.CapWindow}
		if b.caps[id] < o.CapN && b.spend[o.Campaign]+o.Charge <= o.Limit {
			b.caps[id]++
			b.spend[o.Campaign] += o.Charge
			b.ledger[o.Campaign][bucketOf(at)] += o.Charge
			return i, i + 1, nil
		}
	}
	return -1, len(offers), nil
}

func (b *mapStore) Record(_ context.Context, ev Event) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := eventID{ev.User, ev.Imp.At, ev.Click}
	if _, ok := b.seen[id]; ok {
		return false, nil
	}
	b.seen[id] = struct{}{}
	if ev.Click {
		b.clicks[ev.User] = append(b.clicks[ev.User], ev.Imp.At)
	} else {
		b.imps[ev.User] = append(b.imps[ev.User], ev.Imp)
	}
	return true, nil
}

func (b *mapStore) State(_ context.Context, users, campaigns int) (*State, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := newState(users, campaigns)
	for u, imps := range b.imps {
		if u < users {
			st.Imps[u] = append([]Imp(nil), imps...)
		}
	}
	for u, clicks := range b.clicks {
		if u < users {
			st.Clicks[u] = len(clicks)
		}
	}
	copy(st.Spend, b.spend)
	for c := range min(campaigns, b.campaigns) {
		for start, n := range b.ledger[c] {
			st.Ledger[c] = append(st.Ledger[c], Bucket{Start: start, Spend: n})
		}
	}
	return st, nil
}
